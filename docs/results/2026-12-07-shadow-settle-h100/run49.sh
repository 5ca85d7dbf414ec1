# session 47 call: HEAD stripped in build/dg.  A: tests/bench/graphs.py's decode
# workload (R repetitions of plain floor default update, goal default <= floor x 1.01);
# B: the graph GPU checks (ONLY) until CLEFT s; C: graphs.py's torch workload (one
# repetition of TC) until LEFT s.
T0=$(date +%s)
sh tests/gpu/gpuinfo.sh > $OUT/gpu.txt; cat $OUT/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/dg/devlibs
W=/tmp/C; mkdir -p $W
at() { echo "$1 at $(($(date +%s) - T0)) s"; }
BUILD=build/dg timeout ${DT:-150} python3 tests/bench/graphs.py --only decode --reps ${R:-3} --goal decode:default=1.01 \
	>$W/decode.txt 2>$W/decode.err
at "decode rc=$?" >>$W/decode.txt; cat $W/decode.txt; tail -n 3 $W/decode.err
left=$((${CLEFT:-400} - ($(date +%s) - T0)))
BUILD=build/dg CHECK_LIMIT=200 timeout $left sh tests/gpu/interposer.sh $W/checks > $W/checks.log 2>&1
at "interposer.sh rc=$?" >> $W/checks.log
grep -E '^(ok|FAIL|interposer)' $W/checks.log
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp C
left=$((${LEFT:-575} - ($(date +%s) - T0)))
BUILD=build/dg timeout $left python3 tests/bench/graphs.py --only torch --reps ${TR:-1} --configs ${TC:-plain,floor,default,update,none} \
	>$W/torch.txt 2>$W/torch.err
at "torch rc=$?" >>$W/torch.txt; cat $W/torch.txt; tail -n 6 $W/torch.err
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp C
