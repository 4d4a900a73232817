/* slem-report: one self-contained HTML page comparing rankings against ground truth. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/report/image.h"
#include "../lib/report/report.h"
#include "../lib/io/io.h"
#include "../lib/io/libslem.h"
#include "../lib/report/thumbs.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

#define MAX_JUNK 16
#define MAX_RUNS 16

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-report [OPTION]... (--qrels FILE | --query-labels F --db-labels F)\n"
      "                   [NAME=]RANKING...\n"
      "Write one self-contained HTML page about rankings written by slem-match: a\n"
      "summary table (mAP both ways, P@1, P@5, P@10, R@K), precision-recall curves, a\n"
      "histogram of per-query AP, a scatter of two runs' per-query AP, a table of\n"
      "every query to sort and filter, chosen queries with each run's top results\n"
      "framed by relevance (relevant green, junk grey, wrong red, with the label of\n"
      "each wrong one) and the relevant items they missed, and each run's worst and\n"
      "best queries. With two runs or more, a paired randomisation test of each\n"
      "against the first gives a p-value. Each RANKING is one run, named NAME\n"
      "(default: its file name without extension).\n"
      "\n"
      "Ground truth (as slem-eval):\n"
      "      --qrels FILE        TREC qrels, 'qid iter docno rel' per line, relevant\n"
      "                          when rel >= 1\n"
      "      --query-labels F    one label per query, in vector order\n"
      "      --db-labels F       one label per database vector; relevant = same label\n"
      "      --query-ids F       ids of the queries as the ranking names them\n"
      "                          (default: rows)\n"
      "      --db-ids F          ids of the database rows (default: 0-based rows)\n"
      "      --junk FILE         'qid docid' per line: neither relevant nor counted\n"
      "                          (repeatable)\n"
      "      --exclude-self      labels: the database row of the query's index is junk\n"
      "      --protocol P        the revisited Oxford/Paris protocol (as slem-eval):\n"
      "                          easy, medium or hard, the positives from --easy F and\n"
      "                          --hard F ('query item' lines; junk from --junk), or\n"
      "                          graded --qrels; per-query AP is revisitop's, the\n"
      "                          summary adds its mAP, mP@k\n"
      "      --easy F, --hard F  the easy and the hard positives, for --protocol\n"
      "\n"
      "Measures:\n"
      "      --ap KIND           per-query AP for choosing queries and the histogram:\n"
      "                          trec (default) or oxford; the table shows both\n"
      "  -k, --recall-k K        R@K (default 100)\n"
      "  -f, --format F          ranking format: %s (default: an\n"
      "                          npy pair by its name, NAME.I.npy, NAME.D.npy,\n"
      "                          NAME.npy or NAME; else from its first line)\n"
      "      --curve-points N    recall points of the curves: 11 (default) or 101\n"
      "      --permutations N    sign flips of the paired randomisation test of each\n"
      "                          run against the first (default 10000; 0: no test)\n"
      "      --seed S            the test's seed (default 1): the same page at every\n"
      "                          run\n"
      "\n"
      "Page:\n"
      "  -o, --output OUT        write the page here (default: stdout); links to\n"
      "                          pictures are relative to its folder\n"
      "      --title TEXT        the page's title (default: Retrieval report)\n"
      "      --queries N|FILE    the queries shown in detail: the N (default 10) where\n"
      "                          the runs' AP differs most (one run: N spread from\n"
      "                          worst to best), or the ids listed in FILE, one per\n"
      "                          line\n"
      "      --top K             results shown per query (default 10)\n"
      "      --extremes N        worst and best queries shown per run (default 3, 0:\n"
      "                          none)\n"
      "      --bins N            bins of the AP histogram (default 10)\n"
      "\n"
      "Pictures (without any, each result shows its id in a tile):\n"
      "      --images DIR        DIR/ID.png (.jpg .jpeg .gif .webp .bmp .svg), linked\n"
      "                          relative to the page; without --images and vectors,\n"
      "                          ids that are paths of image files are used as they\n"
      "                          are\n"
      "      --embed-images      embed image files in the page (data: URIs) instead of\n"
      "                          linking\n"
      "      --image-shape S     the vectors are images: HxW gray (8x8, 28x28), HxWx3\n"
      "                          RGB interleaved (32x32x3) or 3xHxW planar; rendered\n"
      "                          to PNG and embedded, scaled up (nearest neighbour) to\n"
      "                          --thumb-size\n"
      "      --query-vectors F   the query vectors (a FMT, from the extension or the\n"
      "                          contents), rows named by --query-ids\n"
      "      --db-vectors F      the database vectors, rows named by --db-ids\n"
      "      --pixel-range LO:HI values mapped to black..white for every image\n"
      "                          (default: each image's own minimum and maximum)\n"
      "      --invert            dark on light: the high values black\n"
      "      --thumb-size PX     rendered vectors are at least PX pixels a side\n"
      "                          (default 64)\n"
      "\n"
      "  -q, --quiet             no warnings\n"
      "  -h, --help              show this help and exit\n"
      "  -V, --version           show the version and exit\n"
      "\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-report(1).\n", slem_rankformat_names(), slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"qrels", required_argument, 0, 'Q'},         {"query-labels", required_argument, 0, 'L'},
      {"db-labels", required_argument, 0, 'B'},     {"query-ids", required_argument, 0, 'I'},
      {"db-ids", required_argument, 0, 'D'},        {"junk", required_argument, 0, 'J'},
      {"exclude-self", no_argument, 0, 'X'},        {"ap", required_argument, 0, 'A'},
      {"recall-k", required_argument, 0, 'k'},      {"format", required_argument, 0, 'f'},
      {"curve-points", required_argument, 0, 'N'},  {"output", required_argument, 0, 'o'},
      {"title", required_argument, 0, 'T'},         {"queries", required_argument, 0, 'W'},
      {"top", required_argument, 0, 'K'},           {"extremes", required_argument, 0, 'E'},
      {"bins", required_argument, 0, 'b'},          {"images", required_argument, 0, 'i'},
      {"embed-images", no_argument, 0, 'e'},        {"image-shape", required_argument, 0, 's'},
      {"query-vectors", required_argument, 0, 'v'}, {"db-vectors", required_argument, 0, 'w'},
      {"pixel-range", required_argument, 0, 'r'},   {"invert", no_argument, 0, 'n'},
      {"thumb-size", required_argument, 0, 'z'},    {"help", no_argument, 0, 'h'},
      {"permutations", required_argument, 0, 'P'},  {"seed", required_argument, 0, 'S'},
      {"protocol", required_argument, 0, 'p'},      {"easy", required_argument, 0, 'y'},
      {"hard", required_argument, 0, 'Y'},
      {"version", no_argument, 0, 'V'},             {"quiet", no_argument, 0, 'q'},
      {0, 0, 0, 0}};
  const char *qrels = NULL, *qlabels = NULL, *dblabels = NULL, *qids = NULL, *dbids = NULL;
  const char *junk[MAX_JUNK], *output = "-", *queries_file = NULL;
  static char names[MAX_RUNS][256];
  char note[1024];
  size_t njunk = 0, nruns = 0;
  SlemRankFormat fmt = SLEM_RANK_AUTO;
  SlemTruthSpec spec = {0};
  int exclude_self = 0, c, status = CLI_EXIT_OK, have_shape = 0, stdin_runs = 0, quiet = 0;
  SlemReportOpts opts;
  SlemReportProtocol proto = {0};
  int have_protocol = 0, have_ap = 0;
  SlemThumbOpts topts;
  SlemImageShape shape;
  SlemReportInput runs[MAX_RUNS];
  size_t missing = 0;
  char first[256];
  SlemError err;

  cli_init(argv[0]);
  slem_report_opts_init(&opts);
  slem_thumbs_opts_init(&topts);
  static const char shortopts[] = "k:f:o:qhV";
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'Q': qrels = optarg; break;
    case 'L': qlabels = optarg; break;
    case 'B': dblabels = optarg; break;
    case 'I': qids = optarg; break;
    case 'D': dbids = optarg; break;
    case 'J':
      if (njunk == MAX_JUNK) cli_usage_error("--junk: at most %d files", MAX_JUNK);
      junk[njunk++] = optarg;
      break;
    case 'X': exclude_self = 1; break;
    case 'p':
      if (slem_revisitop_protocol_parse(&proto.protocol, optarg) != SLEM_OK)
        cli_usage_error("--protocol: '%s' (easy, medium, hard)", optarg);
      have_protocol = 1;
      break;
    case 'y': proto.easy = optarg; break;
    case 'Y': proto.hard = optarg; break;
    case 'A':
      have_ap = 1;
      if (slem_eval_apkind_parse(&opts.ap, optarg, &err) != SLEM_OK) cli_usage_error("--ap: %s", err.msg);
      break;
    case 'k': opts.recall_k = (size_t)cli_long("--recall-k", optarg, 1, 1L << 30); break;
    case 'f':
      if (slem_rankformat_parse(&fmt, optarg, &err) != SLEM_OK) cli_usage_error("--format: %s", err.msg);
      break;
    case 'N':
      opts.curve_points = (size_t)cli_long("--curve-points", optarg, 11, 101);
      if (opts.curve_points != 11 && opts.curve_points != 101)
        cli_usage_error("--curve-points: 11 or 101");
      break;
    case 'o': output = optarg; break;
    case 'P': opts.permutations = (size_t)cli_long("--permutations", optarg, 0, 100000000L); break;
    case 'S': opts.seed = (uint64_t)cli_long("--seed", optarg, 0, 2147483647L); break;
    case 'T': opts.title = optarg; break;
    case 'q': cli_set_quiet(1); quiet = 1; break;
    case 'W':
      if (optarg[0] >= '0' && optarg[0] <= '9' && strspn(optarg, "0123456789") == strlen(optarg))
        opts.nqueries = (size_t)cli_long("--queries", optarg, 0, 100000);
      else
        queries_file = optarg;
      break;
    case 'K': opts.top = (size_t)cli_long("--top", optarg, 1, 1000); break;
    case 'E': opts.extremes = (size_t)cli_long("--extremes", optarg, 0, 1000); break;
    case 'b': opts.bins = (size_t)cli_long("--bins", optarg, 1, 100); break;
    case 'i': topts.images_dir = optarg; break;
    case 'e': topts.embed = 1; break;
    case 's':
      if (slem_image_shape_parse(&shape, optarg, &err) != SLEM_OK) cli_usage_error("--image-shape: %s", err.msg);
      have_shape = 1;
      break;
    case 'v': topts.vectors[SLEM_THUMB_QUERY] = optarg; break;
    case 'w': topts.vectors[SLEM_THUMB_DB] = optarg; break;
    case 'r':
      if (slem_image_pixel_range_parse(&topts.range, optarg, &err) != SLEM_OK)
        cli_usage_error("--pixel-range: %s", err.msg);
      break;
    case 'n': topts.range.invert = 1; break;
    case 'z': topts.min_side = (size_t)cli_long("--thumb-size", optarg, 1, 1024); break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  for (; optind < argc; optind++) {
    if (nruns == MAX_RUNS) cli_usage_error("at most %d rankings", MAX_RUNS);
    slem_report_input_parse(&runs[nruns], argv[optind], names[nruns], sizeof names[nruns]);
    if (strcmp(runs[nruns].path, "-") == 0 && ++stdin_runs > 1) cli_usage_error("only one ranking can be stdin");
    nruns++;
  }
  if (nruns == 0) {
    runs[0].name = "stdin";
    runs[0].path = "-";
    nruns = 1;
  }
  opts.tmpdir = proto.tmpdir = getenv("TMPDIR"); /* temporary copies (removed at once) */
  spec.qrels = qrels;
  spec.qlabels = qlabels;
  spec.dblabels = dblabels;
  if (!qrels) { /* with qrels the ids files name the vectors' rows only */
    spec.qids = qids;
    spec.dbids = dbids;
  }
  spec.exclude_self = exclude_self;
  spec.junk = junk;
  spec.njunk = njunk;
  if (slem_truth_check(&spec, have_protocol, proto.easy, proto.hard, 0, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  if (have_protocol) {
    if (have_ap && opts.ap != SLEM_AP_OXFORD) cli_usage_error("--protocol: AP is revisitop's (oxford)");
    opts.ap = SLEM_AP_OXFORD;
    proto.qrels = qrels;
    proto.junk = junk;
    proto.njunk = njunk;
    opts.protocol = &proto;
  }
  if (have_shape) topts.shape = &shape;
  if (slem_thumbs_check(&topts, &err) != SLEM_OK) cli_usage_error("%s", err.msg);

  {
    const char *inputs[MAX_RUNS + MAX_JUNK + 10];
    size_t n = 0;
    const char *more[] = {qrels, qlabels, dblabels, qids, dbids, queries_file,
                          topts.vectors[0], topts.vectors[1], proto.easy, proto.hard};
    for (size_t i = 0; i < nruns; i++) inputs[n++] = runs[i].path;
    for (size_t i = 0; i < njunk; i++) inputs[n++] = junk[i];
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) inputs[n++] = more[i];
    cli_refuse_stdin_twice(inputs, n);
    cli_refuse_clobber(output, inputs, n);
  }
  topts.ids_are_paths = !topts.images_dir && !have_shape;
  topts.ids[SLEM_THUMB_QUERY] = qids;
  topts.ids[SLEM_THUMB_DB] = dbids;
  opts.truth_note = slem_report_truth_note(note, sizeof note, &spec, have_protocol ? &proto : NULL);

  if (slem_report_make(output, &spec, runs, nruns, fmt, queries_file, &opts, &topts, &missing,
                       first, sizeof first, &err) != SLEM_OK)
    goto fail;
  if ((topts.images_dir || have_shape) && missing)
    if (!quiet) cli_warn("%zu ids shown have no picture (the first: '%s')", missing, first);
  goto done;
fail:
  status = cli_fail(&err);
done:
  return cli_close_stdout(status);
}
