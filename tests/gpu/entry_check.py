"""Entry-only tracing against full tracing of the same program (issue 31):
per kernel, per SM, the mean block time the report infers from starts
alone (--blocks entry) against the mean measured at each block's exit
(--blocks full), and the report's figures side by side.

    entry_check.py FULL_DIR ENTRY_DIR [--min-blocks N]

Each DIR holds `report.json` and `csv/` (nucatrace report --json, --csv)
of one traced run.  Kernels are matched by name and configuration.  Per
kernel: the SMs both runs have, the median over SMs of entry / full of the
per-SM mean block time (full: every block; entry: blocks with an inferred
end, censored ones left out), their Pearson r over SMs, and each run's
verdict, lost% and recoverable%.  With a probe-cost part in the trace's map
(nucatrace calibrate), also each run's per-SM means against calibrate's
probe shape (r).  Prints a table; exits 0."""
import csv
import json
import math
import os
import sqlite3
import statistics
import sys
from collections import defaultdict


def pearson(x, y):
    n = len(x)
    if n < 3:
        return math.nan
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else math.nan


def load(d):
    rep = json.load(open(os.path.join(d, "report.json")))
    kname = {}
    for k in rep["kernels"]:
        kname[k["index"]] = (k.get("demangled") or k["name"], tuple(k["grid"]), tuple(k["block"]))
    launch_kernel = {}
    for row in csv.DictReader(open(os.path.join(d, "csv", "launches.csv"))):
        launch_kernel[(int(row["trace"]), int(row["launch"]))] = int(row["kernel"])
    # the blocks of the kind the kernel's fit took (a kernel traced both
    # ways, --blocks mixed, is fitted on its inferred times when it has any)
    fit_kind = {k["index"]: "inferred" if k.get("block_times") == "inferred" else "measured"
                for k in rep["kernels"]}
    per = defaultdict(lambda: defaultdict(list))  # kernel key -> sm -> ns
    ends = defaultdict(lambda: defaultdict(int))
    for row in csv.DictReader(open(os.path.join(d, "csv", "blocks.csv"))):
        k = launch_kernel.get((int(row["trace"]), int(row["launch"])))
        if k is None:
            continue
        ends[kname[k]][row["end"]] += 1
        if row["end"] == fit_kind[k]:
            per[kname[k]][int(row["sm"])].append(int(row["ns"]))
    kernels = {kname[k["index"]]: k for k in rep["kernels"]}
    return rep, kernels, per, ends


def probe_shape(d):
    """calibrate's probe shape per SM from the map in the run's trace, or None."""
    for f in sorted(os.listdir(d)):
        if not f.endswith(".sqlite"):
            continue
        db = sqlite3.connect(f"file:{os.path.join(d, f)}?mode=ro", uri=True)
        for (js,) in db.execute("select json from maps"):
            m = json.loads(js)
            parts = [p["cost"] for p in m.get("probe") or [] if p.get("iters", 1) == 0]
            if not parts:
                continue
            n = len(parts[0])
            shape = []
            for s in range(n):
                vals = [p[s] / statistics.mean(v for v in p if v is not None) for p in parts
                        if p[s] is not None]
                shape.append(statistics.mean(vals) if vals else None)
            return shape
    return None


def probe_summary(name, kernels, per, shape, min_blocks):
    """Of a run's measurable kernels with a fit (verdict neither "not
    measurable here" nor "no fit") and blocks on 100 SMs or more: |r| of
    their per-SM mean block times (the fit's kind) against calibrate's probe
    shape; all of them, and those whose median block is 10 us or less."""
    out = {"all": [], "short": []}
    for key, k in kernels.items():
        if k["verdict"] in ("not measurable here", "no fit", "collective"):
            continue
        sms = [s for s, v in per.get(key, {}).items() if len(v) >= min_blocks and s < len(shape)
               and shape[s] is not None]
        if len(sms) < 100:
            continue
        means = [statistics.mean(per[key][s]) for s in sms]
        r = abs(pearson([shape[s] for s in sms], means))
        if math.isnan(r):
            continue
        out["all"].append(r)
        if statistics.median(means) <= 10e3:
            out["short"].append(r)
    for which, rs in out.items():
        if rs:
            print(f"{name}: probe shape |r|, {which} measurable kernels: {len(rs)}, median {statistics.median(rs):.2f}, "
                  f"{sum(r <= 0.2 for r in rs)} at 0.20 or less, max {max(rs):.2f}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    min_blocks = 3
    if "--min-blocks" in sys.argv:
        min_blocks = int(sys.argv[sys.argv.index("--min-blocks") + 1])
    full, entry = load(args[0]), load(args[1])
    shape = probe_shape(args[1])
    for name, (rep, *_rest) in ((args[0], full), (args[1], entry)):
        t = rep["program"] if "program" in rep else rep
        tot = t.get("time_ns") or 0
        left = t.get("probe_left_out_ns") or 0
        cred = t.get("credible_time_ns") or 0
        traced = len(rep.get("launches") or [])
        print(f"{name}: GPU time {tot / 1e6:.3f} ms, not measurable {left / 1e6:.3f} ms "
              f"({100 * left / tot if tot else 0:.1f}%); launches {traced}, replayed {t.get('replayed')}, "
              f"credible {t.get('credible')} ({100 * cred / tot if tot else 0:.1f}% of the replayed time); "
              f"entry-only {t.get('entry_only_launches')}, of them one wave {t.get('one_wave_entry_only_launches')}")
    kinds = defaultdict(int)
    for k in entry[0]["kernels"]:
        kinds[k.get("block_times")] += 1
    print(f"{args[1]}: kernels by block_times {dict(kinds)}")
    if shape:
        for name, (rep, kernels, per, _ends) in ((args[0], full), (args[1], entry)):
            probe_summary(name, kernels, per, shape, min_blocks)
    print(f"{'kernel':48s} {'SMs':>4s} {'full us':>9s} {'entry/full':>10s} {'r':>6s} "
          f"{'r probe f/e':>12s}  verdicts full / entry; lost% recov% full / entry; entry ends")
    rows = []
    for key, fk in full[1].items():
        ek = entry[1].get(key)
        if not ek:
            continue
        fs, es = full[2].get(key, {}), entry[2].get(key, {})
        sms = sorted(s for s in fs if len(fs[s]) >= min_blocks and len(es.get(s, [])) >= min_blocks)
        fm = [statistics.mean(fs[s]) for s in sms]
        em = [statistics.mean(es[s]) for s in sms]
        ratio = statistics.median(e / f for e, f in zip(em, fm) if f > 0) if sms else math.nan
        rp = "" if not shape or not sms else \
            f"{pearson([shape[s] for s in sms], fm):+.2f}/{pearson([shape[s] for s in sms], em):+.2f}"

        def pct(k, f):
            t = k.get("credible_time_ns") or 0
            return 100 * (k.get(f) or 0) / t if t else 0
        rows.append((fk.get("time_ns") or 0, f"{key[0][:48]:48s} {len(sms):4d} "
                     f"{statistics.median(fm) / 1e3 if fm else math.nan:9.2f} {ratio:10.3f} "
                     f"{pearson(fm, em):+6.2f} {rp:>12s}  {fk['verdict']} / {ek['verdict']}; "
                     f"{pct(fk, 'lost_ns'):.1f} {pct(fk, 'recoverable_ns'):.1f} / "
                     f"{pct(ek, 'lost_ns'):.1f} {pct(ek, 'recoverable_ns'):.1f}; "
                     f"{dict(entry[3].get(key, {}))}"))
    for _, line in sorted(rows, reverse=True):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
