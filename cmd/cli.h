/* What the slem tools share at the terminal: messages, exit statuses, signals, progress.
 *
 * Exit statuses: 0 success; 1 a data, numerical or system error (the message names the
 * file and the record); 2 a usage error. A tool writing into a closed pipe is ended by
 * SIGPIPE, as other filters are.
 */
#ifndef SLEM_CLI_H
#define SLEM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/io/error.h"
#include "../lib/io/optspec.h"
#include "../lib/io/phases.h"
#include "../lib/formats/vecs.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* Records the program name and catches every signal that ends a process (SIGHUP, SIGINT,
 * SIGTERM, SIGUSR1, SIGALRM, ..., not the faults SIGSEGV and the like) and was not ignored
 * at start: the handler removes the temporary output files, then dies of the signal
 * (slem_out_signal(): held over the renames of a group of outputs). */
void cli_init(const char *prog);
const char *cli_prog(void);

/* For a tool about to write a cache, before anything is read: its provenance time from
 * SOURCE_DATE_EPOCH (slem_cache_set_time()). Unset or empty: the time of writing. A value
 * that is not digits only, at most 253402300799 (9999-12-31T23:59:59Z), is a usage error
 * (exit 2) naming the variable, as the reproducible-builds.org specification asks; never
 * silently 0 or the current time. */
void cli_source_date_epoch(void);

/* Prints "prog: message" for err and returns CLI_EXIT_FAIL. */
int cli_fail(const SlemError *err);

/* Prints "prog: message" and a pointer to --help, then exits with CLI_EXIT_USAGE. */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Prints "prog: warning: message". */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing of an option's argument; a bad one is a usage error. */
double cli_double(const char *opt, const char *s);
long cli_long(const char *opt, const char *s, long min, long max);

/* The vector format named by an option's argument (opt: "--format", "--output-format";
 * cli_format_of("query", name) for "--query-format"): an unknown name, or "auto" for an
 * output (output set), is a usage error that lists the names. */
SlemFormat cli_format(const char *opt, const char *name, int output);
SlemFormat cli_format_of(const char *what, const char *name);

/* Prints "prog VERSION" and the BLAS in use, then exits 0. */
void cli_version(void) __attribute__((noreturn));
/* One more line for cli_version() to print last (a tool's other library, for example);
 * borrowed, it must stay valid. */
void cli_version_extra(const char *line);

/* For a tool that reads WHAT from stdin because no file was named (an explicit "-" needs no
 * hint): when stdin is a terminal, one line on stderr, "prog: reading WHAT from the terminal
 * (give a file, or - to read stdin; Ctrl-D ends)", so that the tool does not seem to hang.
 * Printed under --quiet too (it is not a warning: silence is what it prevents); nothing when
 * stdin is a pipe or a file. A stdin closed when the tool started (<&-) stops it with status
 * 1 and "<stdin>: closed when the tool started (<&-): ...", before any work. */
void cli_stdin_hint(const char *what);

/* --stats: where the wall time went, two lines of stderr of "key value" pairs after
 * "prog: stats:", seconds with 6 decimals:
 *   prog: stats: wall S threads T block B units U
 *   prog: stats: read S wait-read S convert S compute S merge S factor S write S wait-write S
 * read and write are timed on the reading and writing threads (they overlap the others).
 * Cannot fail. */
void cli_print_phases(const SlemPhases *p);

/* Sets the BLAS threads from --threads, else SLEM_THREADS. */
void cli_threads(long n);

/* The coupling of --couple (SLEM_COUPLE_* of vectypes.h), called when getopt_long returns
 * it (declared optional_argument): --couple=MODE, --couple MODE when the next argument is
 * the name of a coupling (it is consumed), and --couple alone the exact one. An unknown
 * MODE after '=' is a usage error. */
int cli_couple(int argc, char **argv);

/* Progress, on a terminal only and unless cli_set_quiet(1): one line of stderr, redrawn at
 * most four times a second: "prog: <n> of <total> <what> (p%), <rate>/s, m:ss left", or
 * without a total (0: unknown) "prog: <n> <what>, <rate>/s". Never as wide as the terminal
 * (a line that wraps is redrawn below its first part, which stays): where the line does not
 * fit, "prog: <n>/<total> (p%) m:ss left" (without a total, "prog: <n> <what>"), cut at the
 * edge if even that does not fit. The rate leaves out the time the process was stopped
 * (SIGCONT, handled by cli_init() with SA_RESTART, marks it). cli_progress_done() erases it
 * (and any message of cli_fail or cli_warn does first). */
void cli_progress_of(const char *what, uint64_t n, uint64_t total);
void cli_progress(const char *what, uint64_t n);
void cli_progress_done(void);
void cli_set_quiet(int on);

/* For getopt_long's '?' (cli_init turns getopt's own message off): one usage message, then
 * exit 2. It names an unknown option, with the nearest name of longopts when the typo is
 * small ("unknown option '--outpt'; did you mean '--output'?"); an ambiguous abbreviation,
 * with the names it could be; a long option given "=VALUE" that takes none; and an option
 * last on the line without the value it needs. shortopts and longopts are what
 * getopt_long was given. */
struct option;
void cli_bad_option(char **argv, const char *shortopts, const struct option *longopts)
    __attribute__((noreturn));

/* A tool's options from their specs (optspec.h): its own first ones (head), the library's
 * (count() of them, get(i) each: slem_negstats_opts_get(), slem_encstream_opts_get()), its
 * own last ones (tail), in --help's order. longopts and shortopts are what getopt_long is
 * given: an option's val is its letter, else CLI_OPT_VAL + its place; shortopts holds
 * the letters (':' after those taking a value), then extra (letters the tool handles
 * itself, such as a former spelling). Held for the whole run. Out of memory: exits 1. */
#define CLI_OPT_VAL 1000
typedef struct CliOpts {
  const SlemOptSpec **specs;  /* every option, in --help's order */
  size_t n, lib_lo, lib_hi;   /* specs[lib_lo, lib_hi) are the library's */
  struct option *longopts;
  char shortopts[128];
} CliOpts;
void cli_opts_build(CliOpts *self, const SlemOptSpec *head, size_t (*count)(void),
                    const SlemOptSpec *(*get)(size_t), const SlemOptSpec *tail,
                    const char *extra);

/* The spec that getopt_long's return c stands for, or NULL (its '?', or a letter of
 * extra); *own set to 1 when the option is the tool's (head or tail), 0 the library's. */
const SlemOptSpec *cli_opts_found(const CliOpts *self, int c, int *own);

/* Prints every option's --help lines (slem_optspec_help()), the text from column. */
void cli_opts_help(const CliOpts *self, int column);

/* Before any work: exits 1 ("OUT: is a directory") when output is an existing directory,
 * or a new file in a folder that is missing or not writable ("OUT: cannot create a
 * temporary file beside it: ..."), or stdout ("-", NULL) when fd 1 was closed at start
 * (reopened on /dev/null by cli_init()), and is a usage error (exit 2) when output is empty ("")
 * or an existing regular file that is also one of the n inputs (same device and inode):
 * replacing it would destroy what the run reads. "-" and NULL are skipped. */
void cli_refuse_clobber(const char *output, const char *const *inputs, size_t n);

/* A usage error (exit 2), "only one input can be stdin", when more than one of the n
 * inputs is "-" (NULL ones skipped): the second would read what the first left, nothing.
 * One "-" with stdin closed when the tool started (<&-): status 1, as cli_stdin_hint(). */
void cli_refuse_stdin_twice(const char *const *inputs, size_t n);

/* A usage error (exit 2) when the outputs a and b, existing or not, are one file
 * (slem_out_resolve()): the one committed last would replace the other. "-" and NULL are
 * skipped. */
void cli_refuse_same_outputs(const char *a, const char *b);

/* A usage error (exit 2) when output, a ranking's name, is a name of vectors (.fvecs,
 * .bvecs, .ivecs, the *bin, .slem): most often the arguments mixed up, and the ranking
 * would replace the vectors. Called only when no output format was given (-F). */
void cli_refuse_vector_name(const char *output);

/* Flushes and closes stdout, reporting a failed write. Returns the exit status to use. */
int cli_close_stdout(int status);

#endif
