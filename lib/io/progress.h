/* Progress of a long library call, for a caller that shows it (the tools, on a terminal):
 * the call reports how many items it has done so far, after each block. The library
 * itself never prints. */
#ifndef SLEM_PROGRESS_H
#define SLEM_PROGRESS_H

#include <stdint.h>

/* Called with the items done so far; ctx is the caller's. May be NULL where accepted. */
typedef void (*SlemProgressFn)(void *ctx, uint64_t done);

#endif
