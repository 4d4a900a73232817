#define _POSIX_C_SOURCE 200809L
#include "mergefast.h"

#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "io.h"
#include "ranknpy.h"
#include "rankings.h"
#include "strmap.h"

#define NO SLEM_MERGEFAST_DECLINED
#define MAXTOK 4096            /* longest query or id taken */
#define MAXROWS (1u << 27)     /* rows beyond: the general merge */
#define OUTBUF (4u << 20)

/* One result, its strings inside the map. */
typedef struct Res {
  float score;
  uint32_t row;
  const char *id, *st;  /* the id; the score's text */
  uint16_t idlen, stlen;
  int canon;            /* st is the %.9g of score */
} Res;

typedef struct FShard {
  const char *base, *p, *end;
  uint64_t lo, hi;      /* the rows it may return */
  size_t len;
  Res *r;
  size_t n, cap;
  size_t at;            /* the merge's head */
} FShard;

typedef struct RowInfo {
  uint32_t owner;       /* shard + 1; 0: not seen */
  uint32_t stamp;       /* the query (+ 1) that last listed it */
  const char *id;       /* jsonl: its id, in the map */
  uint32_t idlen;
  char idb[20];         /* and a copy when it fits: the first place it was read is far
                           away in the map by the time the row comes again */
} RowInfo;

typedef struct Fast {
  FShard *s;
  size_t n;
  int jsonl;
  RowInfo *rows;
  size_t nrows;
  SlemStrMap *ids;      /* jsonl: ids seen, for their being one per row */
  uint32_t query;       /* queries done + 1 */
} Fast;

static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A byte of a query or id the fast path takes: printable, not one JSON escapes, no space
 * (a tsv shard's layout test), no tab. */
static int plain(unsigned char c) { return c > 0x20 && c < 0x7f && c != '"' && c != '\\'; }

static int plain_all(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!plain((unsigned char)s[i])) return 0;
  return 1;
}

/* memcmp for the short strings of a line, inlined: libc's call was a fifth of the time. */
static inline int same(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* A whole number as slem writes it (no sign, no leading zero) below 2^31. */
static int parse_u31(const char *s, size_t n, uint32_t *v) {
  uint64_t x = 0;
  if (n == 0 || n > 10 || (s[0] == '0' && n > 1)) return -1;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    x = x * 10 + (uint64_t)(s[i] - '0');
  }
  if (x > 0x7fffffffu) return -1;
  *v = (uint32_t)x;
  return 0;
}

/* The %.9g text of sign, the 9 digits d9 (100000000..999999999) and the exponent x of the
 * leading digit: what slem_fmt_g9() prints for them. Returns the length. */
static size_t g9_text(char *out, int neg, uint32_t d9, int x) {
  char s[9], *p = out;
  int ns = 9;
  for (int i = 8; i >= 0; i--) {
    s[i] = (char)('0' + d9 % 10);
    d9 /= 10;
  }
  while (ns > 1 && s[ns - 1] == '0') ns--;
  if (neg) *p++ = '-';
  if (x < -4 || x >= 9) {
    int ax = x < 0 ? -x : x;
    *p++ = s[0];
    if (ns > 1) {
      *p++ = '.';
      memcpy(p, s + 1, (size_t)ns - 1);
      p += ns - 1;
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    if (ax >= 100) *p++ = (char)('0' + ax / 100);
    *p++ = (char)('0' + ax / 10 % 10);
    *p++ = (char)('0' + ax % 10);
  } else if (x >= 0) {
    for (int i = 0; i <= x; i++) *p++ = i < ns ? s[i] : '0';
    if (ns > x + 1) {
      *p++ = '.';
      memcpy(p, s + x + 1, (size_t)(ns - x - 1));
      p += ns - x - 1;
    }
  } else {
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -x - 1; i++) *p++ = '0';
    memcpy(p, s, (size_t)ns);
    p += ns;
  }
  return (size_t)(p - out);
}

/* The score text s[0..n): *f = (float)strtod(s) and *canon = whether s is the %.9g of *f.
 * The value is exact by Clinger's fast path (at most 19 digits, a power of ten of at most
 * 22: one correctly rounded operation, as strtod's); the text is the %.9g of *f when it is
 * canonical for its 9 digits and *f, scaled by the same power of ten, is within half a
 * unit of them by a margin far above the scaling's error; near the half, slem_fmt_g9()
 * decides. Returns -1 for a text it does not take (no number, inf, too many digits). */
static int parse_score(const char *s, size_t n, float *f, int *canon) {
  const char *p = s, *e = s + n;
  int neg = 0, nd = 0, x = 0, seen = 0, dot = 0, ex = 0;
  uint64_t d = 0;
  double v;
  if (n == 0 || n > 40) return -1;
  if (*p == '-') neg = 1, p++;
  if (p == e) return -1;
  /* digits: d holds the significant ones, x the exponent of the leading one */
  for (int intpart = 1; p < e; p++) {
    if (*p == '.') {
      if (dot) return -1;
      dot = 1;
      intpart = 0;
      continue;
    }
    if (*p < '0' || *p > '9') break;
    seen = 1;
    if (!nd && *p == '0') {
      if (!intpart) x--;
      continue;
    }
    if (nd == 19) return -1;
    if (!nd) x = intpart ? 0 : x - 1;
    else if (intpart) x++;
    d = d * 10 + (uint64_t)(*p - '0');
    nd++;
  }
  if (!seen) return -1;
  if (p < e) {
    int es = 1, ev = 0, ed = 0;
    if (*p != 'e' && *p != 'E') return -1;
    if (++p < e && (*p == '+' || *p == '-')) es = *p++ == '-' ? -1 : 1;
    for (; p < e && *p >= '0' && *p <= '9' && ed < 5; p++, ed++) ev = ev * 10 + (*p - '0');
    if (!ed || p != e) return -1;
    ex = es * ev;
  }
  if (!nd) { /* zero: "0" or "-0" */
    *f = neg ? -0.0f : 0.0f;
    *canon = n == (size_t)(neg + 1) && s[neg] == '0';
    return 0;
  }
  x += ex;
  {
    int p10e = x - (nd - 1); /* value = d 10^p10e */
    if (p10e > 22 || p10e < -22 || d > (1ull << 53)) return -1;
    v = p10e >= 0 ? (double)d * p10[p10e] : (double)d / p10[-p10e];
  }
  *f = (float)(neg ? -v : v);
  if (!(*f == *f) || *f - *f != 0) return -1; /* overflowed to inf */
  *canon = 0;
  if (nd <= 9 && 8 - x >= -22 && 8 - x <= 22) {
    uint32_t d9 = (uint32_t)d;
    char buf[SLEM_FMT_G9_MAX];
    double a = neg ? -(double)*f : (double)*f, y, dev;
    for (int i = nd; i < 9; i++) d9 *= 10;
    y = 8 - x >= 0 ? a * p10[8 - x] : a / p10[x - 8];
    dev = y - (double)d9;
    if (g9_text(buf, neg, d9, x) != n || !same(buf, s, n)) {
      *canon = 0; /* not canonical: no float prints so */
      return 0;
    }
    if (d9 > 100000000u && dev > -0.4999 && dev < 0.4999) {
      *canon = 1;
      return 0;
    }
    if (dev < -0.5001 || dev > 0.5001) return 0;
  }
  {
    char buf[SLEM_FMT_G9_MAX];
    size_t l = (size_t)slem_fmt_g9(buf, *f);
    *canon = l == n && memcmp(buf, s, n) == 0;
  }
  return 0;
}

static int push(FShard *sh, Res **r) {
  if (sh->n == sh->cap) {
    size_t cap = sh->cap ? 2 * sh->cap : 256;
    Res *x = realloc(sh->r, cap * sizeof *x);
    if (!x) return -1;
    sh->r = x;
    sh->cap = cap;
  }
  *r = sh->r + sh->n++;
  return 0;
}

/* The row's record, growing the table; NULL beyond MAXROWS or out of memory. */
static RowInfo *row_info(Fast *m, uint32_t row) {
  if (row >= m->nrows) {
    size_t cap = m->nrows ? m->nrows : 1024;
    RowInfo *x;
    if (row >= MAXROWS) return NULL;
    while (cap <= row) cap *= 2;
    if (!(x = realloc(m->rows, cap * sizeof *x))) return NULL;
    memset(x + m->nrows, 0, (cap - m->nrows) * sizeof *x);
    m->rows = x;
    m->nrows = cap;
  }
  return m->rows + row;
}

/* Checks result r of shard s against the others of its query and the earlier ones. */
static int take(Fast *m, size_t s, const Res *r) {
  RowInfo *ri = row_info(m, r->row);
  if (r->row < m->s[s].lo || r->row >= m->s[s].hi) return -1;
  if (!ri || ri->stamp == m->query) return -1;
  ri->stamp = m->query;
  if (ri->owner == 0) {
    ri->owner = (uint32_t)s + 1;
    if (m->jsonl) {
      long before = (long)slem_strmap_count(m->ids), at = slem_strmap_intern(m->ids, r->id, r->idlen);
      if (at != before) return -1; /* the id of another row, or out of memory */
      ri->id = r->id;
      ri->idlen = r->idlen;
      if (r->idlen <= sizeof ri->idb) memcpy(ri->idb, r->id, r->idlen);
    }
  } else if (ri->owner != (uint32_t)s + 1) {
    return -1;
  } else if (m->jsonl &&
             (ri->idlen != r->idlen ||
              !same(r->idlen <= sizeof ri->idb ? ri->idb : ri->id, r->id, r->idlen))) {
    return -1;
  }
  return 0;
}

/* The order of topk.h: a before b. */
static int before(const Res *a, const Res *b) {
  return a->score > b->score || (a->score == b->score && a->row < b->row);
}

/* Reads shard s's next query (tsv: its lines) into sh->r; *q, *ql: its name, which must be
 * q0 when q0 is given. Returns 1 at the end of the file, 0 with a query, -1 to give up. */
static int read_tsv(Fast *m, size_t s, const char **q, size_t *ql, const char *q0, size_t ql0) {
  FShard *sh = m->s + s;
  sh->n = 0;
  if (sh->p == sh->end) return 1;
  for (;;) {
    const char *l = sh->p, *nl, *t1, *t2, *t3;
    Res *r;
    uint32_t rank;
    if (l == sh->end) break;
    nl = memchr(l, '\n', (size_t)(sh->end - l));
    if (!nl || !(t1 = memchr(l, '\t', (size_t)(nl - l)))) return -1;
    if (sh->n == 0) {
      *q = l;
      *ql = (size_t)(t1 - l);
      if (*ql == 0 || *ql > MAXTOK || !plain_all(l, *ql)) return -1;
      if (q0 && (*ql != ql0 || !same(l, q0, ql0))) return -1;
    } else if ((size_t)(t1 - l) != *ql || !same(l, *q, *ql)) {
      break;
    }
    if (!(t2 = memchr(t1 + 1, '\t', (size_t)(nl - t1 - 1))) ||
        !(t3 = memchr(t2 + 1, '\t', (size_t)(nl - t2 - 1))))
      return -1;
    if (push(sh, &r) != 0) return -1;
    if (parse_u31(t1 + 1, (size_t)(t2 - t1 - 1), &rank) != 0 || rank != sh->n) return -1;
    r->id = t2 + 1;
    r->idlen = (uint16_t)(t3 - t2 - 1);
    if (parse_u31(r->id, r->idlen, &r->row) != 0) return -1;
    r->st = t3 + 1;
    r->stlen = (uint16_t)(nl - t3 - 1);
    if (parse_score(r->st, r->stlen, &r->score, &r->canon) != 0 || !r->canon) return -1;
    if (sh->n > 1 && !before(r - 1, r)) return -1;
    if (take(m, s, r) != 0) return -1;
    sh->p = nl + 1;
  }
  return 0;
}

/* Matches the literal lit at *p (before end). */
static inline int lit(const char **p, const char *end, const char *lit, size_t n) {
  if ((size_t)(end - *p) < n || !same(*p, lit, n)) return -1;
  *p += n;
  return 0;
}
#define LIT(p, end, s) lit(p, end, s, sizeof s - 1)

/* The same for a jsonl line: {"query":"Q","results":[{"rank":1,"id":"D","row":R,"score":S},
 * ...]} as slem's writer prints it. */
static int read_jsonl(Fast *m, size_t s, const char **q, size_t *ql, const char *q0, size_t ql0) {
  FShard *sh = m->s + s;
  const char *p = sh->p, *nl, *t;
  sh->n = 0;
  if (p == sh->end) return 1;
  if (!(nl = memchr(p, '\n', (size_t)(sh->end - p)))) return -1;
  if (LIT(&p, nl, "{\"query\":\"") != 0 || !(t = memchr(p, '"', (size_t)(nl - p)))) return -1;
  *q = p;
  *ql = (size_t)(t - p);
  if (*ql == 0 || *ql > MAXTOK || !plain_all(p, *ql)) return -1;
  if (q0 && (*ql != ql0 || !same(p, q0, ql0))) return -1;
  p = t;
  if (LIT(&p, nl, "\",\"results\":[") != 0) return -1;
  for (;;) {
    Res *r;
    uint32_t rank;
    if (LIT(&p, nl, "{\"rank\":") != 0 || !(t = memchr(p, ',', (size_t)(nl - p)))) return -1;
    if (push(sh, &r) != 0) return -1;
    if (parse_u31(p, (size_t)(t - p), &rank) != 0 || rank != sh->n) return -1;
    p = t;
    if (LIT(&p, nl, ",\"id\":\"") != 0 || !(t = memchr(p, '"', (size_t)(nl - p)))) return -1;
    r->id = p;
    if ((size_t)(t - p) > MAXTOK || t == p || !plain_all(p, (size_t)(t - p))) return -1;
    r->idlen = (uint16_t)(t - p);
    p = t;
    if (LIT(&p, nl, "\",\"row\":") != 0 || !(t = memchr(p, ',', (size_t)(nl - p)))) return -1;
    if (parse_u31(p, (size_t)(t - p), &r->row) != 0) return -1;
    p = t;
    if (LIT(&p, nl, ",\"score\":") != 0 || !(t = memchr(p, '}', (size_t)(nl - p)))) return -1;
    r->st = p;
    r->stlen = (uint16_t)(t - p);
    if (parse_score(r->st, r->stlen, &r->score, &r->canon) != 0 || !r->canon) return -1;
    if (sh->n > 1 && !before(r - 1, r)) return -1;
    if (take(m, s, r) != 0) return -1;
    p = t + 1;
    if (p < nl && *p == ',') {
      p++;
      continue;
    }
    break;
  }
  if (LIT(&p, nl, "]}") != 0 || p != nl) return -1;
  sh->p = nl + 1;
  return 0;
}

/* Appends the decimal of v. */
static char *put_u32(char *p, uint32_t v) {
  char t[10];
  int n = 0;
  do t[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) *p++ = t[--n];
  return p;
}

/* The score's text for the output: the shard's, which is its %.9g. */
static char *put_score(char *p, const Res *r) {
  memcpy(p, r->st, r->stlen);
  return p + r->stlen;
}

/* Writes out the buffer when it has no room left for one more result. */
static int flush(SlemOut *out, char *buf, char **o) {
  size_t len = (size_t)(*o - buf);
  if (OUTBUF - len >= 2 * MAXTOK + 256) return 0;
  if (fwrite(buf, 1, len, slem_out_file(out)) != len) return -1;
  *o = buf;
  return 0;
}

static void unmap(Fast *m) {
  for (size_t s = 0; s < m->n; s++) {
    if (m->s[s].base) munmap((void *)m->s[s].base, m->s[s].len);
    free(m->s[s].r);
  }
  free(m->s);
  free(m->rows);
  slem_strmap_free(m->ids);
}

/* Maps path when it is a regular, non-empty file ending in a newline, that no npy rule of
 * the reader claims. */
static int map_shard(FShard *sh, const char *path) {
  struct stat st;
  char buf[4096];
  size_t l = strlen(path);
  int fd;
  void *p;
  if (strcmp(path, "-") == 0 || (l >= 4 && strcmp(path + l - 4, ".npy") == 0)) return -1;
  if (l + 7 >= sizeof buf) return -1;
  memcpy(buf, path, l);
  memcpy(buf + l, ".I.npy", 7);
  if (access(buf, F_OK) == 0) return -1;
  if ((fd = open(path, O_RDONLY)) < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    close(fd);
    return -1;
  }
  p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return -1;
  sh->base = sh->p = p;
  sh->len = (size_t)st.st_size;
  sh->end = sh->base + sh->len;
  posix_madvise(p, sh->len, POSIX_MADV_SEQUENTIAL);
  if (sh->end[-1] != '\n') return -1;
  return 0;
}

/* ---- npy pairs ---- */

/* A mapped npy file: its data after the header, as numpy and slem write it (version 1.0,
 * C order, the dtype descr, a matrix). */
typedef struct Npy {
  const unsigned char *base;
  size_t len;
  const void *data;
  uint64_t nq, k;
} Npy;

static int npy_map(Npy *x, const char *path, const char *descr, size_t item) {
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

/* The length of path without ".I.npy", ".D.npy" or ".npy" (rank_npy.c's rule); -1 when
 * the reader would not take path as an npy pair by its name. */
static long npy_base(const char *path) {
  size_t len = strlen(path);
  struct stat sb;
  char buf[4096];
  if (len > 6 && (strcmp(path + len - 6, ".I.npy") == 0 || strcmp(path + len - 6, ".D.npy") == 0))
    return (long)len - 6;
  if (len > 4 && strcmp(path + len - 4, ".npy") == 0) return (long)len - 4;
  if (len + 7 >= sizeof buf || strcmp(path, "-") == 0 || stat(path, &sb) == 0) return -1;
  snprintf(buf, sizeof buf, "%s.I.npy", path);
  return stat(buf, &sb) == 0 ? (long)len : -1;
}

/* Merges npy pairs into an npy pair. */
static int merge_npy(const char *const *shards, size_t n, const char *output,
                     const SlemMergeOpts *opts, SlemMergeStats *stats, SlemError *err) {
  Npy *I = calloc(n, sizeof *I), *D = calloc(n, sizeof *D);
  size_t *at = calloc(n, sizeof *at), *len = calloc(n, sizeof *len), k = opts->k, nrows = 0;
  RowInfo *rows = NULL;
  SlemHit *hits = malloc(k * sizeof *hits);
  SlemRankNpy *out = NULL;
  SlemMergeStats z = {0, 0};
  int st = NO;
  uint64_t nq = 0, kk = 0;
  if (!I || !D || !at || !len || !hits) goto done;
  if (opts->format != SLEM_RANK_AUTO && opts->format != SLEM_RANK_NPY) goto done;
  for (size_t s = 0; s < n; s++) {
    char in[4096], dn[4096];
    long b = npy_base(shards[s]);
    if (b < 0 || (size_t)b + 7 >= sizeof in) goto done;
    snprintf(in, sizeof in, "%.*s.I.npy", (int)b, shards[s]);
    snprintf(dn, sizeof dn, "%.*s.D.npy", (int)b, shards[s]);
    if (npy_map(I + s, in, "<i8", 8) != 0 || npy_map(D + s, dn, "<f4", 4) != 0) goto done;
    if (I[s].nq != D[s].nq || I[s].k != D[s].k || I[s].k < k || I[s].nq == 0) goto done;
    if (s == 0) nq = I[s].nq;
    if (I[s].nq != nq) goto done;
    kk = I[s].k;
  }
  (void)kk;
  if (slem_ranknpy_open(&out, output, k, err) != SLEM_OK) goto done;
  for (uint64_t q = 0; q < nq; q++) {
    uint32_t stamp = (uint32_t)q + 1;
    for (size_t s = 0; s < n; s++) {
      const int64_t *ir = (const int64_t *)I[s].data + q * I[s].k;
      const float *dr = (const float *)D[s].data + q * D[s].k;
      size_t j, w = I[s].k;
      for (j = 0; j < w && ir[j] >= 0; j++) {
        RowInfo *ri;
        uint64_t row = (uint64_t)ir[j];
        if (!isfinite(dr[j]) || row >= MAXROWS) goto done;
        if (j && !(dr[j - 1] > dr[j] || (dr[j - 1] == dr[j] && ir[j - 1] < ir[j]))) goto done;
        if (row >= nrows) {
          size_t cap = nrows ? nrows : 1024;
          RowInfo *x;
          while (cap <= row) cap *= 2;
          if (!(x = realloc(rows, cap * sizeof *x))) goto done;
          memset(x + nrows, 0, (cap - nrows) * sizeof *x);
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
    if (slem_ranknpy_write(out, q, hits, k, err) != SLEM_OK) goto done;
    z.queries++;
    z.results += k;
    if (opts->progress && (z.queries & 255) == 0) opts->progress(opts->progress_ctx, z.queries);
  }
  st = slem_ranknpy_close(out, err);
  out = NULL;
  if (st == SLEM_OK && stats) *stats = z;
done:
  slem_ranknpy_abort(out);
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

int slem_mergefast(const char *const *shards, size_t n, const char *output,
                   const SlemMergeOpts *opts, const SlemMergeFastShard *info, SlemMergeStats *stats, SlemError *err) {
  Fast m = {0};
  SlemOut *out = NULL;
  SlemStrMap *qseen = NULL;
  SlemRankFormat fmt = opts->format;
  char *buf = NULL, *o;
  int (*next)(Fast *, size_t, const char **, size_t *, const char *, size_t);
  int st = NO;
  size_t k = opts->k;
  struct stat os;
  SlemMergeStats z = {0, 0};
  if (opts->db_ids || !output || strcmp(output, "-") == 0 || n == 0 || k == 0) return NO;
  if (stat(output, &os) == 0 && !S_ISREG(os.st_mode)) return NO;
  if (npy_base(shards[0]) >= 0)
    return info ? NO : merge_npy(shards, n, output, opts, stats, err);
  if (!(m.s = calloc(n, sizeof *m.s))) return NO;
  m.n = n;
  for (size_t s = 0; s < n; s++) {
    FShard *sh = m.s + s;
    if (map_shard(sh, shards[s]) != 0) goto done;
    sh->hi = UINT64_MAX;
    if (info && info[s].lines) {
      /* the first line and the end line, which slem_merge() checked */
      static const char head[] = "{\"slem_shard\":", tail[] = "{\"slem_shard_end\":";
      const char *nl = memchr(sh->p, '\n', sh->len), *last = sh->end - 1;
      while (last > sh->base && last[-1] != '\n') last--;
      if (sh->len < sizeof head || !same(sh->p, head, sizeof head - 1) || nl + 1 > last ||
          (size_t)(sh->end - last) < sizeof tail || !same(last, tail, sizeof tail - 1))
        goto done;
      sh->p = nl + 1;
      sh->end = last;
      sh->lo = info[s].lo;
      sh->hi = info[s].hi;
    }
  }
  m.jsonl = m.s[0].p[0] == '{';
  for (size_t s = 0; s < n; s++) {
    const char *b = m.s[s].p, *nl = memchr(b, '\n', (size_t)(m.s[s].end - b));
    if (!nl) goto done;
    if ((b[0] == '{') != m.jsonl) goto done;
    if (!m.jsonl && (!memchr(b, '\t', (size_t)(nl - b)) || memchr(b, ' ', (size_t)(nl - b))))
      goto done;
  }
  if (fmt == SLEM_RANK_AUTO) fmt = m.jsonl ? SLEM_RANK_JSONL : SLEM_RANK_TSV;
  if (fmt != SLEM_RANK_TSV && fmt != SLEM_RANK_JSONL) goto done;
  next = m.jsonl ? read_jsonl : read_tsv;
  if ((m.jsonl && !(m.ids = slem_strmap_new())) || !(qseen = slem_strmap_new()) ||
      !(buf = malloc(OUTBUF)))
    goto done;
  if (slem_out_open(&out, output, err) != SLEM_OK) goto done;
  o = buf;
  for (;;) {
    const char *q = NULL, *qi;
    size_t ql = 0, qli;
    long before_n = (long)slem_strmap_count(qseen);
    int r;
    m.query++;
    r = next(&m, 0, &q, &ql, NULL, 0);
    if (r < 0) goto done;
    if (r == 1) {
      for (size_t s = 1; s < n; s++)
        if (m.s[s].p != m.s[s].end) goto done;
      break;
    }
    if (slem_strmap_intern(qseen, q, ql) != before_n || m.s[0].n < k) goto done;
    for (size_t s = 1; s < n; s++)
      if (next(&m, s, &qi, &qli, q, ql) != 0 || m.s[s].n < k) goto done;
    /* the best k of the n sorted lists */
    if (flush(out, buf, &o) != 0) goto done;
    for (size_t s = 0; s < n; s++) m.s[s].at = 0;
    if (fmt == SLEM_RANK_JSONL) {
      memcpy(o, "{\"query\":\"", 10);
      memcpy(o + 10, q, ql);
      o += 10 + ql;
      memcpy(o, "\",\"results\":[", 13);
      o += 13;
    }
    for (size_t i = 0; i < k; i++) {
      size_t b = SIZE_MAX;
      const Res *h;
      for (size_t s = 0; s < n; s++)
        if (m.s[s].at < m.s[s].n &&
            (b == SIZE_MAX || before(m.s[s].r + m.s[s].at, m.s[b].r + m.s[b].at)))
          b = s;
      h = m.s[b].r + m.s[b].at++;
      if (flush(out, buf, &o) != 0) goto done;
      if (fmt == SLEM_RANK_TSV) {
        memcpy(o, q, ql);
        o += ql;
        *o++ = '\t';
        o = put_u32(o, (uint32_t)i + 1);
        *o++ = '\t';
        memcpy(o, h->id, h->idlen);
        o += h->idlen;
        *o++ = '\t';
        o = put_score(o, h);
        *o++ = '\n';
      } else {
        if (i) *o++ = ',';
        memcpy(o, "{\"rank\":", 8);
        o = put_u32(o + 8, (uint32_t)i + 1);
        memcpy(o, ",\"id\":\"", 7);
        memcpy(o + 7, h->id, h->idlen);
        o += 7 + h->idlen;
        memcpy(o, "\",\"row\":", 8);
        o = put_u32(o + 8, h->row);
        memcpy(o, ",\"score\":", 9);
        o = put_score(o + 9, h);
        *o++ = '}';
      }
    }
    if (fmt == SLEM_RANK_JSONL) {
      memcpy(o, "]}\n", 3);
      o += 3;
    }
    z.queries++;
    z.results += k;
    if (opts->progress && (z.queries & 255) == 0) opts->progress(opts->progress_ctx, z.queries);
  }
  if (z.queries == 0) goto done;
  {
    size_t len = (size_t)(o - buf);
    if (fwrite(buf, 1, len, slem_out_file(out)) != len) goto done;
  }
  st = slem_out_commit(out, err);
  out = NULL;
  if (st == SLEM_OK && stats) *stats = z;
done:
  slem_out_abort(out);
  free(buf);
  slem_strmap_free(qseen);
  unmap(&m);
  return st;
}
