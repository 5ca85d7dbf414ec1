#!/bin/sh
# session 10 run 1: HEAD e239268 on the GPU: hangtests, interposer.sh (all checks), validate.sh
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
trap 'cp -r /tmp/v $L/validate 2>/dev/null; rm -f $L/validate/*/*.sqlite; tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
bad=0
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
		echo "$n HUNG (child $c)"; bad=1
		kill -USR2 $c; sleep 2; kill -9 $c; wait $p; return 1
	else wait $p; r=$?; echo "$n rc=$r after $k half-seconds"; grep -v "^  \|^==" $L/$n.err | grep -v "top kernels\|%  " | tail -4
		python3 tests/gpu/check_trace.py /tmp/h/$n/*.sqlite 1 | tail -2
		python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute('select reason, count(*) from drops group by reason').fetchall()); print(d.execute(\"select key, value from meta where key in ('patches','unpatches','windows','launches','patch_s','unpatch_s','launches_in_windows')\").fetchall())" /tmp/h/$n/*.sqlite 2>&1 | tail -4
		[ $r = 0 ] || bad=1
		return $r; fi
}
hangtest graphs 20 all build/tests/gpu/graphs
hangtest graphs-win 20 first=8,every=50 build/tests/gpu/graphs
hangtest streams 20 all build/tests/gpu/streams
hangtest streams-win 20 first=4,every=7 build/tests/gpu/streams
hangtest triad-win 30 every=5,window=20,skip=10,budget=50 build/tests/gpu/triad 60
hangtest train-default 60 all,window=1000,skip=1000,budget=1 python3 tests/gpu/progs/torch_train.py --steps 8
hangtest train-win 60 every=3,window=300,skip=500,budget=50 python3 tests/gpu/progs/torch_train.py --steps 8
echo "hangtests bad=$bad"
BUILD=build timeout 330 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -14 $f; done > $L/checklogs.txt 2>&1
BUILD=build timeout 100 sh tests/gpu/validate.sh /tmp/v 2>&1 | tee $L/validate.txt
