/* slem-negstats: negative statistics into a .slem cache. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cache.h"
#include "../lib/kernel.h"
#include "../lib/kslem.h"
#include "../lib/prefetch.h"
#include "../lib/slem.h"
#include "../lib/stats.h"
#include "../lib/vecs.h"
#include "cli.h"

#define DEFAULT_LAMBDA_REL 1.0

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-negstats [OPTION]... -o CACHE NEGATIVES...\n"
      "       slem-negstats --info CACHE\n"
      "Compute the mean and covariance of a pool of negative vectors and write a cache\n"
      "with mu and A^-1 = (Sigma + lambda I)^-1 for slem-encode.\n"
      "\n"
      "NEGATIVES are vector files (- for stdin) or partial caches written with --partial,\n"
      "merged exactly.\n"
      "\n"
      "  -o, --output CACHE     write the cache to CACHE (required; - for stdout)\n"
      "  -l, --lambda L         regularisation lambda, absolute\n"
      "  -r, --lambda-rel R     lambda = R * trace(Sigma) / d (default %g)\n"
      "      --partial          write mergeable partial statistics (count, mean, scatter)\n"
      "  -K, --kernel SPEC      kernel SLEM: linear, poly:gamma=G,c=C,p=P, rbf:gamma=G or\n"
      "                         rbf:g=R (gamma = R / median squared distance, default g=1),\n"
      "                         chi2, intersection, hellinger\n"
      "      --rank R           kernel: rank of the factorisation (default 256)\n"
      "      --tol T            kernel: stop when the residual trace is T * trace(K) (default 0)\n"
      "      --sample M         kernel: negatives sampled for the median distance (default 1000)\n"
      "      --seed S           kernel: seed of that sample (default 1)\n"
      "  -f, --format FMT       format of the negative files (default: from the extension,\n"
      "                         else from the content)\n"
      "      --skip-nonfinite   skip (and count) negatives holding a NaN or an Inf, instead\n"
      "                         of stopping at the first one\n"
      "  -b, --block N          vectors per block (default: 2^21 / d, from 256 to 4096)\n"
      "  -t, --threads N        BLAS threads (default: SLEM_THREADS, else all cores)\n"
      "      --info CACHE       print the JSON header of CACHE and exit\n"
      "  -q, --quiet            no progress on the terminal\n"
      "  -h, --help             show this help and exit\n"
      "  -V, --version          show the version and the BLAS library, and exit\n"
      "\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "A kernel cache holds the negatives' pivots and an r x r factor; the negatives are\n"
      "read into memory for it (n x d values, and the n x r factor).\n"
      "See slem-negstats(1).\n",
      DEFAULT_LAMBDA_REL, slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static int info(const char *path) {
  SlemCache *c = NULL;
  SlemError err;
  int st = slem_cache_read(&c, path, &err);
  if (st) return cli_fail(&err);
  printf("%s\n", slem_cache_json(c));
  slem_cache_free(c);
  return cli_close_stdout(CLI_EXIT_OK);
}

/* Adds one input: a partial cache (merged) or a vector file (streamed, the next block
 * read while the current one is accumulated). */
static int add_input(SlemStats **stats, const char *path, SlemFormat fmt, size_t block,
                     int skip, int quiet, SlemError *err) {
  SlemVecReader *r = NULL;
  SlemPrefetch *pf = NULL;
  int st;
  if (strcmp(path, "-") != 0 && fmt == SLEM_FMT_AUTO && slem_cache_sniff(path)) {
    SlemCache *c = NULL;
    st = slem_cache_read(&c, path, err);
    if (st) return st;
    if (c->kind != SLEM_CACHE_PARTIAL) {
      slem_cache_free(c);
      return slem_error(err, SLEM_EFORMAT, "%s: only partial caches (--partial) can be merged",
                        path);
    }
    if (!*stats && (st = slem_stats_new(stats, c->d, err)) != SLEM_OK) {
      slem_cache_free(c);
      return st;
    }
    if (slem_stats_dim(*stats) != c->d) {
      st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                      path, c->d, slem_stats_dim(*stats));
      slem_cache_free(c);
      return st;
    }
    slem_stats_merge(*stats, c->n, c->mu, c->scatter);
    slem_cache_free(c);
    return SLEM_OK;
  }
  st = slem_vecreader_open(&r, path, fmt, err);
  if (st) return st;
  slem_vecreader_skip_nonfinite(r, skip);
  if (!*stats) {
    st = slem_stats_new(stats, slem_vecreader_dim(r), err);
    if (st) goto done;
  }
  if (slem_stats_dim(*stats) != slem_vecreader_dim(r)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                    slem_vecreader_name(r), slem_vecreader_dim(r), slem_stats_dim(*stats));
    goto done;
  }
  st = slem_prefetch_new(&pf, r, block ? block : slem_block_rows(slem_vecreader_dim(r)), 0, err);
  if (st) goto done;
  for (;;) {
    void *rows;
    size_t got;
    st = slem_prefetch_next(pf, &rows, &got, err);
    if (st || got == 0) break;
    slem_stats_add(*stats, rows, got);
    if (!quiet) cli_progress("negatives", slem_stats_count(*stats));
  }
done:
  slem_prefetch_free(pf);
  if (st == SLEM_OK && slem_vecreader_skipped(r) > 0 && !quiet)
    cli_warn("%s: skipped %" PRIu64 " records with NaN or Inf", slem_vecreader_name(r),
             slem_vecreader_skipped(r));
  slem_vecreader_free(r);
  return st;
}

/* Reads every vector of the inputs into one growing array (kernel SLEM needs them all). */
static int read_all(double **x, size_t *n, size_t *d, char **paths, int npaths, SlemFormat fmt,
                    size_t block, int quiet, SlemError *err) {
  size_t cap = 0;
  int st = SLEM_OK;
  *x = NULL;
  *n = *d = 0;
  for (int i = 0; i < npaths && st == SLEM_OK; i++) {
    SlemVecReader *r = NULL;
    if (strcmp(paths[i], "-") != 0 && fmt == SLEM_FMT_AUTO && slem_cache_sniff(paths[i]))
      return slem_error(err, SLEM_EINVAL, "%s: a kernel cache is built from vectors, not from "
                        "partial caches", paths[i]);
    st = slem_vecreader_open(&r, paths[i], fmt, err);
    if (st) break;
    if (*d == 0) *d = slem_vecreader_dim(r);
    if (slem_vecreader_dim(r) != *d) {
      st = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the negatives before it have %zu",
                      slem_vecreader_name(r), slem_vecreader_dim(r), *d);
    }
    while (st == SLEM_OK) {
      size_t got;
      if (*n + block > cap) {
        size_t ncap = cap ? 2 * cap : 4 * block;
        double *p = realloc(*x, ncap * *d * sizeof *p);
        if (!p) {
          st = slem_error(err, SLEM_ENOMEM, "out of memory for %zu negatives of dimension %zu",
                          ncap, *d);
          break;
        }
        *x = p;
        cap = ncap;
      }
      st = slem_vecreader_read(r, *x + *n * *d, block, &got, err);
      if (st || got == 0) break;
      *n += got;
      if (!quiet) cli_progress("negatives", *n);
    }
    slem_vecreader_free(r);
  }
  return st;
}

static int kernel_cache(const char *output, const char *spec, size_t rank, double tol,
                        size_t sample, uint64_t seed, double lambda, double lambda_rel,
                        char **paths, int npaths, SlemFormat fmt, size_t block, int quiet,
                        SlemError *err) {
  SlemKernel k;
  SlemKernelStats *ks = NULL;
  double *x = NULL, median = -1;
  size_t n, d;
  int st = slem_kernel_parse(&k, spec, err);
  if (st == SLEM_OK) st = read_all(&x, &n, &d, paths, npaths, fmt, block ? block : 4096, quiet, err);
  cli_progress_done();
  if (st == SLEM_OK) st = slem_kernel_prepare(&k, x, n, d, npaths == 1 ? paths[0] : "negatives", 1, err);
  if (st == SLEM_OK && k.gamma_relative)
    st = slem_kernel_estimate_gamma(&k, &median, x, n, d, sample, seed, err);
  if (st == SLEM_OK)
    st = slem_kernel_stats_new(&ks, &k, x, n, d, rank, tol, lambda, lambda_rel, err);
  if (st == SLEM_OK) {
    SlemProvenance prov = {"slem-negstats", (const char *const *)paths, (size_t)npaths};
    ks->info.gamma_median = median;
    ks->info.seed = seed;
    if (ks->info.r < rank && ks->info.r < n && !quiet)
      cli_warn("the factorisation stopped at rank %zu of %zu (residual trace %g)", ks->info.r,
               rank, ks->info.residual_trace);
    st = slem_cache_write_kernel(output, d, n, &ks->info, ks->pivots, ks->lp, ks->mu_b, ks->ginv,
                                 &prov, err);
  }
  slem_kernel_stats_free(ks);
  free(x);
  return st;
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
      {"skip-nonfinite", no_argument, 0, 'N'},
      {0, 0, 0, 0}};
  const char *output = NULL, *kernel = NULL;
  size_t rank = 256, sample = 1000;
  double tol = 0;
  uint64_t seed = 1;
  double lambda = -1, lambda_rel = -1;
  int partial = 0, quiet = 0, skip = 0, c, status = CLI_EXIT_OK;
  long threads = 0;
  size_t block = 0; /* slem_block_rows(d) */
  SlemFormat fmt = SLEM_FMT_AUTO;
  SlemStats *stats = NULL;
  SlemError err;
  double *ainv = NULL;

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
    case 'R': rank = (size_t)cli_long("--rank", optarg, 1, 1L << 20); break;
    case 'O':
      tol = cli_double("--tol", optarg);
      if (tol < 0 || tol >= 1) cli_usage_error("--tol: from 0 to below 1");
      break;
    case 'S': sample = (size_t)cli_long("--sample", optarg, 2, 100000); break;
    case 'E': seed = (uint64_t)cli_long("--seed", optarg, 0, 0x7fffffffL); break;
    case 'f':
      if (slem_format_parse(&fmt, optarg) != SLEM_OK)
        cli_usage_error("--format: unknown format '%s' (%s)", optarg, slem_format_names());
      break;
    case 'b': block = (size_t)cli_long("--block", optarg, 1, 1L << 24); break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'I': return info(optarg);
    case 'q': quiet = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, "o:l:r:k:K:f:b:t:qhV");
    }
  }
  if (!output) cli_usage_error("no output cache: give -o CACHE");
  if (optind >= argc) cli_usage_error("no negatives: give one or more vector files");
  if (lambda >= 0 && lambda_rel >= 0) cli_usage_error("give --lambda or --lambda-rel, not both");
  if (partial && (lambda >= 0 || lambda_rel >= 0))
    cli_usage_error("--partial stores sums only: lambda is chosen when the partial caches are merged");
  if (partial && kernel) cli_usage_error("--partial does not go with --kernel");
  if (skip && kernel) cli_usage_error("--skip-nonfinite is for linear caches");
  if (lambda < 0 && lambda_rel < 0) lambda_rel = DEFAULT_LAMBDA_REL;
  for (int i = optind, nstdin = 0; i < argc; i++)
    if (strcmp(argv[i], "-") == 0 && ++nstdin > 1) cli_usage_error("stdin (-) given twice");
  cli_threads(threads);

  if (kernel) {
    if (kernel_cache(output, kernel, rank, tol, sample, seed, lambda, lambda_rel, argv + optind,
                     argc - optind, fmt, block, quiet, &err) != SLEM_OK)
      status = cli_fail(&err);
    goto done;
  }
  for (int i = optind; i < argc; i++) {
    if (add_input(&stats, argv[i], fmt, block, skip, quiet, &err) != SLEM_OK) {
      status = cli_fail(&err);
      goto done;
    }
  }
  cli_progress_done();
  {
    SlemProvenance prov = {"slem-negstats", (const char *const *)argv + optind,
                           (size_t)(argc - optind)};
    size_t d = slem_stats_dim(stats);
    if (partial) {
      if (slem_cache_write_partial(output, d, slem_stats_count(stats), slem_stats_mean(stats),
                                   slem_stats_scatter(stats), &prov, &err) != SLEM_OK)
        status = cli_fail(&err);
      goto done;
    }
    double used;
    ainv = malloc(d * d * sizeof *ainv);
    if (!ainv) {
      slem_error(&err, SLEM_ENOMEM, "out of memory for a %zu x %zu matrix", d, d);
      status = cli_fail(&err);
      goto done;
    }
    if (slem_stats_inverse(stats, ainv, &used, lambda, lambda_rel, &err) != SLEM_OK ||
        slem_cache_write_linear(output, d, slem_stats_count(stats), used, lambda_rel,
                                slem_stats_trace(stats), slem_stats_rcond(stats),
                                slem_stats_mean(stats), ainv, &prov, &err) != SLEM_OK)
      status = cli_fail(&err);
  }
done:
  free(ainv);
  slem_stats_free(stats);
  return cli_close_stdout(status);
}
