#!/bin/sh
# session 15 run 6: our callbacks' time per launch on the H200 host with
# the sampled timing (one in 61), train-long under default and nowin.
RO=$OUT
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz -C /tmp L' EXIT
{ date -u +%FT%TZ; nvidia-smi -L; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0 NUCATRACE_STORE=/tmp/store.db
NT=$PWD/build/nucatrace
$NT calibrate --device 0 --quick --quiet > /dev/null 2>&1; echo "calibrate rc $?"
mkdir -p /tmp/tr; cd /tmp/tr
for p in default default; do
	timeout 60 $NT run --sample $( [ $p = default ] && echo all,window=1000,skip=1000,budget=1 || echo $p ) --output-dir /tmp/tr -- \
		python3 $OLDPWD/tests/gpu/progs/torch_train.py --steps 300 > /tmp/L/train.txt 2>&1
	echo "$p rc $?"; rm -f /tmp/tr/*.sqlite
	grep -E "^(train|step [0-9.]+ ms|nucatrace: (blocks|no sampling|1 sampling|own))" /tmp/L/train.txt
done
