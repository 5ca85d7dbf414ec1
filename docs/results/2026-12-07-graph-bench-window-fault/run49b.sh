# session 47 second call (same machine): graphs.py's torch workload (TR repetitions), then
# the graph checks the first call's time did not reach.
T0=$(date +%s)
sh tests/gpu/gpuinfo.sh > $OUT/gpu.txt; cat $OUT/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/dg/devlibs
W=/tmp/D; mkdir -p $W
at() { echo "$1 at $(($(date +%s) - T0)) s"; }
BUILD=build/dg timeout ${TT:-300} python3 tests/bench/graphs.py --only torch --reps ${TR:-2} --configs ${TC:-plain,floor,default,update,none} \
	>$W/torch.txt 2>$W/torch.err
at "torch rc=$?" >>$W/torch.txt; cat $W/torch.txt; tail -n 12 $W/torch.err
left=$((${LEFT:-560} - ($(date +%s) - T0)))
BUILD=build/dg CHECK_LIMIT=200 timeout $left sh tests/gpu/interposer.sh $W/checks > $W/checks.log 2>&1
at "interposer.sh rc=$?" >> $W/checks.log
grep -E '^(ok|FAIL|interposer)' $W/checks.log
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp D
