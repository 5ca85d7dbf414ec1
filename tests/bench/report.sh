#!/bin/sh
# make bench-report (CPU only): nucatrace report over a synthetic trace of
# 10 million block records (1000 launches x 10000 blocks, 132 SMs).
# Goal: at most 10 s on the 2-core build machine, memory bounded.
set -u
B=${BUILD:-build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
L=${LAUNCHES:-1000} N=${BLOCKS:-10000}
/usr/bin/env time -f "%e" -o "$W/gen.t" "$B/tests/gen_trace" "$W/t.sqlite" "$L" "$N" || exit 1
/usr/bin/env time -f "%e %M" -o "$W/rep.t" "$B/nucatrace" report --json "$W/t.sqlite" >"$W/r.json" || exit 1
read -r secs kb <"$W/rep.t"
printf 'synthetic trace: %d launches x %d blocks = %d records, %s MB, written in %s s\n' "$L" "$N" \
	$((L * N)) $(($(stat -c %s "$W/t.sqlite") / 1048576)) "$(cat "$W/gen.t")"
printf '%-40s %10s %8s  %s\n' measure value goal ratio
printf '%-40s %10s %8s  %s\n' "report wall time (s)" "$secs" 10 "$(awk "BEGIN { printf \"%.2f\", $secs / 10 }")"
printf '%-40s %10s %8s  %s\n' "report peak memory (MiB)" "$((kb / 1024))" - -
# the synthetic blocks take 20 ns more per cycle of SM latency: the fit must say so
grep -o '"slope_ns_per_cycle": [0-9.e+-]*' "$W/r.json"
grep -o '"replay_error_max_pct": [0-9.e+-]*' "$W/r.json" | tail -1
