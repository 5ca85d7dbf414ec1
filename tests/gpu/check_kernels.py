"""Invariants of a kernels-mode trace (tests/gpu): every launch recorded
once with GPU start < end, no block records, registers and occupancy known.
Usage: check_kernels.py TRACE EXPECTED_LAUNCHES."""
import sqlite3
import sys

path, want = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
meta = dict(db.execute("select key, value from meta"))
problems = []
if meta.get("backend") != "kernels":
    problems.append(f"backend {meta.get('backend')}")
n, traced, backwards, occ = db.execute(
    "select count(*), sum(traced), sum(t_start_ns >= t_end_ns), sum(max_blocks_per_sm > 0)"
    " from launches").fetchone()
if n != want:
    problems.append(f"{n} launches, want {want}")
chunks = db.execute("select count(*) from sqlite_schema where name = 'block_chunks'").fetchone()[0]
if traced or db.execute(f"select count(*) from {'block_chunks' if chunks else 'blocks'}").fetchone()[0]:
    problems.append("block records in kernels mode")
if backwards:
    problems.append(f"{backwards} launches end before they start")
if occ != n:
    problems.append(f"occupancy known for {occ} of {n} launches")
if db.execute("select count(*) from kernels where registers is null").fetchone()[0]:
    problems.append("kernels without registers")
print(f"{path}: {n} launches" + ("; " + "; ".join(problems) if problems else ", ok"))
sys.exit(1 if problems else 0)
