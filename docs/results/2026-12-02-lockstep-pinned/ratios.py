# Session 21: each lockstep pair's (runs 1-3) or ring's (run 4) ratio of a
# run's 299 timed steps to its bare reference's, grouped by run and by how
# the programs were pinned, with the median, range, standard deviation and
# the sign test's interval for the median (tests/bench/interposer.py's
# median_ci); then by pinning over all runs, the single-CPU groups pooled;
# a Mann-Whitney test of none's ratios against the control's; resampling
# runs 2-3's ratios, how often n pairs would show a 90% upper bound at or
# below 1.01; and, per pinning, how two programs' step series move
# together: the median correlation of a run's steps with its reference's,
# of the standard deviation of a step's ratio to its reference's, and of
# that ratio's lag-1 autocorrelation.
#   python3 ratios.py run1-steps.txt run2-steps.txt run3-steps.txt run4-steps.txt
# Each file is the bench's stderr of one or more invocations, each after a
# line "== TAG" (TAG: rROUND-PIN for pairs, "ring" for run 4's ring of a
# reference, a control and none).
import math, os, random, re, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/bench"))
from interposer import median_ci  # noqa: E402

PINS = {"free": "unpinned", "2-5": "taskset -c 2-5", "3": "taskset -c 3", "ring": "main thread on 3, others on 4-7"}
ONE_CPU = ("taskset -c 3", "main thread on 3, others on 4-7")


def show(name, q):
    q = sorted(q)
    lo, hi, cover = median_ci(q)
    print(f"{name:44s} n={len(q):2d} median {statistics.median(q):.4f} [{q[0]:.4f}-{q[-1]:.4f}] "
          f"sd {statistics.stdev(q):.4f}, {cover:.0%} interval {lo:.4f}-{hi:.4f}")


def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(
        sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))


def mann_whitney(a, b):
    """Two-sided p of the normal approximation."""
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    z = (u - len(a) * len(b) / 2) / math.sqrt(len(a) * len(b) * (len(a) + len(b) + 1) / 12)
    return math.erfc(abs(z) / math.sqrt(2))


ratios, by_run, series = {}, {}, {}
for path in sys.argv[1:]:
    run = path.split("-")[0]
    blocks = re.split(r"^== (\S+)\n", open(path).read(), flags=re.M)[1:]
    for tag, text in zip(blocks[0::2], blocks[1::2]):
        pin = PINS[tag.split("-", 1)[1] if "-" in tag else tag]
        for cfg, b, c in re.findall(r"^train-long lockstep repetition \d+ bare against (\S+) .*"
                                    r"steps ([\d.]+) s against ([\d.]+) s", text, re.M):
            ratios.setdefault((pin, cfg), []).append(float(c) / float(b))
            by_run.setdefault((run, pin, cfg), []).append(float(c) / float(b))
        # every step: a pair's reference and then the other's; a ring's
        # reference and then each other run's, one per ratio line
        lines = [[float(x) for x in m.split()] for m in re.findall(r"^\s+steps_ms \S+ (.*)$", text, re.M)]
        size = 1 + len(re.findall(r"^train-long lockstep repetition 1 ", text, re.M)) if tag == "ring" else 2
        for i in range(0, len(lines), size):
            ref = lines[i]
            for steps in lines[i + 1:i + size]:
                r = [x / y for x, y in zip(steps, ref)]
                x = (corr(steps, ref), statistics.stdev(r), corr(r[:-1], r[1:]))
                series.setdefault(pin, []).append(x)
                series.setdefault(f"{run}, {pin}", []).append(x)


def name(cfg):
    return "control" if cfg == "bare" else cfg


for (run, pin, cfg), q in sorted(by_run.items()):
    show(f"{run}, {pin}, {name(cfg)}", q)
print()
for (pin, cfg), q in sorted(ratios.items()):
    show(f"{pin}, {name(cfg)}", q)
for cfg in ("bare", "none"):
    show(f"one CPU pooled, {name(cfg)}", ratios[(ONE_CPU[0], cfg)] + ratios[(ONE_CPU[1], cfg)])
print("\nMann-Whitney, none against the control: runs 2-3 p = %.2f; pooled p = %.2f" % (
    mann_whitney(ratios[(ONE_CPU[0], "none")], ratios[(ONE_CPU[0], "bare")]),
    mann_whitney(ratios[(ONE_CPU[0], "none")] + ratios[(ONE_CPU[1], "none")],
                 ratios[(ONE_CPU[0], "bare")] + ratios[(ONE_CPU[1], "bare")])))
rng = random.Random(21)
for cfg in ("none", "bare"):
    q = ratios[(ONE_CPU[0], cfg)]
    shown = []
    for n in (16, 32, 40, 60):
        ok = sum(median_ci(sorted(rng.choice(q) for _ in range(n)))[1] <= 1.01 for _ in range(2000))
        shown.append(f"n={n} {ok / 2000:.0%}")
    print(f"resampled runs 2-3, {name(cfg)}: upper bound <= 1.01 in " + ", ".join(shown))
print()
for pin, v in sorted(series.items()):
    print(f"{pin:40s} n={len(v):2d} correlation {statistics.median(c for c, _, _ in v):.2f}, a step's ratio: "
          f"sd {statistics.median(s for _, s, _ in v):.3f}, lag-1 autocorrelation {statistics.median(a for _, _, a in v):.2f}")
