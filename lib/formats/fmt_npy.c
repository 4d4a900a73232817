/* npy (numpy.save): versions 1-3; 2-D (n, d) or 1-D (d,) as one vector; dtypes f2, f4,
 * f8 in either byte order, i1, u1, and i2, i4, i8 in either byte order; C or Fortran order.
 *
 * A Fortran-order (n, d) array is stored column by column, so a block of rows is d
 * strided reads, one per column: from a file they are pread(2)s on a descriptor of our
 * own, and nothing but the block is held. A pipe cannot be read that way: its payload is
 * held whole when it is at most SLEM_NPY_FORTRAN_PIPE_MAX bytes and refused above that.
 *
 * Written as version 1.0, C order, <f4 (or <f2, or |i1 with its scale recorded after the
 * dictionary: see SlemDtype), with a fixed 128-byte header so that the count can be
 * patched in place when the writer did not know it up front. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vecfmt.h"


/* The reader's own state (r->priv), for Fortran order (r->scattered). */
typedef struct NpyState {
  int fd;               /* own descriptor for pread, or -1 */
  unsigned char *whole; /* from a pipe: the whole payload, or NULL */
  unsigned char *cols;  /* one block, column by column */
  size_t cols_cap;
} NpyState;
#define NS(r) ((NpyState *)(r)->priv)

static void close_npy(SlemVecReader *r) {
  if (r->priv) {
    if (NS(r)->fd >= 0) close(NS(r)->fd);
    free(NS(r)->whole);
    free(NS(r)->cols);
  }
  free(r->priv);
  r->priv = NULL;
}

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int sniff_npy(const unsigned char *p, size_t n) {
  return n >= 6 && memcmp(p, npy_magic, 6) == 0 ? 100 : 0;
}

/* Finds the value after key ('descr', "descr") in a Python dict literal; *twice is set when
 * the key is given again (numpy would take the last, this reader the first: refused). */
static const char *npy_find(const char *hdr, const char *key, int *twice) {
  char q1[64], q2[64];
  const char *p, *p2;
  snprintf(q1, sizeof q1, "'%s'", key);
  snprintf(q2, sizeof q2, "\"%s\"", key);
  p = strstr(hdr, q1);
  p2 = strstr(hdr, q2);
  *twice = (p && (p2 || strstr(p + 1, q1))) || (p2 && strstr(p2 + 1, q2));
  if (!p) p = p2;
  if (!p) return NULL;
  p += strlen(q1);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

/* What may follow True or False in the dict: the end of the word. */
static int npy_word_end(char c) { return c == ',' || c == '}' || c == ' ' || c == '\0'; }

/* Sets dtype, esize and swap from a descr such as '<f4', '>f8' or '|i1'. Returns -1 for a
 * type slem does not read. */
static int parse_descr(SlemVecReader *r, const char *descr) {
  static const struct { const char *t; int dtype; size_t size; } tab[] = {
      {"f2", SLEM_DT_F2, 2}, {"f4", SLEM_DT_F4, 4}, {"f8", SLEM_DT_F8, 8},
      {"i1", SLEM_DT_I1, 1}, {"u1", SLEM_DT_U1, 1}, {"i2", SLEM_DT_I2, 2},
      {"i4", SLEM_DT_I4, 4}, {"i8", SLEM_DT_I8, 8}};
  char order = '=';
  if (strchr("<>|=", descr[0])) order = *descr++;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcmp(descr, tab[i].t) == 0) {
      if (order == '|' && tab[i].size > 1) return -1; /* numpy writes '|' for bytes only */
      r->dtype = tab[i].dtype;
      r->esize = tab[i].size;
      r->swap = order == '>' && tab[i].size > 1;
      return 0;
    }
  return -1;
}

/* The scale slem's writer records after the dictionary of an int8 file ("# slem-scale:
 * 1/127"): the divisor 127, or 1 when there is none or the type is not an integer. */
static double read_divisor(const char *hdr, int dtype) {
  const char *p = strrchr(hdr, '}'), *q;
  char *end;
  long s;
  if (!p || (dtype != SLEM_DT_I1 && dtype != SLEM_DT_I2 && dtype != SLEM_DT_I4)) return 1;
  q = strstr(p, "# slem-scale: 1/");
  if (!q) return 1;
  s = strtol(q + 16, &end, 10);
  return end > q + 16 && s >= 1 && s <= 1000000 ? (double)s : 1;
}

/* Fortran order: a descriptor of our own for pread, or the whole payload of a pipe. */
static int open_fortran(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  uint64_t total = (uint64_t)r->count * r->rec;
  if (slem_in_seekable(r->in)) {
    struct stat sb;
    NS(r)->fd = open(name, O_RDONLY | O_CLOEXEC);
    if (NS(r)->fd < 0)
      return slem_error(err, SLEM_EIO, "%s: opening again to read Fortran order: %s", name,
                        strerror(errno));
    if (fstat(NS(r)->fd, &sb) != 0 || (int64_t)sb.st_size != slem_in_size(r->in))
      return slem_error(err, SLEM_EIO, "%s: changed while being opened", name);
    return SLEM_OK;
  }
  if (total > SLEM_NPY_FORTRAN_PIPE_MAX)
    return slem_error(err, SLEM_EFORMAT,
                      "%s: npy array in Fortran order on a pipe: its %" PRIu64 " bytes would "
                      "have to be held whole, and the bound is %u MiB; give a file, or save "
                      "it with numpy.ascontiguousarray", name, total,
                      (unsigned)(SLEM_NPY_FORTRAN_PIPE_MAX >> 20));
  {
    size_t got;
    int st;
    NS(r)->whole = malloc(total ? (size_t)total : 1);
    if (!NS(r)->whole)
      return slem_error(err, SLEM_ENOMEM, "%s: out of memory for %" PRIu64 " bytes", name, total);
    st = slem_in_read(r->in, NS(r)->whole, (size_t)total, &got, err);
    if (st) return st;
    if (got < total)
      return slem_error(err, SLEM_EFORMAT, "%s: npy data truncated (%zu of %" PRIu64 " bytes)",
                        name, got, total);
  }
  return SLEM_OK;
}

/* Reads len bytes at off from r's own descriptor. */
static int pread_full(SlemVecReader *r, unsigned char *dst, size_t len, uint64_t off,
                      SlemError *err) {
  size_t done = 0;
  while (done < len) {
    ssize_t k = pread(NS(r)->fd, dst + done, len - done, (off_t)(off + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0)
      return slem_error(err, SLEM_EIO, "%s: read: %s", slem_in_name(r->in), strerror(errno));
    if (k == 0)
      return slem_error(err, SLEM_EFORMAT, "%s: npy data truncated (the file shrank while "
                        "being read)", slem_in_name(r->in));
    done += (size_t)k;
  }
  return SLEM_OK;
}

/* A block of rows of a Fortran-order array: column j of rows [recs, recs + m) is one
 * run of m elements at (j n + recs) esize, read into cols and transposed into raw. */
static int read_fortran(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                        SlemError *err) {
  const uint64_t n = (uint64_t)r->count;
  const size_t es = r->esize, d = r->d;
  for (;;) {
    size_t m = max, o, len;
    int st;
    if (n - r->recs < m) m = (size_t)(n - r->recs);
    if (m == 0) return SLEM_OK;
    len = m * es;
    if (m * r->rec > r->raw_cap) {
      unsigned char *a = realloc(r->raw, m * r->rec), *b;
      if (a) r->raw = a;
      b = a ? realloc(NS(r)->cols, m * r->rec) : NULL;
      if (b) NS(r)->cols = b;
      if (!a || !b)
        return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", m);
      r->raw_cap = NS(r)->cols_cap = m * r->rec;
    }
    for (size_t j = 0; j < d; j++) {
      uint64_t off = ((uint64_t)j * n + r->recs) * es;
      if (NS(r)->whole) {
        memcpy(NS(r)->cols + j * len, NS(r)->whole + off, len);
      } else if ((st = pread_full(r, NS(r)->cols + j * len, len, r->data_off + off, err)) != SLEM_OK) {
        return st;
      }
    }
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < d; j++)
        memcpy(r->raw + i * r->rec + j * es, NS(r)->cols + j * len + i * es, es);
    st = slem_vfmt_decode(r, r->raw, m, xd, xf, &o, err);
    if (st) return st;
    r->recs += m;
    if (o == 0) continue;
    *got = o;
    r->done += o;
    return SLEM_OK;
  }
}

static int read_npy(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                    SlemError *err) {
  return r->scattered ? read_fortran(r, xd, xf, max, got, err)
                    : slem_vfmt_read_records(r, xd, xf, max, got, err);
}

/* To row: in Fortran order reads go by offset from r->recs (read_fortran), so moving is
 * only the position, which the caller sets; in C order the records' offset. */
static int seek_npy(SlemVecReader *r, uint64_t row, SlemError *err) {
  return r->scattered ? SLEM_OK : slem_in_seek(r->in, r->data_off + row * r->rec, err);
}

/* Fortran order reads by offset: going back is only forgetting the position. */
static int rewind_npy(SlemVecReader *r, SlemError *err) {
  return r->scattered ? SLEM_OK : slem_in_seek(r->in, r->data_off, err);
}

static int open_npy(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  unsigned char pre[12];
  size_t got, hlen, pre_len;
  char *hdr = NULL, descr[16];
  const char *p;
  uint64_t dims[3];
  int ndim = 0, st, twice;
  int64_t size;

  if (!(r->priv = calloc(1, sizeof(NpyState)))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  NS(r)->fd = -1;
  st = slem_in_read(r->in, pre, 10, &got, err);
  if (st) return st;
  if (got < 6 || memcmp(pre, npy_magic, 6) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: not an npy file (bad magic)", name);
  if (got < 10) return slem_error(err, SLEM_EFORMAT, "%s: npy header truncated", name);
  if (pre[6] == 1) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    pre_len = 10;
  } else if (pre[6] == 2 || pre[6] == 3) {
    st = slem_in_read(r->in, pre + 10, 2, &got, err);
    if (st) return st;
    if (got < 2) return slem_error(err, SLEM_EFORMAT, "%s: npy header truncated", name);
    hlen = slem_le32(pre + 8);
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

  {
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
      npy_find(hdr, keys[k], &twice);
      if (twice) {
        st = slem_error(err, SLEM_EFORMAT, "%s: npy header gives '%s' twice: corrupt", name,
                        keys[k]);
        goto done;
      }
    }
  }
  p = npy_find(hdr, "descr", &twice);
  if (p && *p == '[') {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy dtype is a structured (record) type: not "
                    "supported (save a plain 2-D array of numbers)", name);
    goto done;
  }
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
  if (parse_descr(r, descr) != 0) {
    st = slem_error(err, SLEM_EFORMAT,
                    "%s: npy dtype '%s' is not supported (use f2, f4, f8, i1, u1, i2, i4 or i8, "
                    "either byte order)", name, descr);
    goto done;
  }
  p = npy_find(hdr, "fortran_order", &twice);
  if (!p) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy header has no 'fortran_order'", name);
    goto done;
  }
  /* the word whole: 'Trueish' is no more True to this reader than to numpy */
  if (strncmp(p, "True", 4) == 0 && npy_word_end(p[4])) {
    r->scattered = 1;
  } else if (strncmp(p, "False", 5) != 0 || !npy_word_end(p[5])) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy 'fortran_order' is neither True nor False", name);
    goto done;
  }
  p = npy_find(hdr, "shape", &twice);
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
    if (*p == 'L') p++; /* numpy under Python 2 wrote its sizes as longs: (1000L, 128L) */
    while (*p == ' ') p++;
    if (*p == ',') {
      p++;
    } else if (*p != ')') { /* (2 8) is no tuple numpy reads */
      st = slem_error(err, SLEM_EFORMAT, "%s: npy shape is not a tuple of 1 or 2 sizes", name);
      goto done;
    }
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
    if (!r->empty_dim) {
      st = slem_error(err, SLEM_EFORMAT, "%s: npy array holds no vectors", name);
      goto done;
    }
    r->empty = 1; /* the caller allows it: shape (0, d) */
  }
  r->rec = r->d * r->esize;
  r->prefix = 0;
  r->count_from = "the shape";
  if ((uint64_t)r->count > (UINT64_MAX / 2) / r->rec) {
    st = slem_error(err, SLEM_EFORMAT, "%s: npy shape is absurd", name);
    goto done;
  }
  r->exact_end = 1;
  size = slem_in_size(r->in);
  if (size > 0 && (uint64_t)size > r->data_off + (uint64_t)r->count * r->rec) {
    st = slem_vfmt_beyond_count(r, err);
    goto done;
  }
  if (size >= 0 && (uint64_t)size != r->data_off + (uint64_t)r->count * r->rec) {
    st = slem_error(err, SLEM_EFORMAT,
                    "%s: size %" PRId64 " bytes, but the header's shape (%" PRId64
                    ", %zu) of %s needs %" PRIu64 ": truncated or corrupt", name, size,
                    r->count, r->d, descr, r->data_off + (uint64_t)r->count * r->rec);
    goto done;
  }
  r->divisor = read_divisor(hdr, r->dtype);
  /* one row or one column: Fortran order is the same layout as C order */
  if (r->scattered && (ndim == 1 || r->count <= 1 || r->d == 1)) r->scattered = 0;
  st = r->scattered ? open_fortran(r, err) : SLEM_OK;
done:
  free(hdr);
  return st;
}

#define NPY_HEADER_LEN 128

static int npy_header(SlemVecWriter *w, FILE *fp, uint64_t n) {
  static const char *const descr[] = {"<f4", "<f2", "|i1"};
  char h[NPY_HEADER_LEN], scale[32] = "";
  int len;
  memcpy(h, npy_magic, 6);
  h[6] = 1;
  h[7] = 0;
  h[8] = (char)(NPY_HEADER_LEN - 10);
  h[9] = 0;
  if (w->dtype == SLEM_DTYPE_I1)
    snprintf(scale, sizeof scale, " # slem-scale: 1/%d", SLEM_I1_SCALE);
  len = snprintf(h + 10, NPY_HEADER_LEN - 10,
                 "{'descr': '%s', 'fortran_order': False, 'shape': (%" PRIu64 ", %zu), }%s",
                 descr[w->dtype], n, w->d, scale);
  if (len < 0 || len >= NPY_HEADER_LEN - 11) return -1;
  memset(h + 10 + len, ' ', NPY_HEADER_LEN - 11 - (size_t)len);
  h[NPY_HEADER_LEN - 1] = '\n';
  return fwrite(h, 1, NPY_HEADER_LEN, fp) == NPY_HEADER_LEN ? 0 : -1;
}

static int begin_npy(SlemVecWriter *w, SlemError *err) {
  if (!slem_out_seekable(w->out) && w->n_hint < 0)
    return slem_error(err, SLEM_EINVAL,
                      "%s: npy output to a pipe needs the vector count up front, and the "
                      "input does not tell it; write fvecs, or to a file", slem_out_name(w->out));
  return SLEM_OK;
}

static int header_npy(SlemVecWriter *w, SlemError *err) {
  if (npy_header(w, slem_out_file(w->out), w->n_hint < 0 ? 0 : (uint64_t)w->n_hint) != 0)
    return slem_error(err, SLEM_EIO, "%s: write failed", slem_out_name(w->out));
  return SLEM_OK;
}

static int write_npy(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  size_t d = w->d;
  if (w->dtype == SLEM_DTYPE_F4) {
    if (fwrite(x, 4 * d, n, fp) != n) return slem_vfmt_write_error(w, err);
    return SLEM_OK;
  }
  for (size_t i = 0; i < n; i++) {
    const float *xr = x + i * d;
    for (size_t j = 0; j < d; j++) {
      if (w->dtype == SLEM_DTYPE_F2) {
        uint16_t h;
        if (slem_float_to_half(xr[j], &h) != 0)
          return slem_error(err, SLEM_EINVAL, "%s: record %" PRIu64 ": value %zu (%.9g) does "
                            "not fit float16", slem_out_name(w->out), w->n + i + 1, j + 1,
                            (double)xr[j]);
        w->rec[2 * j] = (unsigned char)(h & 0xff);
        w->rec[2 * j + 1] = (unsigned char)(h >> 8);
      } else {
        double q = round((double)xr[j] * SLEM_I1_SCALE);
        if (!(q > -SLEM_I1_SCALE)) q = -SLEM_I1_SCALE; /* NaN too, though none comes here */
        if (q > SLEM_I1_SCALE) q = SLEM_I1_SCALE;
        w->rec[j] = (unsigned char)(int8_t)q;
      }
    }
    if (fwrite(w->rec, w->dtype == SLEM_DTYPE_F2 ? 2 : 1, d, fp) != d)
      return slem_vfmt_write_error(w, err);
  }
  return SLEM_OK;
}

/* The header announced n_hint vectors: patch it when another count was written. */
static int end_npy(SlemVecWriter *w, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  if (w->n == (uint64_t)w->n_hint) return SLEM_OK;
  if (!slem_out_seekable(w->out))
    return slem_error(err, SLEM_EFORMAT, "%s: wrote %" PRIu64 " vectors, but the npy header "
                      "announced %" PRId64, slem_out_name(w->out), w->n, w->n_hint);
  if (fflush(fp) != 0 || fseek(fp, 0, SEEK_SET) != 0 || npy_header(w, fp, w->n) != 0)
    return slem_error(err, SLEM_EIO, "%s: rewriting the npy header: %s",
                      slem_out_name(w->out), strerror(errno));
  return SLEM_OK;
}

const SlemVecFormatDef slem_vfmt_npy = {
    .id = SLEM_FMT_NPY, .names = {"npy", NULL}, .sniff = sniff_npy, .open = open_npy,
    .read = read_npy, .rewind = rewind_npy, .seek = seek_npy,
    .out_dtypes = 1u << SLEM_DTYPE_F2 | 1u << SLEM_DTYPE_I1, .begin = begin_npy,
    .header = header_npy, .write = write_npy, .end = end_npy, .close = close_npy};
