#!/bin/sh
# Issue 14 on a machine with NPROC (default 2) GPUs; not in make test (it
# needs the GPUs, PyTorch with NCCL and torchrun).  A DDP training job,
# tests/gpu/progs/torch_ddp.py, run
#   plain    untraced, for its wall times;
#   outer    nucatrace run -- torchrun --nproc-per-node N torch_ddp.py
#            (default sampling; from an empty store);
#   inner    torchrun --nproc-per-node N --no-python nucatrace run -- python3
#            torch_ddp.py (--sample all; from an empty store: the ranks'
#            `nucatrace run`s take turns to calibrate);
#   preload  LD_PRELOAD=libnucatrace.so torchrun ... --skew-us 2000, as under
#            srun or mpirun (the outer run's store; the last rank spins 2 ms
#            more per iteration: a gap the job view must find, and not put
#            on its SMs).
# Each traced run: check_ranks.py (one trace per rank, named by rank, each
# with its own GPU's map; the empty stores then hold one calibration of
# each GPU), check_trace.py on every trace, and the merged report (text,
# JSON, HTML, CSV) with its job view checked.  Then, for the repository,
# into $W/commit: the outer run's traces trimmed to two of its judged
# steps (xz), the command of a golden test of them, and summary.md (the
# commands, GPUs, versions and numbers for docs/results).
# $1: output folder (default: a new temporary one).  STEPS: iterations.
# ONLY="GLOB..." runs only the checks whose names they match.
set -u
B=${BUILD:-build}
W=${1:-$(mktemp -d)}
NPROC=${NPROC:-2}
STEPS=${STEPS:-20}
# The lent machines require NVLink multicast off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NUCATRACE_PROGRESS=0
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ROOT=$(pwd)
NT=$(cd "$B" && pwd)/nucatrace
LIB=$(cd "$B" && pwd)/libnucatrace.so
PROG=$ROOT/tests/gpu/progs/torch_ddp.py
TORCHRUN="torchrun --standalone --nproc-per-node $NPROC"
mkdir -p "$W"
CHECK_TAIL=20
. "$(dirname "$0")/check.sh"

# traces_ok DIR [STORE]: the rank traces, then each trace's invariants
traces_ok() {
	python3 "$ROOT/tests/gpu/check_ranks.py" "$1" "$NPROC" ${2:+"$2"} || return 1
	for f in "$1"/*.sqlite; do
		python3 "$ROOT/tests/gpu/check_trace.py" "$f" 1 || return 1
	done
}

# report DIR [SKEW]: the merged report in every format; one job of NPROC
# ranks, each on its own GPU with its map, some step judged; with SKEW, the
# last rank last in some step by at least 3/4 of the skew, its slow SMs
# explaining at most a tenth of that lead
report() {
	r_dir=$1
	"$NT" report --html "$r_dir/report.html" --csv "$r_dir/csv" "$r_dir"/*.sqlite >"$r_dir/report.txt" &&
		"$NT" report --json "$r_dir"/*.sqlite >"$r_dir/report.json" || return 1
	sed -n '/^job/,/^kernels/p' "$r_dir/report.txt"
	python3 - "$r_dir/report.json" "$NPROC" "${2:-0}" <<'PY' || return 1
import json, sys
r, n, skew_ns = json.load(open(sys.argv[1])), int(sys.argv[2]), 1000 * float(sys.argv[3])
assert len(r["jobs"]) == 1, f"{len(r['jobs'])} jobs"
job = r["jobs"][0]
assert [k["rank"] for k in job["ranks"]] == list(range(n)), job["ranks"]
assert len({k["uuid"] for k in job["ranks"]}) == n, "ranks share a GPU"
assert all(k["map_mean"] is not None for k in job["ranks"]), "a rank without a map"
assert job["steps_judged"] >= 1, f"no step judged: {job['why']}"
print(f"{len(job['steps'])} steps lined up by {job['aligned_by']}, {job['steps_judged']} judged, "
      f"{job['steps_complete']} complete")
if skew_ns:
    skewed = [s for s in job["steps"] if s["judged"] and s["last_rank"] == n - 1 and s["lead_ns"] >= 0.75 * skew_ns]
    assert skewed, f"no step with rank {n - 1} last by {0.75 * skew_ns:.0f} ns or more"
    s = skewed[0]
    print(f"step {s['step']}: rank {n - 1} last by {s['lead_ns']:.0f} ns, explained {s['explained']}")
    assert s["explained"] <= 0.1, "the skew put on slow SMs"
PY
	[ -s "$r_dir/csv/steps.csv" ] || return 1
	maps=$(sed -n '/<h2>SM L2 latency/,/<h2>Kernels/p' "$r_dir/report.html" | grep -c '<div><h3>')
	echo "$maps maps side by side in report.html"
	[ "$maps" -eq "$NPROC" ]
}

plain() {
	mkdir -p "$W/plain"
	$TORCHRUN "$PROG" --steps "$STEPS" >"$W/plain/out" 2>"$W/plain/err" || { tail -30 "$W/plain/err"; return 1; }
	grep train "$W/plain/out"
}

outer() {
	d=$W/outer
	rm -rf "$d" && mkdir -p "$d"
	NUCATRACE_STORE=$d/maps.db "$NT" run --output-dir "$d" -- $TORCHRUN "$PROG" --steps "$STEPS" \
		>"$d/out" 2>"$d/err" || { tail -30 "$d/err"; return 1; }
	grep -c "quick calibration" "$d/err"
	grep train "$d/out"
	traces_ok "$d" "$d/maps.db" && report "$d"
}

inner() {
	d=$W/inner
	rm -rf "$d" && mkdir -p "$d"
	NUCATRACE_STORE=$d/maps.db $TORCHRUN --no-python "$NT" run --sample all --output-dir "$d" -- \
		python3 "$PROG" --steps 4 >"$d/out" 2>"$d/err" || { tail -30 "$d/err"; return 1; }
	grep -c "quick calibration" "$d/err"
	traces_ok "$d" "$d/maps.db" && report "$d"
}

preload() {
	d=$W/preload
	rm -rf "$d" && mkdir -p "$d"
	NUCATRACE_STORE=$W/outer/maps.db NUCATRACE_OUTPUT_DIR=$d LD_PRELOAD=$LIB $TORCHRUN "$PROG" \
		--steps "$STEPS" --skew-us 2000 >"$d/out" 2>"$d/err" || { tail -30 "$d/err"; return 1; }
	traces_ok "$d" && report "$d" 2000
}

# The outer run's traces, each trimmed to the two consecutive judged steps
# with the fewest launches (its own launch numbers), for tests/data/traces;
# a golden test's command; the numbers for docs/results.
commit() {
	c=$W/commit
	rm -rf "$c" && mkdir -p "$c/0334-report-ranks-h200"
	python3 - "$W/outer/report.json" "$c" "$ROOT" <<'PY' || return 1
import json, os, subprocess, sys
r, out = json.load(open(sys.argv[1])), sys.argv[2]
job = r["jobs"][0]
steps = job["steps"]
pairs = [k for k in range(1, len(steps) - 1) if steps[k]["judged"] and steps[k + 1]["judged"]]
assert pairs, "no two consecutive judged steps after the first"
k = min(pairs, key=lambda k: steps[k]["step_launches"] + steps[k + 1]["step_launches"])
for i, rank in enumerate(job["ranks"]):
    a, b = steps[k - 1]["ranks"][i]["launch"], steps[k + 1]["ranks"][i]["launch"]
    name = f"h200-ddp-rank{rank['rank']}-{rank['uuid'][4:12]}.sqlite"
    subprocess.run(["python3", os.path.join(sys.argv[3], "tests/gpu/trim_trace.py"), "--range", f"{a}-{b}",
                    r["traces"][rank["trace"]]["path"], os.path.join(out, name)], check=True)
    subprocess.run(["xz", "-9", os.path.join(out, name)], check=True)
    print(f"rank {rank['rank']}: {name}.xz, launches {a} to {b} (steps {k + 1} and {k + 2})")
PY
	{
		echo "# The two ranks of a real DDP job on two H200s (tests/gpu/ranks.sh, outer run),"
		echo "# trimmed to two judged steps (tests/data/traces/README.md): the job view."
		n=0
		for f in "$c"/*.xz; do
			echo "xz -dc \$DATA/traces/$(basename "$f") >rank$n.sqlite"
			n=$((n + 1))
		done
		echo "\$NT report --top 3 rank*.sqlite"
		echo "\$NT report --json rank*.sqlite >r.json"
		echo "if [ \"\${UPDATE:-}\" = 1 ]; then cp r.json \$CLI/t/0334-report-ranks-h200/report.json; fi"
		echo "cmp r.json \$CLI/t/0334-report-ranks-h200/report.json && echo \"json: the same as report.json\""
	} >"$c/0334-report-ranks-h200/cmd"
	{
		echo "# tests/gpu/ranks.sh, $(date -u +%FT%TZ)"
		echo; echo '```'
		nvidia-smi -L
		nvidia-smi --query-gpu=uuid,name,driver_version,clocks.sm,temperature.gpu --format=csv
		python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
		echo '```'
		for run in plain outer inner preload; do
			echo; echo "## $run"; echo; echo '```'
			grep -h "train\|step .* ms" "$W/$run/out" 2>/dev/null
			[ -f "$W/$run/report.txt" ] && sed -n '/^job/,/^kernels/p' "$W/$run/report.txt"
			echo '```'
		done
	} >"$c/summary.md"
	ls -la "$c"
}

check plain plain
check outer outer
check inner inner
check preload preload
check commit commit
echo "ranks: $pass passed, $fail failed (outputs in $W)"
[ "$fail" -eq 0 ]
