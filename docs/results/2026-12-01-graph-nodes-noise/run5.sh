#!/bin/sh
# session 10 run 5: which graph node launches get wrong warp counts; with a stream sync before table writes
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
q() {
python3 - "$1" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
print(d.execute("select count(*) from launches where traced=1").fetchone(), d.execute("select reason,count(*) from drops group by reason").fetchall())
bad = d.execute("""select l.launch, k.demangled, l.grid_x, l.block_x, l.graph, l.graph_node, l.graph_launch,
  (select group_concat(w || 'x' || c) from (select warps w, count(*) c from blocks b where b.launch = l.launch group by warps))
  from launches l join kernels k using (kernel) where l.traced = 1 and exists (select 1 from blocks b where b.launch = l.launch and b.warps != (l.block_x*l.block_y*l.block_z + 31)/32)""").fetchall()
print(len(bad), "bad")
for r in bad[:12]: print(r)
rows = d.execute("select graph_node, count(*) from launches l where traced=1 and graph is not null and exists (select 1 from blocks b where b.launch = l.launch and b.warps != (l.block_x*l.block_y*l.block_z + 31)/32) group by graph_node").fetchall()
print("bad by node", rows)
print("nodes", d.execute("select graph, graph_node, k.demangled, grid_x, block_x, count(*) from launches join kernels k using (kernel) where graph is not null group by graph, graph_node, grid_x").fetchall())
PY
}
for v in plain sync; do
	[ $v = sync ] && export NUCATRACE_LIBRARY=$PWD/build/ns/libnucatrace.so
	mkdir -p /tmp/g/$v
	timeout 40 build/nucatrace run --no-calibrate --sample all --output-dir /tmp/g/$v -- build/tests/gpu/graphs > $L/$v.out 2>$L/$v.err; echo "$v rc=$?"
	q /tmp/g/$v/*.sqlite 2>&1 | tee $L/$v.q
done
