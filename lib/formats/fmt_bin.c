/* The big-ann-benchmarks formats: a header of uint32 n and uint32 d (little-endian), then
 * n * d values, row by row: float32 (.fbin), uint8 (.u8bin), int8 (.i8bin) or int32
 * (.ibin). Its ground-truth files are .ibin-like with n, k, the n * k int32 ids and then
 * n * k float32 distances: read as ibin, such a file gives the ids (the distances after
 * them are left unread). No magic: recognised by extension or by name only. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vecfmt.h"

static int open_bin(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  const char *fname = r->def->names[0];
  unsigned char h[8];
  size_t got;
  uint64_t n, payload;
  int64_t size;
  int st = slem_in_read(r->in, h, 8, &got, err);
  if (st) return st;
  if (got == 0) return slem_vfmt_empty(r, "empty file", err);
  if (got < 8)
    return slem_error(err, SLEM_EFORMAT, "%s: %s header truncated (%zu of 8 bytes)", name,
                      fname, got);
  n = slem_le32(h);
  r->d = slem_le32(h + 4);
  if (r->d == 0 || r->d > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu is out of range (1..%u); is this "
                      "really %s?", name, r->d, SLEM_DIM_MAX, fname);
  if (n == 0 && !r->empty_dim)
    return slem_error(err, SLEM_EFORMAT, "%s: %s header says 0 vectors", name, fname);
  switch (r->fmt) {
  case SLEM_FMT_U8BIN: r->dtype = SLEM_DT_U1, r->esize = 1; break;
  case SLEM_FMT_I8BIN: r->dtype = SLEM_DT_I1, r->esize = 1; break;
  case SLEM_FMT_IBIN: r->dtype = SLEM_DT_I4, r->esize = 4; break;
  default: r->dtype = SLEM_DT_F4, r->esize = 4; break;
  }
  r->prefix = 0;
  r->rec = r->d * r->esize;
  r->data_off = 8;
  r->count = (int64_t)n;
  r->count_from = "the header";
  payload = n * r->rec; /* below 2^32 * 2^22: no overflow */
  r->exact_end = 1;
  r->tail_ok = r->fmt == SLEM_FMT_IBIN ? payload : 0;
  size = slem_in_size(r->in);
  if (size > 0 && (uint64_t)size > 8 + payload &&
      !(r->fmt == SLEM_FMT_IBIN && (uint64_t)size == 8 + 2 * payload))
    return slem_vfmt_beyond_count(r, err);
  if (size >= 0 && (uint64_t)size != 8 + payload &&
      !(r->fmt == SLEM_FMT_IBIN && (uint64_t)size == 8 + 2 * payload))
    return slem_error(err, SLEM_EFORMAT,
                      "%s: size %" PRId64 " bytes, but the header's n = %" PRIu64 ", d = %zu "
                      "of %s needs %" PRIu64 "%s: truncated or corrupt", name, size, n, r->d,
                      fname, 8 + payload,
                      r->fmt == SLEM_FMT_IBIN ? " (or twice the data for ground truth)" : "");
  if (n == 0) r->empty = 1; /* allowed by the caller, else refused above */
  return SLEM_OK;
}

static int begin_bin(SlemVecWriter *w, SlemError *err) {
  if (w->d > UINT32_MAX || w->n_hint > (int64_t)UINT32_MAX)
    return slem_error(err, SLEM_EINVAL, "%s: %s holds at most 2^32 - 1 vectors and dimensions",
                      slem_out_name(w->out), w->def->names[0]);
  if (!slem_out_seekable(w->out) && w->n_hint < 0)
    return slem_error(err, SLEM_EINVAL,
                      "%s: %s output to a pipe needs the vector count up front, and the input "
                      "does not tell it; write fvecs, or to a file", slem_out_name(w->out),
                      w->def->names[0]);
  return SLEM_OK;
}

static int bin_header(SlemVecWriter *w, FILE *fp, uint64_t n) {
  uint32_t h[2] = {(uint32_t)n, (uint32_t)w->d}; /* host order is little-endian */
  return fwrite(h, 4, 2, fp) == 2 ? 0 : -1;
}

static int header_bin(SlemVecWriter *w, SlemError *err) {
  if (bin_header(w, slem_out_file(w->out), w->n_hint < 0 ? 0 : (uint64_t)w->n_hint) != 0)
    return slem_vfmt_write_error(w, err);
  return SLEM_OK;
}

static int write_bin(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  size_t d = w->d;
  if (w->fmt == SLEM_FMT_FBIN) {
    if (fwrite(x, 4 * d, n, fp) != n) return slem_vfmt_write_error(w, err);
    return SLEM_OK;
  }
  for (size_t i = 0; i < n; i++) {
    const float *xr = x + i * d;
    size_t len;
    for (size_t j = 0; j < d; j++) {
      float v = xr[j];
      int st;
      switch (w->fmt) {
      case SLEM_FMT_U8BIN:
        if ((st = slem_vfmt_check_integral(w, v, 0, 255, w->n + i + 1, j, err)) != SLEM_OK)
          return st;
        w->rec[j] = (unsigned char)v;
        break;
      case SLEM_FMT_I8BIN:
        if ((st = slem_vfmt_check_integral(w, v, -128, 127, w->n + i + 1, j, err)) != SLEM_OK)
          return st;
        w->rec[j] = (unsigned char)(int8_t)v;
        break;
      default: {
        int32_t iv;
        if ((st = slem_vfmt_check_integral(w, v, -2147483648.0, 2147483647.0, w->n + i + 1, j,
                                           err)) != SLEM_OK)
          return st;
        iv = (int32_t)v;
        memcpy(w->rec + 4 * j, &iv, 4);
        break;
      }
      }
    }
    len = w->fmt == SLEM_FMT_IBIN ? 4 * d : d;
    if (fwrite(w->rec, 1, len, fp) != len) return slem_vfmt_write_error(w, err);
  }
  return SLEM_OK;
}

/* The header announced n_hint vectors: patch it when another count was written. */
static int end_bin(SlemVecWriter *w, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  if (w->n == (uint64_t)w->n_hint) return SLEM_OK;
  if (w->n > UINT32_MAX)
    return slem_error(err, SLEM_EINVAL, "%s: %" PRIu64 " vectors do not fit the uint32 count "
                      "of %s", slem_out_name(w->out), w->n, w->def->names[0]);
  if (!slem_out_seekable(w->out))
    return slem_error(err, SLEM_EFORMAT, "%s: wrote %" PRIu64 " vectors, but the %s header "
                      "announced %" PRId64, slem_out_name(w->out), w->n, w->def->names[0],
                      w->n_hint);
  if (fflush(fp) != 0 || fseek(fp, 0, SEEK_SET) != 0 || bin_header(w, fp, w->n) != 0)
    return slem_error(err, SLEM_EIO, "%s: rewriting the %s header: %s", slem_out_name(w->out),
                      w->def->names[0], strerror(errno));
  return SLEM_OK;
}

#define BIN_FORMAT(ID, NAME)                                                             \
  {.id = ID, .names = {NAME, NULL}, .open = open_bin, .begin = begin_bin,                \
   .header = header_bin, .write = write_bin, .end = end_bin}
const SlemVecFormatDef slem_vfmt_fbin = BIN_FORMAT(SLEM_FMT_FBIN, "fbin");
const SlemVecFormatDef slem_vfmt_u8bin = BIN_FORMAT(SLEM_FMT_U8BIN, "u8bin");
const SlemVecFormatDef slem_vfmt_i8bin = BIN_FORMAT(SLEM_FMT_I8BIN, "i8bin");
const SlemVecFormatDef slem_vfmt_ibin = BIN_FORMAT(SLEM_FMT_IBIN, "ibin");
