#!/bin/sh
# session 19 run 3: where the default's 9% of the eager loop's steps
# goes (run 2): lockstep pairs against the default, one window and no
# more (budget left out), and the callbacks kept on (countall); each
# traced run's trace meta and every step's time on stderr
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo "main 612d225 + bench meta"; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout 560 python3 tests/bench/interposer.py --lockstep --only train-long --reps 3 \
	--configs bare,default,countall --policy onewin=all,window=1000,skip=1000 --goal default=1.03 > /tmp/L/bench.txt 2> /tmp/L/bench.err
cat /tmp/L/bench.txt; grep -v steps_ms /tmp/L/bench.err | tail -30; echo "t=$(( $(date +%s) - T0 ))"
