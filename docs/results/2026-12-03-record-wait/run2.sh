#!/bin/sh
# 2026-12-03, call 2 (issue 32): the build with the packing helpers on by
# default, carried as build/dev (stripped copies of nucatrace,
# libnucatrace.so, the tests/gpu programs, and build/devlibs); B=build/dev.
#   sh docs/results/2026-12-03-record-wait/run2.sh STEP...
# Steps:
#   records   tests/bench/records.py: the triad of 400 launches bare, under
#             --sample all, and --sample all --blocks entry, once each
#   threads   tests/gpu/progs/streams (8 threads x 4 streams) untraced and
#             under --sample all with record buffers of 1,024 blocks:
#             launches of other threads fill them between a launch's entry
#             and its callback, which then waits and fetches records
#             itself; outputs compared, the trace checked (stacks at 60 s
#             if it stalls)
#   train     the PyTorch training loop (10 steps) untraced and under
#             --sample all with buffers of 2M blocks (its autograd thread
#             launches too): losses compared, the summary
#   checks    tests/gpu/interposer.sh (make test-gpu's interposer part)
#   graphchecks  its graph-early-patch and pytorch-cuda-graphs checks only
#             (call 3: those that failed in call 2)
#   torchgraphs  its pytorch-cuda-graphs check only (call 4)
#   trainall  the training loop (20 steps) untraced and under --sample all
#             with the default buffers: losses compared, drops (call 4)
# Logs in $OUT/wait2.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/wait2.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="store.db*" --exclude="checks/*/*.out" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/$B/devlibs NUCATRACE_PROGRESS=0 BUILD=$B
export NUCATRACE=$PWD/$B/nucatrace
# $1 log name, $2 seconds before the stacks are taken, $3... the program
stacks() {
	s_name=$1 s_limit=$2; shift 2
	LD_PRELOAD=$PWD/$B/tests/gpu/stackdump.so setsid $B/nucatrace run --no-calibrate --sample all \
		--output-dir $W/$s_name -- "$@" >$W/$s_name.out 2>$W/$s_name.err &
	pid=$!
	t=0
	while [ $t -lt $s_limit ] && kill -0 $pid 2>/dev/null; do sleep 1; t=$((t + 1)); done
	if kill -0 $pid 2>/dev/null; then
		echo "== still running at $t s: stacks" >>$W/$s_name.log
		kill -USR2 $pid
		sleep 3
		kill -9 -- -$pid 2>/dev/null
	else
		echo "== finished in $t s" >>$W/$s_name.log
	fi
	wait $pid 2>/dev/null
	cat $W/$s_name.err >>$W/$s_name.log
}
# the trace's record-space meta, packing threads and drops (no sqlite3
# on the device)
meta() {
	python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for k, v in db.execute("select key, value from meta where key like 'room%' or key = 'pack_threads'"):
    print(k, v)
for r in db.execute("select 'drop', reason, sum(count) from drops group by reason"):
    print(*r)
print("traced launches without occupancy",
      db.execute("select count(*) from launches where traced = 1 and max_blocks_per_sm is null").fetchone()[0])
PY
}
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	records) timeout 150 python3 tests/bench/records.py --configs bare,all,entry --reps 1 --limit 60 \
			>$W/records.log 2>&1 ;;
	threads) $B/tests/gpu/streams >$W/threads.plain 2>&1
		NUCATRACE_BUFFER_BLOCKS=1024 NUCATRACE_BUFFER_MAX=1024 stacks threads 60 $B/tests/gpu/streams
		if cmp $W/threads.plain $W/threads.out >>$W/threads.log 2>&1; then echo "outputs equal" >>$W/threads.log; fi
		timeout 60 python3 tests/gpu/check_trace.py $W/threads/*.sqlite 1 >>$W/threads.log 2>&1
		echo "check_trace rc $?" >>$W/threads.log
		meta $W/threads/*.sqlite >>$W/threads.log 2>&1 ;;
	train) timeout 100 python3 tests/gpu/progs/torch_train.py --steps 10 >$W/train.plain 2>&1
		NUCATRACE_BUFFER_MAX=2097152 stacks train 100 python3 tests/gpu/progs/torch_train.py --steps 10
		grep -i loss $W/train.plain >$W/train.p; grep -i loss $W/train.out >$W/train.t
		if cmp $W/train.p $W/train.t >>$W/train.log 2>&1; then echo "losses equal" >>$W/train.log; fi
		meta $W/train/*.sqlite >>$W/train.log 2>&1 ;;
	checks) CHECK_LIMIT=200 timeout 330 sh tests/gpu/interposer.sh $W/checks >$W/checks.log 2>&1 ;;
	graphchecks) CHECK_LIMIT=200 ONLY="graph-early-patch pytorch-cuda-graphs" timeout 330 \
			sh tests/gpu/interposer.sh $W/graphchecks >$W/graphchecks.log 2>&1 ;;
	torchgraphs) CHECK_LIMIT=200 ONLY="pytorch-cuda-graphs" timeout 300 \
			sh tests/gpu/interposer.sh $W/torchgraphs >$W/torchgraphs.log 2>&1 ;;
	trainall) timeout 100 python3 tests/gpu/progs/torch_train.py --steps 20 >$W/trainall.plain 2>&1
		stacks trainall 100 python3 tests/gpu/progs/torch_train.py --steps 20
		grep -i loss $W/trainall.plain >$W/trainall.p; grep -i loss $W/trainall.out >$W/trainall.t
		if cmp $W/trainall.p $W/trainall.t >>$W/trainall.log 2>&1; then echo "losses equal" >>$W/trainall.log; fi
		meta $W/trainall/*.sqlite >>$W/trainall.log 2>&1 ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 30 $W/$s.log 2>/dev/null
	pack
done
exit 0
