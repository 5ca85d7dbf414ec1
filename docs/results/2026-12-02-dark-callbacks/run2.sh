#!/bin/sh
# session 16 run 2: the default policy with the launch callbacks off between windows,
# more repetitions; the blocks= cap on the large-batch loop
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
NT=$PWD/build/nucatrace
$NT calibrate --device 0 --quick --quiet > /dev/null 2>&1; echo "calibrate rc $?"
mkdir -p /tmp/tr
for p in all,window=1000,skip=1000,budget=1 all,window=1000,skip=1000,budget=1,blocks=1000000; do
	( cd /tmp/tr && timeout 90 $NT run --sample $p --output-dir /tmp/tr -- python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 30 --scale 8 \
		> /tmp/L/train8-$p.txt 2>&1; echo "$p rc $?"; ls -la /tmp/tr/*.sqlite | awk '{print $5}'; rm -f /tmp/tr/*.sqlite )
	grep -E "^(train|step [0-9.]+ ms|clock_|nucatrace: (blocks|launch callbacks|no sampling|[0-9]+ sampling|own))" /tmp/L/train8-$p.txt
done
echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 120 ] && BUILD=build timeout $((L - 200)) python3 tests/bench/interposer.py --only train-long --reps 6 \
	--configs bare,default --goal default=1.03 > /tmp/L/bench-train-long.txt 2> /tmp/L/bench-train-long.err
cat /tmp/L/bench-train-long.txt; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 100 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train --reps 5 \
	--configs bare,none,default --goal default=1.03 --goal none=1.01 > /tmp/L/bench-train.txt 2> /tmp/L/bench-train.err
cat /tmp/L/bench-train.txt; echo "t=$(( $(date +%s) - T0 ))"
