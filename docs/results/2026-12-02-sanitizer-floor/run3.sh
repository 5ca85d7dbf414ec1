#!/bin/sh
# session 20 run 3: make bench's lockstep part, with the new 'sanitizer'
# configuration (the Compute Sanitizer attached by tests/gpu/subcost.c,
# nothing enabled, no nucatrace): bare (control), none, sanitizer, default
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; git log --oneline -1; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout 470 python3 tests/bench/interposer.py --lockstep --only train-long --reps 4 \
	--configs bare,none,sanitizer,default --goal none=1.01 --goal default=1.03 > /tmp/L/bench.txt 2> /tmp/L/bench.err
cat /tmp/L/bench.txt; grep -v steps_ms /tmp/L/bench.err | tail -30; echo "t=$(( $(date +%s) - T0 ))"
