/* slem-esvm: exemplar-SVM descriptors (or classifiers) of vectors, trained by LIBLINEAR. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/encode/esvm.h"
#include "../lib/io/ids.h"
#include "../lib/linalg/blas.h"
#include "../lib/formats/vecs.h"
#include "../lib/encode/encstream.h"
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

/* "'ID'" with ids, else "vector N" (from 1) */
static const char *name_of(const SlemIds *ids, uint64_t i, char *buf, size_t len) {
  if (ids && i < slem_ids_count(ids)) snprintf(buf, len, "'%s'", slem_ids_get(ids, i));
  else snprintf(buf, len, "vector %" PRIu64, i + 1);
  return buf;
}

/* The --ids of an input whose count only reading tells, before the output is final. */
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

static void progress(void *ctx, uint64_t done) {
  cli_progress_of("exemplar SVMs trained", done, *(uint64_t *)ctx);
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
  const char *neg_path = NULL, *output = "-", *input = "-", *ids_path = NULL;
  SlemFormat ifmt = SLEM_FMT_AUTO, ofmt = SLEM_FMT_AUTO;
  SlemFormat pfmt = SLEM_FMT_END, nfmt = SLEM_FMT_END; /* END: as -f */
  SlemEsvmOpts opts;
  SlemDtype dtype = SLEM_DTYPE_F4;
  int quiet = 0, c, status = CLI_EXIT_OK;
  long threads = 0;
  size_t block = 256;
  SlemEncStreamOpts eopts;
  SlemEncStreamResult eres;
  IdsCheck idc;
  SlemVecReader *nr = NULL, *r = NULL;
  SlemVecWriter *w = NULL;
  SlemEsvm *esvm = NULL;
  SlemIds *ids = NULL;
  SlemError err;
  const char *env;
  char name[300];
  uint64_t total;

  cli_init(argv[0]);
  cli_version_extra(slem_esvm_liblinear());
  slem_esvm_opts_init(&opts);
  while ((c = getopt_long(argc, argv, "n:C:o:f:F:b:t:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'n': neg_path = optarg; break;
    case 'C':
      opts.C = cli_double("-C", optarg);
      if (!(opts.C > 0)) cli_usage_error("-C: must be positive, not %s", optarg);
      break;
    case 'W':
      opts.pos_weight = cli_double("--pos-weight", optarg);
      if (!(opts.pos_weight > 0)) cli_usage_error("--pos-weight: must be positive, not %s", optarg);
      break;
    case 'S':
      if (strcmp(optarg, "l1") == 0) opts.loss = SLEM_ESVM_HINGE;
      else if (strcmp(optarg, "l2") == 0) opts.loss = SLEM_ESVM_SQUARED_HINGE;
      else cli_usage_error("--solver: '%s' is not l1 (hinge) or l2 (squared hinge)", optarg);
      break;
    case 'B':
      opts.bias = cli_double("--bias", optarg);
      if (opts.bias < 0) cli_usage_error("--bias: must be 0 (no bias) or positive, not %s", optarg);
      break;
    case 'E':
      opts.eps = cli_double("--eps", optarg);
      if (!(opts.eps > 0)) cli_usage_error("--eps: must be positive, not %s", optarg);
      break;
    case 'K': opts.classifier = 1; break;
    case 'I': ids_path = optarg; break;
    case 'Y':
      if (slem_dtype_parse(&dtype, optarg) != SLEM_OK)
        cli_usage_error("--dtype: '%s' is not f4, f2 or i1", optarg);
      break;
    case 'o': output = optarg; break;
    case 'f':
      ifmt = cli_format("--format", optarg, 0);
      break;
    case 'y':
    case 'N':
      *(c == 'y' ? &pfmt : &nfmt) = cli_format_of(c == 'y' ? "input" : "neg", optarg);
      break;
    case 'F':
      ofmt = cli_format("--output-format", optarg, 1);
      break;
    case 'b': block = (size_t)cli_long("--block", optarg, 1, 1L << 20); break;
    case 't': threads = cli_long("--threads", optarg, 1, 256); break;
    case 'q': quiet = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, "n:C:o:f:F:b:t:qhV", longopts);
    }
  }
  if (!neg_path) cli_usage_error("no negatives: give -n NEGATIVES");
  if (optind < argc) input = argv[optind++]; else cli_stdin_hint("vectors");
  if (optind < argc) cli_usage_error("one input at a time: unexpected '%s'", argv[optind]);
  if (strcmp(input, "-") == 0 && strcmp(neg_path, "-") == 0)
    cli_usage_error("the negatives and the input cannot both be stdin");
  if (ofmt == SLEM_FMT_AUTO && slem_format_for_output(&ofmt, output, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  if (slem_encstream_check_dtype(dtype, NULL, ofmt, opts.classifier, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  {
    const char *inputs[3] = {neg_path, input, ids_path};
    cli_refuse_stdin_twice(inputs, 3);
    cli_refuse_clobber(output, inputs, 3);
    if (ids_path && strcmp(ids_path, "-") == 0 && (strcmp(input, "-") == 0 || strcmp(neg_path, "-") == 0))
      cli_usage_error("only one input can be stdin");
  }
  cli_set_quiet(quiet);
  env = getenv("SLEM_THREADS");
  if (threads <= 0 && env && *env) threads = cli_long("SLEM_THREADS", env, 1, 256);
  opts.threads = (int)threads;
  slem_blas_set_threads(1); /* the parallelism is over exemplars, not inside BLAS */

  if ((ids_path && slem_ids_read(&ids, ids_path, &err) != SLEM_OK) ||
      slem_vecreader_open(&nr, neg_path, nfmt == SLEM_FMT_END ? ifmt : nfmt, &err) != SLEM_OK ||
      slem_esvm_new(&esvm, nr, &opts, &err) != SLEM_OK ||
      slem_vecreader_open(&r, input, pfmt == SLEM_FMT_END ? ifmt : pfmt, &err) != SLEM_OK)
    goto fail;
  if (slem_vecreader_dim(r) != slem_esvm_dim(esvm)) {
    slem_error(&err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives %s have dimension %zu",
               slem_vecreader_name(r), slem_vecreader_dim(r), slem_vecreader_name(nr),
               slem_esvm_dim(esvm));
    goto fail;
  }
  total = slem_vecreader_count(r) > 0 ? (uint64_t)slem_vecreader_count(r) : 0;
  /* ids of an input whose count is known are checked before any output is written */
  if (ids && slem_vecreader_count(r) >= 0 &&
      slem_ids_count(ids) != (uint64_t)slem_vecreader_count(r)) {
    slem_error(&err, SLEM_EFORMAT, "%s: %zu ids for %" PRId64 " vectors", ids_path,
               slem_ids_count(ids), slem_vecreader_count(r));
    goto fail;
  }
  /* the loop of slem-encode (encstream.h), with the exemplar SVMs as its encoder */
  slem_encstream_opts_init(&eopts);
  eopts.block = block;
  eopts.format = ofmt;
  eopts.dtype = dtype;
  eopts.esvm = esvm;
  eopts.esvm_d = slem_esvm_dim(esvm);
  eopts.progress = progress;
  eopts.progress_ctx = &total;
  eopts.finish = check_ids;
  eopts.finish_ctx = &idc;
  idc.ids = ids;
  idc.path = ids_path;
  if (slem_encstream_run(NULL, r, output, &eopts, &eres, &err) != SLEM_OK) goto fail;
  cli_progress_done();
  status = CLI_EXIT_OK;
  if (status == CLI_EXIT_OK && !quiet && slem_esvm_loosened(esvm) > 0)
    cli_warn("%" PRIu64 " exemplar SVMs reached LIBLINEAR's iteration limit at --eps %g and "
             "were solved to a looser tolerance (%" PRIu64 " not even to 0.1; the first: %s)",
             slem_esvm_loosened(esvm), opts.eps, slem_esvm_unconverged(esvm),
             name_of(ids, slem_esvm_first_loosened(esvm), name, sizeof name));
  if (status == CLI_EXIT_OK && !quiet && slem_esvm_zeros(esvm) > 0)
    cli_warn("%" PRIu64 " exemplar SVMs have w = 0 (their %s zero; the first: %s)",
             slem_esvm_zeros(esvm), opts.classifier ? "w are" : "descriptors are",
             name_of(ids, slem_esvm_first_zero(esvm), name, sizeof name));
  goto done;
fail:
  status = cli_fail(&err);
done:
  slem_vecwriter_abort(w);
  slem_esvm_free(esvm);
  slem_vecreader_free(r);
  slem_vecreader_free(nr);
  slem_ids_free(ids);
  return cli_close_stdout(status);
}
