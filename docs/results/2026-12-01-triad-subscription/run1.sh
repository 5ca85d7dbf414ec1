#!/bin/sh
# session 11 run 1: HEAD on the GPU: interposer.sh (all checks), graphs step (real replay), subcost, probecost
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
T0=$(date +%s)
ts() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
cp /tmp/store/maps.db $L/ 2>/dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ts interposer
BUILD=build timeout 300 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -14 $f; done > $L/checklogs.txt 2>&1
ts graphs
rm -rf /tmp/tg && mkdir -p /tmp/tg
timeout 90 build/nucatrace run --no-calibrate --sample all --output-dir /tmp/tg -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 > $L/tg.out 2> $L/tg.err; echo "tg rc=$?"; tail -5 $L/tg.err
python3 tests/gpu/check_trace.py /tmp/tg/*.sqlite 1 | tail -2
python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(d.execute('select reason, count(*) from drops group by reason').fetchall())" /tmp/tg/*.sqlite
python3 tests/gpu/trim_trace.py --graph-launch 5 /tmp/tg/*.sqlite /tmp/tg-replay.sqlite && python3 tests/gpu/trim_trace.py --graph-launch 5 /tmp/tg/*.sqlite $OUT/torch-graphs-replay.sqlite.xz
timeout 60 build/nucatrace report /tmp/tg-replay.sqlite > $L/tg-report.txt 2>&1; echo "report rc=$?"; head -40 $L/tg-report.txt
ts subcost
BUILD=build timeout 100 sh tests/gpu/subcost.sh 2>&1 | tee $L/subcost.txt
ts probecost
rm -rf /tmp/pc && mkdir -p /tmp/pc
timeout 30 build/tests/gpu/probecost /tmp/pc/untraced.txt > $L/pc-u.log 2>&1; echo "pc untraced rc=$?"
timeout 60 build/nucatrace run --no-calibrate --sample all --output-dir /tmp/pc -- build/tests/gpu/probecost /tmp/pc/traced.txt > $L/pc-t.log 2>&1; echo "pc traced rc=$?"
python3 tests/gpu/probecost.py /tmp/pc/*.sqlite /tmp/pc/traced.txt /tmp/pc/untraced.txt 2>&1 | tee $L/probecost.txt
xz -9 -c /tmp/pc/*.sqlite > $OUT/probecost.sqlite.xz 2>/dev/null
ts done
