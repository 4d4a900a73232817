#include "shard.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

static int parse_u64(const char *s, char **end, uint64_t *v) {
  unsigned long long x;
  if (*s < '0' || *s > '9') return -1; /* no sign, no space */
  errno = 0;
  x = strtoull(s, end, 10);
  if (errno) return -1;
  *v = x;
  return 0;
}

int slem_shard_parse(SlemShard *self, const char *text, SlemError *err) {
  char *end;
  uint64_t i, n;
  if (parse_u64(text, &end, &i) || *end != '/' || parse_u64(end + 1, &end, &n) || *end)
    return slem_error(err, SLEM_EINVAL, "shard '%s': expected I/N, two whole numbers", text);
  if (n == 0 || n > (1ull << 32))
    return slem_error(err, SLEM_EINVAL, "shard '%s': N must be between 1 and 2^32", text);
  if (i >= n)
    return slem_error(err, SLEM_EINVAL, "shard '%s': I must be below N (shards are numbered "
                      "from 0)", text);
  self->index = i;
  self->count = n;
  return SLEM_OK;
}

static uint64_t cut(uint64_t i, uint64_t rows, uint64_t n) {
  return (uint64_t)((unsigned __int128)i * rows / n);
}

void slem_shard_range(const SlemShard *self, uint64_t rows, uint64_t *lo, uint64_t *hi) {
  if (self->count == 0) {
    *lo = 0;
    *hi = rows;
    return;
  }
  *lo = cut(self->index, rows, self->count);
  *hi = cut(self->index + 1, rows, self->count);
}
