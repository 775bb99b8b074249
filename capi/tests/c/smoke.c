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
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("C ABI smoke test passed\n");
  return 0;
}
