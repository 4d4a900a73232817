/* slem-esvm: exemplar-SVM descriptors (or classifiers) of vectors, trained by LIBLINEAR. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/encode/esvmrun.h"
#include "../lib/linalg/blas.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-esvm [OPTION]... -n NEGATIVES [INPUT]\n"
      "Train one linear SVM per vector of INPUT (default: stdin) against every vector\n"
      "of NEGATIVES, with LIBLINEAR's dual coordinate descent, and write its weight\n"
      "vector w / |w| (the exemplar-SVM descriptor), one row per vector, float32.\n"
      "\n"
      "  -n, --negatives FILE     the pool of negatives, loaded once (required)\n"
      "  -C C                     cost of a margin violation (default 1)\n"
      "      --pos-weight W       the positive's cost is C * W (default 1)\n"
      "      --solver S           l1: hinge loss (default), l2: squared hinge\n"
      "      --bias B             constant feature B appended to every vector, its\n"
      "                           weight regularised like the others, b = B w_B\n"
      "                           (default 1; 0: no bias term)\n"
      "      --eps E              LIBLINEAR's stopping tolerance (default 1e-4); a\n"
      "                           problem that reaches LIBLINEAR's iteration limit\n"
      "                           first is solved again at 10 E, 100 E, ... up to 0.1\n"
      "      --classifier         write w (d values) then b: w . z + b scores z\n"
      "  -o, --output OUT         write here (default: stdout)\n"
      "  -f, --format FMT         input format of INPUT and NEGATIVES (default: from\n"
      "                           the extension, else from the content)\n"
      "      --input-format FMT, --neg-format FMT\n"
      "                           the format of INPUT, of NEGATIVES, instead of -f\n"
      "  -F, --output-format FMT  output format (default: from OUT's extension; fvecs\n"
      "                           to stdout)\n"
      "      --dtype T            npy values as f4 (float32, default), f2 (float16) or\n"
      "                           i1 (int8 holding round(127 v), for unit-norm\n"
      "                           descriptors)\n"
      "      --ids FILE           ids of the INPUT vectors, one per line: their count\n"
      "                           is checked, and warnings name exemplars by id\n"
      "  -b, --block N            vectors read per block (default 256)\n"
      "  -t, --threads N          worker threads (default: SLEM_THREADS, else all\n"
      "                           cores); the output does not depend on it\n"
      "  -q, --quiet              no progress or warnings\n"
      "  -h, --help               show this help and exit\n"
      "  -V, --version            show the version, the BLAS and LIBLINEAR, and exit\n"
      "\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-esvm(1).\n", slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static void progress(void *ctx, uint64_t done, uint64_t total) {
  (void)ctx;
  cli_progress_of("exemplar SVMs trained", done, total);
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"negatives", required_argument, 0, 'n'}, {"pos-weight", required_argument, 0, 'W'},
      {"solver", required_argument, 0, 'S'},    {"bias", required_argument, 0, 'B'},
      {"eps", required_argument, 0, 'E'},       {"classifier", no_argument, 0, 'K'},
      {"output", required_argument, 0, 'o'},    {"format", required_argument, 0, 'f'},
      {"output-format", required_argument, 0, 'F'}, {"block", required_argument, 0, 'b'},
      {"threads", required_argument, 0, 't'},   {"quiet", no_argument, 0, 'q'},
      {"ids", required_argument, 0, 'I'},       {"dtype", required_argument, 0, 'Y'},
      {"help", no_argument, 0, 'h'},            {"version", no_argument, 0, 'V'},
      {"input-format", required_argument, 0, 'y'}, {"neg-format", required_argument, 0, 'N'},
      {0, 0, 0, 0}};
  SlemEsvmRunOpts o;
  SlemEsvmRunResult res;
  SlemEsvmOpts *opts = &o.esvm;
  int quiet = 0, c, status = CLI_EXIT_OK;
  long threads = 0;
  SlemError err;
  const char *env;

  cli_init(argv[0]);
  cli_version_extra(slem_esvm_liblinear());
  slem_esvmrun_opts_init(&o);
  while ((c = getopt_long(argc, argv, "n:C:o:f:F:b:t:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'n': o.negatives = optarg; break;
    case 'C':
      opts->C = cli_double("-C", optarg);
      if (!(opts->C > 0)) cli_usage_error("-C: must be positive, not %s", optarg);
      break;
    case 'W':
      opts->pos_weight = cli_double("--pos-weight", optarg);
      if (!(opts->pos_weight > 0)) cli_usage_error("--pos-weight: must be positive, not %s", optarg);
      break;
    case 'S':
      if (strcmp(optarg, "l1") == 0) opts->loss = SLEM_ESVM_HINGE;
      else if (strcmp(optarg, "l2") == 0) opts->loss = SLEM_ESVM_SQUARED_HINGE;
      else cli_usage_error("--solver: '%s' is not l1 (hinge) or l2 (squared hinge)", optarg);
      break;
    case 'B':
      opts->bias = cli_double("--bias", optarg);
      if (opts->bias < 0) cli_usage_error("--bias: must be 0 (no bias) or positive, not %s", optarg);
      break;
    case 'E':
      opts->eps = cli_double("--eps", optarg);
      if (!(opts->eps > 0)) cli_usage_error("--eps: must be positive, not %s", optarg);
      break;
    case 'K': opts->classifier = 1; break;
    case 'I': o.ids = optarg; break;
    case 'Y':
      if (slem_dtype_parse(&o.dtype, optarg) != SLEM_OK)
        cli_usage_error("--dtype: '%s' is not f4, f2 or i1", optarg);
      break;
    case 'o': o.output = optarg; break;
    case 'f':
      o.format = cli_format("--format", optarg, 0);
      break;
    case 'y':
    case 'N':
      *(c == 'y' ? &o.input_format : &o.neg_format) = cli_format_of(c == 'y' ? "input" : "neg", optarg);
      break;
    case 'F':
      o.output_format = cli_format("--output-format", optarg, 1);
      break;
    case 'b': o.block = (size_t)cli_long("--block", optarg, 1, 1L << 20); break;
    case 't': threads = cli_long("--threads", optarg, 1, 256); break;
    case 'q': quiet = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, "n:C:o:f:F:b:t:qhV", longopts);
    }
  }
  if (optind < argc) o.input = argv[optind++]; else cli_stdin_hint("vectors");
  /* the rules between options (a missing -n first), before the environment is read */
  if (slem_esvmrun_check(&o, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
  if (optind < argc) cli_usage_error("one input at a time: unexpected '%s'", argv[optind]);
  {
    const char *inputs[3] = {o.negatives, o.input, o.ids};
    cli_refuse_stdin_twice(inputs, 3);
    cli_refuse_clobber(o.output, inputs, 3);
  }
  cli_set_quiet(quiet);
  env = getenv("SLEM_THREADS");
  if (threads <= 0 && env && *env) threads = cli_long("SLEM_THREADS", env, 1, 256);
  opts->threads = (int)threads;
  slem_blas_set_threads(1); /* the parallelism is over exemplars, not inside BLAS */
  o.progress = progress;
  if (slem_esvmrun(&o, &res, &err) != SLEM_OK) return cli_close_stdout(cli_fail(&err));
  cli_progress_done();
  if (!quiet && res.loosened > 0)
    cli_warn("%" PRIu64 " exemplar SVMs reached LIBLINEAR's iteration limit at --eps %g and "
             "were solved to a looser tolerance (%" PRIu64 " not even to 0.1; the first: %s)",
             res.loosened, opts->eps, res.unconverged, res.first_loosened);
  if (!quiet && res.zeros > 0)
    cli_warn("%" PRIu64 " exemplar SVMs have w = 0 (their %s zero; the first: %s)", res.zeros,
             opts->classifier ? "w are" : "descriptors are", res.first_zero);
  return cli_close_stdout(status);
}
