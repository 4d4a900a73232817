/* Encoding of the public API (slem.h): the options of slem-encode by name, and the rows of
 * an array encoded into the caller's buffer through the encoder that slem-encode chooses
 * (encoder.h), a block at a time: a descriptor depends on its row and the cache alone
 * (position-free arithmetic), so the rows are the very float32 bytes slem-encode writes,
 * whatever the block and the threads. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "blas.h"
#include "cache.h"
#include "encoder.h"
#include "encstream.h"
#include "mem.h"

struct SlemEncodeOptions {
  SlemEncStreamOpts o;
  char **texts; /* the copies of the values set, which o borrows */
  size_t ntexts;
};

/* The options as slem-encode starts from them: blocks by dimension and threads. */
static void encode_defaults(SlemEncStreamOpts *o) {
  slem_encstream_opts_init(o);
  o->block = 0;
}

int slem_encode_options_new(SlemEncodeOptions **out, SlemError *err) {
  SlemEncodeOptions *e;
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_encode_options_new: out is NULL");
  if (!(*out = e = calloc(1, sizeof *e))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  encode_defaults(&e->o);
  return SLEM_OK;
}

void slem_encode_options_free(SlemEncodeOptions *opts) {
  if (!opts) return;
  for (size_t i = 0; i < opts->ntexts; i++) free(opts->texts[i]);
  free(opts->texts);
  free(opts);
}

/* slem-encode's options about its output file, which rows in the caller's float32 buffer
 * have none of */
static const char *const file_options[] = {"output-format", "dtype", "shard", NULL};

int slem_encode_options_set(SlemEncodeOptions *opts, const char *name, const char *value,
                            SlemError *err) {
  char *copy = NULL, **grown;
  int st;
  if (!opts || !name)
    return slem_error(err, SLEM_EINVAL, "slem_encode_options_set: no %s (a null pointer)",
                      opts ? "name" : "options");
  for (const char *const *f = file_options; *f; f++)
    if (strcmp(name, *f) == 0)
      return slem_error(err, SLEM_EINVAL, "--%s is slem-encode's, for its output file: "
                        "slem_encode() writes float32 rows, all of them, into the caller's "
                        "buffer", name);
  if (!(grown = realloc(opts->texts, (opts->ntexts + 1) * sizeof *grown)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  opts->texts = grown;
  if (value && !(copy = strdup(value))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_encstream_opts_set(&opts->o, name, copy, err)) != SLEM_OK) {
    free(copy);
    return st;
  }
  if (copy) opts->texts[opts->ntexts++] = copy;
  return SLEM_OK;
}

/* The encoder of cache with opts (NULL: defaults) in *ops and its options in *o, the rules
 * of slem-encode checked: output float32 rows (slem_encstream_check() as for an fvecs
 * file). Errors: SLEM_EINVAL with the tool's messages. */
static int choose(const SlemEncoderOps **ops, SlemEncStreamOpts *o, const SlemCache *cache,
                  const SlemEncodeOptions *opts, SlemError *err) {
  int st;
  if (opts) *o = opts->o;
  else encode_defaults(o);
  o->format = SLEM_FMT_FVECS; /* float32 rows, as an fvecs output holds them */
  o->progress = NULL;
  if (!cache) return slem_error(err, SLEM_EINVAL, "slem_encode: no cache (a null pointer)");
  if ((st = slem_encstream_check(o, NULL, 0, 0, err)) != SLEM_OK) return st;
  return slem_encoder_choose(ops, cache, o, err);
}

/* A new state of ops for blocks of rows in *enc, its values per row in *dim. Errors: those
 * of the encoder's new_(), SLEM_EINVAL for rows of doubles (kernel projections). */
static int new_state(void **enc, size_t *dim, const SlemEncoderOps *ops, const SlemCache *cache,
                     const SlemEncStreamOpts *o, size_t rows, SlemError *err) {
  int f64 = 0, st;
  *enc = NULL;
  if ((st = ops->new_(enc, cache, o, rows, err)) != SLEM_OK) return st;
  *dim = ops->out_dim(*enc, &f64);
  if (f64) {
    ops->free(*enc);
    *enc = NULL;
    return slem_error(err, SLEM_EINVAL, "--projections are rows of doubles for slem-match -c "
                      "(slem_search_kernel() scores raw vectors instead), not float32 rows");
  }
  return SLEM_OK;
}

size_t slem_encode_dim(const SlemCache *cache, const SlemEncodeOptions *opts, SlemError *err) {
  const SlemEncoderOps *ops = NULL;
  SlemEncStreamOpts o;
  void *enc = NULL;
  size_t dim = 0;
  if (choose(&ops, &o, cache, opts, err) != SLEM_OK ||
      new_state(&enc, &dim, ops, cache, &o, 1, err) != SLEM_OK)
    return 0;
  ops->free(enc);
  return dim;
}

/* SLEM_ENUMERIC for the first row of y(b, dim) that holds a value that is not finite, as
 * slem-encode refuses to write it (encstream.c), naming its row (first + i, from 0). */
static int check_finite(const float *y, size_t b, size_t dim, const char *name, uint64_t first,
                        const char *what, SlemError *err) {
  for (size_t i = 0; i < b; i++)
    for (size_t j = 0; j < dim; j++)
      if (!isfinite(y[i * dim + j]))
        return slem_error(err, SLEM_ENUMERIC, "%s: row %" PRIu64 ": its %s is not finite in "
                          "float32 (value %zu): the vector's magnitude is beyond what the "
                          "encoding's arithmetic holds; scale the vectors down", name,
                          first + i, what, j + 1);
  return SLEM_OK;
}

int slem_encode(const SlemCache *cache, const SlemArray *x, const SlemEncodeOptions *opts,
                int threads, float *out, SlemError *err) {
  const SlemEncoderOps *ops = NULL;
  SlemEncStreamOpts o;
  SlemApiThreads th = {0};
  SlemVecReader *r = NULL;
  void *enc = NULL, *rows = NULL;
  size_t dim = 0, block, done = 0;
  const char *what;
  int st, f32;
  if ((st = choose(&ops, &o, cache, opts, err)) != SLEM_OK) return st;
  if ((st = slem_api_array_check(x, "rows", cache->d, "the cache's dimension", err)) != SLEM_OK)
    return st;
  if (!out) return slem_error(err, SLEM_EINVAL, "slem_encode: no output buffer (out NULL)");
  if ((st = slem_api_threads_begin(&th, threads, err)) != SLEM_OK) return st;
  block = o.block ? o.block : slem_encstream_block(cache->d, slem_blas_threads());
  if ((st = slem_api_array_reader(&r, x, "rows", err)) != SLEM_OK ||
      (st = new_state(&enc, &dim, ops, cache, &o, block, err)) != SLEM_OK)
    goto done;
  /* float32 rows as they are, where the encoder takes them (as the stream reads them) */
  f32 = ops->takes_f32 && ops->takes_f32(enc) && slem_vecreader_f32_exact(r);
  what = o.mode == SLEM_ENCODE_CLASSIFIER ? "classifier" : "descriptor";
  if (!(rows = slem_mem_alloc_large(block * cache->d * (f32 ? sizeof(float) : sizeof(double))))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto done;
  }
  for (;;) {
    size_t got;
    float *y = out + done * dim;
    st = f32 ? slem_vecreader_read_f32(r, rows, block, &got, err)
             : slem_vecreader_read(r, rows, block, &got, err);
    if (st != SLEM_OK || got == 0) break;
    st = f32 ? ops->run_f32(enc, y, rows, got, "rows", done + 1, err)
             : ops->run(enc, y, rows, got, "rows", done + 1, err);
    if (st == SLEM_OK) st = check_finite(y, got, dim, "rows", done, what, err);
    if (st != SLEM_OK) break;
    done += got;
  }
done:
  free(rows);
  if (enc) ops->free(enc);
  slem_vecreader_free(r);
  slem_api_threads_end(&th);
  return st;
}
