# session 41, call 1: the freeing build's decode loop (run40c.sh), then the patch-site experiment
T0=$(date +%s)
cc -std=c11 -I/usr/local/cuda/compute-sanitizer/include -I/usr/local/cuda/include -I. -o /tmp/abi tests/gpu/abi_check.c && /tmp/abi; echo "abi check rc=$?"
timeout 120 sh build/slim/run40c.sh > /tmp/run40c.log 2>&1
cp /tmp/run40c.log $OUT/run40c.log
left=$((580 - ($(date +%s) - T0)))
echo "decode done in $(($(date +%s) - T0)) s; fault experiment for $left s"
B=build/slim PR=40 TV="lazy-shadow-mixed lazy-shadow-mixed:load lazy-shadow-mixed:eager" timeout $left sh tests/gpu/window_fault.sh > /tmp/wf.log 2>&1
grep -E '^(==|--)' /tmp/F/diag.log | tail -n 80
tar czf $OUT/fault.tgz --exclude='*.sqlite' -C /tmp F
