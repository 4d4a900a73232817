/* Shared by the libFuzzer harnesses: the input as a file the path-based readers can open
 * (a memfd, a regular file with no name on disk). */
#ifndef SLEM_FUZZ_H
#define SLEM_FUZZ_H

/* each harness defines _GNU_SOURCE (memfd_create) before its first include */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a new memfd and puts its /proc path in path (64 bytes); returns the fd
 * to close, or -1. */
static inline int fuzz_file(char *path, const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz", MFD_CLOEXEC);
  size_t done = 0;
  if (fd < 0) return -1;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) {
      close(fd);
      return -1;
    }
    done += (size_t)w;
  }
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
