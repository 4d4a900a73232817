/* slem-encode: SLEM descriptors (or exemplar classifiers) of vectors against a cache. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/linalg/arith.h"
#include "../lib/formats/cache.h"
#include "../lib/encode/cachekinds.h"
#include "../lib/encode/slem_linear.h"
#include "../lib/encode/encoder.h"
#include "../lib/encode/encstream.h"
#include "../lib/io/ids.h"
#include "../lib/io/slem.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-encode [OPTION]... -c CACHE [INPUT]\n"
      "Write the SLEM descriptor A^-1 (x - mu) / |A^-1 (x - mu)| of every vector of\n"
      "INPUT (default: stdin), one row per vector, float32. With a kernel cache, the\n"
      "explicit kernel descriptor z / sqrt(z.z + u^2 / lambda^2) instead, r values per\n"
      "vector.\n"
      "\n"
      "  -c, --cache CACHE        negative statistics from slem-negstats (required)\n"
      "  -o, --output OUT         write here (default: stdout)\n"
      "  -f, --format FMT         input format (default: from the extension, else from\n"
      "                           the content)\n"
      "  -F, --output-format FMT  output format (default: from OUT's extension; fvecs\n"
      "                           to stdout)\n"
      "      --dtype T            npy values as f4 (float32, default), f2 (float16) or\n"
      "                           i1 (int8 holding round(127 v), for unit-norm\n"
      "                           descriptors)\n"
      "      --classifier         write the exemplar classifier instead: omega (d\n"
      "                           values) then nu, so that omega . z + nu scores a\n"
      "                           vector z; with a kernel cache in the factor's space\n"
      "                           (r + 1 values), which scores the --coordinates of a\n"
      "                           vector\n"
      "      --coordinates        kernel caches: write v, the coordinates of each\n"
      "                           vector in the factor's space (r values), for\n"
      "                           slem-match --affine\n"
      "      --theta T            weight of the positive in the classifier, or with\n"
      "                           --basic (default 1)\n"
      "      --basic              the authors' basic_encoder.m: (S0 + lambda I + theta\n"
      "                           x x^T)^-1 (theta x - mu), normalised; S0 the\n"
      "                           negatives' uncentred second moment, no bias (a full\n"
      "                           linear cache)\n"
      "      --alpha A            the whitening family: (Sigma + lambda I)^A (x - mu),\n"
      "                           normalised, from a cache made with slem-negstats\n"
      "                           --eigen (-1: SLEM, -0.5: PCA whitening, 0:\n"
      "                           centring); with a PCA cache (--pca R) the power of\n"
      "                           Lambda_R + lambda I (default -1)\n"
      "      --couple [MODE]      kernel caches made with slem-negstats --couple:\n"
      "                           couple the negatives with each vector (the ICD\n"
      "                           branch of the authors' slem_similarity.m); costs n\n"
      "                           (d + r) per vector. MODE exact (default): the\n"
      "                           coupled exemplars; authors: slem_similarity.m's\n"
      "                           score (1 / lambda^2, uncoupled N)\n"
      "      --projections        kernel caches: write what slem-match -c computes of\n"
      "                           each database vector (its features, v, z, N), in\n"
      "                           double, to a container (.slem), so that slem-match\n"
      "                           reads them instead\n"
      "      --groups FILE        several positives per exemplar: FILE names the group\n"
      "                           of each input vector, one name per line; one row per\n"
      "                           group, in order of first appearance, with x0 the\n"
      "                           mean of the group's vectors (linear caches only)\n"
      "      --precision P        auto (default), single or double: the arithmetic of\n"
      "                           the product with A^-1; auto is single (twice as\n"
      "                           fast) when A's condition number is at most 1e4,\n"
      "                           which keeps 1 - cos to the double result below 1e-6\n"
      "  -b, --block N            vectors per block (default: four 256-row chunks per\n"
      "                           thread, at least 1024; the descriptors do not depend\n"
      "                           on it)\n"
      "      --stats              print where the wall time went on stderr (read,\n"
      "                           compute, write, waits; see the man page)\n"
      "  -t, --threads N          BLAS threads (default: SLEM_THREADS, else all cores)\n"
      "      --shard I/N          encode only rows floor(I*R/N) .. floor((I+1)*R/N)-1\n"
      "                           of the R input rows (an input whose count is known:\n"
      "                           not text)\n"
      "      --ids FILE           the ids of the input's rows (one per line), kept in\n"
      "                           the container with the descriptors (slem-match names\n"
      "                           rows by them)\n"
      "  -q, --quiet              no progress or warnings\n"
      "  -h, --help               show this help and exit\n"
      "  -V, --version            show the version and the BLAS library, and exit\n"
      "\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-encode(1).\n",
      slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static void on_progress(void *ctx, uint64_t n) {
  cli_progress_of("vectors encoded", n, *(const uint64_t *)ctx);
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"cache", required_argument, 0, 'c'},     {"output", required_argument, 0, 'o'},
      {"format", required_argument, 0, 'f'},    {"output-format", required_argument, 0, 'F'},
      {"classifier", no_argument, 0, 'C'},      {"theta", required_argument, 0, 'T'},
      {"block", required_argument, 0, 'b'},     {"threads", required_argument, 0, 't'},
      {"quiet", no_argument, 0, 'q'},           {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},         {"precision", required_argument, 0, 'P'},
      {"dtype", required_argument, 0, 'Y'},
      {"shard", required_argument, 0, 'H'},        {"ids", required_argument, 0, 'J'},     {"groups", required_argument, 0, 'G'},
      {"alpha", required_argument, 0, 'A'},     {"couple", optional_argument, 0, 'K'},
      {"projections", no_argument, 0, 'R'},      {"coordinates", no_argument, 0, 'O'},
      {"stats", no_argument, 0, 'Z'},           {"basic", no_argument, 0, 'B'},
      {0, 0, 0, 0}};
  const char *cache_path = NULL, *output = "-", *input = "-", *groups_path = NULL;
  SlemFormat ifmt = SLEM_FMT_AUTO, ofmt = SLEM_FMT_AUTO;
  SlemEncodeMode mode = SLEM_ENCODE_UNIT;
  SlemPrecision precision = SLEM_PRECISION_AUTO;
  SlemDtype dtype = SLEM_DTYPE_F4;
  const char *dtype_arg = "f4";
  double theta = 1;
  double alpha = -1;
  int alpha_set = 0, couple = 0, projections = 0, coordinates = 0, basic = 0;
  int print_stats = 0, theta_set = 0, quiet = 0, c, status = CLI_EXIT_OK;
  long threads = 0;
  size_t block = 0; /* slem_encstream_block() */
  SlemCache *cache = NULL;
  SlemVecReader *r = NULL;
  SlemEncStreamOpts opts;
  SlemShard shard = {0, 0};
  const char *ids_path = NULL;
  SlemIds *ids = NULL;
  uint64_t total = 0;
  SlemEncStreamResult res;
  SlemIds *names = NULL;
  SlemError err;

  cli_init(argv[0]);
  while ((c = getopt_long(argc, argv, "c:o:f:F:b:t:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'c': cache_path = optarg; break;
    case 'o': output = optarg; break;
    case 'f':
      ifmt = cli_format("--format", optarg, 0);
      break;
    case 'F':
      ofmt = cli_format("--output-format", optarg, 1);
      break;
    case 'C': mode = SLEM_ENCODE_CLASSIFIER; break;
    case 'G': groups_path = optarg; break;
    case 'K': couple = cli_couple(argc, argv); break;
    case 'R': projections = 1; break;
    case 'B': basic = 1; break;
    case 'O': coordinates = 1; break;
    case 'A':
      alpha = cli_double("--alpha", optarg);
      alpha_set = 1;
      break;
    case 'Y':
      if (slem_dtype_parse(&dtype, optarg) != SLEM_OK)
        cli_usage_error("--dtype: '%s' is not f4, f2 or i1", optarg);
      dtype_arg = optarg;
      break;
    case 'P':
      if (slem_encode_precision_parse(&precision, optarg) != SLEM_OK)
        cli_usage_error("--precision: '%s' is not auto, single or double", optarg);
      break;
    case 'T':
      theta = cli_double("--theta", optarg);
      if (!(theta > 0)) cli_usage_error("--theta: must be positive");
      theta_set = 1;
      break;
    case 'Z': print_stats = 1; break;
    case 'b': block = (size_t)cli_long("--block", optarg, 1, 1L << 20); break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'q': quiet = 1; break;
    case 'H':
      if (slem_shard_parse(&shard, optarg, &err) != SLEM_OK) cli_usage_error("--shard: %s", err.msg);
      break;
    case 'J': ids_path = optarg; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, "c:o:f:F:b:t:qhV", longopts);
    }
  }
  if (!cache_path) cli_usage_error("no cache: give -c CACHE (made by slem-negstats)");
  if (optind < argc) input = argv[optind++]; else cli_stdin_hint("vectors");
  if (optind < argc) cli_usage_error("one input at a time: unexpected '%s'", argv[optind]);
  if (theta_set && mode != SLEM_ENCODE_CLASSIFIER && !basic)
    cli_usage_error("--theta goes with --classifier or --basic: the descriptor's direction does "
                    "not depend on theta");
  /* to stdout, the self-describing container unless a format is asked for */
  if (ofmt == SLEM_FMT_AUTO && strcmp(output, "-") == 0) ofmt = SLEM_FMT_SLEM;
  if (alpha_set && mode == SLEM_ENCODE_CLASSIFIER)
    cli_usage_error("--alpha gives unit descriptors, not classifiers: drop --classifier");
  if (ofmt == SLEM_FMT_AUTO && slem_format_for_output(&ofmt, output, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  if (dtype != SLEM_DTYPE_F4 && ofmt != SLEM_FMT_NPY)
    cli_usage_error("--dtype %s needs npy output (-F npy, or OUT.npy)", dtype_arg);
  if (dtype == SLEM_DTYPE_I1 && mode == SLEM_ENCODE_CLASSIFIER)
    cli_usage_error("--dtype i1 is for unit-norm descriptors, not classifiers");
  if (projections && ofmt != SLEM_FMT_SLEM)
    cli_usage_error("--projections are written to a container: give OUT.slem or -F slem");
  if (projections && mode == SLEM_ENCODE_CLASSIFIER)
    cli_usage_error("--projections are not classifiers: drop --classifier or --projections");
  if (coordinates && (mode == SLEM_ENCODE_CLASSIFIER || projections || couple))
    cli_usage_error("--coordinates go with none of --classifier, --projections, --couple");
  if (groups_path && shard.count > 0)
    cli_usage_error("--groups needs the whole input: not with --shard");
  {
    const char *inputs[4] = {input, cache_path, groups_path, ids_path};
    cli_refuse_stdin_twice(inputs, 4);
    cli_refuse_clobber(output, inputs, 4);
  }
  cli_threads(threads);

  slem_encstream_opts_init(&opts);
  opts.mode = mode;
  opts.theta = theta;
  opts.precision = precision;
  opts.block = block;
  opts.format = ofmt;
  opts.dtype = dtype;
  opts.shard = shard;
  if (ids_path && ofmt != SLEM_FMT_SLEM)
    cli_usage_error("--ids: ids travel in the container (.slem, or -F slem); give the ids file "
                    "to slem-match for the other formats");
  /* an empty ids file goes with an empty input (checked against the count below) */
  if ((ids_path && slem_ids_read_empty(&ids, ids_path, &err) != SLEM_OK) ||
      slem_cache_read(&cache, cache_path, &err) != SLEM_OK ||
      /* a night with no new images is an empty segment, not an error */
      slem_vecreader_open_empty(&r, input, ifmt, cache->d, &err) != SLEM_OK)
    goto fail;
  opts.ids = ids;
  /* the same cache on another BLAS core: descriptors that differ in their last bits */
  if (!quiet && slem_arith_differ(slem_cache_arith(cache), slem_arith_name())) {
    char core[64];
    slem_arith_core_of(slem_cache_arith(cache), core, sizeof core);
    cli_warn("%s was made on the BLAS core %s, but this encoding runs on %s: the descriptors "
             "differ in their last bits from those encoded on the cache's core "
             "(OPENBLAS_CORETYPE=%s)", cache_path, slem_cache_arith(cache), slem_arith_name(), core);
  }
  opts.alpha = alpha;
  opts.alpha_set = alpha_set;
  opts.couple = couple;
  opts.coordinates = coordinates;
  opts.projections = projections;
  opts.basic = basic;
  if (groups_path) {
    if (slem_ids_labels_read(&names, groups_path, &err) != SLEM_OK) goto fail;
    opts.groups = names;
  }
  /* options that this cache's encoder cannot honour are usage errors (encoder.h) */
  {
    const SlemEncoderOps *ops;
    if (slem_encoder_choose(&ops, cache, &opts, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
  }
  total = slem_vecreader_count(r) > 0 ? (uint64_t)slem_vecreader_count(r) : 0;
  if (shard.count > 0) {
    uint64_t lo, hi;
    slem_shard_range(&shard, total, &lo, &hi);
    total = hi - lo;
  }
  if (!quiet) {
    opts.progress = on_progress;
    opts.progress_ctx = &total;
  }
  if (
      slem_encstream_run(cache, r, output, &opts, &res, &err) != SLEM_OK)
    goto fail;
  cli_progress_done();
  if (print_stats) cli_print_phases(&res.phases);
  if (!quiet && res.clamps > 0)
    cli_warn("%" PRIu64 " vectors had |v|^2 > k(x, x) beyond rounding; u^2 was clamped to 0",
             res.clamps);
  if (!quiet && res.zeros > 0)
    cli_warn("%" PRIu64 " input vectors equal the negatives' mean: their %s zero", res.zeros,
             mode == SLEM_ENCODE_UNIT ? "descriptors are" : "omegas are");
  goto done;
fail:
  status = cli_fail(&err);
done:
  slem_ids_free(ids);
  slem_vecreader_free(r);
  slem_cache_free(cache);
  slem_ids_free(names);
  return cli_close_stdout(status);
}
