#!/bin/sh
# 2026-12-03, the default policy bounded by records (issue 32): one device
# call with the build carried (build/: nucatrace, libnucatrace.so,
# tests/gpu programs, validate, the host's libsqlite3 and libelf in
# build/devlibs).
#   sh docs/results/2026-12-03-record-budget/run.sh
# tests/bench/stream_sweep.py (the STREAM-style size sweep: plain, the Compute
# Sanitizer's floor and the default, 3 repetitions each in turns), one traced
# run of it kept for its trace, then the training loop under the default
# against full (tests/gpu/entry.sh torch), as in 2026-12-03-mixed-blocks.
# Call 1 ran it with blocks=1000000 in the default, stream_sweep.py without
# the floor and its sweep at 200 launches a size; call 2 with the floor,
# 2,000 launches a size and the mixed window's second phase waiting for the
# first's close; call 3 with blocks=250000.  Logs in $OUT/budget.tgz.
RO=${OUT:-/tmp/out}
W=/tmp/B
rm -rf $W && mkdir -p $W
trap 'tar czf $RO/budget.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="*.bin" --exclude="store.db*" -C /tmp B' EXIT
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs NUCATRACE_PROGRESS=0
BUILD=build timeout 300 python3 tests/bench/stream_sweep.py --reps 3 2>&1 | tee $W/stream.log
# one traced run kept for its summary: what the window took
build/nucatrace run --no-calibrate --output-dir $W/stream-one -- build/tests/gpu/stream_sweep >$W/stream-one.out 2>&1
tail -n 12 $W/stream-one.out
python3 - $W/stream-one/*.sqlite <<'PY' 2>&1 | tee -a $W/stream-one.out
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("select 'drops', reason, sum(count) from drops group by reason"):
    print(*r)
for r in db.execute("select 'traced grid', grid_x, 'entry_only', entry_only, count(*) from launches"
                    " where traced = 1 group by 2, 4"):
    print(*r)
PY
TORCH_MODES="full mixed" timeout 300 sh tests/gpu/entry.sh $W torch
