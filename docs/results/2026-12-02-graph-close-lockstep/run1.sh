#!/bin/sh
# session 19 run 1: branch graph-entry-close (a window closes and
# unpatches at a graph launch's entry too) and main's review fixes
# (6c5ba4d): the graph checks, PyTorch's captured step, threads
RO=$OUT
T0=$(date +%s)
rm -rf /tmp/L; mkdir -p /tmp/L
trap 'tar czf $RO/logs.tgz --exclude="*.sqlite" -C /tmp L' EXIT
trap 'exit 143' TERM
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; git log --oneline -1; (cd /work/wt 2>/dev/null; true); echo 'branch graph-entry-close 612d225 built into build-branch'; } > /tmp/L/gpu.txt; cat /tmp/L/gpu.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$PWD/build/devlibs
export NUCATRACE_PROGRESS=0
# the branch's build over main's test programs, and its interposer.sh
rm -rf build-run && mkdir build-run && cp -r build/tests build/validate build-run/ &&
	cp build-branch/nucatrace build-branch/libnucatrace.so build-run/ &&
	cp .scratch/interposer-branch.sh tests/gpu/interposer-branch.sh || exit 1
CHECK_LIMIT=200 ONLY="abi-matches-real-headers cuda-graphs graph-late-patch graph-early-patch graph-tail-close graphs-device pytorch-cuda-graphs pytorch-cuda-graphs-default train-graphs-dark threads-streams" \
	BUILD=build-run timeout 540 sh tests/gpu/interposer-branch.sh /tmp/L/gpu > /tmp/L/interposer.txt 2>&1
grep -E "^(ok|FAIL)|passed|failed" /tmp/L/interposer.txt
grep -E "^\{|node launches traced|illegal|unpatches" /tmp/L/interposer.txt | head -20
echo "t=$(( $(date +%s) - T0 ))"
