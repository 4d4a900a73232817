#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int slem_error(SlemError *err, int status, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->status = status;
  }
  return status;
}

void slem_error_clear(SlemError *err) {
  if (err) {
    err->status = SLEM_OK;
    err->msg[0] = '\0';
  }
}

const char *slem_error_str(int status) {
  switch (status) {
  case SLEM_OK: return "success";
  case SLEM_EIO: return "I/O error";
  case SLEM_EFORMAT: return "format error";
  case SLEM_ENUMERIC: return "numerical error";
  case SLEM_ENOMEM: return "out of memory";
  case SLEM_EINVAL: return "invalid argument";
  default: return "unknown error";
  }
}
