#!/bin/sh
# session 18 run 2: graph execs and module patches in either order
# (graph_late.cu modes), on the code of 92dcbad (no exec tracking yet)
RO=$OUT
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } > /tmp/L/gpu.txt 2>&1; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
G=build/tests/gpu/graph_late
v() {
	name=$1 pol=$2; shift 2
	mkdir -p /tmp/L/$name
	timeout 60 $G "$@" > /tmp/L/$name/plain.out 2>&1
	timeout 120 build/nucatrace run --no-calibrate --sample "$pol" --output-dir /tmp/L/$name -- $G "$@" > /tmp/L/$name/traced.out 2> /tmp/L/$name/traced.err
	rc=$?
	echo "== $name ($pol; $*) rc=$rc plain: $(grep checksum /tmp/L/$name/plain.out) traced: $(grep checksum /tmp/L/$name/traced.out)"
	grep -h "illegal\|sampling window\|traced .* of" /tmp/L/$name/traced.err /tmp/L/$name/traced.out
	for f in /tmp/L/$name/*.sqlite; do
		python3 - "$f" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(" traced nodes", db.execute("select count(*) from launches where traced=1 and graph is not null").fetchone()[0],
      "traced plain", db.execute("select count(*) from launches where traced=1 and graph is null").fetchone()[0],
      "drops", db.execute("select reason, count(*) from drops group by 1").fetchall())
PY
	done
}
v late-split-A 'match=bump(*,skip=60' late split
v late-B 'all,window=1000,skip=66' late
v early-C 'all,window=12' early
v early-D 'all,window=12,budget=100' early
v early-split-E 'match=bump(*,window=12,budget=100' early split
v early-F 'all,window=40,budget=100' early
