"""make bench, interposer part: the cost of tracing, measured side by side.

Each workload runs bare and under each tracing configuration, the
configurations interleaved repetition by repetition (bare, none, default,
...; then again), and each number is the median of the repetitions; the
table gives every median and its ratio to bare, then each repetition's
ratio to the bare run of its round (median and range): on a shared host
the PyTorch loop's step time drifts by 15% between runs of one
configuration (docs/results/2026-12-01-graph-nodes-noise.md), and the range shows
it.  What is timed:

  train     tests/gpu/progs/torch_train.py: a PyTorch training loop
            (transformer LM + conv net, bf16, AdamW, ~1,000 launches per
            step): the program's wall time (what the user feels), split
            into its start (process start to the script's first line),
            set-up (to its loop: CUDA, the models) and exit (its last line
            to the process's end: what tracing does at exit), the wall
            time of its 30 steps; and, within each run, the share of
            its steps' time above its own median step, the first step
            (CUDA's and the libraries' set-up) left out (excess): what a
            window costs shows there, the drift between processes does
            not, so its difference to bare's (in points) can be judged
            where the ratios of runs cannot
  train-gpu   the same loop with batches 8 times larger (--scale 8): the
            same launches, but the GPU sets the pace, so the host's jitter
            between runs (15-60% for train) is hidden and what tracing
            costs the GPU shows
  train-long  the same loop for 300 steps: what the default's first window
            (always opened, 1,000 launches run instrumented) costs once it is
            spread over a longer run, and the windows budget=1 adds later
  train-gpu-long  train-gpu for 150 steps, for --lockstep (not run
            without it): whether the default's dark steps cost a loop the
            GPU paces what they cost the host-bound one
  train-graphs  the same loop's step captured into one CUDA graph and
            replayed 100 times: a traced graph launch waits for the work queued
            before it (interposer/blocks/san_nodes.c)
  triad     tests/gpu/progs/triad.cu: a STREAM triad of 262,144 blocks,
            the median event time of one launch and the wall time of 200
  launches  100,000 empty launches back to back: the host's cost per launch
  gemm      a bf16 4096^3 cuBLAS GEMM in PyTorch: median event time
  chase     an L2-latency-bound chase, 4 one-warp blocks per SM: median
            event time
  startup   200 starts of /bin/true: what a process that never uses CUDA pays

Configurations: bare (untraced), off (--mode off: the library loaded,
no backend started), none (--sample none: the blocks backend with nothing
to sample, so the Compute Sanitizer is not even loaded), default, all,
kernels (--mode kernels), countall (the default policy with --count-all:
the launch callbacks stay on between windows, as before they went off),
sanitizer (no nucatrace: tests/gpu/subcost.c injected, subscribed to the
Compute Sanitizer with no callback enabled: what attaching to the API
costs whoever attaches, the floor under default; session 20 found it
most of what default costs the eager loop), and any --policy
NAME=POLICY.

Each repetition's ratio to the bare run beside it gives, besides its
median, a distribution-free confidence interval for that median (order
statistics of the paired ratios, the sign test's: with 5 repetitions
the interval is their range, 94%).  --goal CONFIG=RATIO (e.g. none=1.01)
says of each metric whether the interval shows the goal met (upper end
at or below it), missed (lower end above it) or neither: on a shared
host a training loop's runs vary by 15-35% (docs/results/
2026-12-01-crash-fixes.md), and then neither is the honest answer.  --pin CPUS runs
every program on those CPUs only (taskset), to see whether the drift
between runs is the scheduler's.

--lockstep (the eager loops train, train-gpu, train-long, train-gpu-long
only): each repetition runs one ring of programs at once that take turns
step by step (torch_train.py --lockstep): a bare one (the reference),
another bare one (the control) and one per configuration, in an order
shuffled every repetition (what one leaves behind falls on the next in
turn).  They meet the same host moment by moment, so the drift between
processes that hides a few percent in runs one after another (15-35%)
falls out of their ratios to the reference, except what differs between
two processes as such, which the control shows.  Timed: the steps' total
and median, the first step left out, each a sync'd step (the turn passes
on an idle GPU).  Also timed, since session 23: each program's start,
set-up and exit (as for train above), each as its difference to the
reference's, and program_s, those three and its timed steps together
against the reference's (its first step and its waits for the others
left out).  The ring's programs set up at once, sharing the host, and
exit as their last turns come (under --pin their main threads share
MAIN, so the exits contend), so set-up and exit are longer than alone:
program_s is a figure of the ring, nearer 1 than a run alone would be,
and an exit's difference is measured under that contention.  A policy's
budget= does not see the same run (its
windows are spaced by wall time, most of which is the others' turns).

Under --lockstep, --pin MAIN[:OTHERS] moves, once all are set up, every
program's main thread to the CPUs MAIN and its other threads to OTHERS:
the step's host work then runs on the same CPU in every program (threads
the main thread starts later, such as PyTorch's autograd device threads
at the first backward pass, inherit MAIN).  In session 21
(docs/results/2026-12-02-lockstep-pinned.md) the control's ratios had a
standard deviation of 0.022 and 0.026 unpinned (two runs, 4 pairs each),
0.016 and 0.011 with both programs on one CPU (6 and 10 pairs), and
0.009 in rings with the main threads on one CPU (7 rings); the two
programs' step times moved together far more on one CPU (correlation
0.72-0.89 against 0.22).

Several runs' lockstep repetitions make one table: each run's stderr
kept, each run given its own --first-rep (the repetitions' numbers, which
seed the rings' orders), then --from-logs FILE... reads them back.  A
device call of 10 minutes holds about 20 rings of three.

Usage: interposer.py [--reps N] [--configs bare,none,...] [--only w1,w2] [--goal CONFIG=RATIO]
                      [--steps N] [--pin CPUS] [--lockstep [--pin MAIN[:OTHERS]] [--first-rep K]]
       interposer.py --from-logs FILE... [--goal CONFIG=RATIO]
Environment: BUILD (build folder, default build).  Each run's numbers go to
stderr as it ends, the table to stdout at the end of each workload.
"""
import argparse
import math
import os
import random
import re
import select
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

B = os.environ.get("BUILD", "build")
NT = f"{B}/nucatrace"

CONFIGS = {
    "bare": None,
    # the library loaded (injected), no backend started
    "off": ["--mode", "off"],
    "none": ["--sample", "none"],
    "default": [],
    "all": ["--sample", "all"],
    "kernels": ["--mode", "kernels"],
    # the default policy with the launch callbacks kept on between windows
    "countall": ["--count-all"],
    # no nucatrace: attached to the Compute Sanitizer, nothing enabled
    "sanitizer": {"CUDA_INJECTION64_PATH": os.path.abspath(f"{B}/tests/gpu/subcost.so"), "SUBCOST": "none"},
}


def command(cmd, cfg, out_dir):
    """(argv, env) of cmd under configuration cfg: None bare, a list
    nucatrace's options, a dict the environment of a run without it."""
    if cfg is None:
        return cmd, None
    if isinstance(cfg, dict):
        return cmd, {**os.environ, **cfg}
    return [NT, "run", "--quiet", "--no-calibrate", "--output-dir", out_dir, *cfg, "--", *cmd], None


WORKLOADS = {
    "train": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "30", "--step-times"],
              {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "train-gpu": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "30", "--scale", "8", "--step-times"],
                  {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "train-long": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "300", "--step-times"],
                   {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "train-gpu-long": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "150", "--scale", "8", "--step-times"],
                       {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "train-graphs": (["python3", "tests/gpu/progs/torch_train.py", "--graphs", "--steps", "100"],
                     {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "triad": ([f"{B}/tests/gpu/triad", "200"],
              {"launch_ms": r"^triad ([0-9.]+) ms", "wall_s": r"^wall ([0-9.]+) s"}),
    "launches": ([f"{B}/tests/gpu/bench", "launches", "100000"], {"wall_s": r"^launches ([0-9.]+) s"}),
    "gemm": (["python3", "tests/gpu/progs/torch_bench.py"], {"gemm_ms": r"^gemm ([0-9.]+) ms"}),
    "chase": ([f"{B}/tests/gpu/bench", "chase", "200"], {"chase_ms": r"^chase ([0-9.]+) ms"}),
    "startup": (["sh", "tests/bench/startup.sh", "200"], {"start_s": r"^startup ([0-9.]+) s"}),
}

# the loops --lockstep takes turns in, and those only it runs
EAGER = ("train", "train-gpu", "train-long", "train-gpu-long")
LOCKSTEP_ONLY = ("train-gpu-long",)


def median_ci(q, want=0.90):
    """(lo, hi, coverage): order statistics of the sorted sample q that
    hold its population's median with probability coverage, the widest
    such k from the ends that still reaches want (else the range)."""
    n = len(q)
    best = (q[0], q[-1], 1 - 2 * 0.5 ** n)
    for k in range(1, n // 2 + 1):
        cover = 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if cover < want:
            break
        best = (q[k - 1], q[n - k], cover)
    return best


def diffs_cell(q, digits=4):
    """Paired differences q (sorted): their median [range] and the
    median's interval (median_ci), ranges written "a to b" (signed)."""
    lo, hi, cover = median_ci(q)
    f = f"{{:+.{digits}f}}".format
    return f"{f(statistics.median(q))} [{f(q[0])} to {f(q[-1])}], {cover:.0%} interval {f(lo)} to {f(hi)}"


def verdict(lo, hi, goal):
    return "goal met" if hi <= goal else "goal missed" if lo > goal else "cannot tell"


def ratios_cell(q, goal=None, digits=3):
    """Paired ratios q (sorted): their median [range], the median's
    interval (median_ci) and, given a goal, the verdict on it."""
    lo, hi, cover = median_ci(q)
    cell = (f"{statistics.median(q):.{digits}f} [{q[0]:.{digits}f}-{q[-1]:.{digits}f}], "
            f"{cover:.0%} interval {lo:.{digits}f}-{hi:.{digits}f}")
    return cell if goal is None else cell + f": {verdict(lo, hi, goal)} (<= {goal:g})"


def step_times(text):
    """The step times (ms) a training loop printed (--step-times), the
    first step left out (CUDA's lazy module loading, cuBLAS and cuDNN
    set-up, the allocator's growth: it swamped the rest, about 45% excess
    in bare runs, session 14); None when it printed none."""
    m = re.search(r"^step_times_ms (.*)$", text, re.M)
    return [float(x) for x in m.group(1).split()][1:] if m else None


def phases_of(text, u0, u1):
    """Where a program's wall time went besides its loop, from the clock
    lines it printed (torch_train.py) and when it began (u0) and ended
    (u1, Unix time): its start (process start to the program's first
    line), its set-up (to its loop: CUDA, the models) and its exit (its
    last line to the process's end: what tracing does at exit); None when
    it printed no clock lines."""
    clock = {k: float(v) for k, v in re.findall(r"^clock_(begin|ready|end) ([0-9.]+)$", text, re.M)}
    if len(clock) < 3:
        return None
    return {"start_s": clock["begin"] - u0, "setup_s": clock["ready"] - clock["begin"], "exit_s": u1 - clock["end"]}


def run_once(cmd, cfg, metrics, out_dir, pin=None):
    args, env = command(cmd, cfg, out_dir)
    if pin:
        args = ["taskset", "-c", pin, *args]
    t0, u0 = time.perf_counter(), time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    wall, u1 = time.perf_counter() - t0, time.time()
    if p.returncode:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"{' '.join(args)}: exit {p.returncode}")
    got = {"program_s": wall}
    for name, rx in metrics.items():
        m = re.search(rx, p.stdout, re.M)
        if not m:
            raise SystemExit(f"{' '.join(args)}: no '{name}' in its output:\n{p.stdout}")
        got[name] = float(m.group(1))
    got.update(phases_of(p.stdout, u0, u1) or {})
    t = step_times(p.stdout)
    if t:
        got["excess"] = (sum(t) - len(t) * statistics.median(t)) / sum(t)
    for f in os.listdir(out_dir):
        os.unlink(os.path.join(out_dir, f))
    return got


# the trace's meta keys a lockstep ring prints
TRACE_META = ("launches", "windows", "launches_in_windows", "window_s", "dark_spans", "dark_s", "patches",
              "unpatches", "callbacks", "callback_s")


def cpu_set(spec):
    """The CPUs of a list like taskset's: 3 or 2-5 or 0,4-7."""
    cpus = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def pin_threads(pid, main, others):
    """Program pid's main thread on the CPUs main, its other threads
    (CUDA's, PyTorch's, nucatrace's collector) on others; threads it
    starts later inherit their starter's."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), main if int(tid) == pid else others)
        except ProcessLookupError:
            pass  # a thread that has ended since


def lockstep_ring(cmd, cfgs, out_dir, limit_s=900, pin=None):
    """Runs of cmd at once, one per configuration in cfgs (each as
    command() takes them), taking turns step by step in a ring, cfgs[0]'s
    first: (steps, phases), each one's step times (ms), the first step
    left out, and where the rest of its wall time went (phases_of: None
    for a program that does not say).  pin: (main, others), CPU sets
    each program's threads go to once all are ready, their set-up left
    free (pin_threads).  A program that fails ends the ring at once."""
    d = tempfile.mkdtemp()
    n = len(cfgs)
    fifo = [os.path.join(d, f"turn{i}") for i in range(n)] + [os.path.join(d, "ready")]
    for f in fifo:
        os.mkfifo(f)
    # open before any program starts: one that writes its id and closes
    # the FIFO while no one else holds it open would lose what it wrote
    ready = os.open(fifo[n], os.O_RDWR)
    turn = None
    procs, outs, waiters = [], [], []
    # when each program began and ended (Unix time): its end is seen by a
    # thread of its own blocked in wait(), not by the polling below
    began, ended = [], [None] * n
    got, t0 = b"", time.monotonic()

    def waiter(i, p):
        p.wait()
        ended[i] = time.time()

    try:
        for i, cfg in enumerate(cfgs):
            prog = [*cmd, "--lockstep", f"{fifo[i]},{fifo[(i + 1) % n]},{fifo[n]}"]
            od = os.path.join(out_dir, str(i))
            os.makedirs(od, exist_ok=True)
            args, env = command(prog, cfg, od)
            out = tempfile.TemporaryFile(mode="w+")
            outs.append((args, out))
            began.append(time.time())
            procs.append(subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, text=True, env=env))
            waiters.append(threading.Thread(target=waiter, args=(i, procs[-1]), daemon=True))
            waiters[-1].start()

        def check(what):
            for i, p in enumerate(procs):
                if p.poll() and p.returncode:
                    raise RuntimeError(f"program {i} ({' '.join(outs[i][0])}) exited {p.returncode} {what}")
            if time.monotonic() - t0 > limit_s:
                raise RuntimeError(f"not done in {limit_s} s ({what})")

        # each program, once set up, writes its process id and a newline
        while got.count(b"\n") < n:
            check("before it was ready")
            if any(p.returncode == 0 for p in procs):
                raise RuntimeError("a program ended before it was ready")
            if select.select([ready], [], [], 1.0)[0]:
                got += os.read(ready, 64)
        if pin:
            for pid in got.split():
                pin_threads(int(pid), *pin)
        turn = os.open(fifo[0], os.O_RDWR)
        os.write(turn, b"t")
        while any(t.is_alive() for t in waiters):
            check("while taking turns")
            time.sleep(0.1)
        check("while taking turns")
    except BaseException as e:
        # a failure, a time limit or ^C: no program left behind, blocked
        # on a FIFO no one will write
        for p in procs:
            p.kill()
            p.wait()
        for args, out in outs:
            out.seek(0)
            sys.stderr.write(out.read()[-3000:])
        if not isinstance(e, (RuntimeError, ValueError, OSError)):
            raise
        raise SystemExit(f"lockstep {cmd}: {e}")
    finally:
        os.close(ready)
        if turn is not None:
            os.close(turn)
        for f in fifo:
            os.unlink(f)
        os.rmdir(d)
    steps, phases = [], []
    for (args, out), p, u0, u1 in zip(outs, procs, began, ended):
        out.seek(0)
        text = out.read()
        t = step_times(text)
        if p.returncode or t is None:
            sys.stderr.write(text[-3000:])
            raise SystemExit(f"{' '.join(args)}: exit {p.returncode}" + ("" if t is not None else ", no step times"))
        steps.append(t)
        phases.append(phases_of(text, u0, u1))
    # what the traced programs' traces say of their windows and dark spans
    for root, _, files in os.walk(out_dir):
        for f in files:
            if f.endswith(".sqlite"):
                try:
                    db = sqlite3.connect(f"file:{os.path.join(root, f)}?mode=ro", uri=True)
                    meta = dict(db.execute("select key, value from meta"))
                    db.close()
                    print("  trace: " + " ".join(f"{k}={meta[k]}" for k in TRACE_META if k in meta),
                          file=sys.stderr, flush=True)
                except sqlite3.Error as e:
                    print(f"  trace {f}: {e}", file=sys.stderr, flush=True)
            os.unlink(os.path.join(root, f))
    return steps, phases


def lockstep(w, cmd, configs, reps, goals, out_dir, pin=None, first_rep=1):
    """The --lockstep bench of one workload: per repetition one ring of
    a bare run (the reference), another bare run (the control) and one
    run per configuration, in an order shuffled each repetition (seeded
    by its number, first_rep on): what one program leaves behind in its
    turn (a collector's writing, a warm cache) falls on whichever follows
    it, and a fixed order would always hand it to the same one; each
    run's ratio of its steps to the reference's."""
    if "--step-times" not in cmd:
        cmd = [*cmd, "--step-times"]
    others = ["bare"] + [c for c in configs if c != "bare"]
    members = ["bare", *others]  # [0] the reference, [1] the control
    names = ["reference", "control", *others[1:]]  # as the logs call them
    got = {c: [] for c in others}
    for rep in range(first_rep, first_rep + reps):
        order = list(range(len(members)))
        random.Random(rep - 1).shuffle(order)
        t, ph = lockstep_ring(cmd, [CONFIGS[members[i]] for i in order], out_dir, pin=pin)
        t = {i: x for i, x in zip(order, t)}
        ph = {i: x for i, x in zip(order, ph)}
        bare = t[0]
        turns = " ".join(names[i] for i in order)
        print(f"  steps_ms reference {' '.join(f'{x:.2f}' for x in bare)}", file=sys.stderr)
        for i, c in enumerate(others, 1):
            mine = t[i]
            got[c].append((sum(bare) / 1000, sum(mine) / 1000, statistics.median(bare), statistics.median(mine))
                          + (phase_pairs(ph[0], ph[i]) if ph[0] and ph[i] else ()))
            # the line lockstep_logs() reads back
            print(f"{w} lockstep repetition {rep} bare against {c} (turns: {turns}): "
                  f"steps {sum(bare) / 1000:.4f} s against {sum(mine) / 1000:.4f} s, median step "
                  f"{statistics.median(bare):.3f} ms against {statistics.median(mine):.3f} ms",
                  file=sys.stderr)
            # every step, for a look at where a configuration's time goes
            print(f"  steps_ms {names[i]} {' '.join(f'{x:.2f}' for x in mine)}",
                  file=sys.stderr, flush=True)
        if all(ph.values()):
            # the other line lockstep_logs() reads back
            print(f"{w} lockstep repetition {rep} phases (start, set-up, exit s): " + ", ".join(
                f"{names[i]} " + " ".join(f"{ph[i][k]:.4f}" for k in PHASES) for i in range(len(members))),
                file=sys.stderr, flush=True)
    lockstep_table(w, got, goals, f"; once set up, main threads on CPUs {sorted(pin[0])}, other threads on "
                   f"{sorted(pin[1])}" if pin else "")


PHASES = ("start_s", "setup_s", "exit_s")


def phase_pairs(ref, mine):
    """A ring member's phases beside the reference's, as lockstep()
    keeps them after the steps: (ref start, its start, ref set-up, ...)."""
    return tuple(x for k in PHASES for x in (ref[k], mine[k]))


PHASES_LINE = re.compile(r"^(\S+) lockstep repetition (\d+) phases \(start, set-up, exit s\): (.*)$", re.M)
LOCKSTEP_LINE = re.compile(r"^(\S+) lockstep repetition (\d+) bare against (\S+) \([^)]*\): steps ([\d.]+) s "
                           r"against ([\d.]+) s, median step ([\d.]+) ms against ([\d.]+) ms$", re.M)


def lockstep_logs(paths):
    """What lockstep() printed to stderr in one or more runs (a run cut
    short by a time limit included), read back: {workload: {config:
    [(reference's steps s, its steps s, reference's median step ms,
    its median step ms), then, where the ring's phases line is there
    (since session 23), phase_pairs()]}}, the control first; a
    repetition found twice is refused (two runs with the same
    --first-rep)."""
    got, seen = {}, {}
    for path in paths:
        try:
            text = open(path).read()
        except OSError as e:
            raise SystemExit(f"--from-logs {path}: {e.strerror}")
        phases = {}
        for w, rep, line in PHASES_LINE.findall(text):
            ring = {}
            for member in line.split(", "):
                name, *v = member.split()
                ring[name] = dict(zip(PHASES, map(float, v)))
            phases[(w, rep)] = ring
        for w, rep, c, *x in LOCKSTEP_LINE.findall(text):
            if (w, rep, c) in seen:
                raise SystemExit(f"--from-logs: {w} repetition {rep} against {c} in both {seen[(w, rep, c)]} and "
                                 f"{path} (give each run its own --first-rep)")
            seen[(w, rep, c)] = path
            ring = phases.get((w, rep), {})
            mine = ring.get("control" if c == "bare" else c)
            got.setdefault(w, {"bare": []}).setdefault(c, []).append(
                tuple(float(v) for v in x) + (phase_pairs(ring["reference"], mine) if mine else ()))
    if not got:
        raise SystemExit(f"--from-logs {' '.join(paths)}: no lockstep repetitions in them")
    return got


def lockstep_table(w, got, goals, note=""):
    """The lockstep table of one workload: per configuration (the
    control, 'bare', first) its steps' total and median step against the
    reference's, each repetition's ratio, median [range] and the sign
    test's interval, and the verdict on its goal.  Where every ring
    timed its phases: each phase's difference to the reference's
    (seconds), and the program's time, its phases and its timed steps
    together, against the reference's (with the goal's verdict), its
    set-up and exit shared with the ring's others (see the top)."""
    got = {c: v for c, v in got.items() if v}
    n = sorted({len(v) for v in got.values()})
    print(f"{w}: lockstep, {'/'.join(map(str, n))} repetitions; each a ring of a bare run (the reference), "
          "another bare run (the control, 'bare' below) and one run per configuration taking turns step by "
          "step, the first step left out; ratios to the reference" + note)

    def row(m, cells):
        print(f"{w:9s} {m:10s} " + f"\n{'':20s} ".join(cells))

    for m, k in (("steps_s", 0), ("step_ms", 2)):
        cells = []
        for c, v in got.items():
            b = statistics.median(x[k] for x in v)
            o = statistics.median(x[k + 1] for x in v)
            cells.append(f"{c} {o:.6g} against {b:.6g}: "
                         + ratios_cell(sorted(x[k + 1] / x[k] for x in v), goals.get(c), 4))
        row(m, cells)
    timed = sum(len(x) > 4 for x in got["bare"])
    if timed < len(got["bare"]):
        # rings from before the phases were timed
        if timed:
            print(f"{w:9s} phases timed in {timed} of {len(got['bare'])} rings only: not shown")
        sys.stdout.flush()
        return
    for j, m in enumerate(PHASES):
        k = 4 + 2 * j
        row(m, [f"{c} {statistics.median(x[k + 1] for x in v):.4g} against {statistics.median(x[k] for x in v):.4g}, "
                "difference " + diffs_cell(sorted(x[k + 1] - x[k] for x in v)) for c, v in got.items()])
    # the steps and the three phases: (reference's, its own)
    whole = {c: [(x[0] + x[4] + x[6] + x[8], x[1] + x[5] + x[7] + x[9]) for x in v] for c, v in got.items()}
    row("program_s", [f"{c} {statistics.median(o for _, o in v):.6g} against {statistics.median(b for b, _ in v):.6g}: "
                      + ratios_cell(sorted(o / b for b, o in v), goals.get(c), 4) for c, v in whole.items()])
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--configs", default="bare,none,default,all,kernels")
    ap.add_argument("--only", default=",".join(w for w in WORKLOADS if w not in LOCKSTEP_ONLY))
    ap.add_argument("--policy", action="append", default=[],
                    help="NAME=POLICY: one more configuration, --sample POLICY")
    ap.add_argument("--goal", action="append", default=[],
                    help="CONFIG=RATIO: say whether each metric's ratio is shown within it")
    ap.add_argument("--pin", help="CPUS: run every program on these CPUs only (taskset -c CPUS), "
                    "its tracer's thread included; under --lockstep MAIN[:OTHERS]: once set up, every "
                    "program's main thread on the CPUs MAIN, its other threads on OTHERS (else MAIN)")
    ap.add_argument("--lockstep", action="store_true",
                    help="the eager loops: each configuration in turns with a bare run (see above)")
    ap.add_argument("--first-rep", type=int, default=1,
                    help="under --lockstep, the first repetition's number (it seeds its ring's order): "
                    "a run that goes on from another's")
    ap.add_argument("--steps", type=int, help="the training loops' number of steps, instead of their own")
    ap.add_argument("--from-logs", nargs="+", metavar="FILE",
                    help="no runs: the lockstep tables (and --goal verdicts) of the repetitions these "
                    "runs' stderr holds, together")
    a = ap.parse_args()
    try:
        goals = {g.split("=", 1)[0]: float(g.split("=", 1)[1]) for g in a.goal}
    except (IndexError, ValueError):
        raise SystemExit(f"--goal {' '.join(a.goal)}: not CONFIG=RATIO")
    if a.from_logs:
        for w, got in lockstep_logs(a.from_logs).items():
            lockstep_table(w, got, goals, f"; from {len(a.from_logs)} log{'s' if len(a.from_logs) > 1 else ''}")
        return
    ring_pin = None
    if a.pin and a.lockstep:
        main_cpus, _, other_cpus = a.pin.partition(":")
        try:
            ring_pin = (cpu_set(main_cpus), cpu_set(other_cpus or main_cpus))
        except ValueError:
            raise SystemExit(f"--pin {a.pin}: not MAIN[:OTHERS], each a CPU list like 3 or 4-7")
        if not ring_pin[0] | ring_pin[1] <= os.sched_getaffinity(0):
            raise SystemExit(f"--pin {a.pin}: CPUs {sorted((ring_pin[0] | ring_pin[1]) - os.sched_getaffinity(0))} "
                             f"are not this process's to use ({sorted(os.sched_getaffinity(0))})")
    elif a.pin and ":" in a.pin:
        raise SystemExit(f"--pin {a.pin}: MAIN:OTHERS is for --lockstep; without it, a CPU list")
    for extra in a.policy:
        name, policy = extra.split("=", 1)
        CONFIGS[name] = ["--sample", policy]
    configs = a.configs.split(",") + [p.split("=", 1)[0] for p in a.policy]
    for w in a.only.split(","):
        if w not in WORKLOADS:
            raise SystemExit(f"--only {w}: no such workload ({', '.join(WORKLOADS)})")
        if a.lockstep and w not in EAGER:
            raise SystemExit(f"--lockstep: {w} is not an eager training loop ({', '.join(EAGER)})")
        if not a.lockstep and w in LOCKSTEP_ONLY:
            raise SystemExit(f"--only {w}: runs only under --lockstep")
    for c in configs:
        if c not in CONFIGS:
            raise SystemExit(f"--configs {c}: no such configuration ({', '.join(CONFIGS)}, or --policy NAME=...)")
    if a.steps is not None:
        if a.steps < 2:
            raise SystemExit(f"--steps {a.steps}: at least 2 (the first is left out)")
        for w in a.only.split(","):
            cmd = WORKLOADS[w][0]
            if "--steps" not in cmd:
                raise SystemExit(f"--steps: {w} is not a training loop")
            cmd[cmd.index("--steps") + 1] = str(a.steps)
    out_dir = tempfile.mkdtemp()
    print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip())
    if not a.lockstep:
        print(f"{a.reps} interleaved repetitions, medians; ratios to bare; then each repetition's ratio "
              "to its bare run, median [min-max]" + (f"; every run on CPUs {a.pin}" if a.pin else ""))
    for w in a.only.split(","):
        cmd, metrics = WORKLOADS[w]
        if a.lockstep:
            lockstep(w, cmd, configs, a.reps, goals, out_dir, ring_pin, a.first_rep)
            continue
        runs = {c: [] for c in configs}
        for rep in range(a.reps):
            for c in configs:
                runs[c].append(run_once(cmd, CONFIGS[c], metrics, out_dir, a.pin))
                # as it comes, on stderr: a run cut short by a time limit
                # still says what it measured
                print(f"{w} repetition {rep + 1} {c}: " +
                      " ".join(f"{k}={v:.6g}" for k, v in runs[c][-1].items()), file=sys.stderr, flush=True)
        extra = [m for m in ("excess", "start_s", "setup_s", "exit_s") if m in runs[configs[0]][0]]
        for m in ["program_s", *metrics, *extra]:
            med = {c: statistics.median(r[m] for r in runs[c]) for c in configs}
            if m in ("excess", "start_s", "setup_s", "exit_s"):
                # a share, or a few seconds: each run's minus the bare run's
                # beside it (a ratio of two small times says little)
                k, unit = (100, "points") if m == "excess" else (1, "s")
                fmt = (lambda v: f"{v:.2f}%") if m == "excess" else (lambda v: f"{v:.3f} s")
                cells = "  ".join(f"{c} {fmt(k * med[c])}" for c in configs)
                print(f"{w:9s} {m:10s} {cells}")
                paired = []
                for c in configs:
                    if c != "bare":
                        q = sorted(k * (r[m] - b[m]) for r, b in zip(runs[c], runs["bare"]))
                        lo, hi, cover = median_ci(q)
                        paired.append(f"{c} {statistics.median(q):+.2f} {unit} [{q[0]:+.2f} to {q[-1]:+.2f}], "
                                      f"{cover:.0%} interval {lo:+.2f} to {hi:+.2f}")
                print(f"{'':9s} {'':10s} minus bare, per repetition: {'  '.join(paired)}")
                continue
            cells = "  ".join(f"{c} {med[c]:.6g}" + (f" ({med[c] / med['bare']:.3f})" if c != "bare" else "")
                              for c in configs)
            print(f"{w:9s} {m:10s} {cells}")
            # Each repetition's ratio to the bare run beside it: the
            # median and the range say how much of a ratio is noise.
            paired = []
            for c in configs:
                if c != "bare":
                    paired.append(f"{c} " + ratios_cell(sorted(r[m] / b[m] for r, b in zip(runs[c], runs["bare"])),
                                                        goals.get(c)))
            if paired:
                print(f"{'':9s} {'':10s} per repetition, median [range]: {'  '.join(paired)}")
        if w == "launches":
            for c in configs:
                if c != "bare":
                    extra = statistics.median(r["wall_s"] for r in runs[c]) - \
                        statistics.median(r["wall_s"] for r in runs["bare"])
                    print(f"{w:9s} host cost per launch under {c}: {extra / 100000 * 1e6:.3f} us")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
