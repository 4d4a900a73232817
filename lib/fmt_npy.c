/* npy (numpy.save): versions 1-3, dtype <f4, <f8 or |u1, C order, 2-D (n, d) or 1-D (d,)
 * as one vector. Written as version 1.0, <f4, with a fixed 128-byte header so that the
 * count can be patched in place when the writer did not know it up front. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vecfmt.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int sniff_npy(const unsigned char *p, size_t n) {
  return n >= 6 && memcmp(p, npy_magic, 6) == 0 ? 100 : 0;
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
  if (strcmp(descr, "<f4") == 0) r->dtype = SLEM_DT_F4, r->esize = 4;
  else if (strcmp(descr, "<f8") == 0) r->dtype = SLEM_DT_F8, r->esize = 8;
  else if (strcmp(descr, "|u1") == 0 || strcmp(descr, "<u1") == 0 || strcmp(descr, "u1") == 0)
    r->dtype = SLEM_DT_U1, r->esize = 1;
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
  r->prefix = 0;
  r->count_from = "the shape";
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

#define NPY_HEADER_LEN 128

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

static int begin_npy(SlemVecWriter *w, SlemError *err) {
  if (!slem_out_seekable(w->out) && w->n_hint < 0)
    return slem_error(err, SLEM_EINVAL,
                      "%s: npy output to a pipe needs the vector count up front, and the "
                      "input does not tell it; write fvecs, or to a file", slem_out_name(w->out));
  if (npy_header(slem_out_file(w->out), w->n_hint < 0 ? 0 : (uint64_t)w->n_hint, w->d) != 0)
    return slem_error(err, SLEM_EIO, "%s: write failed", slem_out_name(w->out));
  return SLEM_OK;
}

static int write_npy(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  if (fwrite(x, 4 * w->d, n, fp) != n) return slem_vfmt_write_error(w, err);
  return SLEM_OK;
}

/* The header announced n_hint vectors: patch it when another count was written. */
static int end_npy(SlemVecWriter *w, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  if (w->n == (uint64_t)w->n_hint) return SLEM_OK;
  if (!slem_out_seekable(w->out))
    return slem_error(err, SLEM_EFORMAT, "%s: wrote %" PRIu64 " vectors, but the npy header "
                      "announced %" PRId64, slem_out_name(w->out), w->n, w->n_hint);
  if (fflush(fp) != 0 || fseek(fp, 0, SEEK_SET) != 0 || npy_header(fp, w->n, w->d) != 0)
    return slem_error(err, SLEM_EIO, "%s: rewriting the npy header: %s",
                      slem_out_name(w->out), strerror(errno));
  return SLEM_OK;
}

const SlemVecFormatDef slem_vfmt_npy = {
    .id = SLEM_FMT_NPY, .names = {"npy", NULL}, .sniff = sniff_npy, .open = open_npy,
    .begin = begin_npy, .write = write_npy, .end = end_npy};
