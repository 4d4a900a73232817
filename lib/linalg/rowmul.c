/* Position-free products (rowmul.h): every entry one chain of fused multiply-adds over k in
 * ascending order, from zero. The kernels differ only in how many chains they run side by
 * side: a tile of MR rows by NR columns in AVX-512 or AVX2 registers (the last columns
 * masked), or one chain at a time in scalar fma(). A row beyond the rows given is a row of
 * zeros in the packed rows, and its chains are never stored. The k range is cut into
 * blocks of KC, the tile stored in y between blocks and loaded again, which continues the
 * same chain (a value stored and loaded is unchanged). */
#include "rowmul.h"

#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The k block: a packed row group (MR x KC) stays in L1 while the rows of b of its block,
 * NB tiles wide, stay in L2 over all the row groups. */
#ifndef KC
#define KC 512
#endif
#ifndef NB
#define NB 8
#endif
#define MR_MAX 12

enum { K_SCALAR, K_AVX2, K_AVX512 };
static const struct {
  const char *name;
  size_t mr, nr32, nr64; /* rows and columns of a tile (float32, float64) */
} kernels[] = {
    [K_SCALAR] = {"scalar", 4, 16, 8},
    [K_AVX2] = {"avx2", 6, 16, 8},
    [K_AVX512] = {"avx512", 12, 32, 16},
};

static int kern = -1;

static int choose(void) {
  int k = __atomic_load_n(&kern, __ATOMIC_ACQUIRE);
  const char *t;
  if (k >= 0) return k;
  t = getenv("SLEM_TEST_LANES");
  k = K_SCALAR;
  if (!(t && strcmp(t, "sse") == 0) && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma"))
    k = K_AVX2;
  if (k == K_AVX2 && !(t && strcmp(t, "avx2") == 0) && __builtin_cpu_supports("avx512f"))
    k = K_AVX512;
  __atomic_store_n(&kern, k, __ATOMIC_RELEASE);
  return k;
}

const char *slem_rowmul_kernel(void) { return kernels[choose()].name; }

/* ---- the tiles: rows r < rows of y (stride ldy) by cols <= NR columns, continued from y
 * (or started from zero when first) over kc values of the packed rows xp (value l of row r
 * at l MR + r) and the rows of b (row l at b + l ldb) ---- */

/* One chain at a time, in the language's fused multiply-add */
#define SCALAR_TILE(NAME, T, FMA)                                                              \
  static void NAME(T *y, size_t ldy, const T *xp, const T *b, size_t ldb, size_t kc,          \
                   size_t rows, size_t cols, int first) {                                     \
    const size_t mr = kernels[K_SCALAR].mr;                                                   \
    for (size_t r = 0; r < rows; r++)                                                         \
      for (size_t j = 0; j < cols; j++) {                                                     \
        T s = first ? (T)0 : y[r * ldy + j];                                                  \
        for (size_t l = 0; l < kc; l++) s = FMA(xp[l * mr + r], b[l * ldb + j], s);           \
        y[r * ldy + j] = s;                                                                   \
      }                                                                                       \
  }
SCALAR_TILE(scalar_f32, float, fmaf)
SCALAR_TILE(scalar_f64, double, fma)

/* A tile of MR rows by two vectors of W columns, the accumulators in registers: each row's
 * value broadcast, two fused multiply-adds per row and k. MASKED: columns past cols are
 * neither loaded nor stored (their lanes hold zeros); the other tiles load and store whole
 * vectors. */
#define TILE(NAME, ISA, T, V, MR, W, MASKED, LOAD, STORE, ZERO, SET1, FMADD)                   \
  __attribute__((target(ISA))) static void NAME(T *y, size_t ldy, const T *xp, const T *b,    \
                                                size_t ldb, size_t kc, size_t rows,           \
                                                size_t cols, int first) {                     \
    V a0[MR], a1[MR];                                                                         \
    MASKS(cols);                                                                              \
    _Pragma("GCC unroll 12") for (int r = 0; r < MR; r++) {                                   \
      a0[r] = ZERO();                                                                         \
      a1[r] = ZERO();                                                                         \
      if (!first && (size_t)r < rows) {                                                       \
        a0[r] = LOAD(y + r * ldy, 0);                                                         \
        a1[r] = LOAD(y + r * ldy + W, 1);                                                     \
      }                                                                                       \
    }                                                                                         \
    for (size_t l = 0; l < kc; l++) {                                                         \
      V b0 = LOAD(b + l * ldb, 0), b1 = LOAD(b + l * ldb + W, 1);                             \
      _Pragma("GCC unroll 12") for (int r = 0; r < MR; r++) {                                 \
        V x = SET1(xp[l * MR + r]);                                                           \
        a0[r] = FMADD(x, b0, a0[r]);                                                          \
        a1[r] = FMADD(x, b1, a1[r]);                                                          \
      }                                                                                       \
    }                                                                                         \
    _Pragma("GCC unroll 12") for (int r = 0; r < MR; r++) if ((size_t)r < rows) {             \
      STORE(y + r * ldy, a0[r], 0);                                                           \
      STORE(y + r * ldy + W, a1[r], 1);                                                       \
    }                                                                                         \
  }

/* AVX2: whole vectors, or maskload / maskstore with a lane mask per vector */
#define MASKS(cols) (void)(cols)
#define LD8(p, h) _mm256_loadu_ps(p)
#define ST8(p, v, h) _mm256_storeu_ps(p, v)
#define LD4(p, h) _mm256_loadu_pd(p)
#define ST4(p, v, h) _mm256_storeu_pd(p, v)
TILE(avx2_f32, "avx2,fma", float, __m256, 6, 8, 0, LD8, ST8, _mm256_setzero_ps,
     _mm256_set1_ps, _mm256_fmadd_ps)
TILE(avx2_f64, "avx2,fma", double, __m256d, 6, 4, 0, LD4, ST4, _mm256_setzero_pd,
     _mm256_set1_pd, _mm256_fmadd_pd)
#undef MASKS
#define MASKS(cols)                                                                           \
  __m256i m_[2];                                                                              \
  for (int h = 0; h < 2; h++) {                                                               \
    int32_t e_[8];                                                                            \
    for (int i = 0; i < 8; i++) e_[i] = (size_t)(h * 8 + i) < (cols) * M_PER ? -1 : 0;        \
    memcpy(&m_[h], e_, sizeof e_);                                                            \
  }
#define M_PER 1
#define MLD8(p, h) _mm256_maskload_ps(p, m_[h])
#define MST8(p, v, h) _mm256_maskstore_ps(p, m_[h], v)
TILE(avx2_f32_m, "avx2,fma", float, __m256, 6, 8, 1, MLD8, MST8, _mm256_setzero_ps,
     _mm256_set1_ps, _mm256_fmadd_ps)
#undef M_PER
#define M_PER 2 /* a double is two 32-bit lanes of the mask */
#define MLD4(p, h) _mm256_maskload_pd(p, m_[h])
#define MST4(p, v, h) _mm256_maskstore_pd(p, m_[h], v)
TILE(avx2_f64_m, "avx2,fma", double, __m256d, 6, 4, 1, MLD4, MST4, _mm256_setzero_pd,
     _mm256_set1_pd, _mm256_fmadd_pd)
#undef M_PER
#undef MASKS

/* AVX-512: whole vectors, or a write mask per vector */
#define MASKS(cols) (void)(cols)
#define LD16(p, h) _mm512_loadu_ps(p)
#define ST16(p, v, h) _mm512_storeu_ps(p, v)
#define LD8D(p, h) _mm512_loadu_pd(p)
#define ST8D(p, v, h) _mm512_storeu_pd(p, v)
TILE(avx512_f32, "avx512f", float, __m512, 12, 16, 0, LD16, ST16, _mm512_setzero_ps,
     _mm512_set1_ps, _mm512_fmadd_ps)
TILE(avx512_f64, "avx512f", double, __m512d, 12, 8, 0, LD8D, ST8D, _mm512_setzero_pd,
     _mm512_set1_pd, _mm512_fmadd_pd)
/* a last row group of at most 4 rows (256 = 21 x 12 + 4): 4 rows, not 12 with 8 of zeros */
TILE(avx512_f32_4, "avx512f", float, __m512, 4, 16, 0, LD16, ST16, _mm512_setzero_ps,
     _mm512_set1_ps, _mm512_fmadd_ps)
TILE(avx512_f64_4, "avx512f", double, __m512d, 4, 8, 0, LD8D, ST8D, _mm512_setzero_pd,
     _mm512_set1_pd, _mm512_fmadd_pd)
#undef MASKS
#define MASKS(cols)                                                                           \
  __mmask16 k_[2];                                                                            \
  for (int h = 0; h < 2; h++) {                                                               \
    size_t lo_ = (size_t)h * M_W, n_ = (cols) > lo_ ? (cols) - lo_ : 0;                       \
    k_[h] = (__mmask16)(n_ >= M_W ? (1u << M_W) - 1 : (1u << n_) - 1);                        \
  }
#define M_W 16
#define MLD16(p, h) _mm512_maskz_loadu_ps(k_[h], p)
#define MST16(p, v, h) _mm512_mask_storeu_ps(p, k_[h], v)
TILE(avx512_f32_m, "avx512f", float, __m512, 12, 16, 1, MLD16, MST16, _mm512_setzero_ps,
     _mm512_set1_ps, _mm512_fmadd_ps)
TILE(avx512_f32_m4, "avx512f", float, __m512, 4, 16, 1, MLD16, MST16, _mm512_setzero_ps,
     _mm512_set1_ps, _mm512_fmadd_ps)
#undef M_W
#define M_W 8
#define MLD8D(p, h) _mm512_maskz_loadu_pd((__mmask8)k_[h], p)
#define MST8D(p, v, h) _mm512_mask_storeu_pd(p, (__mmask8)k_[h], v)
TILE(avx512_f64_m, "avx512f", double, __m512d, 12, 8, 1, MLD8D, MST8D, _mm512_setzero_pd,
     _mm512_set1_pd, _mm512_fmadd_pd)
TILE(avx512_f64_m4, "avx512f", double, __m512d, 4, 8, 1, MLD8D, MST8D, _mm512_setzero_pd,
     _mm512_set1_pd, _mm512_fmadd_pd)
#undef M_W
#undef MASKS

/* Packs rows [i0, i0 + rows) of x's k block [l0, l0 + kc) as one row group of mr rows
 * (value l of row r at xp[l mr + r], zeros past the last row). */
#define PACKROWS(NAME, T)                                                                      \
  static void NAME(T *xp, const T *x, size_t ldx, size_t i0, size_t rows, size_t mr,          \
                   size_t l0, size_t kc) {                                                    \
    for (size_t r = 0; r < mr; r++) {                                                         \
      const T *xr = x + (i0 + r) * ldx + l0;                                                  \
      if (r < rows)                                                                           \
        for (size_t l = 0; l < kc; l++) xp[l * mr + r] = xr[l];                               \
      else                                                                                    \
        for (size_t l = 0; l < kc; l++) xp[l * mr + r] = (T)0;                                \
    }                                                                                         \
  }
PACKROWS(pack_rows_f32, float)
PACKROWS(pack_rows_f64, double)

/* Each thread's buffer for the packed rows of a k block, grown as needed and freed when
 * the thread ends; NULL when memory lacks (the rows are then packed one group at a time,
 * in a buffer on the stack, again for each NB tiles: slower, the same bits). */
static pthread_key_t ws_key;
static pthread_once_t ws_once = PTHREAD_ONCE_INIT;
typedef struct Workspace {
  size_t bytes;
  void *p;
} Workspace;

static void ws_free(void *w) {
  if (w) free(((Workspace *)w)->p);
  free(w);
}
static void ws_init(void) {
  if (pthread_key_create(&ws_key, ws_free) != 0) ws_key = (pthread_key_t)-1;
}
static void *workspace(size_t bytes) {
  Workspace *w;
  pthread_once(&ws_once, ws_init);
  if (ws_key == (pthread_key_t)-1) return NULL;
  w = pthread_getspecific(ws_key);
  if (!w) {
    if (!(w = calloc(1, sizeof *w))) return NULL;
    if (pthread_setspecific(ws_key, w) != 0) {
      free(w);
      return NULL;
    }
  }
  if (w->bytes < bytes) {
    void *p = realloc(w->p, bytes);
    if (!p) return NULL;
    w->p = p;
    w->bytes = bytes;
  }
  return w->p;
}

/* The product, for either element type: k block by k block (the block's rows packed, row
 * group by row group, MR rows each), then NB tiles of columns, row group by row group,
 * tile by tile, the last tile of a row masked when n is not a multiple of NR. b is
 * row-major (row l at b + l ldb), or packed (slem_rowmul_pack_*: tile q's rows of NR values
 * one after the other, from b + q k NR). */
#define PRODUCT(NAME, T, NRF, PACKR, SCALAR, A2, A2M, A512, A512M, A512_4, A512M_4)             \
  static void NAME(T *y, size_t ldy, const T *x, size_t ldx, size_t m, const T *b,            \
                   size_t ldb, size_t k, size_t n, int packed) {                              \
    int kn = choose();                                                                        \
    size_t mr = kernels[kn].mr, nr = kernels[kn].NRF, tiles = (n + nr - 1) / nr;             \
    size_t groups = (m + mr - 1) / mr, kb = k < KC ? k : KC;                                  \
    T one[MR_MAX * KC], *ws = m > mr ? workspace(groups * mr * kb * sizeof(T)) : NULL;        \
    for (size_t l0 = 0; l0 < k; l0 += KC) {                                                   \
      size_t kc = k - l0 < KC ? k - l0 : KC;                                                  \
      if (ws)                                                                                 \
        for (size_t g = 0; g < groups; g++) {                                                 \
          size_t rows = m - g * mr < mr ? m - g * mr : mr;                                    \
          PACKR(ws + g * mr * kc, x, ldx, g * mr, rows, GMR(rows), l0, kc);                   \
        }                                                                                     \
      for (size_t q0 = 0; q0 < tiles; q0 += NB) {                                             \
        size_t q1 = tiles - q0 < NB ? tiles : q0 + NB;                                        \
        for (size_t g = 0; g < groups; g++) {                                                 \
          size_t i0 = g * mr, rows = m - i0 < mr ? m - i0 : mr, gmr = GMR(rows);              \
          const T *xp = ws ? ws + g * mr * kc : one;                                          \
          if (!ws) PACKR(one, x, ldx, i0, rows, gmr, l0, kc);                                 \
          for (size_t q = q0; q < q1; q++) {                                                  \
            size_t j0 = q * nr, cols = n - j0 < nr ? n - j0 : nr;                             \
            size_t ldt = packed ? nr : ldb;                                                   \
            T *yt = y + i0 * ldy + j0;                                                        \
            const T *bt = packed ? b + (q * k + l0) * nr : b + l0 * ldb + j0;                 \
            int first = l0 == 0;                                                              \
            if (kn == K_AVX512 && gmr == 4)                                                   \
              (cols == nr ? A512_4 : A512M_4)(yt, ldy, xp, bt, ldt, kc, rows, cols, first);   \
            else if (kn == K_AVX512)                                                          \
              (cols == nr ? A512 : A512M)(yt, ldy, xp, bt, ldt, kc, rows, cols, first);       \
            else if (kn == K_AVX2)                                                            \
              (cols == nr ? A2 : A2M)(yt, ldy, xp, bt, ldt, kc, rows, cols, first);           \
            else                                                                              \
              SCALAR(yt, ldy, xp, bt, ldt, kc, rows, cols, first);                            \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }

/* The rows a group is packed and computed as: on AVX-512 a group of at most 4 rows (the
 * last of a block) takes the 4-row tiles, every other group the kernel's MR */
#define GMR(rows) (kn == K_AVX512 && (rows) <= 4 ? 4 : mr)
PRODUCT(product_f32, float, nr32, pack_rows_f32, scalar_f32, avx2_f32, avx2_f32_m, avx512_f32,
        avx512_f32_m, avx512_f32_4, avx512_f32_m4)
PRODUCT(product_f64, double, nr64, pack_rows_f64, scalar_f64, avx2_f64, avx2_f64_m,
        avx512_f64, avx512_f64_m, avx512_f64_4, avx512_f64_m4)

void slem_rowmul_f32(float *y, size_t ldy, const float *x, size_t ldx, size_t m,
                     const float *b, size_t ldb, size_t k, size_t n) {
  product_f32(y, ldy, x, ldx, m, b, ldb, k, n, 0);
}

void slem_rowmul_f64(double *y, size_t ldy, const double *x, size_t ldx, size_t m,
                     const double *b, size_t ldb, size_t k, size_t n) {
  product_f64(y, ldy, x, ldx, m, b, ldb, k, n, 0);
}

size_t slem_rowmul_packed_len(size_t k, size_t n, int f64) {
  size_t nr = f64 ? kernels[choose()].nr64 : kernels[choose()].nr32;
  return (n + nr - 1) / nr * nr * k;
}

#define PACK(NAME, T, NRF)                                                                     \
  void NAME(T *p, const T *b, size_t ldb, size_t k, size_t n) {                               \
    size_t nr = kernels[choose()].NRF;                                                        \
    for (size_t q = 0; q * nr < n; q++)                                                       \
      for (size_t l = 0; l < k; l++)                                                          \
        for (size_t c = 0; c < nr; c++)                                                       \
          p[(q * k + l) * nr + c] = q * nr + c < n ? b[l * ldb + q * nr + c] : (T)0;          \
  }
PACK(slem_rowmul_pack_f32, float, nr32)
PACK(slem_rowmul_pack_f64, double, nr64)

void slem_rowmul_pack_f32_scaled(float *p, const double *b, size_t ldb, size_t k, size_t n,
                                 double s) {
  size_t nr = kernels[choose()].nr32;
  for (size_t q = 0; q * nr < n; q++) {
    size_t cols = n - q * nr < nr ? n - q * nr : nr;
    for (size_t l = 0; l < k; l++) {
      float *o = p + (q * k + l) * nr;
      const double *r = b + l * ldb + q * nr;
      for (size_t c = 0; c < cols; c++) o[c] = (float)(r[c] * s);
      for (size_t c = cols; c < nr; c++) o[c] = 0.0f;
    }
  }
}

void slem_rowmul_packed_f32(float *y, size_t ldy, const float *x, size_t ldx, size_t m,
                            const float *p, size_t k, size_t n) {
  product_f32(y, ldy, x, ldx, m, p, 0, k, n, 1);
}

void slem_rowmul_packed_f64(double *y, size_t ldy, const double *x, size_t ldx, size_t m,
                            const double *p, size_t k, size_t n) {
  product_f64(y, ldy, x, ldx, m, p, 0, k, n, 1);
}
