#define _POSIX_C_SOURCE 200809L
#include "db.h"

#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"

struct SlemDb {
  size_t n;             /* files */
  SlemVecReader **r;    /* r[n] */
  int owns;             /* the readers are ours to free */
  SlemIds **fids;       /* fids[n] or NULL: each file's ids */
  SlemIds *ids;         /* all ids, or NULL */
  int64_t *count;       /* count[n]: rows per file, -1 unknown */
  int64_t rows;         /* R or -1 */
  uint64_t lo, hi;      /* the window */
  size_t d;
  char *name;
  /* the cursor */
  size_t f;             /* current file */
  uint64_t base;        /* global row of its first row */
  uint64_t row;         /* next global row */
};

void slem_db_free(SlemDb *self) {
  if (!self) return;
  for (size_t i = 0; i < self->n; i++) {
    if (self->owns && self->r) slem_vecreader_free(self->r[i]);
    if (self->fids) slem_ids_free(self->fids[i]);
  }
  free(self->r);
  free(self->fids);
  slem_ids_free(self->ids);
  free(self->count);
  free(self->name);
  free(self);
}

static int alloc_db(SlemDb **self, size_t n, SlemError *err) {
  SlemDb *db = calloc(1, sizeof *db);
  *self = NULL;
  if (!db) return slem_error(err, SLEM_ENOMEM, "out of memory");
  db->n = n;
  db->r = calloc(n, sizeof *db->r);
  db->count = calloc(n, sizeof *db->count);
  if (!db->r || !db->count) {
    slem_db_free(db);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  db->hi = UINT64_MAX;
  *self = db;
  return SLEM_OK;
}

/* R from the counts; the name. */
static int finish(SlemDb *db, SlemError *err) {
  const char *first = slem_vecreader_name(db->r[0]);
  size_t len = strlen(first) + 64;
  db->rows = 0;
  for (size_t i = 0; i < db->n; i++) {
    if (db->count[i] < 0) {
      db->rows = -1;
      break;
    }
    db->rows += db->count[i];
  }
  db->d = slem_vecreader_dim(db->r[0]);
  if (!(db->name = malloc(len))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if (db->n == 1)
    snprintf(db->name, len, "%s", first);
  else
    snprintf(db->name, len, "%s (and %zu more database files)", first, db->n - 1);
  return SLEM_OK;
}

int slem_db_wrap(SlemDb **self, SlemVecReader *r, SlemError *err) {
  int st = alloc_db(self, 1, err);
  if (st) return st;
  (*self)->r[0] = r;
  (*self)->count[0] = slem_vecreader_count(r);
  if ((st = finish(*self, err)) != SLEM_OK) {
    slem_db_free(*self);
    *self = NULL;
  }
  return st;
}

static int ids_mismatch(const SlemDb *db, size_t i, uint64_t rows, SlemError *err) {
  size_t n = slem_ids_count(db->fids[i]);
  return slem_error(err, SLEM_EFORMAT, "%s: %zu ids, but the database has %s rows (%" PRIu64
                    " vectors in %s)", slem_ids_name(db->fids[i]), n, n < rows ? "more" : "fewer",
                    rows, slem_vecreader_name(db->r[i]));
}

/* The shards of one encode (slem-encode --shard I/N): each container records I, N, the
 * input's row of its first row and the input's rows. Where a shard appears it must start a
 * run 0/N, 1/N, ..., (N-1)/N of one encode (the same N, input rows and cache), given in order
 * and each once, each starting at the rows the run holds before it and holding the rows of
 * its cut (shard.h), together the input's rows; plain files and other runs may come before
 * or after a run, not inside it. Errors: SLEM_EFORMAT naming the file, the previous one and
 * the shard expected. */
static int check_shards(const SlemDb *db, SlemError *err) {
  size_t start = 0;          /* the file that began the run */
  uint64_t next = 0, n_of = 0, held = 0; /* the shard expected next (of n_of); rows so far */
  int64_t total = -1;
  for (size_t i = 0; i < db->n; i++) {
    const SlemVecReader *r = db->r[i];
    const char *name = slem_vecreader_name(r);
    const char *prev = i ? slem_vecreader_name(db->r[i - 1]) : NULL;
    uint64_t idx, cnt, first, lo, hi;
    int64_t tot;
    int is = slem_vecreader_shard(r, &idx, &cnt, &first, &tot);
    if (n_of == 0) { /* no run under way: a shard here starts one */
      if (!is) continue;
      if (idx != 0)
        return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 ", where shard "
                          "0/%" PRIu64 " was expected%s%s: give the shards of one slem-encode "
                          "--shard in order, 0 to %" PRIu64 ", each once", name, idx, cnt, cnt,
                          prev ? " after " : "", prev ? prev : "", cnt - 1);
      start = i;
      n_of = cnt;
      next = 0;
      held = 0;
      total = tot;
    } else if (!is || idx != next || cnt != n_of || tot != total) {
      if (!is)
        return slem_error(err, SLEM_EFORMAT, "%s: not a shard, where shard %" PRIu64 "/%" PRIu64
                          " was expected after %s (shards of one slem-encode --shard from %s "
                          "on): give every shard, in order, each once", name, next, n_of, prev,
                          slem_vecreader_name(db->r[start]));
      if (cnt != n_of || tot != total)
        return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " of an input of "
                          "%" PRId64 " rows, where shard %" PRIu64 "/%" PRIu64 " of the input of "
                          "%" PRId64 " rows of %s was expected after %s: give every shard of "
                          "one encode, in order, each once", name, idx, cnt, tot, next, n_of,
                          total, slem_vecreader_name(db->r[start]), prev);
      return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 "%s, where shard "
                        "%" PRIu64 "/%" PRIu64 " was expected after %s: give the shards of one "
                        "slem-encode --shard in order, 0 to %" PRIu64 ", each once", name, idx,
                        cnt, idx < next ? " again" : "", next, n_of, prev, n_of - 1);
    } else {
      const char *fa = slem_vecreader_fingerprint(db->r[start]), *fb = slem_vecreader_fingerprint(r);
      const char *ea = slem_vecreader_shard_encoding(db->r[start]);
      const char *eb = slem_vecreader_shard_encoding(r);
      if ((fa || fb) && (!fa || !fb || strcmp(fa, fb) != 0)) {
        /* the caches by their own fingerprints, and the couplings where one side couples */
        char ma[128], mb[128];
        int coupled = slem_vecreader_coupling(db->r[start]) || slem_vecreader_coupling(r);
        return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " made with %s, "
                          "but %s (shard 0/%" PRIu64 ") with %s: shards of two encodes", name,
                          idx, cnt, slem_vecreader_made_with(r, coupled, mb, sizeof mb),
                          slem_vecreader_name(db->r[start]), cnt,
                          slem_vecreader_made_with(db->r[start], coupled, ma, sizeof ma));
      }
      /* the options that change the bits besides the cache (--precision, the classifiers'
       * --theta): shards of one cache encoded two ways would rank as neither run */
      if ((ea || eb) && (!ea || !eb || strcmp(ea, eb) != 0))
        return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " encoded with %s, "
                          "but %s (shard 0/%" PRIu64 ") with %s: shards of two encodes", name, idx,
                          cnt, eb ? eb : "(no record)", slem_vecreader_name(db->r[start]), cnt,
                          ea ? ea : "(no record)");
    }
    if (first != held)
      return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " starts at row %"
                        PRIu64 " of its input, but the shards before it (from %s on) hold %"
                        PRIu64 " rows", name, idx, cnt, first, slem_vecreader_name(db->r[start]),
                        held);
    if (total >= 0) {
      SlemShard sh = {idx, cnt};
      slem_shard_range(&sh, (uint64_t)total, &lo, &hi);
      if (db->count[i] < 0 || (uint64_t)db->count[i] != hi - lo)
        return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " of %" PRId64
                          " rows holds %" PRId64 " rows, not the %" PRIu64 " of its cut", name,
                          idx, cnt, total, db->count[i], hi - lo);
    }
    held += db->count[i] < 0 ? 0 : (uint64_t)db->count[i];
    if (++next == n_of) n_of = 0; /* the run is whole */
  }
  if (n_of > 0)
    return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " is the last file, "
                      "but shard %" PRIu64 "/%" PRIu64 " was expected after it (shards of one "
                      "slem-encode --shard from %s on): give every shard, in order, each once",
                      slem_vecreader_name(db->r[db->n - 1]), next - 1, n_of, next, n_of,
                      slem_vecreader_name(db->r[start]));
  return SLEM_OK;
}

int slem_db_open(SlemDb **self, const char *const *paths, const char *const *ids_paths,
                 size_t n, SlemFormat fmt, SlemError *err) {
  SlemDb *db = NULL;
  int st, stdin_seen = 0;
  *self = NULL;
  if (n == 0) return slem_error(err, SLEM_EINVAL, "no database file");
  if ((st = alloc_db(&db, n, err)) != SLEM_OK) return st;
  db->owns = 1;
  if (ids_paths && !(db->fids = calloc(n, sizeof *db->fids))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto fail;
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(paths[i], "-") == 0 && stdin_seen++) {
      st = slem_error(err, SLEM_EINVAL, "the standard input can be one database file only");
      goto fail;
    }
    if ((st = slem_vecreader_open(&db->r[i], paths[i], fmt, err)) != SLEM_OK) goto fail;
    db->count[i] = slem_vecreader_count(db->r[i]);
    if (i > 0 && slem_vecreader_projections(db->r[i], NULL, NULL, NULL) !=
                     slem_vecreader_projections(db->r[0], NULL, NULL, NULL)) {
      st = slem_error(err, SLEM_EFORMAT, "%s and %s: kernel projections and base features in "
                      "one database: project every file with slem-encode --projections, or none",
                      slem_vecreader_name(db->r[0]), slem_vecreader_name(db->r[i]));
      goto fail;
    }
    if (i > 0 && slem_vecreader_dim(db->r[i]) != slem_vecreader_dim(db->r[0])) {
      st = slem_error(err, SLEM_EFORMAT, "%s has dimension %zu but %s has dimension %zu",
                      slem_vecreader_name(db->r[i]), slem_vecreader_dim(db->r[i]),
                      slem_vecreader_name(db->r[0]), slem_vecreader_dim(db->r[0]));
      goto fail;
    }
    if (ids_paths) {
      if ((st = slem_ids_read(&db->fids[i], ids_paths[i], err)) != SLEM_OK) goto fail;
      if (db->count[i] >= 0 && slem_ids_count(db->fids[i]) != (uint64_t)db->count[i]) {
        st = ids_mismatch(db, i, (uint64_t)db->count[i], err);
        goto fail;
      }
    }
  }
  if ((st = check_shards(db, err)) != SLEM_OK) goto fail;
  /* an id names one row of the whole database: twice, in one file or in two, is refused */
  if (ids_paths && ((st = slem_ids_unique(db->fids, n, "database file", err)) != SLEM_OK ||
                    (st = slem_ids_concat(&db->ids, db->fids, n, err)) != SLEM_OK))
    goto fail;
  if (!ids_paths) { /* descriptor containers that all carry their ids name the rows */
    SlemIds **parts = malloc(n * sizeof *parts);
    size_t have = 0;
    if (!parts) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto fail;
    }
    for (size_t i = 0; i < n; i++)
      if ((parts[i] = (SlemIds *)slem_vecreader_ids(db->r[i])) != NULL) have++;
    if (have == n && (st = slem_ids_unique(parts, n, "database file", err)) == SLEM_OK)
      st = slem_ids_concat(&db->ids, parts, n, err);
    free(parts);
    if (st) goto fail;
  }
  if ((st = finish(db, err)) != SLEM_OK) goto fail;
  *self = db;
  return SLEM_OK;
fail:
  slem_db_free(db);
  return st;
}

size_t slem_db_dim(const SlemDb *self) { return self->d; }
size_t slem_db_files(const SlemDb *self) { return self->n; }
const char *slem_db_name(const SlemDb *self) { return self->name; }
int64_t slem_db_rows(const SlemDb *self) { return self->rows; }
const SlemVecReader *slem_db_reader(const SlemDb *self, size_t i) { return self->r[i]; }
const SlemIds *slem_db_ids(const SlemDb *self) { return self->ids; }

int slem_db_projections(SlemDb *self, const char *fp, size_t d, size_t r, int couple, int *on,
                        SlemError *err) {
  size_t n = 0;
  *on = 0;
  for (size_t i = 0; i < self->n; i++) {
    size_t pd, pr;
    int pc;
    const char *name = slem_vecreader_name(self->r[i]), *pfp;
    if (!slem_vecreader_projections(self->r[i], &pd, &pr, &pc)) continue;
    n++;
    pfp = slem_vecreader_fingerprint(self->r[i]);
    if (!pfp || strcmp(pfp, fp) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: kernel projections of the cache %s, not of this "
                        "one (%s): project the database again with slem-encode --projections",
                        name, pfp ? pfp : "(none)", fp);
    if (pd != d || pr != r || pc != couple)
      return slem_error(err, SLEM_EFORMAT, "%s: kernel projections of dimension %zu, rank %zu%s; "
                        "the cache has dimension %zu, rank %zu%s", name, pd, pr,
                        pc == SLEM_COUPLE_AUTHORS ? ", coupled (authors)" : pc ? ", coupled" : "",
                        d, r, couple == SLEM_COUPLE_AUTHORS ? ", and --couple authors is given"
                              : couple ? ", and --couple is given" : "");
  }
  if (n == 0) return SLEM_OK; /* slem_db_open() refuses files of both kinds */
  for (size_t i = 0; i < self->n; i++) slem_vecreader_accept_projections(self->r[i]);
  *on = 1;
  return SLEM_OK;
}

int slem_db_select(SlemDb *self, const SlemShard *shard, SlemError *err) {
  if (shard->count == 0) {
    self->lo = 0;
    self->hi = UINT64_MAX;
    return SLEM_OK;
  }
  if (self->rows < 0) {
    size_t i = 0;
    while (self->count[i] >= 0) i++;
    return slem_error(err, SLEM_EINVAL, "%s: the number of vectors is not known before reading "
                      "it (text, a pipe, a file of /proc whose size says 0), "
                      "so it cannot be cut into shards",
                      slem_vecreader_name(self->r[i]));
  }
  slem_shard_range(shard, (uint64_t)self->rows, &self->lo, &self->hi);
  return SLEM_OK;
}

void slem_db_window(const SlemDb *self, uint64_t *lo, uint64_t *hi) {
  *lo = self->lo;
  *hi = self->hi;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

void slem_db_fingerprint(const SlemDb *self, char out[17]) {
  uint64_t h = 1469598103934665603ull;
  char buf[96];
  int len = snprintf(buf, sizeof buf, "d=%zu;rows=%lld;", self->d, (long long)self->rows);
  h = fnv(h, buf, (size_t)len);
  for (size_t i = 0; i < self->n; i++) { /* the caches, not how the rows fall in files */
    const char *fp = slem_vecreader_fingerprint(self->r[i]);
    const char *prev = i ? slem_vecreader_fingerprint(self->r[i - 1]) : NULL;
    if (i > 0 && (fp && prev ? strcmp(fp, prev) == 0 : fp == prev)) continue;
    len = snprintf(buf, sizeof buf, "cache=%s;", fp ? fp : "-");
    h = fnv(h, buf, (size_t)len);
  }
  if (self->ids)
    for (size_t i = 0; i < slem_ids_count(self->ids); i++) {
      const char *id = slem_ids_get(self->ids, i);
      h = fnv(h, id, strlen(id) + 1);
    }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int slem_db_content_fingerprint(const SlemDb *self, char out[17], SlemError *err) {
  uint64_t h = 1469598103934665603ull;
  char buf[96];
  int len;
  slem_db_fingerprint(self, buf); /* the shape, the caches and the ids */
  h = fnv(h, buf, 16);
  for (size_t i = 0; i < self->n; i++) {
    uint32_t crc;
    uint64_t size = 0;
    if (slem_vecreader_payload_crc(self->r[i], &crc)) {
      len = snprintf(buf, sizeof buf, ";payload=%08" PRIx32, crc);
    } else {
      int st = slem_io_file_crc(slem_vecreader_name(self->r[i]), "the database cannot be named "
                                "by its content for the shard line; give the file itself, or "
                                "write tsv", &crc, &size, err);
      if (st) return st;
      len = snprintf(buf, sizeof buf, ";file=%08" PRIx32 ",%" PRIu64, crc, size);
    }
    h = fnv(h, buf, (size_t)len);
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
  return SLEM_OK;
}

void slem_db_query_fingerprint(const SlemVecReader *queries, uint64_t n, const SlemIds *ids,
                               char out[17]) {
  uint64_t h = 1469598103934665603ull;
  char buf[96];
  int len = snprintf(buf, sizeof buf, "d=%zu;n=%" PRIu64 ";values=%08" PRIx32 ";",
                     slem_vecreader_dim(queries), n, slem_vecreader_values_crc(queries));
  h = fnv(h, buf, (size_t)len);
  if (ids)
    for (size_t i = 0; i < slem_ids_count(ids); i++) {
      const char *id = slem_ids_get(ids, i);
      h = fnv(h, id, strlen(id) + 1);
    }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

int slem_db_seekable(const SlemDb *self) {
  for (size_t i = 0; i < self->n; i++)
    if (!slem_vecreader_seekable(self->r[i])) return 0;
  return 1;
}

int slem_db_rewind(SlemDb *self, SlemError *err) {
  for (size_t i = 0; i < self->n && i <= self->f; i++) {
    int st = slem_vecreader_rewind(self->r[i], err);
    if (st) return st;
  }
  self->f = 0;
  self->base = 0;
  self->row = 0;
  return SLEM_OK;
}

static int read_rows(SlemVecReader *r, void *x, size_t max, int f32, size_t *got,
                     SlemError *err) {
  return f32 ? slem_vecreader_read_f32(r, x, max, got, err)
             : slem_vecreader_read(r, x, max, got, err);
}

int slem_db_read(void *ctx, void *x, size_t max, int f32, size_t *got, SlemBlockPos *pos,
                 SlemError *err) {
  SlemDb *db = ctx;
  *got = 0;
  while (db->f < db->n && db->row < db->hi) {
    SlemVecReader *r = db->r[db->f];
    int64_t c = db->count[db->f];
    size_t want = max;
    int st;
    if (c >= 0 && db->base + (uint64_t)c <= db->lo) { /* wholly before the window */
      db->row = db->base += (uint64_t)c;
      db->f++;
      continue;
    }
    if (db->row < db->lo && slem_vecreader_can_seek(r)) { /* the window starts in this file */
      if ((st = slem_vecreader_seek(r, db->lo - db->base, err)) != SLEM_OK) return st;
      db->row = db->lo;
    }
    if (db->row < db->lo) { /* the file's rows before the window: read and dropped */
      if (db->lo - db->row < want) want = (size_t)(db->lo - db->row);
    } else if (db->hi - db->row < want) {
      want = (size_t)(db->hi - db->row);
    }
    if ((st = read_rows(r, x, want, f32, got, err)) != SLEM_OK) return st;
    if (*got == 0) { /* the end of this file */
      uint64_t rows = db->row - db->base;
      if (db->fids && slem_ids_count(db->fids[db->f]) != rows) return ids_mismatch(db, db->f, rows, err);
      db->base = db->row;
      db->f++;
      continue;
    }
    if (db->row < db->lo) {
      db->row += *got;
      *got = 0;
      continue;
    }
    pos->name = slem_vecreader_name(r);
    pos->record = slem_vecreader_done(r) - *got + 1;
    pos->row = db->row;
    db->row += *got;
    return SLEM_OK;
  }
  return SLEM_OK;
}

void slem_db_list_free(char **paths, size_t n) {
  if (!paths) return;
  for (size_t i = 0; i < n; i++) free(paths[i]);
  free(paths);
}

int slem_db_list_read(char ***paths, size_t *n, const char *list, SlemError *err) {
  SlemIn *in = NULL;
  char **p = NULL;
  size_t cap = 0, len;
  int st;
  *paths = NULL;
  *n = 0;
  if ((st = slem_in_open(&in, list, err)) != SLEM_OK) return st;
  for (;;) {
    char *line;
    if ((st = slem_in_getline(in, &line, &len, err)) != SLEM_OK) goto fail;
    if (!line) break;
    if (len == 0) continue;
    if (*n == cap) {
      char **q = realloc(p, (cap = cap ? 2 * cap : 16) * sizeof *q);
      if (!q) goto nomem;
      p = q;
    }
    if (!(p[*n] = malloc(len + 1))) goto nomem;
    memcpy(p[*n], line, len + 1);
    (*n)++;
  }
  if (*n == 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: no database file listed", slem_in_name(in));
    goto fail;
  }
  slem_in_free(in);
  *paths = p;
  return SLEM_OK;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
fail:
  slem_in_free(in);
  slem_db_list_free(p, *n);
  *n = 0;
  return st;
}
