# session 20 runs 1 and 2: where the default's dark-state cost of the eager loop
# comes from.  Lockstep pairs of the 300-step loop, bare against each case,
# rep-major order (the first side alternates by repetition).
import os, statistics, sys, tempfile, time
sys.path.insert(0, "tests/bench")
import interposer as I
cmd = ["python3", "tests/gpu/progs/torch_train.py", "--steps", "300", "--step-times"]
out = tempfile.mkdtemp()
ONE = ["--sample", "all,window=1000,skip=1000"]
SUB = os.path.abspath("build/tests/gpu/subcost.so")
X = ("NUCATRACE_X_NOEXEC", "NUCATRACE_X_UNSUB", "NUCATRACE_X_DARKALL", "NUCATRACE_X_NODRAIN", "NUCATRACE_X_RESUB", "CUDA_INJECTION64_PATH", "SUBCOST")
cases = (("default", "build/nucatrace", {}, []),
         ("onewin", "build/nucatrace", {}, ONE),
         ("onewin-unsub", "build-x/nucatrace", {"NUCATRACE_X_UNSUB": "1"}, ONE),
         ("subscribed", None, {"CUDA_INJECTION64_PATH": SUB, "SUBCOST": "none"}, None),
         ("onewin-darkall", "build-x/nucatrace", {"NUCATRACE_X_DARKALL": "1"}, ONE),
         ("default-noexec", "build-x/nucatrace", {"NUCATRACE_X_NOEXEC": "1"}, []),
         ("onewin-nodrain", "build-x/nucatrace", {"NUCATRACE_X_NODRAIN": "1"}, ONE),
         ("control", None, {}, None),
         ("onewin-resub", "build-x/nucatrace", {"NUCATRACE_X_RESUB": "1"}, ONE))
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
res = {}
real_popen = I.subprocess.Popen
for rep in range(reps):
    for name, nt, env, cfg in cases:
        if only and name not in only:
            continue
        for k in X:
            os.environ.pop(k, None)
        if nt:
            I.NT = nt
        first_bare = rep % 2 == 0
        # the case's env goes to its own process only
        def popen(args, **kw):
            e = dict(kw.pop("env", None) or os.environ)
            if args[0] == I.NT or (cfg is None and popen.n == (1 if first_bare else 0)):
                e.update(env)
            popen.n += 1
            return real_popen(args, env=e, **kw)
        popen.n = 0
        I.subprocess.Popen = popen
        side = cfg if cfg is not None else None
        try:
            if cfg is None:
                t = I.lockstep_pair(cmd, (None, None), out)
            else:
                t = I.lockstep_pair(cmd, (None, cfg) if first_bare else (cfg, None), out)
        except SystemExit as e:
            print(f"rep {rep + 1} {name}: FAILED {e}", flush=True)
            continue
        finally:
            I.subprocess.Popen = real_popen
        bare, mine = (t[0], t[1]) if first_bare else (t[1], t[0])
        r = (sum(mine) / sum(bare), statistics.median(mine) / statistics.median(bare))
        res.setdefault(name, []).append(r)
        print(f"rep {rep + 1} {name}: steps {sum(bare)/1000:.3f} s bare, {sum(mine)/1000:.3f} s; "
              f"ratio steps {r[0]:.4f}, median step {r[1]:.4f}  t={time.strftime('%T')}", flush=True)
        print(f"  {name} steps_ms bare {' '.join(f'{x:.2f}' for x in bare)}\n  steps_ms {name} "
              f"{' '.join(f'{x:.2f}' for x in mine)}", file=sys.stderr, flush=True)
for n, v in res.items():
    print(n, "steps", " ".join(f"{a:.4f}" for a, _ in v), "median step", " ".join(f"{b:.4f}" for _, b in v))
