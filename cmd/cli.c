#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/slem.h"

static const char *prog = "slem";
static int progress_shown;

static void on_signal(int sig) {
  slem_out_unlink_pending();
  signal(sig, SIG_DFL);
  raise(sig);
}

void cli_init(const char *name) {
  const char *slash = strrchr(name, '/');
  struct sigaction sa;
  prog = slash ? slash + 1 : name;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

const char *cli_prog(void) { return prog; }

int cli_fail(const SlemError *err) {
  cli_progress_done();
  fprintf(stderr, "%s: %s\n", prog, err->msg[0] ? err->msg : slem_strstatus(err->status));
  return CLI_EXIT_FAIL;
}

void cli_usage_error(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry '%s --help' for more information.\n", prog);
  exit(CLI_EXIT_USAGE);
}

void cli_warn(const char *fmt, ...) {
  va_list ap;
  cli_progress_done();
  fprintf(stderr, "%s: warning: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

double cli_double(const char *opt, const char *s) {
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(v))
    cli_usage_error("%s: '%s' is not a finite number", opt, s);
  return v;
}

long cli_long(const char *opt, const char *s, long min, long max) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (end == s || *end || errno == ERANGE || v < min || v > max)
    cli_usage_error("%s: '%s' is not a whole number from %ld to %ld", opt, s, min, max);
  return v;
}

void cli_version(void) {
  printf("%s %s\nBLAS: %s\n", prog, SLEM_VERSION, slem_blas_library());
  exit(cli_close_stdout(CLI_EXIT_OK));
}

void cli_threads(long n) {
  const char *env = getenv("SLEM_THREADS");
  if (n <= 0 && env && *env) n = cli_long("SLEM_THREADS", env, 1, 1024);
  if (n > 0) slem_set_threads((int)n);
}

void cli_progress(const char *what, uint64_t n) {
  static struct timespec last;
  struct timespec now;
  if (!isatty(2)) return;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (progress_shown && (now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) <
                            250000000L)
    return;
  last = now;
  fprintf(stderr, "\r%s: %" PRIu64 " %s", prog, n, what);
  progress_shown = 1;
}

void cli_progress_done(void) {
  if (progress_shown) fputs("\r\033[K", stderr);
  progress_shown = 0;
}

int cli_close_stdout(int status) {
  if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
    if (status == CLI_EXIT_OK) {
      fprintf(stderr, "%s: <stdout>: write error: %s\n", prog, strerror(errno));
      return CLI_EXIT_FAIL;
    }
  }
  return status;
}
