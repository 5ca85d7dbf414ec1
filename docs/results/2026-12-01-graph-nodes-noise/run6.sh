#!/bin/sh
# session 10 run 6: node tables with the wait for the stream: graph checks, threads, training loop
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
mkdir -p /tmp/store /tmp/L
L=/tmp/L
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
ONLY='cuda-graphs pytorch-cuda-graphs threads-streams train-default' BUILD=build timeout 150 sh tests/gpu/interposer.sh /tmp/ip 2>&1 | tee $L/interposer.txt
for f in /tmp/ip/*.log; do echo "== $f"; tail -12 $f; done > $L/checklogs.txt 2>&1
mkdir -p /tmp/h/gw
timeout 30 build/nucatrace run --no-calibrate --sample first=8,every=50 --output-dir /tmp/h/gw -- build/tests/gpu/graphs > $L/gw.out 2> $L/gw.err; echo "graphs-win rc=$?"; grep "blocks mode\|window" $L/gw.err
python3 tests/gpu/check_trace.py /tmp/h/gw/*.sqlite 1 | tail -1
python3 tests/gpu/trim_trace.py /tmp/ip/torchgraphs/*.sqlite /tmp/tg.sqlite 1 && python3 -c "
import lzma,shutil,sys; shutil.copyfileobj(open('/tmp/tg.sqlite','rb'), lzma.open(sys.argv[1],'wb', preset=9))" $OUT/torch-graphs.sqlite.xz; ls -la /tmp/tg.sqlite $OUT/
cp /tmp/ip/torchgraphs/*.out $L/ 2>/dev/null; ls /tmp/ip/torchgraphs/
