"""A trace opened for the test scripts' SQL, its block records in a table
blocks whatever its schema: from version 4 a trace keeps them packed
(block_chunks), and `nucatrace export --blocks` gives them as CSV rows,
which connect() loads into a temporary table with the rows' old meaning
(an entry-only record's t_end_ns and c_end -1, its warps 0); older traces
have the table.  nucatrace: $NUCATRACE, else $BUILD/nucatrace, else
build/nucatrace."""
import csv
import io
import os
import sqlite3
import subprocess

COLUMNS = ("launch", "kernel", "block", "sm", "t_start_ns", "t_end_ns", "c_start", "c_end", "warps")


def nucatrace():
    return os.environ.get("NUCATRACE") or os.path.join(os.environ.get("BUILD", "build"), "nucatrace")


def connect(path):
    """path read-only, with blocks readable by SQL."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if db.execute("pragma user_version").fetchone()[0] < 4:
        return db
    out = subprocess.run([nucatrace(), "export", "--blocks", path], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{path}: nucatrace export: {out.stderr.strip()}")
    rows = csv.reader(io.StringIO(out.stdout))
    if tuple(next(rows)) != COLUMNS:
        raise SystemExit(f"{path}: nucatrace export wrote other columns")
    db.execute(f"create temp table blocks({', '.join(c + ' integer' for c in COLUMNS)})")
    db.executemany(f"insert into temp.blocks values({', '.join('?' * len(COLUMNS))})",
                   ([int(v) if v else (0 if i == 8 else -1) for i, v in enumerate(r)] for r in rows))
    # the scripts look launches up one by one: without it, 14,843 launches
    # of 15M records took more than 200 s
    db.execute("create index temp.blocks_by_launch on blocks(launch)")
    return db
