# Session 21: each lockstep pair's (runs 1-3) or ring's (run 4) ratio of a
# run's 299 timed steps to its bare reference's, grouped by how the
# programs were pinned, with the median, range, standard deviation and the
# sign test's interval for the median (tests/bench/interposer.py's
# median_ci), then the single-CPU groups pooled; a Mann-Whitney test of
# none's ratios against the control's; and, resampling runs 2-3's ratios,
# how often n pairs would show a 90% upper bound at or below 1.01; and,
# per group, how two programs' step series move together: the median
# correlation of a run's steps with its reference's, of the standard
# deviation of a step's ratio to its reference's, and of that ratio's
# lag-1 autocorrelation.
#   python3 ratios.py run1-steps.txt run2-steps.txt run3-steps.txt run4-steps.txt
import math, random, re, statistics, sys


def median_ci(q, want=0.90):
    n = len(q)
    best = (q[0], q[-1], 1 - 2 * 0.5 ** n)
    for k in range(1, n // 2 + 1):
        cover = 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if cover < want:
            break
        best = (q[k - 1], q[n - k], cover)
    return best


def show(name, q):
    q = sorted(q)
    lo, hi, cover = median_ci(q)
    print(f"{name:34s} n={len(q):2d} median {statistics.median(q):.4f} [{q[0]:.4f}-{q[-1]:.4f}] "
          f"sd {statistics.stdev(q):.4f}, {cover:.0%} interval {lo:.4f}-{hi:.4f}")


groups = {}
for path in sys.argv[1:]:
    run = path.split("-")[0]
    pin = None
    for line in open(path):
        if line.startswith("== "):  # a bench invocation: r<round>-<pin>, or ring
            tag = line[3:].strip()
            pin = {"free": "unpinned", "2-5": "taskset -c 2-5", "3": "taskset -c 3",
                   "ring": "main thread on 3, others on 4-7"}[tag.split("-", 1)[-1] if "-" in tag else tag]
        m = re.match(r"train-long lockstep repetition \d+ bare against (\S+) .*steps ([\d.]+) s against ([\d.]+) s", line)
        if m:
            groups.setdefault((pin, m.group(1)), []).append(float(m.group(3)) / float(m.group(2)))
for (pin, cfg), q in sorted(groups.items()):
    show(f"{pin}, {'control' if cfg == 'bare' else cfg}", q)
for cfg in ("bare", "none"):
    show(f"one CPU pooled, {'control' if cfg == 'bare' else cfg}",
         groups[("taskset -c 3", cfg)] + groups[("main thread on 3, others on 4-7", cfg)])


def mann_whitney(a, b):
    """Two-sided p of the normal approximation."""
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    z = (u - len(a) * len(b) / 2) / math.sqrt(len(a) * len(b) * (len(a) + len(b) + 1) / 12)
    return math.erfc(abs(z) / math.sqrt(2))


one = ("taskset -c 3", "main thread on 3, others on 4-7")
print("Mann-Whitney, none against the control: runs 2-3 p = %.2f; pooled p = %.2f" % (
    mann_whitney(groups[(one[0], "none")], groups[(one[0], "bare")]),
    mann_whitney(groups[(one[0], "none")] + groups[(one[1], "none")],
                 groups[(one[0], "bare")] + groups[(one[1], "bare")])))
rng = random.Random(21)
for cfg in ("none", "bare"):
    q = groups[(one[0], cfg)]
    shown = []
    for n in (16, 32, 40, 60):
        ok = sum(median_ci(sorted(rng.choice(q) for _ in range(n)))[1] <= 1.01 for _ in range(2000))
        shown.append(f"n={n} {ok / 2000:.0%}")
    print(f"resampled runs 2-3 {'control' if cfg == 'bare' else cfg}: upper bound <= 1.01 in " + ", ".join(shown))


def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(
        sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))


PINS = {"free": "unpinned", "2-5": "taskset -c 2-5", "3": "taskset -c 3", "ring": "main thread on 3, others on 4-7"}
series = {}
for path in sys.argv[1:]:
    blocks = re.split(r"^== (\S+)\n", open(path).read(), flags=re.M)[1:]
    for tag, text in zip(blocks[0::2], blocks[1::2]):
        pin = PINS[tag.split("-", 1)[-1] if "-" in tag else tag]
        lines = [[float(x) for x in m.split()] for m in re.findall(r"^\s+steps_ms \S+ (.*)$", text, re.M)]
        # a pair's two lines, the reference's first; a ring's three (the
        # reference's, the control's, none's)
        size = 3 if tag == "ring" else 2
        for i in range(0, len(lines), size):
            ref = lines[i]
            for steps in lines[i + 1:i + size]:
                r = [x / y for x, y in zip(steps, ref)]
                series.setdefault(pin, []).append((corr(steps, ref), statistics.stdev(r), corr(r[:-1], r[1:])))
for pin, v in sorted(series.items()):
    print(f"{pin:34s} n={len(v):2d} correlation {statistics.median(c for c, _, _ in v):.2f}, a step's ratio: "
          f"sd {statistics.median(s for _, s, _ in v):.3f}, lag-1 autocorrelation {statistics.median(a for _, _, a in v):.2f}")
