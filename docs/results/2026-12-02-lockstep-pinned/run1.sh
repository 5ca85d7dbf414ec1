#!/bin/sh
# session 21 run 1 (PINS="free 2-5 free 2-5") and runs 2-3: does pinning
# both programs of a lockstep pair to the same CPUs shrink the pairs'
# spread?  The control (bare against bare) and none, 2 repetitions per
# entry of PINS (free: unpinned; else taskset -c), interleaved so that all
# see the same GPU and host hour.  Run 2 pins to one CPU.  A build of
# aa31981 (lockstep pairs).
RO=$OUT
T0=$(date +%s)
PINS=${PINS:-"3 free 3 free 3"}
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; git log --oneline -1;
  nproc; lscpu | grep -E "Model name|Thread|Core|Socket|NUMA node"; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
r=1
for pin in $PINS; do
	[ "$pin" = free ] && p= || p=$pin
	tag=r$r-$pin
	BUILD=build timeout 500 python3 tests/bench/interposer.py --lockstep --only train-long --reps 2 \
		--configs bare,none ${p:+--pin $p} > /tmp/L/$tag.txt 2> /tmp/L/$tag.err
	echo "== $tag t=$(( $(date +%s) - T0 ))"; grep "lockstep repetition" /tmp/L/$tag.err
	r=$((r + 1))
done
echo "t=$(( $(date +%s) - T0 ))"
