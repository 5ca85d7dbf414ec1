#!/bin/sh
# 2026-12-05/06, sessions 35-36 (issue 33): can a window launch a shadow exec in
# the program's exec's place, so that the program's exec is never
# updated (the Compute Sanitizer's ~0.5 us a replay for an exec updated
# to other functions and back: ../2026-12-05-dark-cost.md)?
#   B=build/dev sh docs/results/2026-12-06-shadow-route/run.sh STEP...
# build/dev: as in ../2026-12-05-node-runs/run.sh.
# Steps:
#   probe   progs/decode.cu, $PN replays (20,000), $R rounds (3) in turn:
#           plain; at the floor (tests/gpu/subcost.so, SUBCOST=none);
#           SUBCOST=procaddr (cuGraphLaunch's lookup answered with a
#           counting wrapper: is it looked up after the driver loads
#           the injection library, and what does the wrapper cost);
#           hook: at the floor with tests/gpu/launchhook.so preloaded
#           (cuGraphLaunch wrapped through dlsym's answer for
#           cuGetProcAddress, before the driver is initialised);
#           decode's shadow mode (its first 250 replays launch a second
#           exec of the twins) plain and at the floor; swapdrv at the
#           floor (the twins route's cost, for comparison).  Then the
#           PyTorch training loop captured as a graph (3 steps) under
#           SUBCOST=procaddr and under hook: which route sees PyTorch's
#           graph launches?
#   torchwall  the PyTorch training loop (tests/gpu/progs/torch_train.py)
#           with $TW's options (default "--compile --steps 200": both
#           models under torch.compile(mode="reduce-overhead")) plain, at
#           the floor and under the default (nucatrace run, build $B),
#           $R rounds in turn: the program's wall time (what the user
#           waits for, from start to exit), its "train" time and its
#           losses; the default's summary
#   route   the shadow route in libnucatrace (NUCATRACE_GRAPH_ROUTE=shadow):
#           progs/decode.cu, $RN replays (400,000, then 20,000), $R
#           rounds in turn of ($RV, in this order): plain; at the floor; at the floor with the
#           exec pointed at twins and back (swapdrv); the default
#           (update route); the default with the shadow route: the loop's
#           wall time and checksum, the last round's summaries
#   gpuchecks  tests/gpu/interposer.sh, the checks $ONLY names
#           (default: the graph checks and graph-shadow)
# torchwall's variants: $TV (default plain floor default shadow).
# Logs in $OUT/shadow.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/S
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/shadow.tgz --exclude='*.sqlite' --exclude='*.csv' --exclude='checks/*/*.out' -C /tmp S; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
# meta DIR: the trace's windows, routing and drops
meta() {
	python3 - $1/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("windows", "launches_in_windows", "graph_routed", "graph_execs_shadowed",
                             "graph_execs_twinned", "dark_spans", "dark_s", "window_s")},
      "traced", db.execute("select count(*) from launches where traced = 1").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by 1").fetchall())
PY
}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs
INJ=$PWD/$B/tests/gpu/subcost.so HOOK=$PWD/$B/tests/gpu/launchhook.so
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	probe) for r in $(seq ${R:-3}); do
			for v in ${PV:-plain floor procaddr hook shadow floor-shadow floor-swapdrv}; do
				case $v in
				plain) $B/tests/gpu/decode ${PN:-20000} >$W/p.out 2>&1 ;;
				shadow) $B/tests/gpu/decode ${PN:-20000} shadow >$W/p.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode ${PN:-20000} >$W/p.out 2>&1 ;;
				procaddr) CUDA_INJECTION64_PATH=$INJ SUBCOST=procaddr $B/tests/gpu/decode ${PN:-20000} >$W/p.out 2>&1 ;;
				hook) LD_PRELOAD=$HOOK CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode ${PN:-20000} >$W/p.out 2>&1 ;;
				floor-*) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode ${PN:-20000} ${v#floor-} >$W/p.out 2>&1 ;;
				esac
				echo "$r $v $(grep -E '^(checksum|loop|tail)' $W/p.out | tr '\n' ' ')" >>$W/probe.log
				[ $r -eq 1 ] && grep -E "subcost|launchhook" $W/p.out | sed "s/^/  $v: /" >>$W/probe.log
			done
		done
		if [ -n "${PT-x}" ]; then	# PT= : no PyTorch part
		CUDA_INJECTION64_PATH=$INJ SUBCOST=procaddr timeout 200 python3 tests/gpu/progs/torch_train.py --graphs --steps 3 \
			>$W/torch.out 2>&1
		echo "torch procaddr rc=$?" >>$W/probe.log
		grep -E "subcost|^step" $W/torch.out >>$W/probe.log
		LD_PRELOAD=$HOOK CUDA_INJECTION64_PATH=$INJ SUBCOST=none timeout 200 python3 tests/gpu/progs/torch_train.py \
			--graphs --steps 3 >$W/torch-hook.out 2>&1
		echo "torch hook rc=$?" >>$W/probe.log
		grep -E "subcost|launchhook|^step" $W/torch-hook.out >>$W/probe.log
		fi ;;
	torchwall) for r in $(seq ${R:-3}); do
			for v in ${TV:-plain floor default shadow}; do
				t1=$(date +%s.%N)
				case $v in
				plain) timeout 300 python3 tests/gpu/progs/torch_train.py ${TW:---compile --steps 200} >$W/tw.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none timeout 300 python3 tests/gpu/progs/torch_train.py \
						${TW:---compile --steps 200} >$W/tw.out 2>&1 ;;
				default|shadow) rm -rf $W/twd; route=update; [ $v = shadow ] && route=shadow
					NUCATRACE_GRAPH_ROUTE=$route timeout 300 $B/nucatrace run --no-calibrate --output-dir $W/twd -- python3 \
						tests/gpu/progs/torch_train.py ${TW:---compile --steps 200} >$W/tw.out 2>$W/tw-$v.err ;;
				esac
				rc=$?
				echo "$r $v rc=$rc wall $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t1 }") s $(grep -E '^(train|step [0-9]+ loss)' $W/tw.out | tail -n 2 | tr '\n' ' ')" >>$W/torchwall.log
				[ $r -eq 1 ] && [ $rc -ne 0 ] && tail -n 20 $W/tw.out >>$W/torchwall.log
				case $v in default|shadow) [ $r -eq ${R:-3} ] && tail -n 8 $W/tw-$v.err >>$W/torchwall.log ;; esac
			done
		done
		cat $W/torchwall.log ;;
	route) for n in ${RN:-400000 20000}; do
			for r in $(seq ${R:-3}); do
				for v in ${RV:-plain floor floor-swapdrv default shadow}; do
					rm -rf $W/rd
					case $v in
					plain) $B/tests/gpu/decode $n >$W/r.out 2>&1 ;;
					floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode $n >$W/r.out 2>&1 ;;
					floor-swapdrv) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode $n swapdrv >$W/r.out 2>&1 ;;
					default) timeout 120 $B/nucatrace run --no-calibrate --output-dir $W/rd -- $B/tests/gpu/decode $n \
							>$W/r.out 2>$W/r-$v.err ;;
					shadow) NUCATRACE_GRAPH_ROUTE=shadow timeout 120 $B/nucatrace run --no-calibrate --output-dir $W/rd -- \
							$B/tests/gpu/decode $n >$W/r.out 2>$W/r-$v.err ;;
					esac
					echo "$n $r $v rc=$? $(grep -E '^(checksum|loop|tail)' $W/r.out | tr '\n' ' ')" >>$W/route.log
					[ $r -eq ${R:-3} ] && [ -d $W/rd ] && { tail -n 8 $W/r-$v.err; meta $W/rd; } >>$W/route.log 2>&1
				done
			done
		done
		cat $W/route.log ;;
	gpuchecks) ( while :; do sleep 15; pack; done ) &
		packer=$!
		BUILD=$B NUCATRACE_PROGRESS=0 ONLY=${ONLY:-"cuda-graphs graph-late-patch graph-tail-close graph-twins graph-update graph-shadow"} \
			CHECK_LIMIT=${CHECK_LIMIT:-200} timeout ${CHECKS_S:-500} sh tests/gpu/interposer.sh $W/checks >$W/gpuchecks.log 2>&1
		kill $packer
		cat $W/gpuchecks.log ;;
	esac
	echo "step $s: $(($(date +%s) - t0)) s" | tee -a $W/steps.log
	pack
done
cat $W/probe.log 2>/dev/null
