#include "npypair.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define HEADER_LEN 128 /* magic, version, length, dict and padding: a multiple of 64 */

struct SlemNpyPair {
  SlemOut *i_out, *d_out;
  size_t k;
  uint64_t nq;
  int64_t *irow;
  float *drow;
};

long slem_npypair_letter(const char *path) {
  size_t len = strlen(path);
  char c;
  if (len < 5 || strcmp(path + len - 4, ".npy") != 0) return -1;
  c = path[len - 5];
  if (c != 'I' && c != 'D') return -1;
  if (len == 5 || strchr("._-/", path[len - 6])) return (long)len - 5;
  return -1;
}

int slem_npypair_names(const char *path, char *i_name, char *d_name, size_t n) {
  size_t len = strlen(path);
  long at = slem_npypair_letter(path);
  if (at >= 0) { /* the pair's own names: the letter swapped */
    if (len >= n) return -1;
    snprintf(i_name, n, "%.*sI.npy", (int)at, path);
    snprintf(d_name, n, "%.*sD.npy", (int)at, path);
    return 0;
  }
  if (len > 4 && strcmp(path + len - 4, ".npy") == 0) len -= 4;
  if (len + 7 >= n) return -1;
  snprintf(i_name, n, "%.*s.I.npy", (int)len, path);
  snprintf(d_name, n, "%.*s.D.npy", (int)len, path);
  return 0;
}

/* The npy header for an (nq, k) matrix of descr, padded with spaces to HEADER_LEN. */
static void header(unsigned char *h, const char *descr, uint64_t nq, size_t k) {
  char dict[HEADER_LEN];
  size_t dlen = HEADER_LEN - 10;
  memset(h, ' ', HEADER_LEN);
  memcpy(h, "\x93NUMPY\x01\x00", 8);
  h[8] = (unsigned char)(dlen & 0xff);
  h[9] = (unsigned char)(dlen >> 8);
  snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRIu64
           ", %zu), }", descr, nq, k);
  memcpy(h + 10, dict, strlen(dict));
  h[HEADER_LEN - 1] = '\n';
}

static int put_header(SlemOut *out, const char *descr, uint64_t nq, size_t k, int rewind,
                      SlemError *err) {
  unsigned char h[HEADER_LEN];
  FILE *fp = slem_out_file(out);
  header(h, descr, nq, k);
  if ((rewind && fseek(fp, 0, SEEK_SET) != 0) || fwrite(h, 1, HEADER_LEN, fp) != HEADER_LEN)
    return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(out), strerror(errno));
  return SLEM_OK;
}

int slem_npypair_open(SlemNpyPair **out, const char *path, size_t k, SlemError *err) {
  char iname[4096], dname[4096];
  SlemNpyPair *self;
  int st;
  *out = NULL;
  if (!path || strcmp(path, "-") == 0)
    return slem_error(err, SLEM_EINVAL, "npy rankings are two files (I and D): give -o NAME.npy");
  if (k == 0) return slem_error(err, SLEM_EINVAL, "npy rankings need k >= 1");
  if (slem_npypair_names(path, iname, dname, sizeof iname) != 0)
    return slem_error(err, SLEM_EINVAL, "%s: name too long", path);
  if (!(self = calloc(1, sizeof *self)) || !(self->irow = malloc(k * sizeof *self->irow)) ||
      !(self->drow = malloc(k * sizeof *self->drow))) {
    slem_npypair_abort(self);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  self->k = k;
  if ((st = slem_out_open(&self->i_out, iname, err)) != SLEM_OK ||
      (st = slem_out_open(&self->d_out, dname, err)) != SLEM_OK)
    goto fail;
  if (!slem_out_seekable(self->i_out) || !slem_out_seekable(self->d_out)) {
    st = slem_error(err, SLEM_EINVAL, "%s: npy rankings need regular files (their headers are "
                    "completed at the end)", path);
    goto fail;
  }
  if ((st = put_header(self->i_out, "<i8", 0, k, 0, err)) != SLEM_OK ||
      (st = put_header(self->d_out, "<f4", 0, k, 0, err)) != SLEM_OK)
    goto fail;
  *out = self;
  return SLEM_OK;
fail:
  slem_npypair_abort(self);
  return st;
}

int slem_npypair_write(void *ctx, uint64_t query, const SlemHit *hits, size_t n,
                       SlemError *err) {
  SlemNpyPair *self = ctx;
  size_t k = self->k;
  if (query != self->nq)
    return slem_error(err, SLEM_EINVAL, "npy rankings: query %" PRIu64 " after %" PRIu64, query,
                      self->nq);
  for (size_t i = 0; i < k; i++) {
    self->irow[i] = i < n ? (int64_t)hits[i].row : -1;
    self->drow[i] = i < n ? hits[i].score : -FLT_MAX;
  }
  if (fwrite(self->irow, sizeof *self->irow, k, slem_out_file(self->i_out)) != k ||
      fwrite(self->drow, sizeof *self->drow, k, slem_out_file(self->d_out)) != k)
    return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(self->i_out), strerror(errno));
  self->nq++;
  return SLEM_OK;
}

int slem_npypair_close(SlemNpyPair *self, SlemError *err) {
  int st = put_header(self->i_out, "<i8", self->nq, self->k, 1, err);
  if (st == SLEM_OK) st = put_header(self->d_out, "<f4", self->nq, self->k, 1, err);
  if (st == SLEM_OK) { /* a pair: both complete and synced before either is renamed */
    SlemOut *both[2] = {self->i_out, self->d_out};
    self->i_out = self->d_out = NULL;
    st = slem_out_commit_all(both, 2, err);
  }
  slem_npypair_abort(self);
  return st;
}

void slem_npypair_abort(SlemNpyPair *self) {
  if (!self) return;
  slem_out_abort(self->i_out);
  slem_out_abort(self->d_out);
  free(self->irow);
  free(self->drow);
  free(self);
}
