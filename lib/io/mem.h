/* Large buffers that are touched once and reused: page faults are the cost of a first touch
 * (each 4 KiB page zeroed by the kernel, and dear in a virtual machine), so buffers of
 * megabytes are allocated aligned to 2 MiB and offered to the kernel's transparent huge
 * pages, which fault once per 2 MiB. */
#ifndef SLEM_MEM_H
#define SLEM_MEM_H

#include <stddef.h>

/* bytes of memory, freed with free(); NULL when there is none. Below 2 MiB a plain
 * malloc(). */
void *slem_mem_alloc_large(size_t bytes);

/* A number of bytes as a user writes it: digits, optionally followed by K, M, G or T
 * (powers of 1024, either case, an optional B or iB after them: 512M, 4GiB). 0 and *out set,
 * or -1 for anything else, a sign or a value beyond size_t included. */
int slem_mem_parse_bytes(const char *s, size_t *out);

/* "No budget asked": slem_mem_match_budget() takes the default. */
#define SLEM_MEMORY_AUTO ((size_t)-1)

/* The bytes slem-match may keep of the database between blocks of queries: asked (the
 * tool's SLEM_MATCH_MEMORY, parsed by slem_mem_parse_bytes; 0: nothing), or a quarter of the
 * physical memory when asked is SLEM_MEMORY_AUTO; under an address-space limit (ulimit -v),
 * at most a quarter of what it leaves at the time of the call. Cannot fail. */
size_t slem_mem_match_budget(size_t asked);

#endif
