"""The probe effect per SM, from tests/gpu/progs/probecost.cu run twice:
traced (nucatrace run --sample all) and untraced.

    probecost.py TRACE TRACED_OUT UNTRACED_OUT

For each block size and block length: the body's median time untraced
and traced (cycles: what instrumentation does to the block's own code),
the median probe cost per block (the trace record's span, first entry
callback to last exit callback, less the body: what the callbacks add),
its spread over SMs (max - min of the per-SM medians, over their mean)
and the correlation of the per-SM medians with the trace's L2 latency
map (r; the issue measured -0.45 for an empty kernel's whole block)."""
import json
import ntblocks
import statistics as st
import sys


def read_out(path):
    launches = []
    for line in open(path):
        w = line.split()
        if w[0] == "launch":
            launches.append({"threads": int(w[3]), "iters": int(w[5]), "blocks": []})
        else:
            launches[-1]["blocks"].append((int(w[1]), int(w[2]), int(w[3])))
    return launches


def corr(xs, ys):
    return st.correlation(xs, ys) if len(xs) > 2 and st.pstdev(xs) and st.pstdev(ys) else float("nan")


def main():
    trace, traced, untraced = sys.argv[1:4]
    db = ntblocks.connect(trace)
    row = db.execute("select json from maps").fetchone()
    lat = json.loads(row[0])["chain"] if row else None
    mhz = json.loads(row[0]).get("sm_clock_mhz") if row else None
    ids = [r[0] for r in db.execute(
        "select l.launch from launches l join kernels k using (kernel)"
        " where l.traced = 1 and k.mangled like '%work%' order by l.launch")]
    tl, ul = read_out(traced), read_out(untraced)
    if len(ids) != len(tl):
        sys.exit(f"{trace}: {len(ids)} traced launches of work, {traced} lists {len(tl)}")
    by_cfg = {}
    for lid, t, u in zip(ids, tl, ul):
        recs = {b: (sm, cs, ce) for b, sm, cs, ce in db.execute(
            "select block, sm, c_start, c_end from blocks where launch = ?", (lid,))}
        c = by_cfg.setdefault((t["threads"], t["iters"]), {"native": [], "body": [], "cost": {}})
        c["native"] += [e - s for _, s, e in u["blocks"]]
        for i, (sm, s, e) in enumerate(t["blocks"]):
            if i not in recs or recs[i][0] != sm:
                continue
            _, cs, ce = recs[i]
            c["body"].append(e - s)
            c["cost"].setdefault(sm, []).append((ce - cs) - (e - s))
    clock = f" (1 cycle = {1e3 / mhz:.3f} ns at {mhz} MHz)" if mhz else ""
    print(f"cycles{clock}; cost = trace span - body; spread = (max - min) / mean of the per-SM medians")
    print(f"{'threads':>7} {'iters':>6} {'native body':>11} {'traced body':>11} {'cost':>7} "
          f"{'spread':>7} {'r(map)':>7} {'SMs':>4}")
    for (threads, iters), c in sorted(by_cfg.items()):
        per_sm = {sm: st.median(v) for sm, v in c["cost"].items()}
        allc = [x for v in c["cost"].values() for x in v]
        m = st.mean(per_sm.values())
        spread = (max(per_sm.values()) - min(per_sm.values())) / m if m else float("nan")
        r = corr([lat[s] for s in per_sm], list(per_sm.values())) if lat else float("nan")
        print(f"{threads:7d} {iters:6d} {st.median(c['native']):11.0f} {st.median(c['body']):11.0f} "
              f"{st.median(allc):7.0f} {spread:7.3f} {r:7.2f} {len(per_sm):4d}")


if __name__ == "__main__":
    main()
