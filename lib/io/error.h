/* Status codes and the last-error message of libslem.
 *
 * Every fallible library function returns an int status (SLEM_OK on success) and,
 * on failure, fills a caller-owned SlemError with a message that names the file and,
 * where there is one, the record: "neg.fvecs: record 12: dimension 127, expected 128".
 * The library never prints, exits or aborts.
 */
#ifndef SLEM_ERROR_H
#define SLEM_ERROR_H

/* The same definitions as the public slem.h (lib/api/slem.h), under the same guard, so
 * that a file may include both. */
#ifndef SLEM_STATUS_DEFINED
#define SLEM_STATUS_DEFINED
enum {
  SLEM_OK = 0,
  SLEM_EIO = 1,       /* open, read, write, fsync, rename failed */
  SLEM_EFORMAT = 2,   /* malformed or inconsistent input data */
  SLEM_ENUMERIC = 3,  /* singular matrix, non-finite result */
  SLEM_ENOMEM = 4,    /* allocation failed */
  SLEM_EINVAL = 5     /* bad argument from the caller */
};

#define SLEM_ERRMSG_MAX 1024

typedef struct SlemError {
  int status;
  char msg[SLEM_ERRMSG_MAX];
} SlemError;
#endif

/* Sets err (if not NULL) to status and the printf-formatted message; returns status,
 * so that `return slem_error(err, SLEM_EIO, "...")` reads naturally. */
int slem_error(SlemError *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err to SLEM_OK and an empty message. Accepts NULL. */
void slem_error_clear(SlemError *err);

/* A short constant name for a status ("I/O error", "format error", ...). Part of the
 * public API (slem.h): exported by libslem.so, whose other objects are hidden. */
#pragma GCC visibility push(default)
const char *slem_error_str(int status);
#pragma GCC visibility pop

#endif
