// The simulated GPU's modules as real cubins (tests/fault/fake_app.c's
// kernels, the same mangled names, one cubin per module: -DMOD=1, 2, 3),
// handed to the module-load callback when FAKESANITIZER_CUBINS names
// their folder, so that the interposer reads the kernels a module holds.
#if MOD == 1
__global__ void gemm(float *a, float *b) { a[threadIdx.x] += b[threadIdx.x]; }
__global__ void fill(float *a, int v) { a[threadIdx.x] = v; }
#elif MOD == 2
__global__ void softmax(float *a) { a[threadIdx.x] = __expf(a[threadIdx.x]); }
template <typename T> __global__ void reduce(T *a) { a[0] += a[threadIdx.x]; }
template __global__ void reduce<float>(float *);
#elif MOD == 3
__global__ void triad(float *a, float *b, float *c) { a[threadIdx.x] = b[threadIdx.x] + 2 * c[threadIdx.x]; }
#endif
