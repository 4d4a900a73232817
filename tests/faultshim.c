/* LD_PRELOAD shim for the fault tests: makes system calls and allocations fail on demand.
 *
 *   FAULT_WRITE=N    write() or writev() to a file (fd > 2) fails with ENOSPC from the Nth
 *                    call of either on
 *   FAULT_FSYNC=N    fsync() fails with EIO from its Nth call on
 *   FAULT_RENAME=N   rename() fails with EIO from its Nth call on
 *   FAULT_RENAME_SIGNAL=S  the first rename() that succeeds raises signal S on its return:
 *                    a signal between the renames of two outputs that belong together
 *   FAULT_READ=N     read(), readv() or preadv() fails with EIO from the Nth call of any
 *                    of them on (preadv: the pieces of a block read on several threads)
 *   FAULT_SIZE0=SUFFIX  stat() and fstat() of a regular file whose name ends with SUFFIX
 *                    report a size of 0, as /proc's pseudo-files and some FUSE file
 *                    systems do, whatever it holds; lseek() and fseek() from its end
 *                    count from 0 too (an offset before it fails with EINVAL)
 *   FAULT_DLOPEN=N   dlopen() fails (returns NULL) from its Nth call on: a library the
 *                    program loads when it needs it (libhdf5) is missing
 *   FAULT_MALLOC=N   malloc/calloc/realloc of FAULT_MALLOC_MIN bytes or more (default
 *                    1 MiB), called from the program itself (libslem is linked into it;
 *                    not from OpenBLAS's or libc's own code), return NULL with ENOMEM
 *                    from the Nth such call on
 * Every injected failure appends a line to the file FAULT_LOG, when set.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long env_long(const char *name) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : 0;
}

static void logged(const char *what) {
  const char *log = getenv("FAULT_LOG");
  int fd;
  if (!log) return;
  fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!syscall(1 /* SYS_write */, fd, what, strlen(what));
  (void)!syscall(1, fd, "\n", 1);
  close(fd);
}

/* 1 when this call of the kind named by env is to fail */
static int due(const char *env, long *count) {
  long n = env_long(env);
  return n > 0 && ++*count >= n;
}

static long write_count; /* write() and writev() together */

ssize_t write(int fd, const void *buf, size_t n) {
  static ssize_t (*real)(int, const void *, size_t);
  if (!real) real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  if (fd > 2 && due("FAULT_WRITE", &write_count)) {
    logged("write");
    errno = ENOSPC;
    return -1;
  }
  return real(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n) {
  static ssize_t (*real)(int, const struct iovec *, int);
  if (!real) real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
  if (fd > 2 && due("FAULT_WRITE", &write_count)) {
    logged("writev");
    errno = ENOSPC;
    return -1;
  }
  return real(fd, iov, n);
}

static long read_count; /* read(), readv() and preadv() together */

/* due() for calls made on several threads at once */
static int due_atomic(const char *env, long *count) {
  long n = env_long(env);
  return n > 0 && __atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST) >= n;
}

ssize_t read(int fd, void *buf, size_t n) {
  static ssize_t (*real)(int, void *, size_t);
  if (!real) real = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
  if (due_atomic("FAULT_READ", &read_count)) {
    logged("read");
    errno = EIO;
    return -1;
  }
  return real(fd, buf, n);
}

ssize_t readv(int fd, const struct iovec *iov, int n) {
  static ssize_t (*real)(int, const struct iovec *, int);
  if (!real) real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "readv");
  if (due_atomic("FAULT_READ", &read_count)) {
    logged("readv");
    errno = EIO;
    return -1;
  }
  return real(fd, iov, n);
}

static ssize_t preadv_shim(const char *name, int fd, const struct iovec *iov, int n, off_t off) {
  ssize_t (*real)(int, const struct iovec *, int, off_t) =
      (ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, name);
  if (due_atomic("FAULT_READ", &read_count)) {
    logged(name);
    errno = EIO;
    return -1;
  }
  return real(fd, iov, n, off);
}

ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off) {
  return preadv_shim("preadv", fd, iov, n, off);
}

ssize_t preadv64(int fd, const struct iovec *iov, int n, off_t off) {
  return preadv_shim("preadv64", fd, iov, n, off);
}

void *dlopen(const char *file, int mode) {
  static long count;
  static void *(*real)(const char *, int);
  if (!real) real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  if (due("FAULT_DLOPEN", &count)) {
    logged("dlopen");
    return NULL;
  }
  return real(file, mode);
}

int fsync(int fd) {
  static long count;
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  if (due("FAULT_FSYNC", &count)) {
    logged("fsync");
    errno = EIO;
    return -1;
  }
  return real(fd);
}

int rename(const char *a, const char *b) {
  static long count;
  static int signalled;
  static int (*real)(const char *, const char *);
  if (!real) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
  if (due("FAULT_RENAME", &count)) {
    logged("rename");
    errno = EIO;
    return -1;
  }
  if (real(a, b) != 0) return -1;
  if (env_long("FAULT_RENAME_SIGNAL") > 0 && !signalled) {
    signalled = 1;
    logged("rename signal");
    raise((int)env_long("FAULT_RENAME_SIGNAL"));
  }
  return 0;
}

/* The address range of the main program's loaded segments. */
static uintptr_t prog_lo, prog_hi;

static int find_prog(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size, (void)data;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD) {
      uintptr_t lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      uintptr_t hi = lo + info->dlpi_phdr[i].p_memsz;
      if (!prog_lo || lo < prog_lo) prog_lo = lo;
      if (hi > prog_hi) prog_hi = hi;
    }
  return 1; /* the first object is the program */
}

static int big_due(size_t n, void *caller) {
  static long count;
  long min;
  if (!getenv("FAULT_MALLOC")) return 0;
  if (!prog_hi) dl_iterate_phdr(find_prog, NULL);
  if ((uintptr_t)caller < prog_lo || (uintptr_t)caller >= prog_hi) return 0;
  min = env_long("FAULT_MALLOC_MIN");
  if (min <= 0) min = 1 << 20;
  if (n < (size_t)min || !due("FAULT_MALLOC", &count)) return 0;
  logged("malloc");
  errno = ENOMEM;
  return 1;
}

void *malloc(size_t n) {
  return big_due(n, __builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t a, size_t b) {
  if (b && a > (size_t)-1 / b) return __libc_calloc(a, b);
  return big_due(a * b, __builtin_return_address(0)) ? NULL : __libc_calloc(a, b);
}

void *realloc(void *p, size_t n) {
  return big_due(n, __builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

/* 1 when name ends with FAULT_SIZE0 */
static int size0_name(const char *name) {
  const char *suf = getenv("FAULT_SIZE0");
  size_t n, k;
  if (!suf || !*suf || !name) return 0;
  n = strlen(name), k = strlen(suf);
  return n >= k && strcmp(name + n - k, suf) == 0;
}

int fstat(int fd, struct stat *st) {
  static int (*real)(int, struct stat *);
  char link[64], name[4096];
  ssize_t n;
  int r;
  if (!real) real = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
  r = real(fd, st);
  if (r != 0 || !S_ISREG(st->st_mode) || !getenv("FAULT_SIZE0")) return r;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if ((n = readlink(link, name, sizeof name - 1)) <= 0) return r;
  name[n] = 0;
  if (size0_name(name)) {
    logged("fstat size 0");
    st->st_size = 0;
  }
  return r;
}

int stat(const char *path, struct stat *st) {
  static int (*real)(const char *, struct stat *);
  int r;
  if (!real) real = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "stat");
  r = real(path, st);
  if (r == 0 && S_ISREG(st->st_mode) && size0_name(path)) {
    logged("stat size 0");
    st->st_size = 0;
  }
  return r;
}

/* 1 when fd is a regular file that FAULT_SIZE0 names */
static int size0_fd(int fd) {
  char link[64], name[4096];
  ssize_t n;
  if (fd < 0 || !getenv("FAULT_SIZE0")) return 0;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if ((n = readlink(link, name, sizeof name - 1)) <= 0) return 0;
  name[n] = 0;
  return size0_name(name);
}

/* From the end of a file whose size says 0: from 0 (a FUSE file system's answer; /proc
 * refuses SEEK_END, and either way the last byte cannot be sought) */
off_t lseek(int fd, off_t off, int whence) {
  static off_t (*real)(int, off_t, int);
  if (!real) real = (off_t(*)(int, off_t, int))dlsym(RTLD_NEXT, "lseek");
  if (whence == SEEK_END && size0_fd(fd)) {
    logged("lseek size 0");
    if (off < 0) {
      errno = EINVAL;
      return -1;
    }
    return real(fd, off, SEEK_SET);
  }
  return real(fd, off, whence);
}

static int fseek_size0(FILE *fp, long long off, int *whence) {
  if (*whence != SEEK_END || !size0_fd(fileno(fp))) return 0;
  logged("fseek size 0");
  if (off < 0) {
    errno = EINVAL;
    return -1;
  }
  *whence = SEEK_SET;
  return 0;
}

int fseek(FILE *fp, long off, int whence) {
  static int (*real)(FILE *, long, int);
  if (!real) real = (int (*)(FILE *, long, int))dlsym(RTLD_NEXT, "fseek");
  if (fseek_size0(fp, off, &whence) != 0) return -1;
  return real(fp, off, whence);
}

int fseeko(FILE *fp, off_t off, int whence) {
  static int (*real)(FILE *, off_t, int);
  if (!real) real = (int (*)(FILE *, off_t, int))dlsym(RTLD_NEXT, "fseeko");
  if (fseek_size0(fp, off, &whence) != 0) return -1;
  return real(fp, off, whence);
}
