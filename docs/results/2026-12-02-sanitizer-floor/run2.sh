#!/bin/sh
# session 20 run 2: where the eager loop's dark-state cost comes from
# (docs/results/2026-12-02-sanitizer-floor.md).  build: main; build-x: main with
# docs/results/2026-12-02-sanitizer-floor/knobs.patch applied.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L/o
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; git log --oneline -1; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
SUB=$PWD/build/tests/gpu/subcost.so
NT="run --quiet --no-calibrate --output-dir /tmp/L/o"
ONE="--sample all,window=1000,skip=1000"
echo "triad bare: $(build/tests/gpu/triad 50 | tr '\n' ' ')"
echo "triad resub: $(NUCATRACE_X_RESUB=1 build-x/nucatrace $NT --sample all,window=10,skip=1000 -- build/tests/gpu/triad 50 2>&1 | tr '\n' ' ')"
echo "launches resub: $(NUCATRACE_X_RESUB=1 build-x/nucatrace $NT --sample all,window=10,skip=1000 -- build/tests/gpu/bench launches 100000 2>&1 | tr '\n' ' ')"
echo "launches bare: $(build/tests/gpu/bench launches 100000 2>&1 | tr '\n' ' ')"
timeout $((560 - ($(date +%s) - T0))) python3 docs/results/2026-12-02-sanitizer-floor/run2.py 4 control,subscribed,onewin-unsub,onewin-resub > /tmp/L/pairs.txt 2> /tmp/L/pairs.err
cat /tmp/L/pairs.txt; grep -v steps_ms /tmp/L/pairs.err | tail -30; echo "t=$(( $(date +%s) - T0 ))"
