#!/bin/sh
# 2026-12-06, session 37 (issue 33): with the shadow route the default,
# tests/gpu/interposer.sh's pytorch-cuda-graphs-default and
# train-graphs-dark failed with "an illegal memory access" (call 2).
# Which route, which policy?  PyTorch's captured step
# (tests/gpu/progs/torch_train.py --graphs --steps 10) under
# nucatrace run, build $B, $R rounds (2) of $V (in this order):
#   shadow / update   NUCATRACE_GRAPH_ROUTE, policy
#                     all,window=1000,skip=1000,budget=1 (the check's)
#   shadow-nodark / update-nodark  the same with no budget (callbacks
#                     never off)
#   shadow-blocking   shadow with CUDA_LAUNCH_BLOCKING=1 (where it fails)
# Each run: rc, whether it failed, the summary's last lines, the trace's meta;
# where block copies failed (from call 5 on), the launches around the first;
# from session 38's switch-settle call 3 on, the meta's settles and
# switch_overlaps (None before).
#   B=build/dev sh docs/results/2026-12-06-shadow-default/run.sh
RO=${OUT:-/tmp/out}
W=/tmp/D
rm -rf $W && mkdir -p $W
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:$PWD/$B/devlibs
for r in $(seq ${R:-2}); do
	for v in ${V:-shadow update shadow-nodark update-nodark}; do
		route=${v%%-*} pol=all,window=1000,skip=1000,budget=1 blk=
		case $v in *-nodark) pol=all,window=1000,skip=1000 ;; *-blocking) blk=1 ;; esac
		rm -rf $W/t && mkdir -p $W/t
		t0=$(date +%s)
		CUDA_LAUNCH_BLOCKING=$blk NUCATRACE_GRAPH_ROUTE=$route timeout 150 $B/nucatrace run --no-calibrate --sample $pol \
			--output-dir $W/t -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 >$W/t/out 2>$W/t/err
		rc=$?
		{
			echo "== $r $v rc=$rc $(($(date +%s) - t0)) s $(grep -c 'illegal' $W/t/err) illegal; last: $(grep -E "^step [0-9]+ loss" $W/t/out | tail -n 1)"
			grep -E -A3 'Traceback|error' $W/t/err | head -n 12
			grep -E 'sampling window|callbacks off|graph exec|dropped, by|^ +[0-9]+  ' $W/t/err
			python3 - $W/t/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "graph_routed", "graph_execs_shadowed",
                             "graph_execs_twinned", "dark_spans", "settles", "switch_overlaps")},
      "graph nodes traced", db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0])
# where copies began to fail: the first such drop, and what ran just before it
first = db.execute("select min(launch) from drops where reason like '%could not be copied%'").fetchone()[0]
if first is not None:
    name = lambda k: (db.execute("select coalesce(demangled, mangled) from kernels where kernel = ?", (k,)).fetchone() or ["?"])[0][:90]
    for l, k, r in db.execute("select launch, kernel, reason from drops where launch between ? and ? order by launch",
                              (first - 40, first + 3)):
        print("  drop", l, r[:40], name(k))
    for row in db.execute("select launch, kernel, grid_x, grid_y, grid_z, block_x, stream, graph, entry_only from launches "
                          "where launch between ? and ? order by launch", (first - 12, first + 3)):
        print("  launch", *row[:1], *row[2:], name(row[1]))
PY
		} >>$W/diag.log 2>&1
	done
done
cat $W/diag.log
tar czf $RO/diag.tgz --exclude='*.sqlite' -C /tmp D
