#include "fit.h"

/* The fits: to add one, define slem_fit_NAME in the file of the variant's computation and
 * add X(NAME) here. The order decides where options overlap: kernel recursive before
 * kernel, the recursive stages (nubeta before recursive) before the linear family, whose
 * plain linear fit takes whatever is left. */
#define SLEM_FITS X(krec) X(kernel) X(nubeta) X(recursive) X(partial) X(mixed) X(whiten) X(linear)

#define X(name) extern const SlemFitOps slem_fit_##name;
SLEM_FITS
#undef X

#define X(name) &slem_fit_##name,
static const SlemFitOps *const fits[] = {SLEM_FITS};
#undef X

const SlemFitOps *slem_fits_choose(const SlemNegstatsOpts *o) {
  for (size_t i = 0; i + 1 < sizeof fits / sizeof *fits; i++)
    if (fits[i]->takes(o)) return fits[i];
  return fits[sizeof fits / sizeof *fits - 1];
}
