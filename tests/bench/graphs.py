"""make bench, graph part (issue 33): what the default policy costs a
program that replays CUDA graph execs made before its windows, beside the
Compute Sanitizer's floor measured in the same run.

Workloads:

  decode  tests/gpu/progs/decode.cu: one exec of 4 kernels made at the
          start and replayed N times (400,000 by default); timed: the
          replays ("loop", first replay to the stream's last work), their
          last quarter ("tail": long after the window) and the program's
          wall time.  Checksums must equal plain's in every run.
  torch   tests/gpu/progs/torch_train.py --graphs: a PyTorch training step
          (transformer LM + conv net, bf16, AdamW) captured into one graph
          and replayed --steps times (2,000), under --sample POLICY
          (default all,window=1000,skip=1000,budget=5: windows in the
          replays, as train-graphs-dark has them); timed: the replays
          ("train"), the median step's host time (a replay queued; every
          10th waits for the losses) and the program's wall time.  The
          losses it prints every 10 steps must equal plain's.

Configurations, run in turns repetition by repetition (the order rotated
by one each repetition, so none always follows another):

  plain    untraced
  floor    no nucatrace: tests/gpu/subcost.so attached to the Compute
           Sanitizer with nothing enabled (what attaching costs anyone)
  default  nucatrace run (the shadow route: a window launches shadow execs
           of the program's, whose nodes run instrumented twins)
  update   the same with NUCATRACE_GRAPH_ROUTE=update (the program's exec
           pointed at the twins for the window and back)
  none     nucatrace run --sample none (the library loaded, nothing sampled)

Each metric: the medians, then each repetition's ratio to the floor run of
its round and to the plain one, median [range] with the median's
distribution-free interval (interposer.py's median_ci).  --goal
[WORKLOAD:]CONFIG=R judges the ratio to the floor (issue 33:
decode:default=1.01), on that workload or on every one, of the replays'
time (loop_ms, train_s; the program's wall time is reported beside it,
which nucatrace's start and its trace's writing add to): met when the
interval's upper end is at or below R, missed when its lower end is above
it, else cannot tell.  Traced runs also give, from the trace: the
windows, node launches traced and in how many graph launches, graph
launches routed, shadow execs, and launches dropped (by reason).

A run that exits non-zero (a program that dies under tracing) is counted
as failed with its first error line, left out of the medians and of the
ratios of its repetition; the script goes on and exits 1.

Usage: graphs.py [--only decode,torch] [--reps N] [--configs plain,floor,...]
                 [--replays N] [--steps N] [--policy POLICY] [--goal [WORKLOAD:]CONFIG=R]
Environment: BUILD (build folder, default build).  Exits 1 when outputs
differ, a run fails or a goal is missed.
"""
import argparse
import glob
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interposer import median_ci, ratios_cell, verdict  # noqa: E402

B = os.environ.get("BUILD", "build")

CONFIGS = {
    "plain": (None, {}),
    "floor": (None, {"CUDA_INJECTION64_PATH": os.path.abspath(f"{B}/tests/gpu/subcost.so"), "SUBCOST": "none"}),
    "default": ([], {}),
    "update": ([], {"NUCATRACE_GRAPH_ROUTE": "update"}),
    "none": (["--sample", "none"], {}),
}

META = ("windows", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned")


def trace_facts(folder):
    """The trace's facts, or None where there is none (--sample none
    writes none)."""
    paths = glob.glob(os.path.join(folder, "*.sqlite"))
    if not paths:
        return None
    if len(paths) != 1:
        raise SystemExit(f"{folder}: {len(paths)} traces")
    db = sqlite3.connect(f"file:{paths[0]}?mode=ro", uri=True)
    meta = dict(db.execute("select key, value from meta"))
    # a graph launch is an exec's (or a shadow's: a graph of its own) launch id
    nodes, glaunches = db.execute("select count(*), count(distinct graph || ':' || graph_launch) from launches"
                                  " where traced = 1 and graph is not null").fetchone()
    drops = db.execute("select reason, sum(count) from drops group by 1").fetchall()
    db.close()
    facts = {k: meta.get(k, "0") for k in META}
    facts.update(nodes=nodes, graph_launches=glaunches, drops=drops)
    return facts


def run_once(cmd, cfg, policy, out_dir, limit):
    pre, env = CONFIGS[cfg]
    args = cmd
    if pre is not None:
        args = [f"{B}/nucatrace", "run", "--quiet", "--no-calibrate", "--output-dir", out_dir,
                *(["--sample", policy] if policy and cfg != "none" else []), *pre, "--", *cmd]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **env}, timeout=limit)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"{' '.join(args)}: still running after {limit:.0f} s")
    wall = time.perf_counter() - t0
    got = {"program_s": wall, "out": p.stdout}
    if p.returncode:
        # a program that dies under tracing is a result: counted, its
        # error kept, left out of the medians
        sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
        err = [l for l in p.stderr.splitlines() if "rror" in l]
        got["failed"] = f"exit {p.returncode}" + (f": {err[0].strip()[:160]}" if err else "")
    if pre is not None:
        t = trace_facts(out_dir)
        if t:
            got["trace"] = t
        for f in os.listdir(out_dir):
            os.unlink(os.path.join(out_dir, f))
    return got


WORKLOADS = {
    # metrics: name -> regex of the program's output; "same": the lines
    # that must equal plain's
    "decode": {"metrics": {"loop_ms": r"^loop ([0-9.]+) ms", "tail_ms": r"^tail ([0-9.]+) ms"},
               "same": r"^(checksum .*|node launches .*)$"},
    "torch": {"metrics": {"train_s": r"^train ([0-9.]+) s", "step_ms": r"^step ([0-9.]+) ms"},
              "same": r"^(step [0-9]+ loss .*)$"},
}


def main():
    ap = argparse.ArgumentParser(description="the default policy on graph replays, beside the floor")
    ap.add_argument("--only", default="decode,torch")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--configs", default="plain,floor,default,update")
    ap.add_argument("--replays", type=int, default=400000, help="decode's replays")
    ap.add_argument("--steps", type=int, default=2000, help="torch's steps")
    ap.add_argument("--policy", default="all,window=1000,skip=1000,budget=5",
                    help="torch's --sample (decode runs the default policy)")
    ap.add_argument("--goal", action="append", default=[], help="[WORKLOAD:]CONFIG=RATIO to the floor")
    ap.add_argument("--limit", type=float, default=300, help="seconds a run may take")
    a = ap.parse_args()
    goals = {}  # (workload or None, config) -> ratio
    for g in a.goal:
        key, _, r = g.partition("=")
        w, _, c = key.rpartition(":")
        try:
            goals[(w or None, c)] = float(r)
        except ValueError:
            raise SystemExit(f"--goal {g}: not [WORKLOAD:]CONFIG=RATIO")
        if w and w not in WORKLOADS:
            raise SystemExit(f"--goal {g}: no such workload ({', '.join(WORKLOADS)})")
    configs = a.configs.split(",")
    for c in configs + [c for _, c in goals]:
        if c not in CONFIGS:
            raise SystemExit(f"--configs/--goal {c}: no such configuration ({', '.join(CONFIGS)})")
    for base in ("plain", "floor"):
        if base not in configs:
            raise SystemExit(f"--configs {a.configs}: {base} is needed (ratios are to it)")
    cmds = {"decode": [f"{B}/tests/gpu/decode", str(a.replays)],
            "torch": ["python3", "tests/gpu/progs/torch_train.py", "--graphs", "--steps", str(a.steps)]}
    only = a.only.split(",")
    for w in only:
        if w not in WORKLOADS:
            raise SystemExit(f"--only {w}: no such workload ({', '.join(WORKLOADS)})")
    try:
        print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip())
    except OSError as e:
        print(f"nvidia-smi: {e.strerror}: no GPU named")
    print(f"{a.reps} repetitions in turns (order rotated each), medians; ratios per repetition "
          "to the floor and to plain run in its round, median [range], the median's interval")
    out_dir = tempfile.mkdtemp()
    bad = False
    for w in only:
        spec, cmd = WORKLOADS[w], cmds[w]
        policy = a.policy if w == "torch" else None
        goal = {c: goals.get((w, c), goals.get((None, c))) for c in configs}
        runs = {c: [] for c in configs}
        for rep in range(a.reps):
            k = rep % len(configs)
            for c in configs[k:] + configs[:k]:
                x = run_once(cmd, c, policy, out_dir, a.limit)
                runs[c].append(x)
                if "failed" in x:
                    print(f"{w} repetition {rep + 1} {c}: FAILED, {x['failed']}", file=sys.stderr, flush=True)
                    continue
                for m, rx in spec["metrics"].items():
                    got = re.search(rx, x["out"], re.M)
                    if not got:
                        raise SystemExit(f"{' '.join(cmd)} ({c}): no '{m}' in its output:\n{x['out'][-2000:]}")
                    x[m] = float(got[1])
                x["same"] = re.findall(spec["same"], x["out"], re.M)
                print(f"{w} repetition {rep + 1} {c}: " +
                      " ".join(f"{m}={x[m]:.6g}" for m in ["program_s", *spec["metrics"]]) +
                      (f" trace={x['trace']}" if "trace" in x else ""), file=sys.stderr, flush=True)
        print(f"\n{w}: {' '.join(cmd)}" + (f" (traced runs: --sample {policy})" if policy else ""))
        for c in configs:
            failed = [x["failed"] for x in runs[c] if "failed" in x]
            if failed:
                print(f"  {c}: {len(failed)} of {len(runs[c])} runs FAILED ({'; '.join(sorted(set(failed)))})")
                bad = True
        ok = {c: [x for x in runs[c] if "failed" not in x] for c in configs}
        if not ok["plain"] or not ok["floor"]:
            print("  no table: plain or the floor has no run that ended well")
            continue
        shown = [c for c in configs if ok[c]]	# those with a run that ended well
        ref = ok["plain"][0]["same"]
        differ = [f"{c} repetition {i + 1}" for c in shown for i, x in enumerate(runs[c])
                  if "failed" not in x and x["same"] != ref]
        print(f"  outputs ({len(ref)} lines: {spec['same']}) equal plain's in every run: "
              + ("yes" if ref and not differ else f"NO: {', '.join(differ) or 'none printed'}"))
        bad |= bool(differ) or not ref
        judged = next(iter(spec["metrics"]))
        for m in ["program_s", *spec["metrics"]]:
            print(f"  {m:10s} " + "  ".join(f"{c} {statistics.median(x[m] for x in ok[c]):.6g}" for c in shown))
            for base in ("floor", "plain"):
                cells = []
                for c in shown:
                    if c == base:
                        continue
                    # repetitions where both ended well
                    q = sorted(x[m] / y[m] for x, y in zip(runs[c], runs[base])
                               if "failed" not in x and "failed" not in y)
                    if not q:
                        continue
                    g = goal[c] if base == "floor" and m == judged else None
                    cells.append(f"{c} " + ratios_cell(q, g))
                    if g is not None:
                        lo, hi, _ = median_ci(q)
                        bad |= verdict(lo, hi, g) == "goal missed"
                print(f"  {'':10s} to {base}: {'  '.join(cells)}")
        for c in shown:
            if "trace" in ok[c][-1]:
                t = ok[c][-1]["trace"]
                print(f"  {c} trace (last run): " + ", ".join(f"{k} {t[k]}" for k in META) +
                      f", {t['nodes']} node launches traced in {t['graph_launches']} graph launches,"
                      f" drops {t['drops'] or 'none'}")
        sys.stdout.flush()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
