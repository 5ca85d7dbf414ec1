# Each pair's step ratios from a runN-steps.txt (session 20): the sum of
# the case's steps over bare's, from step FROM on (1: the first timed step;
# the first step of all is left out already), and the ratio of median
# steps.   python3 steps.py run4-steps.txt [FROM]
import re, statistics, sys

lines = open(sys.argv[1]).read().split("\n")
start = int(sys.argv[2]) - 1 if len(sys.argv) > 2 else 0
for i, line in enumerate(lines[:-1]):
    m = re.match(r"\s+(?:\S+ )?steps_ms bare (.*)", line)
    n = re.match(r"\s+steps_ms (\S+) (.*)", lines[i + 1])
    if not (m and n):
        continue
    bare = [float(x) for x in m.group(1).split()]
    mine = [float(x) for x in n.group(2).split()]
    print(f"{n.group(1):16s} steps {start + 1}+: {sum(mine[start:]) / sum(bare[start:]):.4f}  "
          f"median step {statistics.median(mine) / statistics.median(bare):.4f}  "
          f"first steps {' '.join(f'{a / b:.2f}' for a, b in zip(mine[:3], bare[:3]))}")
