#!/usr/bin/env python3
"""The report's validation (tests/gpu/validate.sh, docs/validation.md).

  validate.py shares DIR      from DIR/report.json and DIR's trace: the
                              per-SM work shares for the map-aware runs,
                              DIR/shares-map.txt (1 / latency, the paper's
                              rule) and DIR/shares-report.txt (the report's
                              persistent_shares for the naive kernel)
  validate.py compare DIR     every workload's prediction against its
                              measured gain; prints a table, writes
                              DIR/validation.json, exits 1 when a criterion
                              fails
"""
import glob
import json
import os
import sqlite3
import sys

NAIVE = {"chase": "chase_even", "stream": "stream_even", "fma": "fma_even", "tail": "chase_grid"}
NAIVE_VERSION = {"chase": "even", "stream": "even", "fma": "even", "tail": "grid"}


def kernel_of(report, name):
    ks = [k for k in report["kernels"] if k["name"] == name]
    if len(ks) != 1:
        sys.exit(f"validate.py: the report has {len(ks)} kernels named {name}")
    return ks[0]


def trace_map(d):
    traces = glob.glob(os.path.join(d, "*.sqlite"))
    if len(traces) != 1:
        sys.exit(f"validate.py: {len(traces)} traces in {d}, want 1")
    db = sqlite3.connect(f"file:{traces[0]}?mode=ro", uri=True)
    rows = db.execute("select json from maps").fetchall()
    if len(rows) != 1:
        sys.exit(f"validate.py: {traces[0]} holds {len(rows)} maps, want 1")
    return json.loads(rows[0][0])


def shares(d):
    w = os.path.basename(os.path.normpath(d))
    report = json.load(open(os.path.join(d, "report.json")))
    k = kernel_of(report, NAIVE[w])
    chain = trace_map(d)["chain"]
    mean = sum(1 / x for x in chain) / len(chain)
    with open(os.path.join(d, "shares-map.txt"), "w") as f:
        f.writelines(f"{1 / x / mean:.9f}\n" for x in chain)
    if not k.get("persistent_shares"):
        sys.exit(f"validate.py: no persistent_shares for {NAIVE[w]} (no fit?)")
    with open(os.path.join(d, "shares-report.txt"), "w") as f:
        f.writelines(f"{x:.9f}\n" for x in k["persistent_shares"])


def timed(path):
    t, checks = {}, {}
    for line in open(path):
        p = line.split()
        if p and p[0] == "time":
            t[p[2]] = float(p[4])
        elif p and p[0] == "check":
            checks[p[2]] = p[3]
    return t, checks


def compare(top):
    rows, ok = [], True
    for w in ("chase", "stream", "fma", "tail"):
        d = os.path.join(top, w)
        report = json.load(open(os.path.join(d, "report.json")))
        k = kernel_of(report, NAIVE[w])
        fit = k["fit"]
        base = k["credible_time_ns"]
        if not base or k["credible"] != k["replayed"]:
            ok = False
            print(f"FAIL {w}: {k['credible']} of {k['replayed']} launches credible")
            base = base or 1
        t, checks = timed(os.path.join(d, "timed.out"))
        naive = t[NAIVE_VERSION[w]]
        r = {
            "workload": w,
            "kernel": NAIVE[w],
            "sensitive": fit.get("sensitive"),
            "confidence": fit.get("confidence"),
            "slope_ns_per_cycle": fit.get("slope_ns_per_cycle"),
            "effect_pct": fit.get("effect_pct"),
            "replay_error_max_pct": k["replay_error_max_pct"],
            "lost_pct": 100 * k["lost_ns"] / base,
            "recoverable_pct": 100 * k["recoverable_ns"] / base,
            "persistent_pct": 100 * k["persistent_ns"] / base,
            "persistent_by_map_pct": 100 * k["persistent_by_map_ns"] / base,
            "persistent_by_shape_pct": 100 * k["persistent_by_shape_ns"] / base,
            "naive_ms": naive,
            "times_ms": t,
            "checks_equal": len(set(checks.values())) == 1,
        }
        # What the report predicts for each persistent version, against the
        # naive one.  chase/stream/fma: the naive version already is one even
        # persistent wave, so splitting by speed gains the map's part only;
        # tail: the grid's shape as well.
        if w == "tail":
            r["predicted_aware_pct"] = r["persistent_pct"]
            r["predicted_even_pct"] = r["persistent_by_shape_pct"]
        else:
            r["predicted_aware_pct"] = r["persistent_by_map_pct"]
        for v, ms in t.items():
            r[f"measured_{v}_pct".replace(":", "_")] = 100 * (naive - ms) / naive
        meas = r["measured_aware_report_pct"]
        pred = r["predicted_aware_pct"]
        tol = max(1.0, 0.25 * abs(meas))
        r["tolerance_pp"] = tol
        r["match"] = abs(meas - pred) <= tol
        verdicts = [r["match"], r["checks_equal"]]
        if w == "chase":
            verdicts.append(bool(fit.get("sensitive")))
        if w in ("stream", "fma"):
            verdicts.append(not fit.get("sensitive"))
            verdicts.append(abs(pred) < 0.5)
        if w == "tail":
            te = max(1.0, 0.25 * abs(r["measured_even_pct"]))
            r["match_even"] = abs(r["measured_even_pct"] - r["predicted_even_pct"]) <= te
            verdicts.append(r["match_even"])
        r["pass"] = all(verdicts)
        ok &= r["pass"]
        rows.append(r)
    print(f"{'workload':8} {'L2-sen':6} {'effect%':>7} {'lost%':>6} {'recov%':>6} "
          f"{'pred%':>6} {'meas%':>6} {'tol':>5} {'map%':>6}  verdict")
    for r in rows:
        print(f"{r['workload']:8} {('yes' if r['sensitive'] else 'no'):6} {r['effect_pct']:7.2f} "
              f"{r['lost_pct']:6.2f} {r['recoverable_pct']:6.2f} {r['predicted_aware_pct']:6.2f} "
              f"{r['measured_aware_report_pct']:6.2f} {r['tolerance_pp']:5.2f} "
              f"{r['measured_aware_map_pct']:6.2f}  {'ok' if r['pass'] else 'FAIL'}")
        if r["workload"] == "tail":
            print(f"{'':8} even persistent: predicted {r['predicted_even_pct']:.2f}%, "
                  f"measured {r['measured_even_pct']:.2f}%")
    print("pred%: the report's prediction for the version split by its persistent_shares; meas%: "
          "its measured gain; map%: the gain of the version split by 1 / latency (the paper's rule)")
    json.dump(rows, open(os.path.join(top, "validation.json"), "w"), indent=1)
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("shares", "compare"):
        sys.exit(__doc__)
    if sys.argv[1] == "shares":
        shares(sys.argv[2])
    else:
        sys.exit(0 if compare(sys.argv[2]) else 1)
