#include "crc32.h"

#include <pthread.h>
#include <string.h>

/* Slicing-by-8: eight tables let the loop take eight bytes a step. */
static uint32_t table[8][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
}

uint32_t slem_crc32(uint32_t crc, const void *p, size_t n) {
  const unsigned char *b = p;
  pthread_once(&once, init);
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    memcpy(&lo, b, 4);
    memcpy(&hi, b + 4, 4);
    lo ^= crc;
    crc = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^
          table[4][lo >> 24] ^ table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^
          table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
    b += 8;
    n -= 8;
  }
  while (n--) crc = table[0][(crc ^ *b++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}
