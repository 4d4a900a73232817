#define _POSIX_C_SOURCE 200809L
#include "vecs.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "io.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "slem reads and writes little-endian files in host order: a little-endian host is needed"
#endif

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

size_t slem_block_rows(size_t d) {
  size_t rows = ((size_t)1 << 21) / (d ? d : 1);
  return rows < 256 ? 256 : rows > 4096 ? 4096 : rows;
}

int slem_format_parse(SlemFormat *fmt, const char *name) {
  static const struct { const char *name; SlemFormat fmt; } tab[] = {
      {"auto", SLEM_FMT_AUTO}, {"fvecs", SLEM_FMT_FVECS}, {"bvecs", SLEM_FMT_BVECS},
      {"ivecs", SLEM_FMT_IVECS}, {"npy", SLEM_FMT_NPY},     {"text", SLEM_FMT_TEXT},
      {"txt", SLEM_FMT_TEXT},    {"csv", SLEM_FMT_TEXT},     {"tsv", SLEM_FMT_TEXT}};
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcmp(name, tab[i].name) == 0) {
      *fmt = tab[i].fmt;
      return SLEM_OK;
    }
  return SLEM_EINVAL;
}

const char *slem_format_name(SlemFormat fmt) {
  switch (fmt) {
  case SLEM_FMT_FVECS: return "fvecs";
  case SLEM_FMT_BVECS: return "bvecs";
  case SLEM_FMT_IVECS: return "ivecs";
  case SLEM_FMT_NPY: return "npy";
  case SLEM_FMT_TEXT: return "text";
  default: return "auto";
  }
}

SlemFormat slem_format_from_path(const char *path) {
  const char *dot;
  SlemFormat fmt;
  if (!path) return SLEM_FMT_AUTO;
  dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return SLEM_FMT_AUTO;
  if (slem_format_parse(&fmt, dot + 1) == SLEM_OK) return fmt;
  return SLEM_FMT_AUTO;
}

/* ---- reader ---- */

enum { DT_F4, DT_F8, DT_U1, DT_I4 };

struct SlemVecReader {
  SlemIn *in;
  SlemFormat fmt;
  size_t d;
  int64_t count;      /* -1 unknown */
  uint64_t done;      /* vectors returned */
  uint64_t recs;      /* records consumed, skipped ones included */
  uint64_t skipped;   /* records skipped for a NaN or Inf */
  int skip_nonfinite;
  int dtype;          /* element type of the binary payload */
  size_t esize;       /* bytes per element */
  size_t rec;         /* bytes per record (with the header for *vecs) */
  uint64_t data_off;  /* npy: where the data starts */
  unsigned char *raw;
  size_t raw_cap;
  double *pending;    /* text: the first line, parsed at open */
  double *row;        /* text: one row, for reading into float */
  size_t pending_bad; /* text: 1 + index of a non-finite value in the pending row */
  uint64_t pending_line;
  int has_pending;
  uint64_t line_no;   /* text: lines read */
};

const char *slem_vecreader_name(const SlemVecReader *self) { return slem_in_name(self->in); }
size_t slem_vecreader_dim(const SlemVecReader *self) { return self->d; }
int64_t slem_vecreader_count(const SlemVecReader *self) { return self->count; }
SlemFormat slem_vecreader_format(const SlemVecReader *self) { return self->fmt; }
uint64_t slem_vecreader_done(const SlemVecReader *self) { return self->done; }
uint64_t slem_vecreader_skipped(const SlemVecReader *self) { return self->skipped; }
void slem_vecreader_skip_nonfinite(SlemVecReader *self, int on) { self->skip_nonfinite = on; }
int slem_vecreader_seekable(const SlemVecReader *self) { return slem_in_seekable(self->in); }

void slem_vecreader_free(SlemVecReader *self) {
  if (!self) return;
  slem_in_free(self->in);
  free(self->raw);
  free(self->pending);
  free(self->row);
  free(self);
}

static int looks_like_text(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (c == 0) return 0;
    if (!(isprint(c) || isspace(c))) return 0;
  }
  return n > 0;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static SlemFormat sniff(const unsigned char *p, size_t n) {
  uint32_t d;
  if (n >= 6 && memcmp(p, npy_magic, 6) == 0) return SLEM_FMT_NPY;
  if (looks_like_text(p, n)) return SLEM_FMT_TEXT;
  if (n < 4) return SLEM_FMT_FVECS;
  d = le32(p);
  /* a bvecs record is 4 + d bytes, an fvecs one 4 + 4d */
  if (d > 0 && (uint64_t)d + 8 <= n && le32(p + 4 + d) == d &&
      !((uint64_t)4 * d + 8 <= n && le32(p + 4 + 4 * (uint64_t)d) == d))
    return SLEM_FMT_BVECS;
  return SLEM_FMT_FVECS;
}

/* Finds the value after key ('descr', "descr") in a Python dict literal. */
static const char *npy_find(const char *hdr, const char *key) {
  char q1[64], q2[64];
  const char *p;
  snprintf(q1, sizeof q1, "'%s'", key);
  snprintf(q2, sizeof q2, "\"%s\"", key);
  p = strstr(hdr, q1);
  if (!p) p = strstr(hdr, q2);
  if (!p) return NULL;
  p += strlen(q1);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

static int open_npy(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  unsigned char pre[12];
  size_t got, hlen, pre_len;
  char *hdr = NULL, descr[16];
  const char *p;
  uint64_t dims[3];
  int ndim = 0, st;
  int64_t size;

  st = slem_in_read(r->in, pre, 10, &got, err);
  if (st) return st;
  if (got < 10 || memcmp(pre, npy_magic, 6) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: not an npy file (bad magic)", name);
  if (pre[6] == 1) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    pre_len = 10;
  } else if (pre[6] == 2 || pre[6] == 3) {
    st = slem_in_read(r->in, pre + 10, 2, &got, err);
    if (st) return st;
    if (got < 2) return slem_error(err, SLEM_EFORMAT, "%s: npy header truncated", name);
    hlen = le32(pre + 8);
    pre_len = 12;
  } else {
    return slem_error(err, SLEM_EFORMAT, "%s: npy version %u.%u is not supported (1, 2, 3 are)",
                      name, pre[6], pre[7]);
  }
  if (hlen > (1u << 20))
    return slem_error(err, SLEM_EFORMAT, "%s: npy header length %zu is absurd", name, hlen);
  hdr = malloc(hlen + 1);
  if (!hdr) return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_in_read(r->in, hdr, hlen, &got, err);
  if (st) goto done;
  if (got < hlen) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy header truncated", name);
    goto done;
  }
  hdr[hlen] = '\0';
  r->data_off = pre_len + hlen;

  p = npy_find(hdr, "descr");
  if (!p || (*p != '\'' && *p != '"')) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy header has no 'descr'", name);
    goto done;
  }
  {
    char q = *p++;
    size_t i = 0;
    while (*p && *p != q && i + 1 < sizeof descr) descr[i++] = *p++;
    descr[i] = '\0';
  }
  if (strcmp(descr, "<f4") == 0) r->dtype = DT_F4, r->esize = 4;
  else if (strcmp(descr, "<f8") == 0) r->dtype = DT_F8, r->esize = 8;
  else if (strcmp(descr, "|u1") == 0 || strcmp(descr, "<u1") == 0 || strcmp(descr, "u1") == 0)
    r->dtype = DT_U1, r->esize = 1;
  else {
    st = slem_error(err, SLEM_EFORMAT,
                    "%s: npy dtype '%s' is not supported (use <f4, <f8 or |u1)", name, descr);
    goto done;
  }
  p = npy_find(hdr, "fortran_order");
  if (!p) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy header has no 'fortran_order'", name);
    goto done;
  }
  if (strncmp(p, "True", 4) == 0) {
    st = slem_error(err, SLEM_EFORMAT,
                    "%s: npy array is in Fortran order; save it with "
                    "numpy.ascontiguousarray first", name);
    goto done;
  }
  if (strncmp(p, "False", 5) != 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy 'fortran_order' is neither True nor False", name);
    goto done;
  }
  p = npy_find(hdr, "shape");
  if (!p || *p != '(') {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy header has no 'shape'", name);
    goto done;
  }
  p++;
  for (;;) {
    char *end;
    unsigned long long v;
    while (*p == ' ') p++;
    if (*p == ')') break;
    if (!isdigit((unsigned char)*p) || ndim == 3) {
      st = slem_error(err, SLEM_EFORMAT, "%s: npy shape is not a tuple of 1 or 2 sizes", name);
      goto done;
    }
    errno = 0;
    v = strtoull(p, &end, 10);
    if (errno || v > (1ull << 50)) {
      st = slem_error(err, SLEM_EFORMAT, "%s: npy shape size %.20s is absurd", name, p);
      goto done;
    }
    dims[ndim++] = v;
    p = end;
    while (*p == ' ') p++;
    if (*p == ',') p++;
  }
  if (ndim == 1) {
    r->count = 1;
    r->d = dims[0];
  } else if (ndim == 2) {
    r->count = (int64_t)dims[0];
    r->d = dims[1];
  } else {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy array has %d dimensions; 1 or 2 are supported",
                    name, ndim);
    goto done;
  }
  if (r->d == 0 || r->d > SLEM_DIM_MAX) {
    st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu is out of range (1..%u)", name, r->d,
                    SLEM_DIM_MAX);
    goto done;
  }
  if (r->count == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy array holds no vectors", name);
    goto done;
  }
  r->rec = r->d * r->esize;
  if ((uint64_t)r->count > (UINT64_MAX / 2) / r->rec) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy shape is absurd", name);
    goto done;
  }
  size = slem_in_size(r->in);
  if (size >= 0 && (uint64_t)size != r->data_off + (uint64_t)r->count * r->rec) {
    st = slem_error(err, SLEM_EFORMAT,
                    "%s: size %" PRId64 " bytes, but the header's shape (%" PRId64
                    ", %zu) of %s needs %" PRIu64 ": truncated or corrupt", name, size,
                    r->count, r->d, descr, r->data_off + (uint64_t)r->count * r->rec);
    goto done;
  }
  st = SLEM_OK;
done:
  free(hdr);
  return st;
}

/* Parses the values of one text line into out (when out is not NULL, at most cap of
 * them). Returns the count, -1 with err set, or -2 for a non-finite value when such lines
 * are skipped. */
static long parse_text_line(SlemVecReader *r, char *line, double *out, size_t cap,
                            int allow_nonfinite, SlemError *err) {
  long n = 0;
  char *p = line;
  for (;;) {
    char *end;
    double v;
    while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';') p++;
    if (*p == '\0') break;
    errno = 0;
    v = strtod(p, &end);
    if (end == p || (*end && !strchr(" \t,;", *end))) {
      char tok[24];
      size_t k = 0;
      while (p[k] && !strchr(" \t,;", p[k]) && k + 1 < sizeof tok) tok[k] = p[k], k++;
      tok[k] = '\0';
      slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %ld: not a number: '%s'",
                 slem_in_name(r->in), r->line_no, n + 1, tok);
      return -1;
    }
    if (!isfinite(v) && !allow_nonfinite) {
      if (r->skip_nonfinite) return -2;
      slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %ld is not finite (%.*s)",
                 slem_in_name(r->in), r->line_no, n + 1, (int)(end - p), p);
      return -1;
    }
    if (out) {
      if ((size_t)n >= cap) return n + 1; /* too many: caller reports */
      out[n] = v;
    }
    n++;
    p = end;
  }
  return n;
}

/* Next non-blank, non-comment line, or *line NULL at the end. */
static int next_text_line(SlemVecReader *r, char **line, SlemError *err) {
  size_t len;
  for (;;) {
    char *s;
    int st = slem_in_getline(r->in, line, &len, err);
    if (st || !*line) return st;
    r->line_no++;
    s = *line;
    while (*s == ' ' || *s == '\t') s++;
    if (*s && *s != '#') return SLEM_OK;
  }
}

static int open_text(SlemVecReader *r, SlemError *err) {
  char *line;
  long n;
  int st = next_text_line(r, &line, err);
  if (st) return st;
  if (!line) return slem_error(err, SLEM_EFORMAT, "%s: no vectors (empty file)", slem_in_name(r->in));
  /* non-finite values are let through here: whether they are an error depends on
   * skip_nonfinite, set after open, and is decided when the row is read */
  n = parse_text_line(r, line, NULL, 0, 1, err);
  if (n < 0) return err ? err->status : SLEM_EFORMAT;
  if (n == 0 || (size_t)n > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %ld values", slem_in_name(r->in),
                      r->line_no, n);
  r->d = (size_t)n;
  r->pending = malloc(r->d * sizeof *r->pending);
  r->row = malloc(r->d * sizeof *r->row);
  if (!r->pending || !r->row) return slem_error(err, SLEM_ENOMEM, "out of memory");
  parse_text_line(r, line, r->pending, r->d, 1, err);
  r->has_pending = 1;
  r->pending_line = r->line_no;
  r->pending_bad = 0;
  for (size_t j = 0; j < r->d && !r->pending_bad; j++)
    if (!isfinite(r->pending[j])) r->pending_bad = j + 1;
  r->count = -1;
  return SLEM_OK;
}

static int open_vecs(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  const unsigned char *p;
  size_t avail;
  int64_t size;
  uint32_t d;
  int st = slem_in_peek(r->in, 4, &p, &avail, err);
  if (st) return st;
  if (avail == 0) return slem_error(err, SLEM_EFORMAT, "%s: no vectors (empty file)", name);
  if (avail < 4)
    return slem_error(err, SLEM_EFORMAT, "%s: record 1: truncated (%zu bytes)", name, avail);
  d = le32(p);
  if (d == 0 || d > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EFORMAT,
                      "%s: record 1: dimension %" PRId32 " is out of range (1..%u); "
                      "is this really %s?", name, (int32_t)d, SLEM_DIM_MAX,
                      slem_format_name(r->fmt));
  r->d = d;
  switch (r->fmt) {
  case SLEM_FMT_BVECS: r->dtype = DT_U1, r->esize = 1; break;
  case SLEM_FMT_IVECS: r->dtype = DT_I4, r->esize = 4; break;
  default: r->dtype = DT_F4, r->esize = 4; break;
  }
  r->rec = 4 + r->d * r->esize;
  size = slem_in_size(r->in);
  r->count = -1;
  if (size >= 0) {
    if ((uint64_t)size % r->rec != 0)
      return slem_error(err, SLEM_EFORMAT,
                        "%s: size %" PRId64 " is not a multiple of the record size %zu "
                        "(dimension %zu): record %" PRIu64 " is truncated, or this is not %s",
                        name, size, r->rec, r->d, (uint64_t)size / r->rec + 1,
                        slem_format_name(r->fmt));
    r->count = size / (int64_t)r->rec;
  }
  return SLEM_OK;
}

int slem_vecreader_open(SlemVecReader **self, const char *path, SlemFormat fmt,
                        SlemError *err) {
  SlemVecReader *r = calloc(1, sizeof *r);
  int st;
  *self = NULL;
  if (!r) return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_in_open(&r->in, path, err);
  if (st) goto fail;
  if (fmt == SLEM_FMT_AUTO) fmt = slem_format_from_path(path);
  if (fmt == SLEM_FMT_AUTO) {
    const unsigned char *p;
    size_t avail;
    st = slem_in_peek(r->in, 4096, &p, &avail, err);
    if (st) goto fail;
    if (avail == 0) {
      st = slem_error(err, SLEM_EFORMAT, "%s: no vectors (empty file)", slem_in_name(r->in));
      goto fail;
    }
    fmt = sniff(p, avail);
  }
  r->fmt = fmt;
  switch (fmt) {
  case SLEM_FMT_NPY: st = open_npy(r, err); break;
  case SLEM_FMT_TEXT: st = open_text(r, err); break;
  default: st = open_vecs(r, err); break;
  }
  if (st) goto fail;
  *self = r;
  return SLEM_OK;
fail:
  slem_vecreader_free(r);
  return st;
}

int slem_vecreader_rewind(SlemVecReader *self, SlemError *err) {
  int st;
  if (self->fmt == SLEM_FMT_TEXT) {
    char *line;
    st = slem_in_seek(self->in, 0, err);
    if (st) return st;
    self->line_no = 0;
    st = next_text_line(self, &line, err);
    if (st) return st;
    if (!line || parse_text_line(self, line, self->pending, self->d, 1, err) != (long)self->d)
      return slem_error(err, SLEM_EFORMAT, "%s: changed while being read", slem_in_name(self->in));
    self->has_pending = 1;
    self->pending_line = self->line_no;
  } else {
    st = slem_in_seek(self->in, self->fmt == SLEM_FMT_NPY ? self->data_off : 0, err);
    if (st) return st;
  }
  self->done = 0;
  self->recs = 0;
  self->skipped = 0;
  return SLEM_OK;
}

static int read_text(SlemVecReader *r, double *x, size_t max, size_t *got, SlemError *err) {
  size_t i = 0;
  if (r->has_pending && max > 0) {
    r->has_pending = 0;
    if (r->pending_bad && !r->skip_nonfinite)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %zu is not finite",
                        slem_in_name(r->in), r->pending_line, r->pending_bad);
    if (r->pending_bad) {
      r->skipped++;
    } else {
      memcpy(x, r->pending, r->d * sizeof *x);
      i = 1;
    }
  }
  while (i < max) {
    char *line;
    long n;
    int st = next_text_line(r, &line, err);
    if (st) return st;
    if (!line) break;
    n = parse_text_line(r, line, x + i * r->d, r->d, 0, err);
    if (n == -2) {
      r->skipped++;
      continue;
    }
    if (n < 0) return err ? err->status : SLEM_EFORMAT;
    if ((size_t)n != r->d) {
      if ((size_t)n > r->d) n = parse_text_line(r, line, NULL, 0, 1, err);
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %ld values, expected %zu",
                        slem_in_name(r->in), r->line_no, n, r->d);
    }
    i++;
  }
  *got = i;
  r->done += i;
  return SLEM_OK;
}

/* Reads up to max records into xd (double) or xf (float), whichever is not NULL. */
static int read_block(SlemVecReader *self, double *xd, float *xf, size_t max, size_t *got,
                      SlemError *err) {
  const char *name = slem_in_name(self->in);
  int is_vecs = self->fmt != SLEM_FMT_NPY;
  size_t want, nbytes, n;
  int st;
  *got = 0;
  if (self->fmt == SLEM_FMT_TEXT) {
    if (xd) return read_text(self, xd, max, got, err);
    /* text into float: a line at a time through the reader's row buffer */
    for (size_t i = 0; i < max; i++) {
      size_t g;
      st = read_text(self, self->row, 1, &g, err);
      if (st) return st;
      if (!g) break;
      for (size_t j = 0; j < self->d; j++) xf[i * self->d + j] = (float)self->row[j];
      (*got)++;
    }
    return SLEM_OK;
  }
  for (;;) { /* again when every record of a block was skipped */
    size_t o = 0;
    if (self->count >= 0 && self->fmt == SLEM_FMT_NPY && (uint64_t)self->count - self->recs < max)
      max = (size_t)((uint64_t)self->count - self->recs);
    if (max == 0) return SLEM_OK;
    want = max * self->rec;
    if (want > self->raw_cap) {
      unsigned char *p = realloc(self->raw, want);
      if (!p) return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", max);
      self->raw = p;
      self->raw_cap = want;
    }
    st = slem_in_read(self->in, self->raw, want, &nbytes, err);
    if (st) return st;
    n = nbytes / self->rec;
    if (nbytes % self->rec != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": truncated (%zu of %zu bytes)",
                        name, self->recs + n + 1, nbytes % self->rec, self->rec);
    if (self->fmt == SLEM_FMT_NPY && n < max)
      return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": missing (the shape says %" PRId64
                        ")", name, self->recs + n + 1, self->count);
    for (size_t i = 0; i < n; i++) {
      const unsigned char *rp = self->raw + i * self->rec;
      double *xr = xd ? xd + o * self->d : NULL;
      float *fr = xf ? xf + o * self->d : NULL;
      uint64_t recno = self->recs + i + 1;
      size_t bad = 0; /* 1 + index of a non-finite value */
      if (is_vecs) {
        uint32_t d = le32(rp);
        if (d != self->d)
          return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": dimension %" PRId32
                            ", expected %zu", name, recno, (int32_t)d, self->d);
        rp += 4;
      }
      switch (self->dtype) {
      case DT_F4: {
        /* a branch-free scan for exponent bits all ones (NaN, Inf) first: it vectorises,
         * and almost every record passes it */
        uint32_t any = 0;
        for (size_t j = 0; j < self->d; j++) {
          uint32_t u;
          memcpy(&u, rp + 4 * j, 4);
          any |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
        }
        if (any) {
          for (size_t j = 0; j < self->d && !bad; j++) {
            float v;
            memcpy(&v, rp + 4 * j, 4);
            if (!isfinite(v)) bad = j + 1;
          }
        } else if (fr) {
          memcpy(fr, rp, 4 * self->d);
        } else {
          for (size_t j = 0; j < self->d; j++) {
            float v;
            memcpy(&v, rp + 4 * j, 4);
            xr[j] = v;
          }
        }
        break;
      }
      case DT_F8:
        for (size_t j = 0; j < self->d && !bad; j++) {
          double v;
          memcpy(&v, rp + 8 * j, 8);
          if (!isfinite(v)) bad = j + 1;
          else if (xr) xr[j] = v;
          else fr[j] = (float)v;
        }
        break;
      case DT_I4:
        for (size_t j = 0; j < self->d; j++) {
          int32_t v;
          memcpy(&v, rp + 4 * j, 4);
          if (xr) xr[j] = v;
          else fr[j] = (float)v;
        }
        break;
      default:
        for (size_t j = 0; j < self->d; j++) {
          if (xr) xr[j] = rp[j];
          else fr[j] = rp[j];
        }
        break;
      }
      if (bad) {
        if (!self->skip_nonfinite) {
          double v;
          if (self->dtype == DT_F4) {
            float f;
            memcpy(&f, rp + 4 * (bad - 1), 4);
            v = f;
          } else {
            memcpy(&v, rp + 8 * (bad - 1), 8);
          }
          return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": value %zu is %s", name,
                            recno, bad, isnan(v) ? "NaN" : "infinite");
        }
        self->skipped++;
        continue;
      }
      o++;
    }
    self->recs += n;
    if (o == 0 && n > 0) continue;
    *got = o;
    self->done += o;
    return SLEM_OK;
  }
}

int slem_vecreader_read(SlemVecReader *self, double *x, size_t max, size_t *got,
                        SlemError *err) {
  return read_block(self, x, NULL, max, got, err);
}

int slem_vecreader_read_f32(SlemVecReader *self, float *x, size_t max, size_t *got,
                            SlemError *err) {
  return read_block(self, NULL, x, max, got, err);
}

/* ---- writer ---- */

#define NPY_HEADER_LEN 128

struct SlemVecWriter {
  SlemOut *out;
  SlemFormat fmt;
  size_t d;
  int64_t n_hint;
  uint64_t n;
  unsigned char *rec;
};

static int npy_header(FILE *fp, uint64_t n, size_t d) {
  char h[NPY_HEADER_LEN];
  int len;
  memcpy(h, npy_magic, 6);
  h[6] = 1;
  h[7] = 0;
  h[8] = (char)(NPY_HEADER_LEN - 10);
  h[9] = 0;
  len = snprintf(h + 10, NPY_HEADER_LEN - 10,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (%" PRIu64 ", %zu), }", n, d);
  if (len < 0 || len >= NPY_HEADER_LEN - 11) return -1;
  memset(h + 10 + len, ' ', NPY_HEADER_LEN - 11 - (size_t)len);
  h[NPY_HEADER_LEN - 1] = '\n';
  return fwrite(h, 1, NPY_HEADER_LEN, fp) == NPY_HEADER_LEN ? 0 : -1;
}

int slem_vecwriter_open(SlemVecWriter **self, const char *path, SlemFormat fmt, size_t d,
                        int64_t n_hint, SlemError *err) {
  SlemVecWriter *w = calloc(1, sizeof *w);
  int st;
  *self = NULL;
  if (!w) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (fmt == SLEM_FMT_AUTO) fmt = slem_format_from_path(path);
  if (fmt == SLEM_FMT_AUTO) fmt = SLEM_FMT_FVECS;
  w->fmt = fmt;
  w->d = d;
  w->n_hint = n_hint;
  w->rec = malloc(4 + 4 * d);
  if (!w->rec) {
    free(w);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  st = slem_out_open(&w->out, path, err);
  if (st) goto fail;
  if (fmt == SLEM_FMT_NPY) {
    if (!slem_out_seekable(w->out) && n_hint < 0) {
      st = slem_error(err, SLEM_EINVAL,
                      "%s: npy output to a pipe needs the vector count up front, and the "
                      "input does not tell it; write fvecs, or to a file", slem_out_name(w->out));
      goto fail;
    }
    if (npy_header(slem_out_file(w->out), n_hint < 0 ? 0 : (uint64_t)n_hint, d) != 0) {
      st = slem_error(err, SLEM_EIO, "%s: write failed", slem_out_name(w->out));
      goto fail;
    }
  }
  *self = w;
  return SLEM_OK;
fail:
  slem_vecwriter_abort(w);
  return st;
}

int slem_vecwriter_write(SlemVecWriter *self, const float *x, size_t n, SlemError *err) {
  FILE *fp = slem_out_file(self->out);
  const char *name = slem_out_name(self->out);
  size_t d = self->d;
  for (size_t i = 0; i < n; i++) {
    const float *xr = x + i * d;
    uint64_t recno = self->n + i + 1;
    switch (self->fmt) {
    case SLEM_FMT_NPY:
      if (fwrite(xr, 4, d, fp) != d) goto ioerr;
      break;
    case SLEM_FMT_TEXT:
      for (size_t j = 0; j < d; j++) {
        char buf[SLEM_FMT_G9_MAX + 1];
        int len = slem_fmt_g9(buf + 1, xr[j]);
        buf[0] = ' ';
        if (fwrite(j ? buf : buf + 1, 1, (size_t)len + (j > 0), fp) != (size_t)len + (j > 0)) goto ioerr;
      }
      if (putc('\n', fp) == EOF) goto ioerr;
      break;
    case SLEM_FMT_BVECS:
    case SLEM_FMT_IVECS: {
      int32_t d32 = (int32_t)d;
      int bytes = self->fmt == SLEM_FMT_BVECS;
      memcpy(self->rec, &d32, 4);
      for (size_t j = 0; j < d; j++) {
        float v = xr[j];
        if (v != floorf(v) || (bytes ? (v < 0 || v > 255) : (v < -2147483648.0f || v >= 2147483648.0f)))
          return slem_error(err, SLEM_EINVAL, "%s: record %" PRIu64 ": value %zu (%.9g) does not "
                            "fit %s", name, recno, j + 1, (double)v, slem_format_name(self->fmt));
        if (bytes) {
          self->rec[4 + j] = (unsigned char)v;
        } else {
          int32_t iv = (int32_t)v;
          memcpy(self->rec + 4 + 4 * j, &iv, 4);
        }
      }
      if (fwrite(self->rec, 1, 4 + d * (bytes ? 1 : 4), fp) != 4 + d * (bytes ? 1 : 4)) goto ioerr;
      break;
    }
    default: {
      int32_t d32 = (int32_t)d;
      memcpy(self->rec, &d32, 4);
      memcpy(self->rec + 4, xr, 4 * d);
      if (fwrite(self->rec, 1, 4 + 4 * d, fp) != 4 + 4 * d) goto ioerr;
      break;
    }
    }
  }
  self->n += n;
  return SLEM_OK;
ioerr:
  return slem_error(err, SLEM_EIO, "%s: write: %s", name, strerror(errno));
}

int slem_vecwriter_close(SlemVecWriter *self, SlemError *err) {
  int st = SLEM_OK;
  if (self->fmt == SLEM_FMT_NPY && self->n != (uint64_t)self->n_hint) {
    FILE *fp = slem_out_file(self->out);
    if (!slem_out_seekable(self->out)) {
      st = slem_error(err, SLEM_EFORMAT, "%s: wrote %" PRIu64 " vectors, but the npy header "
                      "announced %" PRId64, slem_out_name(self->out), self->n, self->n_hint);
    } else if (fflush(fp) != 0 || fseek(fp, 0, SEEK_SET) != 0 ||
               npy_header(fp, self->n, self->d) != 0) {
      st = slem_error(err, SLEM_EIO, "%s: rewriting the npy header: %s",
                      slem_out_name(self->out), strerror(errno));
    }
  }
  if (st) {
    slem_vecwriter_abort(self);
    return st;
  }
  st = slem_out_commit(self->out, err);
  free(self->rec);
  free(self);
  return st;
}

void slem_vecwriter_abort(SlemVecWriter *self) {
  if (!self) return;
  slem_out_abort(self->out);
  free(self->rec);
  free(self);
}
