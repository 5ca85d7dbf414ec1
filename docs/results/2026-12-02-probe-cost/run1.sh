#!/bin/sh
# session 15 run 1: the bench's host cost per launch (launches: bare, none,
# default, kernels), then the eager loop at --scale 8 (train-gpu) bare/none/
# default interleaved with the 1% and 3% goals, then train-graphs.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 540 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
BUILD=build timeout 90 python3 tests/bench/interposer.py --only launches --reps 5 \
	--configs bare,none,default,kernels > /tmp/L/bench-launches.txt 2> /tmp/L/bench-launches.err
cat /tmp/L/bench-launches.txt; echo "t=$(( $(date +%s) - T0 ))"
L=$(( $(left) - 100 )); BUILD=build timeout $L python3 tests/bench/interposer.py --only train-gpu --reps 6 \
	--configs bare,none,default --goal none=1.01 --goal default=1.03 > /tmp/L/bench-train-gpu.txt 2> /tmp/L/bench-train-gpu.err
cat /tmp/L/bench-train-gpu.txt; tail -20 /tmp/L/bench-train-gpu.err; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 40 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-graphs --reps 3 \
	--configs bare,none,default --goal none=1.01 --goal default=1.03 > /tmp/L/bench-graphs.txt 2> /tmp/L/bench-graphs.err
cat /tmp/L/bench-graphs.txt; tail -8 /tmp/L/bench-graphs.err; echo "t=$(( $(date +%s) - T0 ))"
