#!/bin/sh
# session 14 run 3: validate.sh with the report's residual factors; every
# interposer.sh check with capture mode relaxed around our calls (test
# 0255; pytorch-cuda-graphs-default 3 runs); then train-graphs
# bare/none/default interleaved with what time is left.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 330 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
NUCATRACE_STORE=/tmp/store.db BUILD=build timeout 100 sh tests/gpu/validate.sh /tmp/val > /tmp/L/validate.log 2>&1; echo "validate rc $?"
tail -8 /tmp/L/validate.log; echo "t=$(( $(date +%s) - T0 ))"
for w in chase tail; do cp /tmp/val/$w/report.json /tmp/L/$w-report.json; done
ONLY="pytorch-cuda-graphs-default pytorch-cuda-graphs cuda-graphs graphs-device train-default train-per-kernel device-reset-natives every-retry threads-streams triad-default default-sampling" \
	BUILD=build CHECK_LIMIT=90 timeout $(left) sh tests/gpu/interposer.sh /tmp/ip > /tmp/L/interposer-checks.log 2>&1
cat /tmp/L/interposer-checks.log | grep -E "^(ok|FAIL|interposer)"
echo "t=$(( $(date +%s) - T0 ))"
export NUCATRACE_STORE=/tmp/store.db
L=$(left); [ $L -gt 50 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-graphs --reps 2 \
	--configs bare,none,default > /tmp/L/bench-graphs.txt 2> /tmp/L/bench-graphs.err
cat /tmp/L/bench-graphs.txt; tail -12 /tmp/L/bench-graphs.err; echo "t=$(( $(date +%s) - T0 ))"
