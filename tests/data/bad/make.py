#!/usr/bin/env python3
"""Remake the crafted bad inputs of tests/data/bad/ (README.md there).

    python3 tests/data/bad/make.py [DIR]     (default: this script's folder)

Every trace here starts from one small, sound trace (ok.sqlite: one 16-SM
device with its map, one kernel, three launches of 32 blocks whose times
depend on the SM's latency), written with schema version 1 as
libnucatrace.so 0.1.0 writes it, and breaks one thing.  Where the schema
forbids the damage (NOT NULL), the table is made without that constraint,
as another tool might.  The maps are small JSON maps, each with one
fault.  Output is deterministic: the same files every time.
"""
import json
import os
import re
import sqlite3
import sys

SCHEMA = [
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE devices(device INTEGER PRIMARY KEY, uuid TEXT NOT NULL, name TEXT NOT NULL, "
    "sm_count INTEGER NOT NULL, cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL, "
    "l2_bytes INTEGER NOT NULL, clock_khz INTEGER NOT NULL, max_threads_per_sm INTEGER, "
    "max_blocks_per_sm INTEGER, regs_per_sm INTEGER, smem_per_sm INTEGER)",
    "CREATE TABLE maps(uuid TEXT PRIMARY KEY, json TEXT NOT NULL)",
    "CREATE TABLE kernels(kernel INTEGER PRIMARY KEY, mangled TEXT NOT NULL, demangled TEXT, "
    "module INTEGER NOT NULL, registers INTEGER, static_smem INTEGER, const_bytes INTEGER, "
    "local_bytes INTEGER, max_threads INTEGER, UNIQUE(mangled, module))",
    "CREATE TABLE launches(launch INTEGER PRIMARY KEY, kernel INTEGER NOT NULL REFERENCES "
    "kernels(kernel), device INTEGER NOT NULL, context INTEGER NOT NULL, stream INTEGER NOT NULL, "
    "grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL, "
    "block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL, "
    "cluster_x INTEGER NOT NULL, cluster_y INTEGER NOT NULL, cluster_z INTEGER NOT NULL, "
    "dyn_smem INTEGER, max_blocks_per_sm INTEGER, traced INTEGER NOT NULL, blocks INTEGER NOT NULL, "
    "t_start_ns INTEGER, t_end_ns INTEGER, correlation INTEGER, graph INTEGER, graph_node INTEGER)",
    "CREATE TABLE blocks(launch INTEGER NOT NULL REFERENCES launches(launch), block INTEGER NOT NULL, "
    "sm INTEGER NOT NULL, t_start_ns INTEGER NOT NULL, t_end_ns INTEGER NOT NULL, "
    "c_start INTEGER NOT NULL, c_end INTEGER NOT NULL, warps INTEGER NOT NULL, "
    "PRIMARY KEY(launch, block)) WITHOUT ROWID",
    "CREATE TABLE drops(launch INTEGER, kernel INTEGER, reason TEXT NOT NULL, count INTEGER NOT NULL)",
    "CREATE INDEX launches_by_kernel ON launches(kernel)",
]

APP_ID = 0x4E545452
N_SM = 16
UUID = "GPU-0badda7a-0000-4000-8000-000000000016"
LAT = [280.0 + (7 * s) % 16 for s in range(N_SM)]   # 280..295 cycles, shuffled
T0 = 1_000_000_000
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def map_doc(**over):
    doc = {
        "format": "nucatrace-map", "version": 1,
        "gpu": {"uuid": UUID, "name": "Crafted GPU", "sm_count": N_SM, "cc": "9.0",
                "l2_bytes": 62914560, "driver": "580.159.04", "cuda_version": 13000,
                "clock_khz": 1980000},
        "params": {"chain_bytes": 2097152, "chain_loads": 4096, "chain_reps": 5, "line_loads": 0,
                   "line_reps": 0, "footprint_bytes": 0, "statistic": "min"},
        "created_at": "2026-12-01T00:00:00Z", "created_at_unix": 1796083200,
        "tool_version": "0.1.0", "host": "crafted", "command": "tests/data/bad/make.py",
        "sm_clock_mhz": 1980.0, "chain": LAT,
    }
    for k, v in over.items():
        if k.startswith("gpu_"):
            doc["gpu"][k[4:]] = v
        else:
            doc[k] = v
    return doc


def map_text(**over):
    return json.dumps(map_doc(**over), separators=(",", ":"))


def blocks_of(launch, t0, zero=False):
    """32 blocks, one per SM slot, two waves; duration grows with latency."""
    rows, free = [], [t0] * N_SM
    for b in range(32):
        sm = b % N_SM
        start = free[sm]
        dur = 0 if zero else 2000 + int(40 * (LAT[sm] - 280)) + (b * 37) % 11
        free[sm] = start + dur
        rows.append((launch, b, sm, start, start + dur, 50_000 + start // 2,
                     50_000 + (start + dur) // 2, 1))
    return rows


def relax(sql, table, column):
    """The CREATE of table with `column ... NOT NULL` made nullable."""
    if not sql.startswith("CREATE TABLE %s(" % table):
        return sql
    return re.sub(r"(\b%s [A-Z]+) NOT NULL" % column, r"\1", sql)


def make(path, relaxed=(), fix=None, zero=False, launches=3):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    for sql in SCHEMA:
        for table, column in relaxed:
            sql = relax(sql, table, column)
        db.execute(sql)
    db.execute("PRAGMA application_id = %d" % APP_ID)
    db.execute("PRAGMA user_version = 1")
    meta = {"format": "nucatrace-trace", "version": "1", "tool_version": "0.1.0", "host": "crafted",
            "pid": "1", "ppid": "0", "cmdline": "crafted", "exe": "/crafted",
            "start_unix_ns": "1796083200000000000", "complete": "1",
            "end_unix_ns": "1796083201000000000", "backend": "blocks", "sampling": "all"}
    db.executemany("INSERT INTO meta VALUES(?, ?)", sorted(meta.items()))
    db.execute("INSERT INTO devices VALUES(0, ?, 'Crafted GPU', ?, 9, 0, 62914560, 1980000, 2048, 32, "
               "65536, 233472)", (UUID, N_SM))
    db.execute("INSERT INTO maps VALUES(?, ?)", (UUID, map_text()))
    db.execute("INSERT INTO kernels VALUES(1, '_Z5chasePi', 'chase(int*)', 0, 22, 0, 548, 0, NULL)")
    t = T0
    for launch in range(1, launches + 1):
        rows = blocks_of(launch, t, zero)
        end = max(r[4] for r in rows)
        db.execute("INSERT INTO launches VALUES(?, 1, 0, 1, 0, 32, 1, 1, 32, 1, 1, 0, 0, 0, 0, 1, 1, "
                   "32, ?, ?, NULL, NULL, NULL)", (launch, t, end))
        db.executemany("INSERT INTO blocks VALUES(?, ?, ?, ?, ?, ?, ?, ?)", rows)
        t = end + 10_000
    if fix:
        for sql, *args in fix:
            db.execute(sql, args)
    db.commit()
    db.execute("VACUUM")
    db.close()


# name -> (relaxed NOT NULL columns, statements run on the sound trace, options)
TRACES = {
    "ok": ((), []),
    "kernel-mangled-null": ([("kernels", "mangled")], [("UPDATE kernels SET mangled = NULL",)]),
    "map-json-null": ([("maps", "json")], [("UPDATE maps SET json = NULL",)]),
    "map-json-bad": ((), [("UPDATE maps SET json = '{\"format\": \"nucatrace-map\", \"chain\": ['",)]),
    "map-clock-inf": ((), [("UPDATE maps SET json = ?", map_text(sm_clock_mhz=1e999).replace(
        "Infinity", "1e999"))]),
    "device-sm-count-neg": ((), [("UPDATE devices SET sm_count = -1",)]),
    "device-sm-count-null": ([("devices", "sm_count")], [("UPDATE devices SET sm_count = NULL",)]),
    "device-sm-count-2p31": ((), [("UPDATE devices SET sm_count = 2147483648",)]),
    "launch-blocks-max": ((), [("UPDATE launches SET blocks = ? WHERE launch = 2", INT64_MAX)]),
    "launch-device-bad": ((), [("UPDATE launches SET device = 100 WHERE launch = 2",)]),
    "block-start-min": ((), [("UPDATE blocks SET t_start_ns = ? WHERE launch = 2 AND block = 5",
                              INT64_MIN)]),
    "block-cstart-min": ((), [("UPDATE blocks SET c_start = ? WHERE launch = 2 AND block = 5",
                               INT64_MIN)]),
    "block-end-before-start": ((), [("UPDATE blocks SET t_end_ns = t_start_ns - 1 "
                                     "WHERE launch = 2 AND block = 7",)]),
    "block-sm-huge": ((), [("UPDATE blocks SET sm = 100000 WHERE launch = 2 AND block = 3",)]),
    "blocks-zero-duration": ((), [], {"zero": True}),
    "hostile-names": ((), [
        ("UPDATE kernels SET mangled = ?, demangled = ?",
         "=HYPERLINK(\"http://x\")\x1b[31m_Z5chase\x07Pi\n",
         "=cmd|' /C calc'!A0 chase(\x1b]0;pwned\x07int*)\xff\n"),
        ("UPDATE devices SET name = ?, uuid = ?", "Crafted\x1b[2J GPU\r\n\x9b", UUID + "\x1b[5m"),
        ("UPDATE maps SET uuid = ?", UUID + "\x1b[5m"),
        ("UPDATE meta SET value = ? WHERE key = 'backend'", "blo\x1bcks"),
    ]),
}

# Text and bytes that cannot go through Python's str (invalid UTF-8).
RAW = {
    "hostile-names": [("UPDATE kernels SET demangled = CAST(? AS TEXT)",
                       b"=cmd|' /C calc'!A0 chase(\x1b]0;pwned\x07int*)\xff\xfe\xc3(\n")],
}

MAPS = {
    "map-clock-inf.json": map_text(sm_clock_mhz=1e999).replace("Infinity", "1e999"),
    "map-chain-null.json": map_text(chain=[None] * N_SM),
    "map-uuid-empty.json": map_text(gpu_uuid=""),
    "map-uuid-control.json": map_text(gpu_uuid="GPU-0badda7a\x1b[31m"),
    "map-other-sms.json": map_text(gpu_sm_count=8, chain=LAT[:8]),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, spec in TRACES.items():
        relaxed, fix = spec[0], spec[1]
        opts = spec[2] if len(spec) > 2 else {}
        path = os.path.join(out, name + ".sqlite")
        make(path, relaxed, fix, **opts)
        if name in RAW:
            db = sqlite3.connect(path)
            for sql, *args in RAW[name]:
                db.execute(sql, args)
            db.commit()
            db.close()
    for name, text in MAPS.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
