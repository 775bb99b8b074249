/* Exercises the C ABI on fixtures made by LLVM 22. Usage: smoke FIXTURES_DIR */
#include "clangoffload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static unsigned char *read_file(const char *dir, const char *name, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
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

static int id_is(clangoffload_bytes id, const char *text) {
  return id.len == strlen(text) && memcmp(id.ptr, text, id.len) == 0;
}

static void test_list_and_find(const char *dir) {
  size_t len;
  unsigned char *data = read_file(dir, "llvm22/hip-4096.bundle", &len);
  clangoffload_bundle *bundle = NULL;
  CHECK(clangoffload_bundle_parse(data, len, 0, &bundle, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_bundle_entry_count(bundle) == 3);
  clangoffload_bundle_entry e;
  CHECK(clangoffload_bundle_get_entry(bundle, 0, &e) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(e.id, "host-x86_64-unknown-linux-gnu-"));
  CHECK(e.payload.len == 0 && e.offset == 4096);
  CHECK(clangoffload_bundle_get_entry(bundle, 2, &e) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(e.id, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"));
  CHECK(e.payload.ptr == data + e.offset); /* a view, not a copy */
  CHECK(clangoffload_bundle_get_entry(bundle, 3, &e) == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);

  size_t index = 99;
  const char *want = "hip-amdgcn-amd-amdhsa--gfx906:sramecc+:xnack+";
  CHECK(clangoffload_bundle_find_compatible(bundle, want, strlen(want), 0, &index) == CLANGOFFLOAD_STATUS_OK);
  CHECK(index == 1); /* gfx906 ("any") satisfies sramecc+:xnack+ */
  const char *strict = "hip-amdgcn-amd-amdhsa--gfx90a";
  CHECK(clangoffload_bundle_find_compatible(bundle, strict, strlen(strict), 0, &index) == CLANGOFFLOAD_STATUS_NOT_FOUND);
  const char *omp = "openmp-amdgcn-amd-amdhsa--gfx906";
  CHECK(clangoffload_bundle_find_compatible(bundle, omp, strlen(omp), 0, &index) == CLANGOFFLOAD_STATUS_NOT_FOUND);
  CHECK(clangoffload_bundle_find_compatible(bundle, omp, strlen(omp), CLANGOFFLOAD_HIP_OPENMP_COMPATIBLE, &index) == CLANGOFFLOAD_STATUS_OK);

  size_t count = 5;
  CHECK(clangoffload_bundle_validate(bundle, NULL, 0, &count) == CLANGOFFLOAD_STATUS_OK && count == 0);
  clangoffload_bundle_free(bundle);
  free(data);
}

static void test_select_for_device(const char *dir) {
  size_t len;
  unsigned char *data = read_file(dir, "llvm22/hip-only.bundle", &len);
  clangoffload_bundle *bundle = NULL;
  CHECK(clangoffload_bundle_parse(data, len, 0, &bundle, NULL) == CLANGOFFLOAD_STATUS_OK);
  struct { const char *device; size_t index; uint32_t how; } cases[] = {
      {"gfx90a:sramecc+:xnack-", 1, CLANGOFFLOAD_DEVICE_MATCH_NATIVE},
      {"gfx906:xnack+", 0, CLANGOFFLOAD_DEVICE_MATCH_GENERIC},
      {"gfx1100", 2, CLANGOFFLOAD_DEVICE_MATCH_SPIRV},
      {"gfx90a:sramecc-:xnack-", 2, CLANGOFFLOAD_DEVICE_MATCH_SPIRV},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t index = 99;
    clangoffload_device_match how = 0;
    CHECK(clangoffload_bundle_select_for_device(bundle, cases[i].device, strlen(cases[i].device), &index, &how) == CLANGOFFLOAD_STATUS_OK);
    CHECK(index == cases[i].index);
    CHECK(how == cases[i].how);
  }
  clangoffload_bundle_free(bundle);
  free(data);
}

static void test_malformed(const char *dir) {
  size_t len;
  unsigned char *data = read_file(dir, "llvm22/openmp.bundle", &len);
  clangoffload_bundle *bundle = NULL;
  clangoffload_error err;
  /* Cut so that three descriptors cannot fit. */
  CHECK(clangoffload_bundle_parse(data, 90, 0, &bundle, &err) == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE);
  CHECK(bundle == NULL && err.status == CLANGOFFLOAD_STATUS_COUNT_TOO_LARGE && err.offset == 24);
  CHECK(strstr(err.message, "entry count 3") != NULL);
  /* Payload past the end: strict fails, lenient keeps the entries before it. */
  CHECK(clangoffload_bundle_parse(data, len - 1, 0, &bundle, &err) == CLANGOFFLOAD_STATUS_PAYLOAD_OUT_OF_BOUNDS);
  CHECK(err.entry == 2);
  CHECK(clangoffload_bundle_parse(data, len - 1, CLANGOFFLOAD_PARSE_LENIENT, &bundle, &err) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_bundle_entry_count(bundle) == 2);
  CHECK(clangoffload_bundle_fault(bundle, &err) == CLANGOFFLOAD_STATUS_PAYLOAD_OUT_OF_BOUNDS && err.entry == 2);
  clangoffload_bundle_free(bundle);
  /* Not a bundle; NULL arguments; unknown flags. */
  CHECK(clangoffload_bundle_parse((const uint8_t *)"hello", 5, 0, &bundle, NULL) == CLANGOFFLOAD_STATUS_NOT_A_BUNDLE);
  CHECK(clangoffload_bundle_parse(NULL, 5, 0, &bundle, NULL) == CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
  CHECK(clangoffload_bundle_parse(data, len, 0, NULL, NULL) == CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
  CHECK(clangoffload_bundle_parse(data, len, 0x80, &bundle, NULL) == CLANGOFFLOAD_STATUS_INVALID_ARGUMENT);
  CHECK(clangoffload_bundle_entry_count(NULL) == 0);
  clangoffload_bundle_free(NULL);
  CHECK(strcmp(clangoffload_status_message(CLANGOFFLOAD_STATUS_TRUNCATED), "truncated header") == 0);
  CHECK(strcmp(clangoffload_status_message(12345), "unknown status") == 0);
  free(data);
}

static void test_ids(void) {
  clangoffload_target_id tid;
  CHECK(clangoffload_target_id_parse("fiji", 4, &tid) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(tid.processor, "gfx803") && tid.xnack == CLANGOFFLOAD_FEATURE_ANY);
  CHECK(clangoffload_target_id_parse("gfx1030:xnack+", 14, &tid) == CLANGOFFLOAD_STATUS_TARGET_ID_UNSUPPORTED_FEATURE);
  CHECK(clangoffload_target_id_parse("gfx90a:xnack+:xnack-", 20, &tid) == CLANGOFFLOAD_STATUS_TARGET_ID_DUPLICATE_FEATURE);
  char buf[64];
  size_t n = 0;
  CHECK(clangoffload_target_id_canonicalize("gfx90a:xnack-:sramecc+", 22, buf, sizeof buf, &n) == CLANGOFFLOAD_STATUS_OK);
  CHECK(strcmp(buf, "gfx90a:sramecc+:xnack-") == 0 && n == 22);
  CHECK(clangoffload_target_id_canonicalize("gfx90a:xnack-:sramecc+", 22, buf, 5, &n) == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL && n == 22);
  bool ok = false;
  CHECK(clangoffload_target_id_is_compatible("gfx90a", 6, "gfx90a:xnack+", 13, &ok) == CLANGOFFLOAD_STATUS_OK && ok);
  CHECK(clangoffload_target_id_is_compatible("gfx90a:xnack+", 13, "gfx90a", 6, &ok) == CLANGOFFLOAD_STATUS_OK && !ok);

  clangoffload_entry_id id;
  const char *text = "hip-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+";
  CHECK(clangoffload_entry_id_parse(text, strlen(text), &id) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(id.kind, "hip") && id.env.len == 0 && id_is(id.target_id, "gfx9-4-generic:xnack+"));
  CHECK(id.known_kind && id.known_arch);
  CHECK(clangoffload_entry_id_parse("hip-amdgcn-amd", 14, &id) == CLANGOFFLOAD_STATUS_ENTRY_ID_TOO_FEW_COMPONENTS);
  CHECK(clangoffload_entry_id_normalize("hip-amdgcn-amd-amdhsa-unknown-gfx906", 36, buf, sizeof buf, &n) == CLANGOFFLOAD_STATUS_OK);
  CHECK(strcmp(buf, "hip-amdgcn-amd-amdhsa--gfx906") == 0);
  CHECK(clangoffload_entry_id_is_compatible("hipv4-amdgcn-amd-amdhsa--gfx906", 31, "hip-amdgcn-amd-amdhsa-unknown-gfx906:xnack-", 43, 0, &ok) == CLANGOFFLOAD_STATUS_OK && ok);
  /* LLVM 16's spelling is the bundler's `hip-amdgcn-amd-amdhsa--`, not as written. */
  CHECK(clangoffload_entry_id_is_compatible("hip-amdgcn-amd-amdhsa-gfx906", 28, "hip-amdgcn-amd-amdhsa--", 23, 0, &ok) == CLANGOFFLOAD_STATUS_OK && !ok);
  CHECK(clangoffload_entry_id_is_compatible("hip-amdgcn-amd-amdhsa-gfx906", 28, "hip-amdgcn-amd-amdhsa--", 23, CLANGOFFLOAD_AS_BUNDLER, &ok) == CLANGOFFLOAD_STATUS_OK && ok);
  clangoffload_bytes ids[] = {
      {(const uint8_t *)"hip-amdgcn-amd-amdhsa--gfx906:xnack+", 36},
      {(const uint8_t *)"hip-amdgcn-amd-amdhsa--gfx906", 29},
  };
  size_t a = 9, b = 9;
  CHECK(clangoffload_entry_ids_find_conflict(ids, 2, &a, &b) == CLANGOFFLOAD_STATUS_OK && a == 1 && b == 0);
  CHECK(clangoffload_entry_ids_find_conflict(ids, 1, &a, &b) == CLANGOFFLOAD_STATUS_NOT_FOUND);
}

/* Writing with the layout function gives LLVM 22's bytes. */
static void test_layout(const char *dir) {
  size_t len, l906, l90a;
  unsigned char *expected = read_file(dir, "llvm22/hip-4096.bundle", &len);
  unsigned char *p906 = read_file(dir, "inputs/gfx906.co", &l906);
  unsigned char *p90a = read_file(dir, "inputs/gfx90a-xnack.co", &l90a);
  const char *names[] = {"host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx906",
                         "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"};
  clangoffload_bytes ids[3];
  for (int i = 0; i < 3; i++) ids[i] = (clangoffload_bytes){(const uint8_t *)names[i], strlen(names[i])};
  uint64_t sizes[3] = {0, l906, l90a}, offsets[3], total = 0;
  size_t header_len = 0;
  CHECK(clangoffload_bundle_layout(ids, sizes, 3, 4096, NULL, 0, &header_len, offsets, &total) == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  CHECK(clangoffload_bundle_layout(ids, sizes, 3, 0, NULL, 0, &header_len, offsets, &total) == CLANGOFFLOAD_STATUS_ZERO_ALIGNMENT);
  unsigned char *out = calloc(1, len);
  CHECK(clangoffload_bundle_layout(ids, sizes, 3, 4096, out, len, &header_len, offsets, &total) == CLANGOFFLOAD_STATUS_OK);
  CHECK(total == len);
  if (total == len) {
    memcpy(out + offsets[1], p906, l906);
    memcpy(out + offsets[2], p90a, l90a);
    CHECK(memcmp(out, expected, len) == 0);
  }
  free(out);
  free(expected);
  free(p906);
  free(p90a);
}

/* Compressed bundles: header, decompression into our buffer, hash, errors,
 * compression, and the walk over a linked .hip_fatbin. */
static void test_compressed(const char *dir) {
  size_t len = 0, plain_len = 0;
  unsigned char *data = read_file(dir, "compressed/llvm22/hip.v3.ccob", &len);
  unsigned char *plain = read_file(dir, "compressed/llvm22/hip.bundle", &plain_len);
  clangoffload_compressed_header h;
  CHECK(clangoffload_compressed_parse(data, len, &h, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(h.version == 3 && h.method == CLANGOFFLOAD_METHOD_ZSTD && h.header_len == 32);
  CHECK(h.has_total_size && h.total_size == len && h.uncompressed_size == plain_len);
  CHECK(h.compressed.ptr == data + 32 && h.compressed.len == len - 32);
  uint64_t hash = 0;
  CHECK(clangoffload_truncated_md5(plain, plain_len, &hash) == CLANGOFFLOAD_STATUS_OK);
  CHECK(hash == h.hash);

  size_t size = 0;
  CHECK(clangoffload_compressed_decompressed_size(data, len, CLANGOFFLOAD_DEFAULT_LIMIT, &size, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(size == plain_len);
  unsigned char *out = malloc(size);
  size_t written = 0;
  CHECK(clangoffload_compressed_decompress(data, len, CLANGOFFLOAD_DEFAULT_LIMIT, 0, out, size, &written, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(written == plain_len && memcmp(out, plain, plain_len) == 0);
  CHECK(clangoffload_compressed_decompress(data, len, CLANGOFFLOAD_DEFAULT_LIMIT, 0, out, size - 1, &written, NULL) == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  CHECK(written == plain_len);
  clangoffload_error err;
  CHECK(clangoffload_compressed_decompress(data, len, 1000, 0, out, size, &written, &err) == CLANGOFFLOAD_STATUS_SIZE_LIMIT_EXCEEDED);
  CHECK(err.offset == 16 && strstr(err.message, "limit of 1000 bytes") != NULL);

  /* A wrong hash is refused unless the caller opts out. */
  data[24] ^= 1;
  CHECK(clangoffload_compressed_decompress(data, len, CLANGOFFLOAD_DEFAULT_LIMIT, 0, out, size, &written, &err) == CLANGOFFLOAD_STATUS_HASH_MISMATCH);
  CHECK(err.offset == 24);
  CHECK(clangoffload_compressed_decompress(data, len, CLANGOFFLOAD_DEFAULT_LIMIT, CLANGOFFLOAD_SKIP_HASH_CHECK, out, size, &written, NULL) == CLANGOFFLOAD_STATUS_OK);
  data[24] ^= 1;
  data[4] = 7;
  CHECK(clangoffload_compressed_parse(data, len, &h, &err) == CLANGOFFLOAD_STATUS_UNSUPPORTED_VERSION);
  CHECK(err.offset == 4);
  data[4] = 3;

  /* Our compression of LLVM's bundle reads back, with zlib and zstd. */
  size_t bound = 0;
  CHECK(clangoffload_compress_bound(plain_len, &bound) == CLANGOFFLOAD_STATUS_OK);
  unsigned char *packed = malloc(bound);
  const uint16_t methods[] = {CLANGOFFLOAD_METHOD_ZSTD, CLANGOFFLOAD_METHOD_ZLIB};
  for (size_t i = 0; i < 2; i++) {
    size_t packed_len = 0;
    CHECK(clangoffload_compress(plain, plain_len, 2, methods[i], CLANGOFFLOAD_DEFAULT_LEVEL, packed, bound, &packed_len, NULL) == CLANGOFFLOAD_STATUS_OK);
    CHECK(clangoffload_compressed_decompress(packed, packed_len, CLANGOFFLOAD_DEFAULT_LIMIT, 0, out, size, &written, NULL) == CLANGOFFLOAD_STATUS_OK);
    CHECK(written == plain_len && memcmp(out, plain, plain_len) == 0);
  }
  /* Level 3 zstd, version 3: LLVM 22's bytes. */
  size_t packed_len = 0;
  CHECK(clangoffload_compress(plain, plain_len, 3, CLANGOFFLOAD_METHOD_ZSTD, 3, packed, bound, &packed_len, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(packed_len <= len);
  free(packed);
  free(out);
  free(plain);
  free(data);

  /* Walk a linked .hip_fatbin: three CCOBs and a bundle, 8 KiB apart. */
  unsigned char *fatbin = read_file(dir, "compressed/concat/hip.hip_fatbin", &len);
  uint64_t cursor = 0;
  clangoffload_container c;
  const uint64_t offsets[] = {0, 8192, 16384, 24576};
  size_t n = 0;
  clangoffload_status status;
  while ((status = clangoffload_containers_next(fatbin, len, &cursor, &c, NULL)) == CLANGOFFLOAD_STATUS_OK) {
    CHECK(n < 4 && c.offset == offsets[n]);
    CHECK(c.data.ptr == fatbin + c.offset);
    CHECK(c.kind == (n < 3 ? CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED : CLANGOFFLOAD_CONTAINER_KIND_BUNDLE));
    n++;
  }
  CHECK(status == CLANGOFFLOAD_STATUS_END && n == 4);
  fatbin[16384 + 4] = 9;
  cursor = 0;
  n = 0;
  while ((status = clangoffload_containers_next(fatbin, len, &cursor, &c, &err)) == CLANGOFFLOAD_STATUS_OK) {
    n++;
  }
  CHECK(n == 2 && status == CLANGOFFLOAD_STATUS_UNSUPPORTED_VERSION && err.offset == 16384 + 4);
  free(fatbin);
}

static void test_object_bundle(const char *dir) {
  size_t len = 0, host_len = 0, payload_len = 0;
  unsigned char *data = read_file(dir, "object/bundled-x86_64.o", &len);
  unsigned char *host = read_file(dir, "object/x86_64.o", &host_len);
  unsigned char *payload = read_file(dir, "object/openmp.payload", &payload_len);
  clangoffload_object_bundle *bundle = NULL;
  CHECK(clangoffload_object_bundle_parse(data, len, 0, &bundle, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_object_bundle_entry_count(bundle) == 3);
  clangoffload_object_bundle_entry e;
  CHECK(clangoffload_object_bundle_get_entry(bundle, 0, &e) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(e.id, "host-x86_64-unknown-linux-gnu-") && e.host_marker == 1);
  CHECK(clangoffload_object_bundle_get_entry(bundle, 1, &e) == CLANGOFFLOAD_STATUS_OK);
  CHECK(e.payload.len == payload_len && memcmp(e.payload.ptr, payload, payload_len) == 0);
  CHECK(clangoffload_object_bundle_get_entry(bundle, 3, &e) == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
  CHECK(clangoffload_object_bundle_fault(bundle, NULL) == CLANGOFFLOAD_STATUS_OK);
  /* Extracting the host gives back clang's object, byte for byte. */
  clangoffload_buffer stripped = {NULL, 0};
  CHECK(clangoffload_object_bundle_host_object(bundle, &stripped, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(stripped.len == host_len && memcmp(stripped.ptr, host, host_len) == 0);
  clangoffload_buffer_free(&stripped);
  CHECK(stripped.ptr == NULL && stripped.len == 0);
  clangoffload_buffer_free(&stripped);
  clangoffload_buffer_free(NULL);
  clangoffload_object_bundle_free(bundle);
  /* And bundling gives back LLVM's bundled object. */
  static const unsigned char marker[1] = {0};
  static const char *ids[2] = {"host-x86_64-unknown-linux-gnu-", "openmp-x86_64-pc-linux-gnu-"};
  clangoffload_entry_input inputs[2] = {
      {{(const uint8_t *)ids[0], strlen(ids[0])}, {marker, 1}},
      {{(const uint8_t *)ids[1], strlen(ids[1])}, {payload, payload_len}},
  };
  clangoffload_buffer out = {NULL, 0};
  CHECK(clangoffload_object_bundle_write(host, host_len, inputs, 2, &out, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_object_bundle_parse(out.ptr, out.len, 0, &bundle, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_object_bundle_entry_count(bundle) == 2);
  clangoffload_object_bundle_free(bundle);
  clangoffload_buffer_free(&out);
  /* A truncated object is a located error. */
  clangoffload_error err;
  CHECK(clangoffload_object_bundle_parse(data, 40, 0, &bundle, &err) == CLANGOFFLOAD_STATUS_TRUNCATED);
  CHECK(clangoffload_object_bundle_parse(payload, payload_len, 0, &bundle, &err) == CLANGOFFLOAD_STATUS_NOT_ELF);
  CHECK(clangoffload_object_bundle_write(host, host_len, NULL, 1, &out, NULL) == CLANGOFFLOAD_STATUS_NULL_ARGUMENT);
  free(data);
  free(host);
  free(payload);
}

static void test_text_and_archive(const char *dir) {
  uint32_t comment = 0;
  CHECK(clangoffload_text_comment_for_type((const uint8_t *)"ll", 2, &comment) == CLANGOFFLOAD_STATUS_OK);
  CHECK(comment == CLANGOFFLOAD_COMMENT_SEMICOLON);
  CHECK(clangoffload_text_comment_for_type((const uint8_t *)"bc", 2, &comment) == CLANGOFFLOAD_STATUS_NOT_FOUND);
  size_t len = 0;
  unsigned char *data = read_file(dir, "text/ll.bundle", &len);
  clangoffload_text_bundle *text = NULL;
  CHECK(clangoffload_text_bundle_parse(data, len, comment, 0, &text, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_text_bundle_entry_count(text) == 3);
  clangoffload_text_bundle_entry e;
  CHECK(clangoffload_text_bundle_get_entry(text, 0, &e) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(e.id, "host-x86_64-unknown-linux-gnu-"));
  CHECK(clangoffload_text_bundle_get_entry(text, 3, &e) == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
  /* Writing the entries back gives LLVM's bytes. */
  clangoffload_entry_input inputs[3];
  for (size_t i = 0; i < 3; i++) {
    CHECK(clangoffload_text_bundle_get_entry(text, i, &e) == CLANGOFFLOAD_STATUS_OK);
    inputs[i].id = e.id;
    inputs[i].payload = e.payload;
  }
  clangoffload_buffer out = {NULL, 0};
  CHECK(clangoffload_text_bundle_write(comment, inputs, 3, &out, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(out.len == len && memcmp(out.ptr, data, len) == 0);
  clangoffload_buffer_free(&out);
  clangoffload_text_bundle_free(text);
  /* A start marker with no end: a located error. */
  static const char bad[] = "\n; __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\nx\n";
  clangoffload_error err;
  CHECK(clangoffload_text_bundle_parse((const uint8_t *)bad, sizeof bad - 1, comment, 0, &text, &err) ==
        CLANGOFFLOAD_STATUS_MISSING_END_MARKER);
  CHECK(err.offset == 0);
  free(data);

  data = read_file(dir, "archive/gnu-bundles.a", &len);
  clangoffload_archive *archive = NULL;
  CHECK(clangoffload_archive_parse(data, len, &archive, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_archive_member_count(archive) == 3);
  clangoffload_archive_member m;
  CHECK(clangoffload_archive_get_member(archive, 1, &m) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(m.name, "libdevice-with-a-long-name.bc"));
  CHECK(clangoffload_archive_fault(archive, NULL) == CLANGOFFLOAD_STATUS_OK);
  char name[128];
  size_t name_len = 0;
  static const char id[] = "openmp-amdgcn-amd-amdhsa--gfx90a:xnack+";
  CHECK(clangoffload_device_member_name(m.name.ptr, m.name.len, id, sizeof id - 1, name, sizeof name, &name_len) ==
        CLANGOFFLOAD_STATUS_OK);
  CHECK(strcmp(name, "libdevice-with-a-long-name-openmp-amdgcn-amd-amdhsa--gfx90a_xnack+libdevice-with-a-long-name.bc") == 0);
  CHECK(clangoffload_device_member_name(m.name.ptr, m.name.len, id, sizeof id - 1, name, 4, &name_len) ==
        CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  clangoffload_entry_input member = {{(const uint8_t *)"x.txt", 5}, m.data};
  CHECK(clangoffload_archive_write(&member, 1, &out, NULL) == CLANGOFFLOAD_STATUS_OK);
  clangoffload_archive *again = NULL;
  CHECK(clangoffload_archive_parse(out.ptr, out.len, &again, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(clangoffload_archive_member_count(again) == 1);
  clangoffload_archive_free(again);
  clangoffload_buffer_free(&out);
  clangoffload_archive_free(archive);
  CHECK(clangoffload_archive_parse(data, 5, &archive, &err) != CLANGOFFLOAD_STATUS_OK);
  free(data);
}

/* CUDA fat binaries: written as NVIDIA's fatbinary writes them (the
 * length asked first), pruned, pruned in place in a host object. */
static void test_cuda_write(const char *dir) {
  size_t cubin_len = 0, ptx_len = 0, ref_len = 0, object_len = 0;
  unsigned char *cubin = read_file(dir, "cuda/inputs/k80.cubin", &cubin_len);
  unsigned char *ptx = read_file(dir, "cuda/inputs/k80.ptx", &ptx_len);
  unsigned char *ref = read_file(dir, "cuda/raw-lz4.fatbin", &ref_len);
  unsigned char *object = read_file(dir, "cuda/clang-multi-ptx.o", &object_len);
  clangoffload_cuda_new_entry entries[2];
  memset(entries, 0, sizeof entries);
  entries[0].kind = 2;
  entries[0].arch = 80;
  entries[0].data.ptr = cubin;
  entries[0].data.len = cubin_len;
  entries[1] = entries[0];
  entries[1].kind = 1;
  entries[1].data.ptr = ptx;
  entries[1].data.len = ptx_len;
  size_t len = 0;
  CHECK(clangoffload_cuda_fatbin_write(entries, 2, CLANGOFFLOAD_CUDA_COMPRESS_SPEED, CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL,
                                       NULL, 0, &len, NULL) == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  CHECK(len == ref_len);
  unsigned char *out = malloc(len);
  CHECK(clangoffload_cuda_fatbin_write(entries, 2, CLANGOFFLOAD_CUDA_COMPRESS_SPEED, CLANGOFFLOAD_CUDA_WRITE_COMPRESS_ALL,
                                       out, len, &len, NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(len == ref_len && memcmp(out, ref, len) == 0);
  clangoffload_cuda_target keep = {2, 80, 0};
  size_t pruned_len = 0;
  CHECK(clangoffload_cuda_fatbin_prune(out, len, &keep, 1, CLANGOFFLOAD_DEFAULT_LIMIT, NULL, 0, &pruned_len, NULL) ==
        CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL);
  unsigned char *pruned = malloc(pruned_len);
  CHECK(clangoffload_cuda_fatbin_prune(out, len, &keep, 1, CLANGOFFLOAD_DEFAULT_LIMIT, pruned, pruned_len, &pruned_len,
                                       NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(pruned_len < len);
  size_t changed = 0;
  CHECK(clangoffload_cuda_fatbin_prune_in_place(object, object_len, &keep, 1, CLANGOFFLOAD_DEFAULT_LIMIT, &changed,
                                                NULL) == CLANGOFFLOAD_STATUS_OK);
  CHECK(changed == 1);
  free(pruned);
  free(out);
  free(object);
  free(ref);
  free(ptx);
  free(cubin);
}

/* Archives the coverage asked for, kept until the call that asked returns. */
struct opened {
  unsigned char *data[64];
  size_t len[64];
  char *path[64];
  size_t count;
};

static void free_opened(struct opened *opened) {
  for (size_t i = 0; i < opened->count; i++) {
    free(opened->data[i]);
    free(opened->path[i]);
  }
  opened->count = 0;
}

static bool open_archive(void *context, const uint8_t *path, size_t path_len, clangoffload_bytes *out) {
  struct opened *opened = context;
  char name[4096];
  size_t len = 0;
  if (path_len >= sizeof name || opened->count == 64) return false;
  memcpy(name, path, path_len);
  name[path_len] = 0;
  FILE *f = fopen(name, "rb");
  if (!f) return false;
  fclose(f);
  unsigned char *data = read_file(name[0] == '/' ? "" : ".", name, &len);
  opened->data[opened->count] = data;
  opened->len[opened->count] = len;
  opened->path[opened->count] = malloc(path_len + 1);
  memcpy(opened->path[opened->count++], name, path_len + 1);
  out->ptr = data;
  out->len = len;
  return true;
}

static void add_input(clangoffload_coverage *coverage, const char *dir, const char *name, int again, size_t input) {
  size_t len;
  unsigned char *data = read_file(dir, name, &len);
  if (again) {
    CHECK(clangoffload_coverage_add_again(coverage, input, data, len, name, strlen(name), NULL, NULL) == CLANGOFFLOAD_STATUS_OK);
  } else {
    size_t number = 99;
    CHECK(clangoffload_coverage_add(coverage, data, len, name, strlen(name), NULL, NULL, &number) == CLANGOFFLOAD_STATUS_OK);
    CHECK(number == input);
  }
  free(data);
}

/* Coverage of several inputs for the growing default list, then a kpack
 * split host through its archives. */
static void test_coverage(const char *dir) {
  const char *inputs[] = {"cuda/clang-sm80.o", "llvm22/clang-hip.fatbin", "cuda/clang-sm70-sm80.o"};
  clangoffload_coverage *coverage = NULL;
  CHECK(clangoffload_coverage_new(NULL, 0, CLANGOFFLOAD_COVERAGE_CURRENT_GPUS, 0, &coverage) == CLANGOFFLOAD_STATUS_OK);
  for (size_t i = 0; i < 3; i++) add_input(coverage, dir, inputs[i], 0, i);
  size_t input = 99;
  CHECK(clangoffload_coverage_pending(coverage, &input) == CLANGOFFLOAD_STATUS_OK && input == 0);
  add_input(coverage, dir, inputs[0], 1, 0);
  CHECK(clangoffload_coverage_pending(coverage, &input) == CLANGOFFLOAD_STATUS_NOT_FOUND);
  size_t devices = clangoffload_coverage_device_count(coverage);
  clangoffload_bytes device;
  CHECK(clangoffload_coverage_get_device(coverage, devices - 1, &device) == CLANGOFFLOAD_STATUS_OK);
  CHECK(id_is(device, "sm_70"));
  clangoffload_coverage_cell cell;
  CHECK(clangoffload_coverage_get_cell(coverage, 2, devices - 1, &cell) == CLANGOFFLOAD_STATUS_OK);
  CHECK(cell.loads && cell.how == CLANGOFFLOAD_SELECT_CUBIN);

  char lib[4096];
  snprintf(lib, sizeof lib, "%s/kpack/zstd/lib", dir);
  size_t len;
  unsigned char *host = read_file(dir, "kpack/zstd/lib/libtwo.so", &len);
  struct opened opened;
  memset(&opened, 0, sizeof opened);
  clangoffload_bytes lib_view = {(const uint8_t *)lib, strlen(lib)};
  CHECK(clangoffload_coverage_add_split_host(coverage, host, len, "libtwo.so", 9, lib_view, NULL, 0, open_archive, &opened, &input) == CLANGOFFLOAD_STATUS_OK);
  CHECK(input == 3 && opened.count > 0);
  free_opened(&opened);
  CHECK(clangoffload_coverage_file_count(coverage) == 4);
  /* gfx906, the first current GPU's processor, is among the archives. */
  size_t gfx906 = devices;
  for (size_t d = 0; d < devices; d++) {
    CHECK(clangoffload_coverage_get_device(coverage, d, &device) == CLANGOFFLOAD_STATUS_OK);
    if (id_is(device, "gfx906")) gfx906 = d;
  }
  CHECK(gfx906 < devices);
  CHECK(clangoffload_coverage_get_cell(coverage, 3, gfx906, &cell) == CLANGOFFLOAD_STATUS_OK);
  CHECK(cell.loads && cell.how == CLANGOFFLOAD_SELECT_NATIVE);
  CHECK(clangoffload_coverage_get_cell(coverage, 3, devices - 1, &cell) == CLANGOFFLOAD_STATUS_OK);
  CHECK(!cell.applies && !cell.loads);
  free(host);
  clangoffload_coverage_free(coverage);
}

/* Checks each choice of `selection` (then frees it): each loads `want`
 * natively, from an archive `opened` gave, as the entry its index names. */
static void check_choices(clangoffload_kpack_selection *selection, const struct opened *opened, int records, const char *want) {
  size_t count = clangoffload_kpack_selection_count(selection);
  CHECK(count >= 2);
  clangoffload_kpack_choice choice;
  for (size_t i = 0; i < count; i++) {
    CHECK(clangoffload_kpack_selection_get(selection, i, &choice) == CLANGOFFLOAD_STATUS_OK);
    CHECK(choice.loads && choice.how == CLANGOFFLOAD_SELECT_NATIVE && choice.kpack_error == 0);
    CHECK(choice.has_offset == (records != 0) && id_is(choice.id, want) && choice.reason.len > 0);
    size_t from = opened->count;
    for (size_t j = 0; j < opened->count; j++) {
      if (id_is(choice.path, opened->path[j])) from = j;
    }
    CHECK(from < opened->count);
    if (from == opened->count) continue;
    clangoffload_kpack *kpack = NULL;
    clangoffload_kpack_entry entry;
    CHECK(clangoffload_kpack_parse(opened->data[from], opened->len[from], &kpack, NULL) == CLANGOFFLOAD_STATUS_OK);
    CHECK(clangoffload_kpack_get_entry(kpack, choice.entry, &entry) == CLANGOFFLOAD_STATUS_OK);
    CHECK(entry.key.len == choice.key.len && memcmp(entry.key.ptr, choice.key.ptr, entry.key.len) == 0);
    clangoffload_kpack_free(kpack);
  }
  CHECK(clangoffload_kpack_selection_get(selection, count, &choice) == CLANGOFFLOAD_STATUS_INDEX_OUT_OF_RANGE);
  clangoffload_kpack_selection_free(selection);
}

/* What gfx906 loads from a kpack split host (its archives through an open
 * callback), then from one of its archives alone. */
static void test_select_kpack(const char *dir) {
  char lib[4096];
  snprintf(lib, sizeof lib, "%s/kpack/zstd/lib", dir);
  clangoffload_bytes lib_view = {(const uint8_t *)lib, strlen(lib)};
  size_t len;
  unsigned char *host = read_file(dir, "kpack/zstd/lib/libtwo.so", &len);
  struct opened opened;
  memset(&opened, 0, sizeof opened);
  clangoffload_kpack_selection *selection = NULL;
  CHECK(clangoffload_select_split_host(host, len, "gfx906", 6, lib_view, NULL, CLANGOFFLOAD_KPACK_FIRST_CANDIDATE, open_archive, &opened, &selection) == CLANGOFFLOAD_STATUS_OK);
  if (selection) check_choices(selection, &opened, 1, "hipv4-amdgcn-amd-amdhsa--gfx906");
  for (size_t i = 0; i < opened.count; i++) {
    for (size_t j = 0; j < i; j++) CHECK(strcmp(opened.path[i], opened.path[j]) != 0);
  }
  free_opened(&opened);
  free(host);

  char archive[4096];
  snprintf(archive, sizeof archive, "%s/kpack/zstd/.kpack/test_lib_gfx906.kpack", dir);
  clangoffload_bytes path = {(const uint8_t *)archive, strlen(archive)};
  clangoffload_bytes bytes;
  CHECK(open_archive(&opened, path.ptr, path.len, &bytes));
  clangoffload_kpack *kpack = NULL;
  CHECK(clangoffload_kpack_parse(opened.data[0], opened.len[0], &kpack, NULL) == CLANGOFFLOAD_STATUS_OK);
  selection = NULL;
  CHECK(clangoffload_select_kpack(kpack, path, "gfx906", 6, NULL, 0, &selection) == CLANGOFFLOAD_STATUS_OK);
  clangoffload_kpack_free(kpack);
  if (selection) check_choices(selection, &opened, 0, "hipv4-amdgcn-amd-amdhsa--gfx906");
  free_opened(&opened);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
    return 2;
  }
  CHECK(strcmp(clangoffload_version(), "0.1.0") == 0);
  CHECK(CLANGOFFLOAD_VERSION_MAJOR == 0 && CLANGOFFLOAD_VERSION_MINOR == 1);
  test_list_and_find(argv[1]);
  test_select_for_device(argv[1]);
  test_malformed(argv[1]);
  test_ids();
  test_layout(argv[1]);
  test_compressed(argv[1]);
  test_object_bundle(argv[1]);
  test_text_and_archive(argv[1]);
  test_cuda_write(argv[1]);
  test_coverage(argv[1]);
  test_select_kpack(argv[1]);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("C ABI smoke test passed\n");
  return 0;
}
