#!/bin/sh
# 2026-12-04, session 31 (issue 33): the graph checks of c789e8e (node
# tables keyed by exec and context), which session 30 did not run on a GPU,
# and the default's cost on a decode loop long enough for its one window
# to be a small part.
#   B=build/dev sh docs/results/2026-12-04-graph-recheck/run.sh STEP...
# build/dev as in 2026-12-04-node-cost/run.sh (this commit's build).
# Steps:
#   longdecode progs/decode.cu, $N replays (default 400,000; 4 node launches
#              each) plain, at the floor (tests/gpu/subcost.so: the Compute
#              Sanitizer attached, nothing enabled) and under the default,
#              $R rounds (default 3) in turn; the replays' wall time
#   checks     tests/gpu/interposer.sh, the checks matching $ONLY
#              (default: every graph check), packed every 15 s
# Logs in $OUT/recheck.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/recheck.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="checks/*/*.out" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs NUCATRACE_PROGRESS=0 BUILD=$B
export NUCATRACE=$PWD/$B/nucatrace
N=${N:-400000}
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	longdecode) for r in $(seq ${R:-3}); do
			for v in plain floor default; do
				rm -rf $W/ld
				case $v in
				plain) timeout 100 $B/tests/gpu/decode $N >$W/ld.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$PWD/$B/tests/gpu/subcost.so timeout 100 \
						$B/tests/gpu/decode $N >$W/ld.out 2>&1 ;;
				default) timeout 100 $B/nucatrace run --no-calibrate --output-dir $W/ld -- \
						$B/tests/gpu/decode $N >$W/ld.out 2>$W/ld.err ;;
				esac
				echo "$r $v rc $? $(grep -E '^(checksum|loop)' $W/ld.out | tr '\n' ' ')" >>$W/longdecode.log
			done
			tail -n 12 $W/ld.err >>$W/longdecode.log
		done ;;
	checks) ( while :; do sleep 15; pack; done ) &
		packer=$!
		ONLY=${ONLY:-"*graph*"} CHECK_LIMIT=${CHECK_LIMIT:-300} timeout ${CHECKS_S:-450} \
			sh tests/gpu/interposer.sh $W/checks >$W/checks.log 2>&1
		kill $packer ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 40 $W/$s.log 2>/dev/null
	pack
done
exit 0
