# session 46 call: HEAD (95841b1) stripped in build/dg.
# A: decode loop, 400,000 replays, R rounds of plain floor default(shadow) update;
# B: graph GPU checks (ONLY); C: PyTorch's captured step, --graphs --steps 2000 under
# all,window=1000,skip=1000,budget=5 (train-graphs-dark's policy: a window in the replays),
# TR rounds of plain floor default update, wall and replay time; D: lazy_race.sh for the time left.
T0=$(date +%s)
sh tests/gpu/gpuinfo.sh > $OUT/gpu.txt; cat $OUT/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/dg/devlibs
W=/tmp/C; mkdir -p $W
NT=build/dg/nucatrace D=build/dg/tests/gpu/decode INJ=$PWD/build/dg/tests/gpu/subcost.so
meta() { python3 - "$@" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print("  ", {k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "dark_spans", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned", "settles", "lazy_settled", "lazy_settled_kernels")},
      "nodes traced", db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0],
      "in", db.execute("select count(distinct graph_launch) from launches where traced = 1 and graph is not null").fetchone()[0], "graph launches",
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
}
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
    [ $r -eq ${R:-3} ] && [ -d $W/rd ] && meta $W/rd/*.sqlite >>$W/route.log 2>&1
  done
done
cat $W/route.log
fi
echo "A done at $(($(date +%s) - T0)) s"
if [ -n "${ONLY:-}" ]; then
left=$((${CLEFT:-330} - ($(date +%s) - T0)))
BUILD=build/dg CHECK_LIMIT=200 timeout $left sh tests/gpu/interposer.sh /tmp/C/checks > $W/checks.log 2>&1
echo "interposer.sh rc=$? at $(($(date +%s) - T0)) s" >> $W/checks.log
grep -E '^(ok|FAIL|fail|not ok|interposer)' $W/checks.log
fi
echo "B done at $(($(date +%s) - T0)) s"
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp C
if [ "${TR:-0}" -gt 0 ]; then
for r in $(seq $TR); do
  for v in ${TV2:-plain floor default update}; do
    [ $(($(date +%s) - T0)) -lt ${TLEFT:-560} ] || break 2
    t1=$(date +%s.%N); rm -rf $W/twd
    TP="python3 tests/gpu/progs/torch_train.py ${TW:---graphs --steps 2000}"
    POL=${POL:-all,window=1000,skip=1000,budget=5}
    case $v in
    plain) timeout 200 $TP >$W/tw.out 2>&1 ;;
    floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none timeout 200 $TP >$W/tw.out 2>&1 ;;
    default) timeout 200 $NT run --no-calibrate --sample $POL --output-dir $W/twd -- $TP >$W/tw.out 2>$W/tw-$v.err ;;
    update) NUCATRACE_GRAPH_ROUTE=update timeout 200 $NT run --no-calibrate --sample $POL --output-dir $W/twd -- $TP >$W/tw.out 2>$W/tw-$v.err ;;
    none) timeout 200 $NT run --no-calibrate --sample none --output-dir $W/twd -- $TP >$W/tw.out 2>$W/tw-$v.err ;;
    warm) timeout 200 $NT run --no-calibrate --output-dir $W/twd -- $TP >$W/tw.out 2>$W/tw-$v.err ;;
    settle) NUCATRACE_LAZY_SETTLE=1 timeout 200 $NT run --no-calibrate --sample $POL --output-dir $W/twd -- $TP >$W/tw.out 2>$W/tw-$v.err ;;
    esac
    rc=$?
    echo "$r $v rc=$rc wall $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t1 }") s $(grep -E '^(train|step [0-9.]+ ms|step [0-9]+ loss)' $W/tw.out | tail -n 3 | tr '\n' ' ')" >>$W/torchwall.log
    [ $rc -ne 0 ] && tail -n 12 $W/tw.out $W/tw-$v.err >>$W/torchwall.log
    [ -d $W/twd ] && meta $W/twd/*.sqlite >>$W/torchwall.log 2>&1
  done
done
cat $W/torchwall.log
fi
echo "C done at $(($(date +%s) - T0)) s"
tar czf $OUT/calls.tgz --exclude='*.sqlite' -C /tmp C
left=$((${LEFT:-570} - ($(date +%s) - T0)))
echo "lazy_race for $left s"
if [ $left -gt 40 ]; then
  B=build/dg PR=40 LIMIT=$((left - 20)) TV="${LV:-base settle plain}" timeout $left sh tests/gpu/lazy_race.sh > /tmp/lr.log 2>&1
  tail -n 30 /tmp/L/diag.log
  tar czf $OUT/lazy.tgz --exclude='*.sqlite' -C /tmp L
fi
