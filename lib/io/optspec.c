#include "optspec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

int slem_optspec_has_value(const SlemOptSpec *s) {
  return !s->metavar ? 0 : s->metavar[0] == '[' ? 2 : 1;
}

/* strtol() and strtod() skip leading blanks but not trailing ones: neither is taken, nor a
 * value out of the type's range (ERANGE, an underflow of strtod() included). */
int slem_optspec_whole(const SlemOptSpec *s, const char *value, long *v, SlemError *err) {
  char *end;
  errno = 0;
  *v = strtol(value, &end, 10);
  if (end == value || *end || isspace((unsigned char)*value) || errno == ERANGE ||
      *v < s->min || *v > s->max)
    return slem_error(err, SLEM_EINVAL, "--%s: '%s' is not a whole number from %ld to %ld",
                      s->name, value, s->min, s->max);
  return SLEM_OK;
}

int slem_optspec_real(const SlemOptSpec *s, const char *value, double *v, SlemError *err) {
  static const char *const rule[] = {NULL, "must be positive", "must not be negative",
                                     "from 0 to below 1"};
  char *end;
  int ok;
  errno = 0;
  *v = strtod(value, &end);
  if (end == value || *end || isspace((unsigned char)*value) || errno == ERANGE || !isfinite(*v))
    return slem_error(err, SLEM_EINVAL, "--%s: '%s' is not a finite number", s->name, value);
  switch (s->real) {
  case SLEM_OPT_POSITIVE: ok = *v > 0; break;
  case SLEM_OPT_NONNEG: ok = *v >= 0; break;
  case SLEM_OPT_UNIT: ok = *v >= 0 && *v < 1; break;
  default: ok = 1;
  }
  if (!ok) return slem_error(err, SLEM_EINVAL, "--%s: %s", s->name, rule[s->real]);
  return SLEM_OK;
}

/* A whole number into a field of its size: every whole field's values are those of a long
 * in range (min >= 0 for the unsigned ones). */
static void store_whole(void *field, size_t size, long v) {
  if (size == sizeof(int)) {
    int i = (int)v;
    memcpy(field, &i, sizeof i);
  } else {
    int64_t w = v;
    memcpy(field, &w, sizeof w);
  }
}

int slem_optspec_set(const SlemOptSpec *s, void *opts, unsigned *given, const char *value,
                     SlemError *err) {
  char *field = (char *)opts + s->offset;
  int st = SLEM_OK;
  if (value && !s->metavar)
    return slem_error(err, SLEM_EINVAL, "option '--%s' takes no value", s->name);
  if (!value && slem_optspec_has_value(s) == 1)
    return slem_error(err, SLEM_EINVAL, "option '--%s' needs a value", s->name);
  switch (s->type) {
  case SLEM_OPT_FLAG: {
    int one = 1;
    memcpy(field, &one, sizeof one);
    break;
  }
  case SLEM_OPT_WHOLE: {
    long v;
    if ((st = slem_optspec_whole(s, value, &v, err)) == SLEM_OK) store_whole(field, s->size, v);
    break;
  }
  case SLEM_OPT_REAL: {
    double v;
    if ((st = slem_optspec_real(s, value, &v, err)) == SLEM_OK) memcpy(field, &v, sizeof v);
    break;
  }
  case SLEM_OPT_TEXT: memcpy(field, &value, sizeof value); break;
  case SLEM_OPT_CUSTOM: st = s->parse(s, opts, value, err); break;
  }
  if (st == SLEM_OK && given) *given |= s->given;
  return st;
}

const SlemOptSpec *slem_optspec_find(const SlemOptSpec *table, const char *name) {
  for (const SlemOptSpec *s = table; s && s->name; s++)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

int slem_optspec_shard(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  SlemShard shard;
  SlemError e;
  if (slem_shard_parse(&shard, value, &e) != SLEM_OK)
    return slem_error(err, SLEM_EINVAL, "--%s: %s", s->name, e.msg);
  memcpy((char *)opts + s->offset, &shard, sizeof shard);
  return SLEM_OK;
}

size_t slem_optspec_help(const SlemOptSpec *s, int column, char *buf, size_t size) {
  size_t len = 0;
  int head, n;
  const char *h = s->help ? s->help : "", *nl;
  /* what snprintf() would have written, whatever fits of it in buf */
#define PUT(...)                                                                       \
  do {                                                                                 \
    n = snprintf(buf && len < size ? buf + len : NULL, buf && len < size ? size - len : 0, \
                 __VA_ARGS__);                                                         \
    len += n > 0 ? (size_t)n : 0;                                                      \
  } while (0)
  if (s->key)
    PUT("  -%c, --%s%s%s", s->key, s->name, s->metavar ? " " : "", s->metavar ? s->metavar : "");
  else
    PUT("      --%s%s%s", s->name, s->metavar ? " " : "", s->metavar ? s->metavar : "");
  head = (int)len;
  if (head >= column) PUT("\n%*s", column, "");
  else PUT("%*s", column - head, "");
  for (;;) {
    nl = strchr(h, '\n');
    PUT("%.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
    if (!nl) break;
    h = nl + 1;
    PUT("%*s", column, "");
  }
#undef PUT
  return len;
}
