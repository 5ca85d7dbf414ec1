#!/bin/sh
# 2026-12-03, waiting for record space without stalling (issue 32): one
# device call with the build carried (build/: nucatrace, libnucatrace.so,
# tests/gpu programs, validate, the host's libsqlite3, libelf and libzstd
# in build/devlibs; build/old: nucatrace and libnucatrace.so of 644dbdb,
# the build that stalled).
#   sh docs/results/2026-12-03-record-wait/run.sh STEP...
# Steps:
#   stacks    the triad of 400 launches (105M block records) under
#             --sample all with build/old and tests/gpu/stackdump.so: at
#             25 s every thread's stack (SIGUSR2), then killed
#   triad     the same with this build, stacks at 60 s if still running
#   records   tests/bench/records.py: the triad of 400 launches bare and
#             under --sample all with 0 and 7 packing helpers, once
#   train     tests/bench/interposer.py --only train: the PyTorch training
#             loop bare, under the default and under --sample all, twice
#   sweep     tests/bench/stream_sweep.py: the default policy on a
#             STREAM-style size sweep against plain and the floor, once
# Logs in $OUT/wait.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/wait.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="store.db*" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs NUCATRACE_PROGRESS=0 BUILD=build
export NUCATRACE=$PWD/build/nucatrace
# $1 build dir, $2 log, $3 seconds before the stacks are taken
stacks() {
	LD_PRELOAD=$PWD/build/tests/gpu/stackdump.so setsid $1/nucatrace run --no-calibrate --sample all \
		--output-dir $W/$2 -- build/tests/gpu/triad 400 >$W/$2.log 2>&1 &
	pid=$!
	t=0
	while [ $t -lt $3 ] && kill -0 $pid 2>/dev/null; do sleep 1; t=$((t + 1)); done
	if kill -0 $pid 2>/dev/null; then
		echo "== still running at $t s: stacks" >>$W/$2.log
		pkill -USR2 -f "build/tests/gpu/triad 400"
		sleep 3
		kill -9 -- -$pid 2>/dev/null
		pkill -9 -f "build/tests/gpu/triad 400"
	else
		echo "== finished in $t s" >>$W/$2.log
	fi
	wait $pid 2>/dev/null
	ls -l $W/$2 >>$W/$2.log 2>&1
}
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	stacks) stacks build/old stacks 25 ;;
	triad) stacks build triad 60 ;;
	records) timeout 200 python3 tests/bench/records.py --configs bare,all,all7 --reps 1 --limit 60 \
			>$W/records.log 2>&1 ;;
	train) timeout 200 python3 tests/bench/interposer.py --only train --configs bare,default,all --reps 2 \
			>$W/train.log 2>&1 ;;
	sweep) timeout 200 python3 tests/bench/stream_sweep.py --reps 1 >$W/sweep.log 2>&1 ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 30 $W/$s.log 2>/dev/null
	pack
done
exit 0
