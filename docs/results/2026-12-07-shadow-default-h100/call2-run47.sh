# session 45 call 2: PyTorch's captured step (torch_train.py --graphs) wall time: plain, floor, default (shadow), update, R rounds;
# then the window fault, head-shadow (build/dg) against guard-shadow (build/dg/guard, 4ca41c5), for the time left.
T0=$(date +%s)
sh tests/gpu/gpuinfo.sh > $OUT/gpu2.txt; cat $OUT/gpu2.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/dg/devlibs
W=/tmp/T; rm -rf $W; mkdir -p $W
NT=build/dg/nucatrace INJ=$PWD/build/dg/tests/gpu/subcost.so
if [ "${TWALL:-1}" = 1 ]; then
for r in $(seq ${R:-3}); do
  for v in ${TV2:-plain floor default update}; do
    t1=$(date +%s.%N); rm -rf $W/twd
    case $v in
    plain) timeout 200 python3 tests/gpu/progs/torch_train.py ${TW:---graphs --steps 1000} >$W/tw.out 2>&1 ;;
    floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none timeout 200 python3 tests/gpu/progs/torch_train.py ${TW:---graphs --steps 1000} >$W/tw.out 2>&1 ;;
    default) timeout 200 $NT run --no-calibrate --output-dir $W/twd -- python3 tests/gpu/progs/torch_train.py ${TW:---graphs --steps 1000} >$W/tw.out 2>$W/tw-$v.err ;;
    update) NUCATRACE_GRAPH_ROUTE=update timeout 200 $NT run --no-calibrate --output-dir $W/twd -- python3 tests/gpu/progs/torch_train.py ${TW:---graphs --steps 1000} >$W/tw.out 2>$W/tw-$v.err ;;
    esac
    rc=$?
    echo "$r $v rc=$rc wall $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t1 }") s $(grep -E '^(train|step [0-9.]+ ms|step [0-9]+ loss)' $W/tw.out | tail -n 3 | tr '\n' ' ')" >>$W/torchwall.log
    [ $rc -ne 0 ] && tail -n 12 $W/tw.out $W/tw-$v.err >>$W/torchwall.log
    [ -d $W/twd ] && python3 - $W/twd/*.sqlite >>$W/torchwall.log 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print("  ", {k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "dark_spans", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned")},
      "nodes traced", db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
  done
done
cat $W/torchwall.log
fi
tar czf $OUT/wall.tgz --exclude='*.sqlite' -C /tmp T
left=$((${LEFT:-565} - ($(date +%s) - T0)))
echo "torch fault for $left s"
[ $left -gt 30 ] && B=build/dg PR=60 TV="${TV:-head-shadow guard-shadow}" timeout $left sh tests/gpu/window_fault.sh > /tmp/wf.log 2>&1
grep -E '^(==|--)' /tmp/F/diag.log | tail -n 80
tar czf $OUT/fault.tgz --exclude='*.sqlite' -C /tmp F
