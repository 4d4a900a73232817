/* slem-encode: SLEM descriptors (or exemplar classifiers) of vectors against a cache. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/encode/slem_linear.h"
#include "../lib/encode/encstream.h"
#include "../lib/io/libslem.h"
#include "../lib/formats/vecs.h"
#include "cli.h"

/* The tool's own options, around the library's (slem_encstream_opts_get()) in --help. */
typedef struct Tool {
  const char *cache, *output, *groups, *ids;
  SlemFormat ifmt;
  long threads;
  int stats, quiet, help, version;
} Tool;

/* -f: the input's format, "auto" included. */
static int set_format(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemFormat f;
  if (slem_format_parse(&f, value) != SLEM_OK)
    return slem_error(err, SLEM_EINVAL, "--%s: unknown format '%s' (%s)", s->name, value,
                      slem_format_names());
  ((Tool *)opts)->ifmt = f;
  return SLEM_OK;
}

#define T(f) SLEM_OPT_FIELD(Tool, f)
static const SlemOptSpec head[] = {
    {.name = "cache", .key = 'c', .metavar = "CACHE", .type = SLEM_OPT_TEXT, T(cache),
     .help = "negative statistics from slem-negstats (required)"},
    {.name = "output", .key = 'o', .metavar = "OUT", .type = SLEM_OPT_TEXT, T(output),
     .help = "write here (default: stdout)"},
    {.name = "format", .key = 'f', .metavar = "FMT", .type = SLEM_OPT_CUSTOM, T(ifmt),
     .parse = set_format,
     .help = "input format (default: from the extension, else from\n"
             "the content)"},
    {0}};
static const SlemOptSpec tail[] = {
    {.name = "groups", .metavar = "FILE", .type = SLEM_OPT_TEXT, T(groups),
     .help = "several positives per exemplar: FILE names the group\n"
             "of each input vector, one name per line; one row per\n"
             "group, in order of first appearance, with x0 the\n"
             "mean of the group's vectors (linear caches only)"},
    {.name = "ids", .metavar = "FILE", .type = SLEM_OPT_TEXT, T(ids),
     .help = "the ids of the input's rows (one per line), kept in\n"
             "the container with the descriptors (slem-match names\n"
             "rows by them)"},
    {.name = "stats", .type = SLEM_OPT_FLAG, T(stats),
     .help = "print where the wall time went on stderr (read,\n"
             "compute, write, waits; see the man page)"},
    {.name = "threads", .key = 't', .metavar = "N", .type = SLEM_OPT_WHOLE, T(threads), .min = 1,
     .max = 1024, .help = "BLAS threads (default: SLEM_THREADS, else all cores)"},
    {.name = "quiet", .key = 'q', .type = SLEM_OPT_FLAG, T(quiet), .help = "no progress or warnings"},
    {.name = "help", .key = 'h', .type = SLEM_OPT_FLAG, T(help), .help = "show this help and exit"},
    {.name = "version", .key = 'V', .type = SLEM_OPT_FLAG, T(version),
     .help = "show the version and the BLAS library, and exit"},
    {0}};
#undef T

static void __attribute__((noreturn)) usage(const CliOpts *cl) {
  printf(
      "Usage: slem-encode [OPTION]... -c CACHE [INPUT]\n"
      "Write the SLEM descriptor A^-1 (x - mu) / |A^-1 (x - mu)| of every vector of\n"
      "INPUT (default: stdin), one row per vector, float32. With a kernel cache, the\n"
      "explicit kernel descriptor z / sqrt(z.z + u^2 / lambda^2) instead, r values per\n"
      "vector.\n"
      "\n");
  cli_opts_help(cl, 27);
  printf(
      "\n"
      "FMT: %s.\n"
      "Exit status: 0 success, 1 data or system error, 2 usage error.\n"
      "See slem-encode(1).\n",
      slem_format_names());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

static void on_progress(void *ctx, uint64_t n, uint64_t total) {
  cli_progress_of("vectors encoded", n, total);
}

static void on_warn(void *ctx, const char *msg) { cli_warn("%s", msg); }

int main(int argc, char **argv) {
  Tool tool = {.output = "-", .ifmt = SLEM_FMT_AUTO};
  const char *input = "-";
  int c, own;
  SlemEncStreamOpts opts;
  SlemEncStreamFiles files = {0};
  SlemEncStreamResult res;
  int usage_err = 0;
  SlemError err;
  CliOpts cl;

  cli_init(argv[0]);
  cli_opts_build(&cl, head, slem_encstream_opts_count, slem_encstream_opts_get, tail, NULL);
  slem_encstream_opts_init(&opts);
  opts.block = 0; /* slem_encstream_block() */
  while ((c = getopt_long(argc, argv, cl.shortopts, cl.longopts, NULL)) != -1) {
    const SlemOptSpec *s = cli_opts_found(&cl, c, &own);
    if (!s) cli_bad_option(argv, cl.shortopts, cl.longopts);
    /* an optional value (--couple [MODE]) given apart: the next argument when the option
     * takes it, else none (the argument is then an input) */
    if (!own && !optarg && slem_optspec_has_value(s) == 2 && optind < argc) {
      SlemEncStreamOpts trial = opts;
      if (slem_encstream_opts_set(&trial, s->name, argv[optind], &err) == SLEM_OK) {
        opts = trial;
        optind++;
        continue;
      }
    }
    if ((own ? slem_optspec_set(s, &tool, NULL, optarg, &err)
             : slem_encstream_opts_set(&opts, s->name, optarg, &err)) != SLEM_OK)
      cli_usage_error("%s", err.msg);
    if (tool.help) usage(&cl);
    if (tool.version) cli_version();
  }
  if (!tool.cache) cli_usage_error("no cache: give -c CACHE (made by slem-negstats)");
  if (optind < argc) input = argv[optind++]; else cli_stdin_hint("vectors");
  if (optind < argc) cli_usage_error("one input at a time: unexpected '%s'", argv[optind]);
  /* to stdout, the self-describing container unless a format is asked for */
  if (opts.format == SLEM_FMT_AUTO && strcmp(tool.output, "-") == 0) opts.format = SLEM_FMT_SLEM;
  /* the rules, but --ids's after the inputs' checks (a closed stdin is an error of the
   * system, status 1, before an ids file given to a format without ids) */
  if (slem_encstream_check(&opts, tool.output, 0, tool.groups != NULL, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);
  if (opts.format == SLEM_FMT_AUTO) slem_format_for_output(&opts.format, tool.output, &err);
  {
    const char *inputs[4] = {input, tool.cache, tool.groups, tool.ids};
    cli_refuse_stdin_twice(inputs, 4);
    cli_refuse_clobber(tool.output, inputs, 4);
  }
  cli_threads(tool.threads);
  if (tool.ids && slem_encstream_check(&opts, tool.output, 1, tool.groups != NULL, &err) != SLEM_OK)
    cli_usage_error("%s", err.msg);

  files.cache = tool.cache;
  files.input = input;
  files.input_format = tool.ifmt;
  files.ids = tool.ids;
  files.groups = tool.groups;
  if (!tool.quiet) {
    files.warn = on_warn;
    files.progress = on_progress;
  }
  if (slem_encstream_run_files(&files, tool.output, &opts, &res, &usage_err, &err) != SLEM_OK) {
    if (usage_err) cli_usage_error("%s", err.msg);
    return cli_close_stdout(cli_fail(&err));
  }
  cli_progress_done();
  if (tool.stats) cli_print_phases(&res.phases);
  if (!tool.quiet && res.clamps > 0)
    cli_warn("%" PRIu64 " vectors had |v|^2 > k(x, x) beyond rounding; u^2 was clamped to 0",
             res.clamps);
  if (!tool.quiet && res.zeros > 0)
    cli_warn("%" PRIu64 " input vectors equal the negatives' mean: their %s zero", res.zeros,
             opts.mode == SLEM_ENCODE_UNIT ? "descriptors are" : "omegas are");
  return cli_close_stdout(CLI_EXIT_OK);
}
