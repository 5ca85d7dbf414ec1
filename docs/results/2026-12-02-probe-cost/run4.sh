#!/bin/sh
# session 15 run 4: why the eager loop's median step is ~1.2x under the
# default policy (runs 2-3): train-long (300 steps) under bare, none (no
# callbacks), nowin (callbacks on, no window ever: skip beyond the run)
# and default, interleaved; one nowin and one default run with the
# summary's own-time line (time in our callbacks).
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 430 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
NT=$PWD/build/nucatrace
$NT calibrate --device 0 --quick --quiet > /dev/null 2>&1; echo "calibrate rc $?"
mkdir -p /tmp/tr
for p in window=1000,skip=1000000000 default; do
	s=""; [ $p = default ] || s="--sample $p"
	( cd /tmp/tr && $NT run $s --output-dir /tmp/tr -- python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 300 \
		> /tmp/L/train-$p.txt 2>&1; echo "$p rc $?"; rm -f /tmp/tr/*.sqlite )
	grep -E "^(train|step [0-9.]+ ms|nucatrace: (blocks|no sampling|1 sampling|own))" /tmp/L/train-$p.txt
done
echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-long --reps 3 \
	--configs bare,none,default --policy nowin=window=1000,skip=1000000000 > /tmp/L/bench-train-long.txt 2> /tmp/L/bench-train-long.err
cat /tmp/L/bench-train-long.txt; tail -12 /tmp/L/bench-train-long.err; echo "t=$(( $(date +%s) - T0 ))"
