#!/bin/sh
# session 12 run 1: main (f4c7c29 design, no exec callbacks): interposer.sh full with per-check limit, triad bench, validate
rm -rf /tmp/L; mkdir -p /tmp/store /tmp/L
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
L=/tmp/L
T0=$(date +%s)
ts() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; command -v gdb cuda-gdb; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ts interposer
BUILD=build CHECK_LIMIT=100 timeout 400 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -30 $f; done > $L/checklogs.txt 2>&1
cp -r /tmp/ip/graphsdev $L/ 2>/dev/null; rm -f $L/graphsdev/*.sqlite
ts bench-triad
BUILD=build timeout 90 python3 tests/bench/interposer.py --only triad --reps 5 --configs bare,none,default 2>&1 | tee $L/bench-triad.txt
ts validate
BUILD=build timeout 100 sh tests/gpu/validate.sh /tmp/val 2>&1 | tail -40 | tee $L/validate.txt
ts done
