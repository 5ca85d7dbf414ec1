#!/bin/sh
# 2026-12-03, --blocks mixed (issue 31): device calls with the build
# carried (build/: nucatrace, libnucatrace.so, tests/gpu programs, validate,
# the host's libsqlite3 and libelf in build/devlibs).
#   sh docs/results/2026-12-03-mixed-blocks/run.sh STEP...
# Steps:
#   torch     tests/gpu/entry.sh torch: calibrate, the training loop untraced,
#             then under the default policy --blocks full and --blocks mixed
#             (the reports, the shuffle check, entry_check.py side by side);
#             the mixed trace kept, trimmed (first launch of each kernel,
#             configuration and kind) and compressed, in $OUT
#   programs  our programs under mixed with window=8 (entry.sh programs)
#   graphs    PyTorch's captured step under mixed, window=2000 (entry.sh graphs)
#   wall      the training loop untraced, mixed and full, twice in turn:
#             its wall time and median step
# Call 1 ran `torch programs graphs`, call 2 `torch wall`.  Logs come back in
# $OUT/mixed.tgz.
RO=${OUT:-/tmp/out}
W=/tmp/M
rm -rf $W && mkdir -p $W
trap 'tar czf $RO/mixed.tgz --exclude="*.sqlite" --exclude="*.csv" --exclude="*.bin" --exclude="store.db*" -C /tmp M' EXIT
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
for s in "$@"; do
	case $s in
	torch)
		TORCH_MODES="full mixed" sh tests/gpu/entry.sh $W torch
		for f in $W/torch-mixed/*.sqlite; do
			[ -e "$f" ] && python3 tests/gpu/trim_trace.py "$f" "$RO/torch-mixed.sqlite.xz" 1 &&
				ls -la "$RO/torch-mixed.sqlite.xz"
		done ;;
	programs) MODE=mixed SAMPLE=window=8 sh tests/gpu/entry.sh $W programs ;;
	graphs) GRAPH_MODES=mixed sh tests/gpu/entry.sh $W graphs ;;
	wall)
		for i in 1 2; do
			for m in bare mixed full; do
				if [ $m = bare ]; then
					python3 tests/gpu/progs/torch_train.py --steps 40 >$W/wall-$m-$i.out 2>&1
				else
					build/nucatrace run --quiet --no-calibrate --blocks $m --output-dir $W/wall-$m-$i -- \
						python3 tests/gpu/progs/torch_train.py --steps 40 >$W/wall-$m-$i.out 2>&1
				fi
				echo "wall $m $i: $(grep -E '^(train|step) ' $W/wall-$m-$i.out | tr '\n' ' ')"
			done
		done 2>&1 | tee $W/wall.log ;;
	*) echo "unknown step $s" >&2 ;;
	esac
done
