#!/bin/sh
# session 15 run 3: the interposer's own-time line (module loads, records
# written, exit) on the training loop at --scale 1 and 8 under the default
# policy; train-long (300 steps) bare/default: the first window amortised;
# a few interposer.sh checks on the changed module callback.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 520 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
NT=$PWD/build/nucatrace
$NT calibrate --device 0 --no-lines --no-first-touch --quiet > /tmp/L/calibrate.txt 2>&1; echo "calibrate rc $?"
grep -A6 "probe cost" /tmp/L/calibrate.txt
mkdir -p /tmp/tr
for s in 1 8 1 8; do
	( cd /tmp/tr && S=$(date +%s.%N) && $NT run --output-dir /tmp/tr -- \
		python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 30 --scale $s > /tmp/L/train-s$s.txt 2>&1; \
		echo "scale $s default rc $? $(awk "BEGIN{print $(date +%s.%N) - $S}") s"; rm -f /tmp/tr/*.sqlite )
	grep -E "^(train|clock_|nucatrace: (blocks|1 sampling|own))" /tmp/L/train-s$s.txt
done
echo "t=$(( $(date +%s) - T0 ))"
L=$(( $(left) - 150 )); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-long --reps 3 \
	--configs bare,default --goal default=1.03 > /tmp/L/bench-train-long.txt 2> /tmp/L/bench-train-long.err
cat /tmp/L/bench-train-long.txt; tail -6 /tmp/L/bench-train-long.err; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 60 ] && ONLY="pytorch-cuda-graphs-default drvapi train-default triad-default" BUILD=build CHECK_LIMIT=90 \
	timeout $L sh tests/gpu/interposer.sh /tmp/ip > /tmp/L/interposer-checks.log 2>&1
grep -E "^(ok|FAIL|interposer)" /tmp/L/interposer-checks.log; echo "t=$(( $(date +%s) - T0 ))"
