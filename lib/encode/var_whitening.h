/* The ops that the whitening encoder (var_whitening.c, slem-encode --alpha) and the
 * PCA-reduced one (var_pca.c) share: both run a SlemWhitener (whiten.h); only what they
 * accept differs. The signatures are SlemEncoderOps' (encoder.h), whose contracts hold. */
#ifndef SLEM_VAR_WHITENING_H
#define SLEM_VAR_WHITENING_H

#include "encoder.h"

int slem_enc_whiten_new(void **self, const SlemCache *cache, const SlemEncStreamOpts *opts,
                        size_t max_rows, SlemError *err);
size_t slem_enc_whiten_out_dim(const void *self, int *f64);
int slem_enc_whiten_run(void *self, void *y, const double *x, size_t b, const char *name,
                        uint64_t first_record, SlemError *err);
void slem_enc_whiten_counts(const void *self, SlemEncStreamResult *res);
void slem_enc_whiten_count_rows(void *self, size_t lo, size_t hi);
void slem_enc_whiten_free(void *self);

#endif
