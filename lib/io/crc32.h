/* CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), for the cache checksums. */
#ifndef SLEM_CRC32_H
#define SLEM_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc over n bytes at p; start with crc = 0. crc32("123456789") = 0xCBF43926.
 * Carry-less multiplication (PCLMULQDQ) where the CPU has it, eight tables otherwise. */
uint32_t slem_crc32(uint32_t crc, const void *p, size_t n);

/* The same by the tables alone, for the tests to compare against. */
uint32_t slem_crc32_tables(uint32_t crc, const void *p, size_t n);

#endif
