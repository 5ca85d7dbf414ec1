#!/bin/sh
# session 14 run 2: graphs-device check (fixed expectation), validate.sh,
# training loop bare/all (cost of --sample all), train-graphs
# bare/none/default/all (graph wait cost), pinned vs unpinned bare spread.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 565 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store.db NUCATRACE_PROGRESS=0
build/nucatrace calibrate --quick --quiet
ONLY=graphs-device BUILD=build CHECK_LIMIT=60 sh tests/gpu/interposer.sh /tmp/ip > /tmp/L/graphs-device.log 2>&1
tail -3 /tmp/L/graphs-device.log; echo "t=$(( $(date +%s) - T0 ))"
BUILD=build timeout 200 sh tests/gpu/validate.sh /tmp/val > /tmp/L/validate.log 2>&1; echo "validate rc $?"
tail -12 /tmp/L/validate.log; echo "t=$(( $(date +%s) - T0 ))"
cp /tmp/val/*/report.txt /tmp/L/ 2>/dev/null
B=build
L=$(left); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train --reps 3 --configs bare,all \
	> /tmp/L/bench-all.txt 2> /tmp/L/bench-all.err
tail -8 /tmp/L/bench-all.txt; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-graphs --reps 3 \
	--configs bare,none,default,all > /tmp/L/bench-graphs.txt 2> /tmp/L/bench-graphs.err
tail -8 /tmp/L/bench-graphs.txt; tail -3 /tmp/L/bench-graphs.err; echo "t=$(( $(date +%s) - T0 ))"
for i in 1 2 3 4 5 6; do
	[ $(left) -gt 25 ] || break
	for p in pinned free; do
		if [ $p = pinned ]; then set -- taskset -c 2-5; else set --; fi
		s=$(date +%s%N)
		"$@" python3 tests/gpu/progs/torch_train.py --steps 30 > /tmp/o.txt 2>&1
		e=$(date +%s%N)
		echo "$p $i program_ms $(( (e - s) / 1000000 )) $(grep -E '^(train|step) ' /tmp/o.txt | tr '\n' ' ')" >> /tmp/L/pin.txt
	done
done
cat /tmp/L/pin.txt
