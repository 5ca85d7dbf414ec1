#!/bin/sh
# session 23: one device call of lockstep rings, the floor under the default.
#   sh run.sh WORKLOAD K   rings of WORKLOAD (train-gpu-long or train-long at
#                          --steps 150): a reference, a control (bare), the
#                          default and sanitizer (no nucatrace: attached to the
#                          Compute Sanitizer, nothing enabled); repetitions
#                          from K, as many as finish in LIMIT seconds (560)
RO=$OUT
T0=$(date +%s)
W=$1 K=$2
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; git log -1 --format=%h 2>/dev/null; } > /tmp/L/gpu.txt
cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
case $W in
train-long) STEPS="--steps 150" ;;
train-gpu-long) STEPS= ;;
*) echo "usage: run.sh train-long|train-gpu-long K" >&2; exit 2 ;;
esac
BUILD=build timeout ${LIMIT:-560} python3 tests/bench/interposer.py --lockstep --only $W $STEPS \
	--reps 40 --first-rep $K --configs bare,default,sanitizer --pin 3:4-7 \
	> /tmp/L/$W-$K.txt 2> /tmp/L/$W-$K.err
echo "rc=$?"
cat /tmp/L/*.txt; grep "lockstep repetition" /tmp/L/*.err | tail -20; echo "t=$(( $(date +%s) - T0 ))"
