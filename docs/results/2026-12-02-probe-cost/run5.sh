#!/bin/sh
# session 15 run 5: where the host time of an eager training step goes
# under the default policy: perf over train-long (300 steps), bare and
# default, the top symbols by shared object; and the own-time line with
# the sampled callback timing.
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
NT=$PWD/build/nucatrace
P=$(command -v perf); echo "perf: ${P:-none}"
$NT calibrate --device 0 --quick --quiet > /dev/null 2>&1; echo "calibrate rc $?"
mkdir -p /tmp/tr; cd /tmp/tr
for c in bare default bare default; do
	if [ $c = bare ]; then set -- ; else set -- $NT run --output-dir /tmp/tr -- ; fi
	if [ -n "$P" ]; then
		timeout 100 $P record -F 499 -o /tmp/perf-$c.data "$@" python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 300 > /tmp/L/train-$c.txt 2>&1
	else
		timeout 100 "$@" python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 300 > /tmp/L/train-$c.txt 2>&1
	fi
	echo "$c rc $?"; rm -f /tmp/tr/*.sqlite
	grep -E "^(train|step [0-9.]+ ms|nucatrace: (blocks|1 sampling|own))" /tmp/L/train-$c.txt
done
if [ -n "$P" ]; then
	for c in bare default; do
		$P report -i /tmp/perf-$c.data --no-children --sort dso --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -15 > /tmp/L/dso-$c.txt
		$P report -i /tmp/perf-$c.data --no-children --sort dso,sym --stdio 2>/dev/null | grep -E "^ +[0-9]" | head -60 > /tmp/L/sym-$c.txt
		echo "== $c by shared object"; cat /tmp/L/dso-$c.txt
	done
	echo "== default, symbols of ours and the sanitizer's"
	grep -E "libnucatrace|sanitizer|libcuda" /tmp/L/sym-default.txt | head -30
fi
echo "t=$(( $(date +%s) - T0 ))"
