#!/bin/sh
# 2026-12-05, session 35 (issue 33): can a window launch a shadow exec in
# the program's exec's place, so that the program's exec is never
# updated (the Compute Sanitizer's ~0.5 us a replay for an exec updated
# to other functions and back: ../2026-12-05-dark-cost.md)?
#   B=build/dev sh docs/results/2026-12-05-shadow-exec/run.sh STEP...
# build/dev: as in ../2026-12-05-node-runs/run.sh.
# Steps:
#   probe   progs/decode.cu, 20,000 replays, $R rounds (3) in turn:
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
# Logs in $OUT/shadow.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/S
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/shadow.tgz -C /tmp S; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs
INJ=$PWD/$B/tests/gpu/subcost.so HOOK=$PWD/$B/tests/gpu/launchhook.so
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	probe) for r in $(seq ${R:-3}); do
			for v in ${PV:-plain floor procaddr hook shadow floor-shadow floor-swapdrv}; do
				case $v in
				plain) $B/tests/gpu/decode 20000 >$W/p.out 2>&1 ;;
				shadow) $B/tests/gpu/decode 20000 shadow >$W/p.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode 20000 >$W/p.out 2>&1 ;;
				procaddr) CUDA_INJECTION64_PATH=$INJ SUBCOST=procaddr $B/tests/gpu/decode 20000 >$W/p.out 2>&1 ;;
				hook) LD_PRELOAD=$HOOK CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode 20000 >$W/p.out 2>&1 ;;
				floor-*) CUDA_INJECTION64_PATH=$INJ SUBCOST=none $B/tests/gpu/decode 20000 ${v#floor-} >$W/p.out 2>&1 ;;
				esac
				echo "$r $v $(grep -E '^(checksum|loop|tail)' $W/p.out | tr '\n' ' ')" >>$W/probe.log
				[ $r -eq 1 ] && grep -E "subcost|launchhook" $W/p.out | sed "s/^/  $v: /" >>$W/probe.log
			done
		done
		CUDA_INJECTION64_PATH=$INJ SUBCOST=procaddr timeout 200 python3 tests/gpu/progs/torch_train.py --graphs --steps 3 \
			>$W/torch.out 2>&1
		echo "torch procaddr rc=$?" >>$W/probe.log
		grep -E "subcost|^step" $W/torch.out >>$W/probe.log
		LD_PRELOAD=$HOOK CUDA_INJECTION64_PATH=$INJ SUBCOST=none timeout 200 python3 tests/gpu/progs/torch_train.py \
			--graphs --steps 3 >$W/torch-hook.out 2>&1
		echo "torch hook rc=$?" >>$W/probe.log
		grep -E "subcost|launchhook|^step" $W/torch-hook.out >>$W/probe.log ;;
	torchwall) for r in $(seq ${R:-3}); do
			for v in plain floor default; do
				t1=$(date +%s.%N)
				case $v in
				plain) timeout 300 python3 tests/gpu/progs/torch_train.py ${TW:---compile --steps 200} >$W/tw.out 2>&1 ;;
				floor) CUDA_INJECTION64_PATH=$INJ SUBCOST=none timeout 300 python3 tests/gpu/progs/torch_train.py \
						${TW:---compile --steps 200} >$W/tw.out 2>&1 ;;
				default) rm -rf $W/twd; timeout 300 $B/nucatrace run --no-calibrate --output-dir $W/twd -- python3 \
						tests/gpu/progs/torch_train.py ${TW:---compile --steps 200} >$W/tw.out 2>$W/tw-default.err ;;
				esac
				rc=$?
				echo "$r $v rc=$rc wall $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $t1 }") s $(grep -E '^(train|step [0-9]+ loss)' $W/tw.out | tail -n 2 | tr '\n' ' ')" >>$W/torchwall.log
				[ $r -eq 1 ] && [ $rc -ne 0 ] && tail -n 20 $W/tw.out >>$W/torchwall.log
				[ $v = default ] && [ $r -eq ${R:-3} ] && tail -n 8 $W/tw-default.err >>$W/torchwall.log
			done
		done
		cat $W/torchwall.log ;;
	esac
	echo "step $s: $(($(date +%s) - t0)) s" | tee -a $W/steps.log
	pack
done
cat $W/probe.log 2>/dev/null
