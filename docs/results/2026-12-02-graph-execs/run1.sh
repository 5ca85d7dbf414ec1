#!/bin/sh
# session 18 run 1 (prepared in session 17): the full interposer.sh, with
# graph-late-patch (an exec made before its module is patched at a plain
# launch), train-graphs-dark (windows close and go dark at replays' entry,
# no switch there), triad-default (first= window now closes 16 launches
# after the last pick)
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
grep -h "graph node launches traced\|illegal" /tmp/L/gpu/graph-late-patch.log
grep -hE "sampling window" /tmp/L/gpu/triad-default/traced.err /tmp/L/gpu/train-graphs-dark/traced.err
echo "t=$(( $(date +%s) - T0 ))"
