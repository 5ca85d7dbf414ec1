#!/bin/sh
# GPU checks of the interposer (part of make test-gpu): the sanitizer ABI
# declarations against the real headers, then traced runs of our test
# programs and of PyTorch, each checked with check_trace.py and compared
# with an untraced run.  $1: folder for outputs (default: a temp dir).
set -u
B=${BUILD:-build}
W=${1:-$(mktemp -d)}
mkdir -p "$W"
SAN_INC=${CUDA_HOME:-/usr/local/cuda}/compute-sanitizer/include
. "$(dirname "$0")/check.sh"
check abi-matches-real-headers sh -c "cc -std=c11 -I$SAN_INC -I${CUDA_HOME:-/usr/local/cuda}/include -I. -o '$W/abi' tests/gpu/abi_check.c && '$W/abi'"

# traced NAME SAMPLE FILES PROGRAM...: an untraced and a traced run print
# the same (the lines matching $SAME, default all); the traced one leaves
# FILES valid trace files, with no launch dropped when $NODROPS is set
# (but for reasons matching the regex $DROPS_OK, when set).  Each check's
# folder starts empty (fresh): a trace left there by an earlier run
# (one cut off by a timeout) is not counted as this run's.
fresh() {
	rm -rf "$1" && mkdir -p "$1"
}
traced() {
	t_name=$1 t_sample=$2 t_files=$3; shift 3
	fresh "$W/$t_name" || return 1
	"$@" >"$W/$t_name/plain.out" 2>"$W/$t_name/plain.err" || return 1
	"$B/nucatrace" run --no-calibrate --sample "$t_sample" --output-dir "$W/$t_name" -- "$@" \
		>"$W/$t_name/traced.out" 2>"$W/$t_name/traced.err" || { cat "$W/$t_name/traced.err"; return 1; }
	cat "$W/$t_name/traced.err"
	grep -E "${SAME:-.}" "$W/$t_name/plain.out" | sort >"$W/$t_name/plain.sorted"
	grep -E "${SAME:-.}" "$W/$t_name/traced.out" | sort >"$W/$t_name/traced.sorted"
	cmp "$W/$t_name/plain.sorted" "$W/$t_name/traced.sorted" || return 1
	n=0
	for f in "$W/$t_name"/*.sqlite; do
		python3 tests/gpu/check_trace.py "$f" "${CHECK_WANT:-1}" ${CHECK_ARGS:-} || return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$t_files" ] || { echo "$n trace files, want $t_files"; return 1; }
	[ -z "${NODROPS:-}" ] || python3 - "${DROPS_OK:-}" "$W/$t_name"/*.sqlite <<'PY'
import re, sqlite3, sys
ok = sys.argv[1]
for path in sys.argv[2:]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    drops = db.execute("select reason, sum(count) from drops group by reason").fetchall()
    print(f"{path}: drops {drops}")
    if any(not ok or not re.fullmatch(ok, r) for r, _ in drops):
        sys.exit(1)
PY
}
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
check static-cudart traced blocks all 1 "$B/tests/gpu/blocks"
check shared-cudart traced shared all 1 "$B/tests/gpu/blocks_shared"
check driver-api traced drvapi all 1 "$B/tests/gpu/drvapi"
check cooperative-cluster traced coop all 1 "$B/tests/gpu/coop"
check fork-exec traced forks all 3 "$B/tests/gpu/forks"
# with_opts SAME NODROPS FUNCTION ARGS...: one check with those settings
with_opts() {
	SAME=$1 NODROPS=$2; shift 2
	"$@"; w_rc=$?
	SAME= NODROPS= CHECK_WANT= DROPS_OK=
	return $w_rc
}
# cudaDeviceReset twice: contexts made again (often under the same
# handle) with their modules; under first=2 native timings are in flight
# at each reset (session 13, tests 0248 on the simulated GPU)
check device-reset with_opts "" 1 traced reset all 1 "$B/tests/gpu/reset"
check device-reset-natives traced reset-first first=2 1 "$B/tests/gpu/reset"
# every=: each pick is handed to the kernel's next launch when its module
# is not patched yet (session 13, test 0249)
check every-retry traced every every=7 1 "$B/tests/gpu/reset"
# Switches under queued launches (switch_race.cu): every=10 opens and
# closes a window every few rounds, its module patched and unpatched at a
# launch's entry while the GPU still runs earlier launches of it (not known
# to be safe: PyTorch's training step ran into "misaligned address" just
# after such switches, session 38); the output exact, and a wait for the
# GPU before every switch
switch_race() {
	with_opts '^checksum|^mismatches' '' traced switchrace every=10 1 "$B/tests/gpu/switch_race" || return 1
	python3 - "$W"/switchrace/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("windows", "patches", "unpatches", "settles", "settle_s")})
sys.exit(0 if int(m["windows"]) >= 100 and int(m["settles"]) >= int(m["windows"]) else 1)
PY
}
check switch-under-queue switch_race
# CUDA graphs (captured with a parallel branch, built with the API, a
# child graph, updated in place): every kernel node launch traced
# complete with exactly its own blocks, replays told apart.  The nodes of
# one kernel in a graph launch all take the kernel's data as the graph is
# queued, so that data is a table from each node's grid id to its own
# records (interposer/blocks/san_nodes.c): graph 1 runs axpy in three nodes of
# three grids, a mix would show as a wrong block count.
graphs_blocks() {
	with_opts '' 1 traced graphs all 1 "$B/tests/gpu/graphs" || return 1
	python3 - "$W"/graphs/*.sqlite "$(sed -n 's/^node launches //p' "$W/graphs/plain.out")" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
want = int(sys.argv[2])
nodes = db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0]
drops = db.execute("select coalesce(sum(count), 0) from drops").fetchone()[0]
replays = db.execute("select count(distinct graph * 1000000 + graph_launch) from launches"
                     " where graph is not null").fetchone()[0]
print(f"{nodes} graph node launches traced, {drops} dropped (want {want} traced), {replays} graph launches")
sys.exit(0 if nodes == want and drops == 0 and replays == 130 else 1)
PY
}
check cuda-graphs graphs_blocks
# Graph execs and module patches in either order (graph_late.cu).  An
# exec keeps the code its modules had when it was made: on the H200 an
# exec made before its module was patched at a plain launch's entry ran
# into "illegal instruction" (session 18, runs 1-2, traced nodes or not),
# and one made while its module was patched, replayed after the module
# was unpatched and patched again, ran the other kernel of the module
# (the checksum changed).  So a module a live exec runs is never patched
# (interposer/blocks/san_execs.c).  graph-late-patch: the exec made first,
# a window opening among plain launches of its kernel (late): the plain
# launches in the window are dropped with the reason, and the exec is
# pointed at an instrumented twin of the module for the window
# (interposer/blocks/san_twins.c, issue 33): its nodes traced, the output
# as untraced.  Under match= of another kernel of the module (late
# split) the graph's kernel is never traced: nothing patched, no twin.
# graph-early-patch: the exec made while its module is patched, windows
# back to back (early: its nodes traced while the module stays patched),
# or opening and closing among plain launches of another kernel of the
# module (early split: patched once, unpatched, never patched again while
# the exec lives): the output as untraced.
graph_held() {	# NAME TWINS: drops for the held module; TWINS: nodes traced through twins, else nothing patched
	python3 - "$W/$1"/*.sqlite "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
twins = sys.argv[2] == "1"
traced = db.execute("select count(*) from launches where traced = 1").fetchone()[0]
nodes = db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0]
m = dict(db.execute("select key, value from meta"))
patches, twinned = int(m["patches"]), int(m.get("graph_execs_twinned", 0))
drops = db.execute("select reason, sum(count) from drops group by 1").fetchall()
print(f"{traced} launches traced ({nodes} graph nodes), {patches} module patches, {m.get('twins')} twins, "
      f"exec pointed at twins {twinned} times, drops {drops}")
held = sum(c for r, c in drops if r.startswith("a live CUDA graph exec runs its module"))
if twins:
    sys.exit(0 if nodes > 0 and nodes == traced and twinned > 0 and held > 0 else 1)
sys.exit(0 if traced == 0 and patches == 0 and held > 0 else 1)
PY
}
graph_late() {
	with_opts '^checksum' '' traced graphlate all,window=1000,skip=66 1 "$B/tests/gpu/graph_late" late ||
		return 1
	graph_held graphlate 1 || return 1
	CHECK_WANT=0 with_opts '^checksum' '' traced graphlate-split 'match=bump(*,skip=60' 1 \
		"$B/tests/gpu/graph_late" late split || return 1
	graph_held graphlate-split 0
}
check graph-late-patch graph_late
# Full records (--blocks full): under the default mixed, the window's
# first phase is entry-only and its second cannot patch the module once
# the exec lives, so no node would be traced (a 2026-12-03 run).
graph_early() {
	export NUCATRACE_BLOCKS=full
	with_opts '^checksum' '' traced graphearly all,window=12,budget=100 1 "$B/tests/gpu/graph_late" early &&
		with_opts '^checksum' '' traced graphearly-split 'match=bump(*,window=12,budget=100' 1 \
			"$B/tests/gpu/graph_late" early split
	g_rc=$?
	unset NUCATRACE_BLOCKS
	[ $g_rc -eq 0 ] || return 1
	python3 - "$W"/graphearly/*.sqlite "$W"/graphearly-split/*.sqlite <<'PY'
import sqlite3, sys
def look(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("select key, value from meta"))
    nodes = db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0]
    print(f"{path}: {nodes} node launches traced, {meta['patches']} patches, {meta['unpatches']} unpatches")
    return nodes, int(meta["patches"]), int(meta["unpatches"])
nodes, _, _ = look(sys.argv[1])
_, patches, unpatches = look(sys.argv[2])
sys.exit(0 if nodes > 0 and patches == 1 and unpatches == 1 else 1)
PY
}
check graph-early-patch graph_early
# A window still open, its module patched, when only graph launches come
# (graph_late.cu tail: the exec made while patched, 200 replays): the
# window fills with node launches and closes at a later replay's entry,
# unpatching the module, so the replays after it run the program's own
# code.  The output as untraced; one window, nodes traced, the module
# unpatched.
graph_tail() {
	with_opts '^checksum' '' traced graphtail all,window=30 1 "$B/tests/gpu/graph_late" tail || return 1
	python3 - "$W"/graphtail/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
nodes = db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0]
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "patches", "unpatches")},
      "node launches traced", nodes)
sys.exit(0 if int(m["windows"]) == 1 and nodes > 0 and int(m["unpatches"]) >= 1 else 1)
PY
}
check graph-tail-close graph_tail
# Graphs beyond those (tests/gpu/progs/graphs_device.cu).  graphs_nordc:
# 300 graph execs destroyed right after their launch and a
# while-conditional node, traced: outputs identical, every launch either
# complete or dropped with its reason (the while body's node, after a
# conditional node, is dropped); then under match= (modules patched as
# they load, most nodes not traced: without their data set to NULL such
# nodes faulted on the H200, session 12).  graphs_device (-rdc, the
# device runtime): a graph launched from the device and dynamic
# parallelism: its module is never patched, nothing is traced, every
# launch is dropped with the reason, outputs identical.
graphs_device() {
	DROPS_OK='a kernel node after a conditional node.*' with_opts '' 1 \
		traced graphsnordc-all all 1 "$B/tests/gpu/graphs_nordc" execs 300 while 5 || return 1
	with_opts '' '' traced graphsnordc-match 'match=*while_init*' 1 "$B/tests/gpu/graphs_nordc" execs 30 while 5 ||
		return 1
	CHECK_WANT=0 DROPS_OK='its module launches kernels from the device.*' with_opts '' 1 \
		traced graphsdev all 1 "$B/tests/gpu/graphs_device" device 5 cdp 5 || return 1
	python3 - "$W"/graphsnordc-all/*.sqlite "$W"/graphsdev/*.sqlite <<'PY'
import sqlite3, sys
for path in sys.argv[1:]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    got = dict(db.execute("select coalesce(k.demangled, k.mangled), count(*) from launches l join kernels k"
                          " on k.kernel = l.kernel where l.traced = 1 group by 1"))
    drops = db.execute("select reason, sum(count) from drops group by 1").fetchall()
    print(path, "traced:", {n.split("(")[0]: c for n, c in got.items()}, "drops:", drops)
# graphs_device: 5 host launches of the graph whose node launches the
# device graph, 5 of cdp_parent; none traced, each dropped once
if got or sum(c for _, c in drops) != 10:
    sys.exit(f"{path}: want 0 traced and 10 dropped")
PY
}
check graphs-device graphs_device
# A decode-style loop (progs/decode.cu: one graph of 4 kernels made at the
# start, its graph destroyed, 3,000 replays) under the default policy and
# the update route (NUCATRACE_GRAPH_ROUTE=update; graph-shadow below runs
# the same under the default, the shadow route): the exec was made
# before any window, so each window points it at instrumented twins
# (issue 33).  The output as untraced, node launches
# traced and complete (check_trace.py), the exec pointed at twins, and
# every node launch in a window traced: the window opens at the entry of
# the replay that holds its first launch, so none is dropped; and under
# --sample all (modules patched as they load, no twin): no drop.
# twin_stats DIR: the trace's windows and node launches; fails unless
# node launches were traced through twins, with none dropped and every
# launch in a window traced.
twin_stats() {
	python3 - "$1"/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
# a replay: an exec's (a shadow's: a graph of its own) launch id
nodes = db.execute("select count(*), count(distinct graph || ':' || graph_launch) from launches"
                   " where traced = 1 and graph is not null").fetchone()
traced = db.execute("select count(*) from launches where traced = 1").fetchone()[0]
drops = db.execute("select reason, sum(count) from drops group by 1").fetchall()
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "twins", "graph_execs_twinned",
                             "twin_images", "twin_image_bytes", "twin_image_kept")},
      "node launches traced", nodes[0], "in", nodes[1], "replays; drops", drops)
if nodes[0] == 0 or int(m.get("graph_execs_twinned", 0)) == 0:
    sys.exit("want node launches traced through twins")
if drops or traced != int(m["launches_in_windows"]):
    sys.exit(f"want every launch in a window traced: {traced} of {m['launches_in_windows']}")
PY
}
# update_route FUNCTION: FUNCTION under NUCATRACE_GRAPH_ROUTE=update
update_route() {
	export NUCATRACE_GRAPH_ROUTE=update
	"$@"; u_rc=$?
	unset NUCATRACE_GRAPH_ROUTE
	return $u_rc
}
graph_twins() {
	with_opts '^checksum' 1 traced decode-default all,window=1000,skip=1000,blocks=1000000,budget=1 1 \
		"$B/tests/gpu/decode" 3000 || return 1
	twin_stats "$W/decode-default" || return 1
	with_opts '^checksum' 1 traced decode-all all 1 "$B/tests/gpu/decode" 3000
}
check graph-twins update_route graph_twins
# An exec made, launched and destroyed at every replay (decode N remake)
# under --sample all with NUCATRACE_GRAPH_TABLES=1: no module switch ever
# frees the destroyed execs' node tables, so a graph launch waits for the
# device once they fill half the cap (3,000 tables of 712 bytes: 4 waits)
# and frees them (san_nodes.c); every node launch traced, none dropped for
# "graph node tables full", the output as untraced.
graph_tables_all() {
	export NUCATRACE_GRAPH_TABLES=1
	with_opts '^checksum' 1 traced decode-remake all 1 "$B/tests/gpu/decode" 3000 remake
	g_rc=$?
	unset NUCATRACE_GRAPH_TABLES
	[ $g_rc -eq 0 ] || return 1
	python3 - "$W"/decode-remake/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
nodes = db.execute("select count(*) from launches where traced = 1 and graph is not null").fetchone()[0]
print({k: m.get(k) for k in ("graph_execs", "table_waits", "settles", "settle_s")}, "node launches traced", nodes)
sys.exit(0 if nodes == 12000 and int(m.get("table_waits", 0)) >= 1 else 1)
PY
}
check graph-tables-all graph_tables_all
# The decode loop's exec changed in place as it is replayed (decode N
# update: its activation node set to 128-thread blocks at N/3 by
# cudaGraphExecKernelNodeSetParams, the whole exec updated from a capture
# whose residual runs 64-thread blocks at 2N/3), under windows every
# 100 replays or so: the twins' clone follows each change, so the exec
# pointed at twins runs the program's graph as it is then.  The output as
# untraced; every launch in a window traced, none dropped; each of the
# three configurations traced, and none after it was changed (a clone
# that missed a change would point the exec back at the old one).
# configs_traced DIR: those two checks on DIR's trace
configs_traced() {
	python3 - "$1"/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
def span(name, block):
    return db.execute("select count(*), min(l.launch), max(l.launch) from launches l join kernels k on k.kernel = l.kernel "
                      "where l.traced = 1 and k.mangled like ? and l.block_x = ?", (f"%{name}%", block)).fetchone()
act256, act128, res256, res64 = span("act", 256), span("act", 128), span("resid", 256), span("resid", 64)
print("act 256", act256, "act 128", act128, "resid 256", res256, "resid 64", res64)
if not all(c[0] for c in (act256, act128, res256, res64)):
    sys.exit("want every configuration traced")
if act256[2] > act128[1] or res256[2] > res64[1] or act128[1] > res64[1]:
    sys.exit("a configuration traced after it was changed")
PY
}
graph_update() {
	with_opts '^checksum' 1 traced decode-update all,window=400,skip=400,budget=40 1 \
		"$B/tests/gpu/decode" 15000 update || return 1
	twin_stats "$W/decode-update" || return 1
	configs_traced "$W/decode-update"
}
check graph-update update_route graph_update
# The shadow route (the default; interposer/graphroute.h):
# the program's graph launches come through libnucatrace, and a window
# launches a shadow exec of the twins in the place of the program's exec,
# which is never changed.  The decode loop under the default and updated
# in place (as graph-twins and graph-update), and PyTorch's captured
# training step under windows in a dark loop (as train-graphs-dark, the
# first window past the warm-up and capture: skip=8000): the output as
# untraced, every launch in a window traced (the decode loop), the
# launches routed (graph_routed > 0) and a shadow launched.
shadow_stats() {
	python3 - "$1"/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("windows", "graph_routed", "graph_execs_shadowed", "graph_execs_twinned")})
if int(m.get("graph_routed", 0)) == 0 or int(m.get("graph_execs_shadowed", 0)) == 0:
    sys.exit("want graph launches routed and a shadow exec launched")
PY
}
graph_shadow() {
	g_rc=1
	with_opts '^checksum' 1 traced shadow-decode all,window=1000,skip=1000,blocks=1000000,budget=1 1 \
		"$B/tests/gpu/decode" 3000 && twin_stats "$W/shadow-decode" && shadow_stats "$W/shadow-decode" &&
	with_opts '^checksum' 1 traced shadow-update all,window=400,skip=400,budget=40 1 \
		"$B/tests/gpu/decode" 15000 update && twin_stats "$W/shadow-update" && shadow_stats "$W/shadow-update" &&
		configs_traced "$W/shadow-update" &&
	with_opts '^step [0-9]+ loss' '' traced shadow-train all,window=1000,skip=8000,budget=5 1 \
		python3 tests/gpu/progs/torch_train.py --graphs --steps 2000 && shadow_stats "$W/shadow-train" && g_rc=0
	return $g_rc
}
check graph-shadow graph_shadow
T=tests/gpu/progs/torch_train.py
# A PyTorch training step captured into one CUDA graph and replayed:
# every node launch of every replay.
# The first launches of lazily loaded kernels are dropped ("its module is
# instrumented before a later launch": 11-17 of 14,843 on three H200s,
# docs/results/2026-12-03-record-wait.md; docs/limits.md), no others.
graphs_torch() {
	DROPS_OK='its module is instrumented before a later launch.*' \
		with_opts '^step [0-9]+ loss' 1 traced torchgraphs all 1 python3 $T --graphs --steps 10
}
check pytorch-cuda-graphs graphs_torch
# The same under the default policy: its window opens in the warm-up on
# PyTorch's side stream, where a module switch or an event made in a
# launch's callbacks hung the program (session 12, runs 4-8); switches
# and events now happen at a launch's entry into the driver.  Output
# identical, a trace written; launches may be dropped with reasons.
# Three times: the capture (global mode) follows warm-up launches timed
# natively, whose event queries on the collector's thread invalidated it
# now and then (session 14, run 2); they are made in relaxed mode now.
graphs_torch_default() {
	for r in 1 2 3; do
		with_opts '^step [0-9]+ loss' '' traced torchgraphs-default-$r all,window=1000,skip=1000,budget=1 1 \
			python3 $T --graphs --steps 10 || return 1
	done
}
check pytorch-cuda-graphs-default graphs_torch_default
# The training loop (transformer LM + conv net, bf16, AdamW): the default
# sampling windows, and every launch of it.
check train-default with_opts '^step [0-9]+ loss' '' traced train-default all,window=1000,skip=1000,budget=1 1 python3 $T --steps 30
# The launch callbacks off between windows and back on (san_dark.c):
# with budget=5 the second window may open about 20 window-lengths after
# the start, within 300 steps; the output as untraced, windows >= 2, a
# dark span.
train_dark() {
	with_opts '^step [0-9]+ loss' '' traced train-dark all,window=1000,skip=1000,budget=5 1 \
		python3 $T --steps 300 || return 1
	python3 - "$W/train-dark"/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "dark_spans", "dark_s")})
if int(m["windows"]) < 2 or int(m["dark_spans"]) < 1:
    sys.exit("want 2 windows or more and a dark span")
PY
}
check train-dark train_dark
# The same for a program that only replays a captured step after its
# warm-up: the callbacks go off at cuGraphLaunch's entry into the driver,
# and a window that patched nothing closes there.  The first window opens
# in the warm-up; with budget=5 the next may open about 40 window-lengths
# after the first launch (budget= counts the window about to open, since
# 091bad7: at budget=2, 100 window-lengths, after the replays had ended
# on an H100 and an H200 in session 34), a few seconds into the replays
# (10 s of them).  The
# exec was made before it, so its modules are never patched (a patch at a
# replay's entry ran a replay into "illegal instruction", session 17,
# runs 4-5): the window points the exec at instrumented twins (issue 33)
# and its nodes are traced; it closes at a replay's entry (the exec
# pointed back first), and the callbacks go off again.
train_graphs_dark() {
	with_opts '^step [0-9]+ loss' '' traced train-graphs-dark all,window=1000,skip=1000,budget=5 1 \
		python3 $T --graphs --steps 2000 || return 1
	python3 - "$W/train-graphs-dark"/*.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
m = dict(db.execute("select key, value from meta"))
# a replay: an exec's (a shadow's: a graph of its own) launch id
nodes = db.execute("select count(*), count(distinct graph || ':' || graph_launch) from launches"
                   " where traced = 1 and graph is not null").fetchone()
print({k: m.get(k) for k in ("launches", "windows", "launches_in_windows", "dark_spans", "dark_s", "twins",
                             "graph_execs_twinned", "twin_images", "twin_image_bytes", "twin_image_kept")},
      "graph nodes traced", nodes[0], "in", nodes[1], "replays")
if int(m["windows"]) < 2 or int(m["dark_spans"]) < 2:
    sys.exit("want 2 windows or more and 2 dark spans or more")
if nodes[0] == 0 or int(m.get("graph_execs_twinned", 0)) == 0:
    sys.exit("want graph nodes traced through instrumented twins")
PY
}
check train-graphs-dark train_graphs_dark
check train-per-kernel with_opts '^step [0-9]+ loss' '' traced train-first first=8,every=1000 1 python3 $T --steps 30
check train-all with_opts '^step [0-9]+ loss' 1 traced train-all all 1 python3 $T --steps 10
# A STREAM triad of 262,144 blocks per launch.
check triad-default with_opts '^checksum' '' traced triad-default first=8,every=1000 1 "$B/tests/gpu/triad" 100
check triad-all with_opts '^checksum' 1 traced triad-all all 1 "$B/tests/gpu/triad" 100
check default-sampling traced sampled first=8,every=1000 1 "$B/tests/gpu/blocks"
check pytorch-gemm traced torch all 1 python3 tests/gpu/progs/torch_gemm.py
kernels_mode() {	# kernels_mode NAME LAUNCHES PROGRAM...: CUPTI records every launch
	k_name=$1 k_want=$2; shift 2
	fresh "$W/$k_name" || return 1
	"$@" >"$W/$k_name/plain.out" 2>&1 || return 1
	"$B/nucatrace" run --mode kernels --no-calibrate --output-dir "$W/$k_name" -- "$@" \
		>"$W/$k_name/traced.out" 2>"$W/$k_name/traced.err" || { cat "$W/$k_name/traced.err"; return 1; }
	cat "$W/$k_name/traced.err"
	cmp "$W/$k_name/plain.out" "$W/$k_name/traced.out" || return 1
	python3 tests/gpu/check_kernels.py "$W/$k_name"/*.sqlite "$k_want"
}
check kernels-mode-static-cudart kernels_mode kblocks 18 "$B/tests/gpu/blocks"
check kernels-mode-streams kernels_mode kstreams 320 "$B/tests/gpu/streams"
check kernels-mode-graphs kernels_mode kgraphs 491 "$B/tests/gpu/graphs"
# Every GPU here: as many devices in the trace as the machine has.
multi_gpu() {
	traced multi all 1 "$B/tests/gpu/multigpu" || return 1
	gpus=$(nvidia-smi -L | grep -c '^GPU')
	python3 - "$W"/multi/*.sqlite "$gpus" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
devs = db.execute("select count(*) from devices").fetchone()[0]
used = db.execute("select count(distinct device) from launches").fetchone()[0]
print(f"{devs} devices, launches on {used}, machine has {sys.argv[2]}")
sys.exit(0 if devs == used == int(sys.argv[2]) else 1)
PY
}
check multi-gpu multi_gpu
# nucatrace run measures a quick map of a GPU the store lacks, and the
# trace carries it.
calibrates_first() {
	fresh "$W/cal" || return 1
	NUCATRACE_STORE="$W/cal/store.db" "$B/nucatrace" run --sample all --output-dir "$W/cal" -- \
		"$B/tests/gpu/blocks" >/dev/null 2>"$W/cal/err" || return 1
	cat "$W/cal/err"
	grep -q "quick calibration" "$W/cal/err" || return 1
	python3 -c "import sqlite3, glob, sys; db = sqlite3.connect(glob.glob('$W/cal/nucatrace-*.sqlite')[0]); n = db.execute('select count(*) from maps').fetchone()[0]; print(n, 'map(s) in the trace'); sys.exit(n != 1)"
}
check run-calibrates-first calibrates_first
check injection-path sh -c "rm -rf '$W/inj' && mkdir -p '$W/inj' && cd '$W/inj' && CUDA_INJECTION64_PATH=$PWD/$B/libnucatrace.so NUCATRACE_SAMPLE=all $PWD/$B/tests/gpu/blocks >/dev/null && NUCATRACE=$PWD/$B/nucatrace python3 $PWD/tests/gpu/check_trace.py *.sqlite 18"
# Last: 8 threads x 4 streams hung with on-demand patching on the H200
# until modules were switched only in the callbacks of a loaded kernel's
# launch, one thread at a time (docs/results/2026-12-01-switch-safety.md); a
# hang here stops nothing else.
check threads-streams traced streams all 1 "$B/tests/gpu/streams"
echo "interposer: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
