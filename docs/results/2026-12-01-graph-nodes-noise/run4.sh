#!/bin/sh
# session 10 run 4: graph node tables (san_nodes.c); bench of the training loop with --sample all
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; git log --oneline -1; git status --short | head; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ONLY='cuda-graphs pytorch-cuda-graphs' BUILD=build timeout 150 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -20 $f; done > $L/checklogs.txt 2>&1
for t in /tmp/ip/torchgraphs/*.sqlite /tmp/ip/graphs/*.sqlite; do
	python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print(sys.argv[1], d.execute('select count(*), sum(blocks), count(distinct graph*1000000+graph_launch) from launches where traced=1 and graph is not null').fetchone(), d.execute('select reason, count(*) from drops group by reason').fetchall())" $t
	python3 tests/gpu/check_trace.py $t 1 | tail -2
done 2>&1 | tee $L/graphtraces.txt
build/nucatrace report /tmp/ip/torchgraphs/*.sqlite > $L/tg-report.txt 2>&1; echo "report rc=$?"; head -30 $L/tg-report.txt
python3 tests/gpu/trim_trace.py /tmp/ip/torchgraphs/*.sqlite /tmp/tg.sqlite 2 && python3 -c "
import lzma,shutil,sys; shutil.copyfileobj(open('/tmp/tg.sqlite','rb'), lzma.open(sys.argv[1],'wb', preset=9))" $OUT/torch-graphs.sqlite.xz; ls -la /tmp/tg.sqlite $OUT/
# windows over graphs
mkdir -p /tmp/h/gw
timeout 30 build/nucatrace run --no-calibrate --sample first=8,every=50 --output-dir /tmp/h/gw -- build/tests/gpu/graphs > $L/gw.out 2> $L/gw.err; echo "graphs-win rc=$?"; tail -3 $L/gw.err
python3 tests/gpu/check_trace.py /tmp/h/gw/*.sqlite 1 | tail -1
BUILD=build timeout 330 python3 tests/bench/interposer.py --only train --reps 5 --configs bare,none,default,all 2>&1 | tee $L/bench.txt
