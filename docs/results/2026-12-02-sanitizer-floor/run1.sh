#!/bin/sh
# session 20 run 1: where the eager loop's dark-state cost comes from
# (docs/results/2026-12-02-sanitizer-floor.md; run 1 ran run2.py before its control
# and onewin-resub cases were added).  build: main; build-x: main with
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
# host cost per launch: 100,000 empty launches; triad: GPU time per launch
for r in 1 2; do
  echo "bare $(build/tests/gpu/bench launches 100000 | grep launches)"
  echo "subscribed $(CUDA_INJECTION64_PATH=$SUB SUBCOST=none build/tests/gpu/bench launches 100000 2>/dev/null | grep launches)"
  echo "default $(build/nucatrace $NT -- build/tests/gpu/bench launches 100000 | grep launches)"
  echo "onewin $(build/nucatrace $NT $ONE -- build/tests/gpu/bench launches 100000 | grep launches)"
  echo "onewin-unsub $(NUCATRACE_X_UNSUB=1 build-x/nucatrace $NT $ONE -- build/tests/gpu/bench launches 100000 2>&1 | grep launches)"
  echo "onewin-darkall $(NUCATRACE_X_DARKALL=1 build-x/nucatrace $NT $ONE -- build/tests/gpu/bench launches 100000 2>&1| grep launches)"
  echo "triad bare $(build/tests/gpu/triad 400 | grep -E '^triad')"
  echo "triad onewin10 $(build/nucatrace $NT --sample all,window=10,skip=1000 -- build/tests/gpu/triad 400 | grep -E '^triad')"
  echo "triad onewin10-unsub $(NUCATRACE_X_UNSUB=1 build-x/nucatrace $NT --sample all,window=10,skip=1000 -- build/tests/gpu/triad 400 2>&1 | grep -E '^triad')"
  rm -rf /tmp/L/o/*
done 2>&1 | tee /tmp/L/micro.txt
echo "t=$(( $(date +%s) - T0 ))"
timeout $((560 - ($(date +%s) - T0))) python3 docs/results/2026-12-02-sanitizer-floor/run2.py 2 > /tmp/L/pairs.txt 2> /tmp/L/pairs.err
cat /tmp/L/pairs.txt; grep -v steps_ms /tmp/L/pairs.err | tail -30; echo "t=$(( $(date +%s) - T0 ))"
