/* Loads CUDA fat binaries on the real CUDA driver and runs a kernel from each.
 *
 * usage: driver_check EXPECT FILE [EXPECT FILE ...]
 *   EXPECT: "run" (must load, launch and compute) or "nobinary" (must be
 *   refused with CUDA_ERROR_NO_BINARY_FOR_GPU: the pruner removed the code
 *   for this GPU and left none it can use).
 * Every file holds an extern "C" kernel add_one(int *p, int n) that adds 1
 * to p[0..n). libcuda.so.1 is dlopen'ed: nothing from CUDA is needed to
 * build this. Exit status 0 when every file behaved as expected. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef unsigned long long CUdeviceptr;

#define CUDA_ERROR_NO_BINARY_FOR_GPU 209

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDriverGetVersion)(int *);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleUnload)(CUmodule);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemFree)(CUdeviceptr);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, void *, void **, void **);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuGetErrorName)(CUresult, const char **);

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "driver_check: libcuda.so.1 has no %s\n", name);
    exit(2);
  }
  return p;
}

static const char *err_name(CUresult r) {
  const char *s = "?";
  if (cuGetErrorName(r, &s) != 0) s = "?";
  return s;
}

static unsigned char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* cuModuleLoadData reads a fat binary through its header: 8-aligned. */
  unsigned char *p = aligned_alloc(64, ((size_t)n + 63) / 64 * 64 + 64);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return p;
}

/* Loads, launches and checks one file; returns the first failing CUresult
 * (0 when the kernel ran and computed right, -1 when it computed wrong). */
static CUresult run_one(const unsigned char *image) {
  CUmodule mod;
  CUresult r = cuModuleLoadData(&mod, image);
  if (r) return r;
  CUfunction fn;
  enum { N = 1000 };
  int host[N];
  for (int i = 0; i < N; i++) host[i] = i * 7;
  CUdeviceptr d = 0;
  if ((r = cuModuleGetFunction(&fn, mod, "add_one")) || (r = cuMemAlloc(&d, sizeof host)) ||
      (r = cuMemcpyHtoD(d, host, sizeof host))) {
    cuModuleUnload(mod);
    return r;
  }
  int n = N;
  void *args[] = {&d, &n};
  if (!(r = cuLaunchKernel(fn, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL)) &&
      !(r = cuCtxSynchronize()))
    r = cuMemcpyDtoH(host, d, sizeof host);
  cuMemFree(d);
  cuModuleUnload(mod);
  if (r) return r;
  for (int i = 0; i < N; i++)
    if (host[i] != i * 7 + 1) return -1;
  return 0;
}

int main(int argc, char **argv) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "driver_check: %s\n", dlerror());
    return 2;
  }
#define LOAD(f, name) *(void **)&f = sym(lib, name)
  LOAD(cuInit, "cuInit");
  LOAD(cuDriverGetVersion, "cuDriverGetVersion");
  LOAD(cuDeviceGet, "cuDeviceGet");
  LOAD(cuDeviceGetName, "cuDeviceGetName");
  LOAD(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD(cuCtxSetCurrent, "cuCtxSetCurrent");
  LOAD(cuModuleLoadData, "cuModuleLoadData");
  LOAD(cuModuleUnload, "cuModuleUnload");
  LOAD(cuModuleGetFunction, "cuModuleGetFunction");
  LOAD(cuMemAlloc, "cuMemAlloc_v2");
  LOAD(cuMemFree, "cuMemFree_v2");
  LOAD(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  LOAD(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  LOAD(cuLaunchKernel, "cuLaunchKernel");
  LOAD(cuCtxSynchronize, "cuCtxSynchronize");
  LOAD(cuGetErrorName, "cuGetErrorName");
  CUdevice dev;
  CUcontext ctx;
  int version = 0, major = 0, minor = 0;
  char name[256] = "";
  CUresult r;
  if ((r = cuInit(0)) || (r = cuDriverGetVersion(&version)) || (r = cuDeviceGet(&dev, 0)) ||
      (r = cuDeviceGetName(name, sizeof name, dev)) ||
      (r = cuDeviceGetAttribute(&major, 75, dev)) || (r = cuDeviceGetAttribute(&minor, 76, dev)) ||
      (r = cuDevicePrimaryCtxRetain(&ctx, dev)) || (r = cuCtxSetCurrent(ctx))) {
    fprintf(stderr, "driver_check: CUDA setup failed: %d\n", r);
    return 2;
  }
  printf("driver %d.%d, %s, sm_%d%d\n", version / 1000, version % 1000 / 10, name, major, minor);
  int failed = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *expect = argv[i], *path = argv[i + 1];
    size_t size;
    unsigned char *image = slurp(path, &size);
    if (!image) {
      printf("FAIL  %-40s cannot read\n", path);
      failed++;
      continue;
    }
    r = run_one(image);
    free(image);
    int ok = strcmp(expect, "run") == 0 ? r == 0 : r == CUDA_ERROR_NO_BINARY_FOR_GPU;
    printf("%s  %-40s %7zu B  expected %-8s got %s\n", ok ? "ok  " : "FAIL", path, size, expect,
           r == 0 ? "ran, 1000 results right" : r == -1 ? "ran, WRONG results" : err_name(r));
    failed += !ok;
  }
  return failed ? 1 : 0;
}
