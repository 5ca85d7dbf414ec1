#!/bin/sh
# session 10 run 2: per-launch data on graph nodes (variants gl1: hStream, gl2: hApiStream); bench incl. train-long and all
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
hangtest() {
	n=$1 s=$2 pol=$3; shift 3
	mkdir -p /tmp/h/$n
	LD_PRELOAD=$PWD/build/tests/gpu/stackdump.so build/nucatrace run --no-calibrate --sample $pol \
		--output-dir /tmp/h/$n -- "$@" >$L/$n.out 2>$L/$n.err &
	p=$!
	k=0
	while kill -0 $p 2>/dev/null && [ $k -lt $((s*2)) ]; do sleep 0.5; k=$((k+1)); done
	if kill -0 $p 2>/dev/null; then
		c=$(pgrep -P $p | head -1)
		echo "$n HUNG (child $c)"
		kill -USR2 $c; sleep 2; kill -9 $c; wait $p; return 1
	else wait $p; r=$?; echo "$n rc=$r after $k half-seconds"; grep -v "^  \|^==" $L/$n.err | grep -v "top kernels\|%  " | tail -5
		python3 tests/gpu/check_trace.py /tmp/h/$n/*.sqlite 1 | tail -2
		python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute('select reason, count(*) from drops group by reason').fetchall()); print('graph nodes traced', d.execute('select count(*), count(distinct graph*1000000+graph_launch) from launches where traced=1 and graph is not null').fetchone())" /tmp/h/$n/*.sqlite 2>&1 | tail -4
		return $r; fi
}
build/tests/gpu/graphs > $L/graphs-plain.out
python3 tests/gpu/progs/torch_train.py --graphs --steps 10 > $L/tg-plain.out 2>&1
for v in 1 2; do
	export NUCATRACE_LIBRARY=$PWD/build/gl$v/libnucatrace.so
	hangtest graphs-gl$v 25 all build/tests/gpu/graphs && cmp $L/graphs-plain.out $L/graphs-gl$v.out && echo "graphs-gl$v output identical"
	hangtest tg-gl$v 60 all python3 tests/gpu/progs/torch_train.py --graphs --steps 10
	grep "^step" $L/tg-plain.out | tail -2; grep "^step" $L/tg-gl$v.out | tail -2
done
unset NUCATRACE_LIBRARY
BUILD=build timeout 140 python3 tests/bench/interposer.py --only train --reps 5 --configs bare,none,default,all 2>&1 | tee $L/bench-a.txt | tail -8
BUILD=build timeout 60 python3 tests/bench/interposer.py --only triad --reps 5 --configs bare,none,default 2>&1 | tee $L/bench-c.txt | tail -6
BUILD=build timeout 280 python3 tests/bench/interposer.py --only train-long --reps 5 --configs bare,none,default 2>&1 | tee $L/bench-b.txt | tail -8
