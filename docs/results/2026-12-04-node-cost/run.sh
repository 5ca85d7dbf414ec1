#!/bin/sh
# 2026-12-04, session 30 (issue 33): where a traced graph node launch's
# cost goes, on the H200.
#   B=build/dev sh docs/results/2026-12-04-node-cost/run.sh STEP...
# build/dev: stripped copies of nucatrace and libnucatrace.so (the commit
# named in the results), the tests/gpu programs, subcost.so, santime.so,
# graphlog.so, and build/dev/devlibs (libelf, libsqlite3, libzstd, libz of
# the build machine).
# Steps:
#   dloop      progs/decode.cu (20,000 replays, 80,000 node launches) plain,
#              at the floor (tests/gpu/subcost.so), under the default, and
#              with every replay in windows (all,window=80000,skip=0), full
#              and entry-only (--blocks entry; skip=1: skip= takes no 0): 3 rounds in turn, the
#              replays' wall time; per traced node launch = (windowed -
#              floor) / 80,000
#   dtime      where the host time goes: decode (20,000 replays) under the
#              default and with every replay in windows (full, entry; $DT),
#              with tests/gpu/santime.so as the Compute Sanitizer (every
#              entry point and callback timed)
#   torchtwins the training loop captured as a graph (--graphs, 300 steps)
#              untraced and under a window of 2,000 launches after the
#              first 20,000 (in the replays): losses, nodes traced, twins,
#              drops
#   gpuchecks  tests/gpu/interposer.sh, every check ($ONLY to pick)
# Logs in $OUT/nodecost.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/nodecost.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="store.db*" --exclude="checks/*/*.out" -C /tmp P; }
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
	dloop) for r in 1 2 3; do
			for v in ${DL:-plain floor default full entry}; do
				rm -rf $W/dl
				case $v in
				plain) $B/tests/gpu/decode 20000 >$W/dl.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$PWD/$B/tests/gpu/subcost.so $B/tests/gpu/decode 20000 >$W/dl.out 2>&1 ;;
				default) timeout 120 $B/nucatrace run --no-calibrate --output-dir $W/dl -- $B/tests/gpu/decode 20000 \
						>$W/dl.out 2>$W/dl-$v.err ;;
				full|entry) timeout 120 $B/nucatrace run --no-calibrate --blocks $v --sample $WIN --output-dir $W/dl -- \
						$B/tests/gpu/decode 20000 >$W/dl.out 2>$W/dl-$v.err ;;
				esac
				echo "$r $v $(grep -E '^(checksum|loop)' $W/dl.out | tr '\n' ' ')" >>$W/dloop.log
				[ $r -eq 3 ] && [ -d $W/dl ] && { echo "== $v"; tail -n 8 $W/dl-$v.err; summary $W/dl; } >>$W/dloop.log 2>&1
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
	torchtwins) T=tests/gpu/progs/torch_train.py
		timeout 150 python3 $T --graphs --steps 300 >$W/tt-plain.out 2>&1
		grep -E '^step [0-9]+ loss' $W/tt-plain.out >$W/tt.p
		p=all,window=2000,skip=20000,budget=1
		timeout 200 $B/nucatrace run --no-calibrate --sample $p --output-dir $W/tt -- \
			python3 $T --graphs --steps 300 >$W/tt.out 2>$W/tt.err
		echo "== late ($p) rc $?" >>$W/torchtwins.log
		grep -E '^step [0-9]+ loss' $W/tt.out >$W/tt.t
		if cmp $W/tt.p $W/tt.t >>$W/torchtwins.log 2>&1; then echo "losses equal" >>$W/torchtwins.log; fi
		grep -E '^(train|step [0-9.]+ ms)' $W/tt-plain.out $W/tt.out >>$W/torchtwins.log
		tail -n 12 $W/tt.err >>$W/torchtwins.log
		summary $W/tt >>$W/torchtwins.log 2>&1 ;;
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
