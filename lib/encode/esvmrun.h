/* The pipeline of slem-esvm: the exemplar SVMs (esvm.h) of every vector of an input
 * against a pool of negatives, written by slem-encode's loop (encstream.h), in one call
 * that a test can drive. cmd/slem-esvm.c parses its options into SlemEsvmRunOpts, calls
 * slem_esvmrun_check() and slem_esvmrun(), and reports.
 */
#ifndef SLEM_ESVMRUN_H
#define SLEM_ESVMRUN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "esvm.h"
#include "vecs.h"

typedef struct SlemEsvmRunOpts {
  SlemEsvmOpts esvm;          /* the problems (esvm.h) */
  const char *negatives;      /* the pool of negatives (required; "-": stdin) */
  const char *input;          /* the vectors, one exemplar each ("-": stdin; the default) */
  const char *ids;            /* NULL, or the ids of the input's vectors, one a line: their
                                 count is checked, and the result names exemplars by them */
  const char *output;         /* "-" (the default): stdout */
  SlemFormat format;          /* of the input and the negatives (SLEM_FMT_AUTO: from the
                                 extension, else the content) */
  SlemFormat input_format, neg_format; /* SLEM_FMT_END (the default): format */
  SlemFormat output_format;   /* SLEM_FMT_AUTO (the default): from the output's name */
  SlemDtype dtype;            /* npy's element type (default float32) */
  size_t block;               /* vectors per block (default 256) */
  /* may be NULL: called with the exemplars trained so far and the input's count (0 when
   * only reading tells) */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
} SlemEsvmRunOpts;

#define SLEM_ESVMRUN_NAME_MAX 300

typedef struct SlemEsvmRunResult {
  uint64_t n;                 /* exemplars trained */
  uint64_t loosened;          /* solved to a looser tolerance (slem_esvm_loosened()) */
  uint64_t unconverged;       /* not even to 0.1 (slem_esvm_unconverged()) */
  uint64_t zeros;             /* w = 0 (slem_esvm_zeros()) */
  /* the first of each, for messages: "'ID'" with ids, else "vector N" (from 1); "" when
   * there is none */
  char first_loosened[SLEM_ESVMRUN_NAME_MAX], first_zero[SLEM_ESVMRUN_NAME_MAX];
} SlemEsvmRunResult;

/* Zeroes opts, then sets the defaults (slem_esvm_opts_init(), input and output "-", the
 * formats as above, float32, blocks of 256). Cannot fail. */
void slem_esvmrun_opts_init(SlemEsvmRunOpts *opts);

/* Checks the rules between options alone, before anything is read: negatives given; not
 * the negatives and the input both from stdin; an output format known (from the output's
 * name when not given: slem_format_for_output()) that stores dtype (the rule of
 * slem_encstream_check_dtype()). Sets nothing. Errors: SLEM_EINVAL, with the tool's
 * message. */
int slem_esvmrun_check(const SlemEsvmRunOpts *opts, SlemError *err);

/* Runs slem-esvm: slem_esvmrun_check(); the ids, the negatives (slem_esvm_new()), the
 * input, checked against each other (the dimensions; the ids' count against a count the
 * input knows, before anything is written, else once all is read, before the output is
 * final); then every exemplar trained and written atomically (slem_encstream_run()).
 * res is filled on success. Errors: those of the steps, a message naming file and record
 * (SLEM_EINVAL for the options, SLEM_EFORMAT for the data, SLEM_EIO, SLEM_ENOMEM); nothing
 * is written on error. */
int slem_esvmrun(const SlemEsvmRunOpts *opts, SlemEsvmRunResult *res, SlemError *err);

#endif
