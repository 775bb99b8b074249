/* Unbundles a file with the library's high-level job calls, as
 * clang-offload-bundler -unbundle does:
 *
 *   jobs TYPE FLAGS INPUT TARGET OUTPUT [TARGET OUTPUT ...]
 *
 * FLAGS is a number (CLANGOFFLOAD_ALLOW_MISSING_BUNDLES | ...). Warnings
 * and the error's whole message go to stderr; exit 0 on success, 1 on
 * failure (after writing the outputs that were found, as LLVM does). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clangoffload.h"
#include "read_file.h"

static void notify(void *context, uint32_t kind, const uint8_t *message, size_t len) {
  const char *what = kind == CLANGOFFLOAD_NOTE_WARNING ? "warning" : "note";
  (void)context;
  if (kind == CLANGOFFLOAD_NOTE_ERROR) what = "error";
  if (kind == CLANGOFFLOAD_NOTE_FAILURE) what = "failure";
  fprintf(stderr, "jobs: %s: %.*s\n", what, (int)len, (const char *)message);
}

int main(int argc, char **argv) {
  size_t len = 0, count, i;
  uint8_t *data;
  clangoffload_bytes *targets;
  clangoffload_bundler_options options;
  clangoffload_job *job = NULL;
  clangoffload_error err;
  clangoffload_file_kind kind;
  clangoffload_status status;
  int failed = 0, input_fd;

  if (argc < 6 || (argc - 4) % 2 != 0) {
    fprintf(stderr, "usage: jobs TYPE FLAGS INPUT TARGET OUTPUT [TARGET OUTPUT ...]\n");
    return 2;
  }
  data = read_file(argv[3], &len);
  if (!data) {
    fprintf(stderr, "jobs: cannot read %s\n", argv[3]);
    return 2;
  }
  if (clangoffload_file_kind_detect(data, len, &kind) != CLANGOFFLOAD_STATUS_OK) return 2;
  printf("kind %u\n", (unsigned)kind.kind);

  count = (size_t)(argc - 4) / 2;
  targets = calloc(count, sizeof *targets);
  if (!targets) return 2;
  for (i = 0; i < count; i++) {
    targets[i].ptr = (const uint8_t *)argv[4 + 2 * i];
    targets[i].len = strlen(argv[4 + 2 * i]);
  }
  memset(&options, 0, sizeof options);
  options.file_type.ptr = (const uint8_t *)argv[1];
  options.file_type.len = strlen(argv[1]);
  options.targets = targets;
  options.target_count = count;
  options.flags = (uint32_t)strtoul(argv[2], NULL, 0);
  options.input_name.ptr = (const uint8_t *)argv[3];
  options.input_name.len = strlen(argv[3]);
  options.notify = notify;

  status = clangoffload_bundler_unbundle(data, len, &options, &job, &err);
  if (status != CLANGOFFLOAD_STATUS_OK) {
    fprintf(stderr, "jobs: status %u at offset %llu\n", (unsigned)status,
            (unsigned long long)err.offset);
    free(targets);
    free(data);
    return 1;
  }
  failed = clangoffload_job_failure(job, &err) != CLANGOFFLOAD_STATUS_OK;
  if (failed) fprintf(stderr, "jobs: error: %s\n", err.message);
  /* Each output the job writes, its input bytes copied file to file. */
  input_fd = open(argv[3], O_RDONLY);
  for (i = 0; i < clangoffload_job_output_count(job); i++) {
    clangoffload_job_output output;
    clangoffload_error io;
    int fd;
    if (clangoffload_job_get_output(job, i, &output) != CLANGOFFLOAD_STATUS_OK) return 2;
    if (!output.written) continue;
    fd = open(argv[5 + 2 * i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    status = fd < 0 ? CLANGOFFLOAD_STATUS_IO_ERROR
                    : clangoffload_job_write_fd_from(job, i, fd, &input_fd, 1, &io);
    if (status != CLANGOFFLOAD_STATUS_OK) {
      fprintf(stderr, "jobs: writing %s: %s\n", argv[5 + 2 * i],
              fd < 0 ? "cannot create" : io.message);
      failed = 1;
    } else if (lseek(fd, 0, SEEK_CUR) != (off_t)output.size) {
      fprintf(stderr, "jobs: %s: wrote %lld bytes, not %llu\n", argv[5 + 2 * i],
              (long long)lseek(fd, 0, SEEK_CUR), (unsigned long long)output.size);
      failed = 1;
    }
    if (fd >= 0) close(fd);
  }
  if (input_fd >= 0) close(input_fd);
  clangoffload_job_free(job);

  /* The same in one call, to OUTPUT.2. */
  if (!failed) {
    char **paths = calloc(count, sizeof *paths);
    if (!paths) return 2;
    for (i = 0; i < count; i++) {
      size_t n = strlen(argv[5 + 2 * i]);
      paths[i] = malloc(n + 3);
      if (!paths[i]) return 2;
      memcpy(paths[i], argv[5 + 2 * i], n);
      memcpy(paths[i] + n, ".2", 3);
    }
    status = clangoffload_bundler_unbundle_files(data, len, &options,
                                                 (const char *const *)paths, &err);
    if (status != CLANGOFFLOAD_STATUS_OK) {
      fprintf(stderr, "jobs: one call: status %u: %s\n", (unsigned)status, err.message);
      failed = 1;
    }
    for (i = 0; i < count; i++) free(paths[i]);
    free(paths);
  }
  free(targets);
  free(data);
  return failed;
}
