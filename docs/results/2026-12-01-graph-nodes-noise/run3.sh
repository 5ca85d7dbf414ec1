#!/bin/sh
# session 10 run 3: where the default policy's cost on a 300-step training loop comes from
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
T="python3 tests/gpu/progs/torch_train.py --steps 300 --step-times"
one() {
	n=$1; shift
	mkdir -p /tmp/t/$n
	s=$(date +%s.%N)
	"$@" >$L/$n.out 2>$L/$n.err
	e=$(date +%s.%N)
	echo "$n wall $(awk "BEGIN{print $e-$s}") $(grep '^train\|^step [0-9.]* ms' $L/$n.out | tr '\n' ' ')"
	grep "sampling window\|blocks mode" $L/$n.err
}
for rep in 1 2; do
one bare$rep $T
one none$rep build/nucatrace run --no-calibrate --sample none --output-dir /tmp/t/none -- $T
one default$rep build/nucatrace run --no-calibrate --output-dir /tmp/t/default -- $T
one nowin$rep build/nucatrace run --no-calibrate --sample all,window=1000,skip=100000000 --output-dir /tmp/t/nowin -- $T
one onewin$rep build/nucatrace run --no-calibrate --sample all,window=1000,skip=1000 --output-dir /tmp/t/onewin -- $T
one kernels$rep build/nucatrace run --no-calibrate --mode kernels --output-dir /tmp/t/kernels -- $T
done
s=$(date +%s.%N)
build/nucatrace run --no-calibrate --sample all --output-dir /tmp/t/all -- python3 tests/gpu/progs/torch_train.py --steps 30 > $L/all.out 2>$L/all.err
e=$(date +%s.%N); echo "all30 wall $(awk "BEGIN{print $e-$s}") $(grep '^train\|^step [0-9.]* ms' $L/all.out | tr '\n' ' ')"; grep "blocks mode\|window" $L/all.err
s=$(date +%s.%N); python3 tests/gpu/progs/torch_train.py --steps 30 > $L/bare30.out; e=$(date +%s.%N)
echo "bare30 wall $(awk "BEGIN{print $e-$s}") $(grep '^train\|^step [0-9.]* ms' $L/bare30.out | tr '\n' ' ')"
