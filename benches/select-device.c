/* The code object a HIP runtime would load on one device, from the FIRST
 * compressed bundle of a host ELF file's `.hip_fatbin`, through the C ABI
 * (include/clangoffload.h). Used by benches/compare-llvm-fatbin.sh.
 *
 *   select-device FILE MODE DEVICE [OUT]
 *
 * FILE is mapped; `.hip_fatbin` is found with
 * clangoffload_elf_offload_section_next and its containers walked with
 * clangoffload_containers_next. MODE is
 *   select     clangoffload_fatbin_select_for_device with
 *              CLANGOFFLOAD_SKIP_HASH_CHECK: first asked for the scratch size
 *              it needs (scratch NULL, capacity 0), then given that much;
 *   full       clangoffload_compressed_decompress of the whole container with
 *              CLANGOFFLOAD_SKIP_HASH_CHECK, then
 *              clangoffload_bundle_select_entry_for_device on the result;
 *   full-hash  the same, with the stored MD5 checked.
 * DEVICE is an AMDGPU target ID (gfx1100). Prints `<entry ID> <size>` of the
 * chosen code object; with OUT, also writes its bytes there. Exits non-zero
 * on any error, with the library's message.
 *
 * Build (static library from `cargo build --release -p clangoffload-capi`):
 *   cc -O2 -Iinclude benches/select-device.c target/release/libclangoffload.a \
 *      -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o select-device
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clangoffload.h"

static int fail(const char *what, uint32_t status, const clangoffload_error *err) {
  fprintf(stderr, "select-device: %s: %s", what, clangoffload_status_message(status));
  if (err != NULL && err->message[0] != '\0')
    fprintf(stderr, " (%s, at offset %llu)", err->message, (unsigned long long)err->offset);
  fputc('\n', stderr);
  return 1;
}

static int print_entry(const clangoffload_bundle_entry *entry, const char *out_path) {
  printf("%.*s %zu\n", (int)entry->id.len, (const char *)entry->id.ptr, entry->payload.len);
  if (out_path == NULL) return 0;
  FILE *out = fopen(out_path, "wb");
  if (out == NULL || (entry->payload.len != 0 &&
                      fwrite(entry->payload.ptr, 1, entry->payload.len, out) != entry->payload.len) ||
      fclose(out) != 0) {
    perror(out_path);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s FILE select|full|full-hash DEVICE [OUT]\n", argv[0]);
    return 2;
  }
  const char *path = argv[1], *mode = argv[2], *device = argv[3];
  const char *out_path = argc == 5 ? argv[4] : NULL;
  int select = strcmp(mode, "select") == 0;
  int check_hash = strcmp(mode, "full-hash") == 0;
  if (!select && !check_hash && strcmp(mode, "full") != 0) {
    fprintf(stderr, "select-device: unknown mode '%s'\n", mode);
    return 2;
  }

  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    perror(path);
    return 1;
  }
  size_t len = (size_t)st.st_size;
  const uint8_t *file = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (file == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  close(fd);

  /* The `.hip_fatbin` section. */
  clangoffload_error err;
  memset(&err, 0, sizeof err);
  clangoffload_offload_section section;
  uint32_t index = 0;
  int found_section = 0;
  for (;;) {
    clangoffload_status s = clangoffload_elf_offload_section_next(file, len, &index, &section, &err);
    if (s == CLANGOFFLOAD_STATUS_END) break;
    if (s != CLANGOFFLOAD_STATUS_OK) return fail("reading the section table", s, &err);
    if (section.kind == CLANGOFFLOAD_SECTION_KIND_HIP_FATBIN) {
      found_section = 1;
      break;
    }
  }
  if (!found_section) {
    fprintf(stderr, "select-device: %s has no .hip_fatbin section\n", path);
    return 1;
  }

  /* Its first compressed bundle. */
  uint64_t cursor = 0;
  clangoffload_container container;
  int found_container = 0;
  for (;;) {
    clangoffload_status s =
        clangoffload_containers_next(section.data.ptr, section.data.len, &cursor, &container, &err);
    if (s == CLANGOFFLOAD_STATUS_END) break;
    if (s != CLANGOFFLOAD_STATUS_OK) return fail("walking .hip_fatbin", s, &err);
    if (container.kind == CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED) {
      found_container = 1;
      break;
    }
  }
  if (!found_container) {
    fprintf(stderr, "select-device: no compressed bundle in .hip_fatbin\n");
    return 1;
  }
  const uint8_t *data = container.data.ptr;
  size_t data_len = container.data.len;
  clangoffload_bundle_entry entry;
  clangoffload_device_match how;

  if (select) {
    /* Ask for the scratch size, then decode into it. */
    size_t needed = 0;
    clangoffload_status s = clangoffload_fatbin_select_for_device(
        data, data_len, device, strlen(device), CLANGOFFLOAD_SKIP_HASH_CHECK, NULL, 0, &needed, &entry,
        &how, &err);
    uint8_t *scratch = NULL;
    if (s == CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL) {
      scratch = malloc(needed ? needed : 1);
      if (scratch == NULL) {
        perror("malloc");
        return 1;
      }
      s = clangoffload_fatbin_select_for_device(data, data_len, device, strlen(device),
                                                CLANGOFFLOAD_SKIP_HASH_CHECK, scratch, needed, &needed,
                                                &entry, &how, &err);
    }
    if (s != CLANGOFFLOAD_STATUS_OK) return fail("clangoffload_fatbin_select_for_device", s, &err);
    int rc = print_entry(&entry, out_path);
    free(scratch);
    return rc;
  }

  /* The whole bundle, then the selection on it. */
  size_t size = 0;
  clangoffload_status s =
      clangoffload_compressed_decompressed_size(data, data_len, CLANGOFFLOAD_DEFAULT_LIMIT, &size, &err);
  if (s != CLANGOFFLOAD_STATUS_OK) return fail("clangoffload_compressed_decompressed_size", s, &err);
  uint8_t *bundle = malloc(size ? size : 1);
  if (bundle == NULL) {
    perror("malloc");
    return 1;
  }
  size_t bundle_len = 0;
  s = clangoffload_compressed_decompress(data, data_len, CLANGOFFLOAD_DEFAULT_LIMIT,
                                         check_hash ? 0 : CLANGOFFLOAD_SKIP_HASH_CHECK, bundle, size,
                                         &bundle_len, &err);
  if (s != CLANGOFFLOAD_STATUS_OK) return fail("clangoffload_compressed_decompress", s, &err);
  s = clangoffload_bundle_select_entry_for_device(bundle, bundle_len, device, strlen(device), &entry, &how,
                                                  &err);
  if (s != CLANGOFFLOAD_STATUS_OK) return fail("clangoffload_bundle_select_entry_for_device", s, &err);
  int rc = print_entry(&entry, out_path);
  free(bundle);
  return rc;
}
