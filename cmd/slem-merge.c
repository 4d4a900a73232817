/* slem-merge: the rankings of database shards merged into the ranking of the whole. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/rank/merge.h"
#include "../lib/io/libslem.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-merge [OPTION]... SHARD...\n"
      "Merge the rankings that slem-match wrote for shards of one database (the same\n"
      "queries, rows numbered over the whole database, as slem-match --shard I/N\n"
      "writes them) into the top K per query, byte for byte what one slem-match over\n"
      "the whole database writes: higher score first, equal scores by the lower\n"
      "database row.\n"
      "\n"
      "  -k, --top K            results per query (default 100); every shard must hold\n"
      "                         K per query, or all of its rows\n"
      "  -F, --output-format F  %s (default: from OUT's\n"
      "                         extension %s, else the format\n"
      "                         of the first shard); npy writes OUT.I.npy and\n"
      "                         OUT.D.npy, K columns\n"
      "  -o, --output OUT       write here (default: stdout)\n"
      "      --db-ids FILE      the database's ids file, when tsv or trec shards name\n"
      "                         rows by ids (jsonl carries the rows itself)\n"
      "      --allow-mixed-blas merge shards whose descriptors were encoded on other\n"
      "                         BLAS cores, or scored with other libraries (refused by\n"
      "                         default: the result would not be that of one run)\n"
      "      --partial          the shards are some of a split (the first level of a\n"
      "                         merge in two levels): the others missing is not an\n"
      "                         error\n"
      "  -h, --help             show this help and exit\n"
      "  -V, --version          show the version and exit\n"
      "\n"
      "Shards may be in any of the ranking formats, recognised from their first line;\n"
      "npy shards by their names (NAME.I.npy, NAME.D.npy, NAME.npy or NAME), from\n"
      "files. A jsonl shard from slem-match --shard names its shard, its k, the\n"
      "database by its content and the queries (first and last lines): every shard\n"
      "must then be one of the same database, N and queries, each index once, made\n"
      "with a k of at least K, its rows inside its shard, ranking descriptors encoded\n"
      "on one BLAS core and scored with the same libraries. tsv, trec and npy shards\n"
      "prove less (see slem-merge(1)). Exit status: 0 success, 1 data or system error,\n"
      "2 usage error. See slem-merge(1).\n",
      slem_rankformat_names(), slem_rankformat_extensions());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static void on_progress(void *ctx, uint64_t n) {
  (void)ctx;
  cli_progress("queries merged", n);
}

int main(int argc, char **argv) {
  static const char shortopts[] = "k:f:F:o:qhV";
  static const struct option longopts[] = {
      {"top", required_argument, 0, 'k'},    {"output-format", required_argument, 0, 'F'},
      {"quiet", no_argument, 0, 'q'},
      {"output", required_argument, 0, 'o'}, {"db-ids", required_argument, 0, 'D'},
      {"help", no_argument, 0, 'h'},         {"version", no_argument, 0, 'V'},
      {"allow-mixed-blas", no_argument, 0, 'M'},
      {"partial", no_argument, 0, 'P'},
      {0, 0, 0, 0}};
  const char *output = "-";
  int format_given = 0;
  SlemMergeOpts opts;
  SlemError err;
  int c, status;

  cli_init(argv[0]);
  slem_merge_opts_init(&opts);
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'k': opts.k = (size_t)cli_long("-k", optarg, 1, 1L << 20); break;
    case 'f': /* the spelling of the previous release */
      cli_warn("-f %s: use -F %s for the output format; -f is the input format in every slem "
               "tool, and slem-merge recognises its shards' formats", optarg, optarg);
      /* fall through */
    case 'F':
      if (slem_rankformat_parse(&opts.format, optarg, &err) != SLEM_OK)
        cli_usage_error("--output-format: %s", err.msg);
      format_given = 1;
      break;
    case 'q': cli_set_quiet(1); break;
    case 'o': output = optarg; break;
    case 'D': opts.db_ids = optarg; break;
    case 'M': opts.allow_mixed_blas = 1; break;
    case 'P': opts.partial = 1; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  if (optind == argc) cli_usage_error("no shard: give the rankings to merge");
  /* the second '-' would find stdin read already */
  cli_refuse_stdin_twice((const char *const *)argv + optind, (size_t)(argc - optind));
  if (!format_given) opts.format = slem_rankformat_from_path(output);
  if (slem_rankformat_check_output(opts.format, output, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  opts.progress = on_progress;
  cli_refuse_clobber(output, (const char *const *)argv + optind, (size_t)(argc - optind));
  cli_refuse_clobber(output, &opts.db_ids, 1);
  { /* the files the format writes (npy: OUT.I.npy and OUT.D.npy) */
    char names[2][4096];
    size_t nn = 0;
    if (opts.format != SLEM_RANK_AUTO && slem_rankformat_files(opts.format, output, names, &nn) == 0)
      for (size_t i = 0; i < nn; i++) {
        cli_refuse_clobber(names[i], (const char *const *)argv + optind, (size_t)(argc - optind));
        cli_refuse_clobber(names[i], &opts.db_ids, 1);
      }
  }
  if (!format_given) cli_refuse_vector_name(output);
  status = slem_merge((const char *const *)argv + optind, (size_t)(argc - optind), output, &opts,
                      NULL, &err) == SLEM_OK
               ? CLI_EXIT_OK
               : cli_fail(&err);
  cli_progress_done();
  return cli_close_stdout(status);
}
