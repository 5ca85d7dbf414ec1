#!/bin/sh
# make bench-report (CPU only), two cases:
#  1. nucatrace report over one synthetic trace of 10 million block
#     records (1000 launches x 10000 blocks, 132 SMs).  Goal (issue 32): at
#     most 1 s on the 2-core build machine, memory bounded.
#  2. the ranks of one job: RANKS synthetic rank traces (gen_trace --ranks)
#     of about RANK_BLOCKS block records each (steps of a gemm of 10000
#     blocks, an elementwise kernel of 5000 and a gemm, then an all-reduce:
#     25,016 records a step), reported with one thread and with the
#     default (one per CPU): the same report, the time of each, the
#     speedup and the peak memory.  Default 16 x 1M; the issue's 16 x 10M
#     is RANK_BLOCKS=10000000 (6.2 GB of traces, several minutes).
# Results: docs/results/2026-12-01-ranks-cpu.md.
set -u
B=${BUILD:-build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
L=${LAUNCHES:-1000} N=${BLOCKS:-10000}
R=${RANKS:-16} RB=${RANK_BLOCKS:-1000000}
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }

/usr/bin/env time -f "%e" -o "$W/gen.t" "$B/tests/gen_trace" "$W/t.sqlite" "$L" "$N" || exit 1
/usr/bin/env time -f "%e %M" -o "$W/rep.t" "$B/nucatrace" report --json "$W/t.sqlite" >"$W/r.json" || exit 1
read -r secs kb <"$W/rep.t"
printf 'synthetic trace: %d launches x %d blocks = %d records, %s MB, written in %s s\n' "$L" "$N" \
	$((L * N)) $(($(stat -c %s "$W/t.sqlite") / 1048576)) "$(cat "$W/gen.t")"
printf '%-40s %10s %8s  %s\n' measure value goal ratio
printf '%-40s %10s %8s  %s\n' "report wall time (s)" "$secs" 1 "$(ratio "$secs" 1)"
printf '%-40s %10s %8s  %s\n' "report peak memory (MiB)" "$((kb / 1024))" - -
# the synthetic blocks take 20 ns more per cycle of SM latency: the fit must say so
grep -o '"slope_ns_per_cycle": [0-9.e+-]*' "$W/r.json"
grep -o '"replay_error_max_pct": [0-9.e+-]*' "$W/r.json" | tail -1
rm -f "$W/t.sqlite"

steps=$(((RB + 25015) / 25016))
mkdir "$W/ranks"
/usr/bin/env time -f "%e" -o "$W/gen.t" "$B/tests/gen_trace" --ranks "$R" --quiet --steps "$steps" \
	--blocks 10000 "$W/ranks" || exit 1
printf '\n%d rank traces of one job: %d steps x 25,016 = %d records each, %s MB in all, written in %s s\n' \
	"$R" "$steps" $((steps * 25016)) $(($(du -sk "$W/ranks" | cut -f1) / 1024)) "$(cat "$W/gen.t")"
/usr/bin/env time -f "%e %M" -o "$W/one.t" "$B/nucatrace" report --json --threads 1 "$W"/ranks/*.sqlite \
	>"$W/one.json" || exit 1
/usr/bin/env time -f "%e %M" -o "$W/all.t" "$B/nucatrace" report --json "$W"/ranks/*.sqlite >"$W/all.json" || exit 1
read -r s1 kb1 <"$W/one.t"
read -r sn kbn <"$W/all.t"
cmp -s "$W/one.json" "$W/all.json" && same=yes || same=NO
printf '%-40s %10s %8s  %s\n' measure value goal ratio
printf '%-40s %10s %8s  %s\n' "report, 1 thread: wall time (s)" "$s1" - -
printf '%-40s %10s %8s  %s\n' "report, $(nproc) threads: wall time (s)" "$sn" - -
printf '%-40s %10s %8s  %s\n' "speedup" "$(ratio "$s1" "$sn")" "$(nproc)" "$(ratio "$(ratio "$s1" "$sn")" "$(nproc)")"
printf '%-40s %10s %8s  %s\n' "peak memory, 1 thread (MiB)" "$((kb1 / 1024))" - -
printf '%-40s %10s %8s  %s\n' "peak memory, $(nproc) threads (MiB)" "$((kbn / 1024))" - -
printf '%-40s %10s %8s  %s\n' "the same report, byte for byte" "$same" yes -
python3 - "$W/all.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
j = r["jobs"][0]
last = {}
for s in j["steps"]:
    if s["judged"]:
        last[s["last_rank"]] = last.get(s["last_rank"], 0) + 1
print(f"job view: {len(j['ranks'])} ranks, {j['steps_judged']} of {len(j['steps'])} steps judged, "
      f"lined up by {j['aligned_by']}; last rank {last} (the generator's slow rank is the last)")
PY
[ "$same" = yes ]
