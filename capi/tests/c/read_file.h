/* The C tests' one way to read a file whole. */
#ifndef CLANGOFFLOAD_TESTS_READ_FILE_H
#define CLANGOFFLOAD_TESTS_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The bytes of `path` (malloc'd, one spare byte so an empty file is not a
 * NULL result) and their count in `*len`; NULL if it cannot be read. */
static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  unsigned char *data = NULL;
  long size;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = malloc((size_t)size + 1);
    if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
      free(data);
      data = NULL;
    }
    *len = (size_t)size;
  }
  fclose(f);
  return data;
}

#endif
