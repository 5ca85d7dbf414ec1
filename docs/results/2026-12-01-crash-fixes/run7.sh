#!/bin/sh
# session 12 run 7: exec handle reuse fix: graphs checks, graphlog (handles reused?), torch graphs default
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
ts graphlog
CUDA_INJECTION64_PATH=$PWD/build/tests/gpu/graphlog.so timeout 60 build/tests/gpu/graphs_nordc execs 40 2>&1 | grep "launch-begin" | awk '{print $3}' | sort | uniq -c | sort -rn | head -5
ts interposer-graphs
BUILD=build CHECK_LIMIT=120 ONLY="cuda-graphs graphs-device pytorch-cuda-graphs default-sampling train-default" timeout 300 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -40 $f; done > $L/checklogs.txt 2>&1
for f in /tmp/ip/graphsnordc-all/*.sqlite; do python3 tests/gpu/check_trace.py $f 1 2>&1 | head -20; done
cp /tmp/ip/graphsnordc-all/*.sqlite $L/ 2>/dev/null
ts torch-graphs-default
mkdir -p /tmp/tg
timeout 100 build/nucatrace run --no-calibrate --output-dir /tmp/tg -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 > $L/tg.out 2> $L/tg.err; echo "rc $?"
grep -v "^ " $L/tg.err | head -3
ts done
