#!/bin/sh
# session 12 run 5: the fix build (NULL for untraced nodes, device-launch modules never patched, conditional bodies dropped): graphs checks; torch --graphs default: hang? (stackdump)
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
    t = dict((n.split("(")[0], c) for n, c in db.execute("select coalesce(k.demangled,k.mangled), count(*) from launches l join kernels k on k.kernel=l.kernel where traced=1 group by 1"))
    d = db.execute("select group_concat(reason || ': ' || n, '; ') from (select reason, count(*) n from drops group by reason)").fetchone()[0]
    print(f"  traced {t}; drops: {d}")
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
R=build/tests/gpu/graphs_device N=build/tests/gpu/graphs_nordc G=build/tests/gpu/graphs
{
one graphs-all all $G
one graphs-first first=8,every=1000 $G
one graphs-match 'match=*scale*' $G
one graphs-nomatch match=nomatch $G
one nordc-all all $N execs 50 while 5
one nordc-match 'match=*node_a*' $N execs 50 while 5
one nordc-nomatch match=nomatch $N execs 50 while 5
one dev-all all $R device 5 cdp 5 execs 5 while 5
one dev-nomatch match=nomatch $R device 5 cdp 5
} 2>&1 | tee $L/parts.txt
ts torch-none
one torch-graphs-none none python3 tests/gpu/progs/torch_train.py --graphs --steps 10 2>&1 | tee -a $L/parts.txt
ts torch-default-stackdump
mkdir -p /tmp/td
LD_PRELOAD=$PWD/build/tests/gpu/stackdump.so build/nucatrace run --no-calibrate --output-dir /tmp/td -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 --step-times > $L/td.out 2> $L/td.err &
for i in $(seq 1 45); do sleep 1; pgrep -f "torch_train.py --graphs --steps 10 --step-times" >/dev/null || break; done
P=$(pgrep -f "python3 tests/gpu/progs/torch_train.py --graphs --steps 10 --step-times" | tail -1)
ts "after wait: pid '$P'"
if [ -n "$P" ]; then
	for t in /proc/$P/task/*; do echo "${t##*/} $(cat $t/comm) wchan=$(cat $t/wchan) syscall=$(cut -d' ' -f1 $t/syscall)"; done > $L/td.tasks
	cat /proc/$P/maps > $L/td.maps 2>/dev/null
	kill -USR2 $P; sleep 3; kill -9 $P
fi
wait
tail -5 $L/td.out; grep -c . $L/td.err; head -c 3000 $L/td.err
ts done
