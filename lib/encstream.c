#include "encstream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "ids.h"
#include "kproj.h"
#include "mem.h"
#include "recursive.h"
#include "whiten.h"
#include "prefetch.h"

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

/* The fingerprint the descriptors carry: the cache's, or, when the encoding chooses among
 * several descriptors of one cache (--alpha, --couple), the FNV-1a (64 bits) of the
 * cache's fingerprint followed by that choice, so that descriptors of two choices are not
 * taken for comparable. buf of 17 bytes. */
static const char *encoding_fingerprint(char *buf, const SlemCache *cache,
                                        const SlemEncStreamOpts *o) {
  char text[96];
  uint64_t h = 0xcbf29ce484222325ull;
  if (o->couple)
    snprintf(text, sizeof text, "%s:couple", slem_cache_fingerprint(cache));
  else if (o->alpha_set && o->alpha != -1)
    snprintf(text, sizeof text, "%s:alpha=%.17g", slem_cache_fingerprint(cache), o->alpha);
  else
    return slem_cache_fingerprint(cache);
  for (const char *p = text; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  snprintf(buf, 17, "%016llx", (unsigned long long)h);
  return buf;
}

/* What a descriptor container records: the cache, the input, the shard. */
static int set_meta(SlemVecWriter *w, const SlemCache *cache, SlemVecReader *r,
                    const SlemEncStreamOpts *o, uint64_t lo, SlemError *err) {
  SlemDescMeta m;
  char fp[17];
  /* only a container records it: the cache's fingerprint, hashed at its first use, is not
   * needed for the other formats */
  if (slem_vecwriter_format(w) != SLEM_FMT_SLEM) return SLEM_OK;
  memset(&m, 0, sizeof m);
  /* projections record the coupling in their layout, checked against the cache's */
  m.cache_fingerprint = o->projections ? slem_cache_fingerprint(cache) : encoding_fingerprint(fp, cache, o);
  m.cache_path = slem_cache_path(cache);
  m.input = slem_vecreader_name(r);
  m.input_count = slem_vecreader_count(r);
  m.shard_index = o->shard.index;
  m.shard_count = o->shard.count;
  m.first_row = lo;
  m.kind_of_rows = o->projections ? "kernel-projections"
                   : o->mode == SLEM_ENCODE_CLASSIFIER ? "classifiers" : "descriptors";
  if (o->projections) {
    m.kernel_d = cache->d;
    m.kernel_r = cache->r;
    m.kernel_couple = o->couple;
  }
  m.ids = o->ids;
  m.ids_first = lo;
  return slem_vecwriter_set_meta(w, &m, err);
}

int slem_encstream_run(const SlemCache *cache, SlemVecReader *r, const char *output,
                       const SlemEncStreamOpts *o, SlemEncStreamResult *res, SlemError *err) {
  size_t block = o->block ? o->block : 1024, out_dim;
  SlemEncoder *enc = NULL;
  SlemKProj *kp = NULL;
  SlemPrefetch *pf = NULL;
  SlemVecWriter *w = NULL;
  SlemGroups *groups = NULL;
  SlemWhitener *wh = NULL;
  SlemRecursive *rec = NULL;
  float *y = NULL;
  double *yd = NULL; /* projections: block rows of SLEM_KPROJ_WIDTH doubles */
  SlemFormat ofmt = o->format;
  uint64_t lo = 0, hi = UINT64_MAX, row = 0; /* the rows to encode, and the next row read */
  int64_t count = slem_vecreader_count(r);
  int st;
  memset(res, 0, sizeof *res);
  if (o->shard.count > 0) {
    if (count < 0)
      return slem_error(err, SLEM_EINVAL, "%s: the number of vectors is not known before reading "
                        "it (text, or a pipe), so it cannot be cut into shards",
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
  if (slem_vecreader_dim(r) != cache->d)
    return slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the cache %s has dimension %zu",
                      slem_vecreader_name(r), slem_vecreader_dim(r), slem_cache_path(cache),
                      cache->d);
  if (o->groups && (cache->kind == SLEM_CACHE_KERNEL || o->shard.count > 0))
    return slem_error(err, SLEM_EINVAL, "%s: groups of positives need a linear cache and the "
                      "whole input (no shard)", slem_cache_path(cache));
  if (o->groups) {
    if ((st = slem_groups_new(&groups, o->groups, cache->d, err)) != SLEM_OK) goto done;
    count = (int64_t)slem_groups_count(groups);
  }
  if (cache->kind == SLEM_CACHE_KERNEL) {
    if (o->mode == SLEM_ENCODE_CLASSIFIER)
      return slem_error(err, SLEM_EINVAL, "%s: --classifier needs a linear cache",
                        slem_cache_path(cache));
    if ((st = slem_kproj_new(&kp, cache, block, o->couple, err)) != SLEM_OK) goto done;
    out_dim = o->projections ? SLEM_KPROJ_WIDTH(cache->d, cache->r, o->couple) : cache->r;
  } else if (cache->kind == SLEM_CACHE_RECURSIVE) {
    if (o->mode == SLEM_ENCODE_CLASSIFIER || o->alpha_set)
      return slem_error(err, SLEM_EINVAL, "%s: a recursive cache gives unit descriptors only "
                        "(no --classifier, no --alpha)", slem_cache_path(cache));
    if ((st = slem_recursive_new(&rec, cache, block, err)) != SLEM_OK) goto done;
    out_dim = cache->d;
  } else if (o->alpha_set || cache->kind == SLEM_CACHE_PCA) {
    if (o->mode == SLEM_ENCODE_CLASSIFIER)
      return slem_error(err, SLEM_EINVAL, "%s: --classifier needs a full linear cache and no "
                        "--alpha", slem_cache_path(cache));
    if ((st = slem_whitener_new(&wh, cache, o->alpha, block, err)) != SLEM_OK) goto done;
    out_dim = slem_whitener_out_dim(wh);
  } else {
    if ((st = slem_encoder_new(&enc, cache, o->mode, o->theta, block, err)) != SLEM_OK ||
        (st = slem_encoder_set_precision(enc, o->precision, NULL, err)) != SLEM_OK)
      goto done;
    out_dim = slem_encoder_out_dim(enc);
  }
  if (o->projections) {
    if (ofmt == SLEM_FMT_AUTO && (st = slem_format_for_output(&ofmt, output, err)) != SLEM_OK)
      goto done;
    if (!kp || ofmt != SLEM_FMT_SLEM) {
      st = slem_error(err, SLEM_EINVAL, "%s: projections need a kernel cache and a container "
                      "output (.slem, or -F slem)", slem_cache_path(cache));
      goto done;
    }
  }
  if (o->projections ? !(yd = slem_alloc_large(block * out_dim * sizeof *yd))
                     : !(y = slem_alloc_large(block * out_dim * sizeof *y))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu vectors", block);
    goto done;
  }
  if ((st = slem_vecwriter_open(&w, output, ofmt, out_dim, count, err)) ||
      (st = slem_vecwriter_set_dtype(w, o->projections ? SLEM_DTYPE_F8 : o->dtype, err)) ||
      (st = set_meta(w, cache, r, o, lo, err)))
    goto done;
  /* a shard starts reading at the block that holds its first row: the blocks stay those of
   * a run over all the rows */
  if (lo > 0 && slem_vecreader_can_seek(r)) {
    row = lo / block * block;
    if ((st = slem_vecreader_seek(r, row, err)) != SLEM_OK) goto done;
  }
  if ((st = slem_prefetch_new(&pf, r, block, 0, err)) != SLEM_OK) goto done;
  /* from here the reader belongs to the prefetch thread: records are counted here */
  for (;;) {
    void *rows;
    size_t got;
    size_t skip, keep, all;
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
    if (yd) { /* the fixed-order projections, which slem_match() would compute */
      if ((st = slem_kproj_run_fixed(kp, rows, all, slem_vecreader_name(r), row - all + 1,
                                     err)) != SLEM_OK ||
          (slem_kproj_pack(kp, yd),
           st = slem_vecwriter_write_f64(w, yd + skip * out_dim, keep, err)) != SLEM_OK)
        break;
      res->n += keep;
      if (o->progress) o->progress(o->progress_ctx, res->n);
      if (row >= hi) break;
      continue;
    }
    if (kp) {
      if ((st = slem_kproj_run(kp, rows, all, slem_vecreader_name(r), row - all + 1, err)) !=
          SLEM_OK)
        break;
      slem_kproj_descriptors(kp, y);
    } else if (wh) {
      slem_whitener_run(wh, y, rows, all);
    } else if (rec) {
      slem_recursive_run(rec, y, rows, all);
    } else {
      slem_encoder_run(enc, y, rows, all);
    }
    got = keep;
    if ((st = slem_vecwriter_write(w, y + skip * out_dim, got, err)) != SLEM_OK) break;
    res->n += got;
    if (o->progress) o->progress(o->progress_ctx, res->n);
    if (row >= hi) break;
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
      if (wh) slem_whitener_run(wh, y, means + g * cache->d, b);
      else if (rec) slem_recursive_run(rec, y, means + g * cache->d, b);
      else slem_encoder_run(enc, y, means + g * cache->d, b);
      st = slem_vecwriter_write(w, y, b, err);
      res->n += b;
    }
  }
  if (st == SLEM_OK) {
    st = slem_vecwriter_close(w, err);
    w = NULL;
  }
  if (kp) res->clamps = slem_kproj_clamps(kp);
  if (enc) res->zeros = slem_encoder_zeros(enc);
  if (wh) res->zeros = slem_whitener_zeros(wh);
  if (rec) res->zeros = slem_recursive_zeros(rec);
done:
  slem_prefetch_free(pf);
  slem_vecwriter_abort(w);
  slem_encoder_free(enc);
  slem_kproj_free(kp);
  slem_groups_free(groups);
  slem_whitener_free(wh);
  slem_recursive_free(rec);
  free(y);
  free(yd);
  return st;
}
