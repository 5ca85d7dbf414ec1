#!/bin/sh
# session 19 run 2: the 300-step eager loop in lockstep pairs
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo "main 0fbacc0"; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout 570 python3 tests/bench/interposer.py --lockstep --only train-long --reps 5 \
	--configs bare,none,default --goal none=1.01 --goal default=1.03 > /tmp/L/bench.txt 2> /tmp/L/bench.err
cat /tmp/L/bench.txt; tail -20 /tmp/L/bench.err; echo "t=$(( $(date +%s) - T0 ))"
