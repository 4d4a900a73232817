/* fvecs, bvecs, ivecs (the TEXMEX corpus formats): per record an int32 little-endian
 * dimension d, then d float32 / uint8 / int32 values. */
#define _POSIX_C_SOURCE 200809L
#include <sys/uio.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "vecfmt.h"

/* Binary data that is neither npy nor text is fvecs unless told otherwise: the lowest
 * confidence that still wins. */
static int sniff_fvecs(const unsigned char *p, size_t n) { return 1; }

/* bvecs when the second record header agrees with the first at the bvecs record length
 * (4 + d) and not at the fvecs one (4 + 4d). */
static int sniff_bvecs(const unsigned char *p, size_t n) {
  uint32_t d;
  if (n < 4) return 0;
  d = slem_le32(p);
  if (d > 0 && (uint64_t)d + 8 <= n && slem_le32(p + 4 + d) == d &&
      !((uint64_t)4 * d + 8 <= n && slem_le32(p + 4 + 4 * (uint64_t)d) == d))
    return 2;
  return 0;
}

/* fvecs guessed from the content (no -f, no extension) when the values of the first records
 * in the first n bytes at p, read as float32, have the bit patterns of small int32s
 * (|v| < 2^23: nonzero denormals, or NaNs with the sign set): that content is ivecs as
 * plausibly as fvecs, and reading one as the other gives no error, only wrong vectors. */
static int looks_ivecs(const unsigned char *p, size_t n, uint32_t d) {
  for (size_t off = 0; off + 8 <= n; off += 4 + 4 * (size_t)d) { /* a long record: its start */
    if (slem_le32(p + off) != d) return 0;
    for (size_t j = 0; j < d && off + 8 + 4 * j <= n; j++) {
      uint32_t u = slem_le32(p + off + 4 + 4 * j);
      if ((u & 0x7f800000u) == 0 && (u & 0x007fffffu) != 0 && !(u & 0x80000000u)) return 1;
      if ((u & 0xff800000u) == 0xff800000u && u != 0xff800000u) return 1;
    }
  }
  return 0;
}

static int open_vecs(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  const unsigned char *p;
  size_t avail;
  int64_t size;
  uint32_t d;
  int st = slem_in_peek(r->in, 4, &p, &avail, err);
  if (st) return st;
  if (avail == 0) return slem_vfmt_empty(r, "empty file", err);
  if (avail < 4)
    return slem_error(err, SLEM_EFORMAT, "%s: record 1: truncated (%zu bytes)", name, avail);
  d = slem_le32(p);
  if (d == 0 || d > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EFORMAT,
                      "%s: record 1: dimension %" PRId32 " is out of range (1..%u); "
                      "is this really %s?", name, (int32_t)d, SLEM_DIM_MAX, r->def->names[0]);
  if (r->sniffed && r->fmt == SLEM_FMT_FVECS) {
    if ((st = slem_in_peek(r->in, 4096, &p, &avail, err)) != SLEM_OK) return st;
    if (looks_ivecs(p, avail, d))
      return slem_error(err, SLEM_EFORMAT, "%s: fvecs or ivecs? Both have a 4-byte dimension "
                        "and 4-byte values, and these values read as float32 are the bit "
                        "patterns of small integers; say which with -f fvecs or -f ivecs (or "
                        "name the file .fvecs or .ivecs)", name);
  }
  r->d = d;
  switch (r->fmt) {
  case SLEM_FMT_BVECS: r->dtype = SLEM_DT_U1, r->esize = 1; break;
  case SLEM_FMT_IVECS: r->dtype = SLEM_DT_I4, r->esize = 4; break;
  default: r->dtype = SLEM_DT_F4, r->esize = 4; break;
  }
  r->prefix = 4;
  r->rec = 4 + r->d * r->esize;
  r->data_off = 0;
  size = slem_in_size(r->in);
  r->count = -1;
  if (size >= 0) {
    if ((uint64_t)size % r->rec != 0)
      return slem_error(err, SLEM_EFORMAT,
                        "%s: size %" PRId64 " is not a multiple of the record size %zu "
                        "(dimension %zu): record %" PRIu64 " is truncated, or this is not %s",
                        name, size, r->rec, r->d, (uint64_t)size / r->rec + 1, r->def->names[0]);
    r->count = size / (int64_t)r->rec;
  }
  return SLEM_OK;
}

/* Records per writev(2): a dimension and a row each, two pieces */
#define FVECS_IOV_RECORDS 512

static int write_fvecs(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  struct iovec iov[2 * FVECS_IOV_RECORDS];
  size_t d = w->d;
  int32_t d32 = (int32_t)d;
  /* the dimensions and the rows go from where they are to writev(2), no record assembled */
  for (size_t i = 0; i < n;) {
    size_t g = n - i < FVECS_IOV_RECORDS ? n - i : FVECS_IOV_RECORDS;
    for (size_t r = 0; r < g; r++) {
      iov[2 * r] = (struct iovec){&d32, 4};
      iov[2 * r + 1] = (struct iovec){(void *)(x + (i + r) * d), 4 * d};
    }
    if (slem_out_writev(w->out, iov, (int)(2 * g)) != 0) return slem_vfmt_write_error(w, err);
    i += g;
  }
  return SLEM_OK;
}

/* bvecs and ivecs: integral values in range only. */
static int write_integral(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  size_t d = w->d;
  int bytes = w->fmt == SLEM_FMT_BVECS;
  size_t len = 4 + d * (bytes ? 1 : 4);
  int32_t d32 = (int32_t)d;
  memcpy(w->rec, &d32, 4);
  for (size_t i = 0; i < n; i++) {
    const float *xr = x + i * d;
    for (size_t j = 0; j < d; j++) {
      float v = xr[j];
      int st = bytes ? slem_vfmt_check_integral(w, v, 0, 255, w->n + i + 1, j, err)
                     : slem_vfmt_check_integral(w, v, -2147483648.0, 2147483647.0,
                                                w->n + i + 1, j, err);
      if (st) return st;
      if (bytes) {
        w->rec[4 + j] = (unsigned char)v;
      } else {
        int32_t iv = (int32_t)v;
        memcpy(w->rec + 4 + 4 * j, &iv, 4);
      }
    }
    if (fwrite(w->rec, 1, len, fp) != len) return slem_vfmt_write_error(w, err);
  }
  return SLEM_OK;
}

const SlemVecFormatDef slem_vfmt_fvecs = {
    .id = SLEM_FMT_FVECS, .names = {"fvecs", NULL}, .sniff = sniff_fvecs,
    .open = open_vecs, .write = write_fvecs};
const SlemVecFormatDef slem_vfmt_bvecs = {
    .id = SLEM_FMT_BVECS, .names = {"bvecs", NULL}, .sniff = sniff_bvecs,
    .open = open_vecs, .write = write_integral};
/* ivecs looks like fvecs and is never recognised by content */
const SlemVecFormatDef slem_vfmt_ivecs = {
    .id = SLEM_FMT_IVECS, .names = {"ivecs", NULL}, .open = open_vecs,
    .write = write_integral};
