#include "encstream.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachekinds.h"
#include "arith.h"
#include "encoder.h"
#include "groups.h"
#include "ids.h"
#include "mem.h"
#include "phases.h"
#include "prefetch.h"
#include "variant.h"
#include "writeback.h"
#include "blas.h"

#include <pthread.h>

/* Lanes at most (below) */
#define LANES 2

void slem_encstream_opts_init(SlemEncStreamOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->mode = SLEM_ENCODE_UNIT;
  opts->theta = 1;
  opts->precision = SLEM_PRECISION_AUTO;
  opts->block = 1024;
  opts->format = SLEM_FMT_AUTO;
  opts->dtype = SLEM_DTYPE_F4;
  opts->alpha = -1;
}

/* ---- the options (optspec.h): those every encoding shares, then each variant's ---- */

/* -F: a vector format's name that can be written (not "auto"). */
static int set_format(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemFormat f;
  if (slem_format_parse(&f, value) != SLEM_OK || f == SLEM_FMT_AUTO)
    return slem_error(err, SLEM_EINVAL, "--%s: unknown format '%s' (%s)", s->name, value,
                      slem_format_names());
  ((SlemEncStreamOpts *)opts)->format = f;
  return SLEM_OK;
}

static int set_dtype(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemDtype dt;
  if (slem_dtype_parse(&dt, value) != SLEM_OK)
    return slem_error(err, SLEM_EINVAL, "--%s: '%s' is not f4, f2 or i1", s->name, value);
  ((SlemEncStreamOpts *)opts)->dtype = dt;
  return SLEM_OK;
}

static int set_precision(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemPrecision p;
  if (slem_encode_precision_parse(&p, value) != SLEM_OK)
    return slem_error(err, SLEM_EINVAL, "--%s: '%s' is not auto, single or double", s->name,
                      value);
  ((SlemEncStreamOpts *)opts)->precision = p;
  return SLEM_OK;
}

static int set_classifier(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  (void)s, (void)value, (void)err;
  ((SlemEncStreamOpts *)opts)->mode = SLEM_ENCODE_CLASSIFIER;
  return SLEM_OK;
}

/* --theta T: positive; theta_set says it was given. */
static int set_theta(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemEncStreamOpts *o = opts;
  double t;
  int st = slem_optspec_real(s, value, &t, err);
  if (st == SLEM_OK) o->theta = t, o->theta_set = 1;
  return st;
}

#define O(f) SLEM_OPT_FIELD(SlemEncStreamOpts, f)
/* The options of every encoding, in slem-encode --help's order. */
static const SlemOptSpec common_options[] = {
    {.name = "output-format", .key = 'F', .metavar = "FMT", .type = SLEM_OPT_CUSTOM, O(format),
     .parse = set_format,
     .help = "output format (default: from OUT's extension; fvecs\n"
             "to stdout)"},
    {.name = "dtype", .metavar = "T", .type = SLEM_OPT_CUSTOM, O(dtype), .parse = set_dtype,
     .help = "npy values as f4 (float32, default), f2 (float16) or\n"
             "i1 (int8 holding round(127 v), for unit-norm\n"
             "descriptors)"},
    {.name = "classifier", .type = SLEM_OPT_CUSTOM, O(mode), .parse = set_classifier,
     .help = "write the exemplar classifier instead: omega (d\n"
             "values) then nu, so that omega . z + nu scores a\n"
             "vector z; with a kernel cache in the factor's space\n"
             "(r + 1 values), which scores the --coordinates of a\n"
             "vector"},
    {.name = "theta", .metavar = "T", .type = SLEM_OPT_CUSTOM, O(theta), .real = SLEM_OPT_POSITIVE,
     .parse = set_theta,
     .help = "weight of the positive in the classifier, or with\n"
             "--basic (default 1)"},
    {.name = "precision", .metavar = "P", .type = SLEM_OPT_CUSTOM, O(precision),
     .parse = set_precision,
     .help = "auto (default), single or double: the arithmetic of\n"
             "the product with A^-1; auto is single (twice as\n"
             "fast) when A's condition number is at most 1e4,\n"
             "which keeps 1 - cos to the double result below 1e-6"},
    {.name = "block", .key = 'b', .metavar = "N", .type = SLEM_OPT_WHOLE, O(block), .min = 1,
     .max = 1L << 20,
     .help = "vectors per block (default: four 256-row chunks per\n"
             "thread, at least 1024; the descriptors do not depend\n"
             "on it)"},
    {.name = "shard", .metavar = "I/N", .type = SLEM_OPT_CUSTOM, O(shard),
     .parse = slem_optspec_shard,
     .help = "encode only rows floor(I*R/N) .. floor((I+1)*R/N)-1\n"
             "of the R input rows (an input whose count is known:\n"
             "not text)"},
    {0}};
#undef O

/* The i-th option of --help's order: the common ones, then each variant's encode_options
 * in the table's order (variant.h). */
static const SlemOptSpec *option_at(size_t i) {
  return slem_variants_option(common_options, 0, i);
}

size_t slem_encstream_opts_count(void) {
  size_t n = 0;
  while (option_at(n)) n++;
  return n;
}

const SlemOptSpec *slem_encstream_opts_get(size_t i) { return option_at(i); }

int slem_encstream_opts_set(SlemEncStreamOpts *opts, const char *name, const char *value,
                            SlemError *err) {
  const SlemOptSpec *s = slem_variants_option_named(common_options, 0, name);
  return s ? slem_optspec_set(s, opts, NULL, value, err)
           : slem_error(err, SLEM_EINVAL, "unknown option '%s'", name);
}

int slem_encstream_check_dtype(SlemDtype dt, const char *name, SlemFormat fmt, int classifiers,
                               SlemError *err) {
  static const char *const names[] = {"f4", "f2", "i1", "f8"};
  if (dt != SLEM_DTYPE_F4 && !slem_format_stores(fmt, dt))
    return slem_error(err, SLEM_EINVAL, "--dtype %s needs npy output (-F npy, or OUT.npy)",
                      name ? name : names[dt]);
  if (dt == SLEM_DTYPE_I1 && classifiers)
    return slem_error(err, SLEM_EINVAL, "--dtype i1 is for unit-norm descriptors, not "
                      "classifiers");
  return SLEM_OK;
}

int slem_encstream_check(const SlemEncStreamOpts *o, const char *output, int has_ids,
                         int has_groups, SlemError *err) {
  int classifiers = o->mode == SLEM_ENCODE_CLASSIFIER, st;
  SlemFormat fmt = o->format;
  if (o->theta_set && !classifiers && !o->basic)
    return slem_error(err, SLEM_EINVAL, "--theta goes with --classifier or --basic: the "
                      "descriptor's direction does not depend on theta");
  if (o->alpha_set && classifiers)
    return slem_error(err, SLEM_EINVAL, "--alpha gives unit descriptors, not classifiers: drop "
                      "--classifier");
  if (fmt == SLEM_FMT_AUTO && (st = slem_format_for_output(&fmt, output, err)) != SLEM_OK)
    return st;
  if ((st = slem_encstream_check_dtype(o->dtype, NULL, fmt, classifiers, err)) != SLEM_OK)
    return st;
  if (o->projections && !slem_format_carries(fmt))
    return slem_error(err, SLEM_EINVAL, "--projections are written to a container: give "
                      "OUT.slem or -F slem");
  if (o->projections && classifiers)
    return slem_error(err, SLEM_EINVAL, "--projections are not classifiers: drop --classifier or "
                      "--projections");
  if (o->coordinates && (classifiers || o->projections || o->couple))
    return slem_error(err, SLEM_EINVAL, "--coordinates go with none of --classifier, "
                      "--projections, --couple");
  if (has_groups && o->shard.count > 0)
    return slem_error(err, SLEM_EINVAL, "--groups needs the whole input: not with --shard");
  if (has_ids && !slem_format_carries(fmt))
    return slem_error(err, SLEM_EINVAL, "--ids: ids travel in the container (.slem, or -F slem); "
                      "give the ids file to slem-match for the other formats");
  return SLEM_OK;
}

/* The fingerprint the descriptors carry: the cache's, or, when the encoding chooses among
 * several descriptors of one cache (--alpha, --couple, --coordinates, --basic), the FNV-1a (64 bits) of the
 * cache's fingerprint followed by that choice, so that descriptors of two choices are not
 * taken for comparable. buf of 17 bytes. */
static const char *encoding_fingerprint(char *buf, const SlemCache *cache,
                                        const SlemEncStreamOpts *o) {
  char text[96];
  uint64_t h = 0xcbf29ce484222325ull;
  if (o->couple == SLEM_COUPLE_EXACT)
    snprintf(text, sizeof text, "%s:couple", slem_cache_fingerprint(cache));
  else if (o->couple)
    snprintf(text, sizeof text, "%s:couple=%s", slem_cache_fingerprint(cache),
             slem_couple_name(o->couple));
  else if (o->coordinates) /* v, not descriptors: comparable with nothing of the cache */
    snprintf(text, sizeof text, "%s:coordinates", slem_cache_fingerprint(cache));
  else if (o->basic) /* basic_encoder.m's w: its own direction for each theta */
    snprintf(text, sizeof text, "%s:basic:theta=%.17g", slem_cache_fingerprint(cache), o->theta);
  else if (o->alpha_set && o->alpha != -1)
    snprintf(text, sizeof text, "%s:alpha=%.17g", slem_cache_fingerprint(cache), o->alpha);
  else
    return slem_cache_fingerprint(cache);
  for (const char *p = text; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  snprintf(buf, 17, "%016llx", (unsigned long long)h);
  return buf;
}

/* What a descriptor container records: the cache, the input, the shard, and what the
 * encoder adds (describe). */
static int set_meta(SlemVecWriter *w, const SlemCache *cache, SlemVecReader *r,
                    const SlemEncStreamOpts *o, const SlemEncoderOps *ops, const void *enc,
                    uint64_t lo, SlemError *err) {
  SlemDescMeta m;
  char fp[17], how[64];
  static const char *const precisions[] = {"auto", "single", "double"};
  /* only a container records it: the cache's fingerprint, hashed at its first use, is not
   * needed for the other formats */
  if (slem_vecwriter_format(w) != SLEM_FMT_SLEM || !cache) return SLEM_OK;
  memset(&m, 0, sizeof m);
  /* projections record the coupling in their layout, checked against the cache's */
  m.cache_fingerprint = o->projections ? slem_cache_fingerprint(cache) : encoding_fingerprint(fp, cache, o);
  m.cache_path = slem_cache_path(cache);
  if (!o->projections && o->couple) {
    m.couple = o->couple;
    m.couple_cache_fp = slem_cache_fingerprint(cache);
  }
  m.input = slem_vecreader_name(r);
  m.input_count = slem_vecreader_count(r);
  m.shard_index = o->shard.index;
  m.shard_count = o->shard.count;
  m.first_row = lo;
  m.kind_of_rows = o->projections ? "kernel-projections"
                   : o->mode == SLEM_ENCODE_CLASSIFIER ? "classifiers" : "descriptors";
  if (ops->describe) ops->describe(enc, &m);
  m.ids = o->ids;
  m.ids_first = lo;
  if (o->shard.count > 0) { /* what else changes a shard's bits, compared between shards */
    int p = (int)o->precision;
    int len = snprintf(how, sizeof how, "precision %s",
                       p >= 0 && p < 3 ? precisions[p] : "?");
    if (o->mode == SLEM_ENCODE_CLASSIFIER)
      snprintf(how + len, sizeof how - (size_t)len, "; theta %.17g", o->theta);
    m.encoding = how;
  }
  return slem_vecwriter_set_meta(w, &m, err);
}

/* Writes rows y(n, out_dim) of the element type the encoder gives. */
static int write_rows(SlemVecWriter *w, int f64, const void *y, size_t n, SlemError *err) {
  return f64 ? slem_vecwriter_write_f64(w, y, n, err) : slem_vecwriter_write(w, y, n, err);
}

/* The writing thread's job: rows of out_dim values of the encoder's element type. */
typedef struct WriteJob {
  SlemVecWriter *w;
  int f64;
} WriteJob;

static int write_job(void *ctx, const void *y, size_t n, SlemError *err) {
  const WriteJob *j = ctx;
  return write_rows(j->w, j->f64, y, n, err);
}

/* A lane encodes one block at a time with an encoder state of its own. Where the encoder
 * allows it (ops->overlap) and the BLAS has threads, two lanes run on threads of their own
 * over one pool of workers (slem_blas_pool_begin()): the units of a block queue behind
 * those of the block before it, so that no worker waits at the end of each block for the
 * last units of the others. A unit's numbers depend on the unit alone, so the rows are those
 * of one block at a time. A lane without a thread runs its block when it is handed over. */
typedef struct Lane {
  const SlemEncoderOps *ops;
  void *enc;
  int f32;
  void *y, *rows;       /* the block handed over: its outputs and inputs */
  size_t all;           /* its rows */
  const char *name;     /* for messages: the input, and the record of its first row */
  uint64_t first;
  size_t od;            /* values per output row, doubles (f64) or float32 */
  int f64;
  const char *what;     /* what a row is, for messages ("classifier", ...) */
  int busy, stop, threaded;
  int st;
  SlemError err;
  double t0, t1;        /* when its last block started and ended */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
} Lane;

static void lane_encode(Lane *l) {
  l->t0 = slem_now();
  l->st = l->f32 ? l->ops->run_f32(l->enc, l->y, l->rows, l->all, l->name, l->first, &l->err)
                 : l->ops->run(l->enc, l->y, l->rows, l->all, l->name, l->first, &l->err);
  l->t1 = slem_now();
}

static void *lane_thread(void *arg) {
  Lane *l = arg;
  pthread_mutex_lock(&l->mu);
  for (;;) {
    while (!l->busy && !l->stop) pthread_cond_wait(&l->cv, &l->mu);
    if (!l->busy) break;
    pthread_mutex_unlock(&l->mu);
    lane_encode(l);
    pthread_mutex_lock(&l->mu);
    l->busy = 0;
    pthread_cond_broadcast(&l->cv);
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* Hands a block to l: encoded now without a thread, else on the lane's thread. */
static void lane_put(Lane *l, void *y, void *rows, size_t all, const char *name,
                     uint64_t first) {
  l->y = y;
  l->rows = rows;
  l->all = all;
  l->name = name;
  l->first = first;
  if (!l->threaded) {
    lane_encode(l);
    return;
  }
  pthread_mutex_lock(&l->mu);
  l->busy = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

/* Waits until l's block is encoded; its status, err filled on error. */
static int lane_wait(Lane *l, SlemError *err) {
  if (l->threaded) {
    pthread_mutex_lock(&l->mu);
    while (l->busy) pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
  }
  if (l->st != SLEM_OK && err) *err = l->err;
  return l->st;
}

static int lane_start(Lane *l) {
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  l->threaded = pthread_create(&l->thread, NULL, lane_thread, l) == 0;
  if (!l->threaded) {
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
  }
  return l->threaded;
}

/* Stops l's thread once its block is done. */
static void lane_stop(Lane *l) {
  if (!l->threaded) return;
  pthread_mutex_lock(&l->mu);
  l->stop = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->thread, NULL);
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  l->threaded = 0;
}

/* A block in a lane, waiting to be written: the part of it inside the shard. */
typedef struct InFlight {
  Lane *lane;
  const char *out; /* the first of its rows inside the shard */
  size_t keep;     /* and how many */
} InFlight;

/* A written row holds only finite values: an input of finite values whose magnitude the
 * encoding's arithmetic cannot hold (a classifier of |x| ~ 1e160, whose weights are below
 * float32's range; a polynomial kernel of it) would otherwise be written as NaN, Inf or
 * nothing but zeros with status 0. The encoders leave such a row NaN (slem_linear.h);
 * SLEM_ENUMERIC names the input and the record. */
static int check_finite(const Lane *l, const char *out, size_t keep, SlemError *err) {
  size_t esize = l->f64 ? sizeof(double) : sizeof(float);
  uint64_t first = l->first + (uint64_t)((size_t)(out - (const char *)l->y) / (l->od * esize));
  for (size_t i = 0; i < keep; i++)
    for (size_t j = 0; j < l->od; j++) {
      double v = l->f64 ? ((const double *)(const void *)out)[i * l->od + j]
                        : ((const float *)(const void *)out)[i * l->od + j];
      if (!isfinite(v))
        return slem_error(err, SLEM_ENUMERIC, "%s: record %" PRIu64 ": its %s is not finite in "
                          "%s (value %zu): the vector's magnitude is beyond what the encoding's "
                          "arithmetic holds; scale the vectors down", l->name, first + i,
                          l->what, l->f64 ? "double precision" : "float32", j + 1);
    }
  return SLEM_OK;
}

/* The oldest block in flight: waited for, its rows inside the shard handed to the writing
 * thread, counted; the time its lane was busy beyond *covered added to the compute phase
 * (the lanes' busy time, overlaps counted once). */
static int land(InFlight *fly, int *nfly, SlemWriteback *wb, SlemEncStreamResult *res,
                const SlemEncStreamOpts *o, double *covered, SlemError *err) {
  InFlight f = fly[0];
  Lane *l = f.lane;
  int st = lane_wait(l, err);
  memmove(fly, fly + 1, (size_t)--*nfly * sizeof *fly);
  if (l->t1 > *covered) {
    res->phases.compute += l->t1 - (l->t0 > *covered ? l->t0 : *covered);
    *covered = l->t1;
  }
  if (st != SLEM_OK) return st;
  if ((st = check_finite(l, f.out, f.keep, err)) != SLEM_OK) return st;
  if ((st = slem_writeback_put(wb, f.out, f.keep, err)) != SLEM_OK) return st;
  res->n += f.keep;
  if (o->progress) o->progress(o->progress_ctx, res->n);
  return SLEM_OK;
}

size_t slem_encstream_block(size_t d, int threads) {
  size_t chunks = threads > 1 ? 4 * (size_t)threads : 4, rows, cap;
  if (chunks < 4) chunks = 4;
  rows = chunks * 256;
  /* within 128 MiB of doubles per buffer, but never under the 1024 rows of old */
  cap = ((size_t)128 << 20) / ((d ? d : 1) * sizeof(double)) / 256 * 256;
  if (rows > cap) rows = cap;
  return rows < 1024 ? 1024 : rows;
}

int slem_encstream_run(const SlemCache *cache, SlemVecReader *r, const char *output,
                       const SlemEncStreamOpts *o, SlemEncStreamResult *res, SlemError *err) {
  size_t d = cache ? cache->d : o->esvm_d,
         block = o->block ? o->block : slem_encstream_block(d, slem_blas_threads()),
         out_dim, esize;
  const char *against = cache ? slem_cache_path(cache) : "the negatives";
  const SlemEncoderOps *ops = NULL;
  void *enc = NULL;
  SlemPrefetch *pf = NULL;
  SlemVecWriter *w = NULL;
  SlemWriteback *wb = NULL;
  WriteJob wj;
  uint64_t front = 0, span = 0; /* a shard read in a window (win) */
  int win = 0;
  SlemGroups *groups = NULL;
  /* block rows of out_dim values of esize bytes, one per lane and one being written */
  char *ybuf[LANES + 1] = {NULL}, *y = NULL;
  Lane lane[LANES];
  InFlight fly[LANES]; /* the blocks in the lanes, oldest first */
  int nlanes = 1, nfly = 0, pooled = 0;
  size_t nblocks = 0;
  double covered = 0; /* the end of the lanes' busy time counted so far */
  double t_start = slem_now(), t0;
  int f64 = 0, f32 = 0; /* f32: the rows are read as float32 (ops->run_f32) */
  SlemFormat ofmt = o->format;
  uint64_t lo = 0, hi = UINT64_MAX, row = 0; /* the rows to encode, and the next row read */
  int64_t count = slem_vecreader_count(r);
  int st;
  memset(lane, 0, sizeof lane);
  memset(res, 0, sizeof *res);
  res->phases.threads = slem_blas_threads();
  res->phases.block = block;
  res->phases.units = (block + 255) / 256;
  if ((st = slem_encstream_check(o, output, o->ids != NULL, o->groups != NULL, err)) != SLEM_OK)
    return st;
  if (o->shard.count > 0) {
    if (count < 0)
      return slem_error(err, SLEM_EINVAL, "%s: the number of vectors is not known before reading "
                        "it (text, a pipe, a file of /proc whose size says 0), "
                        "so it cannot be cut into shards",
                        slem_vecreader_name(r));
    slem_shard_range(&o->shard, (uint64_t)count, &lo, &hi);
    count = (int64_t)(hi - lo);
  }
  if (o->ids && slem_vecreader_count(r) >= 0 &&
      slem_ids_count(o->ids) != (uint64_t)slem_vecreader_count(r))
    return slem_error(err, SLEM_EFORMAT, "%s: %zu ids for the %" PRId64 " vectors of %s",
                      slem_ids_name(o->ids), slem_ids_count(o->ids), slem_vecreader_count(r),
                      slem_vecreader_name(r));
  if (o->ids && slem_vecreader_count(r) < 0)
    return slem_error(err, SLEM_EINVAL, "%s: --ids needs an input whose number of vectors its "
                      "header or size tells", slem_vecreader_name(r));
  if (slem_vecreader_dim(r) != d)
    return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but %s%s has dimension %zu",
                      slem_vecreader_name(r), slem_vecreader_dim(r), cache ? "the cache " : "",
                      against, d);
  if ((st = slem_encoder_choose(&ops, cache, o, err)) != SLEM_OK) return st;
  if (o->groups) {
    if ((st = slem_groups_new(&groups, o->groups, d, err)) != SLEM_OK) goto done;
    count = (int64_t)slem_groups_count(groups);
  }
  if ((st = ops->new_(&enc, cache, o, block, err)) != SLEM_OK) goto done;
  lane[0] = (Lane){.ops = ops, .enc = enc};
  /* two lanes where they can overlap (the BLAS has threads, the pool starts); what the
   * second needs (its state, a buffer of each side) failing leaves one, as before */
  if (!o->groups && ops->overlap && slem_blas_par_workers() > 1 &&
      (pooled = slem_blas_pool_begin())) {
    SlemError spare;
    if (ops->new_(&lane[1].enc, cache, o, block, &spare) == SLEM_OK) {
      lane[1].ops = ops;
      nlanes = LANES;
    }
  }
  out_dim = ops->out_dim(enc, &f64);
  esize = f64 ? sizeof(double) : sizeof(float);
  for (int i = 0; i <= nlanes; i++)
    if (!(ybuf[i] = slem_mem_alloc_large(block * out_dim * esize))) {
      if (i == LANES) { /* the second lane's: one lane */
        nlanes = 1;
        break;
      }
      st = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
      goto done;
    }
  if ((st = slem_vecwriter_open(&w, output, ofmt, out_dim, count, err)) ||
      (st = slem_vecwriter_set_dtype(w, f64 ? SLEM_DTYPE_F8 : o->dtype, err)) ||
      (st = set_meta(w, cache, r, o, ops, enc, lo, err)))
    goto done;
  /* a shard's blocks are those of a run over all the rows: it starts at the block that holds
   * its first row. Where it can seek, its rows alone are read, and zeros stand for the rows
   * of its first and last blocks outside it: a descriptor's bits depend on its place in its
   * GEMM call and on the call's rows, not on the other rows' values, so the shard's rows
   * come out as in the whole run, and a record outside it (a NaN, another dimension) refuses
   * no shard, whatever the block. Zeros, not copies of its rows: an encoder that refuses a
   * row (a kernel of histograms, a negative value) names it at its own record. */
  if (o->shard.count > 0 && slem_vecreader_can_seek(r)) {
    row = lo / block * block;
    if (lo > 0 && (st = slem_vecreader_seek(r, lo, err)) != SLEM_OK) goto done;
    win = 1;
    front = lo - row;
    span = (uint64_t)slem_vecreader_count(r) - row;
  }
  y = ybuf[0];
  wj = (WriteJob){w, f64};
  f32 = !o->groups && ops->takes_f32 && ops->takes_f32(enc) && slem_vecreader_f32_exact(r);
  if ((st = win ? slem_prefetch_new_window(&pf, r, block, f32, front, hi - lo, span, err)
                : slem_prefetch_new(&pf, r, block, f32, err)) != SLEM_OK ||
      (!o->groups && (st = slem_writeback_new(&wb, write_job, &wj, err)) != SLEM_OK))
    goto done;
  if (nlanes > 1) {
    SlemError spare;
    if (slem_prefetch_keep(pf, nlanes, &spare) != SLEM_OK) nlanes = 1; /* no third block */
  }
  for (int i = 0; i < nlanes; i++) {
    lane[i].f32 = f32;
    lane[i].od = out_dim;
    lane[i].f64 = f64;
    lane[i].what = o->projections ? "projection" : o->mode == SLEM_ENCODE_CLASSIFIER
                                                       ? "classifier" : "descriptor";
  }
  if (nlanes > 1 && !(lane_start(&lane[0]) && lane_start(&lane[1]))) {
    lane_stop(&lane[0]); /* the blocks one at a time on this thread, the units on the pool */
    nlanes = 1;
  }
  /* from here the reader belongs to the prefetch thread: records are counted here */
  for (;;) {
    void *rows;
    size_t got;
    size_t skip, keep, all;
    /* the oldest block written once every lane is busy: its input is given back by the
     * next slem_prefetch_next() */
    if (nfly == nlanes && (st = land(fly, &nfly, wb, res, o, &covered, err)) != SLEM_OK) break;
    if ((st = slem_prefetch_next(pf, &rows, &got, err)) != SLEM_OK || got == 0) break;
    /* the part of the block inside the shard: rows [lo, hi) of the input. The whole block
     * is encoded all the same, so that every row sits at the place of the same GEMM call as
     * in a run over all the rows: a shard's descriptors are then those of the whole run,
     * byte for byte (a GEMM's rows depend on where they fall in the call). */
    all = got;
    skip = row < lo ? (size_t)(lo - row < got ? lo - row : got) : 0;
    keep = got - skip;
    if (row + got > hi) keep -= (size_t)(row + got - hi < keep ? row + got - hi : keep);
    row += got;
    if (keep == 0) {
      if (row >= hi) break;
      continue;
    }
    if (groups) { /* rows are summed per group; the means are encoded at the end */
      if ((st = slem_groups_add(groups, rows, got, slem_vecreader_name(r), err)) != SLEM_OK)
        break;
      continue;
    }
    /* the lanes take the blocks in turn; a block is written on the writing thread while
     * the next ones are read and encoded */
    y = ybuf[nblocks % (size_t)(nlanes + 1)];
    fly[nfly] = (InFlight){&lane[nblocks % (size_t)nlanes], y + skip * out_dim * esize, keep};
    /* the lane's last block has landed: its state is idle */
    if (ops->count_rows) ops->count_rows(fly[nfly].lane->enc, skip, skip + keep);
    lane_put(fly[nfly++].lane, y, rows, all, slem_vecreader_name(r), row - all + 1);
    nblocks++;
    if (row >= hi) break;
  }
  /* the blocks still in the lanes, in order; after an error, only waited for */
  while (nfly > 0) {
    if (st == SLEM_OK) {
      st = land(fly, &nfly, wb, res, o, &covered, err);
    } else {
      lane_wait(fly[0].lane, NULL);
      memmove(fly, fly + 1, --nfly * sizeof *fly);
    }
  }
  if (wb) {
    double wr, wt;
    int wst = slem_writeback_finish(wb, st == SLEM_OK ? err : NULL);
    if (st == SLEM_OK) st = wst;
    slem_writeback_times(wb, &wr, &wt);
    res->phases.write += wr;
    res->phases.wait_write += wt;
    slem_writeback_free(wb);
    wb = NULL;
  }
  if (pf) {
    double rd, wt;
    slem_prefetch_times(pf, &rd, &wt);
    res->phases.read += rd;
    res->phases.wait_read += wt;
  }
  slem_prefetch_free(pf); /* before the reader it reads, and before the output is final */
  pf = NULL;
  if (st == SLEM_OK && groups) {
    const double *means;
    size_t ng = slem_groups_count(groups);
    if ((st = slem_groups_finish(groups, slem_vecreader_name(r), &means, err)) != SLEM_OK)
      goto done;
    for (size_t g = 0; g < ng && st == SLEM_OK; g += block) {
      size_t b = ng - g < block ? ng - g : block;
      Lane gl = lane[0]; /* for check_finite(): the groups' rows, named as ops->run names them */
      gl.y = y;
      gl.name = slem_vecreader_name(r);
      gl.first = g + 1;
      if ((st = ops->run(enc, y, means + g * d, b, slem_vecreader_name(r), g + 1,
                         err)) == SLEM_OK &&
          (st = check_finite(&gl, y, b, err)) == SLEM_OK)
        st = write_rows(w, f64, y, b, err);
      res->n += b;
    }
  }
  if (st == SLEM_OK && o->finish) st = o->finish(o->finish_ctx, res->n, err);
  if (st == SLEM_OK) {
    t0 = slem_now();
    st = slem_vecwriter_close(w, err);
    res->phases.write += slem_now() - t0;
    w = NULL;
  }
  if (ops->counts)
    for (int i = 0; i < LANES; i++)
      if (lane[i].enc) ops->counts(lane[i].enc, res);
done:
  res->phases.wall = slem_now() - t_start;
  for (int i = 0; i < LANES; i++) lane_stop(&lane[i]); /* idle: every block was waited for */
  if (pooled) slem_blas_pool_end();
  slem_writeback_free(wb); /* before the output it writes */
  slem_prefetch_free(pf);
  slem_vecwriter_abort(w);
  if (ops) {
    ops->free(enc);
    ops->free(lane[1].enc);
  }
  slem_groups_free(groups);
  for (int i = 0; i <= LANES; i++) free(ybuf[i]);
  return st;
}

typedef struct {
  const SlemEncStreamFiles *files;
  uint64_t total;
} Progress;

static void on_progress(void *ctx, uint64_t done) {
  const Progress *p = ctx;
  p->files->progress(p->files->progress_ctx, done, p->total);
}

int slem_encstream_run_files(const SlemEncStreamFiles *f, const char *output,
                             const SlemEncStreamOpts *opts, SlemEncStreamResult *res, int *usage,
                             SlemError *err) {
  SlemEncStreamOpts o = *opts;
  SlemCache *cache = NULL;
  SlemVecReader *r = NULL;
  SlemIds *ids = NULL, *groups = NULL;
  const SlemEncoderOps *ops;
  Progress pr = {f, 0};
  int st, opt_error = 0;
  memset(res, 0, sizeof *res);
  if ((st = slem_encstream_check(&o, output, f->ids != NULL, f->groups != NULL, err)) != SLEM_OK) {
    opt_error = 1;
    goto done;
  }
  /* an empty ids file goes with an empty input (checked against the count by the run) */
  if ((f->ids && (st = slem_ids_read_empty(&ids, f->ids, err)) != SLEM_OK) ||
      (st = slem_cache_read(&cache, f->cache, err)) != SLEM_OK ||
      /* a night with no new images is an empty segment, not an error */
      (st = slem_vecreader_open_empty(&r, f->input, f->input_format, cache->d, err)) != SLEM_OK)
    goto done;
  o.ids = ids;
  /* the same cache on another BLAS core: descriptors that differ in their last bits */
  if (f->warn && slem_arith_differ(slem_cache_arith(cache), slem_arith_name())) {
    char core[64], msg[2 * SLEM_ERRMSG_MAX];
    slem_arith_core_of(slem_cache_arith(cache), core, sizeof core);
    snprintf(msg, sizeof msg, "%s was made on the BLAS core %s, but this encoding runs on %s: "
             "the descriptors differ in their last bits from those encoded on the cache's core "
             "(OPENBLAS_CORETYPE=%s)", f->cache, slem_cache_arith(cache), slem_arith_name(), core);
    f->warn(f->warn_ctx, msg);
  }
  if (f->groups && (st = slem_ids_labels_read(&groups, f->groups, err)) != SLEM_OK) goto done;
  o.groups = groups;
  /* options that this cache's encoder cannot honour are the options' errors (encoder.h) */
  if ((st = slem_encoder_choose(&ops, cache, &o, err)) != SLEM_OK) {
    opt_error = 1;
    goto done;
  }
  o.progress = NULL;
  o.progress_ctx = NULL;
  if (f->progress) {
    int64_t count = slem_vecreader_count(r);
    pr.total = count > 0 ? (uint64_t)count : 0;
    if (o.shard.count > 0) {
      uint64_t lo, hi;
      slem_shard_range(&o.shard, pr.total, &lo, &hi);
      pr.total = hi - lo;
    }
    o.progress = on_progress;
    o.progress_ctx = &pr;
  }
  st = slem_encstream_run(cache, r, output, &o, res, err);
done:
  if (usage) *usage = st != SLEM_OK && opt_error;
  slem_ids_free(ids);
  slem_vecreader_free(r);
  slem_cache_free(cache);
  slem_ids_free(groups);
  return st;
}
