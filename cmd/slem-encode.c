/* slem-encode: SLEM descriptors (or exemplar classifiers) of vectors against a cache. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/encode/slem_linear.h"
#include "../lib/encode/encstream.h"
#include "../lib/io/libslem.h"
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

static void on_progress(void *ctx, uint64_t n, uint64_t total) {
  cli_progress_of("vectors encoded", n, total);
}

static void on_warn(void *ctx, const char *msg) { cli_warn("%s", msg); }

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
  const char *ids_path = NULL;
  SlemFormat ifmt = SLEM_FMT_AUTO;
  int print_stats = 0, quiet = 0, c;
  long threads = 0;
  SlemEncStreamOpts opts;
  SlemEncStreamFiles files = {0};
  SlemEncStreamResult res;
  int usage_err = 0;
  SlemError err;

  cli_init(argv[0]);
  slem_encstream_opts_init(&opts);
  opts.block = 0; /* slem_encstream_block() */
  while ((c = getopt_long(argc, argv, "c:o:f:F:b:t:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'c': cache_path = optarg; break;
    case 'o': output = optarg; break;
    case 'f': ifmt = cli_format("--format", optarg, 0); break;
    case 'F': opts.format = cli_format("--output-format", optarg, 1); break;
    case 'C': opts.mode = SLEM_ENCODE_CLASSIFIER; break;
    case 'G': groups_path = optarg; break;
    case 'K': opts.couple = cli_couple(argc, argv); break;
    case 'R': opts.projections = 1; break;
    case 'B': opts.basic = 1; break;
    case 'O': opts.coordinates = 1; break;
    case 'A':
      opts.alpha = cli_double("--alpha", optarg);
      opts.alpha_set = 1;
      break;
    case 'Y':
      if (slem_dtype_parse(&opts.dtype, optarg) != SLEM_OK)
        cli_usage_error("--dtype: '%s' is not f4, f2 or i1", optarg);
      break;
    case 'P':
      if (slem_encode_precision_parse(&opts.precision, optarg) != SLEM_OK)
        cli_usage_error("--precision: '%s' is not auto, single or double", optarg);
      break;
    case 'T':
      opts.theta = cli_double("--theta", optarg);
      if (!(opts.theta > 0)) cli_usage_error("--theta: must be positive");
      opts.theta_set = 1;
      break;
    case 'Z': print_stats = 1; break;
    case 'b': opts.block = (size_t)cli_long("--block", optarg, 1, 1L << 20); break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'q': quiet = 1; break;
    case 'H':
      if (slem_shard_parse(&opts.shard, optarg, &err) != SLEM_OK)
        cli_usage_error("--shard: %s", err.msg);
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
  /* to stdout, the self-describing container unless a format is asked for */
  if (opts.format == SLEM_FMT_AUTO && strcmp(output, "-") == 0) opts.format = SLEM_FMT_SLEM;
  /* the rules, but --ids's after the inputs' checks (a closed stdin is an error of the
   * system, status 1, before an ids file given to a format without ids) */
  if (slem_encstream_check(&opts, output, 0, groups_path != NULL, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  if (opts.format == SLEM_FMT_AUTO) slem_format_for_output(&opts.format, output, &err);
  {
    const char *inputs[4] = {input, cache_path, groups_path, ids_path};
    cli_refuse_stdin_twice(inputs, 4);
    cli_refuse_clobber(output, inputs, 4);
  }
  cli_threads(threads);
  if (ids_path && slem_encstream_check(&opts, output, 1, groups_path != NULL, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);

  files.cache = cache_path;
  files.input = input;
  files.input_format = ifmt;
  files.ids = ids_path;
  files.groups = groups_path;
  if (!quiet) {
    files.warn = on_warn;
    files.progress = on_progress;
  }
  if (slem_encstream_run_files(&files, output, &opts, &res, &usage_err, &err) != SLEM_OK) {
    if (usage_err) cli_usage_error("%s", err.msg);
    return cli_close_stdout(cli_fail(&err));
  }
  cli_progress_done();
  if (print_stats) cli_print_phases(&res.phases);
  if (!quiet && res.clamps > 0)
    cli_warn("%" PRIu64 " vectors had |v|^2 > k(x, x) beyond rounding; u^2 was clamped to 0",
             res.clamps);
  if (!quiet && res.zeros > 0)
    cli_warn("%" PRIu64 " input vectors equal the negatives' mean: their %s zero", res.zeros,
             opts.mode == SLEM_ENCODE_UNIT ? "descriptors are" : "omegas are");
  return cli_close_stdout(CLI_EXIT_OK);
}
