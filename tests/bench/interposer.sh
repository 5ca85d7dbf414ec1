#!/bin/sh
# make bench, interposer part: the same workloads bare, under blocks mode
# with the default sampling, and with every launch traced; medians of 3
# runs, reported as ratios to bare, side by side in one run.
set -u
B=${BUILD:-build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
nvidia-smi -L 2>/dev/null || true
run_cfg() {	# run_cfg CONFIG WORKLOAD...
	c=$1; shift
	case $c in
	bare) "$@" ;;
	default) "$B/nucatrace" run --quiet --no-calibrate --output-dir "$W" -- "$@" ;;
	all) "$B/nucatrace" run --quiet --no-calibrate --sample all --output-dir "$W" -- "$@" ;;
	kernels) "$B/nucatrace" run --quiet --no-calibrate --mode kernels --output-dir "$W" -- "$@" ;;
	esac
}
measure() {	# measure CONFIG WORKLOAD...: the median of 3 runs' values
	for i in 1 2 3; do
		run_cfg "$@" | awk '{ print $2 }'
	done | sort -g | sed -n 2p
}
printf '%-24s %10s %10s %10s %10s %8s %8s %8s\n' workload bare kernels default all \
	kern/bare def/bare all/bare
for w in "launches:$B/tests/gpu/bench launches 100000" "chase:$B/tests/gpu/bench chase 200" \
	"gemm:python3 tests/gpu/progs/torch_bench.py" "startup:sh tests/bench/startup.sh 200"; do
	name=${w%%:*} cmd=${w#*:}
	for cfg in bare kernels default all; do
		eval "v_$cfg=\$(measure $cfg $cmd)"
	done
	printf '%-24s %10s %10s %10s %10s %8s %8s %8s\n' "$name" "$v_bare" "$v_kernels" "$v_default" \
		"$v_all" "$(awk "BEGIN { printf \"%.3f\", $v_kernels / $v_bare }")" \
		"$(awk "BEGIN { printf \"%.3f\", $v_default / $v_bare }")" \
		"$(awk "BEGIN { printf \"%.3f\", $v_all / $v_bare }")"
	rm -f "$W"/*.sqlite
done
