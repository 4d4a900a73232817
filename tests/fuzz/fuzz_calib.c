/* Calibration files and query expansion: the first byte picks a calibration file (read,
 * every sigmoid applied) or a ranking expanded against a fixed database of three rows of
 * dimension 2 (n and alpha from the first byte; ids by row or by name). */
#define _GNU_SOURCE /* memfd_create */
#include <string.h>

#include "../../lib/search/calibration.h"
#include "../../lib/rank/expand.h"
#include "../../lib/rank/rankings.h"
#include "fuzz.h"

static int fvecs_file(char *path, const float *x, size_t n) {
  uint8_t buf[3 * 12];
  int32_t d = 2;
  for (size_t i = 0; i < n; i++) {
    memcpy(buf + i * 12, &d, 4);
    memcpy(buf + i * 12 + 4, x + 2 * i, 8);
  }
  return fuzz_file(path, buf, n * 12);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const float db[6] = {1, 0, 0, 1, 0.6f, 0.8f}, q[4] = {1, 1, -1, 0.5f};
  static const char names[] = "a\nb\nc\n", qnames[] = "0\n1\n";
  char path[64], dbp[64], qp[64], idp[64], qidp[64];
  SlemCalibration *cal = NULL;
  SlemError err;
  int fd = -1, fdb = -1, fq = -1, fid = -1, fqid = -1;
  if (size < 1) return 0;
  fd = fuzz_file(path, data + 1, size - 1);
  if (fd < 0) return 0;
  if (data[0] % 2 == 0) {
    if (slem_calibration_read(&cal, path, &err) == SLEM_OK) {
      for (size_t i = 0; i < slem_calibration_count(cal); i++) {
        double p = slem_calibration_sigmoid(slem_calibration_get(cal, i), 0.5);
        if (!(p >= 0 && p <= 1)) __builtin_trap();
      }
      slem_calibration_free(cal);
    }
  } else {
    SlemExpandOpts o = {(size_t)(data[0] >> 1) % 3 + 1, (double)((data[0] >> 3) % 4) * 0.5};
    SlemVecReader *dr = NULL, *qr = NULL;
    SlemExpander *ex = NULL;
    SlemRankReader *rr = NULL;
    SlemVecWriter *w = NULL;
    SlemIds *ids = NULL, *qids = NULL;
    int by_name = data[0] & 64;
    fdb = fvecs_file(dbp, db, 3);
    fq = fvecs_file(qp, q, 2);
    fid = fuzz_file(idp, (const uint8_t *)names, strlen(names));
    fqid = fuzz_file(qidp, (const uint8_t *)qnames, strlen(qnames));
    if (fdb >= 0 && fq >= 0 && fid >= 0 && fqid >= 0 &&
        (!by_name || (slem_ids_read(&ids, idp, &err) == SLEM_OK &&
                      slem_ids_read(&qids, qidp, &err) == SLEM_OK)) &&
        slem_vecreader_open(&dr, dbp, SLEM_FMT_FVECS, &err) == SLEM_OK &&
        slem_expand_new(&ex, dr, ids, &o, &err) == SLEM_OK &&
        slem_vecreader_open(&qr, qp, SLEM_FMT_FVECS, &err) == SLEM_OK &&
        slem_rankreader_open(&rr, path, SLEM_RANK_AUTO, &err) == SLEM_OK &&
        slem_vecwriter_open(&w, "/dev/null", SLEM_FMT_FVECS, 2, -1, &err) == SLEM_OK) {
      if (slem_expand_stream(ex, qr, qids, rr, w, NULL, NULL, &err) == SLEM_OK)
        slem_vecwriter_close(w, &err);
      else
        slem_vecwriter_abort(w);
      w = NULL;
    }
    slem_vecwriter_abort(w);
    slem_rankreader_free(rr);
    slem_vecreader_free(qr);
    slem_expand_free(ex);
    slem_vecreader_free(dr);
    slem_ids_free(ids);
    slem_ids_free(qids);
  }
  close(fd);
  if (fdb >= 0) close(fdb);
  if (fq >= 0) close(fq);
  if (fid >= 0) close(fid);
  if (fqid >= 0) close(fqid);
  return 0;
}
