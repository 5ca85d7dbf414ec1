#!/bin/sh
# session 12 run 3: is it -rdc? graphs_device (rdc+cudadevrt) vs graphs_nordc, patched with no data (match=nomatch) and all
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
q() {
	python3 - "$@" <<'PY'
import sqlite3, sys
for p in sys.argv[1:]:
    db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    for r in db.execute("select coalesce(k.demangled,k.mangled), l.traced, count(*), sum(l.blocks), sum(l.grid_x*l.grid_y*l.grid_z) from launches l join kernels k on k.kernel=l.kernel group by 1,2"):
        print("  launches", r)
    for r in db.execute("select reason, count(*) from drops group by reason"):
        print("  drop", r)
PY
}
one() {	# NAME POLICY PROG ARGS...
	n=$1 pol=$2; shift 2
	mkdir -p /tmp/gd/$n
	timeout 60 "$@" > /tmp/gd/$n/plain.out 2>&1
	timeout 60 build/nucatrace run --no-calibrate --sample "$pol" --output-dir /tmp/gd/$n -- "$@" > /tmp/gd/$n/traced.out 2>/tmp/gd/$n/traced.err
	rc=$?
	cmp -s /tmp/gd/$n/plain.out /tmp/gd/$n/traced.out && s=same || s=DIFFERENT
	echo "== $n ($pol: $*): rc $rc, output $s; $(grep -v '^ ' /tmp/gd/$n/traced.err | grep -v 'top kernels\|trace written' | tr '\n' ' ')"
	ls /tmp/gd/$n/*.sqlite >/dev/null 2>&1 && { q /tmp/gd/$n/*.sqlite; for f in /tmp/gd/$n/*.sqlite; do python3 tests/gpu/check_trace.py $f 1 2>&1 | tail -4; done; }
}
R=build/tests/gpu/graphs_device N=build/tests/gpu/graphs_nordc
{
for pol in match=nomatch all; do
	p=$(echo $pol | tr '=' '_')
	one rdc-execs-$p $pol $R execs 50
	one nordc-execs-$p $pol $N execs 50
	one rdc-while-$p $pol $R while 5
	one nordc-while-$p $pol $N while 5
	one rdc-device-$p $pol $R device 5
	one rdc-cdp-$p $pol $R cdp 5
	one graphs-$p $pol build/tests/gpu/graphs
done
ts graphlog-nordc
CUDA_INJECTION64_PATH=$PWD/build/tests/gpu/graphlog.so timeout 60 $N execs 2 while 2 2>&1 | tail -30
} 2>&1 | tee $L/parts.txt
ts done
