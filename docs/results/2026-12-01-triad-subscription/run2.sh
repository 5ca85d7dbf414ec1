#!/bin/sh
# session 11 run 2: which resource callback costs the triad 3.5%; bench with only four enabled (eaa231c)
rm -rf /tmp/L; mkdir -p /tmp/store /tmp/L
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
L=/tmp/L
T0=$(date +%s)
ts() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
grep -n "SANITIZER_CBID_RESOURCE_[A-Z_]* *=" /usr/local/cuda/compute-sanitizer/include/sanitizer_callbacks.h | tee $L/resource-cbids.txt
grep -n "GRAPHEXEC\|Sanitizer_GraphExecData" -A3 /usr/local/cuda/compute-sanitizer/include/sanitizer_callbacks.h | head -60 > $L/graphexec.txt
ts subcost
BUILD=build timeout 150 sh tests/gpu/subcost.sh none resource ours res-1 res-2 res-3 res-4 res-5 res-6 res-7 res-8 res-9 res-10 res-11 res-12 res-13 res-14 res-15 res-16 2>&1 | tee $L/subcost.txt
ts bench-triad
BUILD=build timeout 100 python3 tests/bench/interposer.py --only triad --reps 5 --configs bare,none,default 2>&1 | tee $L/bench-triad.txt
ts bench-train
BUILD=build timeout 230 python3 tests/bench/interposer.py --only train --reps 5 --configs bare,none,default 2>&1 | tee $L/bench-train.txt
ts bench-graphs
BUILD=build timeout 120 python3 tests/bench/interposer.py --only train-graphs --reps 3 --configs bare,none,default 2>&1 | tee $L/bench-graphs.txt
ts done
