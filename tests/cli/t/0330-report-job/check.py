"""The job view against what the generator built: for every step, the
rank that finished its compute last, its lead, and each rank's compute,
to the nanosecond.  Usage: check.py GEN_OUTPUT REPORT_JSON"""
import json
import re
import sys

built = {}
for line in open(sys.argv[1]):
    m = re.match(r"step \d+ \(all-reduce at launch (\d+)\): compute ([\d ]+) ns; rank (\d+) last by (\d+) ns", line)
    if m:
        built[int(m[1])] = ([int(c) for c in m[2].split()], int(m[3]), int(m[4]))
job = json.load(open(sys.argv[2]))["jobs"][0]
ok = 0
for step in job["steps"]:
    compute, last, lead = built[step["launch"]]
    seen = [round(c["compute_ns"]) for c in step["ranks"]]
    if seen != compute or step["last_rank"] != last or round(step["lead_ns"]) != lead:
        print(f"step at launch {step['launch']}: report {seen}, last {step['last_rank']} by {step['lead_ns']}; "
              f"built {compute}, last {last} by {lead}")
        sys.exit(1)
    ok += 1
print(f"{ok} steps: the last rank, its lead and every rank's compute as built")
