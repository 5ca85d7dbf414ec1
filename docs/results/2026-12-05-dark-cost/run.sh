#!/bin/sh
# 2026-12-05, session 32 (issue 33): where the default's cost on a long
# decode loop goes between its sampling windows.  On 2026-12-04 the
# default ran 400,000 replays 6.6-6.9% slower than the floor while its
# windows took about 70 ms of the 270 (2026-12-04-graph-recheck.md).
#   B=build/dev sh docs/results/2026-12-05-dark-cost/run.sh STEP...
# build/dev as in 2026-12-04-node-cost/run.sh (this commit's build).
# Steps:
#   dark    progs/decode.cu, $N replays (default 200,000), $R rounds
#           (default 3) in turn of: plain; tests/gpu/subcost.so with
#           SUBCOST none (the floor), res-dark, exec-created, driver-one
#           and dark (what libnucatrace keeps on between windows); the
#           default.  Each prints the loop's wall time and that of its
#           last quarter (long after the windows).
#   why     the same loop, $R rounds in turn of: plain; plain with the
#           exec updated once from its own graph (decode N selfupdate),
#           and then uploaded (selfupload);
#           the floor and the default, and `once`: the default's first
#           window and no other (max=1000: sampling over, callbacks off
#           for good); and the four kernels launched on the stream
#           (decode N streams) plain, at the floor, under the default and
#           once.
#   swap    the same loop, $R rounds in turn of: plain; plain with the
#           exec pointed at twins of its kernels and back before the first
#           replay (decode N swap), then uploaded (swapupload), and as
#           nucatrace points it (swapdrv, swapdrvupload); the floor and
#           once; the floor
#           with swapdrv; and onceu: once with $U's nucatrace (default
#           build/unl: the twins unloaded as a window closes)
#   floorswap  at the floor (no nucatrace): the exec updated from its own
#           graph, pointed at twins and back (swap, swapdrv) and then
#           uploaded; plain and the floor beside them
#   long    $NL replays (default 400,000) plain, at the floor, at the floor
#           with the exec pointed at twins and back (swapdrv) and under the
#           default, $R rounds in turn: what the default costs a long loop
# Logs in $OUT/dark.tgz, packed after each step.
RO=${OUT:-/tmp/out}
W=/tmp/P
rm -rf $W && mkdir -p $W
pack() { tar czf $RO/dark.tgz --exclude="*.sqlite" -C /tmp P; }
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
B=${B:-build}
CUDA=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA/lib64:$PWD/$B/devlibs NUCATRACE_PROGRESS=0 BUILD=$B
export NUCATRACE=$PWD/$B/nucatrace
N=${N:-200000}
# one ROUND HOW MODE N LOG: decode N [MODE] plain, under the default, or
# with subcost.so enabling HOW; its checksum and times into $W/LOG.log
one() {
	rm -rf $W/d
	case $2 in
	plain) timeout 100 $B/tests/gpu/decode $4 $3 >$W/d.out 2>&1 ;;
	default) timeout 100 $B/nucatrace run --no-calibrate --output-dir $W/d -- \
			$B/tests/gpu/decode $4 $3 >$W/d.out 2>$W/d.err ;;
	onceu) timeout 100 ${U:-build/unl}/nucatrace run --no-calibrate --output-dir $W/d \
			--sample all,window=1000,skip=1000,blocks=1000000,max=1000 -- \
			$B/tests/gpu/decode $4 $3 >$W/d.out 2>$W/d.err ;;
	once) timeout 100 $B/nucatrace run --no-calibrate --output-dir $W/d \
			--sample all,window=1000,skip=1000,blocks=1000000,max=1000 -- \
			$B/tests/gpu/decode $4 $3 >$W/d.out 2>$W/d.err ;;
	*) SUBCOST=$2 CUDA_INJECTION64_PATH=$PWD/$B/tests/gpu/subcost.so timeout 100 \
			$B/tests/gpu/decode $4 $3 >$W/d.out 2>$W/d.err ;;
	esac
	echo "$1 $2${3:+:$3} rc $? $(grep -E '^(checksum|loop|tail)' $W/d.out | tr '\n' ' ')" >>$W/$5.log
}
for s in "$@"; do
	t0=$(date +%s)
	case $s in
	dark) for r in $(seq ${R:-3}); do
			for v in plain none res-dark exec-created driver-one dark default; do
				one $r $v "" $N dark
			done
			tail -n 14 $W/d.err >>$W/dark.log
		done ;;
	long) for r in $(seq ${R:-3}); do
			for v in plain: none: none:swapdrv default:; do
				one $r ${v%%:*} "${v#*:}" ${NL:-400000} long
			done
			tail -n 14 $W/d.err >>$W/long.log
		done ;;
	why) for r in $(seq ${R:-3}); do
			for v in plain: plain:selfupdate plain:selfupload none: default: once: plain:streams \
					none:streams default:streams once:streams; do
				one $r ${v%%:*} "${v#*:}" $N why
			done
			tail -n 14 $W/d.err >>$W/why.log
		done ;;
	swap) for r in $(seq ${R:-3}); do
			for v in plain: plain:swap plain:swapupload plain:swapdrv plain:swapdrvupload none: once: onceu: none:swapdrv; do
				one $r ${v%%:*} "${v#*:}" $N swap
			done
		done ;;
	floorswap) for r in $(seq ${R:-3}); do
			for v in plain: none: none:selfupdate none:swap none:swapupload none:swapdrv \
					none:swapdrvupload; do
				one $r ${v%%:*} "${v#*:}" $N floorswap
			done
		done ;;
	esac
	echo "== $s: rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 60 $W/$s.log 2>/dev/null
	pack
done
exit 0
