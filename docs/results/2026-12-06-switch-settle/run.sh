#!/bin/sh
# 2026-12-06, session 38 (issue 33): module switches under queued launches.
# PyTorch's captured training step with a window failed with "misaligned
# address" in 4 of 20 runs under either graph route (2026-12-06-shadow-default,
# call 5).  Here, $R rounds (8) interleaved of:
#   race-old / race-new   tests/gpu/progs/switch_race.cu under nucatrace run
#                         --sample every=10: the build before the fix
#                         ($B/old: no wait before switches) and after ($B)
#   race-native           the program alone (wall time)
# (R=0: none), then PyTorch's captured step under the default's window
# (2026-12-06-shadow-default/run.sh), $PR rounds (8) interleaved of $TV:
# BUILD-ROUTE with BUILD old or new as above and ROUTE update (the
# default) or shadow (default: new-update new-shadow), then the GPU
# checks named in $ONLY (interposer.sh).
#   B=build/dev sh docs/results/2026-12-06-switch-settle/run.sh
# call 1: B=build/slim R=6 PR=8 (before TV=: new-update new-shadow)
# call 2 (new: the shadow route the default): B=build/slim R=0 PR=5
#   TV="old-update new-update new-shadow" CHECK_LIMIT=150 ONLY="switch-under-queue
#   graph-late-patch graph-tail-close graph-twins graph-update graph-shadow
#   pytorch-cuda-graphs-default train-graphs-dark"
# call 3 (new: the update route the default, launches begun during another
# thread's switch counted): B=build/slim R=0 PR=10 TV="new-update new-shadow"
RO=${OUT:-/tmp/out}
W=/tmp/S
rm -rf $W && mkdir -p $W
B=${B:-build}
sh tests/gpu/gpuinfo.sh >$W/gpu.txt
cat $W/gpu.txt
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:$PWD/$B/devlibs
for r in $(seq ${R:-8}); do
	for v in old new native; do
		rm -rf $W/t && mkdir -p $W/t
		t0=$(date +%s.%N)
		case $v in
		native) timeout 120 $B/tests/gpu/switch_race >$W/t/out 2>$W/t/err ;;
		old) timeout 120 $B/old/nucatrace run --no-calibrate --sample every=10 --output-dir $W/t -- \
			$B/tests/gpu/switch_race >$W/t/out 2>$W/t/err ;;
		new) timeout 120 $B/nucatrace run --no-calibrate --sample every=10 --output-dir $W/t -- \
			$B/tests/gpu/switch_race >$W/t/out 2>$W/t/err ;;
		esac
		rc=$?
		t1=$(date +%s.%N)
		{
			echo "== $r race-$v rc=$rc wall $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s; $(grep -E '^(checksum|mismatches)' $W/t/out | tr '\n' ' ')"
			grep -v '^ ' $W/t/err | grep -E -i 'error|illegal|misaligned|sampling window' | head -n 4
			[ $v = native ] || python3 - $W/t/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("launches", "windows", "patches", "unpatches", "settles", "settle_s")},
      "traced", db.execute("select count(*) from launches where traced = 1").fetchone()[0],
      "drops", db.execute("select reason, sum(count) from drops group by reason").fetchall())
PY
		} >>$W/race.log 2>&1
	done
done
cat $W/race.log
# PyTorch: $PR rounds of the variants $TV (build-route: new-update
# new-shadow, the default's), one run each, interleaved
[ -d $B/old/devlibs ] || ln -s ../devlibs $B/old/devlibs
for r in $(seq ${PR:-8}); do
	for v in ${TV:-new-update new-shadow}; do
		b=$B
		[ ${v%%-*} = old ] && b=$B/old
		B=$b R=1 V=${v#*-} sh docs/results/2026-12-06-shadow-default/run.sh >/dev/null 2>&1
		sed "s/^== 1 /== $r $v /" /tmp/D/diag.log >>$W/torch-diag.log
	done
done
grep -E '^== ' $W/torch-diag.log
tar czf $RO/settle.tgz --exclude='*.sqlite' --exclude='t' --exclude='checks' -C /tmp S	# (again below)
if [ -n "${ONLY:-}" ]; then
	BUILD=$B CHECK_LIMIT=${CHECK_LIMIT:-300} sh tests/gpu/interposer.sh $W/checks >$W/checks.log 2>&1
	grep -E '^(ok|FAIL)' $W/checks.log
fi
tar czf $RO/settle.tgz --exclude='*.sqlite' --exclude='t' --exclude='checks' -C /tmp S
