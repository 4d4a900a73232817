#include "fit.h"

#include "variant.h"

const SlemFitOps *slem_fits_choose(const SlemNegstatsOpts *o) {
  const SlemFitOps *last = NULL;
  for (size_t i = 0; i < slem_variants_count(); i++) {
    const SlemFitOps *f = slem_variants_get(i)->fit;
    if (f && f->takes(o)) return f;
    if (f) last = f;
  }
  return last; /* the table's last fit, linear's, which takes any options */
}
