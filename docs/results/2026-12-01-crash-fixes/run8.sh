#!/bin/sh
# session 12 run 8: torch --graphs under the default policy: where does it wait? (stackdump after 40 s), twice
rm -rf /tmp/L; mkdir -p /tmp/store /tmp/L
export LD_LIBRARY_PATH=$PWD/build/devlibs
export NUCATRACE_STORE=/tmp/store/maps.db NUCATRACE_PROGRESS=0
L=/tmp/L
trap 'tar czf $OUT/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; } | tee $L/gpu.txt
build/nucatrace calibrate --quick --quiet 2>&1 | tail -1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
for r in 1 2; do
mkdir -p /tmp/td$r
T0=$(date +%s)
LD_PRELOAD=$PWD/build/tests/gpu/stackdump.so build/nucatrace run --no-calibrate --output-dir /tmp/td$r -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 --step-times > $L/td$r.out 2> $L/td$r.err &
for i in $(seq 1 40); do sleep 1; pgrep -f "torch_train.py --graphs" >/dev/null || break; done
P=$(pgrep -f "python3 tests/gpu/progs/torch_train.py --graphs" | tail -1)
echo "run $r: $(( $(date +%s) - T0 )) s, pid '$P'"
if [ -n "$P" ]; then
	cat /proc/$P/maps > $L/td$r.maps 2>/dev/null
	kill -USR2 $P; sleep 3; kill -9 $P
fi
wait
tail -2 $L/td$r.out; grep -v "^ \|^==" $L/td$r.err | head -4
done
