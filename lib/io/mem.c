#define _DEFAULT_SOURCE /* madvise */
#include "mem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *slem_mem_alloc_large(size_t bytes) {
  void *p = NULL;
  size_t size;
  if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
  if (bytes > (size_t)-1 - HUGE_PAGE) return NULL;
  size = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  if (posix_memalign(&p, HUGE_PAGE, size) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, size, MADV_HUGEPAGE); /* advice: without it, plain pages */
#endif
  return p;
}

int slem_mem_parse_bytes(const char *s, size_t *out) {
  static const char units[] = "kmgt";
  size_t v = 0, shift = 0;
  const char *p = s, *u;
  if (*p < '0' || *p > '9') return -1; /* no sign, no blank */
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > ((size_t)-1 - (size_t)(*p - '0')) / 10) return -1;
    v = v * 10 + (size_t)(*p - '0');
  }
  if (*p && (u = strchr(units, tolower((unsigned char)*p))) != NULL) {
    shift = 10 * (size_t)(u - units + 1);
    p++;
    if (*p == 'i' && (p[1] == 'B' || p[1] == 'b')) p++;
    if (*p == 'B' || *p == 'b') p++;
  } else if (*p == 'B' || *p == 'b') {
    p++;
  }
  if (*p) return -1;
  if (shift && v > ((size_t)-1 >> shift)) return -1;
  *out = v << shift;
  return 0;
}

/* The budget: asked bytes (0: keep nothing), else a quarter of the physical memory; under
 * an address-space limit (ulimit -v), at most a quarter of what it leaves, so that the
 * BLAS's buffers still fit. */
size_t slem_mem_match_budget(size_t asked) {
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE), used = 0;
  size_t budget = pages > 0 && psize > 0 ? (size_t)pages / 4 * (size_t)psize : 0;
  struct rlimit rl;
  FILE *f;
  if (asked != SLEM_MEMORY_AUTO) budget = asked;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && psize > 0 &&
      (f = fopen("/proc/self/statm", "r")) != NULL) {
    unsigned long long room;
    if (fscanf(f, "%ld", &used) != 1) used = 0;
    fclose(f);
    room = (unsigned long long)rl.rlim_cur > (unsigned long long)used * (unsigned long long)psize
               ? (unsigned long long)rl.rlim_cur - (unsigned long long)used * (unsigned long long)psize
               : 0;
    if (room / 4 < budget) budget = (size_t)(room / 4);
  }
  return budget;
}
