/* The embedded build of clangoffload linked into a C program, as a loader
 * without an OS allocator would use it: every buffer is static, and a
 * malloc-counting shim checks that the library never calls malloc.
 *
 * Usage: embedded BUNDLE ZLIB_CCOB ZSTD_CCOB HOST_OBJECT
 * Prints what it finds; the Rust test checks the lines. Built with
 * -DWITH_ALLOCATOR it also supplies clangoffload_embedded_alloc/_free (the
 * allocator of `make embedded-alloc`) and decodes zstd through them. */
#define _GNU_SOURCE
#include <clangoffload.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* glibc's allocator under the interposed names below. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static unsigned long mallocs;
void *malloc(size_t n) { ++mallocs; return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { ++mallocs; return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { ++mallocs; return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

#ifdef WITH_ALLOCATOR
static unsigned long allocs, frees;
static unsigned char arena[64u << 20];
static size_t arena_used;
/* A bump allocator over a static arena: what a loader without malloc has. */
void *clangoffload_embedded_alloc(size_t size, size_t align) {
  size_t start = (arena_used + align - 1) & ~(align - 1);
  if (start > sizeof arena || size > sizeof arena - start) return NULL;
  arena_used = start + size;
  ++allocs;
  return arena + start;
}
void clangoffload_embedded_free(void *ptr, size_t size, size_t align) {
  (void)ptr, (void)size, (void)align;
  ++frees;
}
#endif

static unsigned char files[4][1u << 20];
static size_t lens[4];
static unsigned char decompressed[1u << 20];

static void load(int i, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  lens[i] = fread(files[i], 1, sizeof files[i], f);
  fclose(f);
}

static void fail(const char *what, clangoffload_status s, const clangoffload_error *e) {
  printf("%s: %s (%s at %llu)\n", what, clangoffload_status_message(s), e ? e->message : "",
         e ? (unsigned long long)e->offset : 0ull);
  exit(1);
}

static void list(const char *label, const uint8_t *data, size_t len) {
  clangoffload_bundle_cursor cursor = {0, 0};
  clangoffload_bundle_entry entry;
  clangoffload_error err;
  clangoffload_status s;
  while ((s = clangoffload_bundle_next_entry(data, len, &cursor, &entry, &err)) ==
         CLANGOFFLOAD_STATUS_OK)
    printf("%s entry %.*s %zu\n", label, (int)entry.id.len, (const char *)entry.id.ptr,
           entry.payload.len);
  if (s != CLANGOFFLOAD_STATUS_END) fail("next_entry", s, &err);
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  for (int i = 0; i < 4; ++i) load(i, argv[i + 1]);
  /* stdio allocates its buffer at the first printf; give it one instead, so
     that every malloc counted below would be the library's. */
  static char out[1 << 16];
  setvbuf(stdout, out, _IOFBF, sizeof out);
  unsigned long before = mallocs;
  clangoffload_error err;
  clangoffload_status s;

  /* List a bundle, pick code objects two ways. */
  list("bundle", files[0], lens[0]);
  const char *want = "hipv4-amdgcn-amd-amdhsa--gfx906";
  clangoffload_bundle_entry entry;
  s = clangoffload_bundle_find_compatible_entry(files[0], lens[0], want, strlen(want), 0, &entry,
                                                &err);
  if (s) fail("find_compatible_entry", s, &err);
  printf("compatible %.*s at %llu\n", (int)entry.id.len, (const char *)entry.id.ptr,
         (unsigned long long)entry.offset);
  uint32_t how = 0;
  const char *device = "gfx90a:xnack+";
  s = clangoffload_bundle_select_entry_for_device(files[0], lens[0], device, strlen(device),
                                                  &entry, (clangoffload_device_match *)&how,
                                                  &err);
  if (s) fail("select_entry_for_device", s, &err);
  printf("device %.*s match %u\n", (int)entry.id.len, (const char *)entry.id.ptr, how);

  /* Target IDs. */
  clangoffload_target_id tid;
  const char *text = "gfx90a:xnack+:sramecc-";
  s = clangoffload_target_id_parse(text, strlen(text), &tid);
  if (s) fail("target_id_parse", s, NULL);
  char canonical[64];
  size_t canonical_len = 0;
  s = clangoffload_target_id_canonicalize(text, strlen(text), canonical, sizeof canonical,
                                          &canonical_len);
  if (s) fail("target_id_canonicalize", s, NULL);
  printf("target %s\n", canonical);

  /* Decompress a zlib CCOB into a static buffer and list what it holds. */
  size_t size = 0;
  s = clangoffload_compressed_decompressed_size(files[1], lens[1], 0, &size, &err);
  if (s) fail("decompressed_size", s, &err);
  size_t written = 0;
  s = clangoffload_compressed_decompress(files[1], lens[1], 0, 0, decompressed,
                                         sizeof decompressed, &written, &err);
  if (s) fail("decompress zlib", s, &err);
  printf("zlib size %zu %zu\n", size, written);
  list("zlib", decompressed, written);

  /* The runtime's call on the zlib CCOB: how much it asks for, then the code
     object (without an allocator the whole bundle is decoded into the
     buffer; with one only the code object, at its start, and its ID). */
  size_t needed = 0;
  s = clangoffload_fatbin_select_for_device(files[1], lens[1], device, strlen(device), 0, NULL, 0,
                                            &needed, &entry, (clangoffload_device_match *)&how,
                                            &err);
  if (s != CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) fail("fatbin_select size", s, &err);
  s = clangoffload_fatbin_select_for_device(files[1], lens[1], device, strlen(device), 0,
                                            decompressed, needed, &needed, &entry,
                                            (clangoffload_device_match *)&how, &err);
  if (s) fail("fatbin_select", s, &err);
  printf("fatbin %.*s needed %zu code %zu at start %d\n", (int)entry.id.len,
         (const char *)entry.id.ptr, needed, entry.payload.len,
         entry.payload.ptr == decompressed);

  /* zstd needs an allocator. */
  s = clangoffload_compressed_decompress(files[2], lens[2], 0, 0, decompressed,
                                         sizeof decompressed, &written, &err);
  if (s == CLANGOFFLOAD_STATUS_OK) {
    printf("zstd size %zu\n", written);
    list("zstd", decompressed, written);
  } else {
    printf("zstd: %s\n", clangoffload_status_message(s));
  }

  /* Everything in a host object, as a loader scanning memory finds it. */
  clangoffload_scan_cursor cursor = {0};
  clangoffload_scan_hit hit;
  while ((s = clangoffload_scan_cursor_next(files[3], lens[3], 0, &cursor, &hit)) ==
         CLANGOFFLOAD_STATUS_OK)
    printf("scan kind %u at %llu size %zu\n", (unsigned)hit.kind,
           (unsigned long long)hit.offset, hit.data.len);
  if (s != CLANGOFFLOAD_STATUS_END) fail("scan_cursor_next", s, NULL);
  /* The one-number cursor finds the same in a well-formed file. */
  uint64_t offset = 0;
  unsigned plain = 0;
  while ((s = clangoffload_scan_next(files[3], lens[3], 0, &offset, &hit)) ==
         CLANGOFFLOAD_STATUS_OK)
    plain++;
  if (s != CLANGOFFLOAD_STATUS_END) fail("scan_next", s, NULL);
  printf("scan_next hits %u\n", plain);

  printf("mallocs %lu\n", mallocs - before);
#ifdef WITH_ALLOCATOR
  printf("allocs %s\n", allocs > 0 && allocs == frees ? "balanced" : "unbalanced");
#endif
  return 0;
}
