#define _GNU_SOURCE /* fopencookie */
#include "io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <dirent.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"

#define IN_BUFSIZE (1u << 20)
#define PEEK_MAX (64u << 10)
#define LINE_MAX_BYTES ((size_t)64 << 20)

struct SlemIn {
  int fd;
  int owns_fd;
  int is_regular;
  int64_t size;
  char *name;
  unsigned char *buf;
  size_t pos, len;   /* unread bytes are buf[pos .. len) */
  uint64_t offset;   /* bytes consumed */
  int eof;
  char *line;
  size_t line_cap;
  int unterminated;  /* the last line returned had no newline */
  uint64_t lines;    /* lines slem_in_getline() returned since the start (or a seek to 0) */
  struct stat opened; /* a regular file: its size and time when opened */
  int detached;      /* slem_in_new_detached(): a name for bytes held elsewhere */
};

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* A standard descriptor (0 or 1) whose open file description is non-blocking, as a parent
 * (node, a CI runner) may leave a pipe it shares: read(2) and write(2) then fail with
 * EAGAIN whenever the pipe is empty or full, and the run stopped ("read: Resource
 * temporarily unavailable"). fd is pointed at a description of its own of the same pipe
 * or terminal, opened through /proc/self/fd and made blocking (the parent's keeps its
 * flag). Where that cannot be done (a socket, no /proc) fd is left as it is. */
static void std_blocking(int fd) {
  char path[32];
  int fl = fcntl(fd, F_GETFL), nfd, nfl;
  struct stat st;
  if (fl < 0 || !(fl & O_NONBLOCK) || fstat(fd, &st) != 0 || S_ISREG(st.st_mode)) return;
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  /* O_NONBLOCK for the open: a FIFO's open would otherwise wait for the other side */
  nfd = open(path, (fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (nfd < 0) return;
  if ((nfl = fcntl(nfd, F_GETFL)) >= 0 && fcntl(nfd, F_SETFL, nfl & ~O_NONBLOCK) == 0)
    (void)dup2(nfd, fd);
  close(nfd);
}

void slem_in_block_stdin(void) { std_blocking(STDIN_FILENO); }

int slem_io_wait_ready(int fd, int events) {
  struct pollfd p = {fd, (short)events, 0};
  if (errno != EAGAIN && errno != EWOULDBLOCK) return 0;
  while (poll(&p, 1, -1) < 0)
    if (errno != EINTR) return 0;
  return 1;
}

/* 1 when fd's open file description is still non-blocking (std_blocking() could not give
 * the process one of its own: a socket). */
static int std_nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_NONBLOCK);
}

/* stdin's reads for slem_in_stdin_file(): no data yet is waited for (poll), not an error */
static ssize_t stdin_cookie_read(void *c, char *buf, size_t n) {
  ssize_t r;
  (void)c;
  while ((r = read(STDIN_FILENO, buf, n)) < 0)
    if (errno != EINTR && !slem_io_wait_ready(STDIN_FILENO, POLLIN)) return -1;
  return r;
}

/* descriptor 0 was closed when the process started (slem_in_mark_stdin_closed()) */
static int stdin_closed;

void slem_in_mark_stdin_closed(void) { stdin_closed = 1; }

int slem_in_stdin_closed(SlemError *err) {
  if (!stdin_closed) return SLEM_OK;
  return slem_error(err, SLEM_EIO, "<stdin>: closed when the tool started (<&-): there is "
                    "nothing to read; give a FILE, or '-' with stdin open");
}

FILE *slem_in_stdin_file(void) {
  cookie_io_functions_t io = {stdin_cookie_read, NULL, NULL, NULL};
  if (stdin_closed) {
    errno = EBADF;
    return NULL;
  }
  std_blocking(STDIN_FILENO);
  if (!std_nonblocking(STDIN_FILENO)) return stdin;
  return fopencookie(NULL, "r", io);
}

static int fill(SlemIn *self, SlemError *err);

int slem_in_new_detached(SlemIn **self, const char *name, int64_t size, SlemError *err) {
  SlemIn *in = calloc(1, sizeof *in);
  *self = NULL;
  if (!in || !(in->name = dupstr(name))) {
    free(in);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  in->fd = -1;
  in->size = size;
  in->detached = 1;
  *self = in;
  return SLEM_OK;
}

int slem_in_open(SlemIn **self, const char *path, SlemError *err) {
  int use_stdin = !path || strcmp(path, "-") == 0;
  SlemIn *in = calloc(1, sizeof *in);
  struct stat st;
  *self = NULL;
  if (use_stdin && stdin_closed) {
    free(in);
    return slem_in_stdin_closed(err);
  }
  if (!in) return slem_error(err, SLEM_ENOMEM, "out of memory");
  in->fd = -1;
  in->size = -1;
  in->name = dupstr(use_stdin ? "<stdin>" : path);
  in->buf = malloc(IN_BUFSIZE);
  if (!in->name || !in->buf) {
    slem_in_free(in);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  if (use_stdin) {
    in->fd = 0;
    std_blocking(STDIN_FILENO);
  } else {
    in->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0) {
      int e = errno;
      slem_in_free(in);
      return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(e));
    }
    in->owns_fd = 1;
  }
  if (fstat(in->fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      slem_error(err, SLEM_EIO, "%s: is a directory", in->name);
      slem_in_free(in);
      return SLEM_EIO;
    }
    if (S_ISREG(st.st_mode)) {
      in->is_regular = 1;
      in->opened = st;
      in->size = (int64_t)st.st_size;
      /* stdin redirected from a file may start anywhere: count from there */
      if (use_stdin) {
        off_t cur = lseek(in->fd, 0, SEEK_CUR);
        if (cur > 0) in->size -= (int64_t)cur;
        if (cur < 0) in->is_regular = 0, in->size = -1;
      }
      /* A regular file whose size says 0 may hold bytes all the same: a pseudo-file of
       * /proc, a FUSE file system that does not know sizes ahead. One read tells: bytes
       * come, and the file is read as a stream, as a pipe is (no size to count records
       * by, no seek, no reading by pieces); none, and it is empty. */
      if (in->is_regular && in->size == 0) {
        if (fill(in, err) != SLEM_OK) {
          slem_in_free(in);
          return SLEM_EIO;
        }
        if (in->len > 0) in->is_regular = 0, in->size = -1;
      }
    }
  }
  *self = in;
  return SLEM_OK;
}

void slem_in_free(SlemIn *self) {
  if (!self) return;
  if (self->owns_fd && self->fd >= 0) close(self->fd);
  free(self->name);
  free(self->buf);
  free(self->line);
  free(self);
}

const char *slem_in_name(const SlemIn *self) { return self->name; }

int slem_in_unchanged(const SlemIn *self, SlemError *err) {
  struct stat st;
  if (!self->is_regular || fstat(self->fd, &st) != 0) return SLEM_OK;
  if (st.st_size != self->opened.st_size || st.st_mtim.tv_sec != self->opened.st_mtim.tv_sec ||
      st.st_mtim.tv_nsec != self->opened.st_mtim.tv_nsec)
    return slem_error(err, SLEM_EFORMAT, "%s: changed while being read (%s): its contents "
                      "cannot be trusted; run again once it is written", self->name,
                      st.st_size != self->opened.st_size ? "its size changed" : "it was rewritten");
  return SLEM_OK;
}

int slem_in_rereadable(const char *path, SlemError *err) {
  struct stat st;
  if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || S_ISREG(st.st_mode)) return SLEM_OK;
  return slem_error(err, SLEM_EINVAL, "%s: not a regular file (a pipe, a FIFO or a device), "
                    "and it is read more than once: give a file", path);
}

int slem_in_unterminated(const SlemIn *self) { return self->unterminated; }
int64_t slem_in_size(const SlemIn *self) { return self->size; }
uint64_t slem_in_offset(const SlemIn *self) { return self->offset; }
int slem_in_seekable(const SlemIn *self) {
  return (self->is_regular && self->owns_fd) || self->detached;
}

/* Reads more bytes behind the unread ones, keeping them at the start of buf. */
static int fill(SlemIn *self, SlemError *err) {
  ssize_t r;
  if (self->detached)
    return slem_error(err, SLEM_EIO, "%s: held in memory, not read as a file", self->name);
  if (self->pos > 0) {
    memmove(self->buf, self->buf + self->pos, self->len - self->pos);
    self->len -= self->pos;
    self->pos = 0;
  }
  if (self->eof || self->len == IN_BUFSIZE) return SLEM_OK;
  do {
    r = read(self->fd, self->buf + self->len, IN_BUFSIZE - self->len);
  } while (r < 0 && (errno == EINTR || slem_io_wait_ready(self->fd, POLLIN)));
  if (r < 0) return slem_error(err, SLEM_EIO, "%s: read: %s", self->name, strerror(errno));
  if (r == 0) self->eof = 1;
  self->len += (size_t)r;
  return SLEM_OK;
}

int slem_in_peek(SlemIn *self, size_t n, const unsigned char **p, size_t *avail,
                 SlemError *err) {
  if (n > PEEK_MAX) n = PEEK_MAX;
  while (self->len - self->pos < n && !self->eof) {
    int st = fill(self, err);
    if (st) return st;
  }
  *p = self->buf + self->pos;
  *avail = self->len - self->pos < n ? self->len - self->pos : n;
  return SLEM_OK;
}

int slem_in_read(SlemIn *self, void *dst, size_t n, size_t *got, SlemError *err) {
  unsigned char *out = dst;
  size_t done = 0;
  while (done < n) {
    size_t have = self->len - self->pos;
    if (have == 0) {
      ssize_t r;
      if (self->eof) break;
      /* large reads bypass the buffer */
      if (n - done >= IN_BUFSIZE) {
        do {
          r = read(self->fd, out + done, n - done);
        } while (r < 0 && (errno == EINTR || slem_io_wait_ready(self->fd, POLLIN)));
        if (r < 0)
          return slem_error(err, SLEM_EIO, "%s: read: %s", self->name, strerror(errno));
        if (r == 0) self->eof = 1;
        done += (size_t)r;
        self->offset += (uint64_t)r;
        continue;
      }
      int st = fill(self, err);
      if (st) return st;
      continue;
    }
    if (have > n - done) have = n - done;
    memcpy(out + done, self->buf + self->pos, have);
    self->pos += have;
    self->offset += have;
    done += have;
  }
  *got = done;
  return SLEM_OK;
}

/* Where byte `at` of a records read falls (slem_in_read_records()): its address and the
 * bytes left in its part (head or body). */
static unsigned char *record_part(unsigned char *heads, size_t head, unsigned char *bodies,
                                  size_t body, size_t at, size_t *left) {
  size_t i = at / (head + body), o = at % (head + body);
  if (o < head) {
    *left = head - o;
    return heads + i * head + o;
  }
  *left = body - (o - head);
  return bodies + i * body + (o - head);
}

/* iovecs per readv(2) call */
#define READV_PARTS 1024

int slem_in_read_records(SlemIn *self, void *heads, size_t head, void *bodies, size_t body,
                         size_t n, size_t *got, SlemError *err) {
  size_t total = n * (head + body), done = 0, left;
  unsigned char *p;
  /* first what the buffer holds (a peek at the start of the file) */
  while (done < total && self->pos < self->len) {
    size_t take;
    p = record_part(heads, head, bodies, body, done, &left);
    take = self->len - self->pos < left ? self->len - self->pos : left;
    memcpy(p, self->buf + self->pos, take);
    self->pos += take;
    self->offset += take;
    done += take;
  }
  while (done < total && !self->eof) {
    struct iovec iov[READV_PARTS];
    int k = 0;
    ssize_t r;
    for (size_t at = done; at < total && k < READV_PARTS; k++) {
      iov[k].iov_base = record_part(heads, head, bodies, body, at, &left);
      iov[k].iov_len = left;
      at += left;
    }
    do {
      r = readv(self->fd, iov, k);
    } while (r < 0 && (errno == EINTR || slem_io_wait_ready(self->fd, POLLIN)));
    if (r < 0) return slem_error(err, SLEM_EIO, "%s: read: %s", self->name, strerror(errno));
    if (r == 0) self->eof = 1;
    done += (size_t)r;
    self->offset += (uint64_t)r;
  }
  *got = done;
  return SLEM_OK;
}

int64_t slem_in_direct_pos(const SlemIn *self) {
  off_t cur;
  if (!self->is_regular || self->pos < self->len || self->eof) return -1;
  cur = lseek(self->fd, 0, SEEK_CUR);
  return cur < 0 ? -1 : (int64_t)cur;
}

int slem_in_pread(const SlemIn *self, uint64_t pos, void *heads, size_t head, void *bodies,
                  size_t body, size_t n, size_t *got, SlemError *err) {
  size_t done = 0;
  while (done < n) {
    struct iovec iov[READV_PARTS];
    int k = 0;
    ssize_t r;
    if (head == 0) {
      iov[0] = (struct iovec){(unsigned char *)bodies + done, n - done};
      k = 1;
    } else {
      for (size_t at = done, left; at < n && k < READV_PARTS; k++) {
        iov[k].iov_base = record_part(heads, head, bodies, body, at, &left);
        iov[k].iov_len = left < n - at ? left : n - at;
        at += iov[k].iov_len;
      }
    }
    do {
      r = preadv(self->fd, iov, k, (off_t)(pos + done));
    } while (r < 0 && errno == EINTR);
    if (r < 0) return slem_error(err, SLEM_EIO, "%s: read: %s", self->name, strerror(errno));
    if (r == 0) break;
    done += (size_t)r;
  }
  *got = done;
  return SLEM_OK;
}

int slem_in_consume(SlemIn *self, size_t n, int at_end, SlemError *err) {
  int64_t pos = slem_in_direct_pos(self);
  if (pos < 0 || lseek(self->fd, (off_t)(pos + (int64_t)n), SEEK_SET) < 0)
    return slem_error(err, SLEM_EIO, "%s: seek: %s", self->name,
                      pos < 0 ? "not a regular file" : strerror(errno));
  self->offset += n;
  if (at_end) self->eof = 1;
  return SLEM_OK;
}

/* The UTF-8 byte-order mark that Windows editors and spreadsheets put before a text. */
#define UTF8_BOM "\xEF\xBB\xBF"

int slem_in_getline(SlemIn *self, char **line, size_t *len, SlemError *err) {
  size_t n = 0;
  uint64_t from = self->offset; /* where the line starts */
  *line = NULL;
  *len = 0;
  for (;;) {
    unsigned char *start = self->buf + self->pos;
    size_t have = self->len - self->pos;
    unsigned char *nl = have ? memchr(start, '\n', have) : NULL;
    size_t take = nl ? (size_t)(nl - start) : have;
    if (n + take + 1 > LINE_MAX_BYTES)
      return slem_error(err, SLEM_EFORMAT, "%s: a line is longer than 64 MiB", self->name);
    if (n + take + 1 > self->line_cap) {
      size_t cap = self->line_cap ? self->line_cap : 256;
      char *p;
      while (cap < n + take + 1) cap *= 2;
      p = realloc(self->line, cap);
      if (!p) return slem_error(err, SLEM_ENOMEM, "%s: out of memory for a line", self->name);
      self->line = p;
      self->line_cap = cap;
    }
    memcpy(self->line + n, start, take);
    n += take;
    self->pos += take + (nl ? 1 : 0);
    self->offset += take + (nl ? 1 : 0);
    if (nl) break;
    if (self->eof) {
      if (n == 0) return SLEM_OK; /* end of file */
      self->unterminated = 1;
      break;
    }
    int st = fill(self, err);
    if (st) return st;
  }
  self->lines++;
  /* a NUL would cut the line short for every reader that takes it as a C string */
  {
    const char *z = memchr(self->line, '\0', n);
    if (z)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": a NUL byte (column %zu): "
                        "not a text line", self->name, self->lines, (size_t)(z - self->line) + 1);
  }
  if (n > 0 && self->line[n - 1] == '\r') n--;
  /* a byte-order mark is no part of the first line: it made the first id, label or value
   * another one (a query's label "\uFEFF7" matched no database label, silently) */
  if (from == 0 && n >= 3 && memcmp(self->line, UTF8_BOM, 3) == 0) {
    memmove(self->line, self->line + 3, n - 3);
    n -= 3;
  }
  self->line[n] = '\0';
  *line = self->line;
  *len = n;
  return SLEM_OK;
}

int slem_in_seek(SlemIn *self, uint64_t off, SlemError *err) {
  if (!slem_in_seekable(self))
    return slem_error(err, SLEM_EIO, "%s: cannot seek (not a regular file)", self->name);
  if (!self->detached && lseek(self->fd, (off_t)off, SEEK_SET) < 0)
    return slem_error(err, SLEM_EIO, "%s: seek: %s", self->name, strerror(errno));
  self->pos = self->len = 0;
  self->eof = 0;
  self->offset = off;
  self->lines = 0; /* line numbers are meant from the start: text readers seek to 0 only */
  return SLEM_OK;
}

int slem_in_tail(SlemIn *self, void *dst, size_t n, size_t *got, uint64_t *at, SlemError *err) {
  unsigned char *out = dst, *chunk;
  size_t have = 0, r = n;
  int st = SLEM_OK;
  *got = 0;
  *at = self->offset;
  if (n == 0) return SLEM_OK;
  if (slem_in_seekable(self) && self->size >= 0 && (uint64_t)self->size > self->offset + n &&
      (st = slem_in_seek(self, (uint64_t)self->size - n, err)) != SLEM_OK)
    return st;
  if (!(chunk = malloc(n))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  /* fewer than n only at the end; the last n kept */
  while (r == n && (st = slem_in_read(self, chunk, n, &r, err)) == SLEM_OK && r > 0) {
    if (have + r > n) {
      memmove(out, out + (have + r - n), n - r);
      have = n - r;
    }
    memcpy(out + have, chunk, r);
    have += r;
  }
  free(chunk);
  *got = have;
  *at = self->offset - have;
  return st;
}

/* ---- atomic output ---- */

#define PENDING_MAX 16
static char *volatile pending[PENDING_MAX];

struct SlemOut {
  FILE *fp;
  int fd;         /* the file under fp, -1 for stdio's stdout */
  char *target;   /* the name given, for messages */
  char *dest;     /* the file the symbolic links of target lead to, renamed over instead
                   * of the link; NULL when target is no link */
  char *tmp;      /* NULL when writing in place (stdout or a device) */
  int is_stdout;
  int slot;
  char *buf;      /* fp's buffer */
  uint64_t unkicked; /* bytes written since the last sync_file_range() */
  int failed;     /* errno of a failed slem_out_writev(), 0 when none */
};

/* Bytes written between two starts of the write-back of a temporary (kick()). */
#define KICK_BYTES ((uint64_t)8 << 20)

/* Starts writing a temporary's dirty pages to its disk, without waiting: the fsync() of the
 * commit then finds most of the file written instead of writing it all at the end. Best
 * effort (a file system without it, an error): the fsync() decides. */
static void kick(SlemOut *o, size_t n) {
  o->unkicked += n;
  if (!o->tmp || o->unkicked < KICK_BYTES) return;
  o->unkicked = 0;
  (void)sync_file_range(o->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

/* The stream of a file output writes through these, so that every byte goes through
 * write(2) here, with partial writes and EINTR handled, rather than through stdio's
 * internal calls (which a fault-injection shim could not reach). The cookie is the
 * SlemOut. */
static ssize_t cookie_write(void *c, const char *buf, size_t n) {
  SlemOut *o = c;
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(o->fd, buf + done, n - done);
    if (w < 0 && (errno == EINTR || slem_io_wait_ready(o->fd, POLLOUT))) continue;
    if (w <= 0) return done > 0 ? (ssize_t)done : -1;
    done += (size_t)w;
  }
  kick(o, done);
  return (ssize_t)done;
}

static int cookie_seek(void *c, off64_t *pos, int whence) {
  off_t r = lseek(((SlemOut *)c)->fd, (off_t)*pos, whence);
  if (r < 0) return -1;
  *pos = r;
  return 0;
}

/* stdout's descriptor stays open: cli_close_stdout() closes it */
static int cookie_close(void *c) {
  SlemOut *o = c;
  return o->is_stdout ? 0 : close(o->fd);
}

/* Bytes of a file output's buffer: a write(2) per MiB (glibc ignores the size that
 * setvbuf() is given without a buffer, and wrote 8 KiB at a time). */
#define OUT_BUFFER (1 << 20)

/* A buffered stream over o->fd (stdio's own buffer when there is no memory for ours). */
static FILE *open_stream(SlemOut *o) {
  cookie_io_functions_t io = {NULL, cookie_write, cookie_seek, cookie_close};
  FILE *fp = fopencookie(o, "w", io);
  if (fp && (o->buf = malloc(OUT_BUFFER)) != NULL) setvbuf(fp, o->buf, _IOFBF, OUT_BUFFER);
  return fp;
}

static void pending_add(SlemOut *o) {
  o->slot = -1;
  for (int i = 0; i < PENDING_MAX; i++)
    if (!pending[i]) {
      pending[i] = o->tmp;
      o->slot = i;
      return;
    }
}

static void pending_remove(SlemOut *o) {
  if (o->slot >= 0) pending[o->slot] = NULL;
  o->slot = -1;
}

void slem_out_unlink_pending(void) {
  for (int i = 0; i < PENDING_MAX; i++) {
    char *p = pending[i];
    if (p) unlink(p);
  }
}

/* Who owns the pending temporaries when a signal comes: IDLE, RENAMING (a group's renames
 * under way, slem_out_commit_all(): a signal waits for them), or DYING (a handler removing
 * the temporaries: the renames are not started). Moved by compare-and-swap, so that a
 * handler on any thread and the renaming thread agree; lock-free, so async-signal-safe. */
enum { COMMIT_IDLE, COMMIT_RENAMING, COMMIT_DYING };
static atomic_int commit_state = COMMIT_IDLE;
static atomic_int deferred_signal;
static void (*deferred_fn)(int);

int slem_out_signal(int sig) {
  int expected = COMMIT_IDLE;
  /* kept first: a renaming thread that ends its renames after the compare-and-swap below
   * failed finds it when it goes back to IDLE */
  atomic_store(&deferred_signal, sig);
  if (atomic_compare_exchange_strong(&commit_state, &expected, COMMIT_DYING)) {
    slem_out_unlink_pending();
    return 1;
  }
  return expected == COMMIT_RENAMING ? 0 : 1; /* DYING: another handler removes them */
}

void slem_out_on_deferred_signal(void (*fn)(int sig)) { deferred_fn = fn; }

static void out_free(SlemOut *o) {
  if (!o) return;
  pending_remove(o);
  free(o->target);
  free(o->dest);
  free(o->tmp);
  free(o->buf); /* after fclose(): callers close the stream first */
  free(o);
}

/* The longest file name the temporary name may take (NAME_MAX of common file systems). */
#define TMP_NAME_MAX 255
/* The random part of a temporary name: mkstemp's six characters. */
#define TMP_RANDOM 6

/* Removes the temporaries that earlier writers of the same target left in dir when they
 * died (SIGKILL, a power cut): the entries named prefix (".NAME.tmp.") and six more
 * characters, regular files of this user, that no process holds: a writer holds an
 * exclusive flock on its temporary file from its creation until its rename, and the
 * kernel drops it when the writer dies, whatever pid comes next. A file whose lock is
 * held, or that cannot be locked (a file system without flock), is left alone. Best
 * effort: errors are ignored, the write goes on. */
static void remove_stale(const char *dir, const char *prefix) {
  size_t plen = strlen(prefix), dlen = strlen(dir);
  DIR *dp = opendir(dlen ? dir : ".");
  struct dirent *e;
  if (!dp) return;
  while ((e = readdir(dp)) != NULL) {
    char path[4096];
    struct stat a, b;
    int fd;
    if (strncmp(e->d_name, prefix, plen) != 0 || strlen(e->d_name) != plen + TMP_RANDOM ||
        dlen + strlen(e->d_name) + 1 > sizeof path)
      continue;
    memcpy(path, dir, dlen);
    strcpy(path + dlen, e->d_name);
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) continue;
    /* the lock taken, the name must still be that file: a writer that lost the race to
     * lock its new file checks the same and starts again with another name */
    if (fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && a.st_uid == geteuid() &&
        flock(fd, LOCK_EX | LOCK_NB) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
      unlink(path);
    close(fd);
  }
  closedir(dp);
}

/* Creates the temporary file o->tmp (a mkstemp template) and locks it, so that another
 * writer's remove_stale() leaves it alone while this process lives. Returns the
 * descriptor, or -1 with errno set. */
static int create_locked(char *tmp) {
  size_t len = strlen(tmp);
  for (int tries = 0; tries < 100; tries++) {
    struct stat a, b;
    int fd;
    memset(tmp + len - TMP_RANDOM, 'X', TMP_RANDOM);
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return fd; /* no flock here: nothing is removed either */
      close(fd); /* a cleaner took it between mkstemp and flock, and removes it */
      continue;
    }
    if (fstat(fd, &a) == 0 && stat(tmp, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      return fd;
    close(fd); /* locked after a cleaner had removed it: another name */
  }
  errno = EEXIST;
  return -1;
}

int slem_io_dirname(char *dir, size_t cap, const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 1;
  if (n >= cap) return -1;
  memcpy(dir, !slash ? "." : n == 0 ? "/" : path, n ? n : 1);
  dir[n ? n : 1] = '\0';
  return 0;
}

/* Symbolic links followed in a row before giving up (ELOOP), as the kernel does. */
#define LINKS_MAX 40

/* 1 when the link cur (lst: its lstat) may be followed, by the rule the kernel applies
 * to open(2) under fs.protected_symlinks, which following a link by its text would
 * bypass: in a sticky world-writable directory (/tmp) only a link of this user's or of
 * the directory's owner, so that a link planted there by another user never leads the
 * output onto a file of this user's. */
static int may_follow(const char *cur, const struct stat *lst) {
  char dir[PATH_MAX];
  struct stat ds;
  if (slem_io_dirname(dir, sizeof dir, cur) != 0 || stat(dir, &ds) != 0) return 0;
  if (!(ds.st_mode & S_ISVTX) || !(ds.st_mode & S_IWOTH)) return 1;
  return lst->st_uid == geteuid() || lst->st_uid == ds.st_uid;
}

/* The file that an output named path is: path's symbolic links followed one by one (a
 * relative link read from the directory it is in) to a name that is no link. *dest is
 * that name (allocated), or NULL when path itself is no link. A link that leads to no
 * file gives the name it leads to, which the output then creates, as open(2) would.
 * Returns 0 or an errno value: EACCES for a link that may_follow() refuses. */
static int follow_links(const char *path, char **dest) {
  char *cur = dupstr(path);
  int e = 0;
  *dest = NULL;
  if (!cur) return ENOMEM;
  for (int i = 0;; i++) {
    struct stat st;
    char link[PATH_MAX];
    const char *slash = strrchr(cur, '/');
    size_t dirlen;
    ssize_t n;
    char *next;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (i == LINKS_MAX || !may_follow(cur, &st)) {
      e = i == LINKS_MAX ? ELOOP : EACCES;
      break;
    }
    if ((n = readlink(cur, link, sizeof link)) < 0 || (size_t)n == sizeof link) {
      e = n < 0 ? errno : ENAMETOOLONG;
      break;
    }
    dirlen = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur + 1);
    if (!(next = malloc(dirlen + (size_t)n + 1))) {
      e = ENOMEM;
      break;
    }
    memcpy(next, cur, dirlen);
    memcpy(next + dirlen, link, (size_t)n);
    next[dirlen + (size_t)n] = '\0';
    free(cur);
    cur = next;
  }
  if (e || strcmp(cur, path) == 0) free(cur);
  else *dest = cur;
  return e;
}

/* 1 when path is a symbolic link to the regular file open as standard output
 * (/dev/stdout, /dev/fd/1, /proc/self/fd/1 under "> FILE"): that output is stdout. */
static int links_to_stdout(const char *path) {
  struct stat sp, so;
  return stat(path, &sp) == 0 && S_ISREG(sp.st_mode) && fstat(STDOUT_FILENO, &so) == 0 &&
         sp.st_dev == so.st_dev && sp.st_ino == so.st_ino;
}

/* 1 when name is the file st describes. */
static int same_file(const char *name, const struct stat *st) {
  struct stat sn;
  return stat(name, &sn) == 0 && sn.st_dev == st->st_dev && sn.st_ino == st->st_ino;
}

int slem_out_resolve(const char *path, char *name, size_t cap) {
  char *dest = NULL, dir[PATH_MAX];
  const char *p, *slash;
  int ok = -1;
  if (follow_links(path, &dest) != 0) return -1;
  p = dest ? dest : path;
  slash = strrchr(p, '/');
  if (slem_io_dirname(dir, sizeof dir, p) != 0) goto done;
  {
    char *real = realpath(dir, NULL);
    if (real && (size_t)snprintf(name, cap, "%s/%s", real, slash ? slash + 1 : p) < cap) ok = 0;
    free(real);
  }
done:
  free(dest);
  return ok;
}

/* o writes stdout: stdio's stdout, on a blocking description of its own (std_blocking());
 * where the description stays non-blocking (a socket), a stream of o's over fd 1 whose
 * writes wait for room (poll) instead of failing with EAGAIN. -1: out of memory. */
static int stdout_stream(SlemOut *o) {
  o->is_stdout = 1;
  std_blocking(STDOUT_FILENO);
  if (!std_nonblocking(STDOUT_FILENO)) {
    o->fp = stdout;
    return 0;
  }
  fflush(stdout); /* what the tool printed before goes first */
  o->fd = STDOUT_FILENO;
  o->fp = open_stream(o);
  return o->fp ? 0 : -1;
}

int slem_out_open(SlemOut **self, const char *path, SlemError *err) {
  SlemOut *o = calloc(1, sizeof *o);
  struct stat st;
  *self = NULL;
  if (!o) return slem_error(err, SLEM_ENOMEM, "out of memory");
  o->slot = -1;
  o->fd = -1;
  if (!path || strcmp(path, "-") == 0) {
    o->target = dupstr("<stdout>");
    if (!o->target || stdout_stream(o) != 0) goto nomem;
    *self = o;
    return SLEM_OK;
  }
  o->target = dupstr(path);
  if (!o->target) goto nomem;
  {
    int e = follow_links(path, &o->dest);
    if (e) {
      out_free(o);
      return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(e));
    }
  }
  if (o->dest && links_to_stdout(path)) { /* written as "-" is, in place */
    if (stdout_stream(o) != 0) goto nomem;
    *self = o;
    return SLEM_OK;
  }
  /* a device, a FIFO, or a file reached through a link whose text does not name it (a
   * descriptor's link in /proc to a deleted file): written in place */
  if (stat(path, &st) == 0 && (!S_ISREG(st.st_mode) || (o->dest && !same_file(o->dest, &st)))) {
    if (S_ISDIR(st.st_mode)) {
      out_free(o);
      return slem_error(err, SLEM_EIO, "%s: is a directory", path);
    }
    o->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (o->fd < 0 || !(o->fp = open_stream(o))) {
      int e = errno;
      if (o->fd >= 0) close(o->fd);
      out_free(o);
      return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(e));
    }
    *self = o;
    return SLEM_OK;
  }
  {
    /* beside the file the links lead to, which the rename replaces; the links stay */
    const char *name = o->dest ? o->dest : path;
    const char *slash = strrchr(name, '/');
    size_t dirlen = slash ? (size_t)(slash - name + 1) : 0;
    const char *base = slash ? slash + 1 : name;
    size_t n = dirlen + strlen(base) + 32;
    /* ".NAME.tmp.XXXXXX" must itself be a valid name: a long NAME is cut in it */
    int keep = strlen(base) + 12 > TMP_NAME_MAX ? TMP_NAME_MAX - 12 : (int)strlen(base);
    int fd, existed = stat(name, &st) == 0;
    mode_t mask;
    o->tmp = malloc(n);
    if (!o->tmp) goto nomem;
    /* first the temporaries of this target that dead writers left: ".NAME.tmp." */
    snprintf(o->tmp, n, "%.*s", (int)dirlen, name);
    {
      char prefix[TMP_NAME_MAX + 1];
      snprintf(prefix, sizeof prefix, ".%.*s.tmp.", keep, base);
      remove_stale(o->tmp, prefix);
    }
    snprintf(o->tmp, n, "%.*s.%.*s.tmp.XXXXXX", (int)dirlen, name, keep, base);
    fd = create_locked(o->tmp);
    if (fd < 0) {
      int e = errno;
      out_free(o);
      return slem_error(err, SLEM_EIO, "%s: cannot create a temporary file beside it: %s",
                        path, strerror(e));
    }
    pending_add(o);
    /* mkstemp made it 0600; give it the mode of the file it replaces, else the mode a
     * plain creat() would have (failing that, 0600 is the safe side): replacing an output
     * never widens who may read it */
    mask = umask(0);
    umask(mask);
    (void)fchmod(fd, existed ? (st.st_mode & 07777) : (0666 & ~mask));
    o->fd = fd;
    o->fp = open_stream(o);
    if (!o->fp) {
      int e = errno;
      close(fd);
      unlink(o->tmp);
      out_free(o);
      return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(e));
    }
  }
  *self = o;
  return SLEM_OK;
nomem:
  out_free(o);
  return slem_error(err, SLEM_ENOMEM, "out of memory");
}

FILE *slem_out_file(SlemOut *self) { return self->fp; }

int slem_out_writev(SlemOut *self, struct iovec *iov, int n) {
  int fd = self->is_stdout ? STDOUT_FILENO : self->fd;
  if (self->failed) {
    errno = self->failed;
    return -1;
  }
  if (fflush(self->fp) != 0) return -1;
  while (n > 0) {
    ssize_t w = writev(fd, iov, n < IOV_MAX ? n : IOV_MAX);
    if (w < 0 && (errno == EINTR || slem_io_wait_ready(fd, POLLOUT))) continue;
    if (w <= 0) {
      self->failed = w < 0 ? errno : EIO;
      errno = self->failed;
      return -1;
    }
    kick(self, (size_t)w);
    for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--) w -= (ssize_t)iov->iov_len;
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return 0;
}

const char *slem_out_name(const SlemOut *self) { return self->target; }
int slem_out_seekable(const SlemOut *self) { return self->tmp != NULL; }

static void sync_dir(const char *path);

int slem_out_commit_all(SlemOut *const *outs, size_t n, SlemError *err) {
  int st = SLEM_OK;
  /* first everything that can fail for lack of room: every file written and synced */
  for (size_t i = 0; i < n && st == SLEM_OK; i++) {
    SlemOut *o = outs[i];
    if (!o) continue;
    if (fflush(o->fp) != 0 || ferror(o->fp))
      st = slem_error(err, SLEM_EIO, "%s: write: %s", o->target, strerror(errno));
    else if (o->tmp && fsync(o->fd) != 0)
      st = slem_error(err, SLEM_EIO, "%s: fsync: %s", o->target, strerror(errno));
  }
  if (st != SLEM_OK) {
    for (size_t i = 0; i < n; i++) slem_out_abort(outs[i]);
    return st;
  }
  /* then the renames, one after the other, a signal held until the last is done (the
   * group is replaced whole); a signal already removing the temporaries wins: none is
   * renamed, every target stays as it was */
  {
    int expected = COMMIT_IDLE;
    if (!atomic_compare_exchange_strong(&commit_state, &expected, COMMIT_RENAMING)) {
      for (size_t i = 0; i < n; i++) slem_out_abort(outs[i]);
      return slem_error(err, SLEM_EIO, "%s: not replaced: the process is being stopped by a "
                        "signal", outs[0] ? outs[0]->target : "output");
    }
  }
  for (size_t i = 0; i < n; i++) {
    int s;
    if (!outs[i]) continue;
    s = slem_out_commit(outs[i], err);
    if (s != SLEM_OK && st == SLEM_OK) st = s;
  }
  atomic_store(&commit_state, COMMIT_IDLE);
  if (atomic_load(&deferred_signal) && deferred_fn) deferred_fn(atomic_load(&deferred_signal));
  return st;
}

int slem_out_commit(SlemOut *self, SlemError *err) {
  int st = SLEM_OK;
  if (self->failed) errno = self->failed;
  if (self->is_stdout) {
    if (self->failed || fflush(self->fp) != 0 || ferror(self->fp))
      st = slem_error(err, SLEM_EIO, "%s: write: %s", self->target, strerror(errno));
    if (self->fp != stdout) fclose(self->fp);
    out_free(self);
    return st;
  }
  if (self->failed || fflush(self->fp) != 0 || ferror(self->fp)) {
    st = slem_error(err, SLEM_EIO, "%s: write: %s", self->target, strerror(errno));
  } else if (self->tmp && fsync(self->fd) != 0) {
    st = slem_error(err, SLEM_EIO, "%s: fsync: %s", self->target, strerror(errno));
  }
  if (fclose(self->fp) != 0 && st == SLEM_OK)
    st = slem_error(err, SLEM_EIO, "%s: close: %s", self->target, strerror(errno));
  self->fp = NULL;
  if (self->tmp) {
    const char *name = self->dest ? self->dest : self->target;
    if (st == SLEM_OK && rename(self->tmp, name) != 0)
      st = slem_error(err, SLEM_EIO, "%s: rename: %s", self->target, strerror(errno));
    if (st != SLEM_OK) unlink(self->tmp);
    else sync_dir(name);
  }
  out_free(self);
  return st;
}

/* Makes the rename of path durable by syncing its directory, as redis does after renaming
 * its dump. Best effort: the rename is done and cannot be undone, so a failure here (a
 * file system that cannot sync directories) leaves the complete new file and is ignored. */
static void sync_dir(const char *path) {
  char dir[4096];
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;
  int fd;
  if (!slash) strcpy(dir, ".");
  else if (n == 0) strcpy(dir, "/");
  else if (n < sizeof dir) {
    memcpy(dir, path, n);
    dir[n] = 0;
  } else {
    return;
  }
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd);
  close(fd);
}

void slem_out_abort(SlemOut *self) {
  if (!self) return;
  if (!self->is_stdout && self->fp) fclose(self->fp);
  if (self->is_stdout && self->fp) {
    fflush(self->fp);
    if (self->fp != stdout) fclose(self->fp);
  }
  if (self->tmp) unlink(self->tmp);
  out_free(self);
}

int slem_io_file_crc(const char *path, const char *why, uint32_t *crc, uint64_t *size,
                     SlemError *err) {
  int is_stdin = strcmp(path, "<stdin>") == 0 || strcmp(path, "-") == 0;
  int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  unsigned char *buf = NULL;
  struct stat sb;
  int st = SLEM_OK;
  off_t off = 0;
  *crc = 0;
  *size = 0;
  if (fd < 0) return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(errno));
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = slem_error(err, SLEM_EINVAL, "%s: not a regular file (a pipe?): %s", path, why);
    goto done;
  }
  if (!(buf = malloc((size_t)1 << 20))) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto done;
  }
  for (;;) {
    ssize_t got = pread(fd, buf, (size_t)1 << 20, off);
    if (got < 0) {
      if (errno == EINTR) continue;
      st = slem_error(err, SLEM_EIO, "%s: read: %s", path, strerror(errno));
      goto done;
    }
    if (got == 0) break;
    *crc = slem_crc32(*crc, buf, (size_t)got);
    off += got;
  }
  *size = (uint64_t)off;
done:
  free(buf);
  if (!is_stdin) close(fd);
  return st;
}
