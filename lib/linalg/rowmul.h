/* Position-free products: Y = X B, where each entry of Y is one chain of fused
 * multiply-adds over k in ascending order, starting from zero:
 *
 *     y_ij = fma(x_i,k-1, b_k-1,j, ... fma(x_i1, b_1j, fma(x_i0, b_0j, 0)) ...)
 *
 * so that a row's result depends on that row and B alone: never on the rows beside it, the
 * number of rows, the row's offset, the thread count or the CPU. BLAS micro-kernels do not
 * promise this: OpenBLAS's Haswell and Zen sgemm round a row by its place in a 12-row
 * group, and every core's edge kernels round otherwise than its inner ones
 * (docs/guarantees.md, "Position-free descriptors"). The chain is the same in AVX-512 or
 * AVX2 registers, masked or not, as in scalar fma(): a fused multiply-add rounds once, in
 * any width. So the three kernels give the same bits; SLEM_TEST_LANES=sse forces the scalar
 * one and =avx2 the AVX2 one, so that tests compare them.
 *
 * These are the encoders' products of a block of rows with a cache's matrix (A^-1, a
 * projection, kernel factors); the statistics of the negatives stay BLAS calls (they are
 * made once, from fixed chunks, and do not concern a row's place). Safe to call from
 * several threads at once. */
#ifndef SLEM_ROWMUL_H
#define SLEM_ROWMUL_H

#include <stddef.h>

/* y(m, n) = x(m, k) b(k, n), all row-major: row i of x at x + i ldx, of y at y + i ldy,
 * row l of b at b + l ldb (ldx >= k, ldy >= n, ldb >= n). y overlaps neither x nor b.
 * m may be 0; k and n at least 1. Cannot fail. */
void slem_rowmul_f32(float *y, size_t ldy, const float *x, size_t ldx, size_t m,
                     const float *b, size_t ldb, size_t k, size_t n);

/* The same in float64. */
void slem_rowmul_f64(double *y, size_t ldy, const double *x, size_t ldx, size_t m,
                     const double *b, size_t ldb, size_t k, size_t n);

/* The same products with b packed once for many (a cache's matrix): its tiles of columns
 * one after the other, so that a product reads b in order (a row-major b of thousands of
 * columns is read across pages, and in one set of the L1 cache). slem_rowmul_packed_len()
 * values, f64 or not, hold the packing of b(k, n); slem_rowmul_pack_*() writes it into p
 * (ldb >= n); slem_rowmul_packed_*() are slem_rowmul_*() on it, with the same bits. The
 * packing is for this process's kernel: never stored or sent. Cannot fail. */
size_t slem_rowmul_packed_len(size_t k, size_t n, int f64);
void slem_rowmul_pack_f32(float *p, const float *b, size_t ldb, size_t k, size_t n);
void slem_rowmul_pack_f64(double *p, const double *b, size_t ldb, size_t k, size_t n);
/* slem_rowmul_pack_f32() of the float32 matrix (float)(b_lj s), b(k, n) in double: what a
 * cache's A^-1 scaled to float32 becomes, without the float32 copy first. */
void slem_rowmul_pack_f32_scaled(float *p, const double *b, size_t ldb, size_t k, size_t n,
                                 double s);
void slem_rowmul_packed_f32(float *y, size_t ldy, const float *x, size_t ldx, size_t m,
                            const float *p, size_t k, size_t n);
void slem_rowmul_packed_f64(double *y, size_t ldy, const double *x, size_t ldx, size_t m,
                            const double *p, size_t k, size_t n);

/* Which kernel the products run on: "avx512", "avx2" or "scalar" (chosen once, by the CPU
 * and SLEM_TEST_LANES). */
const char *slem_rowmul_kernel(void);

#endif
