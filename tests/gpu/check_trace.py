"""Invariants of a nucatrace trace file (tests/gpu): for every traced
launch, exactly one record per block of the grid, SM ids below the SM
count, start <= end, block times inside the launch span, warps as many as
the block has; an entry-only launch (launches.entry_only, NUCATRACE_BLOCKS=entry)
has no end: its blocks' t_end_ns and c_end are -1 and warps 0, its own end is
unknown and its start is its first block's.  Usage: check_trace.py TRACE [min_traced_launches] [--smem-may-be-unknown]."""
import sys

import ntblocks

args = [a for a in sys.argv[1:] if not a.startswith("--")]
smem_may_be_unknown = "--smem-may-be-unknown" in sys.argv
path = args[0]
want = int(args[1]) if len(args) > 1 else 1
db = ntblocks.connect(path)
meta = dict(db.execute("select key, value from meta"))
assert meta.get("format") == "nucatrace-trace", meta
sms = dict(db.execute("select device, sm_count from devices"))
cols = {r[1] for r in db.execute("pragma table_info(launches)")}
entry_col = "entry_only" if "entry_only" in cols else "0"
launches = db.execute(
    "select launch, device, grid_x*grid_y*grid_z, block_x*block_y*block_z, blocks, t_start_ns, t_end_ns,"
    f" coalesce({entry_col}, 0) from launches where traced = 1").fetchall()
assert len(launches) >= want, f"{len(launches)} traced launches, want >= {want}"
bad = 0
entry_launches = 0
for launch, dev, grid, threads, blocks, t0, t1, entry in launches:
    entry_launches += entry == 1
    if entry == 1:  # no ends: each row's end -1, no warps seen
        rows = db.execute("select count(*), count(distinct block), min(block), max(block), max(sm),"
                          " sum(t_end_ns != -1 or c_end != -1 or t_start_ns < 0 or c_start < 0),"
                          " min(t_start_ns), null, sum(warps != 0) from blocks where launch = ?",
                          (launch,)).fetchone()
    else:
        rows = db.execute("select count(*), count(distinct block), min(block), max(block), max(sm),"
                          " sum(t_start_ns > t_end_ns), min(t_start_ns), max(t_end_ns),"
                          " sum(warps != ?) from blocks where launch = ?",
                          ((threads + 31) // 32, launch)).fetchone()
    n, distinct, lo, hi, max_sm, backwards, first, last, warps_off = rows
    problems = []
    if not (n == distinct == grid == blocks and lo == 0 and hi == grid - 1):
        problems.append(f"{n} records ({distinct} distinct, {lo}..{hi}) for {grid} blocks")
    if max_sm is None or max_sm >= sms.get(dev, 1 << 30):
        problems.append(f"sm {max_sm} out of range")
    if backwards:
        problems.append(f"{backwards} blocks end before they start")
    if first != t0 or last != t1:
        problems.append("launch span does not match its blocks")
    if warps_off:
        problems.append(f"{warps_off} blocks with a wrong warp count")
    if problems:
        bad += 1
        print(f"launch {launch}: " + "; ".join(problems))
# The launch calls' dynamic shared memory and the cubin's attributes give
# the occupancy of launches of our own kernels (cudaLaunch* / cuLaunch*);
# a graph's kernel nodes are not launch calls: theirs is not known.
occ = db.execute("select count(*), sum(dyn_smem is not null), sum(max_blocks_per_sm > 0)"
                 " from launches where traced = 1 and graph is null").fetchone()
if occ[0] and not smem_may_be_unknown and (occ[1] != occ[0] or occ[2] != occ[0]):
    bad += 1
    print(f"dynamic shared memory known for {occ[1]}, occupancy for {occ[2]} of {occ[0]} launches")
# Static attributes come from the modules' cubins: a kernel of ours has them.
attrs = db.execute("select count(*), sum(registers is not null) from kernels").fetchone()
if attrs[0] and not attrs[1]:
    bad += 1
    print(f"no kernel has attributes from its cubin ({attrs[0]} kernels)")
print(f"{path}: {len(launches)} traced launches ({entry_launches} entry-only), {bad} bad;"
      f" backend {meta.get('backend')}, blocks {meta.get('blocks')};"
      f" {attrs[1]} of {attrs[0]} kernels with cubin attributes")
sys.exit(1 if bad else 0)
