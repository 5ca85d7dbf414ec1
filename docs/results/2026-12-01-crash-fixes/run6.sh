#!/bin/sh
# session 12 run 6: switches at the driver API entry (not in launch callbacks), NULL data for untraced nodes, device-launch modules never patched: full interposer.sh, torch graphs default, triad bench, train bench
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
ts torch-graphs-default
mkdir -p /tmp/tg
timeout 100 build/nucatrace run --no-calibrate --output-dir /tmp/tg -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 > $L/tg.out 2> $L/tg.err; echo "rc $?"
tail -3 $L/tg.out; grep -v "^ " $L/tg.err | head -5
python3 - /tmp/tg/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print("traced", db.execute("select count(*), sum(blocks) from launches where traced=1").fetchone(), "graph node launches traced", db.execute("select count(*) from launches where traced=1 and graph is not null").fetchone())
for r in db.execute("select reason, count(*) from drops group by 1"): print(" drop", r)
PY
ts interposer
BUILD=build CHECK_LIMIT=120 timeout 420 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -30 $f; done > $L/checklogs.txt 2>&1
ts bench-triad
BUILD=build timeout 70 python3 tests/bench/interposer.py --only triad --reps 5 --configs bare,none,default 2>&1 | grep -v "repetition" | tee $L/bench-triad.txt
ts bench-train
BUILD=build timeout 100 python3 tests/bench/interposer.py --only train --reps 3 --configs bare,none,default 2>&1 | tee $L/bench-train.txt
ts done
