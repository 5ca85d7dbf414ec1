#!/bin/sh
# session 16 run 4: none no longer loads the Compute Sanitizer: its host cost per
# launch against bare and --mode off; outputs unchanged under none
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
BUILD=build timeout 90 python3 tests/bench/interposer.py --only launches --reps 11 \
	--configs bare,off,none,default > /tmp/L/bench-launches.txt 2> /tmp/L/bench-launches.err
cat /tmp/L/bench-launches.txt; echo "t=$(( $(date +%s) - T0 ))"
mkdir -p /tmp/tr; cd /tmp/tr
timeout 60 python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 30 2>&1 | grep -E "^step [0-9]+ loss" > /tmp/L/bare.txt
timeout 60 $OLDPWD/build/nucatrace run --no-calibrate --sample none -- python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 30 > /tmp/L/none.out 2> /tmp/L/none.err; echo "none rc $?"
grep -E "^step [0-9]+ loss" /tmp/L/none.out > /tmp/L/none.txt; cmp /tmp/L/bare.txt /tmp/L/none.txt && echo "none: losses identical ($(wc -l < /tmp/L/none.txt) lines)"; cat /tmp/L/none.err | head -5; ls /tmp/tr | wc -l
cd $OLDPWD
CHECK_LIMIT=60 ONLY="static-cudart default-sampling triad-default" BUILD=build timeout 100 sh tests/gpu/interposer.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt; echo "t=$(( $(date +%s) - T0 ))"
