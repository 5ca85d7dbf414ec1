"""Within each lockstep ring, one configuration's steps over another's.

floor.py A B LOG...: reads the repetitions' lines that interposer.py
--lockstep writes to stderr ("... repetition N bare against C ...: steps
X s against R s, median step Y ms against S ms") and prints, for both
metrics, the ratio A/B per ring (each against the same reference), its
median and the sign test's interval for it (interposer.median_ci)."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tests/bench"))
import interposer  # noqa: E402

def main():
    a, b, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rings = {}
    for path in logs:
        with open(path) as f:
            for m in interposer.LOCKSTEP_LINE.finditer(f.read()):
                rep, cfg = int(m[2]), m[3]
                # the line gives the reference's, then the configuration's
                rings.setdefault(rep, {})[cfg] = (float(m[5]), float(m[7]))
    both = sorted(r for r, c in rings.items() if a in c and b in c)
    if not both:
        sys.exit(f"floor.py: no ring holds both {a} and {b}")
    for i, metric in ((0, "steps_s"), (1, "step_ms")):
        q = sorted(rings[r][a][i] / rings[r][b][i] for r in both)
        lo, hi, cover = interposer.median_ci(q)
        print(f"{metric} {a}/{b} over {len(q)} rings: {statistics.median(q):.4f} "
              f"[{q[0]:.4f}-{q[-1]:.4f}], {cover:.0%} interval {lo:.4f}-{hi:.4f}")


main()
