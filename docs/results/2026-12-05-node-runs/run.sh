#!/bin/sh
# 2026-12-05, session 34 (issue 33): graph nodes traced replay after
# replay from runs of records for several launches (kernels/blockrec.h:
# no copy and no stream wait a replay), on the H200.
#   B=build/dev sh docs/results/2026-12-05-node-runs/run.sh STEP...
# build/dev: stripped copies of nucatrace and libnucatrace.so (the commit
# named in the results), the tests/gpu programs, subcost.so, santime.so,
# graphlog.so, and build/dev/devlibs (libelf, libsqlite3, libzstd, libz of
# the build machine).
# Steps (as in ../2026-12-04-node-cost/run.sh, whose dloop and dtime
# these are):
#   dloop      progs/decode.cu (20,000 replays, 80,000 node launches) plain,
#              at the floor (tests/gpu/subcost.so), under the default, and
#              with every replay in windows (all,window=80000,skip=1),
#              entry-only and full: $R rounds (3) in turn, the replays'
#              wall time and the checksum; $DL picks the variants, among
#              them old-default, old-entry and old-full: the same with
#              $OB/nucatrace, the build before the change (build/old:
#              nucatrace and libnucatrace.so)
#   dtime      where the host time goes: decode (20,000 replays) under the
#              default and with every replay in windows ($DT), with
#              tests/gpu/santime.so as the Compute Sanitizer
#   gpuchecks  tests/gpu/interposer.sh, every check ($ONLY to pick)
# Logs in $OUT/noderuns.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/noderuns.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="store.db*" --exclude="checks/*/*.out" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs NUCATRACE_PROGRESS=0 BUILD=$B
export NUCATRACE=$PWD/$B/nucatrace
summary() {
	python3 - "$1" <<'PY'
import sqlite3, sys, glob
for path in glob.glob(sys.argv[1] + "/*.sqlite"):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = lambda s: db.execute(s).fetchone()[0]
    m = dict(db.execute("select key, value from meta"))
    print(path.split("/")[-1], "launches", q("select count(*) from launches"),
          "traced", q("select count(*) from launches where traced = 1"),
          "entry-only", q("select count(*) from launches where traced = 1 and entry_only = 1"),
          "nodes traced", q("select count(*) from launches where traced = 1 and graph is not null"),
          "in replays", q("select count(distinct graph_launch) from launches where traced = 1 and graph is not null"))
    print(" ", {k: m.get(k) for k in ("sample", "windows", "window_s", "launches_in_windows", "twins",
                                      "graph_execs", "graph_execs_twinned", "twin_images", "room_waits",
                                      "twin_refused", "twin_refused_names")})
    for r in db.execute("select 'drop', reason, sum(count) from drops group by reason"):
        print(" ", *r)
PY
}
WIN=all,window=80000,skip=1,blocks=100000000,budget=100
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	dloop) for r in $(seq ${R:-3}); do
			for v in ${DL:-plain floor default full entry}; do
				rm -rf $W/dl
				case $v in
				plain) $B/tests/gpu/decode 20000 >$W/dl.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$PWD/$B/tests/gpu/subcost.so $B/tests/gpu/decode 20000 >$W/dl.out 2>&1 ;;
				default) timeout 120 $B/nucatrace run --no-calibrate --output-dir $W/dl -- $B/tests/gpu/decode 20000 \
						>$W/dl.out 2>$W/dl-$v.err ;;
				full|entry) timeout 120 $B/nucatrace run --no-calibrate --blocks $v --sample $WIN --output-dir $W/dl -- \
						$B/tests/gpu/decode 20000 >$W/dl.out 2>$W/dl-$v.err ;;
				# the build before this session's change ($OB), beside it
				old-default) timeout 120 $OB/nucatrace run --no-calibrate --output-dir $W/dl -- \
						$B/tests/gpu/decode 20000 >$W/dl.out 2>$W/dl-$v.err ;;
				old-entry|old-full) timeout 120 $OB/nucatrace run --no-calibrate --blocks ${v#old-} --sample $WIN \
						--output-dir $W/dl -- $B/tests/gpu/decode 20000 >$W/dl.out 2>$W/dl-$v.err ;;
				esac
				echo "$r $v $(grep -E '^(checksum|loop)' $W/dl.out | tr '\n' ' ')" >>$W/dloop.log
				[ $r -eq ${R:-3} ] && [ -d $W/dl ] && { echo "== $v"; tail -n 8 $W/dl-$v.err; summary $W/dl; } >>$W/dloop.log 2>&1
			done
		done ;;
	dtime) for v in ${DT:-default full entry}; do
		rm -rf $W/dt
		case $v in
		default) p=all,window=1000,skip=1000,blocks=1000000,budget=1 b=mixed ;;
		*) p=$WIN b=$v ;;
		esac
		NUCATRACE_SANITIZER_LIB=$PWD/$B/tests/gpu/santime.so timeout 120 $B/nucatrace run --no-calibrate \
			--blocks $b --sample $p --output-dir $W/dt -- $B/tests/gpu/decode 20000 >$W/dt.out 2>$W/dt-$v.err
		echo "== $v ($p, $b): rc $?" >>$W/dtime.log
		cat $W/dt.out $W/dt-$v.err >>$W/dtime.log
		summary $W/dt >>$W/dtime.log 2>&1
		done ;;
	gpuchecks) # packed every 15 s: a call that runs out of time still brings the logs back
		( while :; do sleep 15; pack; done ) &
		packer=$!
		CHECK_LIMIT=${CHECK_LIMIT:-200} timeout ${CHECKS_S:-540} sh tests/gpu/interposer.sh $W/checks >$W/gpuchecks.log 2>&1
		kill $packer ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 40 $W/$s.log 2>/dev/null
	pack
done
exit 0
