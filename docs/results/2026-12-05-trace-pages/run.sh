#!/bin/sh
# 2026-12-05, session 33 (issue 32): the trace's SQLite pages of 64 KiB
# (this commit) against 4 KiB (build/old: b763ca7's nucatrace and
# libnucatrace.so) on the triad of 400 launches under --sample all, side
# by side in turns:
#   B=build/dev OLD_BUILD=build/old sh docs/results/2026-12-05-trace-pages/run.sh
# build/dev as in 2026-12-04-node-cost/run.sh.  Logs in $OUT/pages.tgz.
RO=${OUT:-/tmp/out}
W=/tmp/Q
rm -rf $W && mkdir -p $W
B=${B:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs NUCATRACE_PROGRESS=0 BUILD=$B OLD_BUILD=${OLD_BUILD:-build/old}
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
df -h /tmp >>$W/gpu.txt
python3 tests/bench/records.py --configs bare,all,old --reps ${R:-3} --limit 120 >$W/records.log 2>&1
echo "records rc $?" >>$W/records.log
cat $W/records.log
tar czf $RO/pages.tgz -C /tmp Q
