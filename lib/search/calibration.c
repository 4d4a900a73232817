#include "calibration.h"

#include <errno.h>
#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "io.h"
#include "blas.h"

struct SlemCalibration {
  size_t m;
  SlemSigmoid *sg;
  size_t *npos, *nneg; /* NULL after a read */
};

/* ---- Platt's fit ---- */

/* The negative log-likelihood of one score at z = A s + B with target t, stably. */
static double nll_term(double z, double t) {
  return z >= 0 ? t * z + log1p(exp(-z)) : (t - 1) * z + log1p(exp(z));
}

typedef struct Scores {
  const double *pos, *neg;
  size_t npos, nneg;
  double tpos, tneg;
} Scores;

static double nll(const Scores *S, double A, double B) {
  double f = 0;
  for (size_t i = 0; i < S->npos; i++) f += nll_term(A * S->pos[i] + B, S->tpos);
  for (size_t i = 0; i < S->nneg; i++) f += nll_term(A * S->neg[i] + B, S->tneg);
  return f;
}

/* Gradient (g1, g2) and Hessian (h11, h21, h22) of the NLL in (A, B). */
static void derivatives(const Scores *S, double A, double B, double g[2], double h[3]) {
  g[0] = g[1] = 0;
  h[0] = h[1] = h[2] = 0;
  for (int c = 0; c < 2; c++) {
    const double *s = c ? S->neg : S->pos;
    size_t n = c ? S->nneg : S->npos;
    double t = c ? S->tneg : S->tpos;
    for (size_t i = 0; i < n; i++) {
      double z = A * s[i] + B, p, q;
      if (z >= 0) {
        double e = exp(-z);
        p = e / (1 + e);
        q = 1 / (1 + e);
      } else {
        double e = exp(z);
        p = 1 / (1 + e);
        q = e / (1 + e);
      }
      h[0] += s[i] * s[i] * p * q;
      h[1] += s[i] * p * q;
      h[2] += p * q;
      g[0] += s[i] * (t - p);
      g[1] += t - p;
    }
  }
}

int slem_calibration_platt_fit(SlemSigmoid *out, const double *pos, size_t npos,
                               const double *neg, size_t nneg, int *iters, SlemError *err) {
  Scores S = {pos, neg, npos, nneg, (npos + 1.0) / (npos + 2.0), 1.0 / (nneg + 2.0)};
  double A = 0, B = log((nneg + 1.0) / (npos + 1.0)), f, smax = 0, smin = INFINITY,
         smaxv = -INFINITY;
  int it;
  const int max_iter = 200;

  if (iters) *iters = 0;
  if (npos == 0 || nneg == 0)
    return slem_error(err, SLEM_EINVAL, "%s", npos == 0 ? "no positive" : "no negative");
  for (int c = 0; c < 2; c++)
    for (size_t i = 0; i < (c ? nneg : npos); i++) {
      double s = c ? neg[i] : pos[i];
      if (!isfinite(s)) return slem_error(err, SLEM_EINVAL, "a score is not finite");
      if (fabs(s) > smax) smax = fabs(s);
      if (s < smin) smin = s;
      if (s > smaxv) smaxv = s;
    }
  if (smin == smaxv)
    return slem_error(err, SLEM_ENUMERIC, "every score is %.9g: no sigmoid fits", smin);
  f = nll(&S, A, B);
  for (it = 0; it < max_iter; it++) {
    double g[2], h[3], det, dA, dB, gd, step;
    derivatives(&S, A, B, g, h);
    /* Platt's and Lin et al.'s 1e-5 is loose for a reference; stop at the rounding level
     * of the sums instead */
    if (fabs(g[0]) <= 1e-13 * (double)(npos + nneg) * (1 + smax) &&
        fabs(g[1]) <= 1e-13 * (double)(npos + nneg))
      break;
    h[0] += 1e-12; /* Lin et al.'s sigma: keeps the Hessian positive definite */
    h[2] += 1e-12;
    det = h[0] * h[2] - h[1] * h[1];
    dA = -(h[2] * g[0] - h[1] * g[1]) / det;
    dB = -(-h[1] * g[0] + h[0] * g[1]) / det;
    gd = g[0] * dA + g[1] * dB;
    for (step = 1; step >= 1e-10; step /= 2) {
      double nA = A + step * dA, nB = B + step * dB, nf = nll(&S, nA, nB);
      if (nf < f + 1e-4 * step * gd) {
        A = nA;
        B = nB;
        f = nf;
        break;
      }
    }
    if (step < 1e-10) {
      /* Near the optimum the decrease is below the rounding of f and Armijo's test cannot
       * see it: take the full Newton step if it shrinks the gradient (Newton converges
       * quadratically there), else stop */
      double ng[2], nh[3];
      derivatives(&S, A + dA, B + dB, ng, nh);
      if (fabs(ng[0]) + fabs(ng[1]) * (1 + smax) < fabs(g[0]) + fabs(g[1]) * (1 + smax)) {
        A += dA;
        B += dB;
        f = nll(&S, A, B);
        continue;
      }
      if (fabs(g[0]) <= 1e-5 * (1 + smax) && fabs(g[1]) <= 1e-5) break;
      return slem_error(err, SLEM_ENUMERIC, "Platt's fit: the line search failed at A = %g, "
                        "B = %g", A, B);
    }
  }
  if (iters) *iters = it;
  if (it == max_iter)
    return slem_error(err, SLEM_ENUMERIC, "Platt's fit did not converge in %d Newton steps",
                      max_iter);
  if (A == 0)
    return slem_error(err, SLEM_ENUMERIC, "Platt's fit gives a flat sigmoid (A = 0): the "
                      "scores do not tell positives from negatives");
  out->a = -A;
  out->b = -B / A;
  return SLEM_OK;
}

double slem_calibration_sigmoid(const SlemSigmoid *sg, double s) {
  double z = -sg->a * (s - sg->b);
  if (z >= 0) {
    double e = exp(-z);
    return e / (1 + e);
  }
  return 1 / (1 + exp(z));
}

/* ---- the calibration object ---- */

static int calibration_new(SlemCalibration **self, size_t m, int counts, SlemError *err) {
  SlemCalibration *c = calloc(1, sizeof *c);
  *self = NULL;
  if (c) {
    c->m = m;
    c->sg = calloc(m ? m : 1, sizeof *c->sg);
    if (counts) {
      c->npos = calloc(m ? m : 1, sizeof *c->npos);
      c->nneg = calloc(m ? m : 1, sizeof *c->nneg);
    }
  }
  if (!c || !c->sg || (counts && (!c->npos || !c->nneg))) {
    slem_calibration_free(c);
    return slem_error(err, SLEM_ENOMEM, "out of memory for %zu sigmoids", m);
  }
  *self = c;
  return SLEM_OK;
}

void slem_calibration_free(SlemCalibration *self) {
  if (!self) return;
  free(self->sg);
  free(self->npos);
  free(self->nneg);
  free(self);
}

size_t slem_calibration_count(const SlemCalibration *self) { return self->m; }
const SlemSigmoid *slem_calibration_get(const SlemCalibration *self, size_t i) {
  return &self->sg[i];
}
void slem_calibration_counts(const SlemCalibration *self, size_t i, size_t *npos,
                             size_t *nneg) {
  *npos = self->npos ? self->npos[i] : 0;
  *nneg = self->nneg ? self->nneg[i] : 0;
}

/* Reads a whole vector file into a new x(n, d). */
static int read_vectors(double **x, size_t *n, size_t *d, const char *path, SlemFormat fmt,
                        SlemError *err) {
  SlemVecReader *r = NULL;
  size_t cap = 0, got, rows;
  double *buf = NULL;
  int status;

  *x = NULL;
  *n = 0;
  if ((status = slem_vecreader_open(&r, path, fmt, err)) != SLEM_OK) return status;
  *d = slem_vecreader_dim(r);
  rows = slem_block_rows(*d);
  for (;;) {
    if (*n + rows > cap) {
      size_t ncap = cap ? 2 * cap : rows;
      double *p;
      while (ncap < *n + rows) ncap *= 2;
      p = realloc(buf, ncap * *d * sizeof *p);
      if (!p) {
        status = slem_error(err, SLEM_ENOMEM, "%s: out of memory after %zu vectors", path, *n);
        goto cleanup;
      }
      buf = p;
      cap = ncap;
    }
    if ((status = slem_vecreader_read(r, buf + *n * *d, rows, &got, err)) != SLEM_OK)
      goto cleanup;
    if (got == 0) break;
    *n += got;
  }
  *x = buf;
  buf = NULL;
cleanup:
  free(buf);
  slem_vecreader_free(r);
  return status;
}

typedef struct ScoreJob {
  double *scores;
  const double *x, *c;
  size_t m, d;
} ScoreJob;

/* Rows [lo, hi) of the scores, one BLAS call on this thread: a multithreaded dgemm's bits
 * depend on its thread count, and the fitted calibration must not. */
static void score_rows(void *ctx, size_t lo, size_t hi) {
  const ScoreJob *j = ctx;
  size_t m = j->m, d = j->d;
  double *scores = j->scores + lo * m;
  for (size_t i = 0; i < hi - lo; i++)
    for (size_t e = 0; e < m; e++) scores[i * m + e] = j->c[e * (d + 1) + d];
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(hi - lo), (int)m, (int)d, 1.0,
              j->x + lo * d, (int)d, j->c, (int)(d + 1), 1.0, scores, (int)m);
}

/* scores(n, m) = x(n, d) W^T + b for classifiers c(m, d + 1), in fixed chunks of 256 rows */
static void score(double *scores, const double *x, size_t n, const double *c, size_t m,
                  size_t d) {
  ScoreJob j = {scores, x, c, m, d};
  slem_blas_par_chunks(n, 256, score_rows, &j);
}

/* A file's own format, else the one of all three. */
#define FORMAT_OF(in, field) ((in)->field != SLEM_FMT_AUTO ? (in)->field : (in)->format)

int slem_calibration_check(const SlemCalibrateInput *in, SlemError *err) {
  const char *inputs[5] = {in->classifiers, in->exemplar_labels, in->positives,
                           in->positive_labels, in->negatives};
  int stdin_uses = 0;
  if (!in->classifiers) return slem_error(err, SLEM_EINVAL, "no classifiers: give -c CLASSIFIERS");
  if (!in->exemplar_labels)
    return slem_error(err, SLEM_EINVAL, "no exemplar labels: give --exemplar-labels FILE");
  if (!in->positives)
    return slem_error(err, SLEM_EINVAL, "no validation vectors: give --positives FILE");
  if (!in->positive_labels)
    return slem_error(err, SLEM_EINVAL, "no validation labels: give --positive-labels FILE");
  for (int i = 0; i < 5; i++) stdin_uses += inputs[i] && strcmp(inputs[i], "-") == 0;
  if (stdin_uses > 1) return slem_error(err, SLEM_EINVAL, "only one input can be stdin");
  return SLEM_OK;
}

int slem_calibration_fit(SlemCalibration **self, const SlemCalibrateInput *in,
                         SlemError *err) {
  SlemIds *elab = NULL, *plab = NULL;
  SlemCalibration *cal = NULL;
  double *clf = NULL, *val = NULL, *neg = NULL, *sval = NULL, *sneg = NULL, *ps = NULL,
         *ns = NULL;
  size_t m, dc, nv = 0, dv, nn = 0, dn, d;
  int status;

  *self = NULL;
  if ((status = slem_calibration_check(in, err)) != SLEM_OK) return status;
  if ((status = read_vectors(&clf, &m, &dc, in->classifiers,
                             FORMAT_OF(in, classifiers_format), err)) != SLEM_OK ||
      (status = read_vectors(&val, &nv, &dv, in->positives, FORMAT_OF(in, positives_format),
                             err)) != SLEM_OK)
    goto cleanup;
  if (dc != dv + 1) {
    status = slem_error(err, SLEM_EFORMAT, "%s: %zu values per row, but classifiers for the "
                        "vectors of %s (dimension %zu) have %zu (w, then b)%s",
                        in->classifiers, dc, in->positives, dv, dv + 1,
                        dc == dv ? ": is it a file of descriptors rather than classifiers?" : "");
    goto cleanup;
  }
  d = dv;
  if (in->negatives) {
    if ((status = read_vectors(&neg, &nn, &dn, in->negatives,
                               FORMAT_OF(in, negatives_format), err)) != SLEM_OK)
      goto cleanup;
    if (dn != d) {
      status = slem_error(err, SLEM_EFORMAT, "%s: dimension %zu, but the positives %s have "
                          "dimension %zu", in->negatives, dn, in->positives, d);
      goto cleanup;
    }
  }
  if ((status = slem_ids_labels_read(&elab, in->exemplar_labels, err)) != SLEM_OK ||
      (status = slem_ids_labels_read(&plab, in->positive_labels, err)) != SLEM_OK)
    goto cleanup;
  if (slem_ids_count(elab) != m) {
    status = slem_error(err, SLEM_EFORMAT, "%s: %zu labels, but %s has %zu classifiers",
                        in->exemplar_labels, slem_ids_count(elab), in->classifiers, m);
    goto cleanup;
  }
  if (slem_ids_count(plab) != nv) {
    status = slem_error(err, SLEM_EFORMAT, "%s: %zu labels, but %s has %zu vectors",
                        in->positive_labels, slem_ids_count(plab), in->positives, nv);
    goto cleanup;
  }
  sval = malloc((nv ? nv : 1) * m * sizeof *sval);
  sneg = malloc((nn ? nn : 1) * m * sizeof *sneg);
  ps = malloc((nv + nn + 1) * sizeof *ps);
  ns = malloc((nv + nn + 1) * sizeof *ns);
  if (!sval || !sneg || !ps || !ns) {
    status = slem_error(err, SLEM_ENOMEM, "out of memory for %zu x %zu scores", m, nv + nn);
    goto cleanup;
  }
  score(sval, val, nv, clf, m, d);
  score(sneg, neg, nn, clf, m, d);
  if ((status = calibration_new(&cal, m, 1, err)) != SLEM_OK) goto cleanup;
  for (size_t e = 0; e < m; e++) {
    const char *lab = slem_ids_get(elab, e);
    size_t np = 0, nq = 0;
    for (size_t j = 0; j < nv; j++) {
      if (strcmp(slem_ids_get(plab, j), lab) == 0) ps[np++] = sval[j * m + e];
      else ns[nq++] = sval[j * m + e];
    }
    for (size_t j = 0; j < nn; j++) ns[nq++] = sneg[j * m + e];
    if (np == 0 || nq == 0) {
      status = slem_error(err, SLEM_EINVAL, "%s: exemplar %zu (label %s) has no %s",
                          in->classifiers, e + 1, lab,
                          np == 0 ? "validation positive (no vector of that label)"
                                  : "negative");
      goto cleanup;
    }
    if ((status = slem_calibration_platt_fit(&cal->sg[e], ps, np, ns, nq, NULL, err)) != SLEM_OK) {
      char msg[SLEM_ERRMSG_MAX];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      slem_error(err, status, "%s: exemplar %zu (label %s): %s", in->classifiers, e + 1, lab,
                 msg);
      goto cleanup;
    }
    cal->npos[e] = np;
    cal->nneg[e] = nq;
    if (in->progress && (e + 1) % 64 == 0) in->progress(in->progress_ctx, e + 1);
  }
  *self = cal;
  cal = NULL;
cleanup:
  slem_calibration_free(cal);
  slem_ids_free(elab);
  slem_ids_free(plab);
  free(clf);
  free(val);
  free(neg);
  free(sval);
  free(sneg);
  free(ps);
  free(ns);
  return status;
}

int slem_calibration_read(SlemCalibration **self, const char *path, SlemError *err) {
  SlemIn *in = NULL;
  SlemCalibration *cal = NULL;
  SlemSigmoid *sg = NULL;
  size_t n = 0, cap = 0, lineno = 0, len;
  char *line;
  int status;

  *self = NULL;
  if ((status = slem_in_open(&in, path, err)) != SLEM_OK) return status;
  for (;;) {
    char *end;
    double a, b;
    if ((status = slem_in_getline(in, &line, &len, err)) != SLEM_OK) goto cleanup;
    if (!line) break;
    lineno++;
    errno = 0;
    a = strtod(line, &end);
    if (end != line) {
      char *p = end;
      b = strtod(p, &end);
      while (end != p && (*end == ' ' || *end == '\t')) end++;
      if (end != p && *end == '\0' && errno == 0 && isfinite(a) && isfinite(b)) {
        if (n == cap) {
          SlemSigmoid *q = realloc(sg, (cap = cap ? 2 * cap : 256) * sizeof *q);
          if (!q) {
            status = slem_error(err, SLEM_ENOMEM, "%s: out of memory", slem_in_name(in));
            goto cleanup;
          }
          sg = q;
        }
        sg[n].a = a;
        sg[n++].b = b;
        continue;
      }
    }
    status = slem_error(err, SLEM_EFORMAT, "%s: line %zu: expected two finite numbers 'a b'",
                        slem_in_name(in), lineno);
    goto cleanup;
  }
  if (n == 0) {
    status = slem_error(err, SLEM_EFORMAT, "%s: no sigmoid (empty file)", slem_in_name(in));
    goto cleanup;
  }
  if ((status = calibration_new(&cal, n, 0, err)) != SLEM_OK) goto cleanup;
  memcpy(cal->sg, sg, n * sizeof *sg);
  *self = cal;
cleanup:
  free(sg);
  slem_in_free(in);
  return status;
}

int slem_calibration_write(const SlemCalibration *self, const char *path, SlemError *err) {
  SlemOut *out = NULL;
  FILE *f;
  int status;
  if ((status = slem_out_open(&out, path, err)) != SLEM_OK) return status;
  f = slem_out_file(out);
  for (size_t i = 0; i < self->m; i++) fprintf(f, "%.17g %.17g\n", self->sg[i].a, self->sg[i].b);
  return slem_out_commit(out, err);
}
