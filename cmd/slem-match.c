/* slem-match: top-k inner-product (cosine) ranking of a database for each query. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/rank/matchrun.h"
#include "../lib/io/mem.h"
#include "../lib/rank/rankings.h"
#include "../lib/io/libslem.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-match [OPTION]... -d DATABASE [-d DATABASE]... [QUERIES]\n"
      "Rank the vectors of DATABASE for each vector of QUERIES (default: stdin) by\n"
      "inner product, best first, and write the top K of each query. With a kernel\n"
      "cache (-c), QUERIES and DATABASE are base features and the score is the exact\n"
      "kernel SLEM similarity. Scores are exact: the same whatever the threads, tiles,\n"
      "query order or split of the database into files and shards.\n"
      "\n"
      "  -d, --database FILE    database vectors (required; a regular file when there\n"
      "                         are more than 2048 queries, since it is read once per\n"
      "                         block); several -d make one database, rows numbered\n"
      "                         across them\n"
      "  -D, --database-list L  database files listed in L, one path per line (after\n"
      "                         any -d)\n"
      "      --shard I/N        search only rows floor(I*R/N) .. floor((I+1)*R/N)-1 of\n"
      "                         the R database rows (0 <= I < N); rows and ids stay\n"
      "                         global; in jsonl a first line names the shard for\n"
      "                         slem-merge\n"
      "  -c, --cache CACHE      a kernel cache from slem-negstats --kernel: score base\n"
      "                         features by the exact kernel SLEM similarity\n"
      "      --couple [MODE]    with -c: couple the negatives with each point (a cache\n"
      "                         made with slem-negstats --couple; see slem-encode(1));\n"
      "                         MODE exact (default) or authors (slem_similarity.m's\n"
      "                         score)\n"
      "      --affine           QUERIES are exemplar classifiers, d + 1 values (w,\n"
      "                         then b, from slem-encode or slem-esvm --classifier):\n"
      "                         the score of a database vector x is w.x + b\n"
      "      --calibration FILE\n"
      "                         the same, each score mapped through its query's\n"
      "                         sigmoid 1 / (1 + exp(-a (s - b))), one 'a b' line per\n"
      "                         query (from slem-calibrate): probabilities comparable\n"
      "                         across queries\n"
      "  -k, --top K            results per query (default 100)\n"
      "  -o, --output OUT       write here (default: stdout)\n"
      "  -F, --output-format F  %s (default: from OUT's extension\n"
      "                         %s, else tsv); tsv lines: query,\n"
      "                         rank, id, score; npy: FAISS's I and D matrices,\n"
      "                         OUT.I.npy and OUT.D.npy\n"
      "  -f, --format FMT       format of both inputs (default: from the extension,\n"
      "                         else from the content); also --input-format\n"
      "      --query-format FMT, --db-format FMT\n"
      "                         the format of the queries, of the database, instead\n"
      "                         of -f\n"
      "      --query-ids FILE   ids of the queries, one per line (default: 0-based\n"
      "                         rows)\n"
      "      --db-ids FILE      ids of the database rows, one per line; with several\n"
      "                         database files, one --db-ids per file, in their order\n"
      "      --exclude-self     skip the database row with the query's index (queries\n"
      "                         taken from the database)\n"
      "  -n, --normalize        L2-normalise queries and database first: cosine search\n"
      "                         on raw vectors (implied by an HDF5 file whose attribute\n"
      "                         distance is angular; other distances are refused)\n"
      "      --tag TAG          run tag of the trec format (default slem)\n"
      "  -t, --threads N        BLAS threads (default: SLEM_THREADS, else all cores)\n"
      "      --tile-rows N      database rows per tile (default about 2^22/d)\n"
      "      --query-block N    queries per block (default 2048)\n"
      "      --stats            print the counts of scored and exactly re-scored\n"
      "                         pairs, and of the passes over the database (one per\n"
      "                         block of queries; the files are read once when the\n"
      "                         database fits in SLEM_MATCH_MEMORY bytes, default a\n"
      "                         quarter of the memory), and where the wall time went\n"
      "                         (see the man page)\n"
      "      --no-check         match descriptors of different caches, or descriptors\n"
      "                         against plain vectors (refused by default)\n"
      "  -q, --quiet            no progress or warnings\n"
      "  -h, --help             show this help and exit\n"
      "  -V, --version          show the version and the BLAS library, and exit\n"
      "\n"
      "Ties are broken by the lower database row. Scores print with %%.9g. A query with\n"
      "no result (an empty shard) writes no line in tsv and trec, an empty list in\n"
      "jsonl.\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-match(1).\n",
      slem_rankformat_names(), slem_rankformat_extensions(), slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

/* Progress on a terminal: queries scored out of the queries' count. */
static void on_progress(void *ctx, uint64_t done, uint64_t total) {
  (void)ctx;
  cli_progress_of("queries", done, total);
}

static void on_warning(void *ctx, const char *msg) {
  (void)ctx;
  cli_warn("%s", msg);
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"database", required_argument, 0, 'd'},     {"top", required_argument, 0, 'k'},
      {"cache", required_argument, 0, 'c'},
      {"output", required_argument, 0, 'o'},       {"output-format", required_argument, 0, 'F'},
      {"input-format", required_argument, 0, 'f'}, {"format", required_argument, 0, 'f'},
      {"quiet", no_argument, 0, 'q'},              {"query-ids", required_argument, 0, 'Q'},
      {"db-ids", required_argument, 0, 'B'},       {"exclude-self", no_argument, 0, 'X'},
      {"database-list", required_argument, 0, 'D'}, {"shard", required_argument, 0, 'S'},
      {"tile-rows", required_argument, 0, 'R'},    {"query-block", required_argument, 0, 'P'},
      {"stats", no_argument, 0, 'A'},              {"no-check", no_argument, 0, 'C'},
      {"normalize", no_argument, 0, 'n'},          {"tag", required_argument, 0, 'G'},
      {"threads", required_argument, 0, 't'},      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},            {"affine", no_argument, 0, 'M'},
      {"calibration", required_argument, 0, 'L'},  {"couple", optional_argument, 0, 'U'},
      {"query-format", required_argument, 0, 'y'}, {"db-format", required_argument, 0, 'Y'},
      {0, 0, 0, 0}};
  const char **db_paths = calloc((size_t)argc, sizeof *db_paths),
             **dbids_paths = calloc((size_t)argc, sizeof *dbids_paths);
  static const char shortopts[] = "d:D:c:k:o:f:F:nt:qhV";
  int print_stats = 0, quiet = 0, format_given = 0, c, status;
  SlemRankFormat rfmt;
  long threads = 0;
  SlemError err;
  SlemMatchRunOpts o;
  SlemMatchRunResult res;
  const SlemMatchStats *ms = &res.stats;

  cli_init(argv[0]);
  slem_matchrun_opts_init(&o);
  if (!db_paths || !dbids_paths) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    return CLI_EXIT_FAIL;
  }
  o.db = db_paths;
  o.db_ids = dbids_paths;
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'd': db_paths[o.ndb++] = optarg; break;
    case 'D':
      if (o.db_list) cli_usage_error("--database-list: one list, please");
      o.db_list = optarg;
      break;
    case 'S':
      if (slem_shard_parse(&o.shard, optarg, &err) != SLEM_OK) cli_usage_error("--shard: %s", err.msg);
      break;
    case 'R': o.match.dblock = (size_t)cli_long("--tile-rows", optarg, 1, 1L << 24); break;
    case 'P': o.match.qblock = (size_t)cli_long("--query-block", optarg, 1, 1L << 20); break;
    case 'A': print_stats = 1; break;
    case 'C': o.no_check = 1; break;
    case 'c': o.cache = optarg; break;
    case 'k': o.match.k = (size_t)cli_long("-k", optarg, 1, 1L << 20); break;
    case 'o': o.output = optarg; break;
    case 'F':
      if (slem_rankformat_parse(&rfmt, optarg, &err) != SLEM_OK)
        cli_usage_error("--output-format: %s", err.msg);
      o.output_format = optarg;
      format_given = 1;
      break;
    case 'f':
      if (slem_format_parse(&o.informat, optarg) == SLEM_OK) break;
      /* the spelling of the previous release: -f named the output format */
      if (slem_rankformat_parse(&rfmt, optarg, NULL) == SLEM_OK) {
        cli_warn("-f %s: -f is now the input format, as in the other tools; use -F %s for the "
                 "output format (the old spelling goes away in the next release)", optarg, optarg);
        if (!format_given) o.output_format = optarg; /* -F, before or after, wins */
        break;
      }
      o.informat = cli_format("--format", optarg, 0); /* a usage error */
      break;
    case 'y':
    case 'Y':
      *(c == 'y' ? &o.query_format : &o.db_format) =
          cli_format_of(c == 'y' ? "query" : "db", optarg);
      break;
    case 'q': quiet = 1; break;
    case 'Q': o.query_ids = optarg; break;
    case 'B': dbids_paths[o.ndb_ids++] = optarg; break;
    case 'X': o.match.exclude_self = 1; break;
    case 'n': o.match.normalize = 1; break;
    case 'M': o.match.affine = 1; break;
    case 'L': o.calibration = optarg; break;
    case 'G':
      if (!*optarg || strpbrk(optarg, " \t\n")) cli_usage_error("--tag: one word, please");
      o.tag = optarg;
      break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'U': o.couple = cli_couple(argc, argv); break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  cli_set_quiet(quiet);
  if (optind < argc) o.queries = argv[optind++]; else cli_stdin_hint("queries");
  if (optind < argc) cli_usage_error("one query file at a time: unexpected '%s'", argv[optind]);
  /* the rules between options, before the environment is read */
  if (slem_matchrun_check(&o, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
  cli_threads(threads);
  {
    const char *mm = getenv("SLEM_MATCH_MEMORY");
    if (mm && *mm && slem_mem_parse_bytes(mm, &o.match.memory) != 0)
      cli_usage_error("SLEM_MATCH_MEMORY: '%s' is not a number of bytes (digits, optionally "
                      "followed by K, M, G or T: 512M, 4G; 0 keeps nothing)", mm);
  }
  o.warn = quiet ? NULL : on_warning;
  o.progress = on_progress;
  /* an output that is an input, then one named as vectors (not a ranking's), are refused
   * before any work (cli.h); slem_matchrun() checks the first again, for its other callers */
  cli_refuse_clobber(o.output, db_paths, o.ndb);
  cli_refuse_clobber(o.output, &o.queries, 1);
  if (!o.output_format) cli_refuse_vector_name(o.output);
  if (slem_matchrun(&o, &res, &err) != SLEM_OK) {
    if (res.usage) cli_usage_error("%s", err.msg);
    status = cli_fail(&err);
    goto done;
  }
  cli_progress_done();
  status = CLI_EXIT_OK;
  if (print_stats)
    fprintf(stderr, "%s: %" PRIu64 " queries x %" PRIu64 " rows: %" PRIu64 " pairs scored, %" PRIu64
            " re-scored exactly (%.3g%%, %.1f per query)\n", cli_prog(), ms->nq, ms->ndb, ms->pairs,
            ms->rescored, ms->pairs ? 100.0 * (double)ms->rescored / (double)ms->pairs : 0.0,
            ms->nq ? (double)ms->rescored / (double)ms->nq : 0.0);
  if (print_stats)
    fprintf(stderr, "%s: %" PRIu64 " passes over the database, %" PRIu64 " from the files\n",
            cli_prog(), ms->passes, ms->reads);
  if (print_stats) cli_print_phases(&ms->phases);
  if (!quiet && o.shard.count == 0 && ms->ndb == 0)
    cli_warn("the database holds no vectors (empty segments): every query has no result");
  else if (!quiet && o.shard.count == 0 && o.match.k > ms->ndb)
    cli_warn("-k %zu is more than the %" PRIu64 " database rows: each query lists at most %" PRIu64,
             o.match.k, ms->ndb, ms->ndb);
  if (!quiet && ms->clamps > 0)
    cli_warn("%" PRIu64 " vectors had |v|^2 > k(x, x) beyond rounding; u^2 was clamped to 0",
             ms->clamps);
done:
  free(db_paths);
  free(dbids_paths);
  return cli_close_stdout(status);
}
