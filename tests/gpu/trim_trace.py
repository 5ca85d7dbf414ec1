"""Make a real trace small enough to commit as test data: keep, of every
kernel at each launch configuration, its first N traced launches (with all
their blocks), drop the other launches and their blocks, and vacuum.
The trace stays a valid trace (meta notes the trimming).

Usage: trim_trace.py TRACE OUT [N]"""
import shutil
import sqlite3
import sys

src, dst = sys.argv[1], sys.argv[2]
keep = int(sys.argv[3]) if len(sys.argv) > 3 else 2
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
rows = db.execute("select launch, kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z"
                  " from launches where traced = 1 order by launch").fetchall()
seen, drop = {}, []
for launch, *config in rows:
    key = tuple(config)
    seen[key] = seen.get(key, 0) + 1
    if seen[key] > keep:
        drop.append((launch,))
db.executemany("delete from blocks where launch = ?", drop)
db.executemany("delete from launches where launch = ?", drop)
db.execute("insert or replace into meta values ('trimmed', ?)",
           (f"first {keep} traced launches of each kernel and configuration kept; {len(drop)} of "
            f"{len(rows)} dropped by tests/gpu/trim_trace.py",))
db.commit()
db.execute("vacuum")
db.close()
print(f"{dst}: kept {len(rows) - len(drop)} of {len(rows)} traced launches")
