/* The vector reader (vecs.h): opens the format of the table (vecs.c) that the name, the
 * option or the first bytes give, and reads through its hooks (vecfmt.h). */
#define _POSIX_C_SOURCE 200809L
#include "vecs.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crc32.h"
#include "io.h"
#include "vecfmt.h"
#include "ids.h"

const char *slem_vecreader_name(const SlemVecReader *self) { return slem_in_name(self->in); }
size_t slem_vecreader_dim(const SlemVecReader *self) { return self->d; }

int slem_vecreader_f32_exact(const SlemVecReader *self) {
  if (self->esize == 0 || self->divisor != 1) return 0; /* text, or scaled values */
  switch (self->dtype) {
  case SLEM_DT_F4:
  case SLEM_DT_F2:
  case SLEM_DT_U1:
  case SLEM_DT_I1:
  case SLEM_DT_I2: return 1;
  default: return 0;
  }
}
int slem_vecreader_integers(const SlemVecReader *self) {
  if (self->esize == 0) return -1; /* text */
  if (self->divisor != 1) return 0; /* integers standing for scaled values */
  switch (self->dtype) {
  case SLEM_DT_U1:
  case SLEM_DT_I1:
  case SLEM_DT_I2:
  case SLEM_DT_I4:
  case SLEM_DT_I8: return 1;
  default: return self->integral;
  }
}
const char *slem_vecreader_distance(const SlemVecReader *self) {
  return self->distance[0] ? self->distance : NULL;
}
int64_t slem_vecreader_count(const SlemVecReader *self) { return self->count; }
SlemFormat slem_vecreader_format(const SlemVecReader *self) { return self->fmt; }
uint64_t slem_vecreader_done(const SlemVecReader *self) { return self->done; }
uint64_t slem_vecreader_skipped(const SlemVecReader *self) { return self->skipped; }
void slem_vecreader_skip_nonfinite(SlemVecReader *self, int on) { self->skip_nonfinite = on; }
void slem_vecreader_set_read_threads(int n) { slem_vfmt_set_read_threads(n); }
size_t slem_vecreader_rows_for_pieces(size_t rec) { return slem_vfmt_rows_for_pieces(rec); }
int slem_vecreader_seekable(const SlemVecReader *self) { return slem_in_seekable(self->in); }

void slem_vecreader_free(SlemVecReader *self) {
  if (!self) return;
  if (self->def && self->def->close) self->def->close(self);
  else free(self->priv);
  slem_in_free(self->in);
  free(self->raw);
  free(self->meta_json);
  slem_ids_free(self->ids);
  free(self->member);
  free(self);
}

const struct SlemIds *slem_vecreader_ids(const SlemVecReader *self) { return self->ids; }

const char *slem_vecreader_fingerprint(const SlemVecReader *self) {
  return self->cache_fp[0] ? self->cache_fp : NULL;
}

const char *slem_vecreader_meta(const SlemVecReader *self) { return self->meta_json; }

int slem_vecreader_shard(const SlemVecReader *self, uint64_t *index, uint64_t *count,
                         uint64_t *first_row, int64_t *total) {
  if (self->shard_count == 0) return 0;
  if (index) *index = self->shard_index;
  if (count) *count = self->shard_count;
  if (first_row) *first_row = self->shard_first;
  if (total) *total = self->shard_total;
  return 1;
}

const char *slem_vecreader_shard_encoding(const SlemVecReader *self) {
  return self->shard_encoding[0] ? self->shard_encoding : NULL;
}

const char *slem_vecreader_arith(const SlemVecReader *self) {
  return self->arith[0] ? self->arith : NULL;
}

/* How descriptors of coupling couple were made, for messages. */
static void coupling_words(char *buf, size_t size, int couple) {
  if (couple == SLEM_COUPLE_NONE)
    snprintf(buf, size, "without --couple");
  else if (couple == SLEM_COUPLE_EXACT)
    snprintf(buf, size, "coupled by --couple (exact)");
  else
    snprintf(buf, size, "coupled by --couple=%s", slem_couple_name(couple));
}

int slem_vecreader_coupling(const SlemVecReader *self) { return self->couple; }

const char *slem_vecreader_made_with(const SlemVecReader *self, int coupling, char *buf,
                                     size_t size) {
  const char *fp = slem_vecreader_fingerprint(self);
  char words[64];
  coupling_words(words, sizeof words, self->couple);
  /* a coupling's fingerprint is not the cache's: the cache it couples is named */
  snprintf(buf, size, "the cache %s%s%s", self->couple ? self->couple_fp : fp ? fp : "(none)",
           coupling || self->couple ? ", " : "", coupling || self->couple ? words : "");
  return buf;
}

int slem_vecreaders_compatible(const SlemVecReader *a, const SlemVecReader *b, int *plain_side,
                               SlemError *err) {
  const char *fa = slem_vecreader_fingerprint(a), *fb = slem_vecreader_fingerprint(b);
  *plain_side = 0;
  if (fa && fb && strcmp(fa, fb) != 0) {
    /* the cache each side was made with: a coupling's fingerprint is not the cache's */
    const char *ca = a->couple ? a->couple_fp : fa, *cb = b->couple ? b->couple_fp : fb;
    char ha[64], hb[64];
    coupling_words(ha, sizeof ha, a->couple);
    coupling_words(hb, sizeof hb, b->couple);
    if (strcmp(ca, cb) == 0 && a->couple != b->couple)
      return slem_error(err, SLEM_EFORMAT, "%s holds descriptors of the cache %s %s, but %s "
                        "holds them %s: two couplings of one cache cannot be compared; encode both sides "
                        "with the same --couple (slem-encode -c CACHE)", slem_vecreader_name(a),
                        ca, ha, slem_vecreader_name(b), hb);
    return slem_error(err, SLEM_EFORMAT, "%s holds descriptors made with the cache %s%s%s, but "
                      "%s with the cache %s%s%s: they cannot be compared; re-encode the side made "
                      "with an older cache with the current one (slem-encode -c CACHE), or pass "
                      "--no-check", slem_vecreader_name(a), ca, a->couple ? ", " : "",
                      a->couple ? ha : "", slem_vecreader_name(b), cb, b->couple ? ", " : "",
                      b->couple ? hb : "");
  }
  if (!fa != !fb) *plain_side = fa ? 2 : 1;
  return SLEM_OK;
}

/* PATH:NAME, a named array inside a file (an HDF5 dataset), when path does not exist as
 * named but the part before its last ':' does: *file is that part (allocated) and
 * r->member the name; else both stay NULL. */
static int split_member(SlemVecReader *r, const char *path, char **file, SlemError *err) {
  const char *colon = path ? strrchr(path, ':') : NULL;
  struct stat sb;
  *file = NULL;
  if (!colon || colon == path || strcmp(path, "-") == 0 || stat(path, &sb) == 0) return SLEM_OK;
  if (!(*file = strndup(path, (size_t)(colon - path))) || !(r->member = strdup(colon + 1))) {
    free(*file);
    *file = NULL;
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  if (stat(*file, &sb) != 0) { /* neither exists: the message names the path as given */
    free(*file);
    free(r->member);
    *file = NULL;
    r->member = NULL;
  }
  return SLEM_OK;
}

static int vecreader_open(SlemVecReader **self, const char *path, SlemFormat fmt,
                          size_t empty_dim, SlemError *err) {
  SlemVecReader *r = calloc(1, sizeof *r);
  char *file = NULL;
  int st;
  *self = NULL;
  if (!r) return slem_error(err, SLEM_ENOMEM, "out of memory");
  r->divisor = 1;
  r->empty_dim = empty_dim;
  if ((st = split_member(r, path, &file, err)) != SLEM_OK) goto fail;
  st = slem_in_open(&r->in, file ? file : path, err);
  if (st) goto fail;
  if (file) path = file;
  if (fmt == SLEM_FMT_AUTO) fmt = slem_format_from_path(path);
  if (fmt == SLEM_FMT_AUTO) {
    r->sniffed = 1;
    const unsigned char *p;
    size_t avail;
    st = slem_in_peek(r->in, 4096, &p, &avail, err);
    if (st) goto fail;
    /* nothing: fvecs, whose open says the input is empty */
    fmt = avail == 0 ? SLEM_FMT_FVECS : slem_vfmt_sniff(p, avail);
  }
  r->fmt = fmt;
  r->def = slem_vfmt_find(fmt);
  if (!r->def) {
    st = slem_error(err, SLEM_EINVAL, "%s: unknown vector format %d", slem_in_name(r->in),
                    (int)fmt);
    goto fail;
  }
  if (r->member && !r->def->members) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %s holds one array, not datasets: ':%s' names a "
                    "dataset of an HDF5 file (FILE.h5:DATASET)", slem_in_name(r->in),
                    r->def->names[0], r->member);
    goto fail;
  }
  st = r->def->open(r, err);
  if (st) goto fail;
  *self = r;
  free(file);
  return SLEM_OK;
fail:
  slem_vecreader_free(r);
  free(file);
  return st;
}

int slem_vecreader_open(SlemVecReader **self, const char *path, SlemFormat fmt,
                        SlemError *err) {
  return vecreader_open(self, path, fmt, 0, err);
}

int slem_vecreader_open_empty(SlemVecReader **self, const char *path, SlemFormat fmt,
                              size_t empty_dim, SlemError *err) {
  return vecreader_open(self, path, fmt, empty_dim, err);
}

int slem_vecreader_is_empty(const SlemVecReader *self) { return self->empty; }


int slem_vecreader_rewind(SlemVecReader *self, SlemError *err) {
  int st = self->empty ? SLEM_OK
           : self->def->rewind ? self->def->rewind(self, err)
                             : slem_in_seek(self->in, self->data_off, err);
  if (st) return st;
  self->done = 0;
  self->recs = 0;
  self->skipped = 0;
  self->values_crc = 0;
  return SLEM_OK;
}

int slem_vecreader_seek(SlemVecReader *self, uint64_t row, SlemError *err) {
  int st;
  if (row == self->recs) return SLEM_OK;
  if (!slem_vecreader_can_seek(self) || row > (uint64_t)self->count)
    return slem_error(err, SLEM_EINVAL, "%s: cannot move to record %" PRIu64 " (%s)",
                      slem_in_name(self->in), row + 1,
                      row > (uint64_t)self->count ? "past the end" : "not a file of fixed records");
  /* a container: the checksums follow the move (fmt_slem.c); Fortran-order npy reads by
   * offset (fmt_npy.c) */
  if (self->def->seek) {
    if ((st = self->def->seek(self, row, err)) != SLEM_OK) return st;
  } else {
    if ((st = slem_in_seek(self->in, self->data_off + row * self->rec, err)) != SLEM_OK) return st;
  }
  self->recs = self->done = row;
  return SLEM_OK;
}

int slem_vecreader_can_seek(const SlemVecReader *self) {
  /* records read where they lie (scattered) move only where the format says how */
  return self->rec > 0 && (!self->scattered || self->def->seek) && !self->skip_nonfinite &&
         slem_in_seekable(self->in) && self->count >= 0;
}

/* At the end of the vectors, a file another process wrote meanwhile is an error: what was
 * read may mix two versions; a pipe holding more than its header counted is one too. */
static int at_end(SlemVecReader *self, int st, size_t got, SlemError *err) {
  if (st != SLEM_OK || got > 0) return st;
  if ((st = slem_vfmt_pipe_end(self, err)) != SLEM_OK) return st;
  return slem_in_unchanged(self->in, err);
}

int slem_vecreader_projections(const SlemVecReader *self, size_t *d, size_t *r, int *couple) {
  if (!self->kproj) return 0;
  if (d) *d = self->kp_d;
  if (r) *r = self->kp_r;
  if (couple) *couple = self->kp_couple;
  return 1;
}

void slem_vecreader_accept_projections(SlemVecReader *self) { self->kproj_ok = 1; }

/* Kernel projections are not vectors to a caller that did not accept them. */
static int refuse_projections(const SlemVecReader *self, SlemError *err) {
  return slem_error(err, SLEM_EFORMAT, "%s: kernel projections (slem-encode --projections), "
                    "which only slem-match -c CACHE reads, as its database",
                    slem_in_name(self->in));
}

int slem_vecreader_read(SlemVecReader *self, double *x, size_t max, size_t *got,
                        SlemError *err) {
  int st;
  *got = 0;
  if (self->kproj && !self->kproj_ok) return refuse_projections(self, err);
  if (self->empty) return at_end(self, SLEM_OK, 0, err);
  st = self->def->read ? self->def->read(self, x, NULL, max, got, err)
                       : slem_vfmt_read_records(self, x, NULL, max, got, err);
  if (st == SLEM_OK && self->values_on) self->values_crc = slem_crc32(self->values_crc, x, *got * self->d * sizeof *x);
  return at_end(self, st, *got, err);
}

int slem_vecreader_read_f32(SlemVecReader *self, float *x, size_t max, size_t *got,
                            SlemError *err) {
  int st;
  *got = 0;
  if (self->kproj && !self->kproj_ok) return refuse_projections(self, err);
  if (self->empty) return at_end(self, SLEM_OK, 0, err);
  st = self->def->read ? self->def->read(self, NULL, x, max, got, err)
                       : slem_vfmt_read_records(self, NULL, x, max, got, err);
  if (st == SLEM_OK && self->values_on) self->values_crc = slem_crc32(self->values_crc, x, *got * self->d * sizeof *x);
  return at_end(self, st, *got, err);
}

void slem_vecreader_follow_values(SlemVecReader *self) { self->values_on = 1; }
uint32_t slem_vecreader_values_crc(const SlemVecReader *self) { return self->values_crc; }

int slem_vecreader_payload_crc(const SlemVecReader *self, uint32_t *crc) {
  if (!self->has_payload) return 0;
  *crc = self->payload_crc;
  return 1;
}
