/* slem-eval: mAP, precision and recall of rankings against ground truth. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/eval.h"
#include "../lib/io.h"
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

static int write_text(FILE *fp, const SlemEvalResult *r, SlemApKind ap, size_t k, int per_query) {
  int ok = 1;
  if (per_query) {
    ok &= fprintf(fp, "# query\tAP\tP@1\tP@5\tP@10\tR@%zu\trelevant\tretrieved\tstatus\n", k) > 0;
    for (size_t i = 0; i < r->nq; i++) {
      const SlemQueryResult *q = r->q + i;
      static const char *status[] = {"ok", "skipped", "missing"};
      ok &= fprintf(fp, "%s\t%.6f\t%.4f\t%.4f\t%.4f\t%.4f\t%zu\t%zu\t%s\n", q->query, q->ap, q->p1,
                    q->p5, q->p10, q->rk, q->nrel, q->nret, status[q->status]) > 0;
    }
  }
  ok &= fprintf(fp, "mAP\t%.6f\nP@1\t%.6f\nP@5\t%.6f\nP@10\t%.6f\nR@%zu\t%.6f\n", r->map, r->p1,
                r->p5, r->p10, k, r->rk) > 0;
  ok &= fprintf(fp, "queries\t%zu\nskipped\t%zu\nmissing\t%zu\nap\t%s\n", r->evaluated, r->skipped,
                r->missing, ap == SLEM_AP_TREC ? "trec" : "oxford") > 0;
  return ok;
}

static int write_json(FILE *fp, const SlemEvalResult *r, SlemApKind ap, size_t k, int per_query) {
  cJSON *o = cJSON_CreateObject();
  char key[32], *text;
  int ok;
  cJSON_AddStringToObject(o, "ap", ap == SLEM_AP_TREC ? "trec" : "oxford");
  cJSON_AddNumberToObject(o, "map", r->map);
  cJSON_AddNumberToObject(o, "p@1", r->p1);
  cJSON_AddNumberToObject(o, "p@5", r->p5);
  cJSON_AddNumberToObject(o, "p@10", r->p10);
  snprintf(key, sizeof key, "r@%zu", k);
  cJSON_AddNumberToObject(o, key, r->rk);
  cJSON_AddNumberToObject(o, "queries", (double)r->evaluated);
  cJSON_AddNumberToObject(o, "skipped", (double)r->skipped);
  cJSON_AddNumberToObject(o, "missing", (double)r->missing);
  if (per_query) {
    cJSON *arr = cJSON_AddArrayToObject(o, "per_query");
    static const char *status[] = {"ok", "skipped", "missing"};
    for (size_t i = 0; i < r->nq; i++) {
      const SlemQueryResult *q = r->q + i;
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "query", q->query);
      cJSON_AddNumberToObject(e, "ap", q->ap);
      cJSON_AddNumberToObject(e, "p@1", q->p1);
      cJSON_AddNumberToObject(e, "p@5", q->p5);
      cJSON_AddNumberToObject(e, "p@10", q->p10);
      cJSON_AddNumberToObject(e, key, q->rk);
      cJSON_AddNumberToObject(e, "relevant", (double)q->nrel);
      cJSON_AddNumberToObject(e, "retrieved", (double)q->nret);
      cJSON_AddStringToObject(e, "status", status[q->status]);
      cJSON_AddItemToArray(arr, e);
    }
  }
  text = cJSON_Print(o);
  cJSON_Delete(o);
  if (!text) return 0;
  ok = fputs(text, fp) >= 0 && putc('\n', fp) != EOF;
  free(text);
  return ok;
}

static int write_curve(const char *path, const SlemEvalResult *r, const char *run, SlemError *err) {
  SlemOut *out = NULL;
  FILE *fp;
  int st = slem_out_open(&out, path, err), ok;
  if (st) return st;
  fp = slem_out_file(out);
  ok = fprintf(fp, "# interpolated precision-recall of %s: mean over %zu queries, mAP %.6f\n"
                   "# recall\tprecision\n", run, r->evaluated, r->map) > 0;
  for (size_t i = 0; i < r->curve_points; i++)
    ok &= fprintf(fp, "%.6g\t%.6f\n", (double)i / (double)(r->curve_points - 1), r->curve[i]) > 0;
  if (!ok) {
    slem_out_abort(out);
    return slem_error(err, SLEM_EIO, "%s: write: %s", path, strerror(errno));
  }
  return slem_out_commit(out, err);
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
  const char *qrels = NULL, *qlabels = NULL, *dblabels = NULL, *qids = NULL, *dbids = NULL;
  const char *junk[MAX_JUNK], *format = NULL, *curve = NULL, *output = "-", *ranking = "-";
  size_t njunk = 0;
  int exclude_self = 0, per_query = 0, json = 0, c, status = CLI_EXIT_OK;
  SlemEvalOpts opts;
  SlemRun *run = NULL;
  SlemTruth *truth = NULL;
  SlemEvalResult *res = NULL;
  SlemOut *out = NULL;
  SlemError err;

  cli_init(argv[0]);
  slem_eval_opts_init(&opts);
  while ((c = getopt_long(argc, argv, "k:f:o:hV", longopts, NULL)) != -1) {
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
    case 'A':
      if (strcmp(optarg, "trec") == 0) opts.ap = SLEM_AP_TREC;
      else if (strcmp(optarg, "oxford") == 0) opts.ap = SLEM_AP_OXFORD;
      else cli_usage_error("--ap: '%s' is neither trec nor oxford", optarg);
      break;
    case 'k': opts.recall_k = (size_t)cli_long("--recall-k", optarg, 1, 1L << 30); break;
    case 'f':
      if (strcmp(optarg, "tsv") && strcmp(optarg, "trec") && strcmp(optarg, "jsonl"))
        cli_usage_error("--format: unknown ranking format '%s' (tsv, trec, jsonl)", optarg);
      format = optarg;
      break;
    case 'P': per_query = 1; break;
    case 'j': json = 1; break;
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
  if (!qrels == !(qlabels || dblabels))
    cli_usage_error("give the ground truth as --qrels, or as --query-labels and --db-labels");
  if (!qrels && !(qlabels && dblabels))
    cli_usage_error("--query-labels and --db-labels go together");
  if (qrels && (qids || dbids || exclude_self))
    cli_usage_error("--query-ids, --db-ids and --exclude-self go with labels, not --qrels");

  if ((qrels ? slem_truth_read_qrels(&truth, qrels, &err)
             : slem_truth_read_labels(&truth, qlabels, dblabels, qids, dbids, exclude_self, &err)) !=
      SLEM_OK)
    goto fail;
  for (size_t i = 0; i < njunk; i++)
    if (slem_truth_read_junk(truth, junk[i], &err) != SLEM_OK) goto fail;
  if (slem_run_read(&run, ranking, format, &err) != SLEM_OK ||
      slem_evaluate(&res, run, truth, &opts, &err) != SLEM_OK)
    goto fail;
  if (curve && write_curve(curve, res, strcmp(ranking, "-") ? ranking : "<stdin>", &err) != SLEM_OK)
    goto fail;
  if (slem_out_open(&out, output, &err) != SLEM_OK) goto fail;
  if (!(json ? write_json : write_text)(slem_out_file(out), res, opts.ap, opts.recall_k, per_query)) {
    slem_error(&err, SLEM_EIO, "%s: write: %s", slem_out_name(out), strerror(errno));
    goto fail;
  }
  status = slem_out_commit(out, &err) == SLEM_OK ? CLI_EXIT_OK : cli_fail(&err);
  out = NULL;
  if (status == CLI_EXIT_OK && res->missing > 0) {
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
  slem_out_abort(out);
  slem_evalresult_free(res);
  slem_run_free(run);
  slem_truth_free(truth);
  return cli_close_stdout(status);
}
