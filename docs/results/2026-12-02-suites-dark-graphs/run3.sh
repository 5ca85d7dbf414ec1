#!/bin/sh
# session 17 run 3: graph launches switch and go dark at cuGraphLaunch's
# entry (commit 9ef9bf4): the ABI numbers, the graph checks, and the
# captured step's replays under the default policy against bare
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 570 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; git log --oneline -1; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
CHECK_LIMIT=150 ONLY="abi-matches-real-headers train-graphs-dark pytorch-cuda-graphs-default cuda-graphs graphs-device pytorch-cuda-graphs" \
	BUILD=build timeout 330 sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt; grep -E "graph nodes traced|windows" /tmp/L/gpu/train-graphs-dark.log | tail -3
grep -E "launch callbacks off|windows" /tmp/L/gpu/train-graphs-dark/traced.err | head -4
echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 100 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-graphs --reps 5 \
	--configs bare,default > /tmp/L/bench-train-graphs.txt 2> /tmp/L/bench-train-graphs.err
cat /tmp/L/bench-train-graphs.txt; tail -3 /tmp/L/bench-train-graphs.err; echo "t=$(( $(date +%s) - T0 ))"
