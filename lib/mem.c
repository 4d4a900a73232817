#define _DEFAULT_SOURCE /* madvise */
#include "mem.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *slem_alloc_large(size_t bytes) {
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
