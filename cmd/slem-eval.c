/* slem-eval: mAP, precision and recall of rankings against ground truth. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/eval/eval.h"
#include "../lib/io/io.h"
#include "../lib/eval/revisitop.h"
#include "../lib/io/libslem.h"
#include "../lib/eval/treceval.h"
#include "cli.h"

#define MAX_JUNK 16
#define MAX_MEASURE_ARGS 64 /* -M, as many as --trec-compat's -m takes (main_trec's measures; usage() says 64) */

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-eval [OPTION]... (--qrels FILE | --query-labels F --db-labels F |\n"
      "                              --neighbors FILE) [RANKING]\n"
      "Evaluate the rankings written by slem-match (default: stdin) against ground\n"
      "truth: mAP, P@1, P@5, P@10 and R@K.\n"
      "\n"
      "Ground truth:\n"
      "      --qrels FILE        TREC qrels, 'qid iter docno rel' per line, relevant\n"
      "                          when rel >= 1\n"
      "      --query-labels F    one label per query, in vector order\n"
      "      --db-labels F       one label per database vector; relevant = same label\n"
      "      --query-ids F       ids of the queries as the ranking names them\n"
      "                          (default: rows)\n"
      "      --db-ids F          ids of the database rows (default: 0-based rows)\n"
      "      --junk FILE         'qid docid' per line: ignored for that query, neither\n"
      "                          relevant nor counted (may be given several times)\n"
      "      --exclude-self      labels: the database row of the query's index is junk\n"
      "      --neighbors FILE    the true nearest neighbours, database row numbers per\n"
      "                          query (ann-benchmarks' FILE.hdf5:neighbors, ivecs,\n"
      "                          ibin, npy): the first K of each row are its relevant\n"
      "                          items, and R@K is ann-benchmarks' recall@K: |top K &\n"
      "                          true top K| / K\n"
      "\n"
      "Measures:\n"
      "      --ap KIND           trec (default): mean over the relevant items of the\n"
      "                          precision at their rank, unretrieved ones counting 0;\n"
      "                          oxford: the trapezoid of the Oxford/Holidays\n"
      "                          compute_ap\n"
      "  -k, --recall-k K        R@K (default 100)\n"
      "  -f, --format F          ranking format: %s (default: an\n"
      "                          npy pair by its name, NAME.I.npy, NAME.D.npy,\n"
      "                          NAME.npy or NAME; else from its first line)\n"
      "  -M, --extra-measure M   also a measure of --trec-compat's table by its -m\n"
      "                          name, on the ranking in rank order: ndcg,\n"
      "                          ndcg_cut.10, recall.50, success.1, Rprec, recip_rank,\n"
      "                          ... (qrels grades are nDCG's gains; labels gain 1);\n"
      "                          up to 64 times\n"
      "      --per-query         one line per query before the summary\n"
      "      --json              the result as one JSON object\n"
      "      --curve FILE        write the interpolated precision-recall curve\n"
      "                          (for slem-plot-pr)\n"
      "      --curve-points N    recall points of the curve: 11 (default) or 101\n"
      "  -o, --output OUT        write here (default: stdout)\n"
      "  -q, --quiet             no warnings\n"
      "\n"
      "trec_eval's numbers: slem-eval --trec-compat [OPTION]... (--qrels QRELS [RUN] |\n"
      "QRELS RUN), or slem-trec_eval [OPTION]... QRELS RUN, with trec_eval 10.0's\n"
      "command line:\n"
      "      --trec-compat       evaluate as trec_eval 10.0: results re-sorted by\n"
      "                          score, ties by docno in decreasing order, the rank\n"
      "                          field ignored; the qrels' topics only;\n"
      "                          'measure<TAB>query<TAB>value' lines\n"
      "  -q, --per-query         per topic, then 'all' (trec_eval -q; --quiet: no\n"
      "                          warnings)\n"
      "  -m, --measure M         a measure by trec_eval's name, with its parameters:\n"
      "                          map, P.5,10, ndcg_cut.10, ndcg.1=0,2=1,\n"
      "                          utility.2,-1,0,0, ...; official (the default set),\n"
      "                          all_trec (every measure trec_eval 10.0 computes from\n"
      "                          qrels and a run but rbp), set; may be repeated (the\n"
      "                          first parameters of a measure are kept)\n"
      "  -n, --nosummary         no 'all' lines (trec_eval -n)\n"
      "  -c, --complete          qrels topics the run lacks count (trec_eval -c)\n"
      "  -l, --relevance-level N qrels value >= N is relevant (default 1)\n"
      "  -M N                    the first N results of each topic only (N >= 1)\n"
      "  -J                      results the qrels do not judge are dropped first\n"
      "  -N N                    documents in the collection (utility's 4th\n"
      "                          coefficient); -o, -f and --quiet as above\n"
      "\n"
      "The revisited Oxford/Paris protocol (revisitop's compute_map):\n"
      "      --protocol P        easy, medium or hard: mAP and mP@1, mP@5, mP@10\n"
      "      --easy FILE         'query item' per line: the easy positives\n"
      "      --hard FILE         the hard positives (--junk FILE: the junk), or\n"
      "                          instead --qrels with grades 2 easy, 1 hard, -1 junk,\n"
      "                          0 negative\n"
      "\n"
      "  -h, --help              show this help and exit\n"
      "  -V, --version           show the version and exit\n"
      "\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-eval(1).\n",
      slem_rankformat_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

/* slem-trec_eval's help: trec_eval's command line. */
static void __attribute__((noreturn)) usage_trec(void) {
  printf(
      "Usage: slem-trec_eval [OPTION]... QRELS RUN\n"
      "Evaluate the run against the qrels as trec_eval 10.0 does, with its command\n"
      "line, and print its 'measure<TAB>topic<TAB>value' lines (the same as slem-eval\n"
      "--trec-compat). RUN '-' is stdin; a TREC run, or a ranking in another of\n"
      "slem's formats (%s; -f).\n"
      "\n"
      "  -q, --query_eval_wanted   per topic, then 'all'\n"
      "  -n, --nosummary           no 'all' lines\n"
      "  -m, --measure M[.PARAMS]  a measure by trec_eval's name, repeatable: map,\n"
      "                            P.5,10, ndcg_cut.10, ndcg.1=0,2=1,3=5,\n"
      "                            utility.2,-1,0,0, set_F.0.5, 11pt_avg.0.2,0.5,\n"
      "                            rbp_resid.p=0.95, ...; the first parameters\n"
      "                            given for a measure are kept; nicknames official\n"
      "                            (the default), all_trec (but rbp), set\n"
      "  -c, --complete_rel_info_wanted  qrels topics the run lacks count\n"
      "  -l, --level_for_rel N     a qrels value >= N is relevant (default 1)\n"
      "  -M, --Max_retrieved_per_topic N  the first N results of each topic (N >= 1)\n"
      "  -J, --Judged_docs_only    results the qrels do not judge are dropped first\n"
      "  -N, --Number_docs_in_coll N  documents in the collection (utility's 4th\n"
      "                            coefficient)\n"
      "  -o                        trec_eval's obsolete -o: accepted, does nothing\n"
      "  -R, -T FORMAT             qrels and trec_results only\n"
      "      --output OUT          write here (default: stdout)\n"
      "  -f, --format F            the run's format: %s\n"
      "      --quiet               no warnings\n"
      "  -h, --help                show this help and exit\n"
      "  -v, -V, --version         show the version and exit\n"
      "\n"
      "Not supported, and refused with the reason: the measures rbp (undefined in\n"
      "trec_eval 10.0), prefs and judgement groups (other qrels formats), -D, -Z.\n"
      "\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-trec_eval(1).\n",
      slem_rankformat_names(), slem_rankformat_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

/* --trec-compat: the qrels and the ranking through treceval.h. */
static int run_trec(const char *ranking, SlemRankFormat format, const char *qrels,
                    const char *output, const SlemTrecOpts *topts, const char *const *measures,
                    size_t nmeasures, int quiet) {
  SlemError err;
  uint64_t skipped = 0;
  int usage_err = 0;
  if (slem_treceval_run(topts, measures, nmeasures, qrels, ranking, format, output, &skipped,
                        &usage_err, &err) != SLEM_OK) {
    if (usage_err) cli_usage_error("-m: %s", err.msg);
    return cli_fail(&err);
  }
  if (skipped && !quiet)
    cli_warn("%" PRIu64 " topics of the qrels are not in the run: left out (trec_eval 10.0 stops "
             "there; --complete counts them as 0, as trec_eval -c)", skipped);
  return CLI_EXIT_OK;
}

static void on_progress(void *ctx, uint64_t done) { cli_progress_of("queries read", done, 0); }

/* --trec-compat, and slem-trec_eval (as_trec_eval): trec_eval's command line (-q per topic,
 * -n, -c, -l N, -M N, -m M repeatable, -J, -N N; -o, -R qrels and -T trec_results change
 * nothing; -D and -Z, refused), the qrels and the run as its two operands or as --qrels
 * QRELS RUN; slem-eval's --output, -f and --quiet, and -o OUT but in slem-trec_eval, where -o
 * is trec_eval's. */
static int main_trec(int argc, char **argv, int as_trec_eval) {
  static const struct option longopts[] = {
      {"trec-compat", no_argument, 0, 't'},       {"qrels", required_argument, 0, 'Q'},
      {"per-query", no_argument, 0, 'q'},         {"query_eval_wanted", no_argument, 0, 'q'},
      {"complete", no_argument, 0, 'c'},          {"complete_rel_info_wanted", no_argument, 0, 'c'},
      {"relevance-level", required_argument, 0, 'l'}, {"level_for_rel", required_argument, 0, 'l'},
      {"measure", required_argument, 0, 'm'},     {"Max_retrieved_per_topic", required_argument, 0, 'M'},
      {"Judged_docs_only", no_argument, 0, 'J'},  {"Number_docs_in_coll", required_argument, 0, 'N'},
      {"format", required_argument, 0, 'f'},      {"output", required_argument, 0, 'O'},
      {"quiet", no_argument, 0, 'U'},             {"help", no_argument, 0, 'h'},
      {"nosummary", no_argument, 0, 'n'},         {"Debug_level", required_argument, 0, 'D'},
      {"Rel_info_format", required_argument, 0, 'R'}, {"Results_format", required_argument, 0, 'T'},
      {"Zscore", required_argument, 0, 'Z'},
      {"Output_old_results_format", required_argument, 0, 'y'},
      {"version", no_argument, 0, 'V'},           {"query-labels", required_argument, 0, 'X'},
      {"db-labels", required_argument, 0, 'X'},   {"query-ids", required_argument, 0, 'X'},
      {"db-ids", required_argument, 0, 'X'},      {"exclude-self", no_argument, 0, 'X'},
      {"curve", required_argument, 0, 'X'},       {"ap", required_argument, 0, 'X'},
      {"junk", required_argument, 0, 'j'},        {"json", no_argument, 0, 'k'},
      {"protocol", required_argument, 0, 'p'},    {0, 0, 0, 0}};
  /* trec_eval's -o takes no value (an obsolete no-op): in slem-trec_eval, never slem's -o OUT */
  const char *shortopts = as_trec_eval ? "qcl:m:M:JN:f:onD:R:T:Z:hvV" : "qcl:m:M:JN:f:o:nD:R:T:Z:hvV";
  const char *measures[64], *qrels = NULL, *output = "-", *ranking = "-";
  size_t nmeasures = 0;
  int quiet = 0, c;
  SlemTrecOpts topts;
  SlemRankFormat format = SLEM_RANK_AUTO;
  SlemError err;
  slem_treceval_opts_init(&topts);
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 't': break;
    case 'Q': qrels = optarg; break;
    case 'q': topts.per_query = 1; break;
    case 'c': topts.complete = 1; break;
    case 'l': topts.relevance_level = cli_long("-l", optarg, -1000000, 1000000); break;
    case 'm':
      if (nmeasures == sizeof measures / sizeof *measures) cli_usage_error("-m: too many measures");
      measures[nmeasures++] = optarg;
      break;
    case 'M': {
      /* trec_eval takes 0 and scores an empty ranking for every topic: a slip (0 for "no
       * limit"?) more likely than a wish, refused with the reason */
      char *end;
      if (strtol(optarg, &end, 10) == 0 && end != optarg && !*end)
        cli_usage_error("-M 0 keeps no result of any topic (trec_eval then scores empty "
                        "rankings); leave -M out to keep them all");
      topts.max_per_topic = cli_long("-M", optarg, 1, 1L << 40);
      break;
    }
    case 'J': topts.judged_only = 1; break;
    case 'N': topts.num_docs = (double)cli_long("-N", optarg, 0, 1L << 52); break;
    case 'n': topts.no_summary = 1; break;
    case 'f':
      if (slem_rankformat_parse(&format, optarg, &err) != SLEM_OK)
        cli_usage_error("--format: %s", err.msg);
      break;
    case 'o':
      if (!as_trec_eval) output = optarg;
      break; /* slem-trec_eval: trec_eval's obsolete -o, which changes nothing */
    case 'y': break; /* --Output_old_results_format: the same */
    case 'O': output = optarg; break;
    case 'U': quiet = 1; break;
    case 'R':
      if (strcmp(optarg, "qrels"))
        cli_usage_error("-R %s: not supported by slem: it reads qrels only (trec_eval's prefs, "
                        "qrels_prefs and qrels_jg are other judgement formats)", optarg);
      break;
    case 'T':
      if (strcmp(optarg, "trec_results"))
        cli_usage_error("-T %s: not supported by slem: trec_eval 10.0's one results format is "
                        "trec_results (slem reads every ranking format, %s: -f)", optarg,
                        slem_rankformat_names());
      break;
    case 'D':
      cli_usage_error("-D %s: not supported by slem: trec_eval's debugging output of its own "
                      "computations", optarg);
    case 'Z':
      cli_usage_error("-Z %s: not supported by slem: z-scores against a file of means and "
                      "deviations", optarg);
    case 'X': cli_usage_error("--trec-compat takes neither labels, ids, --exclude-self, --curve nor --ap");
    case 'j': cli_usage_error("--trec-compat: trec_eval has no junk lists");
    case 'k': cli_usage_error("--trec-compat prints trec_eval's lines, not JSON");
    case 'p': cli_usage_error("--trec-compat or --protocol, not both");
    case 'h':
      if (as_trec_eval) usage_trec();
      usage();
    case 'v':
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  cli_set_quiet(quiet);
  if (!qrels && argc - optind != 2)
    cli_usage_error("--trec-compat needs --qrels QRELS [RUN], or QRELS RUN as trec_eval takes them");
  if (!qrels) qrels = argv[optind++];
  if (optind < argc) ranking = argv[optind++]; else cli_stdin_hint("the run");
  if (optind < argc) cli_usage_error("one run at a time: unexpected '%s'", argv[optind]);
  {
    const char *inputs[2] = {ranking, qrels};
    cli_refuse_stdin_twice(inputs, 2);
    cli_refuse_clobber(output, inputs, 2);
  }
  return cli_close_stdout(run_trec(ranking, format, qrels, output, &topts, measures, nmeasures,
                                   quiet));
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
      {"version", no_argument, 0, 'V'},            {"quiet", no_argument, 0, 'q'},
      {"measure", required_argument, 0, 'm'},
      {"complete", no_argument, 0, 'c'},           {"relevance-level", required_argument, 0, 'l'},
      {"protocol", required_argument, 0, 'p'},     {"easy", required_argument, 0, 'E'},
      {"hard", required_argument, 0, 'H'},
      {"extra-measure", required_argument, 0, 'M'}, {"neighbors", required_argument, 0, 'g'},
      {0, 0, 0, 0}};
  static const char shortopts[] = "k:f:o:m:M:qhV";
  SlemMeasureReq extra[MAX_MEASURE_ARGS];
  const char *easy = NULL, *hard = NULL;
  int trec_only = 0, quiet = 0, have_protocol = 0;
  SlemProtocol protocol = SLEM_PROTO_MEDIUM;
  const char *junk[MAX_JUNK], *curve = NULL, *output = "-", *ranking = "-";
  int flags = 0, c, status = CLI_EXIT_OK;
  SlemRankFormat format = SLEM_RANK_AUTO;
  SlemEvalOpts opts;
  SlemTruthSpec spec = {0};
  SlemTruth *truth = NULL;
  SlemEvalResult *res = NULL;
  SlemError err;

  cli_init(argv[0]);
  {
    /* trec_eval's command line: slem-trec_eval, or --trec-compat anywhere before "--" */
    const char *base = strrchr(argv[0], '/');
    int te = strcmp(base ? base + 1 : argv[0], "slem-trec_eval") == 0;
    for (int i = 1; i < argc && !te && strcmp(argv[i], "--"); i++) te = !strcmp(argv[i], "--trec-compat");
    if (te) return main_trec(argc, argv, strcmp(base ? base + 1 : argv[0], "slem-trec_eval") == 0);
  }
  slem_eval_opts_init(&opts);
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'Q': spec.qrels = optarg; break;
    case 'g': spec.neighbors = optarg; break;
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
      if (slem_eval_apkind_parse(&opts.ap, optarg, &err) != SLEM_OK) cli_usage_error("--ap: %s", err.msg);
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
    case 'q': quiet = 1; break;
    case 'm': trec_only = 1; break;
    case 'M':
      if (opts.nmeasures == sizeof extra / sizeof *extra)
        cli_usage_error("-M: at most %d measures (one -M takes several cut-offs: -M P.5,10,20)",
                        MAX_MEASURE_ARGS);
      if (slem_eval_measure_parse(&extra[opts.nmeasures], optarg, &err) != SLEM_OK)
        cli_usage_error("%s", err.msg);
      opts.nmeasures++;
      break;
    case 'c':
    case 'l': trec_only = 1; break;
    case 'p':
      if (slem_revisitop_protocol_parse(&protocol, optarg) != SLEM_OK)
        cli_usage_error("--protocol: '%s' (easy, medium, hard)", optarg);
      have_protocol = 1;
      break;
    case 'E': easy = optarg; break;
    case 'H': hard = optarg; break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  cli_set_quiet(quiet);
  if (optind < argc) ranking = argv[optind++]; else cli_stdin_hint("the ranking");
  if (optind < argc) cli_usage_error("one ranking at a time: unexpected '%s'", argv[optind]);
  {
    /* neither output may be an input, nor the two outputs one file */
    const char *inputs[MAX_JUNK + 9] = {ranking, spec.qrels, spec.qlabels, spec.dblabels,
                                        spec.qids, spec.dbids, easy, hard};
    size_t n = 8;
    for (size_t i = 0; i < spec.njunk; i++) inputs[n++] = junk[i];
    cli_refuse_stdin_twice(inputs, n);
    if (curve) cli_refuse_clobber(curve, inputs, n);
    cli_refuse_same_outputs(output, curve);
    inputs[n++] = curve;
    cli_refuse_clobber(output, inputs, n);
  }
  /* --trec-compat went to main_trec(): its options here are a usage error */
  if (trec_only) cli_usage_error("-m, --complete and --relevance-level go with --trec-compat");
  if (slem_eval_check(&spec, &opts, have_protocol, easy, hard, curve, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  opts.measures = extra;
  if (have_protocol)
    return cli_close_stdout(
        slem_revisit_run(protocol, spec.qrels, easy, hard, junk, spec.njunk, ranking, format,
                         output, ((flags & SLEM_EVAL_JSON) ? SLEM_REVISIT_JSON : 0) |
                                     ((flags & SLEM_EVAL_PER_QUERY) ? SLEM_REVISIT_PER_QUERY : 0),
                         &err) == SLEM_OK ? CLI_EXIT_OK : cli_fail(&err));
  spec.neighbors_k = opts.recall_k;
  spec.junk = junk;
  opts.progress = on_progress;
  if (slem_eval_run(&res, &truth, ranking, format, &spec, &opts, output, curve, flags, &err) !=
      SLEM_OK)
    goto fail;
  cli_progress_done();
  if (res->unknown > 0 && !quiet)
    cli_warn("%zu queries of the ranking are not in the qrels: left out, as trec_eval leaves "
             "them out (the first at line %" PRIu64 ")", res->unknown, res->unknown_line);
  if (slem_truth_junk_unknown(truth) > 0 && !quiet)
    cli_warn("%zu junk lines name queries that are not in the qrels: left out",
             slem_truth_junk_unknown(truth));
  if (res->missing > 0 && !quiet) {
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
  slem_eval_result_free(res);
  slem_truth_free(truth);
  return cli_close_stdout(status);
}
