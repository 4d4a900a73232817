/* What the slem tools share at the terminal: messages, exit statuses, signals, progress.
 *
 * Exit statuses: 0 success; 1 a data, numerical or system error (the message names the
 * file and the record); 2 a usage error. A tool writing into a closed pipe is ended by
 * SIGPIPE, as other filters are.
 */
#ifndef SLEM_CLI_H
#define SLEM_CLI_H

#include <stdint.h>

#include "../lib/error.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* Records the program name and installs SIGINT/SIGTERM handlers that remove any
 * temporary output file before dying. */
void cli_init(const char *prog);
const char *cli_prog(void);

/* Prints "prog: message" for err and returns CLI_EXIT_FAIL. */
int cli_fail(const SlemError *err);

/* Prints "prog: message" and a pointer to --help, then exits with CLI_EXIT_USAGE. */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Prints "prog: warning: message". */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict number parsing of an option's argument; a bad one is a usage error. */
double cli_double(const char *opt, const char *s);
long cli_long(const char *opt, const char *s, long min, long max);

/* Prints "prog VERSION" and the BLAS in use, then exits 0. */
void cli_version(void) __attribute__((noreturn));

/* Sets the BLAS threads from --threads, else SLEM_THREADS. */
void cli_threads(long n);

/* On a terminal only: "prog: <n> <what>\r", at most a few times a second. */
void cli_progress(const char *what, uint64_t n);
void cli_progress_done(void);

/* Flushes and closes stdout, reporting a failed write. Returns the exit status to use. */
int cli_close_stdout(int status);

#endif
