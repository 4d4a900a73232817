/* slem-match: top-k inner-product (cosine) ranking of a database for each query. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/arith.h"
#include "../lib/cache.h"
#include "../lib/db.h"
#include "../lib/ids.h"
#include "../lib/match.h"
#include "../lib/mem.h"
#include "../lib/rankings.h"
#include "../lib/slem.h"
#include "../lib/vecs.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-match [OPTION]... -d DATABASE [-d DATABASE]... [QUERIES]\n"
      "Rank the vectors of DATABASE for each vector of QUERIES (default: stdin) by inner\n"
      "product, best first, and write the top K of each query. With a kernel cache (-c),\n"
      "QUERIES and DATABASE are base features and the score is the exact kernel SLEM\n"
      "similarity. Scores are exact: the same whatever the threads, tiles, query order or\n"
      "split of the database into files and shards.\n"
      "\n"
      "  -d, --database FILE    database vectors (required; a regular file when there are\n"
      "                         more than 2048 queries, since it is read once per block);\n"
      "                         several -d make one database, rows numbered across them\n"
      "  -D, --database-list L  database files listed in L, one path per line (after any -d)\n"
      "      --shard I/N        search only rows floor(I*R/N) .. floor((I+1)*R/N)-1 of the R\n"
      "                         database rows (0 <= I < N); rows and ids stay global; in\n"
      "                         jsonl a first line names the shard for slem-merge\n"
      "  -c, --cache CACHE      a kernel cache from slem-negstats --kernel: score base\n"
      "                         features by the exact kernel SLEM similarity\n"
      "      --couple           with -c: couple the negatives with each point (a cache made\n"
      "                         with slem-negstats --couple; see slem-encode(1))\n"
      "      --affine           QUERIES are exemplar classifiers, d + 1 values (w, then\n"
      "                         b, from slem-encode or slem-esvm --classifier): the score\n"
      "                         of a database vector x is w.x + b\n"
      "      --calibration FILE the same, each score mapped through its query's sigmoid\n"
      "                         1 / (1 + exp(-a (s - b))), one 'a b' line per query (from\n"
      "                         slem-calibrate): probabilities comparable across queries\n"
      "  -k, --top K            results per query (default 100)\n"
      "  -o, --output OUT       write here (default: stdout)\n"
      "  -F, --output-format F  tsv (query, rank, id, score), trec, jsonl, or npy (FAISS's\n"
      "                         I and D matrices: OUT.I.npy and OUT.D.npy) (default: from\n"
      "                         OUT's extension .tsv, .trec, .jsonl, .npy, else tsv)\n"
      "  -f, --format FMT       format of both inputs (default: from the extension, else\n"
      "                         from the content); also --input-format\n"
      "      --query-ids FILE   ids of the queries, one per line (default: 0-based rows)\n"
      "      --db-ids FILE      ids of the database rows, one per line; with several\n"
      "                         database files, one --db-ids per file, in their order\n"
      "      --exclude-self     skip the database row with the query's index (queries\n"
      "                         taken from the database)\n"
      "  -n, --normalize        L2-normalise queries and database first: cosine search on\n"
      "                         raw vectors\n"
      "      --tag TAG          run tag of the trec format (default slem)\n"
      "  -t, --threads N        BLAS threads (default: SLEM_THREADS, else all cores)\n"
      "      --tile-rows N      database rows per tile (default about 2^22/d)\n"
      "      --query-block N    queries per block (default 2048)\n"
      "      --stats            print the counts of scored and exactly re-scored pairs, and\n"
      "                         of the passes over the database (one per block of queries;\n"
      "                         the files are read once when the database fits in\n"
      "                         SLEM_MATCH_MEMORY bytes, default a quarter of the memory),\n"
      "                         and where the wall time went (see the man page)\n"
      "      --no-check         match descriptors of different caches, or descriptors\n"
      "                         against plain vectors (refused by default)\n"
      "  -q, --quiet            no warnings\n"
      "  -h, --help             show this help and exit\n"
      "  -V, --version          show the version and the BLAS library, and exit\n"
      "\n"
      "Ties are broken by the lower database row. Scores print with %%.9g. A query with no\n"
      "result (an empty shard) writes no line in tsv and trec, an empty list in jsonl.\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-match(1).\n", slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

/* Progress on a terminal: the pairs scored, as queries out of the queries' count. */
typedef struct Progress {
  uint64_t rows, queries; /* rows searched (0: unknown), queries (0: unknown) */
} Progress;

static void on_progress(void *ctx, uint64_t pairs) {
  const Progress *p = ctx;
  if (p->rows > 0) cli_progress_of("queries", pairs / p->rows, p->queries);
}

/* The arithmetics (arith.h) of the containers among the queries and the database files, in
 * list ("A + B" when they differ; "" when none records one). */
static void desc_arith(char *list, size_t size, const SlemVecReader *q, const SlemDb *db) {
  list[0] = 0;
  slem_arith_list_add(list, size, slem_vecreader_arith(q));
  for (size_t i = 0; i < slem_db_files(db); i++)
    slem_arith_list_add(list, size, slem_vecreader_arith(slem_db_reader(db, i)));
}

/* Descriptors of one cache encoded on other BLAS cores differ in their last bits: said, not
 * refused (the ranking is that of one run up to near-ties, its scores to about 1e-6). */
static void warn_mixed(const SlemVecReader *q, const SlemDb *db) {
  const SlemVecReader *a = q;
  for (size_t i = 0; i < slem_db_files(db); i++) {
    const SlemVecReader *b = slem_db_reader(db, i);
    if (!slem_vecreader_arith(a)) a = b;
    if (a != b && slem_arith_differ(slem_vecreader_arith(a), slem_vecreader_arith(b))) {
      cli_warn("%s was encoded on the BLAS core %s, but %s on %s: their scores differ from those "
               "of one run in the last bits (about 1e-6), and near-ties may swap",
               slem_vecreader_name(b), slem_vecreader_arith(b), slem_vecreader_name(a),
               slem_vecreader_arith(a));
      return;
    }
  }
}

/* A shard's ranking says which shard of which database it is, and the arithmetics that made
 * it, for slem-merge (jsonl). */
static int shard_line(SlemRankWriter *w, SlemRankFormat fmt, const SlemDb *db,
                      const SlemVecReader *q, const SlemShard *shard, size_t k, SlemError *err) {
  SlemRankShard m = {0};
  int st;
  if (shard->count == 0 || !slem_rankformat_has_shard(fmt)) return SLEM_OK;
  snprintf(m.arith, sizeof m.arith, "%s", slem_arith_name());
  desc_arith(m.desc_arith, sizeof m.desc_arith, q, db);
  m.index = shard->index;
  m.count = shard->count;
  m.rows = (uint64_t)slem_db_rows(db);
  m.k = k;
  if ((st = slem_db_content_fingerprint(db, m.database, err)) != SLEM_OK) return st;
  return slem_rankwriter_shard(w, &m, err);
}

/* Its end line names the queries, once they were read. */
static int shard_end(SlemRankWriter *w, SlemRankFormat fmt, const SlemShard *shard,
                     const SlemVecReader *q, const SlemIds *qids, uint64_t nq, SlemError *err) {
  SlemRankShard m = {0};
  if (shard->count == 0 || !slem_rankformat_has_shard(fmt)) return SLEM_OK;
  m.has_end = 1;
  m.queries = nq;
  slem_db_query_fingerprint(q, nq, qids, m.query_set);
  return slem_rankwriter_shard_end(w, &m, err);
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
      {"calibration", required_argument, 0, 'L'},  {"couple", no_argument, 0, 'U'},
      {0, 0, 0, 0}};
  const char *output = "-", *qpath = "-", *qids_path = NULL, *list_path = NULL, *tag = NULL,
             *cache_path = NULL, *cal_path = NULL;
  const char **db_paths = calloc((size_t)argc, sizeof *db_paths),
             **dbids_paths = calloc((size_t)argc, sizeof *dbids_paths);
  char **listed = NULL;
  size_t ndb = 0, nids = 0, nlisted = 0;
  SlemShard shard = {0, 0};
  static const char shortopts[] = "d:D:c:k:o:f:F:nt:qhV";
  int print_stats = 0, quiet = 0, rfmt_given = 0, no_check = 0, couple = 0;
  Progress progress = {0, 0};
  SlemFormat ifmt = SLEM_FMT_AUTO;
  SlemRankFormat rfmt = SLEM_RANK_TSV;
  SlemMatchOpts opts;
  long threads = 0;
  int c, status = CLI_EXIT_OK;
  SlemVecReader *q = NULL;
  SlemDb *db = NULL;
  SlemIds *qids = NULL;
  SlemRankWriter *w = NULL;
  SlemCache *cache = NULL;
  SlemCalibration *cal = NULL;
  SlemError err;
  SlemMatchStats ms;

  cli_init(argv[0]);
  slem_match_opts_init(&opts);
  if (!db_paths || !dbids_paths) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    return CLI_EXIT_FAIL;
  }
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'd': db_paths[ndb++] = optarg; break;
    case 'D':
      if (list_path) cli_usage_error("--database-list: one list, please");
      list_path = optarg;
      break;
    case 'S':
      if (slem_shard_parse(&shard, optarg, &err) != SLEM_OK) cli_usage_error("--shard: %s", err.msg);
      break;
    case 'R': opts.dblock = (size_t)cli_long("--tile-rows", optarg, 1, 1L << 24); break;
    case 'P': opts.qblock = (size_t)cli_long("--query-block", optarg, 1, 1L << 20); break;
    case 'A': print_stats = 1; break;
    case 'C': no_check = 1; break;
    case 'c': cache_path = optarg; break;
    case 'k': opts.k = (size_t)cli_long("-k", optarg, 1, 1L << 20); break;
    case 'o': output = optarg; break;
    case 'F':
      rfmt_given = 1;
      if (slem_rankformat_parse(&rfmt, optarg, &err) != SLEM_OK)
        cli_usage_error("--output-format: %s", err.msg);
      break;
    case 'f':
      if (slem_format_parse(&ifmt, optarg) == SLEM_OK) break;
      /* the spelling of the previous release: -f named the output format */
      if (slem_rankformat_parse(&rfmt, optarg, NULL) == SLEM_OK) {
        cli_warn("-f %s: -f is now the input format, as in the other tools; use -F %s for the "
                 "output format (the old spelling goes away in the next release)", optarg, optarg);
        rfmt_given = 1;
        break;
      }
      cli_usage_error("--format: unknown format '%s' (%s)", optarg, slem_format_names());
    case 'q': quiet = 1; break;
    case 'Q': qids_path = optarg; break;
    case 'B': dbids_paths[nids++] = optarg; break;
    case 'X': opts.exclude_self = 1; break;
    case 'n': opts.normalize = 1; break;
    case 'M': opts.affine = 1; break;
    case 'L': cal_path = optarg; break;
    case 'G':
      if (!*optarg || strpbrk(optarg, " \t\n")) cli_usage_error("--tag: one word, please");
      tag = optarg;
      break;
    case 't': threads = cli_long("--threads", optarg, 1, 1024); break;
    case 'U': couple = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts);
    }
  }
  cli_set_quiet(quiet);
  if (!rfmt_given && slem_rankformat_from_path(output) != SLEM_RANK_AUTO)
    rfmt = slem_rankformat_from_path(output);
  if (ndb == 0 && !list_path) cli_usage_error("no database: give -d DATABASE");
  if (optind < argc) qpath = argv[optind++]; else cli_stdin_hint("queries");
  if (optind < argc) cli_usage_error("one query file at a time: unexpected '%s'", argv[optind]);
  for (size_t i = 0; i < ndb; i++)
    if (strcmp(qpath, "-") == 0 && strcmp(db_paths[i], "-") == 0)
      cli_usage_error("the queries and the database cannot both come from stdin");
  if (list_path && strcmp(list_path, "-") == 0 && strcmp(qpath, "-") == 0)
    cli_usage_error("the queries and the database list cannot both come from stdin");
  if (nids > 0 && !list_path && nids != ndb)
    cli_usage_error("%zu --db-ids for %zu database files: give one per -d, in order", nids, ndb);
  if (couple && !cache_path) cli_usage_error("--couple goes with a kernel cache: give -c CACHE");
  if (cache_path && opts.normalize)
    cli_usage_error("--normalize does not go with a kernel cache: its similarity is normalised");
  if ((opts.affine || cal_path) && (cache_path || opts.normalize))
    cli_usage_error("classifier queries (--affine, --calibration) go with neither -c nor "
                    "--normalize");
  cli_threads(threads);
  {
    const char *mm = getenv("SLEM_MATCH_MEMORY");
    size_t bytes;
    if (mm && *mm && slem_parse_bytes(mm, &bytes) != 0)
      cli_usage_error("SLEM_MATCH_MEMORY: '%s' is not a number of bytes (digits, optionally "
                      "followed by K, M, G or T: 512M, 4G; 0 keeps nothing)", mm);
  }

  if (cal_path) {
    if (slem_calibration_read(&cal, cal_path, &err) != SLEM_OK) goto fail;
    opts.calibration = cal;
  }
  if (cache_path) {
    if (slem_cache_read(&cache, cache_path, &err) != SLEM_OK) goto fail;
    if (cache->kind != SLEM_CACHE_KERNEL) {
      slem_error(&err, SLEM_EINVAL, "%s: -c takes a kernel cache; for linear SLEM, encode queries "
                 "and database with slem-encode and match the descriptors", cache_path);
      goto fail;
    }
    if (couple && !cache->couple)
      cli_usage_error("--couple: %s was made without --couple (make it with slem-negstats "
                      "--kernel SPEC --couple)", cache_path);
    opts.kernel = cache;
    opts.couple = couple;
  }
  if (list_path) {
    if (slem_db_list_read(&listed, &nlisted, list_path, &err) != SLEM_OK) goto fail;
    const char **all = realloc(db_paths, (ndb + nlisted) * sizeof *all);
    if (!all) {
      slem_error(&err, SLEM_ENOMEM, "out of memory");
      goto fail;
    }
    db_paths = all;
    for (size_t i = 0; i < nlisted; i++) {
      if (strcmp(listed[i], "-") == 0 && strcmp(qpath, "-") == 0) {
        slem_error(&err, SLEM_EINVAL, "%s: the queries and the database cannot both come from "
                   "stdin", list_path);
        goto fail;
      }
      db_paths[ndb++] = listed[i];
    }
    if (nids > 0 && nids != ndb) {
      slem_error(&err, SLEM_EINVAL, "%zu --db-ids for %zu database files (-d and %s): give one "
                 "per file, in order", nids, ndb, list_path);
      goto fail;
    }
  }
  {
    /* the output may be none of the inputs */
    const char **inputs = calloc(ndb + nids + 4, sizeof *inputs);
    size_t n = 0;
    if (!inputs) {
      slem_error(&err, SLEM_ENOMEM, "out of memory");
      goto fail;
    }
    inputs[n++] = qpath;
    inputs[n++] = qids_path;
    inputs[n++] = cache_path;
    inputs[n++] = list_path;
    for (size_t i = 0; i < ndb; i++) inputs[n++] = db_paths[i];
    for (size_t i = 0; i < nids; i++) inputs[n++] = dbids_paths[i];
    cli_refuse_clobber(output, inputs, n);
    { /* the files the format writes (npy: OUT.I.npy and OUT.D.npy) */
      char names[2][4096];
      size_t nn = 0;
      if (slem_rankformat_files(rfmt, output, names, &nn) == 0)
        for (size_t i = 0; i < nn; i++) cli_refuse_clobber(names[i], inputs, n);
    }
    free(inputs);
  }
  if ((qids_path && slem_ids_read(&qids, qids_path, &err) != SLEM_OK) ||
      slem_db_open(&db, db_paths, nids ? dbids_paths : NULL, ndb, ifmt, &err) != SLEM_OK ||
      slem_db_select(db, &shard, &err) != SLEM_OK ||
      slem_vecreader_open(&q, qpath, ifmt, &err) != SLEM_OK)
    goto fail;
  if (shard.count > 0 && slem_rankformat_has_shard(rfmt)) slem_vecreader_follow_values(q);
  if (shard.count > 0 && !quiet && !slem_rankformat_has_shard(rfmt))
    cli_warn("--shard with %s: the ranking carries no shard lines, so slem-merge cannot check "
             "its k, its rows' range, its database, its queries or its arithmetic; write jsonl "
             "between shards (-F jsonl)", slem_rankformat_name(rfmt));
  /* kernel projections: the database of a kernel match, never its queries */
  if (slem_vecreader_projections(q, NULL, NULL, NULL)) {
    slem_error(&err, SLEM_EFORMAT, "%s: kernel projections (slem-encode --projections) serve "
               "as the database (-d) of slem-match -c, not as its queries: give the queries' "
               "base features", slem_vecreader_name(q));
    goto fail;
  }
  if (!cache_path && slem_vecreader_projections(slem_db_reader(db, 0), NULL, NULL, NULL)) {
    slem_error(&err, SLEM_EFORMAT, "%s: kernel projections, ranked by the exact kernel "
               "similarity: give their cache with -c CACHE",
               slem_vecreader_name(slem_db_reader(db, 0)));
    goto fail;
  }
  /* descriptors of one cache only, and descriptors against descriptors (--no-check skips) */
  if (!no_check) {
    const char *fq = slem_vecreader_fingerprint(q);
    for (size_t i = 0; i < slem_db_files(db); i++) {
      const SlemVecReader *dr = slem_db_reader(db, i);
      int plain = 0;
      if ((i > 0 && slem_vecreaders_compatible(slem_db_reader(db, 0), dr, &plain, &err) != SLEM_OK) ||
          slem_vecreaders_compatible(q, dr, &plain, &err) != SLEM_OK)
        goto fail;
      if (plain == 1) opts.unit_queries = 1;
      if (plain == 2) opts.unit_db = 1;
      /* kernel projections are checked against the cache by slem_match_db() */
      if (cache_path && (fq || (slem_vecreader_fingerprint(dr) &&
                                !slem_vecreader_projections(dr, NULL, NULL, NULL)))) {
        slem_error(&err, SLEM_EINVAL, "%s: SLEM descriptors, but the kernel similarity of -c ranks "
                   "base features: give the feature files, or pass --no-check",
                   fq ? slem_vecreader_name(q) : slem_vecreader_name(dr));
        goto fail;
      }
    }
  }
  if (!quiet) warn_mixed(q, db);
  /* an ids count that the header already contradicts fails before any output */
  if (qids && slem_vecreader_count(q) >= 0 &&
      slem_ids_count(qids) != (uint64_t)slem_vecreader_count(q)) {
    slem_error(&err, SLEM_EFORMAT, "%s: %zu ids for %" PRId64 " queries (%s)", qids_path,
               slem_ids_count(qids), slem_vecreader_count(q), slem_vecreader_name(q));
    goto fail;
  }
  {
    uint64_t lo, hi;
    slem_db_window(db, &lo, &hi);
    if (hi == UINT64_MAX && slem_db_rows(db) >= 0) hi = (uint64_t)slem_db_rows(db);
    progress.rows = hi == UINT64_MAX ? 0 : hi - lo;
    progress.queries = slem_vecreader_count(q) > 0 ? (uint64_t)slem_vecreader_count(q) : 0;
    opts.progress = on_progress;
    opts.progress_ctx = &progress;
  }
  if (slem_rankwriter_open_k(&w, output, rfmt, qids ? qids : slem_vecreader_ids(q), slem_db_ids(db),
                             tag, opts.k, &err) != SLEM_OK ||
                shard_line(w, rfmt, db, q, &shard, opts.k, &err) != SLEM_OK ||
                slem_match_db(q, db, &opts, slem_rankwriter_write, w, &ms, &err) != SLEM_OK ||
                shard_end(w, rfmt, &shard, q, qids ? qids : slem_vecreader_ids(q), ms.nq, &err) !=
                    SLEM_OK)
    goto fail;
  if (cal && slem_calibration_count(cal) != ms.nq) {
    slem_error(&err, SLEM_EFORMAT, "%s: %zu sigmoids for %" PRIu64 " queries", cal_path,
               slem_calibration_count(cal), ms.nq);
    goto fail;
  }
  if (qids && slem_ids_count(qids) != ms.nq) {
    slem_error(&err, SLEM_EFORMAT, "%s: %zu ids for %" PRIu64 " queries", qids_path,
               slem_ids_count(qids), ms.nq);
    goto fail;
  }
  cli_progress_done();
  status = slem_rankwriter_close(w, &err) == SLEM_OK ? CLI_EXIT_OK : cli_fail(&err);
  w = NULL;
  if (status == CLI_EXIT_OK && print_stats)
    fprintf(stderr, "%s: %" PRIu64 " queries x %" PRIu64 " rows: %" PRIu64 " pairs scored, %" PRIu64
            " re-scored exactly (%.3g%%, %.1f per query)\n", cli_prog(), ms.nq, ms.ndb, ms.pairs,
            ms.rescored, ms.pairs ? 100.0 * (double)ms.rescored / (double)ms.pairs : 0.0,
            ms.nq ? (double)ms.rescored / (double)ms.nq : 0.0);
  if (status == CLI_EXIT_OK && print_stats)
    fprintf(stderr, "%s: %" PRIu64 " passes over the database, %" PRIu64 " from the files\n",
            cli_prog(), ms.passes, ms.reads);
  if (status == CLI_EXIT_OK && print_stats) cli_print_phases(&ms.phases);
  if (status == CLI_EXIT_OK && !quiet && shard.count == 0 && ms.ndb == 0)
    cli_warn("the database holds no vectors (empty segments): every query has no result");
  else if (status == CLI_EXIT_OK && !quiet && shard.count == 0 && opts.k > ms.ndb)
    cli_warn("-k %zu is more than the %" PRIu64 " database rows: each query lists at most %" PRIu64,
             opts.k, ms.ndb, ms.ndb);
  if (status == CLI_EXIT_OK && !quiet && ms.clamps > 0)
    cli_warn("%" PRIu64 " vectors had |v|^2 > k(x, x) beyond rounding; u^2 was clamped to 0",
             ms.clamps);
  goto done;
fail:
  status = cli_fail(&err);
done:
  slem_rankwriter_abort(w);
  slem_vecreader_free(q);
  slem_db_free(db);
  slem_ids_free(qids);
  slem_db_list_free(listed, nlisted);
  free(db_paths);
  free(dbids_paths);
  slem_cache_free(cache);
  slem_calibration_free(cal);
  return cli_close_stdout(status);
}
