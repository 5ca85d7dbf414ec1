#!/bin/sh
# session 20 run 4: the floor on a GPU-bound loop (train-gpu: batches 8x
# larger, the same launches): bare (control), sanitizer, default in lockstep
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout 140 python3 tests/bench/interposer.py --lockstep --only train-gpu --reps 4 \
	--configs bare,sanitizer,default > /tmp/L/bench.txt 2> /tmp/L/bench.err
cat /tmp/L/bench.txt; grep -v steps_ms /tmp/L/bench.err | tail -20; echo "t=$(( $(date +%s) - T0 ))"
