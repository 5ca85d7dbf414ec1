#!/bin/sh
# Why the Compute Sanitizer's block-exit patch site costs what it does
# (PAPER.md, "Which patch site costs what"), on the GPU here:
#
#   tests/gpu/sitecost.sh [BUILD [OUTDIR]]      (build, build/sitecost-DATE)
#
# Builds (if needed) the injection library, its callbacks and the test
# program (tests/gpu/sitecost.c, sitecost_patch.cu, progs/sitecost.cu),
# then, everything written under OUTDIR:
#   runs/    3 repetitions, interleaved, of the six kernels bare and with
#            the entry, exit and both sites patched (empty callbacks);
#            then timing callbacks (ts) with the program's body
#            timestamps: bare, both, enter, exit; and the exit callback
#            returning SANITIZER_PATCH_ERROR (exploratory)
#   ts/      the body and callback records of the ts runs
#   dump-*/  the kernels' code before and after patching, the callbacks'
#            code (.bin, .sass), index.txt; sc_empty.diff: the empty
#            kernel's SASS unpatched against patched; dump-exit-2: a
#            second pass at the branch targets outside the function
#   summary.txt  what this prints: launch-time table and the ts analysis
# Each step that fails says so and the rest goes on.  About 1-3 minutes
# on an H200.
# (the patched runs' environments are split into words on purpose)
# shellcheck disable=SC2046,SC2086
BUILD=${1:-build}
OUT=${2:-$BUILD/sitecost-$(date +%Y%m%d-%H%M%S)}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
NVDISASM=${NVDISASM:-$CUDA_HOME/bin/nvdisasm}
SAN_INC=${SAN_INC:-$CUDA_HOME/compute-sanitizer/include}
REPS=${SITECOST_REPS:-3}
TIMEOUT=${SITECOST_TIMEOUT:-120}

cd "$(dirname "$0")/../.." || exit 1
SO=$BUILD/tests/gpu/sitecost.so
PATCH=$BUILD/tests/gpu/sitecost_patch.fatbin
PROG=$BUILD/tests/gpu/sitecost
TS_KERNELS=empty32,empty256,empty1024,fma256,fma1024
DUMP_FUNCS=sc_empty,sc_fma,sc_triad
mkdir -p "$OUT/runs" "$OUT/ts" || exit 1

note() { printf '%s\n' "$*"; }
failed() { note "FAILED: $*"; }

# build TARGET SOURCES... -- COMMAND...: runs COMMAND when TARGET is
# missing or older than a source.
build() {
	target=$1; shift
	stale=
	[ -e "$target" ] || stale=1
	while [ "$1" != "--" ]; do
		[ -n "$(find "$1" -newer "$target" 2>/dev/null)" ] && stale=1
		shift
	done
	shift
	[ -n "$stale" ] || { note "build: $target is up to date"; return 0; }
	mkdir -p "$(dirname "$target")"
	note "build: $*"
	"$@" >>"$OUT/build.log" 2>&1 || { failed "building $target (see $OUT/build.log)"; return 1; }
}

# run NAME [VAR=VALUE...] -- PROGRAM ARGS: runs/NAME.out and .err
run() {
	name=$1; shift
	envs=
	while [ "$1" != "--" ]; do
		envs="$envs $1"
		shift
	done
	shift
	start=$(date +%s)
	# shellcheck disable=SC2086
	env $envs timeout "$TIMEOUT" "$@" >"$OUT/runs/$name.out" 2>"$OUT/runs/$name.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		failed "run $name (rc $rc, $(($(date +%s) - start)) s): $(tail -n 2 "$OUT/runs/$name.err" | tr '\n' ' ')"
	else
		note "run $name: $(($(date +%s) - start)) s"
	fi
	return $rc
}

inject() {	# SITES CB: the environment of a patched run
	printf 'CUDA_INJECTION64_PATH=%s SITECOST_PATCH=%s SITECOST_SITES=%s SITECOST_CB=%s' "$SO" "$PATCH" "$1" "$2"
}

# nvdisasm's raw-binary mode: -b/--binary SMxy, and --base-address if it has one
disasm() {	# FILE.bin BASE OUT.sass
	if [ -z "$NVD_FLAGS" ]; then
		help=$("$NVDISASM" --help 2>&1)
		printf '%s\n' "$help" >"$OUT/nvdisasm-help.txt"
		case $help in *--binary*) NVD_FLAGS="--binary SM90" ;; *) NVD_FLAGS="-b SM90" ;; esac
		case $help in *--base-address*) NVD_BASE=--base-address ;; *) NVD_BASE= ;; esac
	fi
	# shellcheck disable=SC2086
	if [ -n "$NVD_BASE" ] && [ -n "$2" ] &&
	   "$NVDISASM" $NVD_FLAGS $NVD_BASE "$2" "$1" >"$3" 2>"$3.err"; then
		return 0
	fi
	# shellcheck disable=SC2086
	"$NVDISASM" $NVD_FLAGS "$1" >"$3" 2>"$3.err" && return 0
	"$NVDISASM" --binary sm_90 "$1" >"$3" 2>>"$3.err" && return 0
	failed "nvdisasm $1: $(head -n 2 "$3.err" | tr '\n' ' ')"
	return 1
}

# a dump folder's .bin files into .sass (at their pc) and .rel.sass (at 0)
disasm_dir() {
	[ -f "$1/index.txt" ] || { failed "no dumps in $1"; return 1; }
	while read -r file pc size status rest; do
		[ "$status" = ok ] || continue
		disasm "$1/$file" "$pc" "$1/${file%.bin}.sass"
		disasm "$1/$file" "" "$1/${file%.bin}.rel.sass"
	done <"$1/index.txt"
	if [ -f "$1/sc_empty.unpatched.rel.sass" ] && [ -f "$1/sc_empty.patched.rel.sass" ]; then
		diff -u "$1/sc_empty.unpatched.rel.sass" "$1/sc_empty.patched.rel.sass" >"$1/sc_empty.diff"
		note "$1/sc_empty.diff: $(grep -c '^[-+][^-+]' "$1/sc_empty.diff") lines differ" \
		     "(unpatched $(grep -c ';' "$1/sc_empty.unpatched.rel.sass") instructions," \
		     "patched $(grep -c ';' "$1/sc_empty.patched.rel.sass"))"
	fi
}

# Branch and call targets of a patched function that lie outside it,
# as SITECOST_DUMP_RANGES (0xPC:1024,...), from its .sass at its pc.
outside_targets() {	# DIR FUNC
	line=$(grep "^$2.patched.bin " "$1/index.txt" | tail -n 1)
	[ -n "$line" ] || return 0
	set -- "$1" "$2" $line
	pc=$(($4)); size=$5
	grep -E 'BRA|JMP|JMX|CALL|BRX|RET' "$1/$2.patched.sass" 2>/dev/null |
		grep -oE '0x[0-9a-fA-F]+' | sort -u |
		while read -r t; do
			v=$((t))
			if [ "$v" -ge 65536 ] && { [ "$v" -lt "$pc" ] || [ "$v" -ge $((pc + size)) ]; }; then
				printf '0x%x:1024\n' "$v"
			fi
		done | head -n 8 | paste -sd, -
}

main() {
	note "== sitecost: $(date), output in $OUT"
	nvidia-smi -L 2>&1 | tee "$OUT/gpu.txt" || failed "nvidia-smi -L"
	{
		nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,persistence_mode --format=csv
		"$NVCC" --version | tail -n 2
		"$CUDA_HOME/compute-sanitizer/compute-sanitizer" --version
	} >>"$OUT/gpu.txt" 2>&1

	note "== build"
	build "$PATCH" tests/gpu/sitecost_patch.cu tests/gpu/sitecost.h -- \
		"$NVCC" --compile-as-tools-patch -fatbin -arch=sm_90 -I. -o "$PATCH" tests/gpu/sitecost_patch.cu
	build "$PROG" tests/gpu/progs/sitecost.cu tests/gpu/sitecost.h -- \
		"$NVCC" -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -o "$PROG" tests/gpu/progs/sitecost.cu
	build "$SO" tests/gpu/sitecost.c tests/gpu/sitecost.h -- \
		gcc -O2 -shared -fPIC -Wall -Wextra -I"$SAN_INC" -I"$CUDA_HOME/include" -I. -o "$SO" \
		tests/gpu/sitecost.c -ldl
	[ -x "$PROG" ] || { failed "no test program: nothing to run"; return 1; }

	note "== launch times: $REPS repetitions of bare, enter, exit, both (empty callbacks)"
	r=1
	while [ $r -le "$REPS" ]; do
		run "bare-r$r" -- "$PROG"
		for s in enter exit both; do
			run "$s-r$r" $(inject $s empty) -- "$PROG"
		done
		r=$((r + 1))
	done
	run "exit-error-r1" $(inject exit error) -- "$PROG"

	note "== timing callbacks and body timestamps"
	run ts-bare -- "$PROG" --reps 2 --only $TS_KERNELS --body-ts --ts-out "$OUT/ts/bare.body"
	for s in both enter exit; do
		run "ts-$s" $(inject $s ts) SITECOST_FUNCS=sc_empty_ts,sc_fma_ts SITECOST_TS_OUT="$OUT/ts/$s.cb" -- \
			"$PROG" --reps 2 --only $TS_KERNELS --body-ts --ts-out "$OUT/ts/$s.body"
	done

	note "== code dumps (CUDA_MODULE_LOADING=EAGER)"
	for s in exit enter; do
		d=$OUT/dump-$s
		mkdir -p "$d"
		run "dump-$s" $(inject $s empty) CUDA_MODULE_LOADING=EAGER SITECOST_DUMP="$d" \
			SITECOST_DUMP_FUNCS=$DUMP_FUNCS -- "$PROG" --reps 1 --only empty256
		grep 'sitecost: dump' "$OUT/runs/dump-$s.err"
		if [ -f "$d/index.txt" ] && ! grep -q ' ok ' "$d/index.txt"; then
			note "no copy of the code worked: again with the peek kernel (SITECOST_DUMP_KERNEL=1)"
			rm -f "$d/index.txt"
			run "dump-$s-kernel" $(inject $s empty) CUDA_MODULE_LOADING=EAGER SITECOST_DUMP="$d" \
				SITECOST_DUMP_FUNCS=$DUMP_FUNCS SITECOST_DUMP_KERNEL=1 -- "$PROG" --reps 1 --only empty256
			grep 'sitecost: dump' "$OUT/runs/dump-$s-kernel.err"
		fi
		disasm_dir "$d"
	done
	d=$OUT/dump-exit
	ranges=$(outside_targets "$d" sc_empty)
	if [ -n "$ranges" ]; then
		note "== second pass at the patched sc_empty's targets outside it: $ranges"
		mkdir -p "$d-2"
		kernel=0
		grep -q 'peek-kernel' "$d/index.txt" && kernel=1
		run dump-exit-2 $(inject exit empty) CUDA_MODULE_LOADING=EAGER SITECOST_DUMP="$d-2" \
			SITECOST_DUMP_FUNCS=sc_empty SITECOST_DUMP_RANGES="$ranges" SITECOST_DUMP_KERNEL=$kernel -- \
			"$PROG" --reps 1 --only empty256
		grep 'sitecost: dump' "$OUT/runs/dump-exit-2.err"
		p1=$(grep '^sc_empty.patched.bin ' "$d/index.txt" | awk '{print $2}')
		p2=$(grep '^sc_empty.patched.bin ' "$d-2/index.txt" 2>/dev/null | awk '{print $2}')
		[ "$p1" = "$p2" ] || note "WARNING: sc_empty moved between passes ($p1, $p2): the ranges are not its targets"
		disasm_dir "$d-2"
	elif [ -f "$d/sc_empty.patched.sass" ]; then
		note "no branch target outside the patched sc_empty (look at $d/sc_empty.patched.sass:" \
		     "a call through a register has none to find)"
	fi

	note "== launch times"
	python3 tests/gpu/sitecost.py times "$OUT" || failed "sitecost.py times"
	note "== where the time goes (ts runs)"
	[ -f "$OUT/ts/bare.body" ] && python3 tests/gpu/sitecost.py ts --label bare --body "$OUT/ts/bare.body"
	for s in both enter exit; do
		if [ -f "$OUT/ts/$s.body" ] && [ -f "$OUT/ts/$s.cb" ]; then
			python3 tests/gpu/sitecost.py ts --label "ts-$s" --body "$OUT/ts/$s.body" --cb "$OUT/ts/$s.cb" ||
				failed "sitecost.py ts $s"
		else
			failed "no records of ts-$s"
		fi
	done
	note "== kernel attributes (cudaFuncGetAttributes, occupancy) bare and patched"
	for s in bare enter exit both; do
		[ -f "$OUT/runs/$s-r1.out" ] && grep '^kernel' "$OUT/runs/$s-r1.out" | sed "s/^/$s: /"
	done | sort -k3,3 -k1,1 | awk '{k = $3; if (k != last) print ""; last = k; print}'
	note "== exit callback returning SANITIZER_PATCH_ERROR (exploratory)"
	grep -E '^sitecost |^checksum' "$OUT/runs/exit-error-r1.out"
	note "== done: $OUT"
}

main 2>&1 | tee "$OUT/summary.txt"
