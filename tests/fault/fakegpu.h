/* What the simulated GPU's two halves (fakesanitizer_gpu.c, the GPU and
 * its launches; fakecuda_gpu.c, the driver calls that answer for it)
 * must agree on. */
#ifndef NT_FAKEGPU_H
#define NT_FAKEGPU_H

/* FAKECUDA_KERNEL_HANDLES=1: a launch names a CUkernel, its function's id
 * plus this (fakegpu_launch; fakecuda_gpu.c's cuKernel calls) */
#define FAKEGPU_KERNEL_BASE 0x100000

#endif
