#!/bin/sh
# session 22: one device call of lockstep rings.
#   sh run.sh none K     the test fixed in advance in session 21: 30 rings of
#                        train-long --steps 150, bare (control) and none,
#                        repetitions K..K+29
#   sh run.sh floor K    train-gpu-long, control, default and sanitizer, as many
#                        rings as fit in LIMIT seconds, repetitions from K
RO=$OUT
T0=$(date +%s)
MODE=$1 K=$2
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; } > /tmp/L/gpu.txt
cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
case $MODE in
none)
	BUILD=build timeout ${LIMIT:-570} python3 tests/bench/interposer.py --lockstep --only train-long \
		--steps 150 --reps 30 --first-rep $K --configs bare,none --pin 3:4-7 \
		> /tmp/L/ring$K.txt 2> /tmp/L/ring$K.err ;;
floor)
	BUILD=build timeout ${LIMIT:-400} python3 tests/bench/interposer.py --lockstep --only train-gpu-long \
		--reps 30 --first-rep $K --configs bare,default,sanitizer --pin 3:4-7 \
		> /tmp/L/floor$K.txt 2> /tmp/L/floor$K.err ;;
*)	echo "usage: run.sh none|floor K" >&2; exit 2 ;;
esac
echo "rc=$?"
cat /tmp/L/*.txt; grep "lockstep repetition" /tmp/L/*.err | tail -40; echo "t=$(( $(date +%s) - T0 ))"
