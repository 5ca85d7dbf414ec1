# An unmodified PyTorch program for the interposer: cuBLAS GEMMs (SASS-only
# library kernels) plus a few elementwise kernels; prints checksums so
# output with and without the interposer can be compared.
import torch

torch.manual_seed(0)
a = torch.randn(2048, 2048, device="cuda")
b = torch.randn(2048, 2048, device="cuda")
for i in range(20):
    c = a @ b
    a = torch.tanh(c / 45.0)  # entries of c are about N(0, 45): a stays O(1)
torch.cuda.synchronize()
print("checksum", round(float(a.double().abs().sum()), 1))
