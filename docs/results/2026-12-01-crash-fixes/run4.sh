#!/bin/sh
# session 12 run 4: graph nodes not traced while their module is patched get no valid data: which explicit NULL fixes it (v1 function, v2 launch, v3 both)
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
    t = db.execute("select count(*), coalesce(sum(blocks),0) from launches where traced=1").fetchone()
    d = db.execute("select group_concat(reason || ' ' || n, '; ') from (select reason, count(*) n from drops group by reason)").fetchone()[0]
    print(f"  traced {t[0]} launches {t[1]} blocks; drops: {d}")
PY
}
one() {	# NAME POLICY PROG ARGS...
	n=$1 pol=$2; shift 2
	mkdir -p /tmp/gd/$n
	timeout 60 "$@" > /tmp/gd/$n/plain.out 2>&1
	timeout 90 build/nucatrace run --no-calibrate --sample "$pol" --output-dir /tmp/gd/$n -- "$@" > /tmp/gd/$n/traced.out 2>/tmp/gd/$n/traced.err
	rc=$?
	cmp -s /tmp/gd/$n/plain.out /tmp/gd/$n/traced.out && s=same || s=DIFFERENT
	echo "== $n ($pol: $*): rc $rc, output $s; $(grep -v '^ ' /tmp/gd/$n/traced.err | grep -v 'top kernels\|trace written\|sampling window' | tr '\n' ' ')"
	ls /tmp/gd/$n/*.sqlite >/dev/null 2>&1 && { q /tmp/gd/$n/*.sqlite; for f in /tmp/gd/$n/*.sqlite; do python3 tests/gpu/check_trace.py $f 1 2>&1 | tail -2; done; }
}
R=build/tests/gpu/graphs_device N=build/tests/gpu/graphs_nordc
{
for v in 0 1 2 3; do
	export NUCATRACE_LIBRARY=$PWD/.scratch/libnt-v$v.so
	ts "variant $v"
	one v$v-graphs-nomatch match=nomatch build/tests/gpu/graphs
	one v$v-graphs-all all build/tests/gpu/graphs
	one v$v-execs-nomatch match=nomatch $N execs 50
	one v$v-execs-all all $N execs 50
	one v$v-while-nomatch match=nomatch $N while 5
	one v$v-device-nomatch match=nomatch $R device 5
	one v$v-device-all all $R device 5
	one v$v-cdp-all all $R cdp 5
	one v$v-graphs-default all,window=100,skip=50 build/tests/gpu/graphs
done
for v in 0 2 3; do
	export NUCATRACE_LIBRARY=$PWD/.scratch/libnt-v$v.so
	ts "torch graphs default, variant $v"
	one v$v-torch-graphs-default all,window=1000,skip=1000,budget=1 python3 tests/gpu/progs/torch_train.py --graphs --steps 10
done
} 2>&1 | tee $L/parts.txt
ts done
