/* slem-negstats: negative statistics into a .slem cache. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/formats/cache.h"
#include "../lib/encode/cachekinds.h"
#include "../lib/linalg/kernel.h"
#include "../lib/encode/negstats.h"
#include "../lib/encode/variant.h"
#include "../lib/io/libslem.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

#define DEFAULT_LAMBDA_REL 1.0

/* The options of the variants that declare their own (variant.h), in the table's order. */
static void variant_options_help(void) {
  for (size_t i = 0; i < slem_variants_count(); i++) {
    const SlemVariant *v = slem_variants_get(i);
    const char *h = v->option_help, *nl;
    if (!v->option) continue;
    printf("      --%-17s", v->option);
    for (;;) {
      nl = strchr(h, '\n');
      printf("%s%.*s\n", h == v->option_help ? "" : "                         ",
             nl ? (int)(nl - h) : (int)strlen(h), h);
      if (!nl) break;
      h = nl + 1;
    }
  }
}

/* getopt_long's options: the tool's own (fixed), then each variant's (val VARIANT_OPT +
 * its place in the table); held for the whole run (static: the process's, never freed). */
#define VARIANT_OPT 1000
static struct option *all_options(const struct option *fixed) {
  static struct option *o;
  size_t nf = 0, k = 0;
  while (fixed[nf].name) nf++;
  if (!(o = calloc(nf + slem_variants_count() + 1, sizeof *o))) return NULL;
  memcpy(o, fixed, nf * sizeof *o);
  k = nf;
  for (size_t i = 0; i < slem_variants_count(); i++)
    if (slem_variants_get(i)->option)
      o[k++] = (struct option){slem_variants_get(i)->option, no_argument, 0,
                               VARIANT_OPT + (int)i};
  return o;
}

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-negstats [OPTION]... -o CACHE NEGATIVES...\n"
      "       slem-negstats --info CACHE\n"
      "Compute the mean and covariance of a pool of negative vectors and write a cache\n"
      "with mu and A^-1 = (Sigma + lambda I)^-1 for slem-encode.\n"
      "\n"
      "NEGATIVES are vector files (- for stdin) or partial caches written with\n"
      "--partial, merged exactly.\n"
      "\n"
      "  -o, --output CACHE     write the cache to CACHE (required; - for stdout)\n"
      "  -l, --lambda L         regularisation lambda, absolute\n"
      "  -r, --lambda-rel R     lambda = R * trace(Sigma) / d (default %g)\n"
      "      --partial          write mergeable partial statistics (counts, means,\n"
      "                         scatters)\n"
      "      --depth K          recursive SLEM: K stages, stage s + 1 computed on the\n"
      "                         negatives encoded by stages 1..s, each with the same\n"
      "                         --lambda-rel of its own trace (default 1; K > 1 reads\n"
      "                         the negative files K times, and takes no partial\n"
      "                         caches); with --kernel, K stages of kernel SLEM, each\n"
      "                         on the negatives' explicit descriptors of the stages\n"
      "                         before (same spec, factor and rank; --lambda or\n"
      "                         --lambda-rel per stage)\n"
      "      --adaptive-theta POSITIVES\n"
      "                         with --depth K (linear): new_full_encoder.m's [nu;\n"
      "                         beta] stages (d + K values), the next stage's\n"
      "                         negatives encoded with theta_n adapted to the first\n"
      "                         100 rows of POSITIVES; --lambda (every stage) or\n"
      "                         --lambda-rel\n"
      "      --theta T          with --adaptive-theta: the positives' weight (default\n"
      "                         1)\n"
      "      --eigen            also store the eigendecomposition of Sigma, for\n"
      "                         slem-encode --alpha\n"
      "      --mixed POSITIVES  with --eigen: the authors' SLEM_whitening.m mixed\n"
      "                         covariance, of POSITIVES and the negatives together\n"
      "                         (divided by N - 1), and mu the positives' mean\n"
      "      --pca R            a PCA-reduced cache: the top R eigenpairs of Sigma\n"
      "                         only; descriptors (Lambda_R + lambda I)^-1 U^T (x -\n"
      "                         mu) of R values (--info shows the fraction of the\n"
      "                         variance kept)\n"
      , DEFAULT_LAMBDA_REL);
  variant_options_help();
  printf(
      "  -K, --kernel SPEC      kernel SLEM: linear, poly:gamma=G,c=C,p=P, rbf:gamma=G\n"
      "                         or rbf:g=R (gamma = R / median squared distance,\n"
      "                         default g=1), exp:gamma=G or exp:g=R (exp(-G |x - y|),\n"
      "                         G = R / median distance), quad:gamma=G (x.y + G\n"
      "                         (x.y)^2), chi2, intersection or intersection:gamma=G\n"
      "                         (sum min(x_i^G, y_i^G)), hellinger (sum sqrt(x_i\n"
      "                         y_i)), hellinger-dot (sqrt|x.y|, the authors'\n"
      "                         incomplete_chol.m 'hellinger')\n"
      "      --factor F         kernel: icd (pivoted incomplete Cholesky, the\n"
      "                         default), kpca (the top R eigenpairs of K), full\n"
      "                         (Cholesky to the numerical rank; no --rank, --tol)\n"
      "      --couple           kernel: also keep the negatives and the factor, for\n"
      "                         slem-encode --couple and slem-match --couple\n"
      "      --rank R           kernel: rank of the factorisation (default 256)\n"
      "      --tol T            kernel: stop when the residual trace is T * trace(K)\n"
      "                         (default 0)\n"
      "      --sample M         kernel: negatives sampled for the median distance\n"
      "                         (default 1000)\n"
      "      --seed S           kernel: seed of that sample (default 1)\n"
      "  -f, --format FMT       format of the negative files (default: from the\n"
      "                         extension, else from the content)\n"
      "      --positives-format FMT\n"
      "                         format of the --mixed or --adaptive-theta POSITIVES\n"
      "                         (default: from the extension, else from the content;\n"
      "                         not -f's)\n"
      "      --skip-nonfinite   skip (and count) negatives holding a NaN or an Inf,\n"
      "                         instead of stopping at the first one\n"
      "  -b, --block N          vectors read per block (default: 2^18 / d, 64 to 4096)\n"
      "      --leaf-rows N      rows per leaf of the statistics tree (default: 2^21 /\n"
      "                         d, 256 to 4096): the same in every shard and in a\n"
      "                         whole run\n"
      "  -t, --threads N        BLAS threads (default: SLEM_THREADS, else all cores)\n"
      "      --info CACHE       print the JSON header of CACHE and exit\n"
      "      --shard I/N        with --partial: only leaves floor(I*L/N) ..\n"
      "                         floor((I+1)*L/N)-1 of the L leaves of rows of the\n"
      "                         inputs; the N partial caches merge into the statistics\n"
      "                         of all rows, bit for bit those of one run over them\n"
      "      --allow-mixed-blas merge partial caches made on other BLAS cores than one\n"
      "                         another or than this host (refused by default: the\n"
      "                         cache would not be that of one run); the cache records\n"
      "                         the mix, and a partial cache recording one is refused\n"
      "                         without this flag at the next level\n"
      "      --stats            print where the wall time went on stderr (read,\n"
      "                         convert, compute, merge, factor, write, waits; see the\n"
      "                         man page)\n"
      "  -q, --quiet            no progress on the terminal\n"
      "  -h, --help             show this help and exit\n"
      "  -V, --version          show the version and the BLAS library, and exit\n"
      "\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "A kernel cache holds the negatives' pivots and an r x r factor; the negatives\n"
      "are read into memory for it (n x d values, and the n x r factor). kpca and\n"
      "--couple keep all n negatives in the cache; kpca needs the n x n kernel matrix\n"
      "and O(n^3) time.\n"
      "See slem-negstats(1).\n",
      slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static int info(const char *path) {
  SlemCache *c = NULL;
  SlemError err;
  int st = slem_cache_read(&c, path, &err);
  if (st) return cli_fail(&err);
  if (!slem_cache_json(c)) {
    slem_error(&err, SLEM_ENOMEM, "%s: out of memory for its JSON header", path);
    slem_cache_free(c);
    return cli_fail(&err);
  }
  printf("%s\n", slem_cache_json(c));
  slem_cache_free(c);
  return cli_close_stdout(CLI_EXIT_OK);
}

static void on_progress(void *ctx, uint64_t n) {
  cli_progress_of("negatives", n, *(const uint64_t *)ctx);
}

/* The vectors of the inputs when every header or size tells (0: unknown), for progress. */
static uint64_t count_inputs(char **paths, int n, SlemFormat fmt) {
  uint64_t total = 0;
  for (int i = 0; i < n; i++) {
    SlemVecReader *r = NULL;
    SlemError err;
    int64_t c;
    if (strcmp(paths[i], "-") == 0 || slem_cache_sniff(paths[i]) ||
        slem_vecreader_open(&r, paths[i], fmt, &err) != SLEM_OK)
      return 0;
    c = slem_vecreader_count(r);
    slem_vecreader_free(r);
    if (c < 0) return 0;
    total += (uint64_t)c;
  }
  return total;
}

int main(int argc, char **argv) {
  static const struct option fixed[] = {
      {"output", required_argument, 0, 'o'},  {"lambda", required_argument, 0, 'l'},
      {"lambda-rel", required_argument, 0, 'r'}, {"partial", no_argument, 0, 'P'},
      {"format", required_argument, 0, 'f'},  {"block", required_argument, 0, 'b'},
      {"threads", required_argument, 0, 't'}, {"info", required_argument, 0, 'I'},
      {"quiet", no_argument, 0, 'q'},         {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},       {"kernel", required_argument, 0, 'K'},
      {"rank", required_argument, 0, 'R'},    {"tol", required_argument, 0, 'O'},
      {"sample", required_argument, 0, 'S'},  {"seed", required_argument, 0, 'E'},
      {"skip-nonfinite", no_argument, 0, 'N'}, {"shard", required_argument, 0, 'H'},
      {"eigen", no_argument, 0, 'G'},         {"depth", required_argument, 0, 'D'},
      {"pca", required_argument, 0, 'A'},    {"leaf-rows", required_argument, 0, 'L'},
      {"factor", required_argument, 0, 'F'},  {"couple", no_argument, 0, 'C'},
      {"allow-mixed-blas", no_argument, 0, 'M'}, {"stats", no_argument, 0, 'T'},
      {"mixed", required_argument, 0, 'X'},   {"adaptive-theta", required_argument, 0, 'Y'},
      {"theta", required_argument, 0, 'Z'},   {"positives-format", required_argument, 0, 'W'},
      {0, 0, 0, 0}};
  const char *output = NULL;
  int print_stats = 0, quiet = 0, c, status = CLI_EXIT_OK;
  long threads = 0;
  SlemNegstatsOpts opts;
  uint64_t total = 0;
  SlemNegstatsResult res;
  SlemError err;
  struct option *longopts;

  cli_init(argv[0]);
  if (!(longopts = all_options(fixed))) {
    slem_error(&err, SLEM_ENOMEM, "out of memory");
    return cli_fail(&err);
  }
  slem_negstats_opts_init(&opts);
  opts.lambda_rel = -1; /* DEFAULT_LAMBDA_REL unless --lambda */
  while ((c = getopt_long(argc, argv, "o:l:r:k:K:f:b:t:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': output = optarg; break;
    case 'l':
      opts.lambda = cli_double("--lambda", optarg);
      if (opts.lambda < 0) cli_usage_error("--lambda: must not be negative");
      break;
    case 'r':
      opts.lambda_rel = cli_double("--lambda-rel", optarg);
      if (opts.lambda_rel < 0) cli_usage_error("--lambda-rel: must not be negative");
      opts.given |= SLEM_NEGSTATS_GIVEN_LAMBDA_REL;
      break;
    case 'P': opts.partial = 1; break;
    case 'N': opts.skip_nonfinite = 1; break;
    case 'G': opts.eigen = 1; break;
    case 'X': opts.mixed = optarg; break;
    case 'Y': opts.adaptive = optarg; break;
    case 'Z':
      opts.theta = cli_double("--theta", optarg);
      if (!(opts.theta > 0)) cli_usage_error("--theta: must be positive");
      opts.given |= SLEM_NEGSTATS_GIVEN_THETA;
      break;
    case 'D': opts.depth = (size_t)cli_long("--depth", optarg, 1, 1024); break;
    case 'A': opts.pca = (size_t)cli_long("--pca", optarg, 1, 1L << 20); break;
    case 'H':
      if (slem_shard_parse(&opts.shard, optarg, &err) != SLEM_OK)
        cli_usage_error("--shard: %s", err.msg);
      break;
    case 'k': /* the spelling of the previous release */
      cli_warn("-k %s: use -K (--kernel); -k means a count of results in the other slem tools",
               optarg);
      /* fall through */
    case 'K': {
      SlemKernel k;
      if (slem_kernel_parse(&k, optarg, &err) != SLEM_OK) cli_usage_error("--kernel: %s", err.msg);
      opts.kernel = optarg;
      break;
    }
    case 'R':
      opts.rank = (size_t)cli_long("--rank", optarg, 1, 1L << 20);
      opts.given |= SLEM_NEGSTATS_GIVEN_RANK;
      break;
    case 'F': {
      int factor = slem_kernel_factor_parse(optarg);
      if (factor < 0) cli_usage_error("--factor: '%s' is not icd, kpca or full", optarg);
      opts.factor = (SlemKernelFactor)factor;
      opts.given |= SLEM_NEGSTATS_GIVEN_FACTOR;
      break;
    }
    case 'C': opts.couple = 1; break;
    case 'M': opts.allow_mixed_blas = 1; break;
    case 'T': print_stats = 1; break;
    case 'O':
      opts.tol = cli_double("--tol", optarg);
      if (opts.tol < 0 || opts.tol >= 1) cli_usage_error("--tol: from 0 to below 1");
      opts.given |= SLEM_NEGSTATS_GIVEN_TOL;
      break;
    case 'S': opts.sample = (size_t)cli_long("--sample", optarg, 2, 100000); break;
    case 'E': opts.seed = (uint64_t)cli_long("--seed", optarg, 0, 0x7fffffffL); break;
    case 'f': opts.format = cli_format("--format", optarg, 0); break;
    case 'W':
      opts.pos_format = cli_format("--positives-format", optarg, 0);
      opts.given |= SLEM_NEGSTATS_GIVEN_POS_FORMAT;
      break;
    case 'b': opts.block = (size_t)cli_long("--block", optarg, 1, 1L << 24); break;
    case 'L': opts.leaf_rows = (size_t)cli_long("--leaf-rows", optarg, 1, 1L << 24); break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'I': return info(optarg);
    case 'q': quiet = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default:
      if (c >= VARIANT_OPT && (size_t)(c - VARIANT_OPT) < slem_variants_count()) {
        const char *name = slem_variants_get((size_t)(c - VARIANT_OPT))->option;
        if (opts.variant && strcmp(opts.variant, name) != 0)
          cli_usage_error("--%s and --%s ask for two variants: give one", opts.variant, name);
        opts.variant = name;
        break;
      }
      cli_bad_option(argv, "o:l:r:k:K:f:b:t:qhV", longopts);
    }
  }
  {
    const char *const *inputs = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    if (!output) cli_usage_error("no output cache: give -o CACHE");
    if (slem_negstats_check(&opts, inputs, n, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
    if (opts.lambda < 0 && opts.lambda_rel < 0) opts.lambda_rel = DEFAULT_LAMBDA_REL;
    cli_refuse_stdin_twice(inputs, n);
    cli_refuse_clobber(output, inputs, n);
    cli_source_date_epoch(); /* the cache's provenance time */
    if (opts.mixed) cli_refuse_clobber(output, &opts.mixed, 1);
    if (opts.adaptive) cli_refuse_clobber(output, &opts.adaptive, 1);
    cli_threads(threads);
    if (!quiet && isatty(2)) {
      total = opts.shard.count ? 0 : count_inputs(argv + optind, argc - optind, opts.format);
      opts.progress = on_progress;
      opts.progress_ctx = &total;
    }
    status = slem_negstats_run(output, inputs, n, &opts, &res, &err) == SLEM_OK ? CLI_EXIT_OK
             : opts.pca > 0 && res.d > 0 && opts.pca > res.d
                 ? (cli_usage_error("--pca %zu: more than the dimension %zu of the negatives",
                                    opts.pca, res.d), CLI_EXIT_USAGE)
                 : cli_fail(&err);
  }
  cli_progress_done();
  if (status == CLI_EXIT_OK && print_stats) cli_print_phases(&res.phases);
  if (status == CLI_EXIT_OK && !quiet && res.skipped > 0)
    cli_warn("%s: skipped %" PRIu64 " records with NaN or Inf", res.skipped_in, res.skipped);
  if (status == CLI_EXIT_OK && !quiet && opts.kernel && res.rank < res.rank_asked &&
      opts.factor != SLEM_FACTOR_FULL)
    cli_warn("the factorisation stopped at rank %zu of %zu (residual trace %g)", res.rank,
             opts.rank, res.residual_trace);
  return cli_close_stdout(status);
}
