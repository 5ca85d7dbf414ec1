#!/bin/sh
# 2026-12-04, session 29 (issue 33): the window opened at a graph launch's
# entry (5e6fbb6), on the H200.
#   B=build/dev sh docs/results/2026-12-04-graph-windows/run.sh STEP...
# build/dev: stripped copies of nucatrace and libnucatrace.so (HEAD), the
# tests/gpu programs and subcost.so, and build/dev/devlibs (libelf,
# libsqlite3, libzstd, libz of the build machine).
# Steps:
#   gchecks    tests/gpu/interposer.sh's graph checks ($GCHECKS, or the
#              ABI check, graph-twins, graph-update, graph-late-patch,
#              graph-early-patch, graph-tail-close, cuda-graphs,
#              train-graphs-dark, pytorch-cuda-graphs-default)
#   dtrace     nucatrace calibrate --quick, then progs/decode.cu (3,000
#              replays) under the default: the trace, xz-compressed, to
#              $OUT/decode-default.sqlite.xz, and its report
#   torchtwins the training loop captured as a graph (--graphs, 300 steps)
#              untraced, under the default, and under a window of 2,000
#              launches after the first 20,000 (in the replays): losses,
#              nodes traced, twins, drops
#   dupdate    progs/decode.cu 15000 update under graph-update's policy:
#              the drops by launch, the runs of traced launches (windows)
#   decodecost progs/decode.cu (20,000 replays) plain, at the floor
#              (tests/gpu/subcost.so), under the default by $B/old (an
#              earlier build: one node table a kernel) and by $B, 3 rounds
#              in turn: the replays' wall time; the last runs' summaries
#   dprofile   where a window's node launch goes on the host: progs/decode.cu
#              (20,000 replays) with libnucatrace.so and tests/gpu/stackdump.so
#              preloaded, a window of 40,000 launches after 1,000, and
#              SIGUSR2 every 4 ms: the main thread's stacks, counted by
#              frame (object+offset; resolve libnucatrace.so's with
#              addr2line on the same build)
# Logs in $OUT/windows.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/windows.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="store.db*" --exclude="checks/*/*.out" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs NUCATRACE_PROGRESS=0 BUILD=$B
export NUCATRACE=$PWD/$B/nucatrace
DEFAULT=all,window=1000,skip=1000,blocks=1000000,budget=1
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
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	gchecks) CHECK_LIMIT=200 ONLY="${GCHECKS:-abi-matches-real-headers graph-twins graph-update graph-late-patch graph-early-patch graph-tail-close cuda-graphs train-graphs-dark pytorch-cuda-graphs-default}" \
			timeout 420 sh tests/gpu/interposer.sh $W/gchecks >$W/gchecks.log 2>&1 ;;
	dtrace) export NUCATRACE_STORE=$W/store.db
		timeout 120 $B/nucatrace calibrate --quick >$W/dtrace.log 2>&1
		echo "calibrate rc $?" >>$W/dtrace.log
		$B/tests/gpu/decode 3000 >$W/dt-plain.out 2>&1
		cmd="$B/nucatrace run --no-calibrate --output-dir $W/dt -- $B/tests/gpu/decode 3000"
		echo "$ $cmd" >>$W/dtrace.log
		$cmd >$W/dt.out 2>$W/dt.err
		echo "traced rc $?" >>$W/dtrace.log
		grep checksum $W/dt-plain.out $W/dt.out >>$W/dtrace.log
		cat $W/dt.err >>$W/dtrace.log
		summary $W/dt >>$W/dtrace.log 2>&1
		$B/nucatrace report $W/dt/*.sqlite >>$W/dtrace.log 2>&1
		python3 -c "import lzma,sys,glob; open(sys.argv[1],'wb').write(lzma.compress(open(glob.glob('$W/dt/*.sqlite')[0],'rb').read(), preset=9|lzma.PRESET_EXTREME))" \
			$RO/decode-default.sqlite.xz
		unset NUCATRACE_STORE ;;
	torchtwins) T=tests/gpu/progs/torch_train.py
		timeout 150 python3 $T --graphs --steps 300 >$W/tt-plain.out 2>&1
		grep -E '^step [0-9]+ loss' $W/tt-plain.out >$W/tt.p
		for v in ${TT:-default late}; do
			case $v in
			default) p=$DEFAULT ;;
			late) p=all,window=2000,skip=20000,budget=1 ;;
			esac
			timeout 200 $B/nucatrace run --no-calibrate --sample $p --output-dir $W/tt-$v -- \
				python3 $T --graphs --steps 300 >$W/tt-$v.out 2>$W/tt-$v.err
			echo "== $v ($p) rc $?" >>$W/torchtwins.log
			grep -E '^step [0-9]+ loss' $W/tt-$v.out >$W/tt.t
			if cmp $W/tt.p $W/tt.t >>$W/torchtwins.log 2>&1; then echo "losses equal" >>$W/torchtwins.log; fi
			grep -E '^(train|step [0-9.]+ ms)' $W/tt-plain.out $W/tt-$v.out >>$W/torchtwins.log
			tail -n 12 $W/tt-$v.err >>$W/torchtwins.log
			summary $W/tt-$v >>$W/torchtwins.log 2>&1
		done ;;
	dupdate) for r in ${DU:-1}; do
		p=all,window=400,skip=400,budget=40
		rm -rf $W/du
		$B/nucatrace run --no-calibrate --sample $p --output-dir $W/du -- $B/tests/gpu/decode 15000 update \
			>$W/du.out 2>$W/du.err
		echo "rc $? ($p)" >>$W/dupdate.log
		cat $W/du.out $W/du.err >>$W/dupdate.log
		python3 - $W/du/*.sqlite >>$W/dupdate.log 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print("drops", db.execute("select launch, kernel, count from drops").fetchall())
for (l,) in db.execute("select launch from drops where launch is not null"):
    print(" around", l, db.execute("select launch, traced, graph_launch, kernel, block_x, entry_only from launches "
                                   "where launch between ? and ? order by launch", (l - 6, l + 6)).fetchall())
runs, prev = [], None
for l, e in db.execute("select launch, entry_only from launches where traced = 1 order by launch"):
    if prev is None or l != prev + 1 or e != runs[-1][2]:
        runs.append([l, l, e])
    runs[-1][1] = l
    prev = l
print("traced runs (first, last, entry_only):", runs)
PY
		done ;;
	dprofile) mkdir -p $W/dp
		LD_PRELOAD="$PWD/$B/libnucatrace.so $PWD/$B/tests/gpu/stackdump.so" NUCATRACE_OUTPUT_DIR=$W/dp \
			NUCATRACE_SAMPLE=all,window=40000,skip=1000,blocks=100000000,budget=100 \
			$B/tests/gpu/decode 20000 >$W/dp.out 2>$W/dp.err &
		pid=$!
		sleep 0.2
		# (kill -0 succeeds on a zombie: call 5 looped until its limit)
		i=0
		while [ $i -lt 1500 ] && grep -q '^State:[[:space:]]*[RSD]' /proc/$pid/status 2>/dev/null; do
			kill -USR2 $pid 2>/dev/null
			sleep 0.004
			i=$((i + 1))
		done
		wait $pid
		echo "rc $? pid $pid" >>$W/dprofile.log
		cat $W/dp.out >>$W/dprofile.log
		grep -v "^==\|^  " $W/dp.err | tail -n 12 >>$W/dprofile.log
		summary $W/dp >>$W/dprofile.log 2>&1
		python3 - $W/dp.err $pid >>$W/dprofile.log <<'PY'
import collections, sys
main = f"== thread {sys.argv[2]}"
stacks, cur = [], None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("== thread"):
        cur = [] if line.strip() == main else None
        if cur is not None:
            stacks.append(cur)
    elif cur is not None and line.startswith("  "):
        cur.append(line.split()[0])
def frames(st):	# past the handler and the signal return (libc's __restore_rt)
    i = 0
    while i < len(st) and "stackdump" in st[i]:
        i += 1
    return st[i + 1:] if i < len(st) and "libc.so" in st[i] else st[i:]
leaf, incl = collections.Counter(), collections.Counter()
for st in stacks:
    fr = frames(st)
    if fr:
        leaf[fr[0]] += 1
    for f in set(fr):
        incl[f] += 1
print("samples", len(stacks))
print("leaf:")
for f, n in leaf.most_common(30):
    print(f"  {n:5d} {f}")
print("inclusive (libnucatrace and libsanitizer):")
for f, n in incl.most_common(400):
    if "nucatrace" in f or "sanitizer" in f:
        print(f"  {n:5d} {f}")
PY
		;;
	decodecost) for r in 1 2 3; do
			for v in ${DC:-plain floor old default}; do
				case $v in
				plain) $B/tests/gpu/decode 20000 >$W/dc.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$PWD/$B/tests/gpu/subcost.so $B/tests/gpu/decode 20000 >$W/dc.out 2>&1 ;;
				old) $B/old/nucatrace run --no-calibrate --output-dir $W/dco-$r -- $B/tests/gpu/decode 20000 \
						>$W/dc.out 2>$W/dco-$r.err ;;
				default) $B/nucatrace run --no-calibrate --output-dir $W/dc-$r -- $B/tests/gpu/decode 20000 \
						>$W/dc.out 2>$W/dc-$r.err ;;
				esac
				echo "$r $v $(grep -E '^(checksum|loop)' $W/dc.out | tr '\n' ' ')" >>$W/decodecost.log
			done
		done
		for v in dco dc; do
			[ -d $W/$v-3 ] || continue
			tail -n 12 $W/$v-3.err >>$W/decodecost.log
			summary $W/$v-3 >>$W/decodecost.log 2>&1
		done ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 40 $W/$s.log 2>/dev/null
	pack
done
exit 0
