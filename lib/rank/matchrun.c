#define _POSIX_C_SOURCE 200809L
#include "matchrun.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arith.h"
#include "cache.h"
#include "var_kernel.h"
#include "cachekinds.h"
#include "calibration.h"
#include "db.h"
#include "ids.h"
#include "rankings.h"

void slem_matchrun_opts_init(SlemMatchRunOpts *opts) {
  memset(opts, 0, sizeof *opts);
  slem_match_opts_init(&opts->match);
  opts->queries = "-";
  opts->output = "-";
  opts->informat = SLEM_FMT_AUTO;
  opts->query_format = opts->db_format = SLEM_FMT_END;
}

static int is_stdin(const char *path) { return path && strcmp(path, "-") == 0; }

int slem_matchrun_check(const SlemMatchRunOpts *o, SlemError *err) {
  const char *q = o->queries ? o->queries : "-";
  SlemRankFormat fmt;
  if (o->ndb == 0 && !o->db_list)
    return slem_error(err, SLEM_EINVAL, "no database: give -d DATABASE");
  for (size_t i = 0; i < o->ndb; i++)
    if (is_stdin(q) && is_stdin(o->db[i]))
      return slem_error(err, SLEM_EINVAL, "the queries and the database cannot both come from "
                        "stdin");
  if (is_stdin(o->db_list) && is_stdin(q))
    return slem_error(err, SLEM_EINVAL, "the queries and the database list cannot both come "
                      "from stdin");
  {
    /* the ids and calibration files too: a second stdin reads nothing */
    size_t uses = (size_t)is_stdin(q) + (size_t)is_stdin(o->db_list) +
                  (size_t)is_stdin(o->query_ids) + (size_t)is_stdin(o->calibration);
    for (size_t i = 0; i < o->ndb; i++) uses += (size_t)is_stdin(o->db[i]);
    for (size_t i = 0; i < o->ndb_ids; i++) uses += (size_t)is_stdin(o->db_ids[i]);
    if (uses > 1)
      return slem_error(err, SLEM_EINVAL, "only one input can be stdin ('-'; the queries are "
                        "read from stdin when no query file is given)");
  }
  if (o->ndb_ids > 0 && !o->db_list && o->ndb_ids != o->ndb)
    return slem_error(err, SLEM_EINVAL, "%zu --db-ids for %zu database files: give one per -d, "
                      "in order", o->ndb_ids, o->ndb);
  if (slem_match_rules(o->cache != NULL, o->couple, o->match.normalize,
                       o->match.affine || o->calibration, err) != SLEM_OK)
    return SLEM_EINVAL;
  /* a format of its own files cannot go to stdout (an unknown name is slem_matchrun()'s) */
  if (o->output_format && slem_rankformat_parse(&fmt, o->output_format, NULL) == SLEM_OK)
    return slem_rankformat_check_output(fmt, o->output, err);
  return SLEM_OK;
}

static void warn(const SlemMatchRunOpts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(const SlemMatchRunOpts *o, const char *fmt, ...) {
  char msg[2 * SLEM_ERRMSG_MAX];
  va_list ap;
  if (!o->warn) return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  o->warn(o->warn_ctx, msg);
}

/* An output that is one of the inputs would be replaced before it is read: refused (a
 * usage error) before any work, as is an output that is a directory. */
static int refuse_clobber(const char *output, const char *const *inputs, size_t n, int *usage,
                          SlemError *err) {
  struct stat so, si;
  if (!output || is_stdin(output) || stat(output, &so) != 0) return SLEM_OK;
  if (S_ISDIR(so.st_mode)) return slem_error(err, SLEM_EIO, "%s: is a directory", output);
  if (!S_ISREG(so.st_mode)) return SLEM_OK;
  for (size_t i = 0; i < n; i++) {
    if (!inputs[i] || is_stdin(inputs[i]) || stat(inputs[i], &si) != 0) continue;
    if (so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
      *usage = 1;
      return slem_error(err, SLEM_EINVAL, "the output '%s' is also an input ('%s'): it would be "
                        "replaced before it is read; write elsewhere", output, inputs[i]);
    }
  }
  return SLEM_OK;
}

/* The arithmetics (arith.h) of the containers among the queries and the database files, in
 * list ("A + B" when they differ; "" when none records one). */
static void desc_arith(char *list, size_t size, const SlemVecReader *q, const SlemDb *db) {
  list[0] = 0;
  slem_arith_list_add(list, size, slem_vecreader_arith(q));
  for (size_t i = 0; i < slem_db_files(db); i++)
    slem_arith_list_add(list, size, slem_vecreader_arith(slem_db_reader(db, i)));
}

/* Descriptors of one cache encoded on other BLAS cores differ in their last bits: said, not
 * refused (the ranking is that of one run up to near-ties, its scores to about 1e-6). */
static void warn_mixed(const SlemMatchRunOpts *o, const SlemVecReader *q, const SlemDb *db) {
  const SlemVecReader *a = q;
  for (size_t i = 0; i < slem_db_files(db); i++) {
    const SlemVecReader *b = slem_db_reader(db, i);
    if (!slem_vecreader_arith(a)) a = b;
    if (a != b && slem_arith_differ(slem_vecreader_arith(a), slem_vecreader_arith(b))) {
      warn(o, "%s was encoded on the BLAS core %s, but %s on %s: their scores differ from those "
           "of one run in the last bits (about 1e-6), and near-ties may swap",
           slem_vecreader_name(b), slem_vecreader_arith(b), slem_vecreader_name(a),
           slem_vecreader_arith(a));
      return;
    }
  }
}

/* The distance an input's file says its rows are compared by (an ann-benchmarks HDF5 file's
 * attribute 'distance'), followed, never ranked past in silence: angular is cosine, what
 * --normalize ranks by, set here when it was not given (and said, once); classifier queries
 * score their raw vectors, so there it takes --normalize. Every other distance (euclidean,
 * hamming, jaccard) is no inner product: refused, naming it. */
static int follow_distance(const SlemMatchRunOpts *o, const SlemVecReader *q, const SlemDb *db,
                           SlemMatchOpts *m, SlemError *err) {
  int said = 0;
  for (size_t i = 0; i <= slem_db_files(db); i++) {
    const SlemVecReader *r = i == 0 ? q : slem_db_reader(db, i - 1);
    const char *d = slem_vecreader_distance(r), *name = slem_vecreader_name(r);
    if (!d) continue;
    if (strcmp(d, "angular") != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: distance '%s' (the file's attribute, as "
                        "ann-benchmarks writes it): slem-match ranks by inner product, or by "
                        "cosine (angular, --normalize), not by this distance; to rank these "
                        "vectors by inner product all the same, save the datasets as npy "
                        "(numpy.save), which carries no distance", name, d);
    if (m->normalize) continue;
    if (m->affine || o->calibration)
      return slem_error(err, SLEM_EFORMAT, "%s: distance 'angular' (the file's attribute): "
                        "classifier queries score raw vectors; give --normalize to rank by "
                        "cosine, as angular ranks", name);
    m->normalize = 1;
    if (!said) warn(o, "%s: distance 'angular' (the file's attribute, as ann-benchmarks writes "
                    "it): ranked by cosine, as --normalize does", name);
    said = 1;
  }
  return SLEM_OK;
}

/* A shard's ranking says which shard of which database it is, and the arithmetics that made
 * it, for slem-merge (in the formats with shard lines: jsonl). */
static int shard_line(SlemRankWriter *w, SlemRankFormat fmt, const SlemDb *db,
                      const SlemVecReader *q, const SlemShard *shard, const SlemMatchOpts *o,
                      SlemError *err) {
  SlemRankShard m = {0};
  size_t k = o->k;
  int st;
  if (shard->count == 0 || !slem_rankformat_has_shard(fmt)) return SLEM_OK;
  /* what the score is, so that shards scored otherwise are not merged */
  if (o->kernel)
    snprintf(m.scoring, sizeof m.scoring, "kernel %s%s", slem_cache_fingerprint(o->kernel),
             o->couple == SLEM_COUPLE_AUTHORS ? " couple=authors" : o->couple ? " couple" : "");
  else
    snprintf(m.scoring, sizeof m.scoring, "%s", o->calibration ? "calibrated" : o->affine ? "affine"
                                                : o->normalize ? "cosine" : "dot");
  if (o->exclude_self)
    snprintf(m.scoring + strlen(m.scoring), sizeof m.scoring - strlen(m.scoring), " exclude-self");
  snprintf(m.arith, sizeof m.arith, "%s", slem_arith_name());
  desc_arith(m.desc_arith, sizeof m.desc_arith, q, db);
  m.index = shard->index;
  m.count = shard->count;
  m.rows = (uint64_t)slem_db_rows(db);
  m.k = k;
  if ((st = slem_db_content_fingerprint(db, m.database, err)) != SLEM_OK) return st;
  return slem_rankwriter_shard(w, &m, err);
}

/* Its end line names the queries, once they were read. */
static int shard_end(SlemRankWriter *w, SlemRankFormat fmt, const SlemShard *shard,
                     const SlemVecReader *q, const SlemIds *qids, uint64_t nq, SlemError *err) {
  SlemRankShard m = {0};
  if (shard->count == 0 || !slem_rankformat_has_shard(fmt)) return SLEM_OK;
  m.has_end = 1;
  m.queries = nq;
  slem_db_query_fingerprint(q, nq, qids, m.query_set);
  return slem_rankwriter_shard_end(w, &m, err);
}

/* Progress in queries, from the pairs scored. */
typedef struct Progress {
  const SlemMatchRunOpts *o;
  uint64_t rows, queries; /* rows searched (0: unknown), queries (0: unknown) */
} Progress;

static void on_pairs(void *ctx, uint64_t pairs) {
  const Progress *p = ctx;
  if (p->rows > 0) p->o->progress(p->o->progress_ctx, pairs / p->rows, p->queries);
}

/* Descriptors of one cache only, and descriptors against descriptors; plain vectors
 * against a container's descriptors set the unit checks of m. */
static int check_inputs(const SlemMatchRunOpts *o, const SlemVecReader *q, const SlemDb *db,
                        SlemMatchOpts *m, SlemError *err) {
  const char *fq = slem_vecreader_fingerprint(q);
  for (size_t i = 0; i < slem_db_files(db); i++) {
    const SlemVecReader *dr = slem_db_reader(db, i);
    int plain = 0, st;
    if ((i > 0 && (st = slem_vecreaders_compatible(slem_db_reader(db, 0), dr, &plain, err)) !=
                      SLEM_OK) ||
        (st = slem_vecreaders_compatible(q, dr, &plain, err)) != SLEM_OK)
      return st;
    if (plain == 1) m->unit_queries = 1;
    if (plain == 2) m->unit_db = 1;
    /* kernel projections are checked against the cache by slem_match_db() */
    if (o->cache && (fq || (slem_vecreader_fingerprint(dr) &&
                            !slem_vecreader_projections(dr, NULL, NULL, NULL))))
      return slem_error(err, SLEM_EINVAL, "%s: SLEM descriptors, but the kernel similarity of -c "
                        "ranks base features: give the feature files, or pass --no-check",
                        fq ? slem_vecreader_name(q) : slem_vecreader_name(dr));
  }
  return SLEM_OK;
}

int slem_matchrun(const SlemMatchRunOpts *o, SlemMatchRunResult *res, SlemError *err) {
  const char *qpath = o->queries ? o->queries : "-", *output = o->output ? o->output : "-";
  const char **paths = NULL, **inputs = NULL;
  char **listed = NULL;
  size_t nlisted = 0, ndb = o->ndb, n = 0;
  SlemCalibration *cal = NULL;
  SlemCache *cache = NULL;
  SlemIds *qids = NULL;
  SlemDb *db = NULL;
  SlemVecReader *q = NULL;
  SlemRankWriter *out = NULL;
  SlemRankFormat fmt = SLEM_RANK_TSV;
  SlemMatchOpts m = o->match;
  SlemShard shard = o->shard;
  Progress progress = {o, 0, 0};
  SlemHitsSink sink;
  int st;
  const SlemIds *wqids;

  memset(res, 0, sizeof *res);
  if ((st = slem_matchrun_check(o, err)) != SLEM_OK) {
    res->usage = 1;
    return st;
  }
  /* the format named, else the one output's extension names, else tsv */
  if (o->output_format) {
    if (slem_rankformat_parse(&fmt, o->output_format, NULL) != SLEM_OK) {
      res->usage = 1;
      return slem_error(err, SLEM_EINVAL, "--output-format: unknown format '%s' (%s)",
                        o->output_format, slem_rankformat_names());
    }
  } else if (slem_rankformat_from_path(output) != SLEM_RANK_AUTO) {
    fmt = slem_rankformat_from_path(output);
  }
  m.calibration = NULL;
  m.kernel = NULL;
  m.couple = o->couple;
  m.unit_queries = m.unit_db = 0;
  m.progress = NULL;
  if (o->calibration) {
    if ((st = slem_calibration_read(&cal, o->calibration, err)) != SLEM_OK) goto done;
    m.calibration = cal;
  }
  if (o->cache) {
    if ((st = slem_cache_read(&cache, o->cache, err)) != SLEM_OK) goto done;
    if (slem_cache_kernel_recursive(cache)) { /* as a linear recursive cache: descriptors */
      st = slem_error(err, SLEM_EINVAL, "%s: -c takes a kernel cache of depth 1; for a kernel "
                      "cache of %zu stages (--depth), encode queries and database with "
                      "slem-encode -c and match the descriptors", o->cache,
                      slem_cache_kernel_recursive(cache)->depth);
      goto done;
    }
    if (!slem_cache_kernel(cache)) {
      st = slem_error(err, SLEM_EINVAL, "%s: -c takes a kernel cache; for linear SLEM, encode "
                      "queries and database with slem-encode and match the descriptors", o->cache);
      goto done;
    }
    if (o->couple && !slem_cache_kernel(cache)->couple) {
      res->usage = 1;
      st = slem_error(err, SLEM_EINVAL, "--couple: %s was made without --couple (make it with "
                      "slem-negstats --kernel SPEC --couple)", o->cache);
      goto done;
    }
    m.kernel = cache;
  }
  if (o->db_list && (st = slem_db_list_read(&listed, &nlisted, o->db_list, err)) != SLEM_OK)
    goto done;
  paths = calloc(ndb + nlisted + 1, sizeof *paths);
  inputs = calloc(ndb + nlisted + o->ndb_ids + 4, sizeof *inputs);
  if (!paths || !inputs) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < ndb; i++) paths[i] = o->db[i];
  for (size_t i = 0; i < nlisted; i++) {
    if (is_stdin(listed[i]) && is_stdin(qpath)) {
      st = slem_error(err, SLEM_EINVAL, "%s: the queries and the database cannot both come from "
                      "stdin", o->db_list);
      goto done;
    }
    paths[ndb++] = listed[i];
  }
  if (o->db_list && o->ndb_ids > 0 && o->ndb_ids != ndb) {
    st = slem_error(err, SLEM_EINVAL, "%zu --db-ids for %zu database files (-d and %s): give one "
                    "per file, in order", o->ndb_ids, ndb, o->db_list);
    goto done;
  }
  /* the output may be none of the inputs */
  inputs[n++] = qpath;
  inputs[n++] = o->query_ids;
  inputs[n++] = o->cache;
  inputs[n++] = o->db_list;
  for (size_t i = 0; i < ndb; i++) inputs[n++] = paths[i];
  for (size_t i = 0; i < o->ndb_ids; i++) inputs[n++] = o->db_ids[i];
  if ((st = refuse_clobber(output, inputs, n, &res->usage, err)) != SLEM_OK) goto done;
  { /* the files the format writes (npy: OUT.I.npy and OUT.D.npy) */
    char names[2][4096];
    size_t nn = 0;
    if (slem_rankformat_files(fmt, output, names, &nn) == 0)
      for (size_t i = 0; i < nn; i++)
        if ((st = refuse_clobber(names[i], inputs, n, &res->usage, err)) != SLEM_OK) goto done;
  }
  if ((o->query_ids && (st = slem_ids_read(&qids, o->query_ids, err)) != SLEM_OK) ||
      (st = slem_db_open(&db, paths, o->ndb_ids ? o->db_ids : NULL, ndb,
                            o->db_format == SLEM_FMT_END ? o->informat : o->db_format, err)) !=
          SLEM_OK ||
      (st = slem_db_select(db, &shard, err)) != SLEM_OK ||
      (st = slem_vecreader_open(&q, qpath,
                                 o->query_format == SLEM_FMT_END ? o->informat : o->query_format,
                                 err)) != SLEM_OK)
    goto done;
  if (shard.count > 0 && slem_rankformat_has_shard(fmt)) slem_vecreader_follow_values(q);
  if (shard.count > 0 && !slem_rankformat_has_shard(fmt))
    warn(o, "--shard with %s: the ranking carries no shard lines, so slem-merge cannot check its "
         "k, its rows' range, its database, its queries or its arithmetic; write jsonl between "
         "shards (-F jsonl)", slem_rankformat_name(fmt));
  /* kernel projections: the database of a kernel match, never its queries */
  if (slem_vecreader_projections(q, NULL, NULL, NULL)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: kernel projections (slem-encode --projections) serve "
                    "as the database (-d) of slem-match -c, not as its queries: give the queries' "
                    "base features", slem_vecreader_name(q));
    goto done;
  }
  if (!o->cache && slem_vecreader_projections(slem_db_reader(db, 0), NULL, NULL, NULL)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: kernel projections, ranked by the exact kernel "
                    "similarity: give their cache with -c CACHE",
                    slem_vecreader_name(slem_db_reader(db, 0)));
    goto done;
  }
  if ((st = follow_distance(o, q, db, &m, err)) != SLEM_OK) goto done;
  if (!o->no_check && (st = check_inputs(o, q, db, &m, err)) != SLEM_OK) goto done;
  warn_mixed(o, q, db);
  /* an ids count that the header already contradicts fails before any output */
  if (qids && slem_vecreader_count(q) >= 0 &&
      slem_ids_count(qids) != (uint64_t)slem_vecreader_count(q)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %" PRId64 " queries (%s)", o->query_ids,
                    slem_ids_count(qids), slem_vecreader_count(q), slem_vecreader_name(q));
    goto done;
  }
  if (o->progress) {
    uint64_t lo, hi;
    slem_db_window(db, &lo, &hi);
    if (hi == UINT64_MAX && slem_db_rows(db) >= 0) hi = (uint64_t)slem_db_rows(db);
    progress.rows = hi == UINT64_MAX ? 0 : hi - lo;
    progress.queries = slem_vecreader_count(q) > 0 ? (uint64_t)slem_vecreader_count(q) : 0;
    m.progress = on_pairs;
    m.progress_ctx = &progress;
  }
  wqids = qids ? qids : slem_vecreader_ids(q);
  if ((st = slem_rankwriter_open_k(&out, output, fmt, wqids, slem_db_ids(db), o->tag, m.k,
                                   err)) != SLEM_OK)
    goto done;
  /* the rankings formatted on the match's threads where the format can */
  slem_rankwriter_sink(out, &sink);
  if ((st = shard_line(out, fmt, db, q, &shard, &m, err)) != SLEM_OK ||
      (st = slem_match_db_sink(q, db, &m, &sink, &res->stats, err)) != SLEM_OK ||
      (st = shard_end(out, fmt, &shard, q, wqids, res->stats.nq, err)) != SLEM_OK)
    goto done;
  if (cal && slem_calibration_count(cal) != res->stats.nq) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %zu sigmoids for %" PRIu64 " queries",
                    o->calibration, slem_calibration_count(cal), res->stats.nq);
    goto done;
  }
  if (qids && slem_ids_count(qids) != res->stats.nq) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %" PRIu64 " queries", o->query_ids,
                    slem_ids_count(qids), res->stats.nq);
    goto done;
  }
  st = slem_rankwriter_close(out, err);
  out = NULL;
done:
  slem_rankwriter_abort(out);
  slem_vecreader_free(q);
  slem_db_free(db);
  slem_ids_free(qids);
  slem_db_list_free(listed, nlisted);
  free(paths);
  free(inputs);
  slem_cache_free(cache);
  slem_calibration_free(cal);
  return st;
}
