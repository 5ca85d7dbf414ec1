"""Per ring, where one configuration's steps exceed another's: the first
three timed steps (the default's window) against the rest, as a share of the
reference's steps' total.  split.py LOG..."""
import re
import statistics
import sys
for f in sys.argv[1:]:
    txt=open(f).read()
    data={};cur=None;pend=None
    for line in txt.splitlines():
        m=re.match(r"\S+ lockstep repetition (\d+) bare against (\S+)",line)
        if m:
            cur=int(m[1])
            if pend: data.setdefault(cur,{})["reference"]=pend; pend=None
            continue
        m=re.match(r"\s+steps_ms (\S+) (.*)",line)
        if m:
            v=[float(x) for x in m[2].split()]
            if m[1]=="reference": pend=v
            else: data.setdefault(cur,{})[m[1]]=v
    print(f,len(data),"rings")
    for a,b in [("default","sanitizer"),("sanitizer","control"),("control","reference"),("default","control")]:
        head=[];tail=[];tot=[]
        for r,d in data.items():
            A=d[a];B=d[b];R=sum(d["reference"])
            head.append((sum(A[:3])-sum(B[:3]))/R); tail.append((sum(A[3:])-sum(B[3:]))/R); tot.append((sum(A)-sum(B))/R)
        print(f"  {a}-{b}, share of the reference's steps: timed steps 1-3 {statistics.median(head):+.4f}  4-end {statistics.median(tail):+.4f}  all {statistics.median(tot):+.4f}")
    for n in ("default","sanitizer"):
        c=[]
        for r,d in data.items():
            A=d[n];med=statistics.median(A); c.append(sum(1 for x in A[3:] if x>2*med))
        print(f"  {n}: steps 4-end over 2x its median, per ring: {sorted(c)}")
