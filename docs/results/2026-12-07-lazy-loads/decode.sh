# session 40: the decode loop under the shadow route with the build that frees node tables (e1383af)
B=build/slim/new
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:$PWD/build/slim/devlibs
W=/tmp/A; rm -rf $W; mkdir -p $W
sh tests/gpu/gpuinfo.sh | tee $W/gpu.txt
one() {
	n=$1 pol=$2; shift 2
	t0=$(date +%s)
	"$@" >$W/$n.plain 2>&1
	NUCATRACE_GRAPH_ROUTE=shadow timeout 100 $B/nucatrace run --no-calibrate --sample $pol --output-dir $W/$n -- "$@" >$W/$n.traced 2>$W/$n.err
	rc=$?
	grep '^checksum' $W/$n.plain >$W/$n.p; grep '^checksum' $W/$n.traced >$W/$n.t
	cmp -s $W/$n.p $W/$n.t && same=same || same=DIFFERENT
	echo "== $n rc=$rc output $same ($(wc -l <$W/$n.p) checksum lines) $(($(date +%s) - t0)) s"
	tail -n 4 $W/$n.err
	python3 tests/gpu/check_trace.py $W/$n/*.sqlite 1 2>&1 | tail -n 3
	python3 - $W/$n/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned", "settles")})
print("traced", db.execute("select count(*) from launches where traced = 1").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
}
one shadow-decode all,window=1000,skip=1000,blocks=1000000,budget=1 build/slim/new/tests/gpu/decode 3000
one shadow-update all,window=400,skip=400,budget=40 build/slim/new/tests/gpu/decode 15000 update
one shadow-many all,window=100,skip=100,budget=50 build/slim/new/tests/gpu/decode 30000
tar czf $OUT/decode.tgz --exclude='*.sqlite' -C /tmp A
