// The kernel every fat binary of the driver check holds. No CUDA header.
#define __global__ __attribute__((global))
extern "C" __global__ void add_one(int *p, int n) {
  int i = __nvvm_read_ptx_sreg_tid_x() + __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x();
  if (i < n) p[i] += 1;
}
