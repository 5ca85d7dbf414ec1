#!/bin/sh
# session 16 run 3: what being attached costs a launch: bare, --mode off
# (library only), none (sanitizer subscribed, no callback), default (callbacks
# off after the window), on 100,000 empty launches and the 30-step loop
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 440 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout 120 python3 tests/bench/interposer.py --only launches --reps 9 \
	--configs bare,off,none,default > /tmp/L/bench-launches.txt 2> /tmp/L/bench-launches.err
cat /tmp/L/bench-launches.txt; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 100 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train --reps 6 \
	--configs bare,off,none > /tmp/L/bench-train.txt 2> /tmp/L/bench-train.err
cat /tmp/L/bench-train.txt; echo "t=$(( $(date +%s) - T0 ))"
