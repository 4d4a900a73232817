#define _POSIX_C_SOURCE 200809L
#include "negstats.h"

#include "recursive.h"
#include "whiten.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arith.h"
#include "cache.h"
#include "crc32.h"
#include "var_linear.h"
#include "var_partial.h"
#include "var_kernel.h"
#include "cachekinds.h"
#include "fit.h"
#include "kernel.h"
#include "kernel_stats.h"
#include "io.h"
#include "var_krec.h"
#include "blas.h"
#include "mem.h"
#include "prefetch.h"
#include "stats.h"
#include "variant.h"

void slem_negstats_opts_init(SlemNegstatsOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->format = SLEM_FMT_AUTO;
  opts->pos_format = SLEM_FMT_AUTO;
  opts->lambda = -1;
  opts->lambda_rel = 1;
  opts->theta = 1;
  opts->rank = SLEM_NEGSTATS_RANK;
  opts->sample = 1000;
  opts->seed = 1;
}

/* ---- the options (optspec.h): those every fit shares, then each variant's ---- */

/* --format, --positives-format: a vector format's name (vecs.h), "auto" included. */
static int set_format(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemFormat f;
  if (slem_format_parse(&f, value) != SLEM_OK)
    return slem_error(err, SLEM_EINVAL, "--%s: unknown format '%s' (%s)", s->name, value,
                      slem_format_names());
  memcpy((char *)opts + s->offset, &f, sizeof f);
  return SLEM_OK;
}

int slem_negstats_opt_variant(const SlemOptSpec *s, void *opts, const char *value,
                              SlemError *err) {
  SlemNegstatsOpts *o = opts;
  (void)value;
  if (o->variant && strcmp(o->variant, s->name) != 0)
    return slem_error(err, SLEM_EINVAL, "--%s and --%s ask for two variants: give one",
                      o->variant, s->name);
  o->variant = s->name;
  return SLEM_OK;
}

#define O(f) SLEM_OPT_FIELD(SlemNegstatsOpts, f)
/* The options of every fit, in slem-negstats --help's order. */
static const SlemOptSpec common_options[] = {
    {.name = "lambda", .key = 'l', .metavar = "L", .type = SLEM_OPT_REAL, O(lambda),
     .real = SLEM_OPT_NONNEG, .help = "regularisation lambda, absolute"},
    {.name = "lambda-rel", .key = 'r', .metavar = "R", .type = SLEM_OPT_REAL, O(lambda_rel),
     .real = SLEM_OPT_NONNEG, .given = SLEM_NEGSTATS_GIVEN_LAMBDA_REL,
     .help = "lambda = R * trace(Sigma) / d (default 1)"},
    {.name = "format", .key = 'f', .metavar = "FMT", .type = SLEM_OPT_CUSTOM, O(format),
     .parse = set_format,
     .help = "format of the negative files (default: from the\n"
             "extension, else from the content)"},
    {.name = "positives-format", .metavar = "FMT", .type = SLEM_OPT_CUSTOM, O(pos_format),
     .parse = set_format, .given = SLEM_NEGSTATS_GIVEN_POS_FORMAT,
     .help = "format of the --mixed or --adaptive-theta POSITIVES\n"
             "(default: from the extension, else from the content;\n"
             "not -f's)"},
    {.name = "skip-nonfinite", .type = SLEM_OPT_FLAG, O(skip_nonfinite),
     .help = "skip (and count) negatives holding a NaN or an Inf,\n"
             "instead of stopping at the first one"},
    {.name = "block", .key = 'b', .metavar = "N", .type = SLEM_OPT_WHOLE, O(block), .min = 1,
     .max = 1L << 24, .help = "vectors read per block (default: 2^18 / d, 64 to 4096)"},
    {.name = "leaf-rows", .metavar = "N", .type = SLEM_OPT_WHOLE, O(leaf_rows), .min = 1,
     .max = 1L << 24,
     .help = "rows per leaf of the statistics tree (default: 2^21 /\n"
             "d, 256 to 4096): the same in every shard and in a\n"
             "whole run"},
    {.name = "allow-mixed-blas", .type = SLEM_OPT_FLAG, O(allow_mixed_blas),
     .help = "merge partial caches made on other BLAS cores than one\n"
             "another or than this host (refused by default: the\n"
             "cache would not be that of one run); the cache records\n"
             "the mix, and a partial cache recording one is refused\n"
             "without this flag at the next level"},
    {0}};
#undef O

/* The i-th option of --help's order: the common ones, then each variant's fit_options
 * in the table's order (variant.h). */
static const SlemOptSpec *option_at(size_t i) {
  return slem_variants_option(common_options, 1, i);
}

size_t slem_negstats_opts_count(void) {
  size_t n = 0;
  while (option_at(n)) n++;
  return n;
}

const SlemOptSpec *slem_negstats_opts_get(size_t i) { return option_at(i); }

int slem_negstats_opts_set(SlemNegstatsOpts *opts, const char *name, const char *value,
                           SlemError *err) {
  const SlemOptSpec *s = slem_variants_option_named(common_options, 1, name);
  return s ? slem_optspec_set(s, opts, &opts->given, value, err)
           : slem_error(err, SLEM_EINVAL, "unknown option '%s'", name);
}

static void progress(const SlemNegstatsOpts *o, uint64_t n) {
  if (o->progress) o->progress(o->progress_ctx, n);
}

/* One set of negatives being summarised (stats.h): the rows of the vector files, or the
 * partial caches that tile the leaves of one set, with the first argument that names it. */
typedef struct Unit {
  SlemStats *stats;
  size_t first_arg;
  uint64_t leaf_total, rows;
  char negatives[17]; /* SlemPartialInfo's */
} Unit;

static size_t leaf_rows(const SlemNegstatsOpts *o, size_t d) {
  return o->leaf_rows ? o->leaf_rows : slem_block_rows(d);
}

/* Rows per block read for the statistics: about 1 MiB of float32, 64 to 4096; with
 * several reading threads (8 BLAS threads or more), a piece of 4 MiB for each (16 MiB at 16
 * threads), so that reading is not the one serial part: at -t 16 on a 16-core server, 1
 * MiB blocks read on one thread had the computing threads waiting for them for half of
 * the wall (docs/performance.md). The leaves, their order and the bits do not change.
 * pieces: the input can be read in pieces (a file whose count is known, no record skipped:
 * text, pipes and skipped records are read in one piece, and keep the small blocks). */
static size_t read_rows(size_t d, int pieces) {
  size_t b = ((size_t)1 << 18) / (d ? d : 1), p = pieces ? slem_vecreader_rows_for_pieces(4 * d) : 0;
  b = b < 64 ? 64 : b > 4096 ? 4096 : b;
  return p > b ? p : b;
}

/* Leaves computed at once (slem_stats_set_batch()): two per BLAS thread from 4 threads on,
 * so that every thread has work whatever d is, within 256 MiB of leaves per batch (two
 * batches are held there: one gathered while the other is computed); one per thread below
 * 4, where a leaf's chunks are work enough for each thread and every leaf held is pages
 * faulted afresh (case A at -t 2: 32 MiB instead of 64, 0.108 -> 0.106 s). The leaves, the
 * tree and the bits do not depend on it. */
static size_t leaf_batch(size_t rows, size_t d) {
  size_t t = (size_t)slem_blas_threads(), k = t < 4 ? t : 2 * t, cap = ((size_t)256 << 20) / (rows * d * 8 + 1);
  if (t <= 1) return 1;
  if (k > cap) k = cap;
  return k ? k : 1;
}

/* The rows of one vector file: those of global rows [lo, hi) are added to st, read in
 * blocks (the next block read while the current one is accumulated). The mixed positives
 * (path is o->mixed itself, not a copy of its name) are read in o->pos_format. */
static int add_file(SlemStats **st, const char *path, const SlemNegstatsOpts *o,
                    uint64_t *row, uint64_t lo, uint64_t hi, SlemNegstatsResult *res,
                    SlemError *err) {
  SlemVecReader *r = NULL;
  SlemPrefetch *pf = NULL;
  size_t d;
  int f32, status = slem_vecreader_open_input(&r, path,
                                              path == o->mixed ? o->pos_format : o->format,
                                              &o->arrays, err);
  if (status) return status;
  slem_vecreader_skip_nonfinite(r, o->skip_nonfinite);
  d = slem_vecreader_dim(r);
  if (!*st) {
    if ((status = slem_stats_new(st, d, leaf_rows(o, d), lo / leaf_rows(o, d), err)) != SLEM_OK)
      goto done;
    res->phases.block = leaf_rows(o, d);
    res->phases.units = leaf_batch(leaf_rows(o, d), d);
    slem_stats_set_batch(*st, res->phases.units);
  }
  if (slem_stats_dim(*st) != d) {
    status = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it "
                        "have %zu", slem_vecreader_name(r), d, slem_stats_dim(*st));
    goto done;
  }
  if (*row >= hi) goto done;
  if (*row + (uint64_t)slem_vecreader_count(r) <= lo && slem_vecreader_count(r) >= 0) {
    *row += (uint64_t)slem_vecreader_count(r); /* wholly before the shard */
    goto done;
  }
  if (*row < lo && slem_vecreader_can_seek(r)) { /* the shard starts in this file */
    if ((status = slem_vecreader_seek(r, lo - *row, err)) != SLEM_OK) goto done;
    *row = lo;
  }
  /* float32 files are read as they are and widened into the statistics' leaf: one copy in
   * double, not two; the blocks read are small (the leaf gathers them), so that the two
   * buffers of the reading thread stay in the cache and fault few pages */
  f32 = slem_vecreader_f32_exact(r);
  /* blocks that stop at the shard's end: the records after it (a NaN, another dimension)
   * are not read, whatever the block's size (-b, the reading threads' 4 MiB pieces) */
  status = slem_prefetch_new_window(&pf, r,
                                    o->block ? o->block
                                             : read_rows(d, slem_vecreader_count(r) >= 0 &&
                                                                slem_vecreader_seekable(r) &&
                                                                !o->skip_nonfinite),
                                    f32, 0, hi - *row, hi - *row, err);
  while (status == SLEM_OK) {
    void *rows;
    size_t got, skip;
    if ((status = slem_prefetch_next(pf, &rows, &got, err)) != SLEM_OK || got == 0) break;
    /* the part of the block inside the shard: global rows [lo, hi) */
    skip = *row < lo ? (size_t)(lo - *row < got ? lo - *row : got) : 0;
    *row += got;
    if (*row > hi) got -= (size_t)(*row - hi < got ? *row - hi : got);
    if (got > skip)
      status = f32 ? slem_stats_add_f32(*st, (float *)rows + skip * d, got - skip, err)
                   : slem_stats_add(*st, (double *)rows + skip * d, got - skip, err);
    progress(o, slem_stats_count(*st));
    if (*row >= hi) break;
  }
done:
  if (pf) {
    double rd, wt;
    slem_prefetch_times(pf, &rd, &wt);
    res->phases.read += rd;
    res->phases.wait_read += wt;
  }
  slem_prefetch_free(pf); /* before the reader it reads */
  if (status == SLEM_OK && slem_vecreader_skipped(r) > 0) {
    res->skipped += slem_vecreader_skipped(r);
    res->skipped_in = path;
  }
  slem_vecreader_free(r);
  return status;
}

/* The shard's rows [*lo, *hi) among the rows of all the vector files, which must tell
 * their number of vectors: whole leaves of the grid, shard I of N taking leaves
 * floor(I L / N) .. floor((I + 1) L / N) - 1 of the L leaves. *rows: all the rows. */
static int shard_window(const char *const *files, size_t n, const SlemNegstatsOpts *o,
                        uint64_t *lo, uint64_t *hi, uint64_t *rows, uint64_t *leaves,
                        SlemError *err) {
  uint64_t total = 0, a, b, leaf = 0;
  for (size_t i = 0; i < n; i++) {
    SlemVecReader *r = NULL;
    int64_t count;
    int st;
    if ((st = slem_vecreader_open_input(&r, files[i], o->format, &o->arrays, err)) != SLEM_OK)
      return st;
    count = slem_vecreader_count(r);
    if (!leaf) leaf = leaf_rows(o, slem_vecreader_dim(r));
    if (count < 0 || !slem_vecreader_seekable(r)) {
      st = slem_error(err, SLEM_EINVAL, "%s: the number of vectors is not known before reading "
                      "it (text, a pipe, a file of /proc whose size says 0), "
                      "so it cannot be cut into shards",
                      slem_vecreader_name(r));
      slem_vecreader_free(r);
      return st;
    }
    total += (uint64_t)count;
    slem_vecreader_free(r);
  }
  *rows = total;
  *leaves = (total + leaf - 1) / leaf;
  slem_shard_range(&o->shard, *leaves, &a, &b);
  *lo = a * leaf;
  *hi = b * leaf < total ? b * leaf : total;
  return SLEM_OK;
}

/* Names the vector files, in order, by their content (SlemPartialInfo's negatives): the
 * FNV-1a hash of each file's CRC-32 and size (an array's: of its bytes). A shard reads only
 * its own rows, so the files are read once more, whole (at the page cache's speed); "" when
 * one is stdin or not a regular file (a pipe: no shard of it can be cut, it is a whole
 * set). Errors: those of slem_io_file_crc(). */
static int negatives_fingerprint(char out[17], const char *const *files, size_t n,
                                 const SlemVecArrays *arrays, SlemError *err) {
  uint64_t h = 1469598103934665603ull;
  out[0] = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat sb;
    if (!slem_vecarrays_find(arrays, files[i]) &&
        (strcmp(files[i], "-") == 0 || stat(files[i], &sb) != 0 || !S_ISREG(sb.st_mode)))
      return SLEM_OK;
  }
  for (size_t i = 0; i < n; i++) {
    const SlemVecReader *a = slem_vecarrays_find(arrays, files[i]);
    const void *data;
    char buf[64];
    uint32_t crc;
    uint64_t size;
    size_t bytes;
    int len, st = SLEM_OK;
    if (a && slem_vecreader_array(a, &data, &bytes))
      crc = slem_crc32(0, data, bytes), size = bytes;
    else
      st = slem_io_file_crc(files[i], "its partial cache cannot name the negatives by their "
                            "content", &crc, &size, err);
    if (st) return st;
    len = snprintf(buf, sizeof buf, "%s=%08lx,%llu;", a ? "array" : "file", (unsigned long)crc,
                   (unsigned long long)size);
    for (int k = 0; k < len; k++) h = (h ^ (unsigned char)buf[k]) * 1099511628211ull;
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
  return SLEM_OK;
}

/* "p3.slem (shard 3/7)", for messages. */
static const char *part_name(char *buf, size_t size, const SlemCache *c) {
  const SlemPartialInfo *pi = slem_cache_partial(c);
  if (pi->shard_count > 0)
    snprintf(buf, size, "%s (shard %llu/%llu)", slem_cache_path(c),
             (unsigned long long)pi->shard_index, (unsigned long long)pi->shard_count);
  else
    snprintf(buf, size, "%s", slem_cache_path(c));
  return buf;
}

/* "12..14" (inclusive), or "none". */
static const char *leaves(char *buf, size_t size, const SlemPartialInfo *pi) {
  if (pi->leaf_end == pi->leaf_first)
    snprintf(buf, size, "none");
  else
    snprintf(buf, size, "%llu..%llu", (unsigned long long)pi->leaf_first,
             (unsigned long long)pi->leaf_end - 1);
  return buf;
}

/* One set: the same grid of leaves over the same negatives. */
static int same_grid(const SlemPartialInfo *a, const SlemPartialInfo *b) {
  return a->leaf_rows == b->leaf_rows && a->leaf_total == b->leaf_total && a->rows == b->rows &&
         strcmp(a->negatives, b->negatives) == 0;
}

/* Partial caches sorted by grid, then by their leaves, then by argument. */
typedef struct Part {
  SlemCache *cache;
  size_t arg;
} Part;

static int part_cmp(const void *pa, const void *pb) {
  const Part *x = pa, *y = pb;
  const SlemPartialInfo *a = slem_cache_partial(x->cache), *b = slem_cache_partial(y->cache);
  if (a->leaf_rows != b->leaf_rows) return a->leaf_rows < b->leaf_rows ? -1 : 1;
  if (a->leaf_total != b->leaf_total) return a->leaf_total < b->leaf_total ? -1 : 1;
  if (a->rows != b->rows) return a->rows < b->rows ? -1 : 1;
  if (strcmp(a->negatives, b->negatives)) return strcmp(a->negatives, b->negatives);
  if (a->leaf_first != b->leaf_first) return a->leaf_first < b->leaf_first ? -1 : 1;
  if (a->leaf_end != b->leaf_end) return a->leaf_end < b->leaf_end ? -1 : 1; /* empty first */
  return x->arg < y->arg ? -1 : x->arg > y->arg;
}

/* For a missing leaf of a set: ", which X.slem (shard 1/3) holds, but of other negatives
 * (...)" when a partial cache of the same grid over other files holds it (a shard of
 * another run taken for one of this run), else "". */
static const char *held_elsewhere(char *buf, size_t size, const Part *parts, size_t np,
                                  const Unit *u, uint64_t leaf) {
  char b[600];
  buf[0] = 0;
  for (size_t i = 0; i < np; i++) {
    const SlemPartialInfo *pi = slem_cache_partial(parts[i].cache);
    if (pi->leaf_rows == slem_stats_leaf_rows(u->stats) && pi->leaf_total == u->leaf_total &&
        pi->rows == u->rows && strcmp(pi->negatives, u->negatives) != 0 &&
        pi->leaf_first <= leaf && leaf < pi->leaf_end) {
      snprintf(buf, size, ", which %s holds, but of other negatives (the content of its "
               "vector files differs: a shard of another run)",
               part_name(b, sizeof b, parts[i].cache));
      break;
    }
  }
  return buf;
}

/* Groups the partial caches into sets of negatives, each the run of caches that tile its
 * leaves in order, their nodes pushed into a new unit. A gap or an overlap between the
 * caches of one set is an error naming both; a set need not be complete (checked by the
 * caller). */
static int group_parts(Part *parts, size_t np, Unit *units, size_t *nu, SlemError *err) {
  char b1[600], b2[600], b3[64], b4[800];
  Unit *u = NULL;
  const SlemCache *prev = NULL;
  qsort(parts, np, sizeof *parts, part_cmp);
  for (size_t i = 0; i < np; i++) {
    const SlemCache *c = parts[i].cache;
    const SlemPartialInfo *pi = slem_cache_partial(c);
    int st;
    if (u && slem_stats_dim(u->stats) != c->d)
      return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it "
                        "have %zu", slem_cache_path(c), c->d, slem_stats_dim(u->stats));
    if (u && same_grid(slem_cache_partial(prev), pi) && pi->leaf_first > slem_stats_next_leaf(u->stats))
      return slem_error(err, SLEM_EINVAL, "%s holds leaves %s of %llu, but %s ends before leaf "
                        "%llu: the partial cache of leaves %llu..%llu (a shard) is missing%s",
                        part_name(b1, sizeof b1, c), leaves(b3, sizeof b3, pi),
                        (unsigned long long)pi->leaf_total, part_name(b2, sizeof b2, prev),
                        (unsigned long long)slem_stats_next_leaf(u->stats),
                        (unsigned long long)slem_stats_next_leaf(u->stats),
                        (unsigned long long)pi->leaf_first - 1,
                        held_elsewhere(b4, sizeof b4, parts, np, u, slem_stats_next_leaf(u->stats)));
    if (u && same_grid(slem_cache_partial(prev), pi) && pi->leaf_first < slem_stats_next_leaf(u->stats) &&
        !(pi->leaf_first == 0 && slem_stats_next_leaf(u->stats) == u->leaf_total))
      return slem_error(err, SLEM_EINVAL, "%s and %s hold some of the same leaves (the same "
                        "shard given twice?)", part_name(b1, sizeof b1, prev),
                        part_name(b2, sizeof b2, c));
    if (!u || !same_grid(slem_cache_partial(prev), pi) || pi->leaf_first < slem_stats_next_leaf(u->stats)) {
      u = &units[(*nu)++];
      u->first_arg = parts[i].arg;
      u->leaf_total = pi->leaf_total;
      u->rows = pi->rows;
      memcpy(u->negatives, pi->negatives, sizeof u->negatives);
      if ((st = slem_stats_new(&u->stats, c->d, pi->leaf_rows, pi->leaf_first, err)) != SLEM_OK)
        return st;
    }
    if (parts[i].arg < u->first_arg) u->first_arg = parts[i].arg;
    for (size_t k = 0; k < pi->nnodes; k++) {
      const uint64_t *nd = pi->node + 3 * k;
      if ((st = slem_stats_push(u->stats, (unsigned)nd[0], nd[1], nd[2], pi->node_mu + k * c->d,
                                pi->node_scatter + k * c->d * c->d, err)) != SLEM_OK)
        return st;
    }
    /* an empty shard holds no node; it still ends where its leaves end */
    if (pi->nnodes == 0 && pi->leaf_end > slem_stats_next_leaf(u->stats)) {
      slem_stats_free(u->stats);
      u->stats = NULL;
      return slem_error(err, SLEM_EFORMAT, "%s: leaves %s but no node",
                        part_name(b1, sizeof b1, c), leaves(b3, sizeof b3, pi));
    }
    prev = c;
  }
  return SLEM_OK;
}

/* Partial caches merged into the cache of one run must all come from one arithmetic
 * (arith.h), the one this merge runs on: the shards' nodes are made by their kernels, the
 * fold and A^-1 by this host's. A mix is refused naming both, unless allowed, and so is a
 * partial cache that is itself a mix (an earlier level merged under the flag: its own line
 * names only the host that merged it); when allowed, mixed lists every arithmetic
 * involved (this host's first, then those of the parts and of their mixes), for the
 * output to record. */
static int check_arith(const Part *parts, size_t np, int allow, char *mixed, size_t size,
                       SlemError *err) {
  const char *here = slem_arith_name();
  char core[64];
  mixed[0] = 0;
  for (size_t i = 0; i < np; i++) {
    const char *a = slem_cache_arith(parts[i].cache), *m = slem_cache_arith_mixed(parts[i].cache);
    if (!allow && m)
      return slem_error(err, SLEM_EFORMAT, "%s mixes the arithmetics %s (merged with "
                        "--allow-mixed-blas): merged, it would not make the cache of one run; "
                        "pass --allow-mixed-blas here too", slem_cache_path(parts[i].cache), m);
    for (size_t j = 0; j < i && !allow; j++) {
      const char *b = slem_cache_arith(parts[j].cache);
      if (slem_arith_differ(a, b))
        return slem_error(err, SLEM_EFORMAT, "%s was made on the BLAS core %s, but %s on %s: "
                          "merged, they would not be the cache of one run; make the partial "
                          "caches on one core (OPENBLAS_CORETYPE), or pass --allow-mixed-blas",
                          slem_cache_path(parts[i].cache), a, slem_cache_path(parts[j].cache), b);
    }
    if (!allow && slem_arith_differ(a, here)) {
      slem_arith_core_of(a, core, sizeof core);
      return slem_error(err, SLEM_EFORMAT, "%s was made on the BLAS core %s, but this merge runs "
                        "on %s: the merged cache would not be that of one run on either; run it "
                        "with OPENBLAS_CORETYPE=%s, or pass --allow-mixed-blas",
                        slem_cache_path(parts[i].cache), a, here, core);
    }
  }
  slem_arith_list_add(mixed, size, here);
  for (size_t i = 0; i < np; i++) {
    if (slem_cache_arith(parts[i].cache)) slem_arith_list_add(mixed, size, slem_cache_arith(parts[i].cache));
    slem_arith_list_merge(mixed, size, slem_cache_arith_mixed(parts[i].cache));
  }
  if (!strstr(mixed, " + ")) mixed[0] = 0; /* one arithmetic: nothing mixed */
  return SLEM_OK;
}

static int unit_cmp(const void *pa, const void *pb) {
  const Unit *a = pa, *b = pb;
  return a->first_arg < b->first_arg ? -1 : a->first_arg > b->first_arg;
}

/* The leaf where the first node of s starts, or where s ends when it holds none (a shard
 * with no row starts and ends at its first leaf). */
static uint64_t first_leaf(const SlemStats *s) {
  unsigned level;
  uint64_t index, cnt;
  const double *mean;
  if (slem_stats_nodes(s) == 0) return slem_stats_next_leaf(s);
  slem_stats_node(s, 0, &level, &index, &cnt, &mean, NULL);
  return index << level;
}

/* Every input is a vector file or a partial cache. The vector files (in order) are one set
 * of negatives, cut into leaves (the shard's only, with --shard); the partial caches are
 * grouped into the sets whose leaves they tile. Each set is summarised along its tree; the
 * sets, in the order of their first argument, are folded as the leaves of one more tree. A
 * partial output of one set keeps its nodes, so that merging stays exact. */
/* The stream's reading of a file alone (SlemFitStream.read): into new statistics with the
 * run's options, counting nothing in the run's result. */
static int read_alone(void *ctx, const char *path, SlemStats **st, SlemError *err) {
  const SlemNegstatsOpts *o = ctx;
  SlemNegstatsResult pr; /* a second reading counts nothing twice */
  uint64_t row = 0;
  int status;
  memset(&pr, 0, sizeof pr);
  *st = NULL;
  status = add_file(st, path, o, &row, 0, UINT64_MAX, &pr, err);
  if (status == SLEM_OK) status = slem_stats_flush(*st, err);
  return status;
}

static int linear(const char *output, const char *const *inputs, size_t n, const SlemFitOps *fit,
                  const SlemNegstatsOpts *o, SlemNegstatsResult *res, SlemError *err) {
  SlemProvenance prov = {"slem-negstats", inputs, n, NULL};
  char mixed[SLEM_ARITH_LIST_MAX];
  Unit *units = calloc(n + 1, sizeof *units), *vec = NULL;
  Part *parts = calloc(n, sizeof *parts);
  const char **files = calloc(n + 1, sizeof *files), **pin = NULL;
  const char *appended = fit->appends ? fit->appends(o) : NULL;
  SlemStats *all = NULL, *result;
  SlemPartialInfo grid;

  uint64_t row = 0, lo = 0, hi = UINT64_MAX, rows = 0, leaves = 0;
  size_t np = 0, nf = 0, nu = 0;
  int st = SLEM_OK;
  memset(&grid, 0, sizeof grid);
  if (!units || !parts || !files) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n && st == SLEM_OK; i++) {
    if (slem_vecarrays_find(&o->arrays, inputs[i]) || strcmp(inputs[i], "-") == 0 ||
        o->format != SLEM_FMT_AUTO || !slem_cache_sniff(inputs[i])) {
      if (nf == 0) units[nu].first_arg = i;
      files[nf++] = inputs[i];
      continue;
    }
    if (o->shard.count > 0)
      st = slem_error(err, SLEM_EINVAL, "%s: --shard cuts vector files, not partial caches",
                      inputs[i]);
    else if ((st = slem_cache_read(&parts[np].cache, inputs[i], err)) == SLEM_OK) {
      parts[np].arg = i;
      if (!slem_cache_partial(parts[np++].cache))
        st = slem_error(err, SLEM_EFORMAT, "%s: only partial caches (--partial) can be merged",
                        inputs[i]);
    }
  }
  if (st) goto done;
  if (appended) { /* the positives: the last rows of the union (no partial caches here) */
    if ((st = slem_in_rereadable(appended, err)) != SLEM_OK) goto done; /* read twice */
    if (np > 0) {
      st = slem_error(err, SLEM_EINVAL, "%s: %s takes vector files, not partial caches",
                      inputs[parts[0].arg], fit->appends_what);
      goto done;
    }
    if ((st = slem_cache_prov_append(&prov, &pin, inputs, n, appended, err)) != SLEM_OK)
      goto done;
    files[nf++] = appended;
  }
  if (nf > 0) {
    vec = &units[nu++];
    if (o->shard.count > 0) {
      if (o->skip_nonfinite) {
        st = slem_error(err, SLEM_EINVAL, "--skip-nonfinite cannot cut shards: a skipped row "
                        "would move the rows of the other shards; clean the negatives first");
        goto done;
      }
      if ((st = shard_window(files, nf, o, &lo, &hi, &rows, &leaves, err)) != SLEM_OK) goto done;
    }
    for (size_t i = 0; i < nf && st == SLEM_OK; i++)
      st = add_file(&vec->stats, files[i], o, &row, lo, hi, res, err);
    if (st == SLEM_OK) st = slem_stats_flush(vec->stats, err);
    if (st) goto done;
    if (o->partial && (st = negatives_fingerprint(vec->negatives, files, nf, &o->arrays, err)) != SLEM_OK)
      goto done;
    vec->leaf_total = o->shard.count > 0 ? leaves : slem_stats_next_leaf(vec->stats);
    vec->rows = o->shard.count > 0 ? rows : slem_stats_count(vec->stats);
  }
  if (np > 0 && (st = check_arith(parts, np, o->allow_mixed_blas, mixed, sizeof mixed, err)) != SLEM_OK)
    goto done;
  if (np > 0 && mixed[0]) prov.arith_mixed = mixed;
  if (np > 0 && (st = group_parts(parts, np, units, &nu, err)) != SLEM_OK) goto done;
  qsort(units, nu, sizeof *units, unit_cmp);
  /* a set must be whole, unless it is the only one and becomes a partial cache again */
  for (size_t u = 0; u < nu && !(o->partial && nu == 1); u++) {
    SlemStats *s = units[u].stats;
    uint64_t first = first_leaf(s);
    char hint[800];
    if (first != 0 || slem_stats_next_leaf(s) != units[u].leaf_total)
      st = slem_error(err, SLEM_EINVAL, "%s and the partial caches with it hold leaves "
                      "%llu..%llu of %llu: the shards of the other leaves are missing%s",
                      inputs[units[u].first_arg], (unsigned long long)first,
                      (unsigned long long)slem_stats_next_leaf(s) - 1,
                      (unsigned long long)units[u].leaf_total,
                      held_elsewhere(hint, sizeof hint, parts, np, &units[u],
                                     first != 0 ? 0 : slem_stats_next_leaf(s)));
    if (st) goto done;
  }
  if (nu == 1) {
    result = units[0].stats;
    grid.leaf_rows = slem_stats_leaf_rows(result);
    grid.leaf_total = units[0].leaf_total;
    grid.rows = units[0].rows;
    grid.leaf_first = first_leaf(result);
    memcpy(grid.negatives, units[0].negatives, sizeof grid.negatives);
  } else {
    /* several sets: each folded, then the sets as the leaves of one more tree */
    if ((st = slem_stats_new(&all, slem_stats_dim(units[0].stats), 0, 0, err)) != SLEM_OK)
      goto done;
    for (size_t u = 0; u < nu && st == SLEM_OK; u++) {
      SlemStats *s = units[u].stats;
      if (slem_stats_dim(s) != slem_stats_dim(all))
        st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it "
                        "have %zu", inputs[units[u].first_arg], slem_stats_dim(s),
                        slem_stats_dim(all));
      else if ((st = slem_stats_finish(s, err)) == SLEM_OK)
        st = slem_stats_push(all, 0, u, slem_stats_count(s), slem_stats_mean(s),
                             slem_stats_scatter(s), err);
    }
    if (st == SLEM_OK) st = slem_stats_flush(all, err);
    if (st) goto done;
    result = all;
    grid.leaf_rows = 0;
    grid.leaf_first = 0;
    grid.leaf_total = nu;
    grid.rows = slem_stats_count(all);
  }
  grid.shard_index = o->shard.index;
  grid.shard_count = o->shard.count;
  res->n = slem_stats_count(result);
  res->d = slem_stats_dim(result);
  /* a partial cache may hold no rows only as a shard without leaves: one whose every record
   * was skipped (--skip-nonfinite, which shards refuse) is refused as a whole run is */
  if (res->n == 0 && (!o->partial || res->skipped > 0)) {
    st = slem_error(err, SLEM_EINVAL, "no negatives were given (every record was skipped)%s",
                    o->partial ? "; no partial cache is written" : "");
    goto done;
  }
  {
    SlemFitStream fs = {output, result, &grid, &prov, read_alone, (void *)o};
    st = fit->finish(&fs, o, res, err);
  }
done:
  if (vec && vec->stats) {
    double cv, cp, mg;
    slem_stats_times(vec->stats, &cv, &cp, &mg);
    res->phases.convert += cv;
    res->phases.compute += cp;
    res->phases.merge += mg;
  }
  if (all) {
    double cv, cp, mg;
    slem_stats_times(all, &cv, &cp, &mg);
    res->phases.merge += mg;
  }
  free(pin);
  slem_stats_free(all);
  for (size_t u = 0; units && u < nu; u++) slem_stats_free(units[u].stats);
  for (size_t i = 0; parts && i < np; i++) slem_cache_free(parts[i].cache);
  free(units);
  free(parts);
  free(files);
  return st;
}

int slem_negstats_run(const char *output, const char *const *inputs, size_t n,
                      const SlemNegstatsOpts *opts, SlemNegstatsResult *res, SlemError *err) {
  memset(res, 0, sizeof *res);
  { /* before the negatives are read */
    int st = slem_negstats_check(opts, inputs, n, err);
    if (st != SLEM_OK) return st;
  }
  {
    double t0 = slem_now();
    const SlemFitOps *fit = slem_fits_choose(opts);
    int st = fit->fit ? fit->fit(output, inputs, n, opts, res, err)
                      : linear(output, inputs, n, fit, opts, res, err);
    res->phases.wall = slem_now() - t0;
    res->phases.threads = slem_blas_threads();
    return st;
  }
}
