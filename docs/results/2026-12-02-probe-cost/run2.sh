#!/bin/sh
# session 15 run 2: calibrate's new probe-cost stage on the H200 (kept:
# trace, bodies), a second calibration for repeatability, tests/gpu/run.sh,
# a training-step trace with the probe map in the store and its report,
# then interposer.sh checks that touch calibrate/run.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
left() { echo $(( 500 - ($(date +%s) - T0) )); }
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
NT=$PWD/build/nucatrace
S=$(date +%s.%N)
$NT calibrate --device 0 --store /tmp/store.db --output /tmp/L/map.json --probe-cost-keep /tmp/L/pc > /tmp/L/calibrate.txt 2>&1
echo "calibrate rc $? $(awk "BEGIN{print $(date +%s.%N) - $S}") s"; cat /tmp/L/calibrate.txt
S=$(date +%s.%N)
$NT calibrate --device 0 --no-lines --no-first-touch --no-store --output /tmp/L/map2.json --json > /tmp/L/calibrate2.json 2>/tmp/L/calibrate2.err
echo "calibrate 2 rc $? $(awk "BEGIN{print $(date +%s.%N) - $S}") s"; cat /tmp/L/calibrate2.err
python3 - <<'PY'
import json, statistics as st
a, b = (json.load(open(f"/tmp/L/map{s}.json")) for s in ("", "2"))
for qa, qb in zip(a["probe"], b["probe"]):
    print(f"{qa['threads']:5} x {qa['iters']:5}: median {st.median(qa['cost']):8.0f} / {st.median(qb['cost']):8.0f}"
          f"  r(run1, run2) {st.correlation(qa['cost'], qb['cost']):+.2f}"
          f"  r(map) {st.correlation(qa['cost'], a['chain']):+.2f}"
          f"  body {qa['body_native']:.0f} / {qa['body_traced']:.0f}")
PY
echo "t=$(( $(date +%s) - T0 ))"
NUCATRACE=$NT timeout 120 sh tests/gpu/run.sh > /tmp/L/run-sh.log 2>&1; echo "run.sh rc $?"
grep -E "^(ok|FAIL|gpu)" /tmp/L/run-sh.log; grep -A12 "^FAIL" /tmp/L/run-sh.log | head -40
echo "t=$(( $(date +%s) - T0 ))"
mkdir -p /tmp/tr
( cd /tmp/tr && timeout 150 $NT run --store /tmp/store.db --output-dir /tmp/tr --output train.sqlite -- \
	python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 30 > /tmp/L/train.txt 2>&1 ); echo "train rc $?"
tail -5 /tmp/L/train.txt
cp /tmp/tr/train.sqlite /tmp/L/ 2>/dev/null
$NT report --store /tmp/store.db /tmp/tr/train.sqlite > /tmp/L/train-report.txt 2>&1; echo "report rc $?"
$NT report --store /tmp/store.db --json /tmp/tr/train.sqlite > /tmp/L/train-report.json 2>/dev/null
grep -A8 "probe effect" /tmp/L/train-report.txt
python3 -c "
import json; r = json.load(open('/tmp/L/train-report.json'))
for t in r['traces']: print({k: t[k] for k in ('probe_shape_kernels', 'probe_shape_calibrated', 'probe_shape_r_calibration')})"
echo "t=$(( $(date +%s) - T0 ))"
export NUCATRACE_STORE=/tmp/store.db
( cd /tmp/tr && S=$(date +%s.%N) && $NT run --output-dir /tmp/tr --output gpu8.sqlite -- \
	python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 30 --scale 8 > /tmp/L/train-gpu8.txt 2>&1; \
	echo "train-gpu default rc $? $(awk "BEGIN{print $(date +%s.%N) - $S}") s"; ls -la /tmp/tr )
grep -v "^step " /tmp/L/train-gpu8.txt | tail -22
L=$(( $(left) - 120 )); [ $L -gt 60 ] && BUILD=build timeout $L python3 tests/bench/interposer.py --only train-gpu --reps 3 \
	--configs bare,default > /tmp/L/bench-train-gpu.txt 2> /tmp/L/bench-train-gpu.err
cat /tmp/L/bench-train-gpu.txt; echo "t=$(( $(date +%s) - T0 ))"
L=$(left); [ $L -gt 60 ] && ONLY="drvapi default-sampling triad-default train-default" BUILD=build CHECK_LIMIT=90 \
	timeout $L sh tests/gpu/interposer.sh /tmp/ip > /tmp/L/interposer-checks.log 2>&1
grep -E "^(ok|FAIL|interposer)" /tmp/L/interposer-checks.log; echo "t=$(( $(date +%s) - T0 ))"
