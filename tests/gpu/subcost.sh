#!/bin/sh
# What attaching to the Compute Sanitizer costs the triad with nothing
# patched, domain by domain (tests/gpu/subcost.c): 5 interleaved
# repetitions of `triad 200` bare and under each set, medians of the
# median launch time, ratios to bare.  $BUILD: the build folder.
#   subcost.sh [SET...]   the sets (subcost.c), default the domains
B=${BUILD:-build}
python3 - "$B" "$@" <<'PY'
import os, re, statistics, subprocess, sys
b = sys.argv[1]
sets = ["bare"] + (sys.argv[2:] or ["none", "resource", "launch", "driver-launch", "graphs",
                                    "resource,launch,driver-launch,graphs"])
runs = {s: [] for s in sets}
for _ in range(5):
    for s in sets:
        env = dict(os.environ)
        if s != "bare":
            env.update(CUDA_INJECTION64_PATH=os.path.abspath(f"{b}/tests/gpu/subcost.so"), SUBCOST=s)
        p = subprocess.run([f"{b}/tests/gpu/triad", "200"], env=env, capture_output=True, text=True)
        m = re.search(r"^triad ([0-9.]+) ms", p.stdout, re.M)
        if p.returncode or not m:
            sys.exit(f"{s}: exit {p.returncode}\n{p.stdout}{p.stderr}")
        runs[s].append(float(m.group(1)))
bare = statistics.median(runs["bare"])
print("triad, median launch (ms), 5 interleaved repetitions; ratio to bare")
for s in sets:
    med = statistics.median(runs[s])
    print(f"{s:40s} {med:.5f} {med / bare:.3f}  [{min(runs[s]):.5f}-{max(runs[s]):.5f}]")
PY
