/* Ground truth and ids: the first byte picks qrels, labels (the input split at the first
 * NUL into query and database labels), junk (against fixed qrels) or an ids file. */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>

#include "../../lib/eval/truth.h"
#include "../../lib/io/ids.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char qrels[] = "0 0 1 1\n0 0 2 1\nq 0 a 1\n";
  char path[64], path2[64];
  SlemTruth *t = NULL;
  SlemIds *ids = NULL;
  SlemError err;
  int fd = -1, fd2 = -1;
  if (size < 1) return 0;
  switch (data[0] % 4) {
  case 0:
    fd = fuzz_file(path, data + 1, size - 1);
    if (fd >= 0 && slem_truth_read_qrels(&t, path, &err) == SLEM_OK) slem_truth_free(t);
    break;
  case 1: {
    const uint8_t *sep = memchr(data + 1, 0, size - 1);
    size_t n1 = sep ? (size_t)(sep - data - 1) : size - 1;
    fd = fuzz_file(path, data + 1, n1);
    fd2 = sep ? fuzz_file(path2, sep + 1, size - 2 - n1) : fuzz_file(path2, data + 1, n1);
    if (fd >= 0 && fd2 >= 0 &&
        slem_truth_read_labels(&t, path, path2, NULL, NULL, data[0] & 4, &err) == SLEM_OK)
      slem_truth_free(t);
    break;
  }
  case 2:
    fd = fuzz_file(path, (const uint8_t *)qrels, strlen(qrels));
    fd2 = fuzz_file(path2, data + 1, size - 1);
    if (fd >= 0 && fd2 >= 0 && slem_truth_read_qrels(&t, path, &err) == SLEM_OK) {
      slem_truth_read_junk(t, path2, &err);
      slem_truth_free(t);
    }
    break;
  default:
    fd = fuzz_file(path, data + 1, size - 1);
    if (fd >= 0 && slem_ids_read(&ids, path, &err) == SLEM_OK) {
      for (size_t i = 0; i < slem_ids_count(ids); i++) (void)strlen(slem_ids_get(ids, i));
      slem_ids_free(ids);
    }
    break;
  }
  if (fd >= 0) close(fd);
  if (fd2 >= 0) close(fd2);
  return 0;
}
