#!/bin/sh
# session 18 run 4: the graph checks again after the graph nodes' reason
# fix (graphs-device wants the device-launch reason for its nodes), then
# make bench's train-long and train-graphs under bare, none and default
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 560 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; git log --oneline -1; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
CHECK_LIMIT=150 ONLY="abi-matches-real-headers cuda-graphs graph-late-patch graph-early-patch graphs-device" \
	BUILD=build timeout 200 sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt
echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 100 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-long,train-graphs --reps 5 \
	--configs bare,none,default --goal none=1.01 --goal default=1.03 > /tmp/L/bench.txt 2> /tmp/L/bench.err
cat /tmp/L/bench.txt; tail -3 /tmp/L/bench.err; echo "t=$(( $(date +%s) - T0 ))"
