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
#include "mergefmt.h"
#include "rankfmt.h"
#include "rankings.h"
#include "strmap.h"

#define NO SLEM_MERGEFAST_DECLINED
#define MAXTOK SLEM_FAST_MAXTOK
#define MAXROWS SLEM_FAST_MAXROWS
#define OUTBUF (4u << 20)
#define PER (2 * MAXTOK + 256) /* the most one result takes in the output */

typedef SlemFastRes Res;
typedef SlemFastShard FShard;
typedef SlemFast Fast;


static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A whole number as slem writes it (no sign, no leading zero) below 2^31. */
int slem_mergefast_u31(const char *s, size_t n, uint32_t *v) {
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
  p += slem_fmt_g9_layout(p, s, ns, x);
  return (size_t)(p - out);
}

/* The score text s[0..n): *f = (float)strtod(s) and *canon = whether s is the %.9g of *f.
 * The value is exact by Clinger's fast path (at most 19 digits, a power of ten of at most
 * 22: one correctly rounded operation, as strtod's); the text is the %.9g of *f when it is
 * canonical for its 9 digits and *f, scaled by the same power of ten, is within half a
 * unit of them by a margin far above the scaling's error; near the half, slem_fmt_g9()
 * decides. Returns -1 for a text it does not take (no number, inf, too many digits). */
int slem_mergefast_score(const char *s, size_t n, float *f, int *canon) {
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
    if (g9_text(buf, neg, d9, x) != n || !slem_fast_same(buf, s, n)) {
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

int slem_mergefast_push(SlemFastShard *sh, SlemFastRes **r) {
  if (sh->n == sh->cap) {
    size_t cap = sh->cap ? 2 * sh->cap : 256;
    SlemFastRes *x = realloc(sh->r, cap * sizeof *x);
    if (!x) return -1;
    sh->r = x;
    sh->cap = cap;
  }
  *r = sh->r + sh->n++;
  return 0;
}

void *slem_mergefast_grow(void *table, size_t n, size_t cap, size_t size) {
  unsigned char *x = calloc(cap, size);
  if (!x) return NULL;
  if (n) memcpy(x, table, n * size);
  free(table);
  return x;
}

/* The row's record, growing the table (and the ids' beside it in idmode 2); NULL beyond
 * MAXROWS or out of memory. */
static SlemFastRow *row_info(SlemFast *m, uint32_t row) {
  if (row >= m->nrows) {
    size_t cap = m->nrows ? m->nrows : 1024;
    SlemFastRow *x;
    if (row >= MAXROWS) return NULL;
    while (cap <= row) cap *= 2;
    if (m->idmode == 2) {
      SlemFastRowId *y = slem_mergefast_grow(m->rid, m->nrows, cap, sizeof *y);
      if (!y) return NULL;
      m->rid = y;
    }
    if (!(x = slem_mergefast_grow(m->rows, m->nrows, cap, sizeof *x))) return NULL;
    m->rows = x;
    m->nrows = cap;
  }
  return m->rows + row;
}

/* 1 when the id is the decimal of its row, as slem-match writes it without --db-ids. */
static int id_is_row(const SlemFastRes *r) {
  uint32_t v;
  return slem_mergefast_u31(r->id, r->idlen, &v) == 0 && v == r->row;
}

/* Checks result r of shard s against the others of its query and the earlier ones. */
int slem_mergefast_take(SlemFast *m, size_t s, const SlemFastRes *r) {
  SlemFastRow *ri;
  SlemFastRowId *id;
  if (m->ids && m->idmode != 2) {
    int plain = id_is_row(r);
    if (m->idmode == 0) {
      m->idmode = plain ? 1 : 2;
      if (!plain && m->nrows && !(m->rid = calloc(m->nrows, sizeof *m->rid))) return -1;
    } else if (!plain) {
      return -1; /* ids of both kinds: the general merge checks them */
    }
  }
  if (r->row < m->s[s].lo || r->row >= m->s[s].hi || !(ri = row_info(m, r->row)) ||
      ri->stamp == m->query)
    return -1;
  ri->stamp = m->query;
  if (ri->owner == 0) {
    ri->owner = (uint32_t)s + 1;
    if (m->idmode == 2) {
      long before = (long)slem_strmap_count(m->ids), at = slem_strmap_intern(m->ids, r->id, r->idlen);
      if (at != before) return -1; /* the id of another row, or out of memory */
      id = m->rid + r->row;
      id->id = r->id;
      id->idlen = r->idlen;
      if (r->idlen <= sizeof id->idb) memcpy(id->idb, r->id, r->idlen);
    }
  } else if (ri->owner != (uint32_t)s + 1) {
    return -1;
  } else if (m->idmode == 2) {
    id = m->rid + r->row;
    if (id->idlen != r->idlen ||
        !slem_fast_same(r->idlen <= sizeof id->idb ? id->idb : id->id, r->id, r->idlen))
      return -1;
  }
  return 0;
}

static void unmap(Fast *m) {
  for (size_t s = 0; s < m->n; s++) {
    if (m->s[s].base) munmap((void *)m->s[s].base, m->s[s].len);
    free(m->s[s].r);
  }
  free(m->s);
  free(m->rows);
  free(m->rid);
  slem_strmap_free(m->ids);
}

/* Maps path when it is a regular, non-empty file ending in a newline, that no format of
 * its own files claims by its name (sniff_path). */
static int map_shard(FShard *sh, const char *path) {
  struct stat st;
  const SlemRankFormatOps *f;
  int fd;
  void *p;
  if (strcmp(path, "-") == 0) return -1;
  for (int i = 0; (f = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (f->sniff_path && f->sniff_path(path)) return -1;
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

/* The format whose fast path reads path (own files) or whose first_line fits line. */
static const SlemRankFastOps *fast_of_path(const char *path, const SlemRankFormatOps **ops) {
  const SlemRankFormatOps *f;
  for (int i = 0; (f = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (f->fast && f->fast->merge && f->sniff_path && f->sniff_path(path)) {
      *ops = f;
      return f->fast;
    }
  return NULL;
}

static const SlemRankFastOps *fast_of_line(const char *line, size_t len) {
  const SlemRankFormatOps *f;
  for (int i = 0; (f = slem_rankformat_ops((SlemRankFormat)i)) != NULL; i++)
    if (f->fast && f->fast->first_line && f->fast->first_line(line, len)) return f->fast;
  return NULL;
}

int slem_mergefast(const char *const *shards, size_t n, const char *output,
                   const SlemMergeOpts *opts, const SlemMergeFastShard *info,
                   const char *const lines[2], SlemMergeStats *stats, SlemError *err) {
  Fast m = {0};
  SlemOut *out = NULL;
  SlemStrMap *qseen = NULL;
  const SlemRankFormatOps *own = NULL, *wops;
  const SlemRankFastOps *in = NULL, *wr;
  const Res **hs = NULL;
  char *buf = NULL, *o;
  int st = NO;
  size_t k = opts->k;
  struct stat os;
  SlemMergeStats z = {0, 0};
  if (opts->db_ids || !output || strcmp(output, "-") == 0 || n == 0 || k == 0) return NO;
  if (stat(output, &os) == 0 && !S_ISREG(os.st_mode)) return NO;
  if ((in = fast_of_path(shards[0], &own)) != NULL)
    return info ? NO : in->merge(shards, n, output, opts, stats, err);
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
      if (sh->len < sizeof head || !slem_fast_same(sh->p, head, sizeof head - 1) || nl + 1 > last ||
          (size_t)(sh->end - last) < sizeof tail || !slem_fast_same(last, tail, sizeof tail - 1))
        goto done;
      sh->p = nl + 1;
      sh->end = last;
      sh->lo = info[s].lo;
      sh->hi = info[s].hi;
    }
  }
  for (size_t s = 0; s < n; s++) {
    const char *b = m.s[s].p, *nl = memchr(b, '\n', (size_t)(m.s[s].end - b));
    const SlemRankFastOps *f;
    if (!nl || !(f = fast_of_line(b, (size_t)(nl - b))) || (s && f != in)) goto done;
    in = f;
  }
  wops = slem_rankformat_ops(opts->format);
  if (opts->format == SLEM_RANK_AUTO) wr = in;
  else wr = wops ? wops->fast : NULL;
  if (!wr || !wr->write || !in->read) goto done;
  if ((in->ids && !(m.ids = slem_strmap_new())) || !(qseen = slem_strmap_new()) ||
      !(buf = malloc(OUTBUF)) || !(hs = malloc(k * sizeof *hs)))
    goto done;
  if (slem_out_open(&out, output, err) != SLEM_OK) goto done;
  if (lines && fputs(lines[0], slem_out_file(out)) == EOF) goto done;
  o = buf;
  for (;;) {
    const char *q = NULL, *qi;
    size_t ql = 0, qli;
    long before_n = (long)slem_strmap_count(qseen);
    int r;
    m.query++;
    r = in->read(&m, 0, &q, &ql, NULL, 0);
    if (r < 0) goto done;
    if (r == 1) {
      for (size_t s = 1; s < n; s++)
        if (m.s[s].p != m.s[s].end) goto done;
      break;
    }
    if (slem_strmap_intern(qseen, q, ql) != before_n || m.s[0].n < k) goto done;
    for (size_t s = 1; s < n; s++)
      if (in->read(&m, s, &qi, &qli, q, ql) != 0 || m.s[s].n < k) goto done;
    /* the best k of the n sorted lists */
    for (size_t s = 0; s < n; s++) m.s[s].at = 0;
    for (size_t i = 0; i < k; i++) {
      size_t b = SIZE_MAX;
      for (size_t s = 0; s < n; s++)
        if (m.s[s].at < m.s[s].n &&
            (b == SIZE_MAX || slem_fast_before(m.s[s].r + m.s[s].at, m.s[b].r + m.s[b].at)))
          b = s;
      hs[i] = m.s[b].r + m.s[b].at++;
    }
    /* written in runs of results that fit the buffer (one result takes at most PER) */
    for (size_t i = 0, c; i < k; i += c) {
      size_t room = OUTBUF - (size_t)(o - buf);
      if (room < 2 * PER) {
        if (fwrite(buf, 1, (size_t)(o - buf), slem_out_file(out)) != (size_t)(o - buf)) goto done;
        o = buf;
        room = OUTBUF;
      }
      c = room / PER - 1; /* one PER kept for the query's own text */
      if (c > k - i) c = k - i;
      o = wr->write(o, q, ql, hs, i, c, k);
    }
    z.queries++;
    z.results += k;
    if (opts->progress && (z.queries & 255) == 0) opts->progress(opts->progress_ctx, z.queries);
  }
  if (z.queries == 0) goto done;
  {
    size_t len = (size_t)(o - buf);
    if (fwrite(buf, 1, len, slem_out_file(out)) != len) goto done;
    if (lines && fputs(lines[1], slem_out_file(out)) == EOF) goto done;
  }
  st = slem_out_commit(out, err);
  out = NULL;
  if (st == SLEM_OK && stats) *stats = z;
done:
  slem_out_abort(out);
  free(buf);
  free(hs);
  slem_strmap_free(qseen);
  unmap(&m);
  return st;
}