#!/bin/sh
# Does a function loaded lazily into a patched module, beside running
# kernels of that module, break a run?  (issue 33, the window fault;
# tests/gpu/progs/lazy_race.cu.)  $PR rounds of the variants $TV, one run
# each, interleaved, until $LIMIT seconds have passed:
#   plain    the program alone
#   base     under all,window=300,skip=1300,budget=1 (--blocks mixed): the
#            first phase launches 1301-1600 (entry site), the second
#            1601-1900 (both sites), with the 128 lazy launches (1601-1792)
#   phase1   the same with skip=1550: the lazy launches in the first phase
#   full     --blocks full with skip=1550 (both sites, no phase switch)
# (Until session 45 the window was 1,000 launches from launch 501: the
# first phase's 1,000 spins of 16,896 blocks filled the record buffers
# (NUCATRACE_BUFFER_MAX, 16 Mi blocks), and the second phase closed about
# 26 launches in, before the lazy launches, in every variant with records:
# docs/results/2026-12-07-lazy-race.md.)
#   eager    base under CUDA_MODULE_LOADING=EAGER (nothing loads lazily)
#   load     base under NUCATRACE_LOAD_BEFORE_PATCH=1
#   null     base under NUCATRACE_PATCH_NULL=1 (callbacks that do nothing)
#   settle   base under NUCATRACE_LAZY_SETTLE=1 (a function loaded at the
#            launch's entry after a wait for the GPU, not inside the launch)
# Per run, in $W/diag.log: rc, seconds, the program's mismatches, the
# error, the trace's lazy meta; at the end a line per variant: runs,
# failures.  B: the build folder (nucatrace, tests/gpu/lazy_race).
#   B=build/slim PR=40 LIMIT=200 sh tests/gpu/lazy_race.sh
W=${W:-/tmp/L}
B=${B:-build}
NT=$B/lazy/nucatrace
[ -x "$NT" ] || NT=$B/nucatrace
P=$B/tests/gpu/lazy_race
rm -rf $W && mkdir -p $W
T0=$(date +%s)
for r in $(seq ${PR:-40}); do
	for v in ${TV:-plain base eager null load settle phase1 full}; do
		[ $(($(date +%s) - T0)) -lt ${LIMIT:-200} ] || break 2
		rm -rf $W/t && mkdir -p $W/t
		warm=1600 skip=1300 ml=LAZY lp=0 pn=0 ls=0 bl=mixed
		case $v in
		phase1) skip=1550 ;;
		full) bl=full skip=1550 ;;
		eager) ml=EAGER ;;
		load) lp=1 ;;
		null) pn=1 ;;
		settle) ls=1 ;;
		esac
		t0=$(date +%s.%N)
		if [ $v = plain ]; then
			CUDA_MODULE_LOADING=$ml timeout 120 $P $warm >$W/t/out 2>$W/t/err
		else
			CUDA_MODULE_LOADING=$ml NUCATRACE_LOAD_BEFORE_PATCH=$lp NUCATRACE_PATCH_NULL=$pn NUCATRACE_LAZY_SETTLE=$ls NUCATRACE_BLOCKS=$bl \
			timeout 120 $NT run --no-calibrate --sample all,window=300,skip=$skip,budget=1 \
				--output-dir $W/t -- $P $warm >$W/t/out 2>$W/t/err
		fi
		rc=$?
		{
			echo "== $r $v rc=$rc $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t0 }") s; $(grep mismatches $W/t/out)"
			grep -E -m3 'cuda|CUDA|rror' $W/t/err
			for db in $W/t/*.sqlite; do
				[ -f "$db" ] || continue
				python3 - "$db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("launches", "launches_in_windows", "lazy_loads", "lazy_into_patched", "lazy_into_patched_at", "lazy_settled", "lazy_settled_kernels")},
      "traced", db.execute("select count(*) from launches where traced = 1").fetchone()[0],
      "entry-only", db.execute("select count(*) from launches where traced = 1 and entry_only = 1").fetchone()[0],
      "dropped", db.execute("select coalesce(sum(count), 0) from drops").fetchone()[0])
PY
			done
		} >>$W/diag.log 2>&1
	done
done
for v in ${TV:-plain base eager null load settle phase1 full}; do
	n=$(grep -c "^== [0-9]* $v rc=" $W/diag.log)
	f=$(grep "^== [0-9]* $v rc=" $W/diag.log | grep -c -v "rc=0 ")
	echo "lazy_race $v: $f of $n runs failed"
done
