"""The default policy on a STREAM-style size sweep (make bench; issue 32's
goal): tests/gpu/progs/stream_sweep.cu untraced (plain), with the Compute
Sanitizer attached and nothing enabled (floor: tests/gpu/subcost.so,
SUBCOST=none, what any tool that attaches to it costs) and under
`nucatrace run` with the default policy (default), in turns, REPS times;
medians over the repetitions of each size's bandwidth and of the program's
wall time (process start to exit).

    python3 tests/bench/stream_sweep.py [--reps N] [--sweep "REPS LO HI"]

Per size: plain's and default's median GB/s, their ratio, and whether the
default's trace holds traced launches of that size (a size measured while
the window was open, instrumented: it does not count against the goal).
Goals: every other size within 3% of plain, the program's wall time at
most 1.1x plain's, and every trace complete (meta complete=1, each traced
launch's block rows its grid).  Every run's checksum must equal plain's.
$BUILD: the build folder."""
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


def run(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    sizes = {int(m[1]): (int(m[2]), float(m[3])) for m in re.finditer(r"^size (\d+) blocks (\d+) us [\d.]+ GBs ([\d.]+)",
                                                                       p.stdout, re.M)}
    check = re.search(r"^checksum (\S+)", p.stdout, re.M)[1]
    return sizes, wall, check


def trace_facts(folder):
    """(traced grids by block count, complete, launches whose block rows differ from their grid)"""
    grids, complete, bad = set(), True, 0
    for t in glob.glob(os.path.join(folder, "*.sqlite")):
        db = sqlite3.connect(f"file:{t}?mode=ro", uri=True)
        complete &= (db.execute("select value from meta where key = 'complete'").fetchone() or ("0",))[0] == "1"
        for launch, blocks, grid in db.execute(
                "select launch, blocks, grid_x * grid_y * grid_z from launches where traced = 1"):
            grids.add(grid)
            n = db.execute("select coalesce(sum(blocks), 0) from block_chunks where launch = ?",
                           (launch,)).fetchone()[0]
            bad += n != blocks or blocks != grid
        db.close()
    return grids, complete, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sweep", default="2000 18 26")
    a = ap.parse_args()
    b = os.environ.get("BUILD", "build")
    prog = [f"{b}/tests/gpu/stream_sweep", *a.sweep.split()]
    res = {"plain": [], "floor": [], "default": []}
    facts = []
    order = list(res)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.reps):
            for cfg in order[r % 3:] + order[:r % 3]:  # rotated each repetition
                if cfg == "plain":
                    res[cfg].append(run(prog))
                    continue
                if cfg == "floor":
                    res[cfg].append(run(prog, {"CUDA_INJECTION64_PATH": os.path.abspath(f"{b}/tests/gpu/subcost.so"),
                                               "SUBCOST": "none"}))
                    continue
                out = os.path.join(tmp, f"r{r}")
                res[cfg].append(run([f"{b}/nucatrace", "run", "--quiet", "--no-calibrate", "--output-dir", out,
                                     "--", *prog]))
                facts.append(trace_facts(out))
    checks = {c for runs in res.values() for _, _, c in runs}
    traced = set().union(*(f[0] for f in facts))
    ok = len(checks) == 1
    print(f"stream_sweep {a.sweep}, {a.reps} repetitions each, medians")
    print(f"{'log2 n':>6s} {'blocks':>8s} {'plain GB/s':>10s} {'floor':>7s} {'default':>9s} {'ratio':>7s} "
          f"{'/floor':>7s}  window")
    worst = 1.0
    for lg in sorted(res["plain"][0][0]):
        blocks = res["plain"][0][0][lg][0]
        p, f, d = (statistics.median(s[lg][1] for s, _, _ in res[c]) for c in ("plain", "floor", "default"))
        inw = blocks in traced
        if not inw:
            worst = min(worst, d / p)
        print(f"{lg:6d} {blocks:8d} {p:10.1f} {f:7.1f} {d:9.1f} {d / p:7.3f} {d / f:7.3f}  {'traced' if inw else ''}")
    wp, wf, wd = (statistics.median(w for _, w, _ in res[c]) for c in ("plain", "floor", "default"))
    print(f"wall: floor {wf:.3f} s ({wf / wp:.3f} of plain)")
    complete = all(f[1] for f in facts)
    bad = sum(f[2] for f in facts)
    print(f"wall: plain {wp:.3f} s, default {wd:.3f} s, ratio {wd / wp:.3f}")
    print(f"goal: sizes outside the window within 3% of plain (worst {worst:.3f}): "
          f"{'met' if worst >= 0.97 else 'MISSED'}")
    print(f"goal: wall at most 1.1x plain ({wd / wp:.3f}): {'met' if wd / wp <= 1.1 else 'MISSED'}")
    print(f"goal: traces complete, every traced launch whole ({'complete' if complete else 'INCOMPLETE'}, "
          f"{bad} bad): {'met' if complete and not bad else 'MISSED'}")
    print(f"checksums {'equal' if ok else 'DIFFER: ' + ', '.join(sorted(checks))}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
