#!/bin/sh
# GPU tests (make test-gpu): run calibrate on the GPUs here and check the
# shape and invariants of what it measured, not exact numbers.
set -u
NT=${NUCATRACE:?set NUCATRACE to the binary}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export NUCATRACE_STORE=$W/maps.db NUCATRACE_PROGRESS=0
pass=0 fail=0
check() {	# check NAME COMMAND...
	name=$1; shift
	if "$@" >"$W/log" 2>&1; then
		pass=$((pass + 1)); echo "ok   $name"
	else
		fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/     /' "$W/log" | tail -20
	fi
}
nvidia-smi -L 2>/dev/null || true
check "calibrate --list finds a GPU" "$NT" calibrate --list
mkdir -p "$W/maps"
check "calibrate (all parts, every GPU) stores and writes maps" sh -c "
	'$NT' calibrate --json --output '$W/maps' --quiet 2>'$W/err' >'$W/out'; r=\$?; cat '$W/err'
	[ \$r = 0 ] && ! grep -q 'probe cost not measured' '$W/err'"
# The JSON checks: every SM measured, noise goal, sane ranges, full matrices.
check "maps: coverage, noise, ranges, matrices" python3 - "$W/maps" <<'PY'
import json, math, os, sys
d = sys.argv[1]
files = [os.path.join(d, f) for f in os.listdir(d)]
assert files, "no map written"
for f in files:
    m = json.load(open(f))
    n = m["gpu"]["sm_count"]
    chain = m["chain"]
    assert len(chain) == n and all(v is not None for v in chain), f"{f}: SMs missing"
    assert all(50 < v < 2000 for v in chain), f"{f}: chain out of range {min(chain)} {max(chain)}"
    noise = sorted(m["noise"])
    assert noise[n // 2] <= 0.1, f"{f}: median noise {noise[n//2]} > 0.1 cycle"
    lat = m["lines"]["latency"]
    assert len(lat) == n and all(len(r) == len(m["lines"]["offset"]) >= 256 for r in lat)
    assert all(v is not None and 50 < v < 2000 for r in lat for v in r), f"{f}: line matrix"
    first, rep = m["first_touch"]["first"], m["first_touch"]["repeat"]
    cells = [(a, b) for ra, rb in zip(first, rep) for a, b in zip(ra, rb)]
    assert all(a is not None and b is not None for a, b in cells)
    med = lambda v: sorted(v)[len(v) // 2]
    assert med([a for a, _ in cells]) >= med([b for _, b in cells]), "first touch faster than repeat"
    assert m["sm_clock_mhz"] > 100, "no SM clock"
    # the probe cost: every configuration, every SM, what tracing added
    probe = m.get("probe") or []
    assert len(probe) == 6, f"{f}: {len(probe)} probe-cost configurations, not 6"
    for q in probe:
        c = q["cost"]
        assert len(c) == n and all(v is not None and 0 < v < 1e6 for v in c), \
            f"{f}: probe cost of {q['threads']} threads x {q['iters']} iterations: SMs missing or out of range"
        assert q["body_native"] > 0 and q["body_traced"] > 0, f"{f}: probe bodies"
    print(f"{f}: {n} SMs, chain {min(chain):.1f}..{max(chain):.1f}, noise median {noise[n//2]:.3f}")
PY
check "store lists the new calibrations" sh -c "'$NT' map list | grep -q GPU-"
check "export and re-import a real map, identical" sh -c "
	'$NT' map export latest --output '$W/a.json' &&
	'$NT' map --store '$W/b.db' import '$W/a.json' &&
	'$NT' map --store '$W/b.db' export latest --output '$W/b.json' && cmp '$W/a.json' '$W/b.json'"
check "diff of a map with itself is zero" sh -c "'$NT' map diff latest '$W/a.json' | grep -q 'beyond 3x their floor      0 of'"
echo keep >"$W/exists.json"
check "--output to an existing file is refused before measuring" sh -c "
	! '$NT' calibrate --device 0 --quick --no-store --output '$W/exists.json' >'$W/out' 2>'$W/err' &&
	grep -q 'exists' '$W/err' && ! grep -q 'chain map' '$W/out' && [ \"\$(cat '$W/exists.json')\" = keep ]"
check "--output PATH/ is a folder, made if missing" sh -c "
	'$NT' calibrate --device 0 --quick --no-store --quiet --output '$W/new/' >/dev/null &&
	ls '$W/new/' | grep -q '^GPU-.*\.json$'"
check "--device out of range is a clear error" sh -c "'$NT' calibrate --device 99 --no-store 2>&1 | grep -q 'only'"
echo "gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
