#include "encstream.h"

#include <stdlib.h>
#include <string.h>

#include "kproj.h"
#include "prefetch.h"

void slem_encstream_opts_init(SlemEncStreamOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->mode = SLEM_ENCODE_UNIT;
  opts->theta = 1;
  opts->precision = SLEM_PRECISION_AUTO;
  opts->block = 1024;
  opts->format = SLEM_FMT_AUTO;
  opts->dtype = SLEM_DTYPE_F4;
}

int slem_encstream_run(const SlemCache *cache, SlemVecReader *r, const char *output,
                       const SlemEncStreamOpts *o, SlemEncStreamResult *res, SlemError *err) {
  size_t block = o->block ? o->block : 1024, out_dim;
  SlemEncoder *enc = NULL;
  SlemKProj *kp = NULL;
  SlemPrefetch *pf = NULL;
  SlemVecWriter *w = NULL;
  float *y = NULL;
  int st;
  memset(res, 0, sizeof *res);
  if (slem_vecreader_dim(r) != cache->d)
    return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the cache %s has dimension %zu",
                      slem_vecreader_name(r), slem_vecreader_dim(r), slem_cache_path(cache),
                      cache->d);
  if (cache->kind == SLEM_CACHE_KERNEL) {
    if (o->mode == SLEM_ENCODE_CLASSIFIER)
      return slem_error(err, SLEM_EINVAL, "%s: --classifier needs a linear cache",
                        slem_cache_path(cache));
    if ((st = slem_kproj_new(&kp, cache, block, err)) != SLEM_OK) goto done;
    out_dim = cache->r;
  } else {
    if ((st = slem_encoder_new(&enc, cache, o->mode, o->theta, block, err)) != SLEM_OK ||
        (st = slem_encoder_set_precision(enc, o->precision, NULL, err)) != SLEM_OK)
      goto done;
    out_dim = slem_encoder_out_dim(enc);
  }
  if (!(y = malloc(block * out_dim * sizeof *y))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto done;
  }
  if ((st = slem_vecwriter_open(&w, output, o->format, out_dim, slem_vecreader_count(r), err)) ||
      (st = slem_vecwriter_set_dtype(w, o->dtype, err)) ||
      (st = slem_prefetch_new(&pf, r, block, 0, err)))
    goto done;
  /* from here the reader belongs to the prefetch thread: records are counted here */
  for (;;) {
    void *rows;
    size_t got;
    if ((st = slem_prefetch_next(pf, &rows, &got, err)) != SLEM_OK || got == 0) break;
    if (kp) {
      if ((st = slem_kproj_run(kp, rows, got, slem_vecreader_name(r), res->n + 1, err)) != SLEM_OK)
        break;
      slem_kproj_descriptors(kp, y);
    } else {
      slem_encoder_run(enc, y, rows, got);
    }
    if ((st = slem_vecwriter_write(w, y, got, err)) != SLEM_OK) break;
    res->n += got;
    if (o->progress) o->progress(o->progress_ctx, res->n);
  }
  slem_prefetch_free(pf); /* before the reader it reads, and before the output is final */
  pf = NULL;
  if (st == SLEM_OK) {
    st = slem_vecwriter_close(w, err);
    w = NULL;
  }
  if (kp) res->clamps = slem_kproj_clamps(kp);
  if (enc) res->zeros = slem_encoder_zeros(enc);
done:
  slem_prefetch_free(pf);
  slem_vecwriter_abort(w);
  slem_encoder_free(enc);
  slem_kproj_free(kp);
  free(y);
  return st;
}
