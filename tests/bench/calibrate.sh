#!/bin/sh
# make bench: calibrate's speed and repeatability goals on the GPU here,
# each run side by side in one process tree, medians of 5.
#   chain map of all SMs      <= 1 s wall, median run-to-run |delta| <= 0.1 cycle
#   SM x 256-line matrix      <= 10 s
set -u
NT=${NUCATRACE:?set NUCATRACE to the binary}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
nvidia-smi -L 2>/dev/null || true
for i in 1 2 3 4 5; do
	/usr/bin/env time -f "%e" -o "$W/quick$i.t" "$NT" calibrate --quick --no-store --json --quiet \
		--device 0 >"$W/quick$i.json" || exit 1
	"$NT" calibrate --no-store --json --quiet --no-first-touch --device 0 >"$W/full$i.json" || exit 1
done
python3 - "$W" <<'PY'
import json, sys, statistics as st
w = sys.argv[1]
med = lambda v: st.median(v)
q = [json.load(open(f"{w}/quick{i}.json"))["devices"][0] for i in range(1, 6)]
f = [json.load(open(f"{w}/full{i}.json"))["devices"][0] for i in range(1, 6)]
qt = [float(open(f"{w}/quick{i}.t").read()) for i in range(1, 6)]
rows = [
    ("chain map, kernel time (s)", med([d["seconds"]["chain"] for d in q]), 1.0),
    ("calibrate --quick, process wall (s)", med(qt), None),
    ("median run-to-run |delta| (cycles)", med([d["chain"]["noise_median"] for d in f]), 0.1),
    ("SM x 256-line matrix (s)", med([d["seconds"]["lines"] for d in f]), 10.0),
]
print(f"{q[0]['name']} {q[0]['uuid']}, {q[0]['sm_count']} SMs, SM clock {q[0]['sm_clock_mhz']:.0f} MHz")
print(f"{'measure (median of 5)':40s} {'value':>10s} {'goal':>8s}  ratio")
for name, v, goal in rows:
    print(f"{name:40s} {v:10.3f} {goal if goal else '-':>8}  " + (f"{v/goal:.2f}" if goal else "-"))
PY
