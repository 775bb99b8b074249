/* The offload runtime structures of clangoffload.h have LLVM's layout, and
 * clangoffload_device_images_fill finds the images of LLVM 22's files.
 * Usage: wrapper FIXTURES_DIR MIXED_FILE
 * (MIXED_FILE: a v1 binary with image "first", a compressed v3 binary and a
 * v1 binary with image "second", written by the Rust side of the test). */
#include "clangoffload.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x86-64 (LP64) layouts, as LLVM's OffloadWrapper and Utility emit them. */
_Static_assert(sizeof(void *) == 8, "these offsets are for 64-bit hosts");

_Static_assert(sizeof(__tgt_offload_entry) == 56, "entry size");
_Static_assert(offsetof(__tgt_offload_entry, reserved) == 0, "reserved");
_Static_assert(offsetof(__tgt_offload_entry, version) == 8, "version");
_Static_assert(offsetof(__tgt_offload_entry, kind) == 10, "kind");
_Static_assert(offsetof(__tgt_offload_entry, flags) == 12, "flags");
_Static_assert(offsetof(__tgt_offload_entry, addr) == 16, "addr");
_Static_assert(offsetof(__tgt_offload_entry, symbol_name) == 24, "symbol_name");
_Static_assert(offsetof(__tgt_offload_entry, size) == 32, "size");
_Static_assert(offsetof(__tgt_offload_entry, data) == 40, "data");
_Static_assert(offsetof(__tgt_offload_entry, aux_addr) == 48, "aux_addr");
_Static_assert(_Alignof(__tgt_offload_entry) == 8, "entry alignment");

_Static_assert(sizeof(__tgt_offload_entry_legacy) == 32, "legacy size");
_Static_assert(offsetof(__tgt_offload_entry_legacy, addr) == 0, "legacy addr");
_Static_assert(offsetof(__tgt_offload_entry_legacy, name) == 8, "legacy name");
_Static_assert(offsetof(__tgt_offload_entry_legacy, size) == 16, "legacy size");
_Static_assert(offsetof(__tgt_offload_entry_legacy, flags) == 24, "legacy flags");
_Static_assert(offsetof(__tgt_offload_entry_legacy, reserved) == 28, "legacy reserved");

_Static_assert(sizeof(__tgt_device_image) == 32, "device image size");
_Static_assert(offsetof(__tgt_device_image, ImageStart) == 0, "ImageStart");
_Static_assert(offsetof(__tgt_device_image, ImageEnd) == 8, "ImageEnd");
_Static_assert(offsetof(__tgt_device_image, EntriesBegin) == 16, "EntriesBegin");
_Static_assert(offsetof(__tgt_device_image, EntriesEnd) == 24, "EntriesEnd");

/* i32 then three pointers: 4 bytes of padding after NumDeviceImages. */
_Static_assert(sizeof(__tgt_bin_desc) == 32, "bin desc size");
_Static_assert(offsetof(__tgt_bin_desc, NumDeviceImages) == 0, "NumDeviceImages");
_Static_assert(offsetof(__tgt_bin_desc, DeviceImages) == 8, "DeviceImages");
_Static_assert(offsetof(__tgt_bin_desc, HostEntriesBegin) == 16, "HostEntriesBegin");
_Static_assert(offsetof(__tgt_bin_desc, HostEntriesEnd) == 24, "HostEntriesEnd");

_Static_assert(sizeof(__tgt_image_info) == 32, "image info size");
_Static_assert(offsetof(__tgt_image_info, version) == 0, "info version");
_Static_assert(offsetof(__tgt_image_info, image_number) == 4, "image_number");
_Static_assert(offsetof(__tgt_image_info, number_images) == 8, "number_images");
_Static_assert(offsetof(__tgt_image_info, offload_arch) == 16, "offload_arch");
_Static_assert(offsetof(__tgt_image_info, compile_opts) == 24, "compile_opts");

_Static_assert(sizeof(clangoffload_fatbin_wrapper) == 24, "fatbin wrapper size");
_Static_assert(offsetof(clangoffload_fatbin_wrapper, magic) == 0, "magic");
_Static_assert(offsetof(clangoffload_fatbin_wrapper, version) == 4, "wrapper version");
_Static_assert(offsetof(clangoffload_fatbin_wrapper, binary) == 8, "binary");
_Static_assert(offsetof(clangoffload_fatbin_wrapper, reserved) == 16, "wrapper reserved");

_Static_assert(CLANGOFFLOAD_FATBIN_MAGIC_HIP == 0x48495046, "HIPF");
_Static_assert(CLANGOFFLOAD_FATBIN_MAGIC_HIPK == 0x4B504948, "HIPK");
_Static_assert(CLANGOFFLOAD_FATBIN_MAGIC_CUDA == 0x466243B1, "CUDA");
_Static_assert(CLANGOFFLOAD_ENTRY_KIND_OPENMP == 1 && CLANGOFFLOAD_ENTRY_KIND_CUDA == 2 &&
                   CLANGOFFLOAD_ENTRY_KIND_HIP == 4 && CLANGOFFLOAD_ENTRY_KIND_SYCL == 8,
               "entry kinds");

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) exit(2);
  fclose(f);
  *len = (size_t)size;
  return data;
}

static unsigned char *read_fixture(const char *dir, const char *name, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return read_file(path, len);
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* The entries the records are to point at, as a linked program's would be. */
static __tgt_offload_entry entries[2];

/* An image as an independent reading of a version 1 binary finds it. */
struct image {
  size_t offset, size;
};

/* LLVM 22's layout: binaries back to back, each with one entry whose image
 * offset and size sit at +24/+32 of the entry at the header's offset 16. */
static size_t walk_v1(const unsigned char *data, size_t len, struct image *out, size_t cap) {
  size_t n = 0, at = 0;
  while (at + 32 <= len && n < cap) {
    uint64_t size = le64(data + at + 8);
    const unsigned char *entry = data + at + le64(data + at + 16);
    out[n].offset = at + (size_t)le64(entry + 24);
    out[n].size = (size_t)le64(entry + 32);
    n++;
    at += (size_t)size;
  }
  return n;
}

static int record_is(const __tgt_device_image *r, const unsigned char *start, size_t size) {
  return (const unsigned char *)r->ImageStart == start &&
         (const unsigned char *)r->ImageEnd == start + size && r->EntriesBegin == &entries[0] &&
         r->EntriesEnd == &entries[2];
}

static void test_multi_and_embedded(const char *dir) {
  size_t len, obj_len;
  unsigned char *multi = read_fixture(dir, "offload/multi.offbin", &len);
  unsigned char *obj = read_fixture(dir, "offload/embed.o", &obj_len);
  struct image want[16];
  size_t n = walk_v1(multi, len, want, 16);
  CHECK(n == 9);

  __tgt_device_image out[16];
  size_t count = 0, skipped = 99;
  CHECK(clangoffload_device_images_fill(multi, len, &entries[0], &entries[2], out, 16, &count,
                                        &skipped) == CLANGOFFLOAD_STATUS_OK);
  CHECK(count == n && skipped == 0);
  for (size_t i = 0; i < n && i < count; i++) {
    CHECK(record_is(&out[i], multi + want[i].offset, want[i].size));
  }

  /* embed.o carries multi.offbin in .llvm.offloading: the same images, in
   * place in the object. */
  __tgt_device_image in_obj[16];
  count = 0;
  CHECK(clangoffload_device_images_fill(obj, obj_len, &entries[0], &entries[2], in_obj, 16, &count,
                                        NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(count == n);
  for (size_t i = 0; i < n && i < count; i++) {
    const unsigned char *s = in_obj[i].ImageStart, *e = in_obj[i].ImageEnd;
    CHECK(s >= obj && s <= e && e <= obj + obj_len);
    CHECK((size_t)(e - s) == want[i].size);
    CHECK(memcmp(s, multi + want[i].offset, want[i].size) == 0);
  }

  /* Too small: nothing written, the count needed stored. */
  __tgt_device_image few[3];
  memset(few, 0xAB, sizeof few);
  unsigned char before[sizeof few];
  memcpy(before, few, sizeof few);
  count = 0;
  CHECK(clangoffload_device_images_fill(multi, len, NULL, NULL, few, 3, &count, NULL) ==
        CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  CHECK(count == 9);
  CHECK(memcmp(before, few, sizeof few) == 0);
  count = 0;
  CHECK(clangoffload_device_images_fill(multi, len, NULL, NULL, NULL, 0, &count, NULL) ==
        CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  CHECK(count == 9);

  /* Exactly enough. */
  CHECK(clangoffload_device_images_fill(multi, len, NULL, NULL, out, 9, &count, NULL) ==
        CLANGOFFLOAD_STATUS_OK);
  CHECK(out[8].EntriesBegin == NULL && out[8].EntriesEnd == NULL);

  free(multi);
  free(obj);
}

static void test_compressed_skipped(const char *mixed_path) {
  size_t len;
  unsigned char *data = read_file(mixed_path, &len);
  __tgt_device_image out[4];
  size_t count = 0, skipped = 0;
  CHECK(clangoffload_device_images_fill(data, len, &entries[0], &entries[2], out, 4, &count,
                                        &skipped) == CLANGOFFLOAD_STATUS_OK);
  CHECK(count == 2 && skipped == 1);
  if (count == 2) {
    CHECK((char *)out[0].ImageEnd - (char *)out[0].ImageStart == 5);
    CHECK(memcmp(out[0].ImageStart, "first", 5) == 0);
    CHECK((char *)out[1].ImageEnd - (char *)out[1].ImageStart == 6);
    CHECK(memcmp(out[1].ImageStart, "second", 6) == 0);
  }
  free(data);
}

static void test_arguments(void) {
  size_t count = 7;
  const unsigned char junk[16] = {0};
  CHECK(clangoffload_device_images_fill(NULL, 0, NULL, NULL, NULL, 0, &count, NULL) ==
        CLANGOFFLOAD_STATUS_OK);
  CHECK(count == 0);
  CHECK(clangoffload_device_images_fill(junk, sizeof junk, NULL, NULL, NULL, 0, &count, NULL) ==
        CLANGOFFLOAD_STATUS_OK);
  CHECK(count == 0);
  CHECK(clangoffload_device_images_fill(NULL, 4, NULL, NULL, NULL, 0, &count, NULL) ==
        CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
  CHECK(clangoffload_device_images_fill(junk, sizeof junk, NULL, NULL, NULL, 0, NULL, NULL) ==
        CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
  CHECK(clangoffload_device_images_fill(junk, sizeof junk, NULL, NULL, NULL, 2, &count, NULL) ==
        CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
}

static void test_fatbin_wrapper(void) {
  static const unsigned char fatbin[8] = "fatbin";
  clangoffload_fatbin_wrapper w = {CLANGOFFLOAD_FATBIN_MAGIC_CUDA, 1, fatbin, NULL};
  uint32_t magic = 0;
  CHECK(clangoffload_fatbin_wrapper_check(&w, &magic) == CLANGOFFLOAD_STATUS_OK);
  CHECK(magic == CLANGOFFLOAD_FATBIN_MAGIC_CUDA);
  /* The bytes of a HIP record begin "FPIH". */
  unsigned char bytes[24] = {0x46, 0x50, 0x49, 0x48, 1, 0, 0, 0};
  memcpy(&w, bytes, sizeof bytes);
  w.binary = fatbin;
  CHECK(clangoffload_fatbin_wrapper_check(&w, &magic) == CLANGOFFLOAD_STATUS_OK);
  CHECK(magic == CLANGOFFLOAD_FATBIN_MAGIC_HIP);
  w.magic = 0x12345678;
  CHECK(clangoffload_fatbin_wrapper_check(&w, NULL) == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
  CHECK(clangoffload_fatbin_wrapper_check(NULL, &magic) == CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
}

/* The registration unit for the first image of LLVM 22's multi.offbin: head,
 * the whole input as hex in two pieces of whole lines, tail. */
static void test_wrap_source(const char *dir) {
  size_t len = 0;
  unsigned char *data = read_fixture(dir, "offload/multi.offbin", &len);
  clangoffload_wrap_options options = {CLANGOFFLOAD_ENTRY_KIND_OPENMP,
                                       {(const uint8_t *)"x86_64-pc-linux-gnu", 19},
                                       {(const uint8_t *)"multi.offbin", 12}};
  clangoffload_buffer head = {NULL, 0}, tail = {NULL, 0};
  clangoffload_error err;
  CHECK(clangoffload_wrap_c_source(&options, data, len, &head, &tail, &err) ==
        CLANGOFFLOAD_STATUS_OK);
  CHECK(head.len > 0 && memcmp(head.ptr, "/* Generated by clangoffload ", 29) == 0);
  CHECK(tail.len > 0 && memcmp(tail.ptr, "};\n", 3) == 0);
  size_t first = len / 32 * CLANGOFFLOAD_WRAP_HEX_BYTES_PER_LINE, needed = 0, written = 0;
  CHECK(clangoffload_wrap_hex(data, len, NULL, 0, &needed) == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  CHECK(needed == len * 6 + (len + 15) / 16 * 2);
  unsigned char *text = malloc(needed);
  CHECK(clangoffload_wrap_hex(data, first, text, needed, &written) == CLANGOFFLOAD_STATUS_OK);
  size_t rest = 0;
  CHECK(clangoffload_wrap_hex(data + first, len - first, text + written, needed - written, &rest) ==
        CLANGOFFLOAD_STATUS_OK);
  CHECK(written + rest == needed && memcmp(text, "  0x10, 0xff, 0x10, 0xad,", 25) == 0);
  free(text);
  clangoffload_buffer_free(&head);
  clangoffload_buffer_free(&tail);
  options.triple = (clangoffload_bytes){(const uint8_t *)"arm64-apple-macos", 17};
  CHECK(clangoffload_wrap_c_source(&options, data, len, &head, &tail, &err) ==
        CLANGOFFLOAD_STATUS_NOT_ELF_HOST);
  CHECK(strstr(err.message, "Mach-O") != NULL && head.ptr == NULL);
  CHECK(clangoffload_wrap_check_triple("x86_64-pc-windows-msvc", 22, NULL) ==
        CLANGOFFLOAD_STATUS_NOT_ELF_HOST);
  free(data);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FIXTURES_DIR MIXED_FILE\n", argv[0]);
    return 2;
  }
  test_multi_and_embedded(argv[1]);
  test_compressed_skipped(argv[2]);
  test_arguments();
  test_fatbin_wrapper();
  test_wrap_source(argv[1]);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  puts("wrapper: all checks passed");
  return 0;
}
