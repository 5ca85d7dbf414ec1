#!/bin/sh
# session 17 run 4 (d849cec): graph launches switch and go dark at
# cuGraphLaunch's entry, a retried pick does not count towards window=;
# the checks these touch; then the host cost per empty launch and the
# 30-step loop with every program pinned to four CPUs (taskset)
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 575 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; nvidia-smi topo -m; } > /tmp/L/gpu.txt 2>&1; cat /tmp/L/gpu.txt | head -3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
CHECK_LIMIT=150 ONLY="abi-matches-real-headers train-graphs-dark pytorch-cuda-graphs-default train-default train-dark every-retry device-reset-natives cuda-graphs default-sampling threads-streams" \
	BUILD=build timeout 330 sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt; grep -E "graph nodes traced|windows" /tmp/L/gpu/train-graphs-dark.log | tail -2
grep -hE "launch callbacks off|sampling window" /tmp/L/gpu/train-graphs-dark/traced.err /tmp/L/gpu/train-dark/traced.err
echo "t=$(( $(date +%s) - T0 ))"
PIN=2-5
L=$(left); [ $L -gt 80 ] && BUILD=build timeout 80 python3 tests/bench/interposer.py --only launches --reps 5 --pin $PIN \
	--configs bare,none,default,kernels > /tmp/L/bench-launches.txt 2> /tmp/L/bench-launches.err
cat /tmp/L/bench-launches.txt | grep -v "^GPU"; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train --reps 5 --pin $PIN \
	--configs bare,none,default --goal default=1.03 --goal none=1.01 > /tmp/L/bench-train.txt 2> /tmp/L/bench-train.err
cat /tmp/L/bench-train.txt | grep -v "^GPU"; tail -2 /tmp/L/bench-train.err; echo "t=$(( $(date +%s) - T0 ))"
