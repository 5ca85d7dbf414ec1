"""A real training loop for nucatrace's GPU tests and benchmarks: a 4-layer
transformer language model (d=512, 8 heads, sequence 256, batch 16) and a
small conv net (CIFAR-sized images), trained together in bf16 autocast with
AdamW, about a thousand kernel launches per step (PyTorch's own elementwise
and reduction kernels, cuBLAS GEMMs, cuDNN convolutions, fused attention).

    python3 torch_train.py [--steps N] [--graphs | --compile] [--seed S] [--scale K]

Prints one line per 10 steps with the losses in full precision (so an
untraced and a traced run can be compared byte for byte), then
"train WALL s" (wall time of the steps, after a CUDA sync) and "step MS ms"
(median step time).  --graphs captures one whole step (forward, backward,
optimizer) into a CUDA graph and replays it: the pattern of
torch.cuda.graphs and torch.compile(mode="reduce-overhead").  --compile runs
that instead: both models compiled with mode="reduce-overhead" (Inductor's
kernels, replayed as CUDA graphs by its graph trees, forward and backward),
the loss and the optimizer eager, three steps of warm-up (the compile and
the graphs' recording) before the timed ones.  --scale K multiplies both batches by
K: the same launches, each K times the work, so that the GPU, not Python,
sets the pace (the eager loop at K=1 waits on the host, whose jitter
between runs hides a 1% difference).  --lockstep IN,OUT,READY takes turns
with other processes (tests/bench/interposer.py --lockstep): once ready
to train it writes its process id and a newline to the FIFO READY, then
before each step reads a byte from IN and after it (and a CUDA sync)
writes one to OUT, so the programs of a ring take their steps in turn and
meet the same host; "train" is then the sum of the steps' times.

Deterministic: fixed seeds, deterministic algorithms, no cuDNN autotuning.
"""
import argparse
import os
import time
T_BEGIN = time.time()  # before torch is imported

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LM(nn.Module):
    def __init__(self, vocab=8192, d=512, layers=4, heads=8, seq=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[: idx.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 64, 3, padding=1)
        self.b1 = nn.BatchNorm2d(64)
        self.c2 = nn.Conv2d(64, 128, 3, padding=1)
        self.b2 = nn.BatchNorm2d(128)
        self.c3 = nn.Conv2d(128, 256, 3, padding=1)
        self.b3 = nn.BatchNorm2d(256)
        self.fc = nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.b2(self.c2(x))), 2)
        x = F.relu(self.b3(self.c3(x)))
        return self.fc(x.mean(dim=(2, 3)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--graphs", action="store_true")
    ap.add_argument("--compile", action="store_true", help='models compiled with mode="reduce-overhead"')
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step-times", action="store_true", help="print every step's host time (ms)")
    ap.add_argument("--scale", type=int, default=1, help="batches K times larger")
    ap.add_argument("--lockstep", metavar="IN,OUT,READY", help="take turns with another process, step by step")
    args = ap.parse_args()
    if args.graphs and args.compile:
        ap.error("--graphs and --compile: one or the other")
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True)
    dev = "cuda"
    lm, cnn = LM().to(dev), ConvNet().to(dev)
    params = list(lm.parameters()) + list(cnn.parameters())
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.01, capturable=args.graphs)
    g = torch.Generator(device=dev).manual_seed(args.seed)
    tokens = torch.randint(0, 8192, (16 * args.scale, 257), device=dev, generator=g)
    images = torch.randn(64 * args.scale, 3, 32, 32, device=dev, generator=g)
    labels = torch.randint(0, 10, (64 * args.scale,), device=dev, generator=g)
    losses = torch.zeros(2, device=dev)
    def forward(tok, img, lab):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = lm(tok[:, :-1])
            l1 = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tok[:, 1:].reshape(-1))
            l2 = F.cross_entropy(cnn(img).float(), lab)
        return l1, l2

    # --compile: both models' forward and losses as one compiled function
    # (one graph forward, one backward: two compiled models each invoked
    # in a step had the second's replay overwrite the first's saved
    # activations before the backward)
    fwd = torch.compile(forward, mode="reduce-overhead") if args.compile else forward

    def step():
        if args.compile:
            torch.compiler.cudagraph_mark_step_begin()  # last step's graph outputs may be overwritten
        # --compile: the gradients come out of the backward's graph, in its
        # memory, overwritten by its next replay: set to None, not zeroed
        # in place (an H100 run of 2026-12-06 stopped at the second step)
        opt.zero_grad(set_to_none=args.compile)
        l1, l2 = fwd(tokens, images, labels)
        (l1 + l2).backward()
        opt.step()
        losses[0].copy_(l1.detach())
        losses[1].copy_(l2.detach())

    if args.graphs:
        # Warm up on a side stream (allocations, lazy module loads), then
        # capture one step; replays run it with no launches from Python.
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        run = graph.replay
    else:
        if args.compile:
            for _ in range(3):  # compiled, then recorded as graphs, then replayed
                step()
        run = step
    torch.cuda.synchronize()
    t_ready = time.time()
    turn_in = turn_out = None
    if args.lockstep:
        # O_RDWR: a FIFO opened so neither blocks at open nor breaks when
        # the other side has gone
        fin, fout, fready = args.lockstep.split(",")
        turn_in, turn_out = os.open(fin, os.O_RDWR), os.open(fout, os.O_RDWR)
        ready = os.open(fready, os.O_RDWR)
        os.write(ready, f"{os.getpid()}\n".encode())
        os.close(ready)
    times = []
    t0 = time.perf_counter()
    for i in range(args.steps):
        if turn_in is not None:
            os.read(turn_in, 1)
        ts = time.perf_counter()
        run()
        if (i + 1) % 10 == 0:
            l = losses.tolist()  # a sync, as a logging training loop has
            print(f"step {i + 1} loss {l[0]!r} {l[1]!r}", flush=True)
        if turn_out is not None:
            torch.cuda.synchronize()  # the other's turn on an idle GPU
        times.append(time.perf_counter() - ts)
        if turn_out is not None:
            os.write(turn_out, b"t")
    torch.cuda.synchronize()
    wall = sum(times) if turn_in is not None else time.perf_counter() - t0
    if args.step_times:
        print("step_times_ms " + " ".join(f"{1000 * t:.3f}" for t in times))
    times.sort()
    print(f"train {wall:.6f} s")
    print(f"step {1000 * times[len(times) // 2]:.6f} ms")
    # when the program began (before torch's import), was ready to train
    # (CUDA, the models, the graph) and ended (Unix time): the bench sets
    # them against its process's start and exit
    print(f"clock_begin {T_BEGIN:.6f}")
    print(f"clock_ready {t_ready:.6f}")
    print(f"clock_end {time.time():.6f}", flush=True)


if __name__ == "__main__":
    main()
