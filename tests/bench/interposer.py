"""make bench, interposer part: the cost of tracing, measured side by side.

Each workload runs bare and under each tracing configuration, the
configurations interleaved repetition by repetition (bare, none, default,
...; then again), and each number is the median of the repetitions; the
table gives every median and its ratio to bare, then each repetition's
ratio to the bare run of its round (median and range): on a shared host
the PyTorch loop's step time drifts by 15% between runs of one
configuration (docs/results/2026-12-01-session10.md), and the range shows
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
  train-graphs  the same loop's step captured into one CUDA graph and
            replayed 100 times: a traced graph launch waits for the work queued
            before it (interposer/san_nodes.c)
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
and any --policy NAME=POLICY.

Each repetition's ratio to the bare run beside it gives, besides its
median, a distribution-free confidence interval for that median (order
statistics of the paired ratios, the sign test's: with 5 repetitions
the interval is their range, 94%).  --goal CONFIG=RATIO (e.g. none=1.01)
says of each metric whether the interval shows the goal met (upper end
at or below it), missed (lower end above it) or neither: on a shared
host a training loop's runs vary by 15-35% (docs/results/2026-12-01-
session12.md), and then neither is the honest answer.  --pin CPUS runs
every program on those CPUs only (taskset), to see whether the drift
between runs is the scheduler's.

Usage: interposer.py [--reps N] [--configs bare,none,...] [--only w1,w2] [--goal CONFIG=RATIO]
                      [--pin CPUS]
Environment: BUILD (build folder, default build).  Each run's numbers go to
stderr as it ends, the table to stdout at the end of each workload.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
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
}

WORKLOADS = {
    "train": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "30", "--step-times"],
              {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "train-gpu": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "30", "--scale", "8", "--step-times"],
                  {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"}),
    "train-long": (["python3", "tests/gpu/progs/torch_train.py", "--steps", "300", "--step-times"],
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


def verdict(lo, hi, goal):
    return "goal met" if hi <= goal else "goal missed" if lo > goal else "cannot tell"


def run_once(cmd, cfg, metrics, out_dir, pin=None):
    args = cmd if cfg is None else [NT, "run", "--quiet", "--no-calibrate", "--output-dir", out_dir,
                                    *cfg, "--", *cmd]
    if pin:
        args = ["taskset", "-c", pin, *args]
    t0, u0 = time.perf_counter(), time.time()
    p = subprocess.run(args, capture_output=True, text=True)
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
    # where a program's wall time goes: to its start (process start to
    # the program's first line), its set-up (to its loop), its exit (its
    # last line to the process's end: what tracing does at exit)
    clock = {k: float(v) for k, v in re.findall(r"^clock_(begin|ready|end) ([0-9.]+)$", p.stdout, re.M)}
    if len(clock) == 3:
        got["start_s"] = clock["begin"] - u0
        got["setup_s"] = clock["ready"] - clock["begin"]
        got["exit_s"] = u1 - clock["end"]
    m = re.search(r"^step_times_ms (.*)$", p.stdout, re.M)
    if m:
        # the first step (CUDA's lazy module loading, cuBLAS and cuDNN
        # set-up, the allocator's growth) is left out: it swamped the rest
        # (about 45% excess in bare runs, session 14)
        t = [float(x) for x in m.group(1).split()][1:]
        if t:
            got["excess"] = (sum(t) - len(t) * statistics.median(t)) / sum(t)
    for f in os.listdir(out_dir):
        os.unlink(os.path.join(out_dir, f))
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--configs", default="bare,none,default,all,kernels")
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--policy", action="append", default=[],
                    help="NAME=POLICY: one more configuration, --sample POLICY")
    ap.add_argument("--goal", action="append", default=[],
                    help="CONFIG=RATIO: say whether each metric's ratio is shown within it")
    ap.add_argument("--pin", help="CPUS: run every program on these CPUs only (taskset -c CPUS), "
                    "its tracer's thread included")
    a = ap.parse_args()
    goals = {g.split("=", 1)[0]: float(g.split("=", 1)[1]) for g in a.goal}
    for extra in a.policy:
        name, policy = extra.split("=", 1)
        CONFIGS[name] = ["--sample", policy]
    configs = a.configs.split(",") + [p.split("=", 1)[0] for p in a.policy]
    out_dir = tempfile.mkdtemp()
    print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip())
    print(f"{a.reps} interleaved repetitions, medians; ratios to bare; then each repetition's ratio "
          "to its bare run, median [min-max]" + (f"; every run on CPUs {a.pin}" if a.pin else ""))
    for w in a.only.split(","):
        cmd, metrics = WORKLOADS[w]
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
                    q = sorted(r[m] / b[m] for r, b in zip(runs[c], runs["bare"]))
                    lo, hi, cover = median_ci(q)
                    cell = (f"{c} {statistics.median(q):.3f} [{q[0]:.3f}-{q[-1]:.3f}], "
                            f"{cover:.0%} interval {lo:.3f}-{hi:.3f}")
                    if c in goals:
                        cell += f": {verdict(lo, hi, goals[c])} (<= {goals[c]:g})"
                    paired.append(cell)
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
