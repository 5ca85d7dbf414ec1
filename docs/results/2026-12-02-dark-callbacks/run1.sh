#!/bin/sh
# session 16 run 1: the launch callbacks off between windows (san_dark.c)
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
grep -n -B2 -A14 "sanitizerEnableCallback\|sanitizerEnableDomain" /usr/local/cuda/compute-sanitizer/include/sanitizer_callbacks.h | grep -i -B3 -A3 "thread\|serial" > /tmp/L/hdr.txt 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
NT=$PWD/build/nucatrace
$NT calibrate --device 0 --quick --quiet > /dev/null 2>&1; echo "calibrate rc $?"
mkdir -p /tmp/tr
for c in default count-all; do
	o=""; [ $c = default ] || o="--count-all"
	( cd /tmp/tr && timeout 90 $NT run $o --output-dir /tmp/tr -- python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 300 \
		> /tmp/L/train-$c.txt 2>&1; echo "$c rc $?"; rm -f /tmp/tr/*.sqlite )
	grep -E "^(train|step [0-9.]+ ms|nucatrace: (blocks|launch callbacks|no sampling|[0-9]+ sampling|own))" /tmp/L/train-$c.txt
done
echo "t=$(( $(date +%s) - T0 ))"
CHECK_LIMIT=150 ONLY="train-dark train-default pytorch-cuda-graphs-default threads-streams triad-default abi-matches-real-headers" \
	BUILD=build timeout $(left) sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt; grep -A3 "launches" /tmp/L/gpu/train-dark.log 2>/dev/null | tail -5
echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only launches --reps 5 \
	--configs bare,none,default,countall > /tmp/L/bench-launches.txt 2> /tmp/L/bench-launches.err
cat /tmp/L/bench-launches.txt; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 120 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-long --reps 3 \
	--configs bare,none,default,countall --goal default=1.03 > /tmp/L/bench-train-long.txt 2> /tmp/L/bench-train-long.err
cat /tmp/L/bench-train-long.txt; tail -5 /tmp/L/bench-train-long.err; echo "t=$(( $(date +%s) - T0 ))"
