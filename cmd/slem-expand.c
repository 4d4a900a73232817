/* slem-expand: average / alpha query expansion and database-side augmentation. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/rank/expand.h"
#include "../lib/io/ids.h"
#include "../lib/rank/rankings.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-expand [OPTION]... -d DATABASE -n N [-r RANKING] [VECTORS]\n"
      "Write, for each vector q of VECTORS, normalise(q + sum_{j <= N} s_j^alpha x_j),\n"
      "where x_1, x_2, ... are the database vectors that RANKING (slem-match's output\n"
      "for VECTORS against DATABASE) lists for q, best first, and s_j their scores:\n"
      "average query expansion (alpha 0) or alpha-QE. The database against itself,\n"
      "with slem-match --exclude-self, gives database-side augmentation (DBA).\n"
      "\n"
      "  -d, --database FILE      the database the ranking ranks (required)\n"
      "  -n, --neighbours N       results added per vector (required)\n"
      "  -a, --alpha A            weight s^A of each result (default 0: AQE)\n"
      "  -r, --ranking FILE       the ranking (default: stdin when VECTORS is a file)\n"
      "      --ranking-format F   %s (default: from the first line)\n"
      "      --query-ids FILE     ids naming VECTORS in the ranking (default: 0-based\n"
      "                           rows)\n"
      "      --db-ids FILE        ids naming DATABASE rows in the ranking (default:\n"
      "                           rows)\n"
      "  -o, --output OUT         write here (default: stdout)\n"
      "  -f, --format FMT         input format of VECTORS and DATABASE (default: from\n"
      "                           the extension, else from the content)\n"
      "      --query-format FMT, --db-format FMT\n"
      "                           the format of VECTORS, of DATABASE, instead of -f\n"
      "  -F, --output-format FMT  output format (default: from OUT's extension; fvecs\n"
      "                           to stdout)\n"
      "  -q, --quiet              no progress or warnings\n"
      "  -h, --help               show this help and exit\n"
      "  -V, --version            show the version and the BLAS library, and exit\n"
      "\n"
      "Example: slem-match -d db.fvecs q.fvecs |\n"
      "         slem-expand -d db.fvecs -n 2 q.fvecs | slem-match -d db.fvecs\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-expand(1).\n",
      slem_rankformat_names(), slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static void progress(void *ctx, uint64_t done, uint64_t total) {
  cli_progress_of("vectors expanded", done, total);
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"database", required_argument, 0, 'd'},      {"neighbours", required_argument, 0, 'n'},
      {"alpha", required_argument, 0, 'a'},         {"ranking", required_argument, 0, 'r'},
      {"ranking-format", required_argument, 0, 'R'}, {"query-ids", required_argument, 0, 'Q'},
      {"db-ids", required_argument, 0, 'D'},        {"output", required_argument, 0, 'o'},
      {"format", required_argument, 0, 'f'},        {"output-format", required_argument, 0, 'F'},
      {"quiet", no_argument, 0, 'q'},               {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},             {"query-format", required_argument, 0, 'y'},
      {"db-format", required_argument, 0, 'Y'},     {0, 0, 0, 0}};
  const char *shortopts = "d:n:a:r:o:f:F:qhV";
  const char *db_path = NULL, *rank_path = NULL, *input = "-", *output = "-",
             *qids_path = NULL, *dbids_path = NULL;
  SlemFormat ifmt = SLEM_FMT_AUTO, ofmt = SLEM_FMT_AUTO;
  SlemFormat qfmt = SLEM_FMT_END, dfmt = SLEM_FMT_END; /* END: as -f */
  SlemRankFormat rfmt = SLEM_RANK_AUTO;
  SlemExpandOpts opts;
  SlemError err;
  int c, quiet = 0;

  cli_init(argv[0]);
  slem_expand_opts_init(&opts);
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'd':
      /* slem-match's several -d make one database; here the last one alone was taken, and
       * a ranking of the rows of the first read the rows of the second */
      if (db_path)
        cli_usage_error("-d twice ('%s', '%s'): slem-expand reads one database file; give the "
                        "rows slem-match ranked as one file", db_path, optarg);
      db_path = optarg;
      break;
    case 'n': opts.n = (size_t)cli_long("-n", optarg, 1, 1L << 20); break;
    case 'a':
      opts.alpha = cli_double("--alpha", optarg);
      if (opts.alpha < 0) cli_usage_error("--alpha: must not be negative, not %s", optarg);
      break;
    case 'r': rank_path = optarg; break;
    case 'R':
      if (slem_rankformat_parse(&rfmt, optarg, &err) != SLEM_OK)
        cli_usage_error("--ranking-format: %s", err.msg);
      break;
    case 'Q': qids_path = optarg; break;
    case 'D': dbids_path = optarg; break;
    case 'o': output = optarg; break;
    case 'f':
      ifmt = cli_format("--format", optarg, 0);
      break;
    case 'y':
    case 'Y':
      *(c == 'y' ? &qfmt : &dfmt) = cli_format_of(c == 'y' ? "query" : "db", optarg);
      break;
    case 'F':
      ofmt = cli_format("--output-format", optarg, 1);
      break;
    case 'q': quiet = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  if (optind < argc) input = argv[optind++]; else if (rank_path) cli_stdin_hint("vectors");
  {
    SlemExpandFiles f = {db_path, dfmt == SLEM_FMT_END ? ifmt : dfmt,
                         input, qfmt == SLEM_FMT_END ? ifmt : qfmt, rank_path, rfmt,
                         qids_path, dbids_path, output, ofmt, progress, NULL};
    const char *inputs[5] = {db_path, rank_path ? rank_path : "-", input, qids_path, dbids_path};
    uint64_t zeros = 0;
    int st;
    /* the rules between options, before the environment is read */
    if (slem_expand_check(&f, &opts, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
    if (optind < argc) cli_usage_error("one input at a time: unexpected '%s'", argv[optind]);
    if (!rank_path) cli_stdin_hint("the ranking");
    cli_refuse_clobber(output, inputs, 5);
    cli_set_quiet(quiet);
    st = slem_expand_run_files(&f, &opts, &zeros, &err);
    if (st == SLEM_OK) cli_progress_done();
    if (st == SLEM_OK && !quiet && zeros > 0) cli_warn("%" PRIu64 " expanded vectors are zero", zeros);
    return cli_close_stdout(st == SLEM_OK ? CLI_EXIT_OK : cli_fail(&err));
  }
}
