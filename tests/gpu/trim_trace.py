"""Make a real trace small enough to commit as test data, and keep it a
valid trace (meta `trimmed` says how), vacuumed:

    trim_trace.py TRACE OUT [N]
        keep, of every kernel at each launch configuration, its first N
        traced launches (default 2) with all their blocks (in a mixed
        trace, N of each kind: entry-only and full);
    trim_trace.py --range A-B TRACE OUT
        keep the launches numbered A to B (a rank's steps: the ranks of a
        job trimmed to one range keep their steps lined up);
    trim_trace.py --graph-launch K TRACE OUT
        keep the node launches of launch K of each graph exec (one replay
        of a captured training step), nothing else.
--max-blocks M (first) also drops every launch of more than M blocks.
An OUT ending in .xz is written compressed (xz -9)."""
import lzma
import os
import shutil
import sqlite3
import sys

args = sys.argv[1:]
span = None
replay = None
max_blocks = None
if args and args[0] == "--max-blocks":
    max_blocks = int(args[1])
    args = args[2:]
if args and args[0] == "--range":
    span = tuple(int(x) for x in args[1].split("-"))
    args = args[2:]
elif args and args[0] == "--graph-launch":
    replay = int(args[1])
    args = args[2:]
src, out = args[0], args[1]
dst = out[:-3] + ".tmp" if out.endswith(".xz") else out
keep = int(args[2]) if len(args) > 2 else 2
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
kind = "entry_only" if any(c[1] == "entry_only" for c in db.execute("pragma table_info(launches)")) else "0"
rows = db.execute("select launch, kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z, "
                  f"coalesce({kind}, 0) from launches where traced = 1 order by launch").fetchall()
in_replay = {r[0] for r in db.execute("select launch from launches where graph is not null and graph_launch = ?",
                                      (replay,))} if replay is not None else set()
seen, drop = {}, []
for launch, *config in rows:
    key = tuple(config)
    seen[key] = seen.get(key, 0) + 1
    if replay is not None:
        if launch not in in_replay:
            drop.append((launch,))
    elif (span and not span[0] <= launch <= span[1]) or (not span and seen[key] > keep):
        drop.append((launch,))
if max_blocks is not None:
    big = {r[0] for r in db.execute("select launch from launches where traced = 1 and blocks > ?", (max_blocks,))}
    dropped = {d[0] for d in drop}
    drop += [(launch,) for launch, *_ in rows if launch in big and launch not in dropped]
packed = db.execute("select count(*) from sqlite_schema where name = 'block_chunks'").fetchone()[0]
db.executemany(f"delete from {'block_chunks' if packed else 'blocks'} where launch = ?", drop)
db.executemany("delete from launches where launch = ?", drop)
if replay is not None:
    how = f"the node launches of launch {replay} of each graph exec kept"
elif span:
    how = f"launches {span[0]} to {span[1]} kept (native times all kept)"
else:
    how = f"first {keep} traced launches of each kernel and configuration kept"
    if len({r[-1] for r in rows}) > 1:
        how += " (of each kind: entry-only and full)"
if max_blocks is not None:
    how += f", then every launch of more than {max_blocks} blocks dropped"
# a trace trimmed before keeps what was said of it
before = db.execute("select value from meta where key = 'trimmed'").fetchone()
db.execute("insert or replace into meta values ('trimmed', ?)",
           ((f"{before[0]}; then " if before else "") +
            f"{how}; {len(drop)} of {len(rows)} dropped by tests/gpu/trim_trace.py",))
db.commit()
db.execute("vacuum")
db.close()
if dst != out:
    with open(dst, "rb") as f, lzma.open(out, "wb", preset=9) as g:
        shutil.copyfileobj(f, g)
    os.unlink(dst)
print(f"{out}: kept {len(rows) - len(drop)} of {len(rows)} traced launches")
