#!/bin/sh
# session 17 run 1: the full tests/gpu/interposer.sh (not run since session 14)
# after session 16's callbacks-off change and its review fixes
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
CHECK_LIMIT=120 BUILD=build timeout 570 sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
echo "interposer rc $?"
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt
for c in train-dark train-default pytorch-cuda-graphs-default; do echo "== $c"; grep -E "launch callbacks|windows|dark" /tmp/L/gpu/$c.log 2>/dev/null | head -6; done
echo "t=$(( $(date +%s) - T0 ))"
