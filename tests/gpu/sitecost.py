#!/usr/bin/env python3
"""The sitecost investigation's analysis (tests/gpu/sitecost.sh).

  sitecost.py times OUTDIR
      Launch times of OUTDIR/runs/CONFIG-rN.out (the test program's
      "sitecost LABEL MIN_US MEDIAN_US ..." lines): per kernel and config,
      the median over repetitions of each run's minimum, its ratio to bare,
      and what a config adds per block and SM (the added time divided by
      the blocks each SM ran); and whether every run's triad checksum agrees.

  sitecost.py ts --body BODY [--cb CB] [--label NAME] [--cycles]
      Lines up the program's own body timestamps (--body-ts) with the
      timing callbacks' records (SITECOST_CB=ts), warp by warp (same
      %gridid, block, warp; clock64 of the same SM), and prints per kernel
      (launches after the warm-up), median and p90 of:
        enter>body   a warp's entry callback to the start of its body
        body>exit    the end of a warp's body to its exit callback: what
                     the exit site does before our callback runs
        exit>next    per SM, a block's last exit callback to the entry
                     callback of the next block dispatched there (of the
                     blocks after the SM's first k, k = the most seen
                     running at once; the gap to the latest exit before
                     it, i.e. the smallest non-negative one): the rest of
                     the exit site, the block's retirement, the next
                     dispatch and the entry site up to our callback
        body>body    the same from body end to the next block's body
                     start (also without callbacks: the native gap)
        body>enter   a block's body end to the next block's entry
                     callback (what an entry-only tracer would see)
        exitspread   per block, last minus first warp's exit callback
                     (bodyspread: the same for the body ends)
      Times in ns, from clock64 at the SM clock measured in the run
      (--cycles: in cycles).  Without --cb, the body columns only.
"""
import argparse
import glob
import math
import os
import re
import struct
import sys
from collections import defaultdict

CB_REC = struct.Struct("<QQQIIIHHB7x")	# struct sc_cb_rec, tests/gpu/sitecost.h
BODY_REC = struct.Struct("<QQQQQIHH")	# struct sc_body
CB_MAGIC = b"SCCB0001"
BODY_MAGIC = b"SCBD0001"
LABEL_LEN = 32
KIND_ENTER, KIND_EXIT = 1, 2
ORDER = ["empty32", "empty256", "empty1024", "fma256", "fma1024", "triad"]


def die(msg):
    sys.exit("sitecost.py: " + msg)


def pct(values, p):
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(math.ceil(p / 100.0 * len(v))) - 1))]


def median(values):
    return pct(values, 50)


# ---- times ------------------------------------------------------------

def times(outdir):
    runs = defaultdict(lambda: defaultdict(list))	# config -> label -> [min_us]
    blocks, sms, checksums, failed = {}, None, defaultdict(set), []
    files = [p for p in sorted(glob.glob(os.path.join(outdir, "runs", "*.out")))
             if re.match(r"^.+-r\d+\.out$", os.path.basename(p))]
    if not files:
        die("no runs in %s/runs" % outdir)
    for path in files:
        config = re.sub(r"-r\d+\.out$", "", os.path.basename(path))
        seen = 0
        with open(path, errors="replace") as f:
            for line in f:
                w = line.split()
                m = re.search(r"\bsms (\d+)", line)
                if line.startswith("device ") and m:
                    sms = int(m.group(1))
                elif len(w) >= 4 and w[0] == "sitecost":
                    runs[config][w[1]].append(float(w[2]))
                    if "blocks" in w:
                        blocks[w[1]] = int(w[w.index("blocks") + 1])
                    seen += 1
                elif len(w) == 2 and w[0] == "checksum":
                    checksums[config].add(w[1])
        if not seen:
            failed.append(os.path.basename(path))
    configs = [c for c in ("bare", "enter", "exit", "both") if c in runs]
    configs += sorted(c for c in runs if c not in configs)
    labels = [l for l in ORDER if any(l in runs[c] for c in configs)]
    labels += sorted({l for c in configs for l in runs[c]} - set(labels))
    print("launch times: median over repetitions of each run's min, us (x bare; ns added per block and SM)")
    print("%-10s" % "kernel" + "".join("%26s" % c for c in configs))
    for l in labels:
        base = median(runs["bare"][l]) if "bare" in runs and runs["bare"][l] else None
        cells = []
        for c in configs:
            v = median(runs[c][l]) if runs[c][l] else None
            if v is None:
                cells.append("%26s" % "-")
                continue
            cell = "%.1f" % v
            if base and c != "bare":
                cell += " x%.2f" % (v / base)
                if sms and blocks.get(l):
                    cell += " +%.0f" % ((v - base) * 1000.0 / (blocks[l] / float(sms)))
            cell += " (n=%d)" % len(runs[c][l])
            cells.append("%26s" % cell)
        print("%-10s" % l + "".join(cells))
    all_sums = set().union(*checksums.values()) if checksums else set()
    if len(all_sums) > 1:
        print("checksums DIFFER: " + ", ".join("%s=%s" % (c, "/".join(sorted(s))) for c, s in sorted(checksums.items())))
    elif all_sums:
        print("checksums agree: %s" % next(iter(all_sums)))
    for name in failed:
        print("no timings in %s (the run failed?)" % name)


# ---- ts ---------------------------------------------------------------

def read_body(path):
    """gridid -> (label, launch, threads, {(block, warp): (t0, c0, t1, c1, smid)})"""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != BODY_MAGIC:
        die("%s is not a body timestamp file" % path)
    grids, off = {}, 8
    while off + LABEL_LEN + 16 <= len(data):
        label = data[off:off + LABEL_LEN].split(b"\0")[0].decode()
        launch, threads, n, _ = struct.unpack_from("<IIII", data, off + LABEL_LEN)
        off += LABEL_LEN + 16
        end = off + n * BODY_REC.size
        if end > len(data):
            die("%s is cut short" % path)
        warps, gridid = {}, None
        for gid, t0, c0, t1, c1, block, warp, smid in BODY_REC.iter_unpack(data[off:end]):
            if not gid and not c0 and not c1:
                continue	# a warp that never wrote (should not happen)
            gridid = gid
            warps[(block, warp)] = (t0, c0, t1, c1, smid)
        off = end
        if gridid is not None:
            grids[gridid] = (label, launch, threads, warps)
    return grids


def read_cb(path, wanted):
    """gridid -> {(block, warp): [enter (t, c, smid) or None, [exit (t, c, smid, mask, pc), ...]]}"""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != CB_MAGIC:
        die("%s is not a callback record file" % path)
    n, dropped, cap, size = struct.unpack_from("<IIII", data, 8)
    if size != CB_REC.size:
        die("%s has %d-byte records, this script reads %d" % (path, size, CB_REC.size))
    grids = defaultdict(lambda: defaultdict(lambda: [None, []]))
    other = 0
    for t, c, gid, block, mask, pc, warp, smid, kind in CB_REC.iter_unpack(data[24:24 + n * CB_REC.size]):
        if gid not in wanted:
            other += 1
            continue
        w = grids[gid][(block, warp)]
        if kind == KIND_ENTER:
            if w[0] is None or c < w[0][1]:
                w[0] = (t, c, smid)
        elif kind == KIND_EXIT:
            w[1].append((t, c, smid, mask, pc))
    return grids, n, dropped, cap, other


def refill_gaps(blocks):
    """blocks: [(start, end)] of one SM and launch.  The gaps between a
    block's start and the latest end before it, for the blocks after the
    SM's first k (k: the most running at once); and k."""
    blocks = sorted(b for b in blocks if b[0] is not None and b[1] is not None)
    events = sorted([(s, 1) for s, _ in blocks] + [(e, -1) for _, e in blocks], key=lambda x: (x[0], x[1]))
    k = run = 0
    for _, d in events:
        run += d
        k = max(k, run)
    gaps = []
    for j in range(k, len(blocks)):
        start = blocks[j][0]
        ends = [blocks[i][1] for i in range(j) if blocks[i][1] <= start]
        if ends:
            gaps.append(start - max(ends))
    return gaps, k


def sm_clock_ghz(bodies):
    """clock64 cycles per globaltimer ns, from each SM's span in each launch."""
    ratios = []
    for label, launch, threads, warps in bodies.values():
        span = {}
        for t0, c0, t1, c1, smid in warps.values():
            s = span.setdefault(smid, [t0, c0, t1, c1])
            if t0 < s[0]:
                s[0], s[1] = t0, c0
            if t1 > s[2]:
                s[2], s[3] = t1, c1
        for t0, c0, t1, c1 in span.values():
            if t1 - t0 >= 5000 and c1 > c0:
                ratios.append((c1 - c0) / float(t1 - t0))
    return median(ratios)


def ts(args):
    bodies = read_body(args.body)
    if not bodies:
        die("no body timestamps in %s" % args.body)
    cbs, ncb, dropped, cap, other = ({}, 0, 0, 0, 0)
    if args.cb:
        cbs, ncb, dropped, cap, other = read_cb(args.cb, set(bodies))
    ghz = sm_clock_ghz(bodies)
    unit = "cycles" if args.cycles or not ghz else "ns"
    conv = (lambda cyc: cyc) if unit == "cycles" else (lambda cyc: cyc / ghz)
    title = args.label or os.path.basename(args.body)
    print("%s: %d launches of body timestamps%s" % (title, len(bodies), "" if not args.cb else
          ", %d callback records (%d of other launches, %d dropped, cap %d)" % (ncb, other, dropped, cap)))
    if dropped:
        print("  WARNING: %d callback records were dropped (SITECOST_TS_MAX)" % dropped)
    print("  SM clock %s GHz (clock64 against %%globaltimer); times in %s" %
          ("%.3f" % ghz if ghz else "unknown", unit))

    cols = ["enter>body", "body>exit", "exit>next", "body>body", "body>enter", "exitspread", "bodyspread"]
    per = defaultdict(lambda: defaultdict(list))
    ks = defaultdict(list)
    notes = defaultdict(lambda: defaultdict(int))
    for gid, (label, launch, threads, warps) in bodies.items():
        if launch == 0 and any(b[1] > 0 for g, b in bodies.items() if b[0] == label):
            continue	# the warm-up
        cw = cbs.get(gid, {})
        # per block: sm, body start/end, first enter, last exit, exit and body-end spreads
        blk = {}
        for (block, warp), (t0, c0, t1, c1, smid) in warps.items():
            b = blk.setdefault(block, {"sm": smid, "bs": c0, "be": c1, "be_min": c1,
                                       "en": None, "ex": None, "ex_min": None})
            b["bs"], b["be"], b["be_min"] = min(b["bs"], c0), max(b["be"], c1), min(b["be_min"], c1)
            notes[label]["warps"] += 1
            enter, exits = cw.get((block, warp), (None, []))
            if enter:
                if enter[2] != smid:
                    notes[label]["enter on another SM"] += 1
                else:
                    per[label]["enter>body"].append(conv(c0 - enter[1]))
                    b["en"] = enter[1] if b["en"] is None else min(b["en"], enter[1])
            elif args.cb:
                notes[label]["no enter record"] += 1
            if exits:
                if len(exits) > 1:
                    notes[label]["several exit records"] += 1
                last = max(exits, key=lambda e: e[1])
                if last[2] != smid:
                    notes[label]["exit on another SM"] += 1
                else:
                    per[label]["body>exit"].append(conv(last[1] - c1))
                    b["ex"] = last[1] if b["ex"] is None else max(b["ex"], last[1])
                    b["ex_min"] = last[1] if b["ex_min"] is None else min(b["ex_min"], last[1])
            elif args.cb:
                notes[label]["no exit record"] += 1
        by_sm = defaultdict(list)
        for b in blk.values():
            by_sm[b["sm"]].append(b)
            per[label]["bodyspread"].append(conv(b["be"] - b["be_min"]))
            if b["ex"] is not None:
                per[label]["exitspread"].append(conv(b["ex"] - b["ex_min"]))
        for sm, bl in by_sm.items():
            for col, start, end in (("exit>next", "en", "ex"), ("body>body", "bs", "be"), ("body>enter", "en", "be")):
                gaps, k = refill_gaps([(b[start], b[end]) for b in bl])
                per[label][col].extend(conv(g) for g in gaps)
                if col == "body>body":
                    ks[label].append(k)

    labels = [l for l in ORDER if l in per] + sorted(l for l in per if l not in ORDER)
    print("  median / p90 per kernel (k: blocks at once per SM, median over SMs)")
    print("  %-10s %8s %3s" % ("kernel", "warps", "k") + "".join("%19s" % c for c in cols))
    for l in labels:
        cells = []
        for c in cols:
            v = per[l][c]
            cells.append("%19s" % ("-" if not v else "%.0f / %.0f" % (median(v), pct(v, 90))))
        print("  %-10s %8d %3s" % (l, notes[l]["warps"], median(ks[l]) if ks[l] else "-") + "".join(cells))
    for l in labels:
        odd = {k: v for k, v in notes[l].items() if k != "warps"}
        if odd:
            print("  %s: %s" % (l, ", ".join("%s %d" % kv for kv in sorted(odd.items()))))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    t = sub.add_parser("times")
    t.add_argument("outdir")
    s = sub.add_parser("ts")
    s.add_argument("--body", required=True)
    s.add_argument("--cb")
    s.add_argument("--label")
    s.add_argument("--cycles", action="store_true")
    args = p.parse_args()
    if args.cmd == "times":
        times(args.outdir)
    elif args.cmd == "ts":
        ts(args)
    else:
        p.print_help()
        sys.exit(2)


if __name__ == "__main__":
    main()
