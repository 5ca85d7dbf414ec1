# session 44: one call: decode cost (run44 part 1), then run43 (remake, lazy_race, torch)
T0=$(date +%s)
sh tests/gpu/gpuinfo.sh > $OUT/gpu.txt; cat $OUT/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/slim/devlibs
NT=build/slim/lazy/nucatrace D=build/slim/tests/gpu/decode INJ=$PWD/build/slim/tests/gpu/subcost.so
W=/tmp/C; rm -rf $W; mkdir -p $W
for r in $(seq ${R:-3}); do
  for v in ${RV:-plain floor update shadow shadow-settle}; do
    rm -rf $W/rd
    case $v in
    plain) $D ${RN:-400000} >$W/r.out 2>&1 ;;
    floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $D ${RN:-400000} >$W/r.out 2>&1 ;;
    update) timeout 120 $NT run --no-calibrate --output-dir $W/rd -- $D ${RN:-400000} >$W/r.out 2>$W/r-$v.err ;;
    shadow) NUCATRACE_GRAPH_ROUTE=shadow timeout 120 $NT run --no-calibrate --output-dir $W/rd -- $D ${RN:-400000} >$W/r.out 2>$W/r-$v.err ;;
    shadow-settle) NUCATRACE_LAZY_SETTLE=1 NUCATRACE_GRAPH_ROUTE=shadow timeout 120 $NT run --no-calibrate --output-dir $W/rd -- $D ${RN:-400000} >$W/r.out 2>$W/r-$v.err ;;
    esac
    echo "$r $v rc=$? $(grep -E '^(checksum|loop|tail)' $W/r.out | tr '\n' ' ')" >>$W/route.log
    [ $r -eq ${R:-3} ] && [ -d $W/rd ] && python3 - $W/rd/*.sqlite >>$W/route.log 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("windows", "launches_in_windows", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned", "lazy_loads", "lazy_into_patched", "lazy_settled", "settles")},
      "traced", db.execute("select count(*) from launches where traced = 1").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
  done
done
cat $W/route.log
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/slim/devlibs
NT=build/slim/lazy/nucatrace D=build/slim/tests/gpu/decode
mkdir -p /tmp/R
( $D 3000 remake > /tmp/R/plain.out 2>&1
  NUCATRACE_GRAPH_TABLES=1 $NT run --no-calibrate --sample all --output-dir /tmp/R -- $D 3000 remake > /tmp/R/traced.out 2>/tmp/R/traced.err
  echo "traced rc=$?"; grep checksum /tmp/R/plain.out /tmp/R/traced.out
  python3 - /tmp/R/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("graph_execs", "table_waits", "settles", "settle_s", "launches")},
      "nodes traced", db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
) > /tmp/R/remake.log 2>&1; cat /tmp/R/remake.log
B=build/slim PR=40 LIMIT=${LLIMIT:-200} sh tests/gpu/lazy_race.sh
grep -E '^==' /tmp/L/diag.log | grep -v "rc=0 " | head -20
left=$((${LEFT:-570} - ($(date +%s) - T0)))
echo "torch for $left s"
B=build/slim PR=40 TV="${TV:-lazy-shadow-mixed lazy-shadow-mixed:settle lazy-shadow-mixed:null}" timeout $left sh tests/gpu/window_fault.sh > /tmp/wf.log 2>&1
grep -E '^(==|--)' /tmp/F/diag.log | tail -n 60
tar czf $OUT/fault.tgz --exclude="*.sqlite" -C /tmp F L C R
