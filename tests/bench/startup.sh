#!/bin/sh
# A workload for tests/bench/interposer.py: wall seconds of N starts of a
# program that never touches CUDA (what the interposer costs a process
# it is preloaded into, such as the shell and tools around a job).
n=${1:-200}
t0=$(date +%s.%N)
i=0
while [ "$i" -lt "$n" ]; do
	/bin/true
	i=$((i + 1))
done
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "startup %.6f s\n", b - a }'
