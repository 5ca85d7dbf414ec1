#!/bin/sh
# 2026-12-03, session 28 (issues 33 and 32), one device call:
#   B=build/dev sh docs/results/2026-12-03-graph-twins/run.sh STEP...
# build/dev: stripped copies of nucatrace and libnucatrace.so (HEAD),
# the tests/gpu programs, graphtwin_kernels.cubin (nvcc -cubin -arch=sm_90
# here), sitecost_patch.fatbin, and build/devlibs.
# Steps:
#   twin      tests/gpu/graphtwin.c built there against NVIDIA's headers,
#             every route, eager and lazy module loading, one process each
#   checks    tests/gpu/interposer.sh's checks from pytorch-cuda-graphs-default
#             on (session 27's call 2 stopped before them)
#   gpucap    the training loop (30 steps, --scale 4) untraced, under the default, and
#             under the default with gpu=0.05 and gpu=0.5: wall time, losses,
#             windows and traced launches
#   chasecap  tests/gpu/progs/bench.cu's L2 chase, 3,000 launches of about
#             0.6 ms: untraced, under the default, and the default with
#             gpu=0.05 (a window's phase then closes after about 80 launches)
#   ranks     make bench-report's job case at issue 32's size: 16 ranks x 10M
#             records, reported with 1 thread and with 16 (CPU only)
#   gchecks   tests/gpu/interposer.sh's graph checks: cuda-graphs,
#             graph-late-patch, graph-early-patch, graph-tail-close,
#             graph-twins, pytorch-cuda-graphs-default
#   decodecost progs/decode.cu (20,000 replays) plain, at the floor
#             (tests/gpu/subcost.so) and under the default, 5 rounds in
#             turn: the replays' wall time
#   torchtwins the training loop captured as a graph (--graphs, 300 steps)
#             untraced and under the default: losses, nodes traced, twins
# Logs in $OUT/twins.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/twins.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="store.db*" --exclude="checks/*/*.out" -C /tmp P; }
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
    print(path.split("/")[-1], "launches", q("select count(*) from launches"),
          "traced", q("select count(*) from launches where traced = 1"),
          "entry-only", q("select count(*) from launches where traced = 1 and entry_only = 1"))
    for k, v in db.execute("select key, value from meta where key like 'window%' or key like 'room%' or key = 'sample'"):
        print(" ", k, v)
    for r in db.execute("select 'drop', reason, sum(count) from drops group by reason"):
        print(" ", *r)
PY
}
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	twin) gcc -O2 -Wall -I$CUDA/include -I$CUDA/compute-sanitizer/include -o $W/graphtwin tests/gpu/graphtwin.c \
			-L$CUDA/lib64/stubs -lcuda -L$CUDA/compute-sanitizer -lsanitizer-public \
			-Wl,-rpath,$CUDA/compute-sanitizer >$W/twin.log 2>&1
		for load in EAGER LAZY; do
			for r in plain reinst twin retarget clone-retarget update twin-cycle tally; do
				CUDA_MODULE_LOADING=$load timeout 60 $W/graphtwin $B/tests/gpu/graphtwin_kernels.cubin \
					$B/tests/gpu/sitecost_patch.fatbin $r >>$W/twin.log 2>&1
				echo "== $load $r: exit $?" >>$W/twin.log
			done
		done ;;
	checks) CHECK_LIMIT=200 ONLY="pytorch-cuda-graphs-default train-* triad-* default-sampling pytorch-gemm kernels-mode-* multi-gpu run-calibrates-first injection-path threads-streams" \
			timeout 420 sh tests/gpu/interposer.sh $W/checks >$W/checks.log 2>&1 ;;
	gpucap) T=tests/gpu/progs/torch_train.py
		for v in plain default g005 g05 plain2 default2 g0052 g052; do
			case $v in
			plain*) p= ;;
			default*) p=all,window=1000,skip=1000,blocks=1000000,budget=1 ;;
			g005*) p=all,window=1000,skip=1000,blocks=1000000,budget=1,gpu=0.05 ;;
			g05*) p=all,window=1000,skip=1000,blocks=1000000,budget=1,gpu=0.5 ;;
			esac
			ts=$(date +%s%N)
			if [ -z "$p" ]; then
				timeout 120 python3 $T --steps 30 --scale 4 >$W/gpucap-$v.out 2>$W/gpucap-$v.err
			else
				timeout 120 $B/nucatrace run --no-calibrate --sample $p --output-dir $W/gpucap-$v -- \
					python3 $T --steps 30 --scale 4 >$W/gpucap-$v.out 2>$W/gpucap-$v.err
			fi
			rc=$?
			te=$(date +%s%N)
			echo "== $v rc $rc wall $(( (te - ts) / 1000000 )) ms" >>$W/gpucap.log
			grep -i "loss" $W/gpucap-$v.out | tail -1 >>$W/gpucap.log
			grep -E "^(train|step [0-9.]+ ms)" $W/gpucap-$v.out >>$W/gpucap.log
			tail -n 8 $W/gpucap-$v.err >>$W/gpucap.log
			[ -z "$p" ] || summary $W/gpucap-$v >>$W/gpucap.log 2>&1
		done ;;
	chasecap) for v in plain default g005; do
			case $v in
			plain) p= ;;
			default) p=all,window=1000,skip=1000,blocks=1000000,budget=1 ;;
			g005) p=all,window=1000,skip=1000,blocks=1000000,budget=1,gpu=0.05 ;;
			esac
			ts=$(date +%s%N)
			if [ -z "$p" ]; then
				$B/tests/gpu/bench chase 3000 >$W/chasecap-$v.out 2>$W/chasecap-$v.err
			else
				$B/nucatrace run --no-calibrate --sample $p --output-dir $W/chasecap-$v -- \
					$B/tests/gpu/bench chase 3000 >$W/chasecap-$v.out 2>$W/chasecap-$v.err
			fi
			te=$(date +%s%N)
			echo "== $v rc $? wall $(( (te - ts) / 1000000 )) ms" >>$W/chasecap.log
			cat $W/chasecap-$v.out >>$W/chasecap.log
			tail -n 4 $W/chasecap-$v.err >>$W/chasecap.log
			[ -z "$p" ] || summary $W/chasecap-$v >>$W/chasecap.log 2>&1
		done ;;
	gchecks) CHECK_LIMIT=200 ONLY="${GCHECKS:-cuda-graphs graph-late-patch graph-early-patch graph-tail-close graph-twins pytorch-cuda-graphs-default}" \
			timeout 400 sh tests/gpu/interposer.sh $W/gchecks >$W/gchecks.log 2>&1 ;;
	decodecost) for r in 1 2 3 4 5; do
			for v in plain floor default; do
				case $v in
				plain) $B/tests/gpu/decode 20000 >$W/dc.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$PWD/$B/tests/gpu/subcost.so $B/tests/gpu/decode 20000 >$W/dc.out 2>&1 ;;
				default) $B/nucatrace run --no-calibrate --output-dir $W/dc-$r -- $B/tests/gpu/decode 20000 \
						>$W/dc.out 2>$W/dc-$r.err ;;
				esac
				echo "$r $v $(grep -E '^(checksum|loop)' $W/dc.out | tr '\n' ' ')" >>$W/decodecost.log
			done
		done
		tail -n 3 $W/dc-5.err >>$W/decodecost.log
		summary $W/dc-5 >>$W/decodecost.log 2>&1 ;;
	torchtwins) T=tests/gpu/progs/torch_train.py
		timeout 150 python3 $T --graphs --steps 300 >$W/tt-plain.out 2>&1
		timeout 200 $B/nucatrace run --no-calibrate --output-dir $W/tt -- python3 $T --graphs --steps 300 \
			>$W/tt.out 2>$W/tt.err
		echo "traced rc $?" >>$W/torchtwins.log
		grep -E '^step [0-9]+ loss' $W/tt-plain.out >$W/tt.p; grep -E '^step [0-9]+ loss' $W/tt.out >$W/tt.t
		if cmp $W/tt.p $W/tt.t >>$W/torchtwins.log 2>&1; then echo "losses equal" >>$W/torchtwins.log; fi
		grep -E '^(train|step [0-9.]+ ms)' $W/tt-plain.out $W/tt.out >>$W/torchtwins.log
		tail -n 12 $W/tt.err >>$W/torchtwins.log
		summary $W/tt >>$W/torchtwins.log 2>&1
		python3 - $W/tt/*.sqlite >>$W/torchtwins.log 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("twins", "graph_execs", "graph_execs_twinned", "twin_images", "twin_image_bytes",
                             "twin_image_kept", "module_s", "modules")})
print("graph nodes traced", db.execute("select count(*), count(distinct graph_launch) from launches where traced = 1 and graph is not null").fetchone())
PY
		;;
	ranks) nproc >$W/ranks.log
		BUILD=$B RANK_BLOCKS=10000000 timeout 560 sh tests/bench/report.sh >>$W/ranks.log 2>&1
		echo "report.sh rc $?" >>$W/ranks.log ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 40 $W/$s.log 2>/dev/null
	pack
done
exit 0
