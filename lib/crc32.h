/* CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), for the cache checksums. */
#ifndef SLEM_CRC32_H
#define SLEM_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc over n bytes at p; start with crc = 0. crc32("123456789") = 0xCBF43926. */
uint32_t slem_crc32(uint32_t crc, const void *p, size_t n);

#endif
