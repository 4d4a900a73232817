/* What the encoders of the table share (encoder.h): the refusal, by the encoders of the
 * linear family, of the options only a kernel cache gives. The table is encoder.c's. */
#include "encoder.h"

int slem_encoder_refuse_kernel_options(const SlemCache *cache, const SlemEncStreamOpts *opts,
                                       SlemError *err) {
  if (opts->couple) {
    slem_error(err, SLEM_EINVAL, "--couple needs a kernel cache made with slem-negstats "
               "--couple: %s is linear", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  if (opts->projections) {
    slem_error(err, SLEM_EINVAL, "--projections need a kernel cache (slem-negstats --kernel): "
               "%s is not one", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  if (opts->coordinates) {
    slem_error(err, SLEM_EINVAL, "--coordinates need a kernel cache (slem-negstats --kernel): "
               "%s is not one", slem_cache_path(cache));
    return SLEM_ENC_REFUSED;
  }
  return SLEM_ENC_MINE;
}
