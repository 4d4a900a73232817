/* Dot products in a fixed order: the sums that exact scores and fixed-order projections
 * are made of, one at a time or several side by side in vector registers with the same
 * bits (SSE2 everywhere, AVX where the CPU has it, chosen once; SLEM_TEST_LANES=sse forces
 * SSE2 and =avx AVX without FMA, so that tests compare the ways). No fused multiply-add but
 * one: -std=c11 turns contraction off, and only the float rows' sums (slem_dot_f32_rows)
 * fuse, on AVX2 with FMA, where the product of two floats is exact in double and fusing
 * rounds the same. */
#ifndef SLEM_DOT_H
#define SLEM_DOT_H

#include <stddef.h>

/* Rows side by side: SLEM_KLANES vectors of n values stored as n groups of SLEM_KLANES,
 * value l of every vector, then value l + 1 (kernel.h's layout). */
#define SLEM_KLANES 8

/* The fixed-order sums: sum a_l b_l over l < n, in double, four partial sums over l mod 4
 * (the tail beyond the last multiple of 4 in the first) added as (s0 + s1) + (s2 + s3).
 * The products of two float32 are exact in double, so a fused multiply-add would give the
 * same sums in _f32. */
double slem_dot_f32(const float *a, const float *b, size_t n);
double slem_dot_f64(const double *a, const double *b, size_t n);

/* out[g] = slem_dot_f64(a, v_g, n), bit for bit, for the SLEM_KLANES vectors v_g of n
 * values side by side in vt. */
void slem_dot_f64_lanes(const double *a, const double *vt, size_t n, double *out);

/* out[r] = slem_dot_f32(a, b[r], n), bit for bit, for the m <= SLEM_KLANES rows b[r]:
 * the exact scores of one query against several rows at once. */
void slem_dot_f32_rows(const float *a, const float *const *b, size_t m, size_t n, double *out);

/* out[r] = slem_dot_f32(a, x + j[r] n, n) for r < m <= SLEM_KLANES: a against rows of
 * x(., n) picked by index. */
void slem_dot_f32_at(const float *a, const float *x, size_t n, const size_t *j, size_t m,
                     double *out);

/* Whether the side-by-side sums run on AVX (else SSE2), and the float rows' with fused
 * multiply-adds (AVX2 and FMA; the same bits). */
int slem_dot_lanes_avx(void);
int slem_dot_lanes_fma(void);

#endif
