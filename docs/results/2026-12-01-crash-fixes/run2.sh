#!/bin/sh
# session 12 run 2: graphs_device diagnosis (graphlog, parts one by one, drop reasons), gridid check build
rm -rf /tmp/L; mkdir -p /tmp/store /tmp/L
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
L=/tmp/L
T0=$(date +%s)
ts() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
G=build/tests/gpu/graphs_device
ts graphlog
CUDA_INJECTION64_PATH=$PWD/build/tests/gpu/graphlog.so timeout 60 $G execs 3 device 2 cdp 1 while 2 > $L/graphlog.txt 2>&1; echo "rc $?" >> $L/graphlog.txt
grep -c . $L/graphlog.txt; head -5 $L/graphlog.txt
q() {
	python3 - "$@" <<'PY'
import sqlite3, sys
for p in sys.argv[1:]:
    db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    print(p)
    for r in db.execute("select coalesce(k.demangled,k.mangled), l.traced, count(*), sum(l.blocks), sum(l.grid_x*l.grid_y*l.grid_z) from launches l join kernels k on k.kernel=l.kernel group by 1,2"):
        print("  launches", r)
    for r in db.execute("select reason, count(*) from drops group by reason"):
        print("  drop", r)
    for r in db.execute("select key, value from meta where key in ('launches','incomplete','complete','graphs','device_graph_execs')"):
        print("  meta", r)
PY
}
for part in "execs 300" "device 5" "cdp 5" "while 5"; do
	for pol in all match=node_a; do
		n=$(echo "$part $pol" | tr ' =,' '___')
		ts "$n"
		mkdir -p /tmp/gd/$n
		timeout 60 $G $part > /tmp/gd/$n/plain.out 2>&1
		timeout 90 build/nucatrace run --no-calibrate --sample $pol --output-dir /tmp/gd/$n -- $G $part > /tmp/gd/$n/traced.out 2>/tmp/gd/$n/traced.err
		echo "== $n rc $?" 
		cmp /tmp/gd/$n/plain.out /tmp/gd/$n/traced.out && echo same || { echo DIFFERENT; cat /tmp/gd/$n/plain.out /tmp/gd/$n/traced.out; }
		head -3 /tmp/gd/$n/traced.err
		q /tmp/gd/$n/*.sqlite
		for f in /tmp/gd/$n/*.sqlite; do python3 tests/gpu/check_trace.py $f 1 2>&1 | tail -3; done
	done
done 2>&1 | tee $L/parts.txt
cp -r /tmp/gd $L/gd; du -sh $L
ts interposer-graphs
BUILD=build CHECK_LIMIT=100 ONLY="abi* static-cudart cuda-graphs graphs-device pytorch-cuda-graphs threads-streams cooperative-cluster" timeout 300 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
ts done
