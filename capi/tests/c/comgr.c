/* Asks AMD's comgr and our C ABI the same question: which code object of a
 * HIP fat binary (an uncompressed clang offload bundle) the HIP runtime loads
 * on each device.
 *
 *   comgr FILE DEVICE...
 *
 * prints, per device, one line:
 *   DEVICE KNOWN COMGR_OFFSET COMGR_SIZE OUR_OFFSET OUR_SIZE OUR_MATCH
 * KNOWN is 1 if comgr lists the device's ISA; a size of 0 means none. */
#include <amd_comgr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clangoffload.h"
#include "read_file.h"

/* Whether comgr knows the ISA `isa`. */
static int known(const char *isa) {
  size_t count = 0, i;
  if (amd_comgr_get_isa_count(&count) != AMD_COMGR_STATUS_SUCCESS) return 0;
  for (i = 0; i < count; i++) {
    const char *name = NULL;
    if (amd_comgr_get_isa_name(i, &name) == AMD_COMGR_STATUS_SUCCESS && strcmp(name, isa) == 0)
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  size_t len = 0;
  int i;
  unsigned char *data;
  amd_comgr_data_t fatbin;

  if (argc < 3) {
    fprintf(stderr, "usage: comgr FILE DEVICE...\n");
    return 2;
  }
  data = read_file(argv[1], &len);
  if (!data) return 2;
  if (amd_comgr_create_data(AMD_COMGR_DATA_KIND_FATBIN, &fatbin) != AMD_COMGR_STATUS_SUCCESS)
    return 2;
  if (amd_comgr_set_data(fatbin, len, (const char *)data) != AMD_COMGR_STATUS_SUCCESS) return 2;
  for (i = 2; i < argc; i++) {
    char isa[256];
    amd_comgr_code_object_info_t info;
    clangoffload_bundle_entry entry;
    uint32_t how = 0;
    clangoffload_status status;
    unsigned long long ours_offset = 0, ours_size = 0;
    snprintf(isa, sizeof isa, "amdgcn-amd-amdhsa--%s", argv[i]);
    info.isa = isa;
    info.size = 0;
    info.offset = 0;
    if (amd_comgr_lookup_code_object(fatbin, &info, 1) != AMD_COMGR_STATUS_SUCCESS) {
      info.size = 0;
      info.offset = 0;
    }
    /* The device as HSA and comgr name it. */
    status = clangoffload_bundle_select_entry_for_device(
        data, len, isa, strlen(isa), &entry, (clangoffload_device_match *)&how, NULL);
    if (status == CLANGOFFLOAD_STATUS_OK) {
      ours_offset = (unsigned long long)entry.offset;
      ours_size = (unsigned long long)entry.payload.len;
    }
    printf("%s %d %llu %llu %llu %llu %u\n", argv[i], known(isa),
           (unsigned long long)info.offset, (unsigned long long)info.size, ours_offset, ours_size,
           status == CLANGOFFLOAD_STATUS_OK ? how : 0u);
  }
  amd_comgr_release_data(fatbin);
  free(data);
  return 0;
}
