/* Kernel SLEM against computations that do not share its code: direct kernel formulas,
 * the dense (n+1)-point kernel ridge problem solved by LU in the RKHS, and linear SLEM. */
#include "testutil.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>

#include "../lib/formats/cache.h"
#include "../lib/encode/var_linear.h"
#include "../lib/encode/var_kernel.h"
#include "../lib/encode/cachekinds.h"
#include "../lib/encode/slem_linear.h"
#include "../lib/linalg/kernel.h"
#include "../lib/linalg/kernelfam.h"
#include "../lib/encode/kproj.h"
#include "../lib/encode/kernel_stats.h"
#include "../lib/encode/var_krec.h"
#include "../lib/encode/negstats.h"
#include "../lib/io/container.h"

#include <cjson/cJSON.h>
#include "../lib/search/scorer.h"
#include "../lib/linalg/blas.h"
#include "../lib/linalg/stats.h"

START_TEST(kernel_values_against_direct_formulas) {
  static const char *specs[] = {"linear", "poly:gamma=0.5,c=2,p=3", "rbf:gamma=0.7", "chi2",
                                "intersection", "hellinger", "exp:gamma=0.7", "quad:gamma=0.3",
                                "hellinger-dot"};
  double a[4 * 5], b[3 * 5], out[12];
  SlemError err;
  tu_seed(41);
  for (size_t i = 0; i < 20; i++) a[i] = tu_uniform() * 2;
  for (size_t i = 0; i < 15; i++) b[i] = tu_uniform() * 2;
  a[3] = 0, b[3] = 0; /* chi2's 0/0 term counts 0 */
  for (size_t s = 0; s < 9; s++) {
    SlemKernel k;
    double ap[20], bp[15];
    ck_assert_int_eq(slem_kernel_parse(&k, specs[s], &err), SLEM_OK);
    memcpy(ap, a, sizeof a);
    memcpy(bp, b, sizeof b);
    ck_assert_int_eq(slem_kernel_prepare(&k, ap, 4, 5, "a", 1, &err), SLEM_OK);
    ck_assert_int_eq(slem_kernel_prepare(&k, bp, 3, 5, "b", 1, &err), SLEM_OK);
    slem_kernel_block(&k, out, ap, 4, bp, 3, 5);
    for (size_t i = 0; i < 4; i++)
      for (size_t j = 0; j < 3; j++) {
        const double *x = a + i * 5, *y = b + j * 5;
        double want = 0, dot = 0, sq = 0;
        for (size_t l = 0; l < 5; l++) {
          dot += x[l] * y[l];
          sq += (x[l] - y[l]) * (x[l] - y[l]);
        }
        switch (s) {
        case 0: want = dot; break;
        case 1: want = pow(0.5 * dot + 2, 3); break;
        case 2: want = exp(-0.7 * sq); break;
        case 3:
          for (size_t l = 0; l < 5; l++)
            if (x[l] + y[l] > 0) want += 2 * x[l] * y[l] / (x[l] + y[l]);
          break;
        case 4:
          for (size_t l = 0; l < 5; l++) want += x[l] < y[l] ? x[l] : y[l];
          break;
        case 5:
          for (size_t l = 0; l < 5; l++) want += sqrt(x[l] * y[l]);
          break;
        case 6: want = exp(-0.7 * sqrt(sq)); break; /* kernel_matrix.m's 'exp' */
        case 7: want = dot + 0.3 * dot * dot; break; /* and its 'quad' */
        default: want = sqrt(fabs(dot)); break;      /* incomplete_chol.m's 'hellinger' */
        }
        ck_assert_msg(fabs(out[i * 3 + j] - want) <= 1e-12 * (fabs(want) + 1), "%s: %g vs %g",
                      specs[s], out[i * 3 + j], want);
      }
  }
}
END_TEST

/* The lanes are an arrangement, not another formula: every value the same double as
 * slem_kernel_eval's, whatever the row's place among the lanes and the dimension. */
static void lanes_equal_kernel_eval(void) {
  static const char *specs[] = {"linear", "poly:gamma=0.5,c=2,p=3", "rbf:gamma=0.7", "chi2",
                                "intersection", "hellinger", "exp:gamma=0.7", "quad:gamma=0.3",
                                "hellinger-dot"};
  static const size_t dims[] = {1, 3, 8, 37, 130};
  enum { N = 13 }; /* a full group and a partial one */
  SlemError err;
  tu_seed(43);
  for (size_t s = 0; s < 9; s++)
    for (size_t di = 0; di < 5; di++) {
      size_t d = dims[di];
      SlemKernel k;
      double *x = malloc(d * sizeof *x), *y = malloc(N * d * sizeof *y);
      double *yt = malloc(slem_kernel_lanes_size(N, d) * sizeof *yt), out[SLEM_KLANES];
      ck_assert_int_eq(slem_kernel_parse(&k, specs[s], &err), SLEM_OK);
      for (size_t l = 0; l < d; l++) x[l] = tu_uniform() * 3;
      for (size_t l = 0; l < N * d; l++) y[l] = tu_uniform() * 3;
      x[0] = 0, y[0] = 0, y[d] = 0; /* a 0/0 term of chi2 */
      if (d > 2) memcpy(y + 5 * d, x, d * sizeof *x); /* a pair at distance 0 */
      ck_assert_int_eq(slem_kernel_prepare(&k, x, 1, d, "x", 1, &err), SLEM_OK);
      ck_assert_int_eq(slem_kernel_prepare(&k, y, N, d, "y", 1, &err), SLEM_OK);
      slem_kernel_lanes(yt, y, N, d);
      for (size_t b = 0; b * SLEM_KLANES < N; b++) {
        slem_kernel_eval_lanes(&k, x, yt + b * SLEM_KLANES * d, d, out);
        for (size_t g = 0; g < SLEM_KLANES && b * SLEM_KLANES + g < N; g++) {
          double want = slem_kernel_eval(&k, x, y + (b * SLEM_KLANES + g) * d, d);
          ck_assert_msg(memcmp(&out[g], &want, sizeof want) == 0, "%s d %zu row %zu: %.17g vs %.17g",
                        specs[s], d, b * SLEM_KLANES + g, out[g], want);
        }
      }
      free(x);
      free(y);
      free(yt);
    }
}

START_TEST(kernel_lanes_equal_kernel_eval_bit_for_bit) {
  lanes_equal_kernel_eval(); /* with AVX where the CPU has it */
}
END_TEST

START_TEST(kernel_lanes_without_avx_equal_kernel_eval_bit_for_bit) {
  setenv("SLEM_TEST_LANES", "sse", 1); /* read once per process: each test is a fork */
  lanes_equal_kernel_eval();
}
END_TEST

/* The dot products side by side (the exact scores of several rows, the projections of
 * eight rows) are the scalar sums, bit for bit: any row count, any dimension's tail, values
 * whose magnitudes span enough exponents that every change of order would show. */
static void dots_equal_scalar(void) {
  static const size_t dims[] = {0, 1, 3, 4, 7, 8, 13, 130, 2051};
  tu_seed(47);
  for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
    size_t n = dims[di];
    float *a = malloc((n + 1) * sizeof *a), *b = malloc(SLEM_KLANES * (n + 1) * sizeof *b);
    double *ad = malloc((n + 1) * sizeof *ad), *vt = malloc(SLEM_KLANES * (n + 1) * sizeof *vt);
    double *vd = malloc(SLEM_KLANES * (n + 1) * sizeof *vd);
    for (size_t l = 0; l < n; l++) {
      a[l] = (float)(tu_gauss() * ldexp(1, (int)(tu_uniform() * 40) - 20));
      ad[l] = tu_gauss() * ldexp(1, (int)(tu_uniform() * 40) - 20);
    }
    for (size_t l = 0; l < SLEM_KLANES * n; l++) {
      b[l] = (float)(tu_gauss() * ldexp(1, (int)(tu_uniform() * 40) - 20));
      vd[l] = tu_gauss() * ldexp(1, (int)(tu_uniform() * 40) - 20);
    }
    for (size_t g = 0; g < SLEM_KLANES; g++)
      for (size_t l = 0; l < n; l++) vt[l * SLEM_KLANES + g] = vd[g * n + l];
    for (size_t m = 1; m <= SLEM_KLANES; m++) {
      const float *rows[SLEM_KLANES];
      double out[SLEM_KLANES];
      for (size_t r = 0; r < m; r++) rows[r] = b + ((r * 3 + m) % SLEM_KLANES) * n;
      for (size_t r = 0; r < SLEM_KLANES; r++) out[r] = -1;
      slem_dot_f32_rows(a, rows, m, n, out);
      for (size_t r = 0; r < SLEM_KLANES; r++) {
        double want = r < m ? slem_dot_f32(a, rows[r], n) : -1; /* nothing past m */
        ck_assert_msg(memcmp(&out[r], &want, sizeof want) == 0, "f32 n %zu m %zu row %zu: %.17g vs %.17g",
                      n, m, r, out[r], want);
      }
    }
    {
      double out[SLEM_KLANES];
      slem_dot_f64_lanes(ad, vt, n, out);
      for (size_t g = 0; g < SLEM_KLANES; g++) {
        double want = slem_dot_f64(ad, vd + g * n, n);
        ck_assert_msg(memcmp(&out[g], &want, sizeof want) == 0, "f64 n %zu lane %zu: %.17g vs %.17g",
                      n, g, out[g], want);
      }
    }
    free(a), free(b), free(ad), free(vt), free(vd);
  }
}

START_TEST(kernel_dot_lanes_equal_scalar_bit_for_bit) {
  dots_equal_scalar(); /* with AVX where the CPU has it */
}
END_TEST

START_TEST(kernel_dot_lanes_without_avx_equal_scalar_bit_for_bit) {
  setenv("SLEM_TEST_LANES", "sse", 1);
  dots_equal_scalar();
}
END_TEST

START_TEST(kernel_dot_lanes_without_fma_equal_scalar_bit_for_bit) {
  setenv("SLEM_TEST_LANES", "avx", 1); /* AVX's multiply then add, where FMA would fuse */
  dots_equal_scalar();
}
END_TEST

/* Every member of the kernels' table (kernelfam.h) is whole: a name of its own, one way to
 * compute k, its spec parsed and printed back with each parameter it takes (and the others
 * refused), the histograms' refusal, and its blocks (slem_kernel_block, slem_kernel_rows)
 * and lanes against slem_kernel_eval: the same double where no GEMM is involved (the
 * additive kernels, the lanes, exp's near pairs), within rounding otherwise. */
START_TEST(kernel_table_members_are_whole) {
  enum { NA = 7, NB = 5, D = 9 };
  static const struct { unsigned flag; const char *set; } params[] = {
      {SLEM_KERN_GAMMA | SLEM_KERN_GAMMA0, "gamma=0.5"},
      {SLEM_KERN_C, "c=2"},
      {SLEM_KERN_P, "p=3"}};
  SlemError err, unknown;
  size_t i;
  const SlemKernelOps *o;
  tu_seed(47);
  ck_assert_int_eq(slem_kernel_parse(&(SlemKernel){0}, "sigmoid", &unknown), SLEM_EINVAL);
  for (i = 0; (o = slem_kernel_member(i)); i++) {
    SlemKernel k, k2;
    char spec[128], buf[128], buf2[128];
    double a[NA * D], b[NB * D], out[NA * NB], rows[NA * NB], bt[D * NB], b2[NB];
    double y[NB * D], yt[SLEM_KLANES * D], lanes[SLEM_KLANES];
    int n;
    ck_assert(o->name && *o->name);
    for (size_t j = 0; j < i; j++) ck_assert_str_ne(slem_kernel_member(j)->name, o->name);
    ck_assert_msg(strstr(unknown.msg, o->name), "the list of kernels lacks %s: %s", o->name,
                  unknown.msg);
    ck_assert_msg((o->of_dot != NULL) + (o->of_sqdist != NULL) + (o->pair != NULL) == 1 &&
                      !o->pair == !o->lanes, "%s: not one way to compute k", o->name);
    ck_assert_msg(!(o->params & SLEM_KERN_G) == !o->scale, "%s: g without scale", o->name);
    ck_assert_msg(o->near == 0 || o->of_sqdist, "%s: near without of_sqdist", o->name);
    /* its name alone: the defaults; g=1 relative where it takes g */
    ck_assert_int_eq(slem_kernel_parse(&k, o->name, &err), SLEM_OK);
    ck_assert_ptr_eq(k.ops, o);
    ck_assert_str_eq(slem_kernel_name(&k), o->name);
    ck_assert(k.gamma == 1 && k.c == 1 && k.p == 2);
    ck_assert_int_eq(k.gamma_relative, !!(o->params & SLEM_KERN_G));
    /* each parameter it takes, printed back and parsed again to the same kernel */
    n = snprintf(spec, sizeof spec, "%s", o->name);
    for (size_t p = 0; p < 3; p++)
      if (o->params & params[p].flag)
        n += snprintf(spec + n, sizeof spec - (size_t)n, "%c%s", strchr(spec, ':') ? ',' : ':',
                      params[p].set);
    ck_assert_msg(slem_kernel_parse(&k, spec, &err) == SLEM_OK, "%s: %s", spec, err.msg);
    slem_kernel_format(&k, buf, sizeof buf);
    for (size_t p = 0; p < 3; p++)
      ck_assert_msg(!(o->params & params[p].flag) == !strstr(buf, params[p].set),
                    "%s printed as %s", spec, buf);
    ck_assert_msg(slem_kernel_parse(&k2, buf, &err) == SLEM_OK, "%s: %s", buf, err.msg);
    slem_kernel_format(&k2, buf2, sizeof buf2);
    ck_assert_str_eq(buf2, buf);
    ck_assert(k2.ops == o && k2.gamma == k.gamma && k2.c == k.c && k2.p == k.p &&
              !k2.gamma_relative);
    /* the parameters it does not take are refused, naming it */
    for (size_t p = 0; p < 3; p++)
      if (!(o->params & params[p].flag)) {
        snprintf(spec, sizeof spec, "%s:%s", o->name, params[p].set);
        ck_assert_int_eq(slem_kernel_parse(&k2, spec, &err), SLEM_EINVAL);
        ck_assert_msg(strstr(err.msg, "takes no parameter") && strstr(err.msg, o->name),
                      "%s: %s", spec, err.msg);
      }
    snprintf(spec, sizeof spec, "%s:g=0.5", o->name);
    ck_assert_int_eq(slem_kernel_parse(&k2, spec, &err),
                     o->params & SLEM_KERN_G ? SLEM_OK : SLEM_EINVAL);
    /* a negative value: refused by the histogram kernels alone, naming file and record */
    a[0] = 1, a[1] = -0.5;
    ck_assert_int_eq(slem_kernel_prepare(&k, a, 2, 1, "neg.fvecs", 1, &err),
                     o->histograms ? SLEM_EFORMAT : SLEM_OK);
    ck_assert(o->histograms == slem_kernel_needs_histograms(&k));
    if (o->histograms)
      ck_assert_ptr_nonnull(strstr(err.msg, "neg.fvecs: record 2: value 1 is negative"));
    /* values: signed where the kernel takes them; a pair at distance 0 and a 0/0 term */
    for (size_t l = 0; l < NA * D; l++) a[l] = tu_uniform() * 2 - (o->histograms ? 0 : 1);
    for (size_t l = 0; l < NB * D; l++) b[l] = tu_uniform() * 2 - (o->histograms ? 0 : 1);
    memcpy(b + 2 * D, a + 3 * D, D * sizeof *a);
    a[0] = 0, b[0] = 0;
    ck_assert_int_eq(slem_kernel_prepare(&k, a, NA, D, "a", 1, &err), SLEM_OK);
    ck_assert_int_eq(slem_kernel_prepare(&k, b, NB, D, "b", 1, &err), SLEM_OK);
    slem_kernel_block(&k, out, a, NA, b, NB, D);
    slem_kernel_rows_prepare(bt, b2, b, NB, D);
    slem_kernel_rows(&k, rows, a, NA, b, bt, b2, NB, D);
    for (size_t r = 0; r < NA; r++)
      for (size_t c = 0; c < NB; c++) {
        double want = slem_kernel_eval(&k, a + r * D, b + c * D, D);
        int exact = o->pair || (o->near > 0 && r == 3 && c == 2);
        for (int w = 0; w < 2; w++) {
          double got = (w ? rows : out)[r * NB + c];
          ck_assert_msg(exact ? memcmp(&got, &want, sizeof got) == 0
                              : fabs(got - want) <= 1e-12 * (fabs(want) + 1),
                        "%s %s (%zu, %zu): %.17g vs %.17g", buf, w ? "rows" : "block", r, c,
                        got, want);
        }
      }
    /* the lanes: the same double as slem_kernel_eval, the lanes past the rows included */
    memcpy(y, b, sizeof y);
    slem_kernel_lanes(yt, y, NB, D);
    slem_kernel_eval_lanes(&k, a, yt, D, lanes);
    for (size_t g = 0; g < SLEM_KLANES; g++) {
      double zero[D] = {0}, want = slem_kernel_eval(&k, a, g < NB ? y + g * D : zero, D);
      ck_assert_msg(memcmp(&lanes[g], &want, sizeof want) == 0, "%s lane %zu: %.17g vs %.17g",
                    buf, g, lanes[g], want);
    }
  }
  ck_assert_uint_ge(i, 9);
}
END_TEST

START_TEST(kernel_specs) {
  SlemKernel k;
  SlemError err;
  char buf[128];
  ck_assert_int_eq(slem_kernel_parse(&k, "rbf", &err), SLEM_OK);
  ck_assert(k.gamma_relative && k.g_rel == 1);
  ck_assert_int_eq(slem_kernel_parse(&k, "rbf:g=0.5", &err), SLEM_OK);
  ck_assert(k.gamma_relative && k.g_rel == 0.5);
  ck_assert_int_eq(slem_kernel_parse(&k, "poly:p=3", &err), SLEM_OK);
  slem_kernel_format(&k, buf, sizeof buf);
  ck_assert_str_eq(buf, "poly:gamma=1,c=1,p=3");
  ck_assert_int_eq(slem_kernel_parse(&k, "rbf:gamma=-1", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_kernel_parse(&k, "poly:p=2.5", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_kernel_parse(&k, "linear:gamma=1", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "linear takes no parameter 'gamma'"));
  ck_assert_int_eq(slem_kernel_parse(&k, "sigmoid", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_kernel_parse(&k, "rbf:gamma=1,g=1", &err), SLEM_EINVAL);
  /* a parameter given twice is refused, not taken with the last one winning */
  ck_assert_int_eq(slem_kernel_parse(&k, "rbf:g=1,g=2", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "kernel 'rbf:g=1,g=2': g twice");
  ck_assert_int_eq(slem_kernel_parse(&k, "intersection:gamma=0.5,gamma=0.5", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "gamma twice"));
  ck_assert_int_eq(slem_kernel_parse(&k, "poly:p=3,c=1,p=2", &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "p twice"));
  ck_assert_int_eq(slem_kernel_parse(&k, "poly:c=1,p=3", &err), SLEM_OK);
  ck_assert_int_eq(slem_kernel_parse(&k, "exp", &err), SLEM_OK);
  ck_assert(k.gamma_relative && k.g_rel == 1);
  ck_assert_int_eq(slem_kernel_parse(&k, "quad", &err), SLEM_OK);
  slem_kernel_format(&k, buf, sizeof buf);
  ck_assert_str_eq(buf, "quad:gamma=1");
  ck_assert_int_eq(slem_kernel_parse(&k, "quad:gamma=0", &err), SLEM_OK);
  ck_assert_int_eq(slem_kernel_parse(&k, "quad:gamma=-0.5", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_kernel_parse(&k, "quad:g=1", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_kernel_parse(&k, "exp:gamma=0.25", &err), SLEM_OK);
  slem_kernel_format(&k, buf, sizeof buf);
  ck_assert_str_eq(buf, "exp:gamma=0.25");
  {
    double x[4] = {1, 2, -3, 4};
    ck_assert_int_eq(slem_kernel_parse(&k, "chi2", &err), SLEM_OK);
    ck_assert_int_eq(slem_kernel_prepare(&k, x, 2, 2, "h.fvecs", 1, &err), SLEM_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "h.fvecs: record 2: value 1 is negative"));
  }
}
END_TEST

/* A histogram kernel cannot take stage 2's signed descriptors: refused before any work,
 * not after stage 1 (the negatives' file here does not exist: the refusal comes first). */
START_TEST(krec_refuses_histogram_kernels_up_front) {
  static const char *const hist[] = {"chi2", "intersection", "intersection:gamma=0.5",
                                     "hellinger", "hellinger-dot"};
  const char *in = "/nonexistent/negatives.fvecs";
  SlemNegstatsOpts o;
  SlemNegstatsResult res;
  SlemError err;
  for (size_t i = 0; i < sizeof hist / sizeof hist[0]; i++) {
    ck_assert_int_eq(slem_krec_check(hist[i], 2, &err), SLEM_EINVAL);
    ck_assert_msg(strstr(err.msg, "--depth 2 is not for the") && strstr(err.msg, "histograms"),
                  "%s: %s", hist[i], err.msg);
    slem_negstats_opts_init(&o);
    o.kernel = hist[i];
    o.depth = 3;
    o.lambda_rel = 1;
    char *path = tu_path("hist3.slem");
    ck_assert_int_eq(slem_negstats_run(path, &in, 1, &o, &res, &err), SLEM_EINVAL);
    free(path);
    ck_assert_msg(strstr(err.msg, "--depth 3 is not for the"), "%s: %s", hist[i], err.msg);
  }
  ck_assert_int_eq(slem_krec_check("rbf:g=1", 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_krec_check("poly", 5, &err), SLEM_OK);
  ck_assert_int_eq(slem_krec_check("rbf", 1, &err), SLEM_EINVAL);
}
END_TEST

START_TEST(icl_reproduces_pivots_and_trace_decreases) {
  size_t n = 120, d = 4, rmax = 30, r, piv[30];
  double *x = malloc(n * d * sizeof *x), *b = malloc(n * rmax * sizeof *b), trace[31];
  SlemKernel k;
  SlemError err;
  tu_seed(42);
  tu_gaussian_rows(x, n, d, 0.0);
  slem_kernel_parse(&k, "rbf:gamma=0.3", &err);
  SlemKernelIcl icl = {0, b, piv, trace};
  ck_assert_int_eq(slem_kernel_icl(&icl, &k, x, n, d, rmax, 0, &err), SLEM_OK);
  r = icl.rank;
  ck_assert_uint_eq(r, rmax);
  ck_assert_double_eq_tol(trace[0], (double)n, 1e-9); /* RBF: k(x, x) = 1 */
  for (size_t j = 0; j < r; j++) ck_assert_double_le(trace[j + 1], trace[j] + 1e-12);
  ck_assert_double_lt(trace[r], 0.5 * trace[0]);
  for (size_t i = 0; i < r; i++)
    for (size_t j = 0; j < r; j++) {
      double bb = 0;
      for (size_t l = 0; l < r; l++) bb += b[piv[i] * rmax + l] * b[piv[j] * rmax + l];
      ck_assert_double_eq_tol(bb, slem_kernel_eval(&k, x + piv[i] * d, x + piv[j] * d, d), 1e-12);
      if (j > i) ck_assert_double_eq(b[piv[i] * rmax + j], 0); /* L_P lower triangular */
    }
  /* everywhere else B B^T <= K on the diagonal: the residual is positive semidefinite */
  for (size_t i = 0; i < n; i++) {
    double bb = 0;
    for (size_t l = 0; l < r; l++) bb += b[i * rmax + l] * b[i * rmax + l];
    ck_assert_double_le(bb, 1 + 1e-12);
  }
  /* tol stops it early */
  ck_assert_int_eq(slem_kernel_icl(&icl, &k, x, n, d, rmax, 0.9, &err), SLEM_OK);
  r = icl.rank;
  ck_assert_uint_lt(r, rmax);
  ck_assert_double_le(trace[r], 0.9 * trace[0]);
  free(x);
  free(b);
}
END_TEST

static int cmp_dbl(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

START_TEST(gamma_estimate_is_deterministic) {
  size_t n = 1500, d = 3;
  double *x = malloc(n * d * sizeof *x), m1, m2, m3, m4;
  SlemKernel k;
  SlemError err;
  tu_seed(43);
  tu_gaussian_rows(x, n, d, 0.0);
  slem_kernel_parse(&k, "rbf:g=2", &err);
  ck_assert_int_eq(slem_kernel_estimate_gamma(&k, &m1, x, n, d, 200, 7, &err), SLEM_OK);
  ck_assert_double_eq_tol(k.gamma, 2 / m1, 1e-15);
  slem_kernel_parse(&k, "rbf:g=2", &err);
  ck_assert_int_eq(slem_kernel_estimate_gamma(&k, &m2, x, n, d, 200, 7, &err), SLEM_OK);
  ck_assert_double_eq(m1, m2);
  slem_kernel_parse(&k, "rbf:g=2", &err);
  ck_assert_int_eq(slem_kernel_estimate_gamma(&k, &m3, x, n, d, 200, 8, &err), SLEM_OK);
  ck_assert_double_ne(m1, m3);
  /* exp divides g by the square root of the same median */
  slem_kernel_parse(&k, "exp:g=2", &err);
  ck_assert_int_eq(slem_kernel_estimate_gamma(&k, &m2, x, n, d, 200, 7, &err), SLEM_OK);
  ck_assert_double_eq(m1, m2);
  ck_assert_double_eq_tol(k.gamma, 2 / sqrt(m1), 1e-15);
  /* with all rows in the sample: the median over every pair, computed here */
  slem_kernel_parse(&k, "rbf", &err);
  ck_assert_int_eq(slem_kernel_estimate_gamma(&k, &m4, x, 40, d, 1000, 7, &err), SLEM_OK);
  {
    double sq[780];
    size_t c = 0, below = 0, above = 0;
    for (size_t i = 0; i < 40; i++)
      for (size_t j = i + 1; j < 40; j++) {
        double t = 0;
        for (size_t l = 0; l < d; l++) t += (x[i * d + l] - x[j * d + l]) * (x[i * d + l] - x[j * d + l]);
        sq[c++] = t;
      }
    for (size_t i = 0; i < c; i++) below += sq[i] < m4, above += sq[i] > m4;
    ck_assert_uint_eq(below, 390); /* 780 pairs: the median lies between the middle two */
    ck_assert_uint_eq(above, 390);
    /* exactly the mean of the middle two of the sorted distances */
    qsort(sq, c, sizeof *sq, cmp_dbl);
    ck_assert_double_eq(m4, (sq[389] + sq[390]) / 2);
  }
  /* odd counts of pairs (39 rows: 741), even ones (160 rows: 12 720), and rows in four
   * places only (ties everywhere), from 2 rows: the middle value of the sorted distances,
   * or the mean of the middle two, bit for bit */
  for (size_t rows = 2; rows <= 160; rows += (rows < 10 ? 1 : rows < 39 ? 29 : 121))
    for (int ties = 0; ties < 2; ties++) {
      double *sq, *y, m5;
      size_t c = 0;
      if (ties && rows < 5) continue; /* a row in each place or fewer: no tie to speak of */
      sq = malloc(rows * rows * sizeof *sq);
      y = malloc(rows * d * sizeof *y);
      for (size_t i = 0; i < rows * d; i++) y[i] = ties ? (double)((i / d) % 4) : x[i];
      slem_kernel_parse(&k, "rbf", &err);
      ck_assert_int_eq(slem_kernel_estimate_gamma(&k, &m5, y, rows, d, 1000, 7, &err), SLEM_OK);
      for (size_t i = 0; i < rows; i++)
        for (size_t j = i + 1; j < rows; j++) {
          double t = 0;
          for (size_t l = 0; l < d; l++) t += (y[i * d + l] - y[j * d + l]) * (y[i * d + l] - y[j * d + l]);
          sq[c++] = t;
        }
      qsort(sq, c, sizeof *sq, cmp_dbl);
      ck_assert_double_eq(m5, c % 2 ? sq[c / 2] : (sq[c / 2 - 1] + sq[c / 2]) / 2);
      free(y);
      free(sq);
    }
  free(x);
}
END_TEST

/* Kernel cache of negatives x(n, d) through the real write and read path. */
static SlemCache *kernel_cache_as(const char *spec, const double *x, size_t n, size_t d,
                                  size_t rank, double lambda, SlemKernelFactor factor,
                                  int couple);
static SlemCache *kernel_cache(const char *spec, const double *x, size_t n, size_t d, size_t rank,
                               double lambda) {
  return kernel_cache_as(spec, x, n, d, rank, lambda, SLEM_FACTOR_ICD, 0);
}

static SlemCache *kernel_cache_as(const char *spec, const double *x, size_t n, size_t d,
                                  size_t rank, double lambda, SlemKernelFactor factor,
                                  int couple) {
  SlemKernel k;
  SlemKernelStats *ks = NULL;
  SlemCache *c = NULL;
  SlemError err;
  char *path = tu_path("k.slem");
  double *xp = malloc(n * d * sizeof *xp);
  memcpy(xp, x, n * d * sizeof *xp);
  ck_assert_int_eq(slem_kernel_parse(&k, spec, &err), SLEM_OK);
  ck_assert_int_eq(slem_kernel_prepare(&k, xp, n, d, "x", 1, &err), SLEM_OK);
  ck_assert_msg(slem_kernel_stats_new(&ks, &k, xp, n, d, rank, 0, lambda, -1, factor, couple,
                                      &err) == SLEM_OK, "%s", err.msg);
  SlemKernelSections sec = {ks->pivots, ks->lp, ks->mu_b, ks->ginv, ks->negs, ks->proj, ks->bneg};
  ck_assert_int_eq(slem_cache_write_kernel(path, d, n, &ks->info, &sec, NULL, &err), SLEM_OK);
  ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_str_eq(c->kind, "kernel");
  ck_assert_ptr_nonnull(slem_cache_kernel(c));
  ck_assert_uint_eq(slem_cache_kernel(c)->r, ks->info.r);
  slem_kernel_stats_free(ks);
  free(xp);
  free(path);
  return c;
}

/* The exemplar h of positive p in the RKHS, solved densely: with the points
 * a = [p, x_1..x_n], weights w = [theta, 1/n, ..] and targets [1, -1, ..], stationarity of
 * J gives (lambda I + W K) alpha + b W 1 = W y and 1^T alpha = 0. */
static void dense_alpha(double *alpha, const SlemKernel *k, const double *p, const double *x,
                        size_t n, size_t d, double theta, double lambda) {
  size_t m = n + 1, s = m + 1;
  gsl_matrix *A = gsl_matrix_calloc(s, s);
  gsl_vector *rhs = gsl_vector_calloc(s), *sol = gsl_vector_alloc(s);
  gsl_permutation *perm = gsl_permutation_alloc(s);
  int sgn;
  for (size_t i = 0; i < m; i++) {
    const double *ai = i ? x + (i - 1) * d : p;
    double wi = i ? 1.0 / (double)n : theta;
    for (size_t j = 0; j < m; j++) {
      const double *aj = j ? x + (j - 1) * d : p;
      gsl_matrix_set(A, i, j, wi * slem_kernel_eval(k, ai, aj, d) + (i == j ? lambda : 0));
    }
    gsl_matrix_set(A, i, m, wi);
    gsl_matrix_set(A, m, i, 1);
    gsl_vector_set(rhs, i, wi * (i ? -1 : 1));
  }
  ck_assert_int_eq(gsl_linalg_LU_decomp(A, perm, &sgn), 0);
  ck_assert_int_eq(gsl_linalg_LU_solve(A, perm, rhs, sol), 0);
  for (size_t i = 0; i < m; i++) alpha[i] = gsl_vector_get(sol, i);
  gsl_matrix_free(A);
  gsl_vector_free(rhs);
  gsl_vector_free(sol);
  gsl_permutation_free(perm);
}

/* (h|h') = sum_ij alpha_i alpha'_j k(a_i, a'_j) */
static double rkhs_dot(const SlemKernel *k, const double *al, const double *p, const double *al2,
                       const double *p2, const double *x, size_t n, size_t d) {
  double s = 0;
  for (size_t i = 0; i <= n; i++)
    for (size_t j = 0; j <= n; j++)
      s += al[i] * al2[j] * slem_kernel_eval(k, i ? x + (i - 1) * d : p, j ? x + (j - 1) * d : p2, d);
  return s;
}

START_TEST(exact_similarity_equals_dense_rkhs_solution) {
  static const char *specs[] = {"rbf:gamma=0.4", "poly:gamma=0.5,c=1,p=2"};
  size_t n = 25, d = 3;
  double x[75], pos[4 * 3], s[16], alpha[4][26];
  SlemError err;
  tu_seed(44);
  tu_gaussian_rows(x, n, d, 0.0);
  tu_gaussian_rows(pos, 4, d, 0.5);
  for (size_t sp = 0; sp < 2; sp++) {
    SlemKernel k;
    SlemCache *c;
    SlemKProj *q = NULL;
    double lambda = sp ? 0.5 : 0.05;
    slem_kernel_parse(&k, specs[sp], &err);
    c = kernel_cache(specs[sp], x, n, d, n, lambda);
    if (sp == 0) ck_assert_uint_eq(slem_cache_kernel(c)->r, n); /* RBF: full rank */
    ck_assert_int_eq(slem_kproj_new(&q, c, 4, 0, &err), SLEM_OK);
    ck_assert_int_eq(slem_kproj_run(q, pos, 4, "pos", 1, &err), SLEM_OK);
    slem_kproj_similarity(s, q, q);
    for (size_t i = 0; i < 4; i++) dense_alpha(alpha[i], &k, pos + i * d, x, n, d, 1.0, lambda);
    for (size_t i = 0; i < 4; i++)
      for (size_t j = 0; j < 4; j++) {
        double hh = rkhs_dot(&k, alpha[i], pos + i * d, alpha[j], pos + j * d, x, n, d);
        double ni = rkhs_dot(&k, alpha[i], pos + i * d, alpha[i], pos + i * d, x, n, d);
        double nj = rkhs_dot(&k, alpha[j], pos + j * d, alpha[j], pos + j * d, x, n, d);
        double want = hh / sqrt(ni * nj);
        ck_assert_msg(fabs(s[i * 4 + j] - want) < 1e-8, "%s: s(%zu, %zu) = %.12f, dense %.12f",
                      specs[sp], i, j, s[i * 4 + j], want);
      }
    /* theta changes the norm of h, not its direction */
    {
      double a2[26];
      dense_alpha(a2, &k, pos, x, n, d, 20.0, lambda);
      double c01 = rkhs_dot(&k, alpha[0], pos, a2, pos, x, n, d) /
                   sqrt(rkhs_dot(&k, alpha[0], pos, alpha[0], pos, x, n, d) *
                        rkhs_dot(&k, a2, pos, a2, pos, x, n, d));
      ck_assert_double_eq_tol(c01, 1, 1e-10);
    }
    slem_kproj_free(q);
    slem_cache_free(c);
  }
}
END_TEST

START_TEST(linear_kernel_equals_linear_slem) {
  size_t n = 200, d = 8, nq = 6;
  double *x = malloc(n * d * sizeof *x), q[6 * 8], s[36], lin[6 * 8], expl[6 * 8];
  double lambda = 0.3, used, ainv[64];
  SlemStats *st = NULL;
  SlemCache *kc, *lc = NULL;
  SlemKProj *p = NULL;
  SlemEncoder *e = NULL;
  SlemError err;
  char *path = tu_path("lin.slem");
  tu_seed(45);
  tu_gaussian_rows(x, n, d, 2.0);
  tu_gaussian_rows(q, nq, d, 2.5);
  for (size_t i = 0; i < n; i++) x[i * d + 7] = 0; /* a zero dimension: rank 7 < d */
  kc = kernel_cache("linear", x, n, d, 64, lambda);
  ck_assert_uint_eq(slem_cache_kernel(kc)->r, 7);
  {
    double *y = malloc(n * d * sizeof *y);
    memcpy(y, x, n * d * sizeof *y);
    slem_stats_new(&st, d, 256, 0, &err);
    ck_assert_int_eq(slem_stats_add(st, y, n, &err) | slem_stats_finish(st, &err), SLEM_OK);
    ck_assert_int_eq(slem_stats_inverse(st, ainv, &used, lambda, -1, &err), SLEM_OK);
    SlemLinearInfo info = {used, -1, 0, 0};
    slem_cache_write_linear(path, d, n, &info, slem_stats_mean(st), ainv, NULL, &err);
    ck_assert_int_eq(slem_cache_read(&lc, path, &err), SLEM_OK);
    free(y);
  }
  slem_encoder_new(&e, lc, SLEM_ENCODE_UNIT, 1, nq, &err);
  slem_encoder_run_f64(e, lin, q, nq);
  slem_kproj_new(&p, kc, nq, 0, &err);
  slem_kproj_run(p, q, nq, "q", 1, &err);
  slem_kproj_similarity(s, p, p);
  slem_kproj_descriptors_f64(p, expl);
  for (size_t i = 0; i < nq; i++)
    for (size_t j = 0; j < nq; j++) {
      double dl = 0, de = 0;
      for (size_t l = 0; l < d; l++) dl += lin[i * d + l] * lin[j * d + l];
      for (size_t l = 0; l < slem_cache_kernel(kc)->r; l++) de += expl[i * slem_cache_kernel(kc)->r + l] * expl[j * slem_cache_kernel(kc)->r + l];
      /* the exact similarity keeps the part outside the negatives' span: linear SLEM */
      ck_assert_msg(fabs(s[i * nq + j] - dl) < 1e-10, "s = %.12f, linear %.12f", s[i * nq + j], dl);
      /* the explicit descriptor drops it: here it must differ, and stay within norm 1 */
      if (i == j) ck_assert_double_lt(de, 1 - 1e-6);
    }
  slem_encoder_free(e);
  slem_kproj_free(p);
  slem_cache_free(kc);
  slem_cache_free(lc);
  slem_stats_free(st);
  free(x);
  free(path);
}
END_TEST

/* ---- the factors and the coupling against dense solutions of their problems ----
 *
 * Each variant claims to solve the exemplar problem of a positive p and the n negatives
 * with every negative x_i replaced by psi(x_i), its projection on a subspace: the span of
 * the pivots (icd, full), the top r eigen-directions of K (kpca), and with the coupling
 * that subspace plus phi(p). Here psi(x_i) is written as a combination of m points S
 * (coef(n + 1, m), row 0 the positive, p the last point of S), the Gram matrix of
 * [p, psi(x_1), ..] is formed and the problem solved densely by LU (dense_alpha_gram), and
 * descriptors are compared through their RKHS inner products: no line of kproj.c. */
typedef struct Problem {
  size_t m;
  double *pts;  /* pts(m, d) */
  double *coef; /* coef(n + 1, m) */
} Problem;

static double *gram(const SlemKernel *k, const double *a, size_t na, const double *b, size_t nb,
                    size_t d) {
  double *g = malloc(na * nb * sizeof *g);
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < nb; j++) g[i * nb + j] = slem_kernel_eval(k, a + i * d, b + j * d, d);
  return g;
}

/* X(m, nrhs) = A(m, m)^-1 B(m, nrhs), by LU. */
static void lu_solve(double *xo, const double *a, size_t m, const double *b, size_t nrhs) {
  gsl_matrix *A = gsl_matrix_alloc(m, m);
  gsl_permutation *perm = gsl_permutation_alloc(m);
  gsl_vector *rhs = gsl_vector_alloc(m), *sol = gsl_vector_alloc(m);
  int sgn;
  memcpy(A->data, a, m * m * sizeof *a);
  ck_assert_int_eq(gsl_linalg_LU_decomp(A, perm, &sgn), 0);
  for (size_t c = 0; c < nrhs; c++) {
    for (size_t i = 0; i < m; i++) gsl_vector_set(rhs, i, b[i * nrhs + c]);
    ck_assert_int_eq(gsl_linalg_LU_solve(A, perm, rhs, sol), 0);
    for (size_t i = 0; i < m; i++) xo[i * nrhs + c] = gsl_vector_get(sol, i);
  }
  gsl_matrix_free(A);
  gsl_permutation_free(perm);
  gsl_vector_free(rhs);
  gsl_vector_free(sol);
}

/* dense_alpha with the Gram matrix kt(n + 1, n + 1) of [p, psi(x_1), ..] given. */
static void dense_alpha_gram(double *alpha, const double *kt, size_t n, double theta,
                             double lambda) {
  size_t m = n + 1, s = m + 1;
  double *a = calloc(s * s, sizeof *a), *rhs = calloc(s, sizeof *rhs), *sol = malloc(s * sizeof *sol);
  for (size_t i = 0; i < m; i++) {
    double wi = i ? 1.0 / (double)n : theta;
    for (size_t j = 0; j < m; j++) a[i * s + j] = wi * kt[i * m + j] + (i == j ? lambda : 0);
    a[i * s + m] = wi;
    a[m * s + i] = 1;
    rhs[i] = wi * (i ? -1 : 1);
  }
  lu_solve(sol, a, s, rhs, 1);
  memcpy(alpha, sol, m * sizeof *alpha);
  free(a);
  free(rhs);
  free(sol);
}

/* Negatives on span(basis (mb rows)), or on span(basis, p) when couple: S = basis then p. */
static void problem_span(Problem *pr, const SlemKernel *k, const double *basis, size_t mb,
                         const double *p, const double *x, size_t n, size_t d, int couple) {
  size_t m = mb + 1, ms = couple ? m : mb;
  double *kss, *ksx, *c;
  pr->m = m;
  pr->pts = malloc(m * d * sizeof *pr->pts);
  memcpy(pr->pts, basis, mb * d * sizeof *basis);
  memcpy(pr->pts + mb * d, p, d * sizeof *p);
  pr->coef = calloc((n + 1) * m, sizeof *pr->coef);
  pr->coef[m - 1] = 1; /* the positive is itself */
  kss = gram(k, pr->pts, ms, pr->pts, ms, d);
  ksx = gram(k, pr->pts, ms, x, n, d);
  c = malloc(ms * n * sizeof *c);
  lu_solve(c, kss, ms, ksx, n); /* the projection of phi(x_i): K_SS^-1 k(S, x_i) */
  for (size_t i = 0; i < n; i++)
    for (size_t s = 0; s < ms; s++) pr->coef[(i + 1) * m + s] = c[s * n + i];
  free(kss);
  free(ksx);
  free(c);
}

/* The top r eigenpairs of the uncentred K of x(n, d): u(n, r) by columns, ev(r), largest
 * first, each eigenvector's entry of largest magnitude positive. */
static void top_eigen(double *u, double *ev, const SlemKernel *k, const double *x, size_t n,
                      size_t d, size_t r) {
  double *kk = gram(k, x, n, x, n, d);
  gsl_matrix_view a = gsl_matrix_view_array(kk, n, n);
  gsl_matrix *v = gsl_matrix_alloc(n, n);
  gsl_vector *e = gsl_vector_alloc(n);
  gsl_eigen_symmv_workspace *w = gsl_eigen_symmv_alloc(n);
  gsl_eigen_symmv(&a.matrix, e, v, w);
  gsl_eigen_symmv_sort(e, v, GSL_EIGEN_SORT_VAL_DESC);
  for (size_t l = 0; l < r; l++) {
    size_t jm = 0;
    double sg;
    ev[l] = gsl_vector_get(e, l);
    for (size_t i = 1; i < n; i++)
      if (fabs(gsl_matrix_get(v, i, l)) > fabs(gsl_matrix_get(v, jm, l))) jm = i;
    sg = gsl_matrix_get(v, jm, l) < 0 ? -1 : 1;
    for (size_t i = 0; i < n; i++) u[i * r + l] = sg * gsl_matrix_get(v, i, l);
  }
  gsl_eigen_symmv_free(w);
  gsl_matrix_free(v);
  gsl_vector_free(e);
  free(kk);
}

/* Negatives on E = span of the top r eigen-directions (plus phi(p) when couple): S is the
 * negatives then p; P_E phi(y) = sum_j [M k(X, y)]_j phi(x_j), M = U_r D_r^-1 U_r^T. */
static void problem_kpca(Problem *pr, const SlemKernel *k, const double *u, const double *ev,
                         size_t r, const double *p, const double *x, size_t n, size_t d,
                         int couple) {
  size_t m = n + 1;
  double *mm = calloc(n * n, sizeof *mm), *kxx = gram(k, x, n, x, n, d), *kp = gram(k, x, n, p, 1, d);
  double *ep = calloc(m, sizeof *ep), u2;
  pr->m = m;
  pr->pts = malloc(m * d * sizeof *pr->pts);
  memcpy(pr->pts, x, n * d * sizeof *x);
  memcpy(pr->pts + n * d, p, d * sizeof *p);
  pr->coef = calloc((n + 1) * m, sizeof *pr->coef);
  pr->coef[m - 1] = 1;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      for (size_t l = 0; l < r; l++) mm[i * n + j] += u[i * r + l] * u[j * r + l] / ev[l];
  /* e = (phi(p) - P_E phi(p)) / u over S */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) ep[i] -= mm[i * n + j] * kp[j];
  u2 = slem_kernel_eval(k, p, p, d);
  for (size_t i = 0; i < n; i++) u2 += ep[i] * kp[i];
  ep[n] = 1;
  for (size_t i = 0; i < m; i++) ep[i] /= sqrt(u2);
  for (size_t i = 0; i < n; i++) {
    double *row = pr->coef + (i + 1) * m, we = 0;
    for (size_t j = 0; j < n; j++) /* P_E phi(x_i) = sum_j [M K e_i]_j phi(x_j) */
      for (size_t l = 0; l < n; l++) row[j] += mm[j * n + l] * kxx[l * n + i];
    if (!couple) continue;
    for (size_t s = 0; s < m; s++) we += ep[s] * (s < n ? kxx[s * n + i] : kp[i]); /* <phi(x_i), e> */
    for (size_t s = 0; s < m; s++) row[s] += we * ep[s];
  }
  free(mm);
  free(kxx);
  free(kp);
  free(ep);
}

/* h = sum_s beta_s phi(S_s), the solution of the problem at theta 1. */
static double *problem_solve(const Problem *pr, const SlemKernel *k, size_t n, size_t d,
                             double lambda) {
  size_t m = pr->m, np = n + 1;
  double *kss = gram(k, pr->pts, m, pr->pts, m, d), *ck = calloc(np * m, sizeof *ck);
  double *kt = calloc(np * np, sizeof *kt), *alpha = malloc(np * sizeof *alpha);
  double *beta = calloc(m, sizeof *beta);
  for (size_t i = 0; i < np; i++)
    for (size_t s = 0; s < m; s++)
      for (size_t t = 0; t < m; t++) ck[i * m + t] += pr->coef[i * m + s] * kss[s * m + t];
  for (size_t i = 0; i < np; i++)
    for (size_t j = 0; j < np; j++)
      for (size_t t = 0; t < m; t++) kt[i * np + j] += ck[i * m + t] * pr->coef[j * m + t];
  dense_alpha_gram(alpha, kt, n, 1.0, lambda);
  for (size_t i = 0; i < np; i++)
    for (size_t s = 0; s < m; s++) beta[s] += alpha[i] * pr->coef[i * m + s];
  free(kss);
  free(ck);
  free(kt);
  free(alpha);
  return beta;
}

static double problem_dot(const Problem *a, const double *ba, const Problem *b, const double *bb,
                          const SlemKernel *k, size_t d) {
  double s = 0;
  for (size_t i = 0; i < a->m; i++)
    for (size_t j = 0; j < b->m; j++)
      s += ba[i] * bb[j] * slem_kernel_eval(k, a->pts + i * d, b->pts + j * d, d);
  return s;
}

START_TEST(factors_and_coupling_equal_dense_solutions) {
  static const char *specs[] = {"rbf:gamma=0.4", "exp:gamma=0.6", "quad:gamma=0.5"};
  enum { N = 30, D = 3, NQ = 6, R = 8 };
  double x[N * D], pos[NQ * D], lambda = 0.05;
  SlemError err;
  tu_seed(46);
  tu_gaussian_rows(x, N, D, 0.0);
  tu_gaussian_rows(pos, NQ, D, 0.7);
  for (size_t sp = 0; sp < 3; sp++)
    for (int f = 0; f < 3; f++) {
      SlemKernel k;
      SlemCache *c;
      size_t r;
      double u[N * R], ev[R];
      slem_kernel_parse(&k, specs[sp], &err);
      c = kernel_cache_as(specs[sp], x, N, D, R, lambda, (SlemKernelFactor)f, 1);
      r = slem_cache_kernel(c)->r;
      ck_assert_uint_eq(slem_cache_kernel(c)->factor, (unsigned)f);
      if (f != SLEM_FACTOR_FULL) ck_assert_uint_eq(r, R);
      if (f == SLEM_FACTOR_KPCA) top_eigen(u, ev, &k, x, N, D, r);
      for (int couple = 0; couple < 2; couple++) {
        SlemKProj *q = NULL, *qf = NULL;
        double s[NQ * NQ], sf[NQ * NQ], dense[NQ * NQ], y[NQ * N], *beta[NQ], hh[NQ];
        Problem pr[NQ];
        ck_assert_int_eq(slem_kproj_new(&q, c, NQ, couple, &err), SLEM_OK);
        ck_assert_int_eq(slem_kproj_new(&qf, c, NQ, couple, &err), SLEM_OK);
        ck_assert_int_eq(slem_kproj_run(q, pos, NQ, "pos", 1, &err), SLEM_OK);
        ck_assert_int_eq(slem_kproj_run_fixed(qf, pos, NQ, "pos", 1, &err), SLEM_OK);
        slem_kproj_similarity(s, q, q);
        slem_kproj_similarity(sf, qf, qf);
        slem_kproj_descriptors_f64(q, y);
        for (size_t i = 0; i < NQ; i++) {
          if (f == SLEM_FACTOR_KPCA)
            problem_kpca(&pr[i], &k, u, ev, r, pos + i * D, x, N, D, couple);
          else
            problem_span(&pr[i], &k, slem_cache_kernel(c)->pivots, r, pos + i * D, x, N, D, couple);
          beta[i] = problem_solve(&pr[i], &k, N, D, lambda);
          hh[i] = problem_dot(&pr[i], beta[i], &pr[i], beta[i], &k, D);
        }
        for (size_t i = 0; i < NQ; i++) {
          /* the explicit descriptor: h's coordinates on the orthonormal basis of E, / |h| */
          double cd[N] = {0}, dot = 0, n1 = 0, n2 = 0;
          for (size_t l = 0; l < r; l++) {
            double t = 0;
            for (size_t sidx = 0; sidx < pr[i].m; sidx++) {
              const double *pt = pr[i].pts + sidx * D;
              double kl;
              if (f == SLEM_FACTOR_KPCA) { /* <e_l, phi(y)> = U_l^T k(X, y) / sqrt(D_l) */
                kl = 0;
                for (size_t j = 0; j < N; j++) kl += u[j * r + l] * slem_kernel_eval(&k, x + j * D, pt, D);
                kl /= sqrt(ev[l]);
              } else {
                kl = slem_kernel_eval(&k, slem_cache_kernel(c)->pivots + l * D, pt, D);
              }
              t += beta[i][sidx] * kl;
            }
            cd[l] = t;
          }
          if (f != SLEM_FACTOR_KPCA) { /* Cholesky basis of the pivots: L_P^-1 k(P, h) */
            double *kpp = gram(&k, slem_cache_kernel(c)->pivots, r, slem_cache_kernel(c)->pivots, r, D);
            gsl_matrix_view lv = gsl_matrix_view_array(kpp, r, r);
            gsl_vector_view cv = gsl_vector_view_array(cd, r);
            ck_assert_int_eq(gsl_linalg_cholesky_decomp1(&lv.matrix), 0);
            gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, &lv.matrix, &cv.vector);
            free(kpp);
          }
          for (size_t l = 0; l < r; l++) {
            dot += cd[l] * y[i * r + l];
            n1 += cd[l] * cd[l];
            n2 += y[i * r + l] * y[i * r + l];
          }
          ck_assert_msg(1 - dot / sqrt(n1 * n2) <= 1e-6, "%s %s couple %d: explicit %zu: 1 - cos = %g",
                        specs[sp], slem_kernel_factor_name(f), couple, i, 1 - dot / sqrt(n1 * n2));
          ck_assert_msg(fabs(sqrt(n2) - sqrt(n1 / hh[i])) <= 1e-8, "%s %s couple %d: |y| %.12f, "
                        "dense %.12f", specs[sp], slem_kernel_factor_name(f), couple, sqrt(n2),
                        sqrt(n1 / hh[i]));
          for (size_t j = 0; j < NQ; j++) {
            double want = problem_dot(&pr[i], beta[i], &pr[j], beta[j], &k, D) / sqrt(hh[i] * hh[j]);
            ck_assert_msg(fabs(s[i * NQ + j] - want) < 1e-8, "%s %s couple %d: s(%zu, %zu) = %.12f, "
                          "dense %.12f", specs[sp], slem_kernel_factor_name(f), couple, i, j,
                          s[i * NQ + j], want);
            ck_assert_msg(fabs(sf[i * NQ + j] - s[i * NQ + j]) < 1e-10, "fixed-order projection");
            dense[i * NQ + j] = want;
          }
        }
        /* the rankings: every pair of rows in the dense solution's order */
        for (size_t i = 0; i < NQ; i++)
          for (size_t a = 0; a < NQ; a++)
            for (size_t b2 = 0; b2 < NQ; b2++)
              if (dense[i * NQ + a] > dense[i * NQ + b2] + 1e-7)
                ck_assert_msg(s[i * NQ + a] > s[i * NQ + b2], "%s %s couple %d: query %zu ranks "
                              "%zu after %zu", specs[sp], slem_kernel_factor_name(f), couple, i, a, b2);
        /* the coupling changes the answer where the negatives leave the span */
        if (couple && f != SLEM_FACTOR_FULL) {
          SlemKProj *p0 = NULL;
          double s0[NQ * NQ], diff = 0;
          slem_kproj_new(&p0, c, NQ, 0, &err);
          slem_kproj_run(p0, pos, NQ, "pos", 1, &err);
          slem_kproj_similarity(s0, p0, p0);
          for (size_t i = 0; i < NQ * NQ; i++) diff = fmax(diff, fabs(s0[i] - s[i]));
          ck_assert_msg(diff > 1e-4, "%s %s: coupled = uncoupled (%g)", specs[sp],
                        slem_kernel_factor_name(f), diff);
          slem_kproj_free(p0);
        }
        for (size_t i = 0; i < NQ; i++) {
          free(pr[i].pts);
          free(pr[i].coef);
          free(beta[i]);
        }
        slem_kproj_free(q);
        slem_kproj_free(qf);
      }
      slem_cache_free(c);
    }
}
END_TEST

START_TEST(full_factor_coupling_changes_nothing) {
  /* every negative in the span: w = 0, so the coupled solution is the plain one */
  enum { N = 20, D = 2, NQ = 5 };
  double x[N * D], pos[NQ * D], s0[NQ * NQ], s1[NQ * NQ];
  SlemKProj *p0 = NULL, *p1 = NULL;
  SlemError err;
  SlemCache *c;
  tu_seed(47);
  tu_gaussian_rows(x, N, D, 0.0);
  tu_gaussian_rows(pos, NQ, D, 1.0);
  c = kernel_cache_as("rbf:gamma=3", x, N, D, 0, 0.1, SLEM_FACTOR_FULL, 1);
  ck_assert_uint_eq(slem_cache_kernel(c)->r, N); /* K well conditioned: every negative a pivot */
  slem_kproj_new(&p0, c, NQ, 0, &err);
  slem_kproj_new(&p1, c, NQ, 1, &err);
  slem_kproj_run(p0, pos, NQ, "p", 1, &err);
  slem_kproj_run(p1, pos, NQ, "p", 1, &err);
  slem_kproj_similarity(s0, p0, p0);
  slem_kproj_similarity(s1, p1, p1);
  for (size_t i = 0; i < NQ * NQ; i++) ck_assert_double_eq_tol(s0[i], s1[i], 1e-9);
  slem_kproj_free(p0);
  slem_kproj_free(p1);
  slem_cache_free(c);
  /* a cache made without --couple refuses the coupling */
  c = kernel_cache_as("rbf:gamma=0.3", x, N, D, 8, 0.1, SLEM_FACTOR_ICD, 0);
  ck_assert_int_eq(slem_kproj_new(&p1, c, NQ, 1, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "without --couple"));
  slem_cache_free(c);
}
END_TEST

/* The BLAS projections (slem-encode's) run in fixed chunks of rows: the same bits for 1, 2
 * and 3 threads, plain and coupled, icd and kpca. */
START_TEST(kproj_blas_projections_do_not_depend_on_threads) {
  enum { N = 300, D = 6, NQ = 700 };
  double *x = malloc(N * D * sizeof *x), *q = malloc(NQ * D * sizeof *q);
  SlemError err;
  tu_seed(47);
  tu_gaussian_rows(x, N, D, 0.0);
  tu_gaussian_rows(q, NQ, D, 0.0);
  for (int f = 0; f < 2; f++)
    for (int couple = 0; couple < 2; couple++) {
      SlemCache *c = kernel_cache_as("rbf:gamma=0.2", x, N, D, 24, 0.1,
                                     f ? SLEM_FACTOR_KPCA : SLEM_FACTOR_ICD, couple);
      double *y[3];
      for (int t = 0; t < 3; t++) {
        SlemKProj *p;
        y[t] = malloc(NQ * slem_cache_kernel(c)->r * sizeof *y[t]);
        ck_assert_int_eq(slem_kproj_new(&p, c, NQ, couple, &err), SLEM_OK);
        slem_blas_set_threads(t + 1);
        ck_assert_int_eq(slem_kproj_run(p, q, NQ, "q", 1, &err), SLEM_OK);
        slem_blas_set_threads(1);
        slem_kproj_descriptors_f64(p, y[t]);
        slem_kproj_free(p);
      }
      ck_assert_msg(memcmp(y[0], y[1], NQ * slem_cache_kernel(c)->r * sizeof *y[0]) == 0, "factor %d couple %d: 1 vs 2 threads", f, couple);
      ck_assert_msg(memcmp(y[0], y[2], NQ * slem_cache_kernel(c)->r * sizeof *y[0]) == 0, "factor %d couple %d: 1 vs 3 threads", f, couple);
      for (int t = 0; t < 3; t++) free(y[t]);
      slem_cache_free(c);
    }
  free(x);
  free(q);
}
END_TEST

/* What slem-encode --projections stores: unpacked, the rows give the similarities of the
 * rows projected there and then, bit for bit; what cannot be a projection is refused. */
START_TEST(packed_projections_give_the_same_similarities) {
  enum { N = 200, D = 5, NQ = 40 };
  double *x = malloc(N * D * sizeof *x), *q = malloc(NQ * D * sizeof *q);
  SlemError err;
  tu_seed(48);
  tu_gaussian_rows(x, N, D, 0.0);
  tu_gaussian_rows(q, NQ, D, 0.3);
  for (int couple = 0; couple < 2; couple++) {
    SlemCache *c = kernel_cache_as("rbf:gamma=0.2", x, N, D, 16, 0.1, SLEM_FACTOR_ICD, couple);
    size_t w = SLEM_KPROJ_WIDTH(D, slem_cache_kernel(c)->r, couple);
    double *rows = malloc(NQ * w * sizeof *rows), *s0 = malloc(NQ * NQ * sizeof *s0),
           *s1 = malloc(NQ * NQ * sizeof *s1);
    SlemKProj *p, *u;
    ck_assert_int_eq(slem_kproj_new(&p, c, NQ, couple, &err), SLEM_OK);
    ck_assert_int_eq(slem_kproj_new(&u, c, NQ, couple, &err), SLEM_OK);
    ck_assert_int_eq(slem_kproj_run_fixed(p, q, NQ, "q", 1, &err), SLEM_OK);
    slem_kproj_pack(p, rows);
    ck_assert_int_eq(slem_kproj_unpack(u, rows, NQ, "rows", 1, &err), SLEM_OK);
    ck_assert_uint_eq(slem_kproj_rows(u), NQ);
    slem_kproj_similarity(s0, p, p);
    slem_kproj_similarity(s1, p, u);
    ck_assert_msg(memcmp(s0, s1, NQ * NQ * sizeof *s0) == 0, "couple %d: unpacked rows score "
                  "otherwise", couple);
    /* the row's N, after its features, v and z */
    rows[3 * w + D + 2 * slem_cache_kernel(c)->r] = -1;
    ck_assert_int_eq(slem_kproj_unpack(u, rows, NQ, "rows", 11, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, "rows: record 14: a negative norm N (-1)"), "%s", err.msg);
    slem_kproj_free(p);
    slem_kproj_free(u);
    free(rows);
    free(s0);
    free(s1);
    slem_cache_free(c);
  }
  /* the kernels of histograms: no negative feature */
  for (size_t i = 0; i < N * D; i++) x[i] = fabs(x[i]);
  for (size_t i = 0; i < NQ * D; i++) q[i] = fabs(q[i]);
  {
    SlemCache *c = kernel_cache_as("intersection", x, N, D, 16, 0.1, SLEM_FACTOR_ICD, 0);
    double *rows = malloc(NQ * SLEM_KPROJ_WIDTH(D, slem_cache_kernel(c)->r, 0) * sizeof *rows);
    SlemKProj *p, *u;
    ck_assert_int_eq(slem_kproj_new(&p, c, NQ, 0, &err), SLEM_OK);
    ck_assert_int_eq(slem_kproj_new(&u, c, NQ, 0, &err), SLEM_OK);
    ck_assert_int_eq(slem_kproj_run_fixed(p, q, NQ, "q", 1, &err), SLEM_OK);
    slem_kproj_pack(p, rows);
    ck_assert_int_eq(slem_kproj_unpack(u, rows, NQ, "rows", 1, &err), SLEM_OK);
    rows[2] = -0.5;
    ck_assert_int_eq(slem_kproj_unpack(u, rows, NQ, "rows", 1, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, "rows: record 1: value 3 is negative (-0.5)"), "%s", err.msg);
    slem_kproj_free(p);
    slem_kproj_free(u);
    free(rows);
    slem_cache_free(c);
  }
  free(x);
  free(q);
}
END_TEST

/* The kernel recursive SLEM (var_krec.h), stage by stage through the real write and read path:
 * stage 1 is the kernel cache of the negatives, bit for bit; stage s + 1 is the kernel SLEM
 * of the negatives' descriptors through stage s as slem_kproj computes them from the cache
 * read back (what slem-encode -c would write, in double); encoding is the stages in turn. */
static void kproj_desc(double *y, const SlemCache *c, const double *x, size_t b) {
  SlemKProj *p;
  SlemError err;
  ck_assert_int_eq(slem_kproj_new(&p, c, b, 0, &err), SLEM_OK);
  ck_assert_int_eq(slem_kproj_run(p, x, b, "x", 1, &err), SLEM_OK);
  slem_kproj_descriptors_f64(p, y);
  slem_kproj_free(p);
}

START_TEST(kernel_recursive_stages_are_kernel_slem_of_the_descriptors) {
  enum { N = 300, D = 6, NQ = 50, K = 3 };
  double *x = malloc(N * D * sizeof *x), *q = malloc(NQ * D * sizeof *q);
  SlemError err;
  tu_seed(53);
  tu_gaussian_rows(x, N, D, 0.0);
  tu_gaussian_rows(q, NQ, D, 0.0);
  for (int f = 0; f < 2; f++) {
    SlemKernelFactor fac = f ? SLEM_FACTOR_KPCA : SLEM_FACTOR_ICD;
    SlemKRecOpts o = {"rbf:gamma=0.2", K, 24, 0, 0.1, -1, fac, 1000, 1};
    char *path = tu_path("krec.slem");
    SlemCache *c = NULL, *k1 = kernel_cache_as("rbf:gamma=0.2", x, N, D, 24, 0.1, fac, 0);
    const SlemCacheKernelRecursive *kr;
    const SlemCacheKernel *a, *b;
    double residual, *in = malloc(N * D * sizeof *in), *yq = malloc(NQ * D * sizeof *yq);
    double *y = NULL, *want = NULL;
    size_t rank, ds = D, r;
    SlemKRec *enc;
    ck_assert_msg(slem_krec_write_cache(path, x, N, D, "x", &o, NULL, &rank, &residual, NULL, &err) ==
                  SLEM_OK, "%s", err.msg);
    ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_ptr_nonnull(kr = slem_cache_kernel_recursive(c));
    ck_assert_ptr_null(slem_cache_kernel(c));
    ck_assert_uint_eq(kr->depth, K);
    /* stage 1 is the kernel cache */
    a = slem_cache_kernel(k1), b = slem_cache_kernel(kr->stage[0]);
    r = a->r;
    ck_assert_uint_eq(b->r, r);
    ck_assert(a->lambda == b->lambda);
    ck_assert_mem_eq(a->mu, b->mu, r * sizeof *a->mu);
    ck_assert_mem_eq(a->ginv, b->ginv, r * r * sizeof *a->ginv);
    if (f)
      ck_assert_mem_eq(a->proj, b->proj, r * N * sizeof *a->proj);
    else
      ck_assert_mem_eq(a->lp, b->lp, r * r * sizeof *a->lp);
    /* stage s + 1 is kernel SLEM of the descriptors through stage s */
    memcpy(in, x, N * D * sizeof *in);
    memcpy(yq, q, NQ * D * sizeof *yq);
    for (size_t s = 0; s < K; s++) {
      const SlemCache *st = kr->stage[s];
      SlemKernelStats *ks = NULL;
      SlemKernel k;
      double *xp = malloc(N * ds * sizeof *xp);
      ck_assert_uint_eq(st->d, ds);
      memcpy(xp, in, N * ds * sizeof *xp);
      slem_kernel_parse(&k, "rbf:gamma=0.2", &err);
      ck_assert_int_eq(slem_kernel_stats_new(&ks, &k, xp, N, ds, 24, 0, 0.1, -1, fac, 0, &err),
                       SLEM_OK);
      r = slem_cache_kernel(st)->r;
      ck_assert_uint_eq(ks->info.r, r);
      ck_assert_mem_eq(ks->mu_b, slem_cache_kernel(st)->mu, r * sizeof *ks->mu_b);
      ck_assert_mem_eq(ks->ginv, slem_cache_kernel(st)->ginv, r * r * sizeof *ks->ginv);
      slem_kernel_stats_free(ks);
      free(xp);
      y = malloc(N * r * sizeof *y);
      kproj_desc(y, st, in, N);
      free(in);
      in = y;
      want = malloc(NQ * r * sizeof *want);
      kproj_desc(want, st, yq, NQ);
      free(yq);
      yq = want;
      ds = r;
    }
    ck_assert_uint_eq(rank, ds);
    /* encoding: the stages in turn (the same chunks of rows: encstream.h) */
    ck_assert_int_eq(slem_krec_new(&enc, c, NQ, &err), SLEM_OK);
    ck_assert_uint_eq(slem_krec_out_dim(enc), ds);
    y = malloc(NQ * ds * sizeof *y);
    ck_assert_int_eq(slem_krec_run_f64(enc, y, q, NQ, "q", 1, &err), SLEM_OK);
    ck_assert_mem_eq(y, yq, NQ * ds * sizeof *y);
    for (size_t i = 0; i < NQ; i++) {
      double nn = 0;
      for (size_t l = 0; l < ds; l++) nn += yq[i * ds + l] * yq[i * ds + l];
      ck_assert(nn <= 1 + 1e-12);
    }
    slem_krec_free(enc);
    free(y);
    free(in);
    free(yq);
    slem_cache_free(c);
    slem_cache_free(k1);
    free(path);
  }
  free(x);
  free(q);
}
END_TEST

/* A kernel-recursive cache whose header is rewritten by edit (then re-checksummed, as a
 * writer that is not slem could): read back, the status, and the message in msg. */
static int krec_rewritten(char *msg, size_t size, void (*edit)(cJSON *meta, int *drop)) {
  enum { N = 50, D = 3 };
  double x[N * D];
  SlemKRecOpts o = {"rbf:gamma=0.5", 2, 4, 0, 0.1, -1, SLEM_FACTOR_ICD, 1000, 1};
  char *path = tu_path("krec0.slem"), *path2 = tu_path("krec1.slem");
  SlemCache *c = NULL, *c2 = NULL;
  SlemError err;
  SlemContainerSection sec[8];
  cJSON *meta;
  size_t rank, ns = 0;
  double residual;
  int st, drop = -1;
  tu_seed(59);
  tu_gaussian_rows(x, N, D, 0.0);
  ck_assert_int_eq(slem_krec_write_cache(path, x, N, D, "x", &o, NULL, &rank, &residual, NULL, &err),
                   SLEM_OK);
  ck_assert_int_eq(slem_cache_read(&c, path, &err), SLEM_OK);
  ck_assert_ptr_nonnull(meta = cJSON_Parse(slem_cache_json(c)));
  cJSON_DeleteItemFromObjectCaseSensitive(meta, "sections");
  cJSON_DeleteItemFromObjectCaseSensitive(meta, "fingerprint");
  for (size_t s = 0; s < 2; s++) {
    const SlemCache *stc = slem_cache_kernel_recursive(c)->stage[s];
    const SlemCacheKernel *k = slem_cache_kernel(stc);
    static const char *names[2][4] = {{"pivots.1", "lp.1", "mu.1", "ginv.1"},
                                      {"pivots.2", "lp.2", "mu.2", "ginv.2"}};
    sec[ns++] = (SlemContainerSection){names[s][0], k->pivots, k->r, stc->d};
    sec[ns++] = (SlemContainerSection){names[s][1], k->lp, k->r, k->r};
    sec[ns++] = (SlemContainerSection){names[s][2], k->mu, k->r, 0};
    sec[ns++] = (SlemContainerSection){names[s][3], k->ginv, k->r, k->r};
  }
  if (edit) edit(meta, &drop);
  if (drop >= 0) sec[drop] = sec[--ns];
  ck_assert_int_eq(slem_container_write_sections(path2, meta, sec, ns, &err), SLEM_OK);
  st = slem_cache_read(&c2, path2, &err);
  snprintf(msg, size, "%s", st ? err.msg : "");
  slem_cache_free(c2);
  slem_cache_free(c);
  cJSON_Delete(meta);
  free(path);
  free(path2);
  return st;
}

static cJSON *stage_of(cJSON *meta, int s) {
  return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(meta, "stages"), s);
}
static void edit_stage2_d(cJSON *meta, int *drop) {
  cJSON_ReplaceItemInObjectCaseSensitive(stage_of(meta, 1), "d", cJSON_CreateNumber(3));
}
static void edit_depth3(cJSON *meta, int *drop) {
  cJSON_ReplaceItemInObjectCaseSensitive(meta, "depth", cJSON_CreateNumber(3));
}
static void edit_depth1(cJSON *meta, int *drop) {
  cJSON_ReplaceItemInObjectCaseSensitive(meta, "depth", cJSON_CreateNumber(1));
}
static void edit_relative_gamma(cJSON *meta, int *drop) {
  cJSON_ReplaceItemInObjectCaseSensitive(stage_of(meta, 0), "kernel", cJSON_CreateString("rbf:g=1"));
}
static void edit_rank(cJSON *meta, int *drop) {
  cJSON_ReplaceItemInObjectCaseSensitive(stage_of(meta, 1), "r", cJSON_CreateNumber(5));
}
static void drop_ginv2(cJSON *meta, int *drop) { *drop = 7; }

START_TEST(kernel_recursive_cache_refuses_inconsistent_stages) {
  char msg[1024];
  ck_assert_msg(krec_rewritten(msg, sizeof msg, NULL) == SLEM_OK, "%s", msg);
  ck_assert_int_eq(krec_rewritten(msg, sizeof msg, edit_stage2_d), SLEM_EFORMAT);
  ck_assert_msg(strstr(msg, "krec1.slem (stage 2): the JSON header has no input dimension d = 4"),
                "%s", msg);
  ck_assert_int_eq(krec_rewritten(msg, sizeof msg, edit_depth3), SLEM_EFORMAT);
  ck_assert_msg(strstr(msg, "krec1.slem: the JSON header has no object per stage"), "%s", msg);
  ck_assert_int_eq(krec_rewritten(msg, sizeof msg, edit_depth1), SLEM_EFORMAT);
  ck_assert_msg(strstr(msg, "no valid depth"), "%s", msg);
  ck_assert_int_eq(krec_rewritten(msg, sizeof msg, edit_relative_gamma), SLEM_EFORMAT);
  ck_assert_msg(strstr(msg, "krec1.slem (stage 1): the JSON header has no valid kernel"), "%s", msg);
  ck_assert_int_eq(krec_rewritten(msg, sizeof msg, edit_rank), SLEM_EFORMAT);
  ck_assert_msg(strstr(msg, "krec1.slem (stage 2): section 'pivots.2': shape disagrees"), "%s", msg);
  ck_assert_int_eq(krec_rewritten(msg, sizeof msg, drop_ginv2), SLEM_EFORMAT);
  ck_assert_msg(strstr(msg, "krec1.slem (stage 2): section 'ginv.2' is missing"), "%s", msg);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("kernel");
  TCase *tc = tcase_create("kernel");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, kernel_values_against_direct_formulas);
  tcase_add_test(tc, kernel_lanes_equal_kernel_eval_bit_for_bit);
  tcase_add_test(tc, kernel_lanes_without_avx_equal_kernel_eval_bit_for_bit);
  tcase_add_test(tc, kernel_dot_lanes_equal_scalar_bit_for_bit);
  tcase_add_test(tc, kernel_dot_lanes_without_avx_equal_scalar_bit_for_bit);
  tcase_add_test(tc, kernel_dot_lanes_without_fma_equal_scalar_bit_for_bit);
  tcase_add_test(tc, kernel_specs);
  tcase_add_test(tc, kernel_table_members_are_whole);
  tcase_add_test(tc, krec_refuses_histogram_kernels_up_front);
  tcase_add_test(tc, icl_reproduces_pivots_and_trace_decreases);
  tcase_add_test(tc, gamma_estimate_is_deterministic);
  tcase_add_test(tc, exact_similarity_equals_dense_rkhs_solution);
  tcase_add_test(tc, linear_kernel_equals_linear_slem);
  tcase_add_test(tc, factors_and_coupling_equal_dense_solutions);
  tcase_add_test(tc, full_factor_coupling_changes_nothing);
  tcase_add_test(tc, kproj_blas_projections_do_not_depend_on_threads);
  tcase_add_test(tc, packed_projections_give_the_same_similarities);
  tcase_add_test(tc, kernel_recursive_stages_are_kernel_slem_of_the_descriptors);
  tcase_add_test(tc, kernel_recursive_cache_refuses_inconsistent_stages);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
