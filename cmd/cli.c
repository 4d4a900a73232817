#define _GNU_SOURCE
#include "cli.h"

#include <fcntl.h>
#include <getopt.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../lib/linalg/arith.h"
#include "../lib/linalg/blas.h"
#include "../lib/io/io.h"
#include "../lib/rank/rankings.h"
#include "../lib/formats/cache.h"
#include "../lib/formats/vecs.h"
#include "../lib/io/libslem.h"
#include "../lib/formats/vectypes.h"

static const char *prog = "slem";
static int progress_shown;
static int stdout_closed; /* fd 1 was closed at start and reopened on /dev/null */
static int stdin_closed;  /* fd 0 too: every read of stdin is refused (slem_in_open()) */
static void on_continue(int sig);

/* Dies of sig by its default action, so that the parent sees the signal (status 128 + sig
 * from a shell; a core dump where the signal makes one and the limit allows): the signal is
 * unblocked, as it is inside its own handler. */
static void die_of(int sig) {
  sigset_t set;
  signal(sig, SIG_DFL);
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
}

/* Every signal whose default action ends the process, removing the temporary outputs
 * first; held while a group of outputs is renamed, then raised (slem_out_signal()). */
static void on_signal(int sig) {
  if (slem_out_signal(sig)) die_of(sig);
}

/* The signals that end a process by default and that a handler can catch, but for the
 * faults of the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
 * SIGSYS): a handler cannot go on after those, and the temporary such a crash leaves is
 * removed by the next write of the same output (io.c). SIGXFSZ is ignored instead (see
 * cli_init()). The real-time signals end a process too, and are caught after these. */
static const int ending_signals[] = {
  SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
  SIGPROF, SIGXCPU, SIGIO,
#ifdef SIGPOLL
#if SIGPOLL != SIGIO
  SIGPOLL,
#endif
#endif
#ifdef SIGSTKFLT
  SIGSTKFLT,
#endif
#ifdef SIGPWR
  SIGPWR,
#endif
#ifdef SIGLOST
#if SIGLOST != SIGPWR
  SIGLOST,
#endif
#endif
};

/* The handler on sig, unless sig was not at its default action when the tool started:
 * ignored (nohup's SIGHUP, the SIGINT and SIGQUIT of a shell's background job) it stays
 * ignored, as GNU sort leaves it; another handler (a profiler's SIGPROF) stays. */
static void catch_ending(int sig) {
  struct sigaction sa, old;
  if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
      old.sa_handler != SIG_DFL)
    return;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* a handler that returns (a signal held over a rename) lets the calls it interrupted
   * go on */
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, NULL);
}

/* Rebuilds this process's argv from /proc/self/cmdline (NUL-separated), so that the
 * tool can execute itself again without main passing argv down. NULL on failure. */
static char **own_argv(void) {
  static char buf[1 << 16];
  char **argv;
  size_t len = 0, n = 0, j = 0;
  ssize_t got;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  while (len < sizeof buf && (got = read(fd, buf + len, sizeof buf - len)) > 0) len += (size_t)got;
  close(fd);
  if (len == 0 || len == sizeof buf || buf[len - 1] != 0) return NULL;
  for (size_t i = 0; i < len; i++) n += buf[i] == 0;
  argv = calloc(n + 1, sizeof *argv);
  if (!argv) return NULL;
  for (size_t i = 0; i < len; i += strlen(buf + i) + 1) argv[j++] = buf + i;
  return argv;
}

/* OpenBLAS chooses its kernels when it is loaded, from the CPUs it recognises; on one it
 * does not know it falls back to generic kernels four to seven times slower. Before any
 * work, execute the tool once more with OPENBLAS_CORETYPE naming the kernels this CPU can
 * run. A user's own OPENBLAS_CORETYPE always wins (and marks the second image, so there
 * is no loop); if the new image cannot be executed, the tool goes on as it is. */
static void choose_blas_core(void) {
  const char *better;
  char **argv;
  if (getenv("OPENBLAS_CORETYPE")) return;
  if (!(better = slem_blas_better_core())) return;
  if (!(argv = own_argv())) return;
  setenv("SLEM_BLAS_CORE_WAS", slem_blas_detected_core(), 1);
  setenv("OPENBLAS_CORETYPE", better, 1);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("SLEM_BLAS_CORE_WAS");
  free(argv);
}

/* slem-parallel and slem-sbatch pin every task to one BLAS core: SLEM_BLAS_PIN names it,
 * beside OPENBLAS_CORETYPE. A task whose OpenBLAS runs another core (a CPU that cannot run
 * the pinned one, or a variable that did not reach it) stops before any work: its results
 * would not be those of the run's other tasks. The core compared is the one the tool
 * records in what it writes (arith.h). */
static void check_blas_pin(void) {
  const char *pin = getenv("SLEM_BLAS_PIN"), *env = getenv("OPENBLAS_CORETYPE");
  if (!pin || !*pin || strcasecmp(pin, slem_arith_core()) == 0) return;
  fprintf(stderr, "%s: this task is pinned to the BLAS core %s (SLEM_BLAS_PIN), but OpenBLAS "
          "runs %s on this host (OPENBLAS_CORETYPE=%s): its results would not match those of "
          "the other tasks; nothing was done\n", prog, pin, slem_arith_core(), env ? env : "unset");
  exit(CLI_EXIT_FAIL);
}

/* Under an address-space limit (ulimit -v) OpenBLAS cannot allocate the buffers of its
 * threads (128 MiB each for its x86 kernels) and retries for ever. Before any work: when the
 * limit leaves room for fewer threads than OpenBLAS started with, the tool is executed
 * once more with OPENBLAS_NUM_THREADS set to what fits (SLEM_BLAS_FITTED marks the second
 * image); when it leaves room for none, the tool stops with a message and status 1. */
#define BLAS_THREAD_BYTES ((unsigned long long)160 << 20)

/* Under an address-space limit: 1, with the limit, the address space in use and the room
 * left beyond it (bytes); else 0. */
static int address_room(unsigned long long *limit, unsigned long long *used,
                        unsigned long long *room) {
  struct rlimit rl;
  long pages = 0, psize = sysconf(_SC_PAGESIZE);
  FILE *f;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || psize <= 0) return 0;
  if (!(f = fopen("/proc/self/statm", "r"))) return 0;
  if (fscanf(f, "%ld", &pages) != 1) pages = 0;
  fclose(f);
  *limit = (unsigned long long)rl.rlim_cur;
  *used = (unsigned long long)pages * (unsigned long long)psize;
  *room = *limit > *used ? *limit - *used : 0;
  return 1;
}

static void fit_memory_limit(void) {
  unsigned long long used, room, fit, limit;
  int threads = slem_blas_threads();
  char **argv, num[24];
  if (!address_room(&limit, &used, &room)) return;
  fit = room / BLAS_THREAD_BYTES;
  if (fit >= (unsigned long long)threads) {
    slem_blas_warm(); /* the buffers now, while the room is there */
    return;
  }
  if (fit == 0) {
    fprintf(stderr, "%s: the address-space limit (ulimit -v %llu) leaves %llu MiB beyond the "
            "%llu MiB in use, and the BLAS needs about %llu MiB for its buffers: raise the "
            "limit to at least %llu KiB\n", prog, limit >> 10, room >> 20,
            used >> 20, BLAS_THREAD_BYTES >> 20, (used + 2 * BLAS_THREAD_BYTES) >> 10);
    fflush(stderr);
    _exit(CLI_EXIT_FAIL);
  }
  if (getenv("SLEM_BLAS_FITTED") || !(argv = own_argv())) return;
  snprintf(num, sizeof num, "%llu", fit);
  setenv("OPENBLAS_NUM_THREADS", num, 1);
  setenv("SLEM_BLAS_FITTED", num, 1);
  execv("/proc/self/exe", argv);
  free(argv);
}

/* Between two BLAS calls OpenBLAS's idle threads spin (calling sched_yield) for 2^28 clock
 * cycles, about 0.1 s, before they sleep: during slem's own parallel phases (the selection of
 * slem-match, the widening of negstats, the encode writer) they take the cores from slem's
 * threads. Unless the user set OPENBLAS_THREAD_TIMEOUT, it is set to 2^20 cycles (under a
 * millisecond: still spinning between the BLAS calls of one loop) and the pool restarted to
 * take it, unless an address-space limit is set. Time only: no result depends on it
 * (docs/performance.md). */
static void quiet_blas_pool(void) {
  const char *t = getenv("OPENBLAS_THREAD_TIMEOUT");
  struct rlimit rl;
  if (t && *t) return;
  /* under an address-space limit a restarted pool can find no room for its threads, and
   * OpenBLAS then retries for ever: the pool is left as it started (fit_memory_limit()) */
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY) return;
  if (setenv("OPENBLAS_THREAD_TIMEOUT", "20", 1) != 0) return;
  slem_blas_restart_pool();
}

/* A cron job or a careless parent may start the tool with fd 0, 1 or 2 closed: the first
 * file the tool opens would then take that number and be read as the queries or written
 * over as the output. Each closed one of the three is reopened on /dev/null before any
 * file is opened. If /dev/null cannot be opened the tool stops with status 1. A closed
 * stdout is marked in SLEM_STDOUT_CLOSED, for this image and the one cli_init() may
 * execute, so that an output to it is refused (cli_refuse_clobber()); a closed stdin in
 * SLEM_STDIN_CLOSED, so that reading it is refused (cli_refuse_stdin_twice() before any
 * work, slem_in_open() for the rest) rather than read as an empty input. */
static void reopen_std_fds(void) {
  for (int fd = 0; fd <= 2; fd++) {
    int got;
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got != fd) {
      if (got >= 0) close(got);
      _exit(CLI_EXIT_FAIL);
    }
    /* said to the image that cli_init() may execute next, whose fd 1 is /dev/null */
    if (fd == STDOUT_FILENO) setenv("SLEM_STDOUT_CLOSED", "1", 1);
    if (fd == STDIN_FILENO) setenv("SLEM_STDIN_CLOSED", "1", 1);
  }
}

void cli_init(const char *name) {
  const char *slash = strrchr(name, '/');
  struct sigaction sa;
  reopen_std_fds();
  stdout_closed = getenv("SLEM_STDOUT_CLOSED") != NULL;
  stdin_closed = getenv("SLEM_STDIN_CLOSED") != NULL;
  if (stdin_closed) slem_in_mark_stdin_closed();
  /* Past a file-size limit (ulimit -f) a write fails with EFBIG and the normal error path
   * removes the temporary file and says why, rather than SIGXFSZ killing the tool. */
  signal(SIGXFSZ, SIG_IGN);
  prog = slash ? slash + 1 : name;
  quiet_blas_pool();
  fit_memory_limit();
  choose_blas_core();
  check_blas_pin();
  opterr = 0; /* cli_bad_option() says it once, naming the option */
  slem_out_on_deferred_signal(die_of);
  for (size_t i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++)
    catch_ending(ending_signals[i]);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) catch_ending(sig);
  /* restarted, so that no read or write of the run fails with EINTR for it */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_continue;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGCONT, &sa, NULL);
}

const char *cli_prog(void) { return prog; }

/* The reproducible-builds.org specification of SOURCE_DATE_EPOCH: an ASCII integer as
 * `date +%s` prints it, and a malformed value SHOULD end the build with an error. Read only
 * by a tool about to stamp a time (slem-negstats writing a cache), so that a variable meant
 * for something else never stops a tool that does not use it. The limit keeps the
 * provenance's four-digit year (9999-12-31T23:59:59Z). */
#define SDE_MAX INT64_C(253402300799)

void cli_source_date_epoch(void) {
  const char *s = getenv("SOURCE_DATE_EPOCH");
  int64_t v = 0;
  char shown[48];
  size_t i;
  if (!s || !*s) return; /* unset or empty: the time of writing */
  for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
    v = v * 10 + (s[i] - '0');
    if (v > SDE_MAX) break;
  }
  if (s[i] == '\0' && v <= SDE_MAX) {
    slem_cache_set_time(1, v);
    return;
  }
  /* the value as typed, control bytes shown as '?', cut at 40 bytes */
  for (i = 0; s[i] && i < 40; i++) shown[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
  memcpy(shown + i, s[i] ? "..." : "", s[i] ? 4 : 1);
  cli_usage_error("SOURCE_DATE_EPOCH='%s' is not a provenance time: seconds since "
                  "1970-01-01 UTC, digits only, at most %" PRId64 " (9999-12-31), as `date +%%s` "
                  "prints them; unset it to stamp the time of writing", shown, SDE_MAX);
}

int cli_fail(const SlemError *err) {
  cli_progress_done();
  fprintf(stderr, "%s: %s\n", prog, err->msg[0] ? err->msg : slem_error_str(err->status));
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
  if (end == s || *end || isspace((unsigned char)*s) || errno == ERANGE || !isfinite(v))
    cli_usage_error("%s: '%s' is not a finite number", opt, s);
  return v;
}

SlemFormat cli_format(const char *opt, const char *name, int output) {
  SlemFormat f;
  if (slem_format_parse(&f, name) != SLEM_OK || (output && f == SLEM_FMT_AUTO))
    cli_usage_error("%s: unknown format '%s' (%s)", opt, name, slem_format_names());
  return f;
}

SlemFormat cli_format_of(const char *what, const char *name) {
  char opt[64];
  snprintf(opt, sizeof opt, "--%s-format", what);
  return cli_format(opt, name, 0);
}

long cli_long(const char *opt, const char *s, long min, long max) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  /* strtol() skips leading blanks, but not trailing ones: neither is taken */
  if (end == s || *end || isspace((unsigned char)*s) || errno == ERANGE || v < min || v > max)
    cli_usage_error("%s: '%s' is not a whole number from %ld to %ld", opt, s, min, max);
  return v;
}

static const char *version_extra;

void cli_version_extra(const char *line) { version_extra = line; }

void cli_version(void) {
  const char *was = getenv("SLEM_BLAS_CORE_WAS"), *env = getenv("OPENBLAS_CORETYPE"),
             *better = slem_blas_better_core();
  printf("%s %s\nBLAS: %s\nBLAS core: %s", prog, SLEM_VERSION, slem_blas_library(),
         slem_blas_corename());
  /* the explanations go on to a second line, indented, so that every line stays within 80
   * columns with the longest core names */
  if (was && env)
    printf(" (OPENBLAS_CORETYPE=%s set by slem:\n  OpenBLAS had chosen %s on this CPU)\n", env, was);
  else if (env)
    printf(" (OPENBLAS_CORETYPE=%s from the environment)\n", env);
  else if (better)
    printf(" (generic kernels: this CPU could run %s;\n  set OPENBLAS_CORETYPE=%s)\n", better, better);
  else
    printf(" (chosen by OpenBLAS)\n");
  if (version_extra) printf("%s\n", version_extra);
  exit(cli_close_stdout(CLI_EXIT_OK));
}

/* Stops with status 1 when stdin was closed at start (<&-): it would read as an empty input. */
static void refuse_closed_stdin(void) {
  SlemError err;
  if (stdin_closed && slem_in_stdin_closed(&err) != SLEM_OK) exit(cli_fail(&err));
}

void cli_stdin_hint(const char *what) {
  refuse_closed_stdin();
  if (isatty(STDIN_FILENO))
    fprintf(stderr, "%s: reading %s from the terminal (give a file, or - to read stdin; Ctrl-D ends)\n",
            prog, what);
}

int cli_couple(int argc, char **argv) {
  int c;
  if (optarg) {
    if ((c = slem_couple_parse(optarg)) < 0)
      cli_usage_error("--couple: unknown coupling '%s' (exact, authors)", optarg);
    return c;
  }
  if (optind < argc && (c = slem_couple_parse(argv[optind])) > 0) {
    optind++;
    return c;
  }
  return SLEM_COUPLE_EXACT;
}

void cli_print_phases(const SlemPhases *p) {
  cli_progress_done();
  fprintf(stderr, "%s: stats: wall %.6f threads %d block %zu units %zu\n", cli_prog(), p->wall,
          p->threads, p->block, p->units);
  fprintf(stderr, "%s: stats: read %.6f wait-read %.6f convert %.6f compute %.6f merge %.6f "
          "factor %.6f write %.6f wait-write %.6f\n", cli_prog(), p->read, p->wait_read,
          p->convert, p->compute, p->merge, p->factor, p->write, p->wait_write);
}

void cli_threads(long n) {
  const char *env = getenv("SLEM_THREADS"), *fitted = getenv("SLEM_BLAS_FITTED");
  int from_env = n <= 0 && env && *env;
  if (from_env) n = cli_long("SLEM_THREADS", env, 1, 1024);
  /* no more threads than a memory limit left room for (fit_memory_limit) */
  if (fitted && n > atol(fitted)) n = atol(fitted);
  /* more than the pool: each new thread maps a buffer, taken at once while there is room */
  int grown = n > slem_blas_threads(), limited = 0;
  if (grown) {
    unsigned long long limit, used, room, fit;
    if ((limited = address_room(&limit, &used, &room))) {
      fit = (unsigned long long)slem_blas_threads() + room / BLAS_THREAD_BYTES;
      if ((unsigned long long)n > fit) {
        fprintf(stderr, "%s: %s%ld: the address-space limit (ulimit -v %llu) leaves room for "
                "the buffers of %llu BLAS threads; running %llu (the results do not depend "
                "on it)\n", prog, from_env ? "SLEM_THREADS=" : "-t ", n, limit >> 10, fit, fit);
        n = (long)fit;
      }
    }
  }
  if (n > 0) slem_blas_set_threads((int)n);
  if (grown && limited) slem_blas_warm();
  /* a block of records read in pieces: one reading thread for every 4 of the BLAS's (the
   * reader of 2 GB copies for a second, which 16 cores encode in as much); one below 8 */
  slem_vecreader_set_read_threads(slem_blas_threads() / 4);
}

static int quiet;
static struct timespec progress_start;
static struct timespec progress_last; /* the last call of cli_progress_of() */
/* Set when the process is continued after a stop (Ctrl-Z, then fg): the time stopped is no
 * work, and counted in the rate it made "m:ss left" grow by the length of the stop. The
 * next call moves the start on by the time since the call before, which holds the stop. */
static volatile sig_atomic_t progress_resumed;

static void on_continue(int sig) {
  (void)sig;
  progress_resumed = 1;
}

void cli_set_quiet(int on) { quiet = on; }

static double seconds_since(const struct timespec *t0, const struct timespec *t) {
  return (double)(t->tv_sec - t0->tv_sec) + 1e-9 * (double)(t->tv_nsec - t0->tv_nsec);
}

/* The columns a progress line may take: one fewer than the terminal's (a line that
 * reached the last column would wrap, and the next redraw, which returns to the start of
 * the line the cursor is on, would leave the first part standing above it: a narrow
 * terminal filled up with copies); asked at each redraw, so that a resized window is
 * followed. 79 when the width is unknown. */
static size_t progress_columns(void) {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return (size_t)ws.ws_col - 1;
  return 79;
}

void cli_progress_of(const char *what, uint64_t n, uint64_t total) {
  static struct timespec last;
  struct timespec now;
  double elapsed, rate;
  char line[512];
  size_t len = 0, cols;
  if (quiet || !isatty(2)) return;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (!progress_shown && progress_start.tv_sec == 0 && progress_start.tv_nsec == 0)
    progress_start = progress_last = now;
  if (progress_resumed) {
    double stopped = seconds_since(&progress_last, &now);
    progress_resumed = 0;
    progress_start.tv_sec += (time_t)stopped;
    progress_start.tv_nsec += (long)((stopped - (double)(time_t)stopped) * 1e9);
    if (progress_start.tv_nsec >= 1000000000L) {
      progress_start.tv_sec++;
      progress_start.tv_nsec -= 1000000000L;
    }
  }
  progress_last = now;
  if (progress_shown && seconds_since(&last, &now) < 0.25) return;
  last = now;
  elapsed = seconds_since(&progress_start, &now);
  rate = elapsed > 0 ? (double)n / elapsed : 0;
  /* the whole line; on a terminal too narrow for it, the short one (what counts, the
   * percentage and the time left), cut at the edge if even that does not fit */
  cols = progress_columns();
  if (total > 0 && n <= total) {
    double pct = 100.0 * (double)n / (double)total;
    char left[32] = "";
    if (rate > 0 && elapsed >= 0.5) {
      double s = (double)(total - n) / rate;
      snprintf(left, sizeof left, "%d:%02d left", (int)(s / 60), (int)s % 60);
    }
    if (*left)
      len = (size_t)snprintf(line, sizeof line, "%s: %" PRIu64 " of %" PRIu64 " %s (%.0f%%), %.0f/s, %s",
                             prog, n, total, what, pct, rate, left);
    else
      len = (size_t)snprintf(line, sizeof line, "%s: %" PRIu64 " of %" PRIu64 " %s (%.0f%%)", prog,
                             n, total, what, pct);
    if (len > cols)
      len = (size_t)snprintf(line, sizeof line, "%s: %" PRIu64 "/%" PRIu64 " (%.0f%%)%s%s", prog, n,
                             total, pct, *left ? " " : "", left);
  } else {
    if (rate > 0 && elapsed >= 0.5)
      len = (size_t)snprintf(line, sizeof line, "%s: %" PRIu64 " %s, %.0f/s", prog, n, what, rate);
    if (len == 0 || len > cols)
      len = (size_t)snprintf(line, sizeof line, "%s: %" PRIu64 " %s", prog, n, what);
  }
  if (len >= sizeof line) len = sizeof line - 1;
  if (len > cols) len = cols;
  fprintf(stderr, "\r%.*s\033[K", (int)len, line);
  progress_shown = 1;
}

void cli_progress(const char *what, uint64_t n) { cli_progress_of(what, n, 0); }

void cli_progress_done(void) {
  if (progress_shown) fputs("\r\033[K", stderr);
  progress_shown = 0;
  progress_start.tv_sec = progress_start.tv_nsec = 0;
}

/* The edit distance of a and b (insertions, deletions, substitutions, and swaps of two
 * neighbouring characters, each 1), capped at CAP: the typo "--qurey-labels" is 1 from
 * "--query-labels". Strings longer than 63 characters are CAP away from everything. */
#define TYPO_CAP 3
static int typo_distance(const char *a, size_t na, const char *b) {
  size_t nb = strlen(b);
  int d[64][64];
  if (na > 63 || nb > 63) return TYPO_CAP;
  for (size_t i = 0; i <= na; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= nb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= na; i++)
    for (size_t j = 1; j <= nb; j++) {
      int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[na][nb] < TYPO_CAP ? d[na][nb] : TYPO_CAP;
}

/* Two entries of a getopt_long table that are one option under two names (--neighbours and
 * --neighbors): getopt_long takes a prefix of both as either, not as ambiguous. */
static int same_option(const struct option *a, const struct option *b) {
  return a->has_arg == b->has_arg && a->flag == b->flag && a->val == b->val;
}

void cli_bad_option(char **argv, const char *shortopts, const struct option *longopts) {
  const char *arg = optind > 0 ? argv[optind - 1] : "";
  /* getopt_long's '?' for a long option: unknown or ambiguous (optopt 0), or a known one
   * given "=VALUE" that takes none, or last on the line without the value it needs (optopt
   * its val). Only those leave the option just behind optind; a short option's error is
   * told by optopt, the letter */
  if (arg && strncmp(arg, "--", 2) == 0 && arg[2]) {
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    int has_value = name[n] == '=';
    const struct option *exact = NULL, *first = NULL, *best = NULL;
    int prefixes = 0, best_d = TYPO_CAP;
    char list[1024] = "";
    for (const struct option *o = longopts; o && o->name; o++) {
      if (strncmp(o->name, name, n) != 0) continue;
      if (strlen(o->name) == n) exact = o;
      if (!first || !same_option(first, o)) prefixes++;
      if (!first) first = o;
      if (strlen(list) + strlen(o->name) + 8 < sizeof list)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", *list ? ", " : "", o->name);
    }
    if (!exact && prefixes == 1) exact = first;
    if (optopt == 0) {
      if (!exact && prefixes > 1)
        cli_usage_error("option '--%.*s' is ambiguous: %s", (int)n, name, list);
      /* the nearest name, when a typo or two away and not most of the name */
      for (const struct option *o = longopts; o && o->name; o++) {
        int d = typo_distance(name, n, o->name);
        if (d < best_d && (size_t)(2 * d) < n) best_d = d, best = o;
      }
      if (best)
        cli_usage_error("unknown option '--%.*s'; did you mean '--%s'?", (int)n, name, best->name);
      cli_usage_error("unknown option '--%.*s'", (int)n, name);
    }
    /* else the error may be a short option's inside a later cluster (-qz), the long
     * option before it well taken: only these two are the long option's */
    if (exact && exact->val == optopt && has_value && exact->has_arg == no_argument)
      cli_usage_error("option '--%s' takes no value ('%s')", exact->name, arg);
    if (exact && exact->val == optopt && !has_value && exact->has_arg == required_argument &&
        argv[optind] == NULL)
      cli_usage_error("option '--%s' needs a value", exact->name);
  }
  if (optopt && optopt != '?' && optopt != ':' && strchr(shortopts, optopt))
    cli_usage_error("option '-%c' needs a value", optopt);
  if (optopt > ' ' && optopt < 127) cli_usage_error("unknown option '-%c'", optopt);
  cli_usage_error("unknown option '%s'", arg ? arg : "");
}

void cli_refuse_clobber(const char *output, const char *const *inputs, size_t n) {
  struct stat so, si;
  /* an empty name was found out at the rename, once the work was done */
  if (output && !*output) cli_usage_error("an empty output file name ('')");
  if ((!output || strcmp(output, "-") == 0) && stdout_closed) {
    /* the results went to /dev/null, and the run said nothing, status 0 */
    fprintf(stderr, "%s: <stdout>: closed when the tool started (>&-): the output has "
            "nowhere to go; give -o FILE\n", prog);
    exit(CLI_EXIT_FAIL);
  }
  if (!output || strcmp(output, "-") == 0) return;
  if (stat(output, &so) != 0) {
    /* a new output: its folder must be there and writable, or the whole run is done
     * before its temporary file cannot be made */
    char dir[PATH_MAX];
    struct stat sl, sd;
    int e;
    /* a dangling link, or a name too long: told at open */
    if (lstat(output, &sl) == 0 || slem_io_dirname(dir, sizeof dir, output) != 0) return;
    e = stat(dir, &sd) != 0 ? errno : !S_ISDIR(sd.st_mode) ? ENOTDIR
        : access(dir, W_OK | X_OK) != 0 ? errno : 0;
    if (e) {
      fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, output,
              strerror(e));
      exit(CLI_EXIT_FAIL);
    }
    return;
  }
  /* before any work: the output is otherwise opened only once the work is done */
  if (S_ISDIR(so.st_mode)) {
    fprintf(stderr, "%s: %s: is a directory\n", prog, output);
    exit(CLI_EXIT_FAIL);
  }
  if (!S_ISREG(so.st_mode)) return;
  for (size_t i = 0; i < n; i++) {
    if (!inputs[i] || strcmp(inputs[i], "-") == 0 || stat(inputs[i], &si) != 0) continue;
    if (so.st_dev == si.st_dev && so.st_ino == si.st_ino)
      cli_usage_error("the output '%s' is also an input ('%s'): it would be replaced before it "
                      "is read; write elsewhere", output, inputs[i]);
  }
}

void cli_refuse_stdin_twice(const char *const *inputs, size_t n) {
  size_t uses = 0;
  for (size_t i = 0; i < n; i++) uses += inputs[i] && strcmp(inputs[i], "-") == 0;
  if (uses > 1) cli_usage_error("only one input can be stdin ('-')");
  if (uses) refuse_closed_stdin();
}

void cli_refuse_same_outputs(const char *a, const char *b) {
  char na[PATH_MAX + 256], nb[PATH_MAX + 256];
  if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return;
  if (slem_out_resolve(a, na, sizeof na) == 0 && slem_out_resolve(b, nb, sizeof nb) == 0 &&
      strcmp(na, nb) == 0)
    cli_usage_error("the outputs '%s' and '%s' are one file: the one written last would "
                    "replace the other; write them apart", a, b);
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

void cli_refuse_vector_name(const char *output) {
  SlemFormat vf;
  if (!output || slem_rankformat_from_path(output) != SLEM_RANK_AUTO) return;
  vf = slem_format_from_path(output);
  if (vf != SLEM_FMT_AUTO && vf != SLEM_FMT_TEXT && vf != SLEM_FMT_NPY)
    cli_usage_error("-o %s: the name of a vector file (%s), not of a ranking (%s): name the "
                    "ranking so, or give -F", output, slem_format_name(vf),
                    slem_rankformat_extensions());
}

void cli_opts_build(CliOpts *self, const SlemOptSpec *head, size_t (*count)(void),
                    const SlemOptSpec *(*get)(size_t), const SlemOptSpec *tail,
                    const char *extra) {
  size_t nh = 0, nl = count(), nt = 0, k = 0, len = 0;
  while (head && head[nh].name) nh++;
  while (tail && tail[nt].name) nt++;
  self->n = nh + nl + nt;
  self->lib_lo = nh;
  self->lib_hi = nh + nl;
  self->specs = calloc(self->n + 1, sizeof *self->specs);
  self->longopts = calloc(self->n + 1, sizeof *self->longopts);
  if (!self->specs || !self->longopts) {
    fprintf(stderr, "%s: out of memory\n", prog);
    exit(CLI_EXIT_FAIL);
  }
  for (size_t i = 0; i < nh; i++) self->specs[k++] = &head[i];
  for (size_t i = 0; i < nl; i++) self->specs[k++] = get(i);
  for (size_t i = 0; i < nt; i++) self->specs[k++] = &tail[i];
  self->shortopts[0] = 0;
  for (size_t i = 0; i < self->n; i++) {
    const SlemOptSpec *s = self->specs[i];
    int has = slem_optspec_has_value(s);
    self->longopts[i] = (struct option){s->name, has == 2 ? optional_argument
                                                 : has ? required_argument : no_argument,
                                        0, s->key ? s->key : CLI_OPT_VAL + (int)i};
    if (s->key && len + 3 < sizeof self->shortopts) {
      self->shortopts[len++] = (char)s->key;
      if (has) self->shortopts[len++] = ':';
      self->shortopts[len] = 0;
    }
  }
  if (extra && len + strlen(extra) < sizeof self->shortopts) strcat(self->shortopts, extra);
}

const SlemOptSpec *cli_opts_found(const CliOpts *self, int c, int *own) {
  size_t i = self->n;
  if (c >= CLI_OPT_VAL && (size_t)(c - CLI_OPT_VAL) < self->n)
    i = (size_t)(c - CLI_OPT_VAL);
  else
    for (i = 0; i < self->n && (!self->specs[i]->key || self->specs[i]->key != c); i++) continue;
  if (i == self->n) return NULL;
  *own = i < self->lib_lo || i >= self->lib_hi;
  return self->specs[i];
}

void cli_opts_help(const CliOpts *self, int column) {
  char buf[2048];
  for (size_t i = 0; i < self->n; i++) {
    size_t len = slem_optspec_help(self->specs[i], column, buf, sizeof buf);
    fwrite(buf, 1, len < sizeof buf ? len : sizeof buf - 1, stdout);
  }
}
