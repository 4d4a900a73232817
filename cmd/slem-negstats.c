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
#include "../lib/encode/krec.h"
#include "../lib/encode/negstats.h"
#include "../lib/io/slem.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

#define DEFAULT_LAMBDA_REL 1.0

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
      DEFAULT_LAMBDA_REL, slem_format_names());
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
  static const struct option longopts[] = {
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
  const char *output = NULL, *kernel = NULL, *positives = NULL, *adaptive = NULL;
  double theta = 1;
  int theta_set = 0;
  size_t rank = 256, sample = 1000;
  double tol = 0;
  uint64_t seed = 1;
  double lambda = -1, lambda_rel = -1;
  int print_stats = 0, partial = 0, quiet = 0, skip = 0, eigen = 0, mixed = 0, c, status = CLI_EXIT_OK;
  size_t pca = 0, depth = 1;
  int factor = -1, couple = 0, rank_set = 0, tol_set = 0;
  long threads = 0;
  size_t block = 0, leaf_rows = 0; /* slem_block_rows(d) */
  SlemFormat fmt = SLEM_FMT_AUTO, pos_fmt = SLEM_FMT_AUTO;
  int pos_fmt_set = 0;
  SlemNegstatsOpts opts;
  SlemShard shard = {0, 0};
  uint64_t total = 0;
  SlemNegstatsResult res;
  SlemError err;

  cli_init(argv[0]);
  while ((c = getopt_long(argc, argv, "o:l:r:k:K:f:b:t:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': output = optarg; break;
    case 'l':
      lambda = cli_double("--lambda", optarg);
      if (lambda < 0) cli_usage_error("--lambda: must not be negative");
      break;
    case 'r':
      lambda_rel = cli_double("--lambda-rel", optarg);
      if (lambda_rel < 0) cli_usage_error("--lambda-rel: must not be negative");
      break;
    case 'P': partial = 1; break;
    case 'N': skip = 1; break;
    case 'G': eigen = 1; break;
    case 'X': positives = optarg; break;
    case 'Y': adaptive = optarg; break;
    case 'Z':
      theta = cli_double("--theta", optarg);
      if (!(theta > 0)) cli_usage_error("--theta: must be positive");
      theta_set = 1;
      break;
    case 'D': depth = (size_t)cli_long("--depth", optarg, 1, 1024); break;
    case 'A': pca = (size_t)cli_long("--pca", optarg, 1, 1L << 20); break;
    case 'H':
      if (slem_shard_parse(&shard, optarg, &err) != SLEM_OK) cli_usage_error("--shard: %s", err.msg);
      break;
    case 'k': /* the spelling of the previous release */
      cli_warn("-k %s: use -K (--kernel); -k means a count of results in the other slem tools",
               optarg);
      /* fall through */
    case 'K': {
      SlemKernel k;
      if (slem_kernel_parse(&k, optarg, &err) != SLEM_OK) cli_usage_error("--kernel: %s", err.msg);
      kernel = optarg;
      break;
    }
    case 'R': rank = (size_t)cli_long("--rank", optarg, 1, 1L << 20), rank_set = 1; break;
    case 'F':
      if ((factor = slem_kernel_factor_parse(optarg)) < 0)
        cli_usage_error("--factor: '%s' is not icd, kpca or full", optarg);
      break;
    case 'C': couple = 1; break;
    case 'M': mixed = 1; break;
    case 'T': print_stats = 1; break;
    case 'O':
      tol_set = 1;
      tol = cli_double("--tol", optarg);
      if (tol < 0 || tol >= 1) cli_usage_error("--tol: from 0 to below 1");
      break;
    case 'S': sample = (size_t)cli_long("--sample", optarg, 2, 100000); break;
    case 'E': seed = (uint64_t)cli_long("--seed", optarg, 0, 0x7fffffffL); break;
    case 'f':
      fmt = cli_format("--format", optarg, 0);
      break;
    case 'W':
      pos_fmt = cli_format("--positives-format", optarg, 0);
      pos_fmt_set = 1;
      break;
    case 'b': block = (size_t)cli_long("--block", optarg, 1, 1L << 24); break;
    case 'L': leaf_rows = (size_t)cli_long("--leaf-rows", optarg, 1, 1L << 24); break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'I': return info(optarg);
    case 'q': quiet = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, "o:l:r:k:K:f:b:t:qhV", longopts);
    }
  }
  if (!output) cli_usage_error("no output cache: give -o CACHE");
  if (optind >= argc) cli_usage_error("no negatives: give one or more vector files");
  if (lambda >= 0 && lambda_rel >= 0) cli_usage_error("give --lambda or --lambda-rel, not both");
  if (partial && (lambda >= 0 || lambda_rel >= 0))
    cli_usage_error("--partial stores sums only: lambda is chosen when the partial caches are merged");
  if (partial && kernel) cli_usage_error("--partial does not go with --kernel");
  if (shard.count > 0 && !partial)
    cli_usage_error("--shard makes partial statistics: add --partial, then merge the shards' "
                    "caches with slem-negstats -o CACHE PART...");
  if (skip && kernel) cli_usage_error("--skip-nonfinite is for linear caches");
  if ((factor >= 0 || couple || rank_set || tol_set) && !kernel)
    cli_usage_error("--%s is for kernel caches: add --kernel SPEC",
                    factor >= 0 ? "factor" : couple ? "couple" : rank_set ? "rank" : "tol");
  if (factor == SLEM_FACTOR_FULL && (rank_set || tol_set))
    cli_usage_error("--factor full goes to the numerical rank: no --%s", rank_set ? "rank" : "tol");
  if ((eigen || pca) && (kernel || partial))
    cli_usage_error("--%s is for linear caches: not with --%s", eigen ? "eigen" : "pca",
                    kernel ? "kernel" : "partial");
  if (eigen && pca) cli_usage_error("give --eigen or --pca, not both");
  if (positives && !eigen)
    cli_usage_error("--mixed makes an eigen cache for slem-encode --alpha: add --eigen");
  if (positives && (shard.count > 0 || depth > 1))
    cli_usage_error("--mixed needs the whole statistics: not with --%s", depth > 1 ? "depth" : "shard");
  if (positives && strcmp(positives, "-") == 0)
    cli_usage_error("--mixed reads the positives twice: not from stdin");
  if (adaptive && depth < 2)
    cli_usage_error("--adaptive-theta adapts the negatives of the next stage: give --depth K >= 2");
  if (pos_fmt_set && !adaptive && !positives)
    cli_usage_error("--positives-format goes with --mixed or --adaptive-theta");
  if (theta_set && !adaptive)
    cli_usage_error("--theta goes with --adaptive-theta (the [nu; beta] stages)");
  if (adaptive && strcmp(adaptive, "-") == 0)
    cli_usage_error("--adaptive-theta reads the positives once per stage: not from stdin");
  if (depth > 1) {
    if (partial || shard.count > 0)
      cli_usage_error("--depth %zu does not merge shards: stage 2 needs the negatives encoded "
                      "by the finished stage 1; give the negative files themselves", depth);
    if (eigen || pca)
      cli_usage_error("--depth %zu is for linear or kernel SLEM: not with --%s", depth,
                      eigen ? "eigen" : "pca");
    if (kernel && adaptive)
      cli_usage_error("--adaptive-theta is for linear SLEM: not with --kernel");
    if (kernel && couple)
      cli_usage_error("--couple is for a kernel cache of depth 1: not with --depth %zu (the "
                      "coupling of a stage's inputs is not defined)", depth);
    if (kernel && slem_krec_check(kernel, depth, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
    if (lambda >= 0 && !kernel && !adaptive)
      cli_usage_error("--depth %zu takes --lambda-rel (each stage relative to its own trace), "
                      "not an absolute --lambda", depth);
    for (int i = optind; i < argc && !kernel; i++)
      if (strcmp(argv[i], "-") == 0)
        cli_usage_error("--depth %zu reads the negatives once per stage: not from stdin", depth);
  }
  if (lambda < 0 && lambda_rel < 0) lambda_rel = DEFAULT_LAMBDA_REL;
  cli_refuse_stdin_twice((const char *const *)argv + optind, (size_t)(argc - optind));
  cli_refuse_clobber(output, (const char *const *)argv + optind, (size_t)(argc - optind));
  cli_source_date_epoch(); /* the cache's provenance time */
  if (positives) cli_refuse_clobber(output, &positives, 1);
  if (adaptive) cli_refuse_clobber(output, &adaptive, 1);
  cli_threads(threads);

  slem_negstats_opts_init(&opts);
  opts.format = fmt;
  opts.pos_format = pos_fmt;
  opts.block = block;
  opts.leaf_rows = leaf_rows;
  opts.skip_nonfinite = skip;
  opts.partial = partial;
  opts.eigen = eigen;
  opts.mixed = positives;
  opts.adaptive = adaptive;
  opts.theta = theta;
  opts.depth = depth;
  opts.pca = pca;
  opts.lambda = lambda;
  opts.lambda_rel = lambda_rel;
  opts.kernel = kernel;
  opts.rank = rank;
  opts.tol = tol;
  opts.factor = factor < 0 ? SLEM_FACTOR_ICD : (SlemKernelFactor)factor;
  opts.couple = couple;
  opts.sample = sample;
  opts.seed = seed;
  opts.shard = shard;
  opts.allow_mixed_blas = mixed;
  if (!quiet && isatty(2)) {
    total = shard.count ? 0 : count_inputs(argv + optind, argc - optind, fmt);
    opts.progress = on_progress;
    opts.progress_ctx = &total;
  }
  status = slem_negstats_run(output, (const char *const *)argv + optind, (size_t)(argc - optind),
                             &opts, &res, &err) == SLEM_OK
               ? CLI_EXIT_OK
               : pca > 0 && res.d > 0 && pca > res.d
                     ? (cli_usage_error("--pca %zu: more than the dimension %zu of the negatives",
                                        pca, res.d), CLI_EXIT_USAGE)
                     : cli_fail(&err);
  cli_progress_done();
  if (status == CLI_EXIT_OK && print_stats) cli_print_phases(&res.phases);
  if (status == CLI_EXIT_OK && !quiet && res.skipped > 0)
    cli_warn("%s: skipped %" PRIu64 " records with NaN or Inf", res.skipped_in, res.skipped);
  if (status == CLI_EXIT_OK && !quiet && kernel && res.rank < res.rank_asked &&
      factor != SLEM_FACTOR_FULL)
    cli_warn("the factorisation stopped at rank %zu of %zu (residual trace %g)", res.rank, rank,
             res.residual_trace);
  return cli_close_stdout(status);
}
