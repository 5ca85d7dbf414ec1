"""The traces of one multi-rank job (tests/gpu/ranks.sh): one per rank,
named by rank (nucatrace-<host>-<pid>-rank<R>.sqlite), meta rank R, each
complete and valid (check_trace.py's invariants are checked apart), its
traced launches on one GPU of its own whose map the trace carries, NCCL
kernels among them; with STORE, that store holds one calibration of each
of those GPUs (calibrated once, not once per rank).
Usage: check_ranks.py DIR NPROC [STORE]"""
import glob
import os
import re
import sqlite3
import sys

folder, nproc = sys.argv[1], int(sys.argv[2])
store = sys.argv[3] if len(sys.argv) > 3 else None
gpus = {}
for path in sorted(glob.glob(os.path.join(folder, "*.sqlite"))):
    m = re.fullmatch(r"nucatrace-.+-\d+-rank(\d+)\.sqlite", os.path.basename(path))
    assert m, f"{path}: not named by rank"
    rank = int(m[1])
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("select key, value from meta"))
    assert meta.get("rank") == str(rank), f"{path}: meta rank {meta.get('rank')}"
    assert meta.get("complete") == "1", f"{path}: not complete"
    assert rank not in gpus, f"rank {rank} twice"
    used = db.execute("select distinct d.uuid from launches l join devices d using (device)"
                      " where l.traced = 1").fetchall()
    assert len(used) == 1, f"{path}: traced launches on {used}"
    uuid = used[0][0]
    maps = db.execute("select count(*) from maps where uuid = ?", (uuid,)).fetchone()[0]
    assert maps == 1, f"{path}: no map of {uuid}"
    traced, nccl = db.execute("select count(*), sum(k.mangled like '%nccl%kernel%') from launches l"
                              " join kernels k using (kernel) where l.traced = 1").fetchone()
    assert nccl, f"{path}: no NCCL kernel traced"
    print(f"rank {rank}: {os.path.basename(path)}, {uuid}, its map in the trace, {traced} traced launches, "
          f"{nccl} of NCCL kernels")
    gpus[rank] = uuid
assert sorted(gpus) == list(range(nproc)), f"ranks {sorted(gpus)}, want 0..{nproc - 1}"
assert len(set(gpus.values())) == nproc, f"ranks share GPUs: {gpus}"
if store:
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    for uuid in sorted(set(gpus.values())):
        n = db.execute("select count(*) from calib where uuid = ?", (uuid,)).fetchone()[0]
        print(f"store: {n} calibration(s) of {uuid}")
        assert n == 1, f"{uuid} calibrated {n} times"
