#include "variant.h"

#include <string.h>

/* The variants: to add one, define slem_variant_NAME in lib/encode/var_NAME.c and add
 * X(NAME) here; the Makefile builds every C file of lib/. Fits and encoders are asked in
 * this order, the first that takes the options deciding: basic first (it takes --basic
 * with any cache, and refuses all but a full linear one, so the other encoders never see
 * that option); kernel recursive before kernel and nubeta before recursive (their options
 * are those and more); the linear family's fits before linear's, which takes whatever is
 * left. Encoders of different kinds take disjoint caches, so the rest decides nothing. */
#define SLEM_VARIANTS                                                                     \
  X(basic) X(esvm) X(diagonal) X(krec) X(kernel) X(nubeta) X(recursive) X(partial) X(mixed) \
  X(pca) X(whitening) X(linear)

#define X(name) extern const SlemVariant slem_variant_##name;
SLEM_VARIANTS
#undef X

#define X(name) &slem_variant_##name,
static const SlemVariant *const variants[] = {SLEM_VARIANTS};
#undef X

size_t slem_variants_count(void) { return sizeof variants / sizeof *variants; }

const SlemVariant *slem_variants_get(size_t i) { return variants[i]; }

const SlemVariant *slem_variants_by_option(const char *name) {
  for (size_t i = 0; i < slem_variants_count(); i++)
    if (slem_optspec_find(variants[i]->fit_options, name)) return variants[i];
  return NULL;
}

const SlemOptSpec *slem_variants_option(const SlemOptSpec *common, int fit, size_t i) {
  for (; common && common->name; common++, i--)
    if (i == 0) return common;
  for (size_t v = 0; v < slem_variants_count(); v++) {
    const SlemOptSpec *t = fit ? variants[v]->fit_options : variants[v]->encode_options;
    for (; t && t->name; t++, i--)
      if (i == 0) return t;
  }
  return NULL;
}

const SlemOptSpec *slem_variants_option_named(const SlemOptSpec *common, int fit,
                                              const char *name) {
  const SlemOptSpec *s;
  for (size_t i = 0; (s = slem_variants_option(common, fit, i)); i++)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}
