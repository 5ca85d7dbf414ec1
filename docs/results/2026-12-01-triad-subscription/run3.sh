#!/bin/sh
# session 11 run 3: HEAD (resource callbacks, no context-created callback, exec destroy, device graphs): interposer.sh + graphs_device, triad bench
rm -rf /tmp/L; mkdir -p /tmp/store /tmp/L
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
L=/tmp/L
T0=$(date +%s)
ts() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ts interposer
BUILD=build timeout 330 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -14 $f; done > $L/checklogs.txt 2>&1
cp -r /tmp/ip/graphsdev $L/ 2>/dev/null; rm -f $L/graphsdev/*.sqlite
cat /tmp/ip/graphs-device.log 2>/dev/null | tail -20
ts bench-triad
BUILD=build timeout 100 python3 tests/bench/interposer.py --only triad --reps 5 --configs bare,none,default 2>&1 | tee $L/bench-triad.txt
ts bench-graphs
BUILD=build timeout 150 python3 tests/bench/interposer.py --only train-graphs --reps 3 --configs bare,default 2>&1 | tee $L/bench-graphs.txt
ts done
