# session 45 call 1: the shadow route the default (build/dg: 3be4e61 + the flip, stripped; build/dg/guard: 4ca41c5 stripped).
# A: decode loop, 400,000 replays, R rounds of plain floor default(shadow) update; B: the graph GPU checks under the new default;
# C: PyTorch's captured step under a window in its warm-up, new-shadow against guard-shadow (4ca41c5) for the time left.
T0=$(date +%s)
sh tests/gpu/gpuinfo.sh > $OUT/gpu.txt; cat $OUT/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/dg/devlibs
W=/tmp/C; rm -rf $W; mkdir -p $W
NT=build/dg/nucatrace D=build/dg/tests/gpu/decode INJ=$PWD/build/dg/tests/gpu/subcost.so
if [ "${A:-1}" = 1 ]; then
for r in $(seq ${R:-3}); do
  for v in ${RV:-plain floor default update}; do
    rm -rf $W/rd
    case $v in
    plain) $D ${RN:-400000} >$W/r.out 2>&1 ;;
    floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $D ${RN:-400000} >$W/r.out 2>&1 ;;
    default) timeout 120 $NT run --no-calibrate --output-dir $W/rd -- $D ${RN:-400000} >$W/r.out 2>$W/r-$v.err ;;
    update) NUCATRACE_GRAPH_ROUTE=update timeout 120 $NT run --no-calibrate --output-dir $W/rd -- $D ${RN:-400000} >$W/r.out 2>$W/r-$v.err ;;
    esac
    echo "$r $v rc=$? $(grep -E '^(checksum|loop|tail)' $W/r.out | tr '\n' ' ')" >>$W/route.log
    [ $r -eq ${R:-3} ] && [ -d $W/rd ] && python3 - $W/rd/*.sqlite >>$W/route.log 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("windows", "launches_in_windows", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned", "settles")},
      "traced", db.execute("select count(*) from launches where traced = 1").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
  done
done
cat $W/route.log
fi
echo "A done at $(($(date +%s) - T0)) s"
if [ "${CHECKS:-1}" = 1 ]; then
left=$((${CLEFT:-330} - ($(date +%s) - T0)))
BUILD=build/dg CHECK_LIMIT=200 ONLY="${ONLY:-abi-matches-real-headers cuda-graphs graph-* graphs-device pytorch-cuda-graphs pytorch-cuda-graphs-default train-graphs-dark kernels-mode-graphs}" \
  timeout $left sh tests/gpu/interposer.sh /tmp/C/checks > $W/checks.log 2>&1
echo "interposer.sh rc=$?" >> $W/checks.log
cat $W/checks.log
fi
echo "B done at $(($(date +%s) - T0)) s"
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp C
left=$((${LEFT:-565} - ($(date +%s) - T0)))
echo "torch for $left s"
[ $left -gt 30 ] && B=build/dg PR=40 TV="${TV:-head-shadow guard-shadow}" timeout $left sh tests/gpu/window_fault.sh > /tmp/wf.log 2>&1
grep -E '^(==|--)' /tmp/F/diag.log | tail -n 60
tar czf $OUT/fault.tgz --exclude='*.sqlite' -C /tmp F
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp C
