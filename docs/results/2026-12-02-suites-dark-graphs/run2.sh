#!/bin/sh
# session 17 run 2: tests/gpu/run.sh (calibrate) and tests/gpu/validate.sh
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
NUCATRACE=build/nucatrace timeout 300 sh tests/gpu/run.sh > /tmp/L/run.txt 2>&1; echo "run.sh rc $?"
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/run.txt
echo "t=$(( $(date +%s) - T0 ))"
BUILD=build timeout $(( 580 - ($(date +%s) - T0) )) sh tests/gpu/validate.sh /tmp/L/val > /tmp/L/validate.txt 2>&1; echo "validate rc $?"
tail -25 /tmp/L/validate.txt
echo "t=$(( $(date +%s) - T0 ))"
