#!/bin/sh
# The report's validation workloads (make test-gpu; docs/validation.md),
# tests/gpu/progs/validate.cu built as $BUILD/validate: for each workload,
# trace its naive version under nucatrace run, report, then time the naive
# version beside its persistent versions split by SM speed (untraced,
# interleaved in one process) and compare the measured gains with what
# the report predicted.  $1: folder for outputs.
set -u
B=${BUILD:-build}
W=${1:-$(mktemp -d)}
NT=$B/nucatrace
V=$B/validate
mkdir -p "$W"
export NUCATRACE_STORE=${NUCATRACE_STORE:-$W/store.db}
for w in chase stream fma tail; do
	naive=even
	[ "$w" = tail ] && naive=grid
	rm -rf "$W/$w" && mkdir -p "$W/$w"
	"$NT" run --sample all --output-dir "$W/$w" -- "$V" "$w" --only "$naive" --reps 5 \
		>"$W/$w/traced.out" 2>"$W/$w/traced.err" || { cat "$W/$w/traced.err"; exit 1; }
	"$NT" report --json "$W/$w"/*.sqlite >"$W/$w/report.json" &&
		"$NT" report "$W/$w"/*.sqlite >"$W/$w/report.txt" &&
		python3 tests/gpu/validate.py shares "$W/$w" &&
		"$V" "$w" --reps 15 --shares map="$W/$w/shares-map.txt" \
			--shares report="$W/$w/shares-report.txt" >"$W/$w/timed.out" || exit 1
	grep '^time' "$W/$w/timed.out"
done
python3 tests/gpu/validate.py compare "$W"
