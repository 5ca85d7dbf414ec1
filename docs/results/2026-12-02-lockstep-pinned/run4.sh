#!/bin/sh
# session 21 run 4: the bench's new lockstep rings (a reference, a
# control, none), every program's main thread on CPU 3 once set up and
# its other threads on 4-7 (--pin 3:4-7), as many repetitions as fit.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt
cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout ${LIMIT:-220} python3 tests/bench/interposer.py --lockstep --only train-long --reps 9 \
	--configs bare,none --pin 3:4-7 --goal none=1.01 > /tmp/L/ring.txt 2> /tmp/L/ring.err
cat /tmp/L/ring.txt; grep "lockstep repetition" /tmp/L/ring.err; echo "t=$(( $(date +%s) - T0 ))"
