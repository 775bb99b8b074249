// A CUDA program clang compiles with our `fatbinary` (and our `nvprune`
// applied to its object in place), linked with NVIDIA's libcudart_static:
// the runtime registers the fat binary clang embedded and launches from it.
// Exit 0: computed right; 3: no kernel image for this GPU; 1: anything else.
#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; };
typedef struct CUstream_st *cudaStream_t;
extern "C" {
int cudaLaunchKernel(const void *, dim3, dim3, void **, unsigned long, cudaStream_t);
int cudaMalloc(void **, unsigned long);
int cudaMemcpy(void *, const void *, unsigned long, int);
int cudaDeviceSynchronize(void);
const char *cudaGetErrorName(int);
int printf(const char *, ...);
}
__global__ void add_one(int *p, int n) {
  int i = __nvvm_read_ptx_sreg_tid_x() + __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x();
  if (i < n) p[i] += 1;
}
int main() {
  enum { N = 1000 };
  static int host[N];
  for (int i = 0; i < N; i++) host[i] = 3 * i;
  int *d = 0, n = N, r;
  void *args[] = {&d, &n};
  if ((r = cudaMalloc((void **)&d, sizeof host)) || (r = cudaMemcpy(d, host, sizeof host, 1)) ||
      (r = cudaLaunchKernel((const void *)add_one, dim3{8, 1, 1}, dim3{128, 1, 1}, args, 0, 0)) ||
      (r = cudaDeviceSynchronize()) || (r = cudaMemcpy(host, d, sizeof host, 2))) {
    printf("%s\n", cudaGetErrorName(r));
    return r == 209 ? 3 : 1;  // cudaErrorNoKernelImageForDevice
  }
  for (int i = 0; i < N; i++)
    if (host[i] != 3 * i + 1) {
      printf("wrong result at %d\n", i);
      return 1;
    }
  printf("ran, %d results right\n", N);
  return 0;
}
