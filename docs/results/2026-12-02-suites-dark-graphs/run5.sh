#!/bin/sh
# session 17 run 5 (the commit after d849cec): modules patched at a
# launch's entry only once its stream's queued work is done; the graph
# checks (train-graphs-dark twice) and the eager ones this touches
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt 2>&1; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
for r in 1 2; do
	CHECK_LIMIT=120 ONLY="train-graphs-dark" BUILD=build timeout 130 sh tests/gpu/interposer.sh /tmp/L/gd$r > /tmp/L/gd$r.txt 2>&1
	grep -E "^(ok|FAIL)" /tmp/L/gd$r.txt; grep -E "graph nodes traced|illegal|Error" /tmp/L/gd$r/train-graphs-dark.log | head -3
	grep -hE "launch callbacks off|sampling window|blocks mode" /tmp/L/gd$r/train-graphs-dark/traced.err
	echo "t=$(( $(date +%s) - T0 ))"
done
CHECK_LIMIT=120 ONLY="abi-matches-real-headers pytorch-cuda-graphs-default cuda-graphs graphs-device train-default every-retry threads-streams default-sampling" \
	BUILD=build timeout $(( 370 - ($(date +%s) - T0) )) sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt
echo "t=$(( $(date +%s) - T0 ))"
