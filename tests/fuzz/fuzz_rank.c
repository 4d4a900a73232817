/* Rankings (tsv, trec, jsonl, recognised or forced by the first byte), evaluated against a
 * small fixed qrels. */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>

#include "../../lib/eval/eval.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const SlemRankFormat fmts[] = {SLEM_RANK_AUTO, SLEM_RANK_TSV, SLEM_RANK_TREC,
                                        SLEM_RANK_JSONL};
  static const char qrels[] = "0 0 1 1\n0 0 2 1\nq 0 a 1\n1 0 x 0\n";
  char path[64], qpath[64];
  SlemRankReader *run = NULL;
  SlemTruth *t = NULL;
  SlemEvalResult *res = NULL;
  SlemEvalOpts o;
  SlemError err;
  int fd, qfd;
  if (size < 1) return 0;
  fd = fuzz_file(path, data + 1, size - 1);
  qfd = fuzz_file(qpath, (const uint8_t *)qrels, strlen(qrels));
  if (fd >= 0 && qfd >= 0 && slem_rankreader_open(&run, path, fmts[data[0] % 4], &err) == SLEM_OK &&
      slem_truth_read_qrels(&t, qpath, &err) == SLEM_OK) {
    slem_eval_opts_init(&o);
    o.ap = data[0] & 4 ? SLEM_AP_OXFORD : SLEM_AP_TREC;
    o.curve_points = data[0] & 8 ? 101 : 11;
    if (slem_eval_result_new(&res, run, t, &o, &err) == SLEM_OK) slem_eval_result_free(res);
  }
  slem_rankreader_free(run);
  slem_truth_free(t);
  if (fd >= 0) close(fd);
  if (qfd >= 0) close(qfd);
  return 0;
}
