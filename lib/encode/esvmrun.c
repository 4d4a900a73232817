/* slem-esvm as one library call (esvmrun.h). */
#define _POSIX_C_SOURCE 200809L
#include "esvmrun.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "encstream.h"
#include "ids.h"

void slem_esvmrun_opts_init(SlemEsvmRunOpts *opts) {
  memset(opts, 0, sizeof *opts);
  slem_esvm_opts_init(&opts->esvm);
  opts->input = opts->output = "-";
  opts->format = opts->output_format = SLEM_FMT_AUTO;
  opts->input_format = opts->neg_format = SLEM_FMT_END;
  opts->dtype = SLEM_DTYPE_F4;
  opts->block = 256;
}

static int is_stdin(const char *path) { return path && strcmp(path, "-") == 0; }

int slem_esvmrun_check(const SlemEsvmRunOpts *o, SlemError *err) {
  SlemFormat ofmt = o->output_format;
  int st;
  if (!o->negatives) return slem_error(err, SLEM_EINVAL, "no negatives: give -n NEGATIVES");
  if (is_stdin(o->input ? o->input : "-") && is_stdin(o->negatives))
    return slem_error(err, SLEM_EINVAL, "the negatives and the input cannot both be stdin");
  if (ofmt == SLEM_FMT_AUTO && (st = slem_format_for_output(&ofmt, o->output, err)) != SLEM_OK)
    return st;
  return slem_encstream_check_dtype(o->dtype, NULL, ofmt, o->esvm.classifier, err);
}

/* "'ID'" with ids, else "vector N" (from 1); "" for UINT64_MAX (none) */
static void name_of(char *buf, const SlemIds *ids, uint64_t i) {
  if (i == UINT64_MAX) buf[0] = '\0';
  else if (ids && i < slem_ids_count(ids))
    snprintf(buf, SLEM_ESVMRUN_NAME_MAX, "'%s'", slem_ids_get(ids, i));
  else snprintf(buf, SLEM_ESVMRUN_NAME_MAX, "vector %" PRIu64, i + 1);
}

/* The ids of an input whose count only reading tells, before the output is final. */
typedef struct IdsCheck {
  const SlemIds *ids;
  const char *path;
} IdsCheck;

static int check_ids(void *ctx, uint64_t rows, SlemError *err) {
  const IdsCheck *c = ctx;
  if (c->ids && slem_ids_count(c->ids) != rows)
    return slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %" PRIu64 " vectors", c->path,
                      slem_ids_count(c->ids), rows);
  return SLEM_OK;
}

/* The progress of the loop, with the input's count. */
typedef struct Progress {
  const SlemEsvmRunOpts *o;
  uint64_t total;
} Progress;

static void on_progress(void *ctx, uint64_t done) {
  const Progress *p = ctx;
  p->o->progress(p->o->progress_ctx, done, p->total);
}

int slem_esvmrun(const SlemEsvmRunOpts *o, SlemEsvmRunResult *res, SlemError *err) {
  SlemVecReader *nr = NULL, *r = NULL;
  SlemEsvm *esvm = NULL;
  SlemIds *ids = NULL;
  SlemEncStreamOpts eopts;
  SlemEncStreamResult eres;
  SlemFormat ofmt = o->output_format;
  const char *output = o->output ? o->output : "-", *input = o->input ? o->input : "-";
  IdsCheck idc;
  Progress progress = {o, 0};
  int st;

  memset(res, 0, sizeof *res);
  if ((st = slem_esvmrun_check(o, err)) != SLEM_OK) return st;
  if (ofmt == SLEM_FMT_AUTO && (st = slem_format_for_output(&ofmt, output, err)) != SLEM_OK)
    return st;
  if ((o->ids && (st = slem_ids_read(&ids, o->ids, err)) != SLEM_OK) ||
      (st = slem_vecreader_open(&nr, o->negatives,
                                o->neg_format == SLEM_FMT_END ? o->format : o->neg_format,
                                err)) != SLEM_OK ||
      (st = slem_esvm_new(&esvm, nr, &o->esvm, err)) != SLEM_OK ||
      (st = slem_vecreader_open(&r, input,
                                o->input_format == SLEM_FMT_END ? o->format : o->input_format,
                                err)) != SLEM_OK)
    goto done;
  if (slem_vecreader_dim(r) != slem_esvm_dim(esvm)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives %s have dimension "
                    "%zu", slem_vecreader_name(r), slem_vecreader_dim(r),
                    slem_vecreader_name(nr), slem_esvm_dim(esvm));
    goto done;
  }
  progress.total = slem_vecreader_count(r) > 0 ? (uint64_t)slem_vecreader_count(r) : 0;
  /* ids of an input whose count is known are checked before any output is written */
  if (ids && slem_vecreader_count(r) >= 0 &&
      slem_ids_count(ids) != (uint64_t)slem_vecreader_count(r)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %" PRId64 " vectors", o->ids,
                    slem_ids_count(ids), slem_vecreader_count(r));
    goto done;
  }
  /* the loop of slem-encode (encstream.h), with the exemplar SVMs as its encoder */
  slem_encstream_opts_init(&eopts);
  eopts.block = o->block;
  eopts.format = ofmt;
  eopts.dtype = o->dtype;
  eopts.esvm = esvm;
  eopts.esvm_d = slem_esvm_dim(esvm);
  eopts.progress = o->progress ? on_progress : NULL;
  eopts.progress_ctx = &progress;
  eopts.finish = check_ids;
  eopts.finish_ctx = &idc;
  idc.ids = ids;
  idc.path = o->ids;
  if ((st = slem_encstream_run(NULL, r, output, &eopts, &eres, err)) != SLEM_OK) goto done;
  res->n = eres.n;
  res->loosened = slem_esvm_loosened(esvm);
  res->unconverged = slem_esvm_unconverged(esvm);
  res->zeros = slem_esvm_zeros(esvm);
  name_of(res->first_loosened, ids, slem_esvm_first_loosened(esvm));
  name_of(res->first_zero, ids, slem_esvm_first_zero(esvm));
done:
  slem_esvm_free(esvm);
  slem_vecreader_free(r);
  slem_vecreader_free(nr);
  slem_ids_free(ids);
  return st;
}
