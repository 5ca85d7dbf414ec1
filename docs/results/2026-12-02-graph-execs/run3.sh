#!/bin/sh
# session 18 run 3: the full interposer.sh with graph execs tracked
# (san_execs.c: a module a live exec runs is never patched):
# graph-late-patch, graph-early-patch, the PyTorch graph checks
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt 2>&1; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
CHECK_LIMIT=150 BUILD=build timeout 570 sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt
grep -h "launches traced\|patches\|illegal" /tmp/L/gpu/graph-late-patch.log /tmp/L/gpu/graph-early-patch.log
grep -h "CUDA graph exec" /tmp/L/gpu/*/traced.err
grep -hE "sampling window" /tmp/L/gpu/triad-default/traced.err /tmp/L/gpu/train-graphs-dark/traced.err
echo "t=$(( $(date +%s) - T0 ))"
