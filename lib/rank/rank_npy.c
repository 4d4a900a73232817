/* The npy rankings (rankings.h, npypair.h): FAISS's I(nq, k) int64 rows and D(nq, k)
 * float32 scores, in OUT.I.npy and OUT.D.npy (or a pair under its own names, x_I.npy and
 * x_D.npy, npypair.h's rule). Two files, committed together; read back by either name or
 * by OUT, never from a pipe (the rows are found by seeking), I int32 and D float64 too, as
 * numpy users save FAISS's. Queries are named by their row ("0", "1", ...), results by
 * their database row. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mergefast.h"
#include "mergefmt.h"
#include "rankfmt.h"
#include "npypair.h"

/* ---- writer ---- */

typedef struct NpyOut {
  SlemNpyPair *npy;
  uint64_t nq;
  SlemHit *hits;
  size_t cap;
} NpyOut;

static int wopen(SlemRankWriter *w, const char *path, SlemError *err) {
  NpyOut *o = calloc(1, sizeof *o);
  int st;
  if (!o) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_npypair_open(&o->npy, path, w->k, err)) != SLEM_OK) {
    free(o);
    return st;
  }
  w->state = o;
  return SLEM_OK;
}

static int write_hits(SlemRankWriter *w, uint64_t query, const SlemHit *hits, size_t n,
                      SlemError *err) {
  NpyOut *o = w->state;
  int st = slem_npypair_write(o->npy, query, hits, n, err);
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
  int st = slem_npypair_close(o->npy, err);
  wfree(w);
  return st;
}

static void wabort(SlemRankWriter *w) {
  NpyOut *o = w->state;
  if (o) slem_npypair_abort(o->npy);
  wfree(w);
}

/* ---- names ---- */

/* path names the pair by its name: it ends in ".npy" (OUT.npy, OUT.I.npy, x_D.npy, ...). */
static int named_npy(const char *path) {
  size_t len = strlen(path);
  return len > 4 && strcmp(path + len - 4, ".npy") == 0;
}

/* The pair's names by the one rule of npypair.h (the writer's). */
static int files(const char *path, char names[2][4096], size_t *n) {
  *n = 0;
  if (slem_npypair_names(path, names[0], names[1], 4096) != 0) return -1;
  *n = 2;
  return 0;
}

static int sniff_path(const char *path) {
  char names[2][4096];
  size_t n;
  struct stat sb;
  if (strcmp(path, "-") == 0) return 0;
  if (named_npy(path)) return 1;
  /* OUT: when OUT itself is not a file and OUT.I.npy is */
  return stat(path, &sb) != 0 && files(path, names, &n) == 0 && stat(names[0], &sb) == 0;
}

/* ---- reader ---- */

typedef struct NpyIn {
  FILE *fi, *fd;
  char iname[4096], dname[4096];
  uint64_t nq, q;
  size_t k;
  size_t isize, dsize; /* I int64 or int32 (8, 4), D float32 or float64 (4, 8) */
  unsigned char *iraw, *draw; /* a row as read */
  /* a file whose size says 0 but that holds bytes (/proc, FUSE) is read as a stream: its
   * size, which header() checks from a file's, is checked once its data are read */
  int istream, dstream;
} NpyIn;

/* The error of a file of nq x k values of item bytes that holds held bytes after its
 * header: the same whether its size was known at its header or counted at its end. */
static int size_error(const char *name, uint64_t nq, uint64_t k, size_t item, long long held,
                      SlemError *err) {
  return slem_error(err, SLEM_EFORMAT, "%s: %llu x %llu values of %zu bytes, but the file holds "
                    "%lld bytes after its header", name, (unsigned long long)nq,
                    (unsigned long long)k, item, held);
}

/* The dtypes a pair's file may have (FAISS writes I int64 and D float32; numpy users save
 * I as int32 and D as float64 too), and their item sizes. */
static const struct { const char *descr; size_t item; } idtypes[] = {{"<i8", 8}, {"<i4", 4}},
                                                      ddtypes[] = {{"<f4", 4}, {"<f8", 8}};

/* Reads the header of an npy file of one of two dtypes (I's: idtypes, D's: ddtypes; *item
 * gets its item size) and 2 dimensions into *nq, *k, checks the file's size (*stream: it
 * says 0 and the file holds bytes; checked at the end of its data instead, stream_sizes()),
 * and leaves fp at the data. */
static int header(FILE *fp, const char *name, int is_d, size_t *item_out, uint64_t *nq,
                  size_t *k, int *stream, SlemError *err) {
  unsigned char pre[12];
  char dict[4096], *p;
  size_t hlen, pos, item = 0;
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
  if ((p = strstr(dict, "'descr':"))) {
    p += 8 + strspn(p + 8, " ");
    for (size_t i = 0; i < 2 && !item; i++) {
      const char *descr = is_d ? ddtypes[i].descr : idtypes[i].descr;
      if (p[0] == '\'' && strncmp(p + 1, descr, 3) == 0 && p[4] == '\'')
        item = is_d ? ddtypes[i].item : idtypes[i].item;
    }
  }
  if (!item)
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need dtype %s", name,
                      is_d ? "<f4 or <f8 (D: the scores)" : "<i8 or <i4 (I: the database rows)");
  *item_out = item;
  if (!(p = strstr(dict, "'fortran_order':")) || strncmp(p + 16 + strspn(p + 16, " "), "False", 5) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need C order", name);
  if (!(p = strstr(dict, "'shape':")) || sscanf(p + 8, " (%llu , %llu )", &a, &b) != 2)
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need a matrix (queries, k)", name);
  /* no column: its rows hold no byte, so that a header of 10^15 rows would be read row after
   * row until memory ran out; no slem writer (nor FAISS) makes one */
  if (b == 0 && a > 0)
    return slem_error(err, SLEM_EFORMAT, "%s: npy rankings need at least one column (%llu x 0)",
                      name, a);
  if (b > (1u << 20) || (b > 0 && a > UINT64_MAX / b / item) || fstat(fileno(fp), &sb) != 0 ||
      !S_ISREG(sb.st_mode))
    return size_error(name, a, b, item, (long long)sb.st_size - (long long)(pos + hlen), err);
  /* its header read, the file holds bytes whatever its size says */
  *stream = sb.st_size == 0;
  if (!*stream && (uint64_t)sb.st_size != pos + hlen + a * b * item)
    return size_error(name, a, b, item, (long long)sb.st_size - (long long)(pos + hlen), err);
  *nq = a;
  *k = (size_t)b;
  return SLEM_OK;
}

/* The bytes left in fp, read through. */
static int rest_of(FILE *fp, const char *name, uint64_t *n, SlemError *err) {
  char buf[1 << 14];
  size_t r;
  *n = 0;
  while ((r = fread(buf, 1, sizeof buf, fp)) > 0) *n += r;
  if (ferror(fp)) return slem_error(err, SLEM_EIO, "%s: read: %s", name, strerror(errno));
  return SLEM_OK;
}

/* The sizes of the files read as streams, once the data of one ended or both were read:
 * igot and dgot bytes of data so far, the rest counted to the end. I's first, then D's,
 * with the message header() gives a file of a known size; SLEM_OK when both hold what
 * their headers say. */
static int stream_sizes(const NpyIn *in, uint64_t igot, uint64_t dgot, SlemError *err) {
  uint64_t rest;
  int st;
  if (in->istream) {
    if ((st = rest_of(in->fi, in->iname, &rest, err)) != SLEM_OK) return st;
    if (igot + rest != in->nq * in->k * in->isize)
      return size_error(in->iname, in->nq, in->k, in->isize, (long long)(igot + rest), err);
  }
  if (in->dstream) {
    if ((st = rest_of(in->fd, in->dname, &rest, err)) != SLEM_OK) return st;
    if (dgot + rest != in->nq * in->k * in->dsize)
      return size_error(in->dname, in->nq, in->k, in->dsize, (long long)(dgot + rest), err);
  }
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
  if ((st = header(in->fi, in->iname, 0, &in->isize, &in->nq, &in->k, &in->istream, err)) != SLEM_OK ||
      (st = header(in->fd, in->dname, 1, &in->dsize, &nqd, &kd, &in->dstream, err)) != SLEM_OK)
    return st;
  if (nqd != in->nq || kd != in->k)
    return slem_error(err, SLEM_EFORMAT, "%s: %" PRIu64 " x %zu, but %s is %" PRIu64 " x %zu: not "
                      "a pair", in->dname, nqd, kd, in->iname, in->nq, in->k);
  if (!(in->iraw = malloc((in->k ? in->k : 1) * in->isize)) ||
      !(in->draw = malloc((in->k ? in->k : 1) * in->dsize)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  return SLEM_OK;
}

/* Value j of the row as read: I's row (int64 or int32), D's score (float32 or float64). */
static int64_t irow_at(const NpyIn *in, size_t j) {
  if (in->isize == 4) {
    int32_t v;
    memcpy(&v, in->iraw + 4 * j, 4);
    return v;
  } else {
    int64_t v;
    memcpy(&v, in->iraw + 8 * j, 8);
    return v;
  }
}

static double drow_at(const NpyIn *in, size_t j) {
  if (in->dsize == 4) {
    float v;
    memcpy(&v, in->draw + 4 * j, 4);
    return v;
  } else {
    double v;
    memcpy(&v, in->draw + 8 * j, 8);
    return v;
  }
}

static int rnext(SlemRankReader *r, const SlemRankQuery **q, SlemError *err) {
  NpyIn *in = r->state;
  char qbuf[24], ibuf[24];
  size_t k = in->k, j;
  int st;
  size_t gi, gd;
  uint64_t done = in->q * k; /* values read before this row */
  *q = NULL;
  if (in->q == in->nq) {
    /* nothing after the data, as a file of a known size was checked at its header */
    if ((in->istream || in->dstream) &&
        (st = stream_sizes(in, done * in->isize, done * in->dsize, err)) != SLEM_OK)
      return st;
    in->istream = in->dstream = 0;
    if (in->nq == 0) return slem_error(err, SLEM_EFORMAT, "%s: no rankings (no rows)", r->name);
    return SLEM_OK;
  }
  gi = fread(in->iraw, 1, k * in->isize, in->fi);
  if (gi != k * in->isize && !ferror(in->fi) && in->istream &&
      (st = stream_sizes(in, done * in->isize + gi, done * in->dsize, err)) != SLEM_OK)
    return st;
  if (gi != k * in->isize)
    return slem_error(err, SLEM_EIO, "%s: read: %s", in->iname, ferror(in->fi) ? strerror(errno) : "cut short");
  gd = fread(in->draw, 1, k * in->dsize, in->fd);
  if (gd != k * in->dsize && !ferror(in->fd) && in->dstream &&
      (st = stream_sizes(in, (done + k) * in->isize, done * in->dsize + gd, err)) != SLEM_OK)
    return st;
  if (gd != k * in->dsize)
    return slem_error(err, SLEM_EIO, "%s: read: %s", in->dname, ferror(in->fd) ? strerror(errno) : "cut short");
  r->line = in->q + 1;
  snprintf(qbuf, sizeof qbuf, "%" PRIu64, in->q);
  if ((st = slem_rankreader_begin(r, qbuf, strlen(qbuf), r->line, err)) != SLEM_OK) return st;
  for (j = 0; j < k && irow_at(in, j) >= 0; j++) {
    double score = drow_at(in, j);
    if (!isfinite(score) || fabs(score) > FLT_MAX)
      return slem_error(err, SLEM_EFORMAT, "%s: row %" PRIu64 ", column %zu: score %g is not a "
                        "finite number%s", in->dname, in->q, j, score,
                        isfinite(score) ? " of float32 (slem's scores are float32)" : "");
    snprintf(ibuf, sizeof ibuf, "%" PRId64, irow_at(in, j));
    if ((st = slem_rankreader_add(r, ibuf, (long)(j + 1), score, NULL, irow_at(in, j), NULL,
                                  r->line, err)) != SLEM_OK)
      return st;
  }
  for (; j < k; j++) { /* the padding: after the results, all of it */
    int64_t row = irow_at(in, j);
    if (row != -1 || drow_at(in, j) != -FLT_MAX)
      return slem_error(err, SLEM_EFORMAT, "%s: row %" PRIu64 ", column %zu: %s", in->iname, in->q,
                        j, row < -1    ? "a negative row other than the padding -1"
                           : row >= 0 ? "a result after the padding (I -1, D -FLT_MAX)"
                           : drow_at(in, j) == FLT_MAX
                               ? "padding (I -1) with D +FLT_MAX, as FAISS pads L2 distances "
                                 "(IndexFlatL2, smallest first): slem's rankings are similarities, "
                                 "padded with -FLT_MAX"
                               : "padding (I -1) with a score other than -FLT_MAX");
  }
  in->q++;
  slem_rankreader_finish(r, q);
  return SLEM_OK;
}


static void rfree(SlemRankReader *r) {
  NpyIn *in = r->state;
  if (!in) return;
  if (in->fi) fclose(in->fi);
  if (in->fd) fclose(in->fd);
  free(in->iraw);
  free(in->draw);
  free(in);
  r->state = NULL;
}

/* ---- slem-merge's fast path (mergefmt.h): npy pairs, memory-mapped ---- */

/* A mapped npy file: its data after the header, as numpy and slem write it (version 1.0,
 * C order, the dtype descr, a matrix). */
typedef struct Npy {
  const unsigned char *base;
  size_t len;
  const void *data;
  uint64_t nq, k;
} Npy;

static int fast_map(Npy *x, const char *path, const char *descr, size_t item) {
  struct stat st;
  char dict[256], want[64];
  unsigned long long a, b;
  size_t hlen;
  int fd, used = 0;
  void *p;
  if ((fd = open(path, O_RDONLY)) < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 16) {
    close(fd);
    return -1;
  }
  p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return -1;
  x->base = p;
  x->len = (size_t)st.st_size;
  if (memcmp(x->base, "\x93NUMPY\x01\x00", 8) != 0) return -1;
  hlen = (size_t)x->base[8] | (size_t)x->base[9] << 8;
  if (hlen >= sizeof dict || 10 + hlen > x->len) return -1;
  memcpy(dict, x->base + 10, hlen);
  dict[hlen] = '\0';
  snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  if (strncmp(dict, want, strlen(want)) != 0 ||
      sscanf(dict + strlen(want), "%llu, %llu), }%n", &a, &b, &used) != 2 || !used)
    return -1;
  for (size_t i = strlen(want) + (size_t)used; i < hlen; i++)
    if (dict[i] != ' ' && !(dict[i] == '\n' && i == hlen - 1)) return -1;
  if (b == 0 || b > (1u << 20) || a > UINT64_MAX / b / item || x->len != 10 + hlen + a * b * item)
    return -1;
  if ((10 + hlen) % item != 0) return -1; /* numpy pads to 64: the values aligned */
  x->data = x->base + 10 + hlen;
  x->nq = a;
  x->k = b;
  return 0;
}

/* The pair's names when the reader would take path as an npy pair by its name (sniff_path()),
 * else -1. */
static int fast_names(const char *path, char names[2][4096]) {
  size_t n;
  return sniff_path(path) && files(path, names, &n) == 0 ? 0 : -1;
}

/* Merges npy pairs into an npy pair. */
static int fast_merge(const char *const *shards, size_t n, const char *output,
                     const SlemMergeOpts *opts, SlemMergeStats *stats, SlemError *err) {
  Npy *I = calloc(n, sizeof *I), *D = calloc(n, sizeof *D);
  size_t *at = calloc(n, sizeof *at), *len = calloc(n, sizeof *len), k = opts->k, nrows = 0;
  SlemFastRow *rows = NULL;
  SlemHit *hits = malloc(k * sizeof *hits);
  SlemNpyPair *out = NULL;
  SlemMergeStats z = {0, 0};
  int st = SLEM_MERGEFAST_DECLINED;
  uint64_t nq = 0, kk = 0;
  if (!I || !D || !at || !len || !hits) goto done;
  if (opts->format != SLEM_RANK_AUTO && opts->format != SLEM_RANK_NPY) goto done;
  for (size_t s = 0; s < n; s++) {
    char names[2][4096];
    if (fast_names(shards[s], names) != 0) goto done;
    if (fast_map(I + s, names[0], "<i8", 8) != 0 || fast_map(D + s, names[1], "<f4", 4) != 0)
      goto done;
    if (I[s].nq != D[s].nq || I[s].k != D[s].k || I[s].k < k || I[s].nq == 0) goto done;
    if (s == 0) nq = I[s].nq;
    if (I[s].nq != nq) goto done;
    kk = I[s].k;
  }
  (void)kk;
  if (slem_npypair_open(&out, output, k, err) != SLEM_OK) goto done;
  for (uint64_t q = 0; q < nq; q++) {
    uint32_t stamp = (uint32_t)q + 1;
    for (size_t s = 0; s < n; s++) {
      const int64_t *ir = (const int64_t *)I[s].data + q * I[s].k;
      const float *dr = (const float *)D[s].data + q * D[s].k;
      size_t j, w = I[s].k;
      for (j = 0; j < w && ir[j] >= 0; j++) {
        SlemFastRow *ri;
        uint64_t row = (uint64_t)ir[j];
        if (!isfinite(dr[j]) || row >= SLEM_FAST_MAXROWS) goto done;
        if (j && !(dr[j - 1] > dr[j] || (dr[j - 1] == dr[j] && ir[j - 1] < ir[j]))) goto done;
        if (row >= nrows) {
          size_t cap = nrows ? nrows : 1024;
          SlemFastRow *x;
          while (cap <= row) cap *= 2;
          if (!(x = slem_mergefast_grow(rows, nrows, cap, sizeof *x))) goto done;
          rows = x;
          nrows = cap;
        }
        ri = rows + row;
        if (ri->stamp == stamp || (ri->owner && ri->owner != (uint32_t)s + 1)) goto done;
        ri->stamp = stamp;
        ri->owner = (uint32_t)s + 1;
      }
      if (j < k) goto done; /* a short list: the general merge's checks */
      for (size_t t = j; t < w; t++)
        if (ir[t] != -1 || dr[t] != -FLT_MAX) goto done;
      len[s] = j;
      at[s] = 0;
    }
    for (size_t i = 0; i < k; i++) {
      size_t b = SIZE_MAX;
      for (size_t s = 0; s < n; s++) {
        const int64_t *ir = (const int64_t *)I[s].data + q * I[s].k;
        const float *dr = (const float *)D[s].data + q * D[s].k;
        if (at[s] < len[s] &&
            (b == SIZE_MAX || dr[at[s]] > hits[i].score ||
             (dr[at[s]] == hits[i].score && (uint64_t)ir[at[s]] < hits[i].row))) {
          b = s;
          hits[i].score = dr[at[s]];
          hits[i].row = (uint64_t)ir[at[s]];
        }
      }
      at[b]++;
    }
    if (slem_npypair_write(out, q, hits, k, err) != SLEM_OK) goto done;
    z.queries++;
    z.results += k;
    if (opts->progress && (z.queries & 255) == 0) opts->progress(opts->progress_ctx, z.queries);
  }
  st = slem_npypair_close(out, err);
  out = NULL;
  if (st == SLEM_OK && stats) *stats = z;
done:
  slem_npypair_abort(out);
  for (size_t s = 0; s < n && I && D; s++) {
    if (I[s].base) munmap((void *)I[s].base, I[s].len);
    if (D[s].base) munmap((void *)D[s].base, D[s].len);
  }
  free(I);
  free(D);
  free(at);
  free(len);
  free(rows);
  free(hits);
  return st;
}

static const SlemRankFastOps fast = {
    .merge = fast_merge,
};

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
    .place = slem_rankreader_place_rows,
    .fast = &fast,
};
