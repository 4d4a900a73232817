/* slem-eval: mAP, precision and recall of rankings against ground truth. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/eval.h"
#include "../lib/slem.h"
#include "cli.h"

#define MAX_JUNK 16

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-eval [OPTION]... (--qrels FILE | --query-labels F --db-labels F) [RANKING]\n"
      "Evaluate the rankings written by slem-match (default: stdin) against ground truth:\n"
      "mAP, P@1, P@5, P@10 and R@K.\n"
      "\n"
      "Ground truth:\n"
      "      --qrels FILE        TREC qrels, 'qid iter docno rel' per line, rel >= 1 relevant\n"
      "      --query-labels F    one label per query, in vector order\n"
      "      --db-labels F       one label per database vector; relevant = same label\n"
      "      --query-ids F       ids of the queries as the ranking names them (default: rows)\n"
      "      --db-ids F          ids of the database rows (default: 0-based rows)\n"
      "      --junk FILE         'qid docid' per line: ignored for that query, neither\n"
      "                          relevant nor counted (may be given several times)\n"
      "      --exclude-self      labels: the database row with the query's index is junk\n"
      "\n"
      "Measures:\n"
      "      --ap KIND           trec (default): mean over the relevant items of the precision\n"
      "                          at their rank, unretrieved ones counting 0; oxford: the\n"
      "                          trapezoid of the Oxford/Holidays compute_ap\n"
      "  -k, --recall-k K        R@K (default 100)\n"
      "  -f, --format F          ranking format: tsv, trec, jsonl (default: from its first line)\n"
      "      --per-query         one line per query before the summary\n"
      "      --json              the result as one JSON object\n"
      "      --curve FILE        write the interpolated precision-recall curve (for plot-pr)\n"
      "      --curve-points N    recall points of the curve: 11 (default) or 101\n"
      "  -o, --output OUT        write here (default: stdout)\n"
      "  -h, --help              show this help and exit\n"
      "  -V, --version           show the version and exit\n"
      "\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-eval(1).\n");
  exit(cli_close_stdout(CLI_EXIT_OK));
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"qrels", required_argument, 0, 'Q'},        {"query-labels", required_argument, 0, 'L'},
      {"db-labels", required_argument, 0, 'B'},    {"query-ids", required_argument, 0, 'I'},
      {"db-ids", required_argument, 0, 'D'},       {"junk", required_argument, 0, 'J'},
      {"exclude-self", no_argument, 0, 'X'},       {"ap", required_argument, 0, 'A'},
      {"recall-k", required_argument, 0, 'k'},     {"format", required_argument, 0, 'f'},
      {"per-query", no_argument, 0, 'P'},          {"json", no_argument, 0, 'j'},
      {"curve", required_argument, 0, 'C'},        {"curve-points", required_argument, 0, 'N'},
      {"output", required_argument, 0, 'o'},       {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},            {0, 0, 0, 0}};
  const char *junk[MAX_JUNK], *curve = NULL, *output = "-", *ranking = "-";
  int flags = 0, c, status = CLI_EXIT_OK;
  SlemRankFormat format = SLEM_RANK_AUTO;
  SlemEvalOpts opts;
  SlemTruthSpec spec = {0};
  SlemTruth *truth = NULL;
  SlemEvalResult *res = NULL;
  SlemError err;

  cli_init(argv[0]);
  slem_eval_opts_init(&opts);
  while ((c = getopt_long(argc, argv, "k:f:o:hV", longopts, NULL)) != -1) {
    switch (c) {
    case 'Q': spec.qrels = optarg; break;
    case 'L': spec.qlabels = optarg; break;
    case 'B': spec.dblabels = optarg; break;
    case 'I': spec.qids = optarg; break;
    case 'D': spec.dbids = optarg; break;
    case 'J':
      if (spec.njunk == MAX_JUNK) cli_usage_error("--junk: at most %d files", MAX_JUNK);
      junk[spec.njunk++] = optarg;
      break;
    case 'X': spec.exclude_self = 1; break;
    case 'A':
      if (slem_apkind_parse(&opts.ap, optarg, &err) != SLEM_OK) cli_usage_error("--ap: %s", err.msg);
      break;
    case 'k': opts.recall_k = (size_t)cli_long("--recall-k", optarg, 1, 1L << 30); break;
    case 'f':
      if (slem_rankformat_parse(&format, optarg, &err) != SLEM_OK)
        cli_usage_error("--format: %s", err.msg);
      break;
    case 'P': flags |= SLEM_EVAL_PER_QUERY; break;
    case 'j': flags |= SLEM_EVAL_JSON; break;
    case 'C': curve = optarg; break;
    case 'N':
      opts.curve_points = (size_t)cli_long("--curve-points", optarg, 11, 101);
      if (opts.curve_points != 11 && opts.curve_points != 101)
        cli_usage_error("--curve-points: 11 or 101");
      break;
    case 'o': output = optarg; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_usage_error("unknown option");
    }
  }
  if (optind < argc) ranking = argv[optind++];
  if (optind < argc) cli_usage_error("one ranking at a time: unexpected '%s'", argv[optind]);
  if (!spec.qrels == !(spec.qlabels || spec.dblabels))
    cli_usage_error("give the ground truth as --qrels, or as --query-labels and --db-labels");
  if (!spec.qrels && !(spec.qlabels && spec.dblabels))
    cli_usage_error("--query-labels and --db-labels go together");
  if (spec.qrels && (spec.qids || spec.dbids || spec.exclude_self))
    cli_usage_error("--query-ids, --db-ids and --exclude-self go with labels, not --qrels");
  spec.junk = junk;
  if (slem_truth_read(&truth, &spec, &err) != SLEM_OK ||
      slem_evalresult_read(&res, ranking, format, truth, &opts, &err) != SLEM_OK ||
      (curve && slem_evalresult_write_curve(res, curve, strcmp(ranking, "-") ? ranking : "<stdin>",
                                            &err) != SLEM_OK) ||
      slem_evalresult_write(res, output, flags, &err) != SLEM_OK)
    goto fail;
  if (res->missing > 0) {
    for (size_t i = 0; i < res->nq; i++)
      if (res->q[i].status == SLEM_Q_MISSING) {
        cli_warn("%zu queries of the ground truth are not in the ranking; their AP counts as 0 "
                 "(the first: '%s')", res->missing, res->q[i].query);
        break;
      }
  }
  goto done;
fail:
  status = cli_fail(&err);
done:
  slem_evalresult_free(res);
  slem_truth_free(truth);
  return cli_close_stdout(status);
}
