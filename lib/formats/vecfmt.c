/* What the formats share (vecfmt.h): the reading of fixed-size binary records, the
 * decoding of their elements, float16, the messages every format gives. Below the table of
 * formats (vecs.c), which depends on the formats, which depend on this. */
#define _POSIX_C_SOURCE 200809L
#include "vecfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "mem.h"

float slem_half_to_float(uint16_t h) {
  unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
            : ldexpf((float)(m | 0x400), (int)e - 25);
  return (h & 0x8000) ? -v : v;
}

int slem_float_to_half(float v, uint16_t *h) {
  uint32_t u, a, sign;
  memcpy(&u, &v, 4);
  sign = (u >> 16) & 0x8000;
  a = u & 0x7fffffffu;
  if (a >= 0x477ff000u) { /* 65520 and beyond round to Inf; NaN and Inf themselves */
    *h = (uint16_t)(sign | 0x7c00);
    return -1;
  }
  if (a < 0x38800000u) { /* below 2^-14: a multiple of 2^-24, exact after the scaling */
    float f;
    memcpy(&f, &a, 4);
    *h = (uint16_t)(sign | (uint32_t)nearbyintf(f * 16777216.0f));
  } else {
    uint32_t r = ((a >> 23) - 112) << 10 | (a & 0x7fffff) >> 13, rem = a & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++; /* a carry moves the exponent up */
    *h = (uint16_t)(sign | r);
  }
  return 0;
}

int slem_vfmt_empty(SlemVecReader *r, const char *what, SlemError *err) {
  if (!r->empty_dim)
    return slem_error(err, SLEM_EFORMAT, "%s: no vectors (%s)", slem_in_name(r->in), what);
  r->empty = 1;
  r->count = 0;
  if (r->d == 0) r->d = r->empty_dim;
  if (r->esize == 0) r->dtype = SLEM_DT_F4, r->esize = 4;
  r->rec = r->prefix + r->d * r->esize;
  return SLEM_OK;
}

/* Element j of a payload at p, as double. */
static double load(int dtype, int swap, const unsigned char *p, size_t j) {
  unsigned char b[8];
  size_t size = dtype == SLEM_DT_F8 || dtype == SLEM_DT_I8 ? 8 : dtype == SLEM_DT_F4 || dtype == SLEM_DT_I4 ? 4
              : dtype == SLEM_DT_F2 || dtype == SLEM_DT_I2 ? 2 : 1;
  p += j * size;
  for (size_t k = 0; k < size; k++) b[k] = swap ? p[size - 1 - k] : p[k];
  switch (dtype) {
  case SLEM_DT_F4: {
    float f;
    memcpy(&f, b, 4);
    return f;
  }
  case SLEM_DT_F8: {
    double v;
    memcpy(&v, b, 8);
    return v;
  }
  case SLEM_DT_F2: return slem_half_to_float((uint16_t)(b[0] | b[1] << 8));
  case SLEM_DT_I1: return (int8_t)b[0];
  case SLEM_DT_I2: {
    int16_t v;
    memcpy(&v, b, 2);
    return v;
  }
  case SLEM_DT_I4: {
    int32_t v;
    memcpy(&v, b, 4);
    return v;
  }
  case SLEM_DT_I8: { /* numpy's default integer; exact up to 2^53 */
    int64_t v;
    memcpy(&v, b, 8);
    return (double)v;
  }
  default: return b[0];
  }
}

/* Converts the d values of one record at rp into xr (double) or fr (float), whichever is
 * not NULL. Returns 0, or 1 + the index of the first value that is not finite, or (into
 * float) that float32 cannot hold: 1e300 rounded to float is Inf, which a reader of float
 * rows must not let through as if it were data (the row is then incomplete). */
static size_t decode(const SlemVecReader *r, const unsigned char *rp, double *xr, float *fr) {
  size_t d = r->d;
  if (r->dtype == SLEM_DT_F4 && !r->swap && r->divisor == 1) {
    /* the common case, fast: a branch-free scan for exponent bits all ones (NaN, Inf)
     * first (it vectorises, and almost every record passes it), then a copy */
    uint32_t any = 0;
    for (size_t j = 0; j < d; j++) {
      uint32_t u;
      memcpy(&u, rp + 4 * j, 4);
      any |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
    }
    if (any) {
      for (size_t j = 0; j < d; j++) {
        float v;
        memcpy(&v, rp + 4 * j, 4);
        if (!isfinite(v)) return j + 1;
      }
    }
    if (fr) {
      if ((const void *)fr != (const void *)rp) memcpy(fr, rp, 4 * d); /* read in place */
    } else {
      for (size_t j = 0; j < d; j++) {
        float v;
        memcpy(&v, rp + 4 * j, 4);
        xr[j] = v;
      }
    }
    return 0;
  }
  if (r->dtype == SLEM_DT_F8 && !r->swap && r->divisor == 1) { /* the same for doubles */
    uint64_t any = 0;
    for (size_t j = 0; j < d; j++) {
      uint64_t u;
      memcpy(&u, rp + 8 * j, 8);
      any |= (uint64_t)((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull);
    }
    if (any) {
      for (size_t j = 0; j < d; j++) {
        double v;
        memcpy(&v, rp + 8 * j, 8);
        if (!isfinite(v)) return j + 1;
      }
    }
    if (xr) {
      if ((const void *)xr != (const void *)rp) memcpy(xr, rp, 8 * d); /* read in place */
    } else {
      for (size_t j = 0; j < d; j++) {
        double v;
        memcpy(&v, rp + 8 * j, 8);
        fr[j] = (float)v;
        if (!isfinite(fr[j])) return j + 1;
      }
    }
    return 0;
  }
  if (r->dtype == SLEM_DT_U1 && r->divisor == 1) {
    for (size_t j = 0; j < d; j++) {
      if (xr) xr[j] = rp[j];
      else fr[j] = rp[j];
    }
    return 0;
  }
  for (size_t j = 0; j < d; j++) {
    double v = load(r->dtype, r->swap, rp, j);
    if (!isfinite(v)) return j + 1;
    v /= r->divisor;
    if (xr) xr[j] = v;
    else if (!isfinite(fr[j] = (float)v)) return j + 1;
  }
  return 0;
}

/* Record recno: its int32 dimension at hp (when the format has a prefix) and its values at
 * rp, decoded into xr or fr (fr may be rp itself). SLEM_OK with *skip 0, or 1 when the
 * record holds a NaN or Inf and such records are skipped (counted); else the error naming
 * the file and the record. */
static int decode_record(SlemVecReader *r, const unsigned char *hp, const unsigned char *rp,
                         double *xr, float *fr, uint64_t recno, int *skip, SlemError *err) {
  size_t bad;
  *skip = 0;
  if (r->prefix && slem_le32(hp) != r->d)
    return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": dimension %" PRId32
                      ", expected %zu", slem_in_name(r->in), recno, (int32_t)slem_le32(hp), r->d);
  if (!(bad = decode(r, rp, xr, fr))) return SLEM_OK;
  if (!r->skip_nonfinite) {
    double v = load(r->dtype, r->swap, rp, bad - 1);
    if (isfinite(v))
      return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": value %zu (%.9g) is "
                        "beyond float32's range, in which the vectors are read",
                        slem_in_name(r->in), recno, bad, v / r->divisor);
    return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": value %zu is %s",
                      slem_in_name(r->in), recno, bad, isnan(v) ? "NaN" : "infinite");
  }
  r->skipped++;
  *skip = 1;
  return SLEM_OK;
}

int slem_vfmt_decode(SlemVecReader *r, const unsigned char *raw, size_t n, double *xd,
                     float *xf, size_t *out, SlemError *err) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    const unsigned char *rp = raw + i * r->rec;
    int st, skip;
    if ((st = decode_record(r, rp, rp + r->prefix, xd ? xd + o * r->d : NULL,
                            xf ? xf + o * r->d : NULL, r->recs + i + 1, &skip, err)) != SLEM_OK)
      return st;
    o += !skip;
  }
  *out = o;
  return SLEM_OK;
}

/* A block of n whole records read in nbytes, max asked for: a truncated record, or records
 * missing that the header counted, is an error naming the record. */
static int short_block(const SlemVecReader *self, size_t n, size_t nbytes, size_t max,
                       SlemError *err) {
  const char *name = slem_in_name(self->in);
  if (nbytes % self->rec != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": truncated (%zu of %zu bytes)",
                      name, self->recs + n + 1, nbytes % self->rec, self->rec);
  if (self->count_from && n < max)
    return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": missing (%s says %" PRId64
                      ")", name, self->recs + n + 1, self->count_from, self->count);
  return SLEM_OK;
}

/* ---- a block read in pieces on several threads ----
 *
 * A block of fixed-size records from a regular file is cut into pieces of whole records,
 * each read with pread(2) and checked (dimensions, NaN, Inf) on a thread of its own: one
 * reading thread copies 2-5 GB/s out of the page cache, less than a server's cores encode.
 * The rows are those a single read gives, and so are the errors: an I/O error or a short
 * file is taken in the order of the pieces, a truncated block before a bad record, and the
 * first bad record of the block is the one named. */

#define PIECE_MIN ((size_t)4 << 20) /* bytes a piece holds at least */
#define PIECES_MAX 16

static int read_threads = 1; /* slem_vfmt_set_read_threads() */
static int test_pieces;      /* SLEM_TEST_READ_PIECES: pieces forced, whatever their size */
static pthread_once_t test_once = PTHREAD_ONCE_INIT;

static void test_probe(void) {
  const char *t = getenv("SLEM_TEST_READ_PIECES");
  long n = t && *t ? strtol(t, NULL, 10) : 0;
  test_pieces = n > PIECES_MAX ? PIECES_MAX : n > 1 ? (int)n : 0;
}

void slem_vfmt_set_read_threads(int n) {
  read_threads = n < 1 ? 1 : n > PIECES_MAX ? PIECES_MAX : n;
}

size_t slem_vfmt_rows_for_pieces(size_t rec) {
  return read_threads > 1 && rec ? ((size_t)read_threads * PIECE_MIN + rec - 1) / rec : 0;
}

/* The pieces a block of max records of rec bytes is read in (1: one read). */
static size_t pieces_for(size_t max, size_t rec) {
  size_t k;
  pthread_once(&test_once, test_probe);
  if (test_pieces) return max < (size_t)test_pieces ? (max ? max : 1) : (size_t)test_pieces;
  k = max * rec / PIECE_MIN;
  if (k > (size_t)read_threads) k = (size_t)read_threads;
  return k < 1 ? 1 : k;
}

typedef struct Piece {
  SlemVecReader *r;
  uint64_t pos;          /* where in the file its first record starts */
  size_t first, n;       /* records [first, first + n) of the block */
  unsigned char *raw;    /* the block's records as read (r->rec bytes each), or NULL: fvecs
                          * into float rows, dimensions to r->raw and values into xf */
  double *xd;            /* the block's rows, one of the two */
  float *xf;
  size_t nbytes;         /* read */
  int io, bad;           /* status of the read, and of the check of its whole records */
  SlemError io_err, bad_err;
} Piece;

static void *read_piece(void *arg) {
  Piece *p = arg;
  SlemVecReader *r = p->r;
  size_t d = r->d, rec = r->rec;
  p->io = p->raw ? slem_in_pread(r->in, p->pos, NULL, 0, p->raw + p->first * rec, 0,
                                 p->n * rec, &p->nbytes, &p->io_err)
                 : slem_in_pread(r->in, p->pos, r->raw + 4 * p->first, 4, p->xf + p->first * d,
                                 4 * d, p->n * rec, &p->nbytes, &p->io_err);
  if (p->io) return NULL;
  for (size_t i = p->first; i < p->first + p->nbytes / rec; i++) {
    const unsigned char *hp = p->raw ? p->raw + i * rec : r->raw + 4 * i;
    const unsigned char *rp = p->raw ? hp + r->prefix : (const unsigned char *)(p->xf + i * d);
    int skip;
    if ((p->bad = decode_record(r, hp, rp, p->xd ? p->xd + i * d : NULL,
                                p->xf ? p->xf + i * d : NULL, r->recs + i + 1, &skip,
                                &p->bad_err)) != SLEM_OK)
      break;
  }
  return NULL;
}

/* Reads and checks max records (at most what the file holds past them) into xd or xf at
 * file place pos in k pieces: raw as for read_piece. SLEM_OK with *got rows, or the error a
 * single read would give. */
static int read_pieces(SlemVecReader *self, uint64_t pos, size_t k, size_t max,
                       unsigned char *raw, double *xd, float *xf, size_t *got,
                       SlemError *err) {
  Piece piece[PIECES_MAX];
  pthread_t tid[PIECES_MAX];
  int started[PIECES_MAX] = {0};
  size_t total = 0, n;
  int st, short_at = 0;
  for (size_t i = 0; i < k; i++) {
    size_t lo = max * i / k, hi = max * (i + 1) / k;
    piece[i] = (Piece){.r = self, .pos = pos + (uint64_t)lo * self->rec, .first = lo,
                       .n = hi - lo, .raw = raw, .xd = xd, .xf = xf};
  }
  for (size_t i = 1; i < k; i++)
    started[i] = pthread_create(&tid[i], NULL, read_piece, &piece[i]) == 0;
  read_piece(&piece[0]);
  for (size_t i = 1; i < k; i++) {
    if (started[i]) pthread_join(tid[i], NULL);
    else read_piece(&piece[i]); /* no thread for it: read here */
  }
  /* what one read would have seen: the pieces in turn up to the first short one */
  for (size_t i = 0; i < k && !short_at; i++) {
    if (piece[i].io) {
      if (err) *err = piece[i].io_err;
      return piece[i].io;
    }
    total += piece[i].nbytes;
    short_at = piece[i].nbytes < piece[i].n * self->rec;
  }
  if ((st = slem_in_consume(self->in, total, short_at, err)) != SLEM_OK) return st;
  n = total / self->rec;
  if ((st = short_block(self, n, total, max, err)) != SLEM_OK) return st;
  for (size_t i = 0; i < k && piece[i].first < n; i++)
    if (piece[i].bad) {
      if (err) *err = piece[i].bad_err;
      return piece[i].bad;
    }
  self->recs += n;
  self->done += n;
  *got = n;
  return SLEM_OK;
}

int slem_vfmt_read_records(SlemVecReader *self, double *xd, float *xf, size_t max, size_t *got,
                        SlemError *err) {
  size_t want, nbytes, n, k;
  unsigned char *raw;
  int64_t at;
  int st;
  for (;;) { /* again when every record of a block was skipped */
    size_t o;
    if (self->count_from && (uint64_t)self->count - self->recs < max)
      max = (size_t)((uint64_t)self->count - self->recs);
    if (max == 0) return SLEM_OK;
    want = max * self->rec;
    /* float32 records after an int32 dimension (fvecs) into float32 rows: the values read
     * straight into the rows, the dimensions beside them (readv), then checked there */
    if (self->prefix == 4 && xf && self->dtype == SLEM_DT_F4 && !self->swap &&
        self->divisor == 1 && !self->skip_nonfinite) {
      if (max * 4 > self->raw_cap) {
        free(self->raw);
        self->raw_cap = 0;
        if (!(self->raw = malloc(max * 4)))
          return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", max);
        self->raw_cap = max * 4;
      }
      if ((k = pieces_for(max, self->rec)) > 1 && (at = slem_in_direct_pos(self->in)) >= 0)
        return read_pieces(self, (uint64_t)at, k, max, NULL, NULL, xf, got, err);
      st = slem_in_read_records(self->in, self->raw, 4, xf, 4 * self->d, max, &nbytes, err);
      if (st) return st;
      n = nbytes / self->rec;
      if ((st = short_block(self, n, nbytes, max, err)) != SLEM_OK) return st;
      for (size_t i = 0; i < n; i++) {
        int skip;
        if ((st = decode_record(self, self->raw + 4 * i, (unsigned char *)(xf + i * self->d),
                                NULL, xf + i * self->d, self->recs + i + 1, &skip, err)))
          return st;
      }
      self->recs += n;
      *got = n;
      self->done += n;
      return SLEM_OK;
    }
    /* records laid out as the caller's rows (no prefix, the same type, nothing to convert)
     * are read straight into them and checked there: no second copy */
    if (self->prefix == 0 && !self->swap && self->divisor == 1 &&
        (xf ? self->dtype == SLEM_DT_F4 : self->dtype == SLEM_DT_F8)) {
      raw = xf ? (unsigned char *)xf : (unsigned char *)xd;
    } else {
      if (want > self->raw_cap) { /* grown, never copied: it is filled again at each call */
        free(self->raw);
        self->raw_cap = 0;
        if (!(self->raw = slem_mem_alloc_large(want)))
          return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", max);
        self->raw_cap = want;
      }
      raw = self->raw;
    }
    if (!self->skip_nonfinite && (k = pieces_for(max, self->rec)) > 1 &&
        (at = slem_in_direct_pos(self->in)) >= 0)
      return read_pieces(self, (uint64_t)at, k, max, raw, xd, xf, got, err);
    st = slem_in_read(self->in, raw, want, &nbytes, err);
    if (st) return st;
    n = nbytes / self->rec;
    if ((st = short_block(self, n, nbytes, max, err)) != SLEM_OK) return st;
    st = slem_vfmt_decode(self, raw, n, xd, xf, &o, err);
    if (st) return st;
    self->recs += n;
    if (o == 0 && n > 0) continue;
    *got = o;
    self->done += o;
    return SLEM_OK;
  }
}

int slem_vfmt_beyond_count(const SlemVecReader *r, SlemError *err) {
  return slem_error(err, SLEM_EFORMAT, "%s: record %" PRId64 ": data beyond the %" PRId64
                    " vectors of dimension %zu that %s counts%s: corrupt or concatenated",
                    slem_in_name(r->in), r->count + 1, r->count, r->d, r->count_from,
                    r->tail_ok ? " (or twice the data for ground truth)" : "");
}

/* A pipe whose header counted fewer records than follow: the same error as the file's
 * size gives at open. The rest is read and counted (tail_ok bytes may follow). */
int slem_vfmt_pipe_end(SlemVecReader *self, SlemError *err) {
  unsigned char buf[65536];
  uint64_t extra = 0;
  size_t got;
  int st;
  if (!self->exact_end || slem_in_seekable(self->in) || self->recs != (uint64_t)self->count)
    return SLEM_OK;
  self->exact_end = 0; /* checked once: the pipe is drained */
  do {
    if ((st = slem_in_read(self->in, buf, sizeof buf, &got, err)) != SLEM_OK) return st;
    extra += got;
    if (extra > self->tail_ok) return slem_vfmt_beyond_count(self, err);
  } while (got == sizeof buf);
  if (extra != 0 && extra != self->tail_ok) return slem_vfmt_beyond_count(self, err);
  return SLEM_OK;
}

int slem_vfmt_check_integral(SlemVecWriter *w, float v, double lo, double hi, uint64_t recno,
                             size_t j, SlemError *err) {
  if (v == floorf(v) && v >= lo && v <= hi) return SLEM_OK;
  return slem_error(err, SLEM_EINVAL, "%s: record %" PRIu64 ": value %zu (%.9g) does not fit %s",
                    slem_out_name(w->out), recno, j + 1, (double)v, w->def->names[0]);
}

int slem_vfmt_write_error(SlemVecWriter *w, SlemError *err) {
  return slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(w->out), strerror(errno));
}
