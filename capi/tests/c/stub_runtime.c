/* A stub OpenMP/HIP/CUDA offload runtime that prints every registration call
 * it gets, one line each, for the tests of `clangoffload wrap` (and of LLVM's
 * llvm-offload-wrapper, which must print the same). Link it with a wrapped
 * translation unit. Usage: prog [FATBIN_LEN]: main prints the FNV-1a hash of
 * FATBIN_LEN bytes of the registered fat binary.
 *
 * With -DENTRY_KIND=<k> it also puts offload entries in llvm_offload_entries:
 * entries of kind k (a kernel, variables of each type) and entries of other
 * kinds that the wrapper must pass over. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct __tgt_offload_entry {
  uint64_t reserved;
  uint16_t version;
  uint16_t kind;
  uint32_t flags;
  void *addr;
  char *symbol_name;
  uint64_t size;
  uint64_t data;
  void *aux_addr;
};

struct __tgt_device_image {
  void *ImageStart;
  void *ImageEnd;
  struct __tgt_offload_entry *EntriesBegin;
  struct __tgt_offload_entry *EntriesEnd;
};

struct __tgt_bin_desc {
  int32_t NumDeviceImages;
  struct __tgt_device_image *DeviceImages;
  struct __tgt_offload_entry *HostEntriesBegin;
  struct __tgt_offload_entry *HostEntriesEnd;
};

struct fatbin_wrapper {
  uint32_t magic;
  uint32_t version;
  const void *binary;
  void *reserved;
};

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3u;
  }
  return h;
}

static const char *name_or_null(const char *name) { return name ? name : "(null)"; }

/* ---- OpenMP ---- */

static void print_desc(const char *what, const struct __tgt_bin_desc *desc) {
  printf("%s images=%d entries=%td\n", what, (int)desc->NumDeviceImages,
         desc->HostEntriesEnd - desc->HostEntriesBegin);
  for (int32_t i = 0; i < desc->NumDeviceImages; i++) {
    const struct __tgt_device_image *img = &desc->DeviceImages[i];
    const unsigned char *s = img->ImageStart, *e = img->ImageEnd;
    printf("  image %d size=%td fnv=%016llx aligned8=%d same_entries=%d\n", (int)i, e - s,
           (unsigned long long)fnv1a(s, (size_t)(e - s)), (int)((uintptr_t)s % 8 == 0),
           (int)(img->EntriesBegin == desc->HostEntriesBegin &&
                 img->EntriesEnd == desc->HostEntriesEnd));
  }
}

void __tgt_register_lib(struct __tgt_bin_desc *desc) { print_desc("tgt_register_lib", desc); }

void __tgt_unregister_lib(struct __tgt_bin_desc *desc) {
  print_desc("tgt_unregister_lib", desc);
}

/* ---- HIP and CUDA ---- */

static void *handle_storage[2];
static const struct fatbin_wrapper *registered;

static void **register_fatbin(const char *rt, void *wrapper) {
  const struct fatbin_wrapper *w = wrapper;
  const unsigned char *first = w->binary;
  registered = w;
  printf("%s_register_fatbin magic=%08x version=%u reserved_null=%d aligned8=%d first=", rt,
         (unsigned)w->magic, (unsigned)w->version, w->reserved == NULL,
         (int)((uintptr_t)w % 8 == 0));
  for (int i = 0; i < 8; i++) printf("%02x", first[i]);
  printf("\n");
  return handle_storage;
}

static const char *handle_ok(void **handle) { return handle == handle_storage ? "ok" : "WRONG"; }

static void function(const char *rt, void **handle, void *addr, char *name, char *device_name,
                     int limit, void *tid, void *bid, void *block, void *grid, int *wsize) {
  printf("%s_register_function handle=%s addr=%p name=%s device_name=%s limit=%d rest_null=%d\n",
         rt, handle_ok(handle), addr, name_or_null(name), name_or_null(device_name), limit,
         tid == NULL && bid == NULL && block == NULL && grid == NULL && wsize == NULL);
}

static void var(const char *rt, void **handle, void *addr, char *name, char *device_name,
                int is_extern, size_t size, int constant, int global) {
  printf("%s_register_var handle=%s addr=%p name=%s device_name=%s extern=%d size=%zu "
         "constant=%d global=%d\n",
         rt, handle_ok(handle), addr, name_or_null(name), name_or_null(device_name), is_extern,
         size, constant, global);
}

static void managed(const char *rt, void **handle, void *aux, void *addr, char *name, size_t size,
                    int align) {
  printf("%s_register_managed_var handle=%s aux=%p addr=%p name=%s size=%zu align=%d\n", rt,
         handle_ok(handle), aux, addr, name_or_null(name), size, align);
}

void **__hipRegisterFatBinary(void *wrapper) { return register_fatbin("hip", wrapper); }
void **__cudaRegisterFatBinary(void *wrapper) { return register_fatbin("cuda", wrapper); }

void __hipUnregisterFatBinary(void **handle) {
  printf("hip_unregister_fatbin handle=%s\n", handle_ok(handle));
}
void __cudaUnregisterFatBinary(void **handle) {
  printf("cuda_unregister_fatbin handle=%s\n", handle_ok(handle));
}
void __cudaRegisterFatBinaryEnd(void **handle) {
  printf("cuda_register_fatbin_end handle=%s\n", handle_ok(handle));
}

int __hipRegisterFunction(void **handle, void *addr, char *name, char *device_name, int limit,
                          void *tid, void *bid, void *block, void *grid, int *wsize) {
  function("hip", handle, addr, name, device_name, limit, tid, bid, block, grid, wsize);
  return 0;
}
int __cudaRegisterFunction(void **handle, void *addr, char *name, char *device_name, int limit,
                           void *tid, void *bid, void *block, void *grid, int *wsize) {
  function("cuda", handle, addr, name, device_name, limit, tid, bid, block, grid, wsize);
  return 0;
}

void __hipRegisterVar(void **handle, void *addr, char *name, char *device_name, int is_extern,
                      size_t size, int constant, int global) {
  var("hip", handle, addr, name, device_name, is_extern, size, constant, global);
}
void __cudaRegisterVar(void **handle, void *addr, char *name, char *device_name, int is_extern,
                       size_t size, int constant, int global) {
  var("cuda", handle, addr, name, device_name, is_extern, size, constant, global);
}

void __hipRegisterManagedVar(void **handle, void *aux, void *addr, char *name, size_t size,
                             int align) {
  managed("hip", handle, aux, addr, name, size, align);
}
void __cudaRegisterManagedVar(void **handle, void *aux, void *addr, char *name, size_t size,
                              int align) {
  managed("cuda", handle, aux, addr, name, size, align);
}

void __hipRegisterSurface(void **handle, void *addr, char *name, char *device_name, int type,
                          int is_extern) {
  printf("hip_register_surface handle=%s addr=%p name=%s device_name=%s type=%d extern=%d\n",
         handle_ok(handle), addr, name_or_null(name), name_or_null(device_name), type, is_extern);
}

void __hipRegisterTexture(void **handle, void *addr, char *name, char *device_name, int type,
                          int normalized, int is_extern) {
  printf("hip_register_texture handle=%s addr=%p name=%s device_name=%s type=%d normalized=%d "
         "extern=%d\n",
         handle_ok(handle), addr, name_or_null(name), name_or_null(device_name), type, normalized,
         is_extern);
}

/* ---- Entries ---- */

#ifdef ENTRY_KIND
#define OTHER_KIND (ENTRY_KIND == 4 ? 2 : 4)
/* Fixed addresses, so that the lines can be compared between runs and tools. */
#define ADDR(n) ((void *)(uintptr_t)(0x1000 * (n)))
static char kernel_name[] = "kernel";
static char var_name[] = "device_var";
static char const_name[] = "const_var";
static char managed_name[] = "managed_var";
static char surface_name[] = "surface";
static char texture_name[] = "texture";
static char other_name[] = "other_kind";
static char omp_name[] = "omp_var";

__attribute__((section("llvm_offload_entries"), aligned(8), used))
struct __tgt_offload_entry stub_entries[] = {
    {0, 1, ENTRY_KIND, 0, ADDR(1), kernel_name, 0, 0, NULL},
    {0, 1, OTHER_KIND, 0, ADDR(2), other_name, 0, 0, NULL},
    {0, 1, ENTRY_KIND, 0x8, ADDR(3), var_name, 4, 0, NULL},
    {0, 1, ENTRY_KIND, 0x10, ADDR(4), const_name, 64, 0, NULL},
    {0, 1, ENTRY_KIND, 0x1, ADDR(5), managed_name, 16, 0x100000008u, ADDR(6)},
    {0, 1, 1, 0, ADDR(7), omp_name, 8, 0, NULL},
    {0, 1, ENTRY_KIND, 0x2 | 0x8, ADDR(8), surface_name, 8, 3, NULL},
    {0, 1, ENTRY_KIND, 0x3 | 0x20, ADDR(9), texture_name, 8, 2, NULL},
    {0, 1, ENTRY_KIND, 0x7, ADDR(10), other_name, 8, 0, NULL},
};
#endif

int main(int argc, char **argv) {
  printf("main\n");
  if (argc > 1 && registered) {
    size_t n = (size_t)strtoull(argv[1], NULL, 10);
    printf("fatbin fnv=%016llx\n",
           (unsigned long long)fnv1a((const unsigned char *)registered->binary, n));
  }
  return 0;
}
