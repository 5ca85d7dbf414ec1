#!/bin/sh
# Used on the lent H200 (docs/results/): runs a carried build, records the
# GPU's identity with every result.  $1 = what to run (see below).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
NT=${NT:-build/nucatrace}
if ldd "$NT" | grep -q "not found"; then
	export LD_LIBRARY_PATH=$PWD/build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{ date -u +%FT%TZ; nvidia-smi -L; nvidia-smi --query-gpu=uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } >"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
export NUCATRACE_STORE=$OUT/maps.db NUCATRACE_PROGRESS=1
