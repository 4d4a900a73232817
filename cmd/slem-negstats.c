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

/* The tool's own options, around the library's (slem_negstats_opts_get()) in --help. */
typedef struct Tool {
  const char *output, *info;
  long threads;
  int stats, quiet, help, version;
} Tool;

#define T(f) SLEM_OPT_FIELD(Tool, f)
static const SlemOptSpec head[] = {
    {.name = "output", .key = 'o', .metavar = "CACHE", .type = SLEM_OPT_TEXT, T(output),
     .help = "write the cache to CACHE (required; - for stdout)"},
    {0}};
static const SlemOptSpec tail[] = {
    {.name = "threads", .key = 't', .metavar = "N", .type = SLEM_OPT_WHOLE, T(threads), .min = 1,
     .max = 1024, .help = "BLAS threads (default: SLEM_THREADS, else all cores)"},
    {.name = "info", .metavar = "CACHE", .type = SLEM_OPT_TEXT, T(info),
     .help = "print the JSON header of CACHE and exit"},
    {.name = "stats", .type = SLEM_OPT_FLAG, T(stats),
     .help = "print where the wall time went on stderr (read,\n"
             "convert, compute, merge, factor, write, waits; see the\n"
             "man page)"},
    {.name = "quiet", .key = 'q', .type = SLEM_OPT_FLAG, T(quiet),
     .help = "no progress on the terminal"},
    {.name = "help", .key = 'h', .type = SLEM_OPT_FLAG, T(help), .help = "show this help and exit"},
    {.name = "version", .key = 'V', .type = SLEM_OPT_FLAG, T(version),
     .help = "show the version and the BLAS library, and exit"},
    {0}};
#undef T

static void __attribute__((noreturn)) usage(const CliOpts *cl) {
  printf(
      "Usage: slem-negstats [OPTION]... -o CACHE NEGATIVES...\n"
      "       slem-negstats --info CACHE\n"
      "Compute the mean and covariance of a pool of negative vectors and write a cache\n"
      "with mu and A^-1 = (Sigma + lambda I)^-1 for slem-encode.\n"
      "\n"
      "NEGATIVES are vector files (- for stdin) or partial caches written with\n"
      "--partial, merged exactly.\n"
      "\n");
  cli_opts_help(cl, 25);
  printf(
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
  Tool tool = {0};
  int c, own, status = CLI_EXIT_OK;
  SlemNegstatsOpts opts;
  uint64_t total = 0;
  SlemNegstatsResult res;
  SlemError err;
  CliOpts cl;

  cli_init(argv[0]);
  /* -k: the spelling of --kernel in the previous release */
  cli_opts_build(&cl, head, slem_negstats_opts_count, slem_negstats_opts_get, tail, "k:");
  slem_negstats_opts_init(&opts);
  opts.lambda_rel = -1; /* DEFAULT_LAMBDA_REL unless --lambda */
  while ((c = getopt_long(argc, argv, cl.shortopts, cl.longopts, NULL)) != -1) {
    const SlemOptSpec *s;
    if (c == 'k') {
      cli_warn("-k %s: use -K (--kernel); -k means a count of results in the other slem tools",
               optarg);
      c = 'K';
    }
    if (!(s = cli_opts_found(&cl, c, &own))) cli_bad_option(argv, cl.shortopts, cl.longopts);
    if ((own ? slem_optspec_set(s, &tool, NULL, optarg, &err)
             : slem_negstats_opts_set(&opts, s->name, optarg, &err)) != SLEM_OK)
      cli_usage_error("%s", err.msg);
    if (tool.help) usage(&cl);
    if (tool.version) cli_version();
    if (tool.info) return info(tool.info);
  }
  {
    const char *const *inputs = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    if (!tool.output) cli_usage_error("no output cache: give -o CACHE");
    if (slem_negstats_check(&opts, inputs, n, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
    if (opts.lambda < 0 && opts.lambda_rel < 0) opts.lambda_rel = DEFAULT_LAMBDA_REL;
    cli_refuse_stdin_twice(inputs, n);
    cli_refuse_clobber(tool.output, inputs, n);
    cli_source_date_epoch(); /* the cache's provenance time */
    if (opts.mixed) cli_refuse_clobber(tool.output, &opts.mixed, 1);
    if (opts.adaptive) cli_refuse_clobber(tool.output, &opts.adaptive, 1);
    cli_threads(tool.threads);
    if (!tool.quiet && isatty(2)) {
      total = opts.shard.count ? 0 : count_inputs(argv + optind, argc - optind, opts.format);
      opts.progress = on_progress;
      opts.progress_ctx = &total;
    }
    status = slem_negstats_run(tool.output, inputs, n, &opts, &res, &err) == SLEM_OK ? CLI_EXIT_OK
             : opts.pca > 0 && res.d > 0 && opts.pca > res.d
                 ? (cli_usage_error("--pca %zu: more than the dimension %zu of the negatives",
                                    opts.pca, res.d), CLI_EXIT_USAGE)
                 : cli_fail(&err);
  }
  cli_progress_done();
  if (status == CLI_EXIT_OK && tool.stats) cli_print_phases(&res.phases);
  if (status == CLI_EXIT_OK && !tool.quiet && res.skipped > 0)
    cli_warn("%s: skipped %" PRIu64 " records with NaN or Inf", res.skipped_in, res.skipped);
  if (status == CLI_EXIT_OK && !tool.quiet && opts.kernel && res.rank < res.rank_asked &&
      opts.factor != SLEM_FACTOR_FULL)
    cli_warn("the factorisation stopped at rank %zu of %zu (residual trace %g)", res.rank,
             opts.rank, res.residual_trace);
  return cli_close_stdout(status);
}
