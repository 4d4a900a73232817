#include "crc32.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CLMUL_PATH 1
#endif

/* Slicing-by-8: eight tables let the loop take eight bytes a step. */
static uint32_t table[8][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int use_clmul;

static void init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
#ifdef HAVE_CLMUL_PATH
  __builtin_cpu_init();
  use_clmul = __builtin_cpu_supports("pclmul");
#endif
}

/* The register form of the CRC (not inverted) over n bytes. */
static uint32_t crc_tables(uint32_t crc, const unsigned char *b, size_t n) {
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
  return crc;
}

#ifdef HAVE_CLMUL_PATH
/* Folding by carry-less multiplication (the method of Gopal et al., "Fast CRC computation
 * for generic polynomials using PCLMULQDQ", Intel, 2009), for n >= 64 bytes: four 128-bit
 * lanes are each carried 512 bits forward per step (x^(512+32) and x^(512-32) modulo P),
 * then folded into one (x^(128+32), x^(128-32)), which stays congruent modulo P to the
 * message read so far with crc added to its first bytes. The remainder is not reduced
 * here: its 16 bytes, run through the tables from 0, give the register the tables would
 * have reached. Constants: the bit reflection of x^e mod P, shifted left once (for the
 * reflected bit order). tests/check_io.c compares both ways, at every length and offset. */
#define K1 0x154442bd4ull /* x^(4*128+32) */
#define K2 0x1c6e41596ull /* x^(4*128-32) */
#define K3 0x1751997d0ull /* x^(128+32) */
#define K4 0x0ccaa009eull /* x^(128-32) */

__attribute__((target("pclmul"))) static inline __m128i fold(__m128i x, __m128i k,
                                                                     __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                                     _mm_clmulepi64_si128(x, k, 0x11)),
                       next);
}

__attribute__((target("pclmul"))) static uint32_t crc_clmul(uint32_t crc,
                                                                   const unsigned char *b,
                                                                   size_t n) {
  const __m128i k12 = _mm_set_epi64x((long long)K2, (long long)K1);
  const __m128i k34 = _mm_set_epi64x((long long)K4, (long long)K3);
  __m128i x0 = _mm_loadu_si128((const __m128i *)b), x1 = _mm_loadu_si128((const __m128i *)b + 1),
          x2 = _mm_loadu_si128((const __m128i *)b + 2), x3 = _mm_loadu_si128((const __m128i *)b + 3);
  unsigned char rest[16];
  x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
  b += 64;
  n -= 64;
  for (; n >= 64; b += 64, n -= 64) {
    x0 = fold(x0, k12, _mm_loadu_si128((const __m128i *)b));
    x1 = fold(x1, k12, _mm_loadu_si128((const __m128i *)b + 1));
    x2 = fold(x2, k12, _mm_loadu_si128((const __m128i *)b + 2));
    x3 = fold(x3, k12, _mm_loadu_si128((const __m128i *)b + 3));
  }
  x0 = fold(x0, k34, x1);
  x0 = fold(x0, k34, x2);
  x0 = fold(x0, k34, x3);
  for (; n >= 16; b += 16, n -= 16) x0 = fold(x0, k34, _mm_loadu_si128((const __m128i *)b));
  _mm_storeu_si128((__m128i *)rest, x0);
  return crc_tables(crc_tables(0, rest, 16), b, n);
}
#endif

uint32_t slem_crc32(uint32_t crc, const void *p, size_t n) {
  pthread_once(&once, init);
#ifdef HAVE_CLMUL_PATH
  if (use_clmul && n >= 64) return ~crc_clmul(~crc, p, n);
#endif
  return ~crc_tables(~crc, p, n);
}

uint32_t slem_crc32_tables(uint32_t crc, const void *p, size_t n) {
  pthread_once(&once, init);
  return ~crc_tables(~crc, p, n);
}
