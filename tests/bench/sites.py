"""What block tracing costs a launch, per patch site, beside its floor
(make bench; issue 31's goals).  tests/gpu/progs/sitecost.cu times PAPER.md's
six kernels (the minimum of 5 event-timed launches after a warm-up) in each
configuration, the configurations interleaved and their order rotated each
repetition, medians over the repetitions:

  bare        the program alone
  enter-floor the Compute Sanitizer with the block-entry site patched and
              callbacks that return at once (tests/gpu/sitecost.so): the
              least any entry-only tracer costs
  both-floor  the same with both sites: the least any tracer that
              measures block ends at the exit costs
  entry       nucatrace run --sample all --blocks entry
  full        nucatrace run --sample all --blocks full

    python3 tests/bench/sites.py [--reps N] [--goal CONFIG:KERNEL=RATIO]...

prints per kernel each configuration's median minimum launch time, its
ratio to bare, and entry over enter-floor; a goal (default: entry's triad
at most 2x bare and its 1,024-thread empty kernel at most 2.5x) is met when
the median ratio is at most its value, and every goal is reported.  Every
run's triad checksum must equal bare's.  $BUILD: the build folder (make
sitecost builds the library and callbacks, on the GPU machine)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

CONFIGS = ["bare", "enter-floor", "both-floor", "entry", "full"]
GOALS = ["entry:triad=2.0", "entry:empty1024=2.5"]


def command(b, config, out):
    prog = [f"{b}/tests/gpu/sitecost"]
    env = dict(os.environ)
    if config.endswith("-floor"):
        env.update(CUDA_INJECTION64_PATH=os.path.abspath(f"{b}/tests/gpu/sitecost.so"),
                   SITECOST_SITES=config.split("-")[0], SITECOST_CB="empty",
                   SITECOST_PATCH=os.path.abspath(f"{b}/tests/gpu/sitecost_patch.fatbin"))
        return prog, env
    if config in ("entry", "full"):
        return [f"{b}/nucatrace", "run", "--quiet", "--no-calibrate", "--sample", "all", "--blocks", config,
                "--output-dir", out, "--"] + prog, env
    return prog, env


def run(b, config, out):
    argv, env = command(b, config, out)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode:
        sys.exit(f"{config}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    times = {m.group(1): float(m.group(2))
             for m in re.finditer(r"^sitecost (\S+) ([0-9.]+) ([0-9.]+)", p.stdout, re.M)}
    check = re.search(r"^checksum (\S+)", p.stdout, re.M)
    return times, check.group(1) if check else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--goal", action="append", default=None, help="CONFIG:KERNEL=RATIO")
    a = ap.parse_args()
    b = os.environ.get("BUILD", "build")
    configs = a.configs.split(",")
    if not os.path.exists(f"{b}/tests/gpu/sitecost.so"):
        print(f"{b}/tests/gpu/sitecost.so missing (make sitecost): no floors measured")
        configs = [c for c in configs if not c.endswith("-floor")]
    if "bare" not in configs:
        sys.exit("the configurations must include bare")
    runs = {c: [] for c in configs}
    sums = set()
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.reps):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for c in order:
                out = os.path.join(tmp, f"{c}-{rep}")
                os.makedirs(out)
                times, check = run(b, c, out)
                runs[c].append(times)
                sums.add(check)
                for f in os.listdir(out):
                    os.remove(os.path.join(out, f))
    if len(sums) != 1:
        sys.exit(f"the triad's checksums differ: {sorted(map(str, sums))}")
    kernels = list(runs["bare"][0])
    med = {c: {k: statistics.median(r[k] for r in runs[c]) for k in kernels} for c in configs}
    print(f"launch time, us: median over {a.reps} interleaved repetitions of each run's minimum of 5; "
          "x: ratio to bare")
    print(f"{'kernel':10s}" + "".join(f" {c:>20s}" for c in configs) +
          ("  entry/enter-floor" if {"entry", "enter-floor"} <= set(configs) else ""))
    for k in kernels:
        row = f"{k:10s}"
        for c in configs:
            row += f" {med[c][k]:10.1f} {med[c][k] / med['bare'][k]:7.2f}x "
        if {"entry", "enter-floor"} <= set(configs):
            row += f" {med['entry'][k] / med['enter-floor'][k]:8.2f}"
        print(row)
    failed = 0
    for g in a.goal or GOALS:
        m = re.fullmatch(r"([a-z-]+):(\w+)=([0-9.]+)", g)
        if not m or m.group(1) not in configs or m.group(2) not in kernels:
            sys.exit(f"--goal {g}: not CONFIG:KERNEL=RATIO of those run")
        c, k, want = m.group(1), m.group(2), float(m.group(3))
        ratio = med[c][k] / med["bare"][k]
        every = [r[k] / statistics.median(x[k] for x in runs["bare"]) for r in runs[c]]
        met = ratio <= want
        failed += not met
        print(f"goal {c} {k} <= {want}x bare: {ratio:.2f}x (repetitions {min(every):.2f}-{max(every):.2f}): "
              f"{'met' if met else 'missed'}")
    print(f"checksums equal in all {a.reps * len(configs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
