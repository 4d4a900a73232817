/* Rankings in memory: FAISS's I (nq x k database rows, int64) of the C API's
 * slem_evaluate(), read as the npy format reads the I of a pair (rank_npy.c): query q is
 * named "q", its results are the rows of row q ranked 1, 2, ... by their column. A member
 * of the formats' interface (rankfmt.h) that is not in the table: no file has this format,
 * so no tool names or recognises it; slem_rank_array_open() alone opens it. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankfmt.h"
#include "rankings.h"

typedef struct ArrayIn {
  const int64_t *I;
  size_t nq, k, q;
  uint64_t ndb;
} ArrayIn;

/* The next row of I. -1 is no result (FAISS's padding, wherever it stands); a row below -1
 * or at ndb and beyond (when ndb > 0) is SLEM_EINVAL naming the row and column. */
static int rnext(SlemRankReader *r, const SlemRankQuery **q, SlemError *err) {
  ArrayIn *in = r->state;
  const int64_t *row;
  char qbuf[24], ibuf[24];
  long rank = 0;
  int st;
  *q = NULL;
  if (in->q == in->nq) return SLEM_OK;
  row = in->I + in->q * in->k;
  r->line = in->q + 1;
  snprintf(qbuf, sizeof qbuf, "%zu", in->q);
  if ((st = slem_rankreader_begin(r, qbuf, strlen(qbuf), r->line, err)) != SLEM_OK) return st;
  for (size_t j = 0; j < in->k; j++) {
    if (row[j] == -1) continue;
    if (row[j] < -1 || (in->ndb > 0 && (uint64_t)row[j] >= in->ndb))
      return slem_error(err, SLEM_EINVAL, "%s: row %zu, column %zu: %" PRId64 " is not a row of "
                        "the database (0 to %" PRIu64 ", or -1 for none)", r->name, in->q, j,
                        row[j], in->ndb - 1);
    snprintf(ibuf, sizeof ibuf, "%" PRId64, row[j]);
    if ((st = slem_rankreader_add(r, ibuf, ++rank, 0.0, NULL, row[j], NULL, r->line, err)) !=
        SLEM_OK)
      return st;
  }
  in->q++;
  slem_rankreader_finish(r, q);
  return SLEM_OK;
}


static void rfree(SlemRankReader *r) { free(r->state); }

static const SlemRankFormatOps array_ops = {
    .name = "array",
    .extension = "",
    .rnext = rnext,
    .rfree = rfree,
    .place = slem_rankreader_place_rows,
};

int slem_rank_array_open(SlemRankReader **self, const char *name, const int64_t *I, size_t nq,
                         size_t k, uint64_t ndb, SlemError *err) {
  SlemRankReader *r = calloc(1, sizeof *r);
  ArrayIn *in = calloc(1, sizeof *in);
  *self = NULL;
  if (!r || !in || !(r->qmap = slem_strmap_new()) || !(r->name = strdup(name))) {
    free(in);
    slem_rankreader_free(r);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  in->I = I;
  in->nq = nq;
  in->k = k;
  in->ndb = ndb;
  r->ops = &array_ops;
  r->state = in;
  *self = r;
  return SLEM_OK;
}
