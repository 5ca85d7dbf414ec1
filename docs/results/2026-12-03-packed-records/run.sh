#!/bin/sh
# 2026-12-03, packed block records (issue 32 part 1): device calls with the
# build carried (build/: nucatrace, libnucatrace.so, tests/gpu programs,
# validate, the host's libsqlite3, libelf and libzstd in build/devlibs).
#   sh docs/results/2026-12-03-packed-records/run.sh STEP...
# Steps:
#   records   tests/bench/records.py: the triad loop (40 launches, 10.5M
#             block records) bare, at the Compute Sanitizer's floor, under
#             --sample all in full and entry-only, in turns ($REPS, 1)
#   triad     the triad loop of 400 launches (105M records) under --sample
#             all once, its summary
#   trainbench  tests/bench/interposer.py --only train: the PyTorch training
#             loop bare, under the default and under --sample all
#   train     one default and one all run of the loop kept, their summaries, the traces
#             checked (check_trace.py) and reported, and the default's
#             trace kept as train-default.sqlite.xz (for tests/data)
#   checks    tests/gpu/interposer.sh: our test programs and PyTorch traced,
#             outputs equal to untraced runs, every trace's invariants
#   sweep     tests/bench/stream_sweep.py: the default policy on a
#             STREAM-style size sweep against plain and the floor
# Logs in $OUT/packed.tgz, packed after each step.  Call 1 ran `records
# train` with records.py at 400 launches and 3 repetitions (200 s limit)
# and the logs packed only at exit; call 2 `records train triad` with the
# train step's check_trace.py unbounded; call 3 `triad train` as here.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/packed.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="*.bin" --exclude="store.db*" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs NUCATRACE_PROGRESS=0 BUILD=build
export NUCATRACE=$PWD/build/nucatrace
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	records) timeout 120 python3 tests/bench/records.py --launches 40 --reps ${REPS:-1} >$W/records.log 2>&1 ;;
	triad) ( time timeout 90 build/nucatrace run --no-calibrate --sample all --output-dir $W/triad -- \
			build/tests/gpu/triad 400 ) >$W/triad.log 2>&1
		ls -l $W/triad >>$W/triad.log ;;
	trainbench) timeout 200 python3 tests/bench/interposer.py --only train --configs bare,default,all --reps 3 \
			>$W/trainbench.log 2>&1 ;;
	train) for p in default all; do
			pol=; [ $p = all ] && pol="--sample all"
			( time timeout 90 build/nucatrace run --no-calibrate $pol --output-dir $W/train-$p -- \
				python3 tests/gpu/progs/torch_train.py --steps 30 ) >$W/train-$p.out 2>&1
			ls -l $W/train-$p/*.sqlite >>$W/train-$p.out
			[ $p = all ] && continue	# 10M records: too many for check_trace.py's Python
			timeout 60 python3 tests/gpu/check_trace.py $W/train-$p/*.sqlite 1 --smem-may-be-unknown >>$W/train-$p.out 2>&1
			( time timeout 40 build/nucatrace report --threads 1 $W/train-$p/*.sqlite ) >$W/train-$p.report 2>&1
			( time timeout 30 build/nucatrace export --blocks -o $W/train-$p/blocks.csv $W/train-$p/*.sqlite ) >>$W/train-$p.out 2>&1
		done
		xz -9c $W/train-default/*.sqlite >$RO/train-default.sqlite.xz ;;
	checks) CHECK_LIMIT=300 timeout 420 sh tests/gpu/interposer.sh $W/checks >$W/checks.log 2>&1 ;;
	sweep) timeout 300 python3 tests/bench/stream_sweep.py --reps 3 >$W/sweep.log 2>&1 ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 25 $W/$s.log 2>/dev/null
	pack
done
for p in default all; do [ -f $W/train-$p.out ] && { echo "== train-$p"; tail -n 14 $W/train-$p.out; tail -n 6 $W/train-$p.report; }; done
exit 0
