/*
 * list_and_pick: find the offload code in any file and pick the code object
 * for one target, as a loader scanning memory would.
 *
 * Usage: list_and_pick FILE TARGET-ID
 *
 * FILE is anything: a bundle, a compressed bundle (CCOB), an OffloadBinary,
 * a host object, executable, shared library or archive holding them. It is
 * read into memory and scanned with clangoffload_scan_cursor_next; every container
 * found is listed with its entries (a compressed bundle is decompressed and
 * the bundle inside listed). TARGET-ID is a bundle entry ID such as
 * hipv4-amdgcn-amd-amdhsa--gfx906 or hip-amdgcn-amd-amdhsa--gfx90a:xnack+:
 * the first code object compatible with it, by clang-offload-bundler's rules,
 * is picked.
 *
 * Output (stdout):
 *   container <kind> at <offset> size <bytes>     one per container
 *     entry <entry ID>                            one per entry
 *   picked <entry ID> <payload size> bytes        last line
 * Exit status: 0 when a code object was picked; 2 when none is compatible
 * ("no code object for <TARGET-ID>" on stderr); 1 on a damaged input or a bad
 * argument (the library's message on stderr).
 *
 * Build: cc -std=c11 list_and_pick.c -lclangoffload (or with
 * libclangoffload.a -lpthread -ldl -lm).
 */
#include "clangoffload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first compatible code object found so far. The ID is copied: it may
 * point into a decompressed buffer that is freed before the end. */
static char *picked_id = NULL;
static size_t picked_size = 0;

static void pick(const char *id, size_t id_len, size_t payload_size) {
  if (picked_id != NULL) return; /* keep the first one */
  picked_id = malloc(id_len + 1);
  if (picked_id == NULL) return;
  memcpy(picked_id, id, id_len);
  picked_id[id_len] = '\0';
  picked_size = payload_size;
}

/* Prints what the library said about a damaged container and returns 1.
 * `base` is the container's offset in FILE; the error's offset counts from
 * the container's start (for the bundle inside a compressed container, the
 * decompressed bytes have no offset in FILE: `base` is the container's). */
static int report(const clangoffload_error *err, uint64_t base) {
  fprintf(stderr, "error: %s at offset %llu: %s\n", clangoffload_status_message(err->status),
          (unsigned long long)(base + err->offset), err->message);
  return 1;
}

static const char *kind_name(uint32_t kind) {
  switch (kind) {
    case CLANGOFFLOAD_CONTAINER_KIND_BUNDLE: return "bundle";
    case CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED: return "compressed";
    case CLANGOFFLOAD_CONTAINER_KIND_OFFLOAD_BINARY: return "offload_binary";
    default: return "unknown";
  }
}

/* Lists the entries of the bundle in `data` and picks the first compatible
 * one. Returns the exit status so far (0 or 1). */
static int list_bundle(const uint8_t *data, size_t len, uint64_t base, const char *target) {
  clangoffload_bundle *bundle = NULL;
  clangoffload_error err;
  if (clangoffload_bundle_parse(data, len, 0, &bundle, &err) != CLANGOFFLOAD_STATUS_OK)
    return report(&err, base);
  clangoffload_bundle_entry entry;
  for (size_t i = 0; clangoffload_bundle_get_entry(bundle, i, &entry) == CLANGOFFLOAD_STATUS_OK; i++)
    printf("  entry %.*s\n", (int)entry.id.len, (const char *)entry.id.ptr);
  size_t index;
  if (clangoffload_bundle_find_compatible(bundle, target, strlen(target), 0, &index) ==
          CLANGOFFLOAD_STATUS_OK &&
      clangoffload_bundle_get_entry(bundle, index, &entry) == CLANGOFFLOAD_STATUS_OK)
    pick((const char *)entry.id.ptr, entry.id.len, entry.payload.len);
  clangoffload_bundle_free(bundle); /* entry views borrowed `data`, not the handle */
  return 0;
}

/* Decompresses a CCOB into a buffer of the size its header declares (checked
 * against the default 1 GiB limit before anything is allocated) and lists
 * the bundle inside. */
static int list_compressed(const clangoffload_scan_hit *hit, const char *target) {
  clangoffload_error err;
  size_t size = 0;
  if (clangoffload_compressed_decompressed_size(hit->data.ptr, hit->data.len, CLANGOFFLOAD_DEFAULT_LIMIT,
                                                &size, &err) != CLANGOFFLOAD_STATUS_OK)
    return report(&err, hit->offset);
  uint8_t *plain = malloc(size > 0 ? size : 1);
  if (plain == NULL) {
    fprintf(stderr, "error: %s\n", clangoffload_status_message(CLANGOFFLOAD_STATUS_OUT_OF_MEMORY));
    return 1;
  }
  int status = 0;
  size_t written = 0;
  if (clangoffload_compressed_decompress(hit->data.ptr, hit->data.len, CLANGOFFLOAD_DEFAULT_LIMIT, 0, plain,
                                         size, &written, &err) != CLANGOFFLOAD_STATUS_OK)
    status = report(&err, hit->offset);
  else if (written >= 24 && memcmp(plain, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0)
    status = list_bundle(plain, written, hit->offset, target);
  /* else: a compressed text bundle (-type=s, ll, ...), which holds no code
   * object: nothing to list. */
  free(plain);
  return status;
}

/* OffloadBinary images have no entry ID: make the bundle-style one from the
 * offload kind, the triple (an empty environment added to a three-part
 * triple) and the arch, e.g. openmp-amdgcn-amd-amdhsa--gfx90a:xnack+.
 * Returns a malloc'd string (NULL if out of memory). */
static char *image_id(const clangoffload_offload_entry *entry) {
  size_t dashes = 0;
  for (size_t i = 0; i < entry->triple.len; i++) dashes += entry->triple.ptr[i] == '-';
  const char *kind = clangoffload_offload_kind_name(entry->offload_kind);
  const char *env = dashes == 2 ? "-" : "";
  int n = snprintf(NULL, 0, "%s-%.*s%s-%.*s", kind, (int)entry->triple.len, (const char *)entry->triple.ptr,
                   env, (int)entry->arch.len, (const char *)entry->arch.ptr);
  char *id = n < 0 ? NULL : malloc((size_t)n + 1);
  if (id != NULL)
    snprintf(id, (size_t)n + 1, "%s-%.*s%s-%.*s", kind, (int)entry->triple.len,
             (const char *)entry->triple.ptr, env, (int)entry->arch.len, (const char *)entry->arch.ptr);
  return id;
}

/* Lists the images of an OffloadBinary and picks the first compatible one. */
static int list_offload_binary(const clangoffload_scan_hit *hit, const char *target) {
  clangoffload_offload_binaries *binaries = NULL;
  clangoffload_error err;
  if (clangoffload_offload_binaries_parse(hit->data.ptr, hit->data.len, CLANGOFFLOAD_DEFAULT_LIMIT, 0,
                                          &binaries, &err) != CLANGOFFLOAD_STATUS_OK)
    return report(&err, hit->offset);
  clangoffload_offload_entry entry;
  for (size_t i = 0; clangoffload_offload_binaries_get_entry(binaries, i, &entry) == CLANGOFFLOAD_STATUS_OK;
       i++) {
    char *id = image_id(&entry);
    if (id == NULL) continue;
    printf("  entry %s\n", id);
    bool ok = false;
    if (clangoffload_entry_id_is_compatible(id, strlen(id), target, strlen(target), 0, &ok) ==
            CLANGOFFLOAD_STATUS_OK &&
        ok)
      pick(id, strlen(id), entry.image.len);
    free(id);
  }
  clangoffload_offload_binaries_free(binaries);
  return 0;
}

/* A container magic at offset 0 that starts no valid container: FILE itself
 * is a damaged container. Walking it as a sequence of containers gives the
 * located error. */
static int report_damaged(const uint8_t *data, size_t len, uint32_t status) {
  uint64_t cursor = 0;
  clangoffload_container container;
  clangoffload_error err;
  clangoffload_status walk = clangoffload_containers_next(data, len, &cursor, &container, &err);
  if (walk != CLANGOFFLOAD_STATUS_OK && walk != CLANGOFFLOAD_STATUS_END) return report(&err, 0);
  fprintf(stderr, "error: %s at offset 0\n", clangoffload_status_message(status));
  return 1;
}

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) return NULL;
  uint8_t *data = NULL;
  long size = -1;
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0) {
    data = malloc(size > 0 ? (size_t)size : 1);
    if (data != NULL && fread(data, 1, (size_t)size, file) != (size_t)size) {
      free(data);
      data = NULL;
    }
  }
  fclose(file);
  *len = size > 0 ? (size_t)size : 0;
  return data;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FILE TARGET-ID\n", argv[0]);
    return 1;
  }
  const char *target = argv[2];
  clangoffload_entry_id parsed;
  clangoffload_status bad = clangoffload_entry_id_parse(target, strlen(target), &parsed);
  if (bad != CLANGOFFLOAD_STATUS_OK) {
    fprintf(stderr, "error: invalid TARGET-ID '%s': %s\n", target, clangoffload_status_message(bad));
    return 1;
  }
  size_t len = 0;
  uint8_t *data = read_file(argv[1], &len);
  if (data == NULL) {
    perror(argv[1]);
    return 1;
  }

  /* Every container anywhere in the file, in offset order. With
   * CLANGOFFLOAD_SCAN_REJECTED the scan also reports magics that start no
   * valid container. */
  int status = 0;
  clangoffload_scan_cursor cursor = {0};
  clangoffload_scan_hit hit;
  while (status == 0 && clangoffload_scan_cursor_next(data, len, CLANGOFFLOAD_SCAN_REJECTED, &cursor,
                                                      &hit) == CLANGOFFLOAD_STATUS_OK) {
    if (hit.status != CLANGOFFLOAD_STATUS_OK) {
      /* Inside a file, such bytes are usually just bytes (a section name, a
       * string); at offset 0 the file itself is a damaged container. */
      if (hit.offset == 0) status = report_damaged(data, len, hit.status);
      continue;
    }
    printf("container %s at %llu size %zu\n", kind_name(hit.kind), (unsigned long long)hit.offset,
           hit.data.len);
    if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_BUNDLE)
      status = list_bundle(hit.data.ptr, hit.data.len, hit.offset, target);
    else if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_COMPRESSED)
      status = list_compressed(&hit, target);
    else if (hit.kind == CLANGOFFLOAD_CONTAINER_KIND_OFFLOAD_BINARY)
      status = list_offload_binary(&hit, target);
  }

  if (status == 0 && picked_id != NULL) {
    printf("picked %s %zu bytes\n", picked_id, picked_size);
  } else if (status == 0) {
    fprintf(stderr, "no code object for %s\n", target);
    status = 2;
  }
  free(picked_id);
  free(data);
  return status;
}
