/* slem-calibrate: Platt's sigmoid per exemplar classifier, fitted on held-out data. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/search/calibration.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

static void __attribute__((noreturn)) usage(void) {
  printf(
      "Usage: slem-calibrate [OPTION]... -c CLASSIFIERS --exemplar-labels FILE\n"
      "         --positives VAL --positive-labels FILE [--negatives HELDOUT]\n"
      "Fit, for each exemplar classifier (w then b, from slem-encode --classifier or\n"
      "slem-esvm --classifier), Platt's sigmoid P = 1 / (1 + exp(-a (s - b))) of its\n"
      "score s = w.x + b, and write one line 'a b' per exemplar. A validation vector\n"
      "is a positive of the exemplars that share its label and a negative of the\n"
      "others; every held-out vector is a negative of every exemplar.\n"
      "\n"
      "  -c, --classifiers FILE      m classifiers, d + 1 values per row (required)\n"
      "  -e, --exemplar-labels FILE  one label per classifier (required)\n"
      "  -p, --positives FILE        validation vectors, d values per row (required)\n"
      "  -l, --positive-labels FILE  one label per validation vector (required)\n"
      "  -n, --negatives FILE        held-out negatives, d values per row\n"
      "  -o, --output OUT            write here (default: stdout)\n"
      "  -f, --format FMT            format of the vector files (default: from each\n"
      "                              extension, else from the content)\n"
      "      --classifiers-format FMT, --positives-format FMT, --negatives-format FMT\n"
      "                              the format of one of them, instead of -f\n"
      "  -q, --quiet                 no progress\n"
      "  -h, --help                  show this help and exit\n"
      "  -V, --version               show the version and the BLAS library, and exit\n"
      "\n"
      "FMT: %s.\n"
      "Labels: one per line, no white space. Exit status: 0 success, 1 data or system\n"
      "error, 2 usage error. See slem-calibrate(1).\n", slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static void progress(void *ctx, uint64_t done) {
  (void)ctx;
  cli_progress("exemplars calibrated", done);
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"classifiers", required_argument, 0, 'c'},
      {"exemplar-labels", required_argument, 0, 'e'},
      {"positives", required_argument, 0, 'p'},
      {"positive-labels", required_argument, 0, 'l'},
      {"negatives", required_argument, 0, 'n'},
      {"output", required_argument, 0, 'o'},
      {"format", required_argument, 0, 'f'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},
      {"classifiers-format", required_argument, 0, 'C'},
      {"positives-format", required_argument, 0, 'P'},
      {"negatives-format", required_argument, 0, 'N'},
      {0, 0, 0, 0}};
  const char *shortopts = "c:e:p:l:n:o:f:qhV", *output = "-";
  SlemCalibrateInput in = {0};
  SlemCalibration *cal = NULL;
  SlemError err;
  int c, status;

  cli_init(argv[0]);
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    switch (c) {
    case 'c': in.classifiers = optarg; break;
    case 'e': in.exemplar_labels = optarg; break;
    case 'p': in.positives = optarg; break;
    case 'l': in.positive_labels = optarg; break;
    case 'n': in.negatives = optarg; break;
    case 'o': output = optarg; break;
    case 'f':
      in.format = cli_format("--format", optarg, 0);
      break;
    case 'C':
    case 'P':
    case 'N': {
      const char *what = c == 'C' ? "classifiers" : c == 'P' ? "positives" : "negatives";
      SlemFormat *f = c == 'C' ? &in.classifiers_format : c == 'P' ? &in.positives_format
                                                                   : &in.negatives_format;
      *f = cli_format_of(what, optarg);
      break;
    }
    case 'q': cli_set_quiet(1); break;
    case 'h': usage();
    case 'V': cli_version();
    default: cli_bad_option(argv, shortopts, longopts);
    }
  }
  if (optind < argc) cli_usage_error("unexpected argument '%s'", argv[optind]);
  /* the rules between options, before anything is read */
  if (slem_calibration_check(&in, &err) != SLEM_OK) cli_usage_error("%s", err.msg);
  {
    const char *inputs[5] = {in.classifiers, in.exemplar_labels, in.positives,
                             in.positive_labels, in.negatives};
    cli_refuse_clobber(output, inputs, 5);
  }
  in.progress = progress;
  if (slem_calibration_fit(&cal, &in, &err) != SLEM_OK ||
      slem_calibration_write(cal, output, &err) != SLEM_OK)
    status = cli_fail(&err);
  else
    status = CLI_EXIT_OK;
  cli_progress_done();
  slem_calibration_free(cal);
  return cli_close_stdout(status);
}
