"""make bench, record path part (issue 32): how fast block records go from
the GPU into the trace, and how small they are there.

tests/gpu/progs/triad.cu (a STREAM triad of 262,144 256-thread blocks a
launch; 400 launches by default: 105M block records) runs, in turns
repetition by repetition:

  bare     untraced
  floor    no nucatrace: tests/gpu/subcost.so attached to the Compute
           Sanitizer with nothing enabled (what attaching costs anyone)
  all      nucatrace run --sample all (every launch, both patch sites)
  all0     the same with NUCATRACE_PACK_THREADS=0: the collector packs
           alone, without the helpers that pack beside it by default (7, at
           most half the CPUs)
  entry    nucatrace run --sample all --blocks entry (starts only)
  old      as all, with $OLD_BUILD's nucatrace: another build side by side

A run that takes longer than --limit seconds is killed with its process
group and reported as stalled (the bench goes on; it exits 1).

For each: the process's wall time (what the user feels), the triad's
median launch time (instrumented, when traced), and for the traced ones
the time beyond the instrumented kernels' own (wall - launches x median
launch time, less bare's same figure: the host's part of tracing, that is
moving records), the records a second through that, and from the trace:
its size, bytes per record, and the seconds its writer spent packing and
in SQLite.  Medians of the repetitions; the triad's checksum must match
bare's in every run.  Goal (issue 32): the triad under all within 4 s
beyond its instrumented kernels' time (50M records a second), at most 8
bytes a record.
"""
import argparse
import glob
import os
import re
import signal
import sqlite3
import statistics as st
import subprocess
import sys
import tempfile
import time


def run(cmd, env=None, limit=None):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, **(env or {})}, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return {"stalled": True, "wall": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{err[-2000:]}")
    ms = float(re.search(r"^triad ([\d.]+) ms", out, re.M)[1])
    check = re.search(r"^checksum (\S+)", out, re.M)[1]
    return {"wall": wall, "ms": ms, "check": check, "stderr": err}


def trace_facts(folder):
    paths = glob.glob(os.path.join(folder, "*.sqlite"))
    if len(paths) != 1:
        sys.exit(f"{folder}: {len(paths)} traces")
    db = sqlite3.connect(f"file:{paths[0]}?mode=ro", uri=True)
    meta = dict(db.execute("select key, value from meta"))
    blocks, grids = db.execute("select sum(blocks), sum(grid_x * grid_y * grid_z) from launches"
                               " where traced = 1").fetchone()
    chunk_bytes = db.execute("select coalesce(sum(length(data)), 0) from block_chunks").fetchone()[0]
    page, free = (db.execute(f"pragma {p}").fetchone()[0] for p in ("page_size", "freelist_count"))
    db.close()
    return {"complete": meta.get("complete") == "1", "records": blocks or 0, "whole": blocks == grids,
            "size": os.path.getsize(paths[0]), "chunk_bytes": chunk_bytes,
            "pack_s": float(meta.get("pack_s", "nan")), "write_s": float(meta.get("write_s", "nan")),
            "threads": meta.get("pack_threads"), "pages": f"{page // 1024} KiB pages, {free * page / 1e6:.1f} MB free"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--launches", type=int, default=400)
    ap.add_argument("--limit", type=float, default=300, help="seconds a run may take")
    ap.add_argument("--configs", default="bare,floor,all,entry", help="of bare,floor,all,all0,entry,old")
    a = ap.parse_args()
    b = os.environ.get("BUILD", "build")
    prog = [f"{b}/tests/gpu/triad", str(a.launches)]
    nt = [f"{b}/nucatrace", "run", "--quiet", "--no-calibrate", "--sample", "all"]
    cfgs = {"bare": (None, {}), "floor": (None, {"CUDA_INJECTION64_PATH": os.path.abspath(f"{b}/tests/gpu/subcost.so"),
                                                  "SUBCOST": "none"}),
            "all": (nt, {}), "all0": (nt, {"NUCATRACE_PACK_THREADS": "0"}),
            "entry": (nt + ["--blocks", "entry"], {}),
            "old": ([f"{os.environ.get('OLD_BUILD', b)}/nucatrace"] + nt[1:], {})}
    cfgs = {c: cfgs[c] for c in a.configs.split(",")}
    res = {c: [] for c in cfgs}
    order = list(cfgs)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.reps):
            for c in order[r % len(order):] + order[:r % len(order)]:
                pre, env = cfgs[c]
                if pre is None:
                    res[c].append(run(prog, env, a.limit))
                    continue
                out = os.path.join(tmp, f"{c}{r}")
                x = run(pre + ["--output-dir", out, "--"] + prog, env, a.limit)
                if not x.get("stalled"):
                    x.update(trace_facts(out))
                for t in glob.glob(os.path.join(out, "*")):
                    os.remove(t)
                res[c].append(x)
    stalled = {c: sum(1 for x in v if x.get("stalled")) for c, v in res.items()}
    res = {c: [x for x in v if not x.get("stalled")] for c, v in res.items()}
    checks = {x["check"] for v in res.values() for x in v}
    bare_host = st.median(x["wall"] - a.launches * x["ms"] / 1e3 for x in res.get("bare", [])) if res.get("bare") else 0
    print(f"triad, {a.launches} launches of 262,144 blocks; medians of {a.reps} repetitions in turns")
    print(f"{'config':>7} {'wall s':>7} {'launch ms':>9} {'beyond s':>8} {'M rec/s':>8} {'B/rec':>6} "
          f"{'trace MB':>8} {'pack s':>7} {'sql s':>6} {'threads':>7} whole")
    for c, v in res.items():
        if stalled[c]:
            print(f"{c:>7} STALLED in {stalled[c]} of {stalled[c] + len(v)} runs (killed after {a.limit:.0f} s)")
        if not v:
            continue
        wall = st.median(x["wall"] for x in v)
        ms = st.median(x["ms"] for x in v)
        line = f"{c:>7} {wall:7.2f} {ms:9.3f}"
        if "records" in v[0]:
            beyond = st.median(x["wall"] - a.launches * x["ms"] / 1e3 - bare_host for x in v)
            recs = st.median(x["records"] for x in v)
            line += (f" {beyond:8.2f} {recs / beyond / 1e6 if beyond > 0 else float('inf'):8.1f}"
                     f" {st.median(x['chunk_bytes'] / max(x['records'], 1) for x in v):6.2f}"
                     f" {st.median(x['size'] for x in v) / 1e6:8.1f} {st.median(x['pack_s'] for x in v):7.2f}"
                     f" {st.median(x['write_s'] for x in v):6.2f} {v[0]['threads']:>7}"
                     f" {all(x['whole'] and x['complete'] for x in v)}")
        print(line)
    for c, v in res.items():
        if v and "pages" in v[0]:
            print(f"{c:>7} trace: {v[0]['pages']} (first run)")
    print(f"checksums equal in every run: {len(checks) == 1}")
    sys.exit(0 if len(checks) == 1 and not any(stalled.values()) else 1)


if __name__ == "__main__":
    main()
