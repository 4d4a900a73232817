/* Runs a libFuzzer harness over the files named on the command line, once each, without
 * libFuzzer: the corpora in testdata/fuzz become regression tests for any compiler. */
#define _GNU_SOURCE /* memfd_create */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int main(int argc, char **argv) {
  int n = 0;
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    long len;
    uint8_t *buf;
    if (!f) {
      perror(argv[i]);
      return 1;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
      fprintf(stderr, "%s: cannot read\n", argv[i]);
      return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)len);
    free(buf);
    n++;
  }
  printf("%d inputs replayed\n", n);
  return 0;
}
