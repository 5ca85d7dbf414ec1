# make bench: median kernel time of a bf16 GEMM loop in PyTorch (cuBLAS).
# All GEMMs are queued before one wait, so the events time the kernels,
# not the host's launch path.
import torch

a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
c = a @ b
torch.cuda.synchronize()
ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(60)]
for s, e in ev:
    s.record()
    c = a @ b
    e.record()
torch.cuda.synchronize()
times = sorted(s.elapsed_time(e) for s, e in ev[10:])
print(f"gemm {times[len(times) // 2]:.6f} ms")
