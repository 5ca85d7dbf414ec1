#!/bin/sh
# session 14 run 1: every interposer.sh check (event pool, context reset, switch wait:
# sampling retry and graph fixes: none yet on a GPU), then the training loop
# bare/none/default in interleaved reps with whatever time is left.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
export LD_LIBRARY_PATH=$PWD/build/devlibs
OUT=/tmp/L BUILD=build CHECK_LIMIT=120 sh tests/gpu/device-session.sh test-gpu
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
LEFT=$(( 570 - ($(date +%s) - T0) ))
echo "bench time left: $LEFT s"
[ $LEFT -gt 60 ] && BUILD=build timeout $LEFT python3 tests/bench/interposer.py --only train --reps 7 --configs bare,none,default \
	--goal none=1.01 --goal default=1.03 > /tmp/L/bench-train.txt 2> /tmp/L/bench-train.err
tail -30 /tmp/L/bench-train.txt
tail -5 /tmp/L/bench-train.err
