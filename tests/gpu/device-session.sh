#!/bin/sh
# Used on the lent H200 (docs/results/): runs a carried build, records the
# GPU's identity with every result, and runs the steps named on the
# command line, each with its log under $OUT:
#   test-gpu      make test-gpu's two scripts (calibrate, interposer)
#   demo          make demo's GPU branch (calibrate, trace, report)
#   fingerprint   the committed maps into a store, then nucatrace fingerprint;
#                 two full maps of this GPU, for tests/data/maps
#   fp-diag       does a chain map depend on where its buffer lands? full and
#                 quick maps, one taken while another process holds 20 GiB
#   bench         make bench's GPU scripts (calibrate speed, tracing overhead)
#   validate      the validation workloads (tests/gpu/validate.sh), kept as validate.tgz
#   torch         trace the PyTorch GEMM loop (tests/gpu/progs/torch_bench.py), report
#   localize      nucatrace localize --eval (after a full calibration)
#   fp-check      nucatrace fingerprint against the committed maps plus a full
#                 calibration of this GPU taken first
#   startup       N starts of /bin/true bare, preloaded, and under nucatrace run
#   stability M   nucatrace calibrate --stability M
#   probecost     the probe effect per SM: tests/gpu/progs/probecost.cu untraced
#                 and traced, tests/gpu/probecost.py
#   subcost       what attaching to the Compute Sanitizer costs the triad with
#                 nothing patched, domain by domain (tests/gpu/subcost.sh)
#   graphs        PyTorch's captured training step traced (--sample all), one
#                 replay kept as torch-graphs-replay.sqlite.xz, its report; the
#                 bench's train-graphs workload (what tracing graph launches costs)
#   ranks         a DDP job on every GPU here traced per rank three ways, merged
#                 reports, trimmed traces and a summary (tests/gpu/ranks.sh),
#                 kept as ranks.tgz
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
B=${BUILD:-build}
NT=$B/nucatrace
if ldd "$NT" | grep -q "not found"; then
	export LD_LIBRARY_PATH=$PWD/$B/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } >"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
mkdir -p /tmp/nt-store
export NUCATRACE_STORE=/tmp/nt-store/maps.db NUCATRACE_PROGRESS=0
step() {	# step NAME COMMAND...: log to $OUT/NAME.log, time it
	s_name=$1; shift
	s_t0=$(date +%s)
	"$@" >"$OUT/$s_name.log" 2>&1
	s_rc=$?
	echo "== $s_name: rc $s_rc, $(( $(date +%s) - s_t0 )) s"
	tail -40 "$OUT/$s_name.log"
}
while [ $# -gt 0 ]; do
	case $1 in
	test-gpu) step calibrate-checks env NUCATRACE="$NT" tests/gpu/run.sh
		step interposer-checks env BUILD="$B" CHECK_LIMIT="${CHECK_LIMIT:-300}" tests/gpu/interposer.sh /tmp/interposer ;;
	demo) step demo sh -c "'$NT' calibrate --quiet && '$NT' map show && rm -rf '$OUT/demo' && mkdir -p '$OUT/demo' &&
		'$NT' run --sample all --output-dir '$OUT/demo' -- '$B/tests/gpu/bench' chase 20 &&
		'$NT' report --html '$OUT/demo/report.html' '$OUT'/demo/*.sqlite" ;;
	fingerprint) step fingerprint sh -c "NUCATRACE_STORE='$OUT/fp.db' '$NT' map import tests/data/maps/*.json >/dev/null &&
		NUCATRACE_STORE='$OUT/fp.db' '$NT' fingerprint &&
		'$NT' calibrate --no-store --quiet --output '$OUT/map-a.json' &&
		'$NT' calibrate --no-store --quiet --output '$OUT/map-b.json'" ;;
	fp-diag) step fp-diag sh -c "'$NT' calibrate --quiet --output '$OUT/full.json' &&
		'$NT' calibrate --quick --no-store --quiet --output '$OUT/quick.json' &&
		'$NT' map import tests/data/maps/*.json >/dev/null &&
		'$NT' fingerprint --output '$OUT/fpq' &&
		{ python3 -c 'import torch, time; x = torch.empty(20 << 30, dtype=torch.uint8, device=\"cuda\"); time.sleep(12)' & sleep 6;
		  '$NT' calibrate --quick --no-store --quiet --output '$OUT/quick-shifted.json'; wait; } &&
		'$NT' fingerprint --eval tests/data/maps/*.json '$OUT/full.json' '$OUT/quick.json' '$OUT/quick-shifted.json' '$OUT'/fpq/*.json" ;;
	bench) step bench-calibrate env NUCATRACE="$NT" tests/bench/calibrate.sh
		step bench-interposer env BUILD="$B" python3 tests/bench/interposer.py ;;
	validate) step validate env BUILD="$B" tests/gpu/validate.sh /tmp/validate
		tar czf "$OUT/validate.tgz" -C /tmp validate ;;
	torch) step torch sh -c "rm -rf /tmp/torch && mkdir -p /tmp/torch &&
		'$NT' run --sample all --output-dir /tmp/torch -- python3 tests/gpu/progs/torch_bench.py &&
		'$NT' report /tmp/torch/*.sqlite && '$NT' report --json /tmp/torch/*.sqlite >/tmp/torch/report.json &&
		tar czf '$OUT/torch.tgz' -C /tmp torch" ;;
	localize) step localize sh -c "'$NT' calibrate --quiet && '$NT' localize --eval &&
		'$NT' localize --eval --json >'$OUT/localize.json'" ;;
	fp-check) step fp-check sh -c "NUCATRACE_STORE=/tmp/fp.db '$NT' calibrate --quiet &&
		NUCATRACE_STORE=/tmp/fp.db '$NT' map import tests/data/maps/*.json >/dev/null &&
		NUCATRACE_STORE=/tmp/fp.db '$NT' fingerprint --output /tmp/fpq &&
		cp /tmp/fpq/*.json '$OUT/fingerprint-quick.json'" ;;
	startup) step startup sh -c "sh tests/bench/startup.sh 200; LD_PRELOAD=$PWD/$B/libnucatrace.so sh tests/bench/startup.sh 200;
		'$NT' run --quiet --no-calibrate -- sh tests/bench/startup.sh 200;
		'$NT' run --quiet --no-calibrate --mode kernels -- sh tests/bench/startup.sh 200" ;;
	ranks) step ranks env BUILD="$B" NPROC="$(nvidia-smi -L | grep -c '^GPU')" tests/gpu/ranks.sh /tmp/ranks
		tar czf "$OUT/ranks.tgz" -C /tmp/ranks commit outer/report.txt outer/report.json outer/report.html \
			inner/report.txt inner/report.json preload/report.txt preload/report.json ;;
	probecost) step probecost sh -c "'$NT' calibrate --quick --quiet && rm -rf /tmp/pc && mkdir -p /tmp/pc &&
		'$B/tests/gpu/probecost' /tmp/pc/untraced.txt &&
		'$NT' run --no-calibrate --sample all --output-dir /tmp/pc -- '$B/tests/gpu/probecost' /tmp/pc/traced.txt &&
		python3 tests/gpu/probecost.py /tmp/pc/*.sqlite /tmp/pc/traced.txt /tmp/pc/untraced.txt" ;;
	subcost) step subcost env BUILD="$B" sh tests/gpu/subcost.sh ;;
	graphs) step graphs sh -c "'$NT' calibrate --quick --quiet && rm -rf /tmp/tg && mkdir -p /tmp/tg &&
		'$NT' run --no-calibrate --sample all --output-dir /tmp/tg -- python3 tests/gpu/progs/torch_train.py --graphs --steps 10 &&
		python3 tests/gpu/check_trace.py /tmp/tg/*.sqlite 1 &&
		python3 tests/gpu/trim_trace.py --graph-launch 5 /tmp/tg/*.sqlite /tmp/tg-replay.sqlite &&
		python3 tests/gpu/trim_trace.py --graph-launch 5 /tmp/tg/*.sqlite '$OUT/torch-graphs-replay.sqlite.xz' &&
		'$NT' report /tmp/tg-replay.sqlite"
		step bench-graphs env BUILD="$B" python3 tests/bench/interposer.py --only train-graphs --reps 5 \
			--configs bare,none,default,all ;;
	stability) shift; step stability "$NT" calibrate --stability "$1" --device 0 --output "$OUT/stability.json" ;;
	*) echo "device-session.sh: unknown step '$1'" >&2; exit 2 ;;
	esac
	shift
done
