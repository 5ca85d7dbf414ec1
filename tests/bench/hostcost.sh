#!/bin/sh
# make bench-host: what the blocks backend's callbacks cost the host per
# launch, on this CPU, without a GPU.  The simulated GPU
# (tests/fault/fakesanitizer_gpu.c) calls the interposer's callbacks as
# the driver does (driver API entry, launch begin and end) and runs no
# kernel, so the time a launch takes there is nearly all ours.  fake_app
# makes STEPS x 24 launches of five kernels; `nucatrace run` under `none`
# (no callback asked for), and under a policy whose window never opens
# (every launch goes through the callbacks, none is traced), REPS times
# interleaved; the difference of the medians over the launches is the
# cost per untraced launch outside windows.  Twice: with fake_app's short
# kernel names, and with names as long as PyTorch's (`steps-long`: 64 to
# 1,000 bytes).
set -u
B=${BUILD:-build}
STEPS=${STEPS:-8000}
REPS=${REPS:-7}
FAKE=$B/tests
export NUCATRACE_LIBCUDA=$FAKE/libfakecuda.so FAKECUDA_GPU=1 FAKESANITIZER_GPU=1
export NUCATRACE_SANITIZER_LIB=$FAKE/libfakesanitizer.so NUCATRACE_MODE=blocks NUCATRACE_CUPTI_LIB=/nonexistent
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
one() {	# one WORKLOAD POLICY: the run's wall time in ns
	rm -rf "$out/t" && mkdir -p "$out/t"
	o_s=$(date +%s%N)
	"$B/nucatrace" run --quiet --no-calibrate --sample "$2" --output-dir "$out/t" -- \
		"$FAKE/fake_app" "$1" "$STEPS" >/dev/null || exit 1
	echo $(( $(date +%s%N) - o_s ))
}
for w in steps steps-long; do
	rm -f "$out/times"
	for r in $(seq "$REPS"); do
		echo "none $(one $w none)" >>"$out/times"
		echo "outside $(one $w all,window=1000,skip=1000000000)" >>"$out/times"
	done
	python3 - "$out/times" "$STEPS" "$w" <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    t.setdefault(k, []).append(int(v))
n = int(sys.argv[2]) * 24
none, outside = (statistics.median(t[k]) for k in ("none", "outside"))
per = [(o - z) / n / 1e3 for z, o in zip(t["none"], t["outside"])]
names = "short names" if sys.argv[3] == "steps" else "names as long as PyTorch's"
print(f"host cost per untraced launch outside windows, {names}: {(outside - none) / n / 1e3:.3f} us "
      f"(paired: median {statistics.median(per):.3f}, range {min(per):.3f}-{max(per):.3f}; "
      f"{len(per)} interleaved runs of {n} launches; none {none / 1e6:.1f} ms, outside {outside / 1e6:.1f} ms)")
PY
done
