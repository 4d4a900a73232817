/* The npy rankings (rankings.h, ranknpy.h): FAISS's I(nq, k) int64 rows and D(nq, k)
 * float32 scores, in OUT.I.npy and OUT.D.npy. Two files, committed together; read back
 * by either name or by OUT, never from a pipe (the rows are found by seeking). Queries
 * are named by their row ("0", "1", ...), results by their database row. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rankfmt.h"
#include "ranknpy.h"

/* ---- writer ---- */

typedef struct NpyOut {
  SlemRankNpy *npy;
  uint64_t nq;
  SlemHit *hits;
  size_t cap;
} NpyOut;

static int wopen(SlemRankWriter *w, const char *path, SlemError *err) {
  NpyOut *o = calloc(1, sizeof *o);
  int st;
  if (!o) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_ranknpy_open(&o->npy, path, w->k, err)) != SLEM_OK) {
    free(o);
    return st;
  }
  w->state = o;
  return SLEM_OK;
}

static int write_hits(SlemRankWriter *w, uint64_t query, const SlemHit *hits, size_t n,
                      SlemError *err) {
  NpyOut *o = w->state;
  int st = slem_ranknpy_write(o->npy, query, hits, n, err);
  if (st == SLEM_OK) o->nq = query + 1;
  return st;
}

static int write_entries(SlemRankWriter *w, const char *qid, const SlemRankEntry *e, size_t n,
                         SlemError *err) {
  NpyOut *o = w->state;
  (void)qid; /* the queries are the rows, in order */
  if (n > o->cap) {
    SlemHit *h = realloc(o->hits, n * sizeof *h);
    if (!h) return slem_error(err, SLEM_ENOMEM, "out of memory");
    o->hits = h;
    o->cap = n;
  }
  for (size_t i = 0; i < n; i++) {
    if (e[i].row < 0)
      return slem_error(err, SLEM_EFORMAT, "line %" PRIu64 ": result '%s' has no database row: "
                        "npy rankings hold rows (give the database's ids, or write another "
                        "format)", e[i].line, e[i].id);
    o->hits[i].row = (uint64_t)e[i].row;
    o->hits[i].score = (float)e[i].score;
  }
  return write_hits(w, o->nq, o->hits, n, err);
}

static void wfree(SlemRankWriter *w) {
  NpyOut *o = w->state;
  if (!o) return;
  free(o->hits);
  free(o);
  w->state = NULL;
}

static int wclose(SlemRankWriter *w, SlemError *err) {
  NpyOut *o = w->state;
  int st = slem_ranknpy_close(o->npy, err);
  wfree(w);
  return st;
}

static void wabort(SlemRankWriter *w) {
  NpyOut *o = w->state;
  if (o) slem_ranknpy_abort(o->npy);
  wfree(w);
}

/* ---- names ---- */

/* The length of path without ".I.npy", ".D.npy" or ".npy". */
static size_t base_len(const char *path) {
  size_t len = strlen(path);
  if (len > 6 && (strcmp(path + len - 6, ".I.npy") == 0 || strcmp(path + len - 6, ".D.npy") == 0))
    return len - 6;
  if (len > 4 && strcmp(path + len - 4, ".npy") == 0) return len - 4;
  return len;
}

static int files(const char *path, char names[2][4096], size_t *n) {
  size_t len = base_len(path);
  *n = 0;
  if (len + 7 >= 4096) return -1;
  snprintf(names[0], 4096, "%.*s.I.npy", (int)len, path);
  snprintf(names[1], 4096, "%.*s.D.npy", (int)len, path);
  *n = 2;
  return 0;
}

static int sniff_path(const char *path) {
  char names[2][4096];
  size_t n;
  struct stat sb;
  if (strcmp(path, "-") == 0) return 0;
  if (base_len(path) != strlen(path)) return 1; /* named .npy */
  /* OUT: when OUT itself is not a file and OUT.I.npy is */
  return stat(path, &sb) != 0 && files(path, names, &n) == 0 && stat(names[0], &sb) == 0;
}

/* ---- reader ---- */

typedef struct NpyIn {
  FILE *fi, *fd;
  char iname[4096], dname[4096];
  uint64_t nq, q;
  size_t k;
  int64_t *irow;
  float *drow;
} NpyIn;

/* Reads the header of an npy file of dtype descr (its item size) and 2 dimensions into
 * *nq, *k, checks the file's size, and leaves fp at the data. */
static int header(FILE *fp, const char *name, const char *descr, size_t item, uint64_t *nq,
                  size_t *k, SlemError *err) {
  unsigned char pre[12];
  char dict[4096], *p;
  size_t hlen, pos;
  unsigned long long a, b;
  struct stat sb;
  if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: not an npy file", name);
  if (pre[6] == 1) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    pos = 10;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 10, 1, 2, fp) != 2)
      return slem_error(err, SLEM_EFORMAT, "%s: a truncated npy header", name);
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    pos = 12;
  } else {
    return slem_error(err, SLEM_EFORMAT, "%s: npy version %d.%d", name, pre[6], pre[7]);
  }
  if (hlen >= sizeof dict || fread(dict, 1, hlen, fp) != hlen)
    return slem_error(err, SLEM_EFORMAT, "%s: a bad npy header", name);
  dict[hlen] = '\0';
  p = strstr(dict, "'descr':");
  if (!p || strncmp(p + 8 + strspn(p + 8, " "), descr, strlen(descr)) != 0 ||
      p[8 + strspn(p + 8, " ") + strlen(descr)] != '\'')
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need dtype %.*s", name,
                      (int)strlen(descr) - 1, descr + 1);
  if (!(p = strstr(dict, "'fortran_order':")) || strncmp(p + 16 + strspn(p + 16, " "), "False", 5) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need C order", name);
  if (!(p = strstr(dict, "'shape':")) || sscanf(p + 8, " (%llu , %llu )", &a, &b) != 2)
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need a matrix (queries, k)", name);
  if (b > (1u << 20) || (b > 0 && a > UINT64_MAX / b / item) || fstat(fileno(fp), &sb) != 0 ||
      !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != pos + hlen + a * b * item)
    return slem_error(err, SLEM_EFORMAT, "%s: %llu x %llu values of %zu bytes, but the file holds "
                      "%lld bytes after its header", name, a, b, item,
                      (long long)sb.st_size - (long long)(pos + hlen));
  *nq = a;
  *k = (size_t)b;
  return SLEM_OK;
}

static int ropen(SlemRankReader *r, const char *path, SlemError *err) {
  NpyIn *in = calloc(1, sizeof *in);
  char names[2][4096];
  size_t n;
  uint64_t nqd;
  size_t kd;
  int st;
  if (!in) return slem_error(err, SLEM_ENOMEM, "out of memory");
  r->state = in;
  if (strcmp(path, "-") == 0)
    return slem_error(err, SLEM_EINVAL, "npy rankings are two files (OUT.I.npy and OUT.D.npy): "
                      "they cannot come from stdin or a pipe; give OUT.I.npy");
  if (files(path, names, &n) != 0) return slem_error(err, SLEM_EINVAL, "%s: name too long", path);
  memcpy(in->iname, names[0], sizeof in->iname);
  memcpy(in->dname, names[1], sizeof in->dname);
  if (!(r->name = strdup(in->iname))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (!(in->fi = fopen(in->iname, "rb")))
    return slem_error(err, SLEM_EIO, "%s: %s", in->iname, strerror(errno));
  if (!(in->fd = fopen(in->dname, "rb")))
    return slem_error(err, SLEM_EIO, "%s: %s (npy rankings are a pair: I and D)", in->dname,
                      strerror(errno));
  if ((st = header(in->fi, in->iname, "'<i8", 8, &in->nq, &in->k, err)) != SLEM_OK ||
      (st = header(in->fd, in->dname, "'<f4", 4, &nqd, &kd, err)) != SLEM_OK)
    return st;
  if (nqd != in->nq || kd != in->k)
    return slem_error(err, SLEM_EFORMAT, "%s: %" PRIu64 " x %zu, but %s is %" PRIu64 " x %zu: not "
                      "a pair", in->dname, nqd, kd, in->iname, in->nq, in->k);
  if (!(in->irow = malloc((in->k ? in->k : 1) * sizeof *in->irow)) ||
      !(in->drow = malloc((in->k ? in->k : 1) * sizeof *in->drow)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  return SLEM_OK;
}

static int rnext(SlemRankReader *r, const SlemRankQuery **q, SlemError *err) {
  NpyIn *in = r->state;
  char qbuf[24], ibuf[24];
  size_t k = in->k, j;
  int st;
  *q = NULL;
  if (in->q == in->nq) {
    if (in->nq == 0) return slem_error(err, SLEM_EFORMAT, "%s: no rankings (no rows)", r->name);
    return SLEM_OK;
  }
  if (fread(in->irow, sizeof *in->irow, k, in->fi) != k)
    return slem_error(err, SLEM_EIO, "%s: read: %s", in->iname, ferror(in->fi) ? strerror(errno) : "cut short");
  if (fread(in->drow, sizeof *in->drow, k, in->fd) != k)
    return slem_error(err, SLEM_EIO, "%s: read: %s", in->dname, ferror(in->fd) ? strerror(errno) : "cut short");
  r->line = in->q + 1;
  snprintf(qbuf, sizeof qbuf, "%" PRIu64, in->q);
  if ((st = slem_rankreader_begin(r, qbuf, strlen(qbuf), r->line, err)) != SLEM_OK) return st;
  for (j = 0; j < k && in->irow[j] >= 0; j++) {
    if (!isfinite(in->drow[j]))
      return slem_error(err, SLEM_EFORMAT, "%s: row %" PRIu64 ", column %zu: score %g is not a "
                        "finite number", in->dname, in->q, j, (double)in->drow[j]);
    snprintf(ibuf, sizeof ibuf, "%" PRId64, in->irow[j]);
    if ((st = slem_rankreader_add(r, ibuf, (long)(j + 1), in->drow[j], NULL, in->irow[j], NULL,
                                  r->line, err)) != SLEM_OK)
      return st;
  }
  for (; j < k; j++) /* the padding: after the results, all of it */
    if (in->irow[j] != -1 || in->drow[j] != -FLT_MAX)
      return slem_error(err, SLEM_EFORMAT, "%s: row %" PRIu64 ", column %zu: %s", in->iname, in->q,
                        j, in->irow[j] < -1    ? "a negative row other than the padding -1"
                           : in->irow[j] >= 0 ? "a result after the padding (I -1, D -FLT_MAX)"
                                              : "padding (I -1) with a score other than -FLT_MAX");
  in->q++;
  slem_rankreader_finish(r, q);
  return SLEM_OK;
}

static void rfree(SlemRankReader *r) {
  NpyIn *in = r->state;
  if (!in) return;
  if (in->fi) fclose(in->fi);
  if (in->fd) fclose(in->fd);
  free(in->irow);
  free(in->drow);
  free(in);
  r->state = NULL;
}

const SlemRankFormatOps slem_rank_npy = {
    .name = "npy",
    .extension = ".npy",
    .sniff_path = sniff_path,
    .files = files,
    .open = wopen,
    .write_hits = write_hits,
    .write_entries = write_entries,
    .close = wclose,
    .abort = wabort,
    .ropen = ropen,
    .rnext = rnext,
    .rfree = rfree,
};
