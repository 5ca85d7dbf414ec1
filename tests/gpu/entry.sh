#!/bin/sh
# Entry-only block tracing (--blocks entry, issue 31) on the GPU here,
# beside full tracing (--blocks full) and untraced runs.  Steps, each with
# its log under DIR (default: a temp dir):
#   sites      tests/bench/sites.py: launch times of PAPER.md's six kernels
#              bare, at the Compute Sanitizer's entry and both-site floors,
#              and under nucatrace entry and full (make sitecost first)
#   sitecost   tests/gpu/sitecost.sh: where the exit site's cost lies
#   programs   our test programs under --blocks entry ($MODE: full, mixed;
#              $SAMPLE: the policy, default all): output equal to an
#              untraced run's, every block recorded (check_trace.py)
#   graphs     PyTorch's captured training step, every launch traced both ways
#              ($GRAPH_MODES: the ways, default "full entry"; mixed takes
#              the policy window=2000)
#   validate-sh  tests/gpu/validate.sh (the report's validation workloads)
#   sitesval   the six kernels of sites traced both ways, compared as below
#   validate   validate.cu's chase and fma traced both ways: per-SM block
#              times inferred from starts against measured ones, and the
#              reports side by side (entry_check.py)
#   torch      calibrate, then the PyTorch training loop untraced and under
#              the default policy both ways ($TORCH_MODES, default "full
#              entry"; the first two compared): wall time, the reports, what
#              is not measurable, the shuffle check; DIR/torch-MODE keeps
#              each trace
#   tests/gpu/entry.sh DIR STEP...      ($BUILD: the build folder)
set -u
B=${BUILD:-build}
W=${1:?a folder for the outputs}
shift
NT=$B/nucatrace
mkdir -p "$W"
export NUCATRACE_STORE=${NUCATRACE_STORE:-$W/store.db} NUCATRACE_PROGRESS=0
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

step() {	# step NAME LIMIT COMMAND...: log to $W/NAME.log
	s_name=$1 s_lim=$2; shift 2
	s_t0=$(date +%s)
	timeout "$s_lim" "$@" >"$W/$s_name.log" 2>&1
	echo "== $s_name: rc $?, $(( $(date +%s) - s_t0 )) s"
	tail -n "${TAIL:-40}" "$W/$s_name.log"
}

# report DIR: the report of the traces in DIR as text, JSON and CSV
report() {
	"$NT" report "$1"/*.sqlite >"$1/report.txt" &&
		"$NT" report --json "$1"/*.sqlite >"$1/report.json" &&
		"$NT" report --csv "$1/csv" "$1"/*.sqlite >/dev/null
}

programs() {
	bad=0
	for p in blocks drvapi coop graphs streams; do
		d=$W/programs-${MODE:-entry}/$p
		mkdir -p "$d"
		"$B/tests/gpu/$p" >"$d/plain.out" 2>&1 || { echo "$p: untraced run failed"; bad=1; continue; }
		"$NT" run --no-calibrate --blocks "${MODE:-entry}" --sample "${SAMPLE:-all}" --output-dir "$d" -- "$B/tests/gpu/$p" \
			>"$d/traced.out" 2>"$d/traced.err" || { echo "$p: traced run failed"; cat "$d/traced.err"; bad=1; }
		if sort "$d/plain.out" | cmp -s - "$(sort "$d/traced.out" >"$d/t.sorted"; echo "$d/t.sorted")"; then
			echo "$p: output equal"
		else
			echo "$p: output DIFFERS"; bad=1
		fi
		for f in "$d"/*.sqlite; do
			python3 tests/gpu/check_trace.py "$f" 1 || bad=1
		done
		sqlite3 "$d"/*.sqlite "select '$p drops', reason, sum(count) from drops group by reason" 2>/dev/null
	done
	return $bad
}

# PyTorch's captured training step (CUDA graph replays), every launch
# traced both ways: the losses of an untraced run, every block recorded
graphs() {
	python3 tests/gpu/progs/torch_train.py --graphs --steps 20 >"$W/graphs-bare.out" 2>&1 || return 1
	for m in ${GRAPH_MODES:-full entry}; do
		d=$W/graphs-$m
		pol=all
		[ "$m" = mixed ] && pol=window=2000
		rm -rf "$d" && mkdir -p "$d"
		"$NT" run --no-calibrate --blocks "$m" --sample "$pol" --output-dir "$d" -- \
			python3 tests/gpu/progs/torch_train.py --graphs --steps 20 >"$d/traced.out" 2>"$d/traced.err" ||
			{ cat "$d/traced.err"; return 1; }
		head -n 4 "$d/traced.err"
		grep ' loss ' "$W/graphs-bare.out" | cmp -s - "$(grep ' loss ' "$d/traced.out" >"$d/losses"; echo "$d/losses")" &&
			echo "$m: losses equal to the untraced run's" || echo "$m: losses DIFFER"
		python3 tests/gpu/check_trace.py "$d"/*.sqlite 1 --smem-may-be-unknown || return 1
	done
}

# PAPER.md's six kernels (tests/gpu/progs/sitecost.cu: multi-wave empty and
# FMA blocks, the triad) traced both ways, compared as validate's are
sitesval() {
	for m in full entry; do
		d=$W/sites-$m
		rm -rf "$d" && mkdir -p "$d"
		"$NT" run --no-calibrate --blocks "$m" --sample all --output-dir "$d" -- "$B/tests/gpu/sitecost" \
			>"$d/traced.out" 2>"$d/traced.err" || return 1
		grep '^sitecost' "$d/traced.out" | sed "s/^/$m: /"
		report "$d" || return 1
	done
	python3 tests/gpu/entry_check.py "$W/sites-full" "$W/sites-entry"
}

validate() {
	for w in chase fma; do
		"$B/validate" "$w" --only even --reps 5 >"$W/val-$w-bare.out" || return 1
		grep '^time' "$W/val-$w-bare.out"
		for m in full entry; do
			d=$W/val-$w-$m
			rm -rf "$d" && mkdir -p "$d"
			"$NT" run --no-calibrate --blocks "$m" --sample all --output-dir "$d" -- \
				"$B/validate" "$w" --only even --reps 5 >"$d/traced.out" 2>"$d/traced.err" || return 1
			grep '^time' "$d/traced.out" | sed "s/^/$m: /"
			report "$d" || return 1
		done
		python3 tests/gpu/entry_check.py "$W/val-$w-full" "$W/val-$w-entry"
	done
}

torch() {
	"$NT" calibrate --quiet || return 1
	python3 tests/gpu/progs/torch_train.py --steps 40 >"$W/torch-bare.out" 2>&1 || return 1
	grep -E '^(train|step)' "$W/torch-bare.out"
	for m in ${TORCH_MODES:-full entry}; do
		d=$W/torch-$m
		rm -rf "$d" && mkdir -p "$d"
		"$NT" run --blocks "$m" --output-dir "$d" -- python3 tests/gpu/progs/torch_train.py --steps 40 \
			>"$d/traced.out" 2>"$d/traced.err" || { cat "$d/traced.err"; return 1; }
		grep -E '^(train|step)' "$d/traced.out" | sed "s/^/$m: /"
		grep ' loss ' "$W/torch-bare.out" | cmp -s - "$(grep ' loss ' "$d/traced.out" >"$d/losses"; echo "$d/losses")" &&
			echo "$m: losses equal to the untraced run's" || echo "$m: losses DIFFER"
		tail -n 25 "$d/traced.err"
		report "$d" || return 1
		sed -n '1,40p' "$d/report.txt"
		"$NT" report --shuffle-check 20 --json "$d"/*.sqlite >"$d/shuffle.json" &&
			python3 -c "import json,sys; print('$m shuffle check', json.load(open(sys.argv[1]))['shuffle_check'])" \
				"$d/shuffle.json"
	done
	set -- ${TORCH_MODES:-full entry}
	python3 tests/gpu/entry_check.py "$W/torch-$1" "$W/torch-$2"
}

for s in "$@"; do
	case $s in
	sites) step sites 300 env BUILD="$B" python3 tests/bench/sites.py --reps 3 ;;
	sitecost) TAIL=80 step sitecost 240 sh tests/gpu/sitecost.sh "$B" "$W/sitecost" ;;
	programs | graphs | sitesval | validate | torch)	# a function, under timeout: this script again
		lim=180
		[ "$s" = torch ] && lim=400
		TAIL=120 step "$s" "$lim" sh "$0" "$W" ".$s" ;;
	.programs) programs; exit $? ;;
	.sitesval) sitesval; exit $? ;;
	.graphs) graphs; exit $? ;;
	validate-sh) TAIL=30 step validate-sh 300 env BUILD="$B" sh tests/gpu/validate.sh "$W/validate-sh" ;;
	.validate) validate; exit $? ;;
	.torch) torch; exit $? ;;
	*) echo "unknown step $s" >&2; exit 2 ;;
	esac
done
