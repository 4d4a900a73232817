#include "fmt.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

static u128 pow5[45], pow10[39];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  pow5[0] = pow10[0] = 1;
  for (int i = 1; i < 45; i++) pow5[i] = pow5[i - 1] * 5;
  for (int i = 1; i < 39; i++) pow10[i] = pow10[i - 1] * 10;
}

int slem_fmt_g9(char *out, float v) {
  uint32_t bits, fr, ex;
  uint64_t m, q;
  u128 n;
  int e2, k, digits, nd, x, ns;
  char s[10], *p = out;
  memcpy(&bits, &v, 4);
  ex = (bits >> 23) & 0xFF;
  fr = bits & 0x7FFFFF;
  if (ex == 0xFF) return snprintf(out, SLEM_FMT_G9_MAX, "%.9g", (double)v);
  if (bits >> 31) *p++ = '-';
  if (ex == 0 && fr == 0) {
    *p++ = '0';
    *p = '\0';
    return (int)(p - out);
  }
  e2 = ex ? (int)ex - 150 : -149;
  m = ex ? (fr | 0x800000u) : fr;
  /* v = m 2^e2 = n 10^-k exactly, when n fits 128 bits */
  if (e2 > 100 || e2 < -44) return snprintf(out, SLEM_FMT_G9_MAX, "%.9g", (double)v);
  pthread_once(&once, init);
  if (e2 >= 0) {
    n = (u128)m << e2;
    k = 0;
  } else {
    n = (u128)m * pow5[-e2];
    k = -e2;
  }
  digits = 1;
  while (digits < 39 && n >= pow10[digits]) digits++;
  if (digits > 9) { /* round to 9 significant digits, half to even */
    u128 div = pow10[digits - 9], half = div / 2, rem;
    q = (uint64_t)(n / div);
    rem = n - (u128)q * div;
    if (rem > half || (rem == half && (q & 1))) q++;
    nd = 9;
    if (q == 1000000000u) {
      q = 100000000u;
      digits++;
    }
  } else {
    q = (uint64_t)n;
    nd = digits;
  }
  x = digits - 1 - k; /* the exponent of the leading digit */
  for (int i = nd - 1; i >= 0; i--) {
    s[i] = (char)('0' + q % 10);
    q /= 10;
  }
  ns = nd;
  while (ns > 1 && s[ns - 1] == '0') ns--;
  p += slem_fmt_g9_layout(p, s, ns, x);
  *p = '\0';
  return (int)(p - out);
}

size_t slem_fmt_g9_layout(char *out, const char *s, int ns, int x) {
  char *p = out;
  if (x < -4 || x >= 9) {
    int ax = x < 0 ? -x : x;
    *p++ = s[0];
    if (ns > 1) {
      *p++ = '.';
      memcpy(p, s + 1, (size_t)ns - 1);
      p += ns - 1;
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    if (ax >= 100) *p++ = (char)('0' + ax / 100);
    *p++ = (char)('0' + ax / 10 % 10);
    *p++ = (char)('0' + ax % 10);
  } else if (x >= 0) {
    for (int i = 0; i <= x; i++) *p++ = i < ns ? s[i] : '0';
    if (ns > x + 1) {
      *p++ = '.';
      memcpy(p, s + x + 1, (size_t)(ns - x - 1));
      p += ns - x - 1;
    }
  } else {
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -x - 1; i++) *p++ = '0';
    memcpy(p, s, (size_t)ns);
    p += ns;
  }
  return (size_t)(p - out);
}

char *slem_fmt_u64(char *out, uint64_t v) {
  char t[24];
  int n = 0;
  do t[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) *out++ = t[--n];
  return out;
}
