#!/bin/sh
# Where does the window fault happen?  (issue 33; written in session 39,
# run in session 40: docs/results/2026-12-07-window-fault.md, where no
# failed run wrote a core dump.)  PyTorch's captured step
# (tests/gpu/progs/torch_train.py --graphs --steps 10) under a window in
# its warm-up (all,window=1000,skip=1000,budget=1, interposer.sh's policy)
# dies now and then with "misaligned address", under either graph route
# (docs/results/2026-12-06-switch-settle.md).  Each run here writes a
# light GPU core dump on an exception (CUDA_ENABLE_COREDUMP_ON_EXCEPTION)
# and reads it with cuda-gdb: the kernel, the function and PC of the
# faulting warp, its registers (our callback reading its data, or the
# program's code?).  A variant with :lb runs with CUDA_LAUNCH_BLOCKING=1,
# every launch waited for (the launch that fails is then about the
# trace's last); with :eager, CUDA_MODULE_LOADING=EAGER (no kernel loaded
# lazily into a patched module); with :load, NUCATRACE_LOAD_BEFORE_PATCH=1
# (the same, by loading a module's functions before it is patched); with
# :null, NUCATRACE_PATCH_NULL=1 (the same patching, callbacks that do
# nothing: our callbacks' memory accesses, or the patching?); with
# :settle, NUCATRACE_LAZY_SETTLE=1 (a function not loaded yet whose module
# is patched loaded at the launch's entry, after a wait for the GPU).
# $PR rounds (10) of the variants $TV (default
# old-update oldguard-update guard-update), one run each, interleaved:
# BUILD-ROUTE[-BLOCKS], ROUTE the graph route (NUCATRACE_GRAPH_ROUTE),
# BLOCKS the patch sites (NUCATRACE_BLOCKS, default mixed), BUILD the
# stripped build (nucatrace, libnucatrace.so) in $B/BUILD, or $B for head;
# session 39 made, in build/slim:
#   head      2c64b24: a wait for the device before switches
#   guard     4ca41c5: the same, the callbacks reading only marked
#             descriptors (kernels/blockrec.h nt_desc_ours)
#   old       e80ccf9: before the wait (failed 7 of 41 runs)
#   oldguard  e80ccf9 with 4ca41c5 applied
# with the libraries in $B/devlibs.  Per run: rc, seconds, the error, the
# trace's meta (switch_overlaps: launches begun during another thread's
# switch; settles: waits before switches), where block copies began to
# fail, the core's reading.  Logs in $OUT/fault.tgz, packed each round;
# copy this script beside them in docs/results/ once run.
#   B=build/slim PR=8 timeout 570 sh tests/gpu/window_fault.sh
RO=${OUT:-/tmp/out}
W=/tmp/F
rm -rf $W && mkdir -p $W/cores
B=${B:-build}
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:$PWD/$B/devlibs
GDB=$(command -v cuda-gdb || echo ${CUDA_HOME:-/usr/local/cuda}/bin/cuda-gdb)
ls -la $GDB >>$W/gpu.txt 2>&1
for r in $(seq ${PR:-10}); do
	for v in ${TV:-old-update oldguard-update guard-update}; do
		b=$B/${v%%-*}
		[ ${v%%-*} = head ] && b=$B
		lb=0	# :lb, CUDA_LAUNCH_BLOCKING=1 (every launch waited for)
		ml=LAZY	# :eager, CUDA_MODULE_LOADING=EAGER (every kernel loaded at the start)
		case $v in *:lb*) lb=1 ;; esac
		case $v in *:eager*) ml=EAGER ;; esac
		lp=0	# :load, NUCATRACE_LOAD_BEFORE_PATCH=1 (a module's functions loaded before it is patched)
		case $v in *:load*) lp=1 ;; esac
		pn=0	# :null, NUCATRACE_PATCH_NULL=1 (callbacks that do nothing, nothing recorded)
		case $v in *:null*) pn=1 ;; esac
		ls=0	# :settle, NUCATRACE_LAZY_SETTLE=1
		case $v in *:settle*) ls=1 ;; esac
		rb=${v%%:*}
		rb=${rb#*-}	# ROUTE or ROUTE-BLOCKS (NUCATRACE_BLOCKS; default mixed)
		bl=mixed
		[ "$rb" = "${rb%-*}" ] || bl=${rb#*-}
		rm -rf $W/t && mkdir -p $W/t
		t0=$(date +%s)
		CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_ENABLE_LIGHTWEIGHT_COREDUMP=1 \
		CUDA_COREDUMP_FILE=$W/cores/core.$r.$v CUDA_LAUNCH_BLOCKING=$lb CUDA_MODULE_LOADING=$ml NUCATRACE_LOAD_BEFORE_PATCH=$lp NUCATRACE_PATCH_NULL=$pn NUCATRACE_LAZY_SETTLE=$ls NUCATRACE_GRAPH_ROUTE=${rb%%-*} NUCATRACE_BLOCKS=$bl \
		timeout 200 $b/nucatrace run --no-calibrate --sample all,window=1000,skip=1000,budget=1 \
			--output-dir $W/t -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 >$W/t/out 2>$W/t/err
		rc=$?
		{
			echo "== $r $v rc=$rc $(($(date +%s) - t0)) s; last: $(grep -E "^step [0-9]+ loss" $W/t/out | tail -n 1)"
			grep -E -m3 'CUDA error|Error' $W/t/err
			[ $rc = 0 ] || grep -E -A1 '^  File ' $W/t/err | tail -n 8
			grep -E 'sampling window|callbacks off|graph exec|dropped, by|waits for the GPU|another thread' $W/t/err
			python3 - $W/t/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "graph_routed", "settles", "switch_overlaps", "lazy_loads", "lazy_into_patched", "lazy_into_patched_at", "lazy_settled", "lazy_settled_kernels")},
      "graph nodes traced", db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0])
first = db.execute("select min(launch) from drops where reason like '%could not be copied%'").fetchone()[0]
if first is not None:
    name = lambda k: (db.execute("select coalesce(demangled, mangled) from kernels where kernel = ?", (k,)).fetchone() or ["?"])[0][:90]
    for l, k, r in db.execute("select launch, kernel, reason from drops where launch between ? and ? order by launch",
                              (first - 30, first + 2)):
        print("  drop", l, r[:50], name(k))
    for row in db.execute("select launch, kernel, grid_x, stream, graph, traced, entry_only from launches "
                          "where launch between ? and ? order by launch", (first - 12, first + 2)):
        print("  launch", row[0], *row[2:], name(row[1]))
if first is not None:	# under CUDA_LAUNCH_BLOCKING the failing launch is about the last
    for row in db.execute("select launch, kernel, grid_x, stream, traced, entry_only from launches "
                          "order by launch desc limit 4"):
        print("  last launch", row[0], *row[2:], name(row[1]))
PY
			for c in $W/cores/core.$r.$v*; do
				[ -f "$c" ] || continue
				echo "-- core $c $(stat -c %s $c) bytes"
				timeout 120 $GDB -batch -ex "target cudacore $c" -ex "info cuda kernels" -ex "bt" \
					-ex 'x/6i $pc-0x20' -ex "info registers" 2>&1 | head -n 80
			done
		} >>$W/diag.log 2>&1
		rm -f $W/cores/*
	done
	tar czf $RO/fault.tgz --exclude='*.sqlite' -C /tmp F	# (each round)
done
grep -E '^(==|--)' $W/diag.log
tar czf $RO/fault.tgz --exclude='*.sqlite' -C /tmp F
