"""A data-parallel training job for nucatrace's rank tests (tests/gpu/ranks.sh):
the models of torch_train.py (a 4-layer transformer LM and a small conv net)
trained together under DistributedDataParallel, one process per GPU, NCCL
all-reducing the gradients (in DDP's 25 MB buckets, overlapped with the
backward pass), bf16 autocast, AdamW.

    torchrun --standalone --nproc-per-node 2 torch_ddp.py [--steps N] [--seed S]
             [--skew-us US]

torchrun sets RANK, LOCAL_RANK and WORLD_SIZE; each rank uses GPU LOCAL_RANK
and its own batches (seed + rank), so the all-reduce has work to do.  Every
rank makes the same kernel launches in the same order (the job view lines
ranks up by launch number when they are sampled).  --skew-us US makes the
last rank spin US microseconds more per step than the others, before its
backward pass (torch.cuda._sleep, at about 1.98 GHz; every rank launches it,
so the launches stay the same): a known gap for the job view to find, not
due to its SMs.

Prints, per rank, one line per 10 steps with the losses, then "rank R train
WALL s" (wall time of the steps after a barrier) and "rank R step MS ms"
(median step).  NVLink multicast stays off (NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1), as the lent machines require.
"""
import argparse
import os
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from torch_train import LM, ConvNet


class Both(nn.Module):
    """Both models as one module: DDP wraps one."""

    def __init__(self):
        super().__init__()
        self.lm, self.cnn = LM(), ConvNet()

    def forward(self, tokens, images):
        return self.lm(tokens), self.cnn(images)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skew-us", type=float, default=0)
    args = ap.parse_args()
    rank, local, world = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", device_id=dev)
    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP broadcasts rank 0's anyway)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True)
    model = DDP(Both().to(dev), device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    g = torch.Generator(device=dev).manual_seed(args.seed + rank)
    tokens = torch.randint(0, 8192, (16, 257), device=dev, generator=g)
    images = torch.randn(64, 3, 32, 32, device=dev, generator=g)
    labels = torch.randint(0, 10, (64,), device=dev, generator=g)
    skew = int(args.skew_us * 1980) if rank == world - 1 else 1

    def step():
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, out = model(tokens[:, :-1], images)
            l1 = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
            l2 = F.cross_entropy(out.float(), labels)
        if args.skew_us:
            torch.cuda._sleep(skew)
        (l1 + l2).backward()  # DDP all-reduces the gradients, bucket by bucket
        opt.step()
        return l1.detach(), l2.detach()

    dist.barrier()
    torch.cuda.synchronize()
    times = []
    t0 = time.perf_counter()
    for i in range(args.steps):
        ts = time.perf_counter()
        l1, l2 = step()
        if (i + 1) % 10 == 0:
            print(f"rank {rank} step {i + 1} loss {l1.item()!r} {l2.item()!r}", flush=True)
        times.append(time.perf_counter() - ts)
    torch.cuda.synchronize()
    dist.barrier()
    wall = time.perf_counter() - t0
    times.sort()
    print(f"rank {rank} train {wall:.6f} s")
    print(f"rank {rank} step {1000 * times[len(times) // 2]:.6f} ms")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
