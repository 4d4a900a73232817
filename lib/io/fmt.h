/* Fast, exact "%.9g" of a float32: the same characters as snprintf(buf, n, "%.9g", v)
 * in the C locale, without glibc's multi-precision path. Rankings print a score per line,
 * and formatting was a third of slem-match's time. */
#ifndef SLEM_FMT_H
#define SLEM_FMT_H

#include <stddef.h>
#include <stdint.h>

#define SLEM_FMT_G9_MAX 32

/* Writes v as "%.9g" with a terminating NUL into out (SLEM_FMT_G9_MAX bytes); returns
 * the length. Exact: the value of a float is a finite decimal, rounded to 9 significant
 * digits half to even as glibc does; outside the range the integer arithmetic covers
 * (|v| below about 1e-6 or above 1e38), and for NaN and Inf, it calls snprintf. */
int slem_fmt_g9(char *out, float v);

/* Lays out the ns significant digits s (no trailing zero but the first digit) whose leading
 * digit has the decimal exponent x as "%.9g" does (fixed for -4 <= x < 9, else d.ddde+XX),
 * without sign or NUL; returns the length written to out. slem_fmt_g9() and slem-merge's
 * check of a score's text (mergefast.c) share it. Cannot fail. */
size_t slem_fmt_g9_layout(char *out, const char *s, int ns, int x);

/* Writes the decimal digits of v (no sign, no NUL, at most 20 characters) at out; returns
 * the end. The ranking formats' ranks and rows. Cannot fail. */
char *slem_fmt_u64(char *out, uint64_t v);

#endif
