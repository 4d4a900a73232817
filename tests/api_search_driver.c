/* A driver of the C API's search and evaluation for tests/cli-api-search.sh, which compares
 * its outputs with the tools' (slem-match -F npy, slem-match -c, slem-eval --json).
 *
 *   api_search_driver search [-t N] [-n] [-f64] [-c CACHE] [-r ROWS -w FILE] K QUERIES DATABASE OUT
 *     reads the fvecs files into arrays itself (not through libslem), ROWS > 0 repeats the
 *     queries (with a row-dependent offset) to that many rows, written to FILE (fvecs) for
 *     the tools, calls slem_search() (or
 *     slem_search_kernel() with -c), and writes D (float32) to OUT.D and I (int64) to
 *     OUT.I, raw, row-major: the payloads of slem-match's OUT.D.npy and OUT.I.npy;
 *   api_search_driver eval [-q QLABELS -d DBLABELS | -Q QRELS] -i I.npy MEASURE...
 *     evaluates the ranking of an npy I file (read here) with slem_evaluate();
 *   api_search_driver evalfile [-q QLABELS -d DBLABELS | -Q QRELS] RANKING MEASURE...
 *     the same with slem_evaluate_file();
 *   both print one line per measure, "NAME<TAB>%.17g".
 * Errors: the library's message on stderr, exit 1; usage: exit 2.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slem.h"

/* An fvecs file into float rows(*n, *d), malloc'd; exits on a bad file. */
static float *read_fvecs(const char *path, size_t *n, size_t *d) {
  FILE *f = fopen(path, "rb");
  float *x = NULL;
  size_t cap = 0;
  int32_t dim;
  *n = *d = 0;
  if (!f) {
    perror(path);
    exit(1);
  }
  if (fread(&dim, 4, 1, f) == 1 && dim > 0 && fseek(f, 0, SEEK_END) == 0) { /* room for all */
    cap = (size_t)ftell(f) / (4 + 4 * (size_t)dim);
    x = malloc((cap ? cap : 1) * (size_t)dim * sizeof *x);
  }
  rewind(f);
  while (fread(&dim, 4, 1, f) == 1) {
    if (dim <= 0 || (*d && (size_t)dim != *d)) {
      fprintf(stderr, "%s: bad dimension\n", path);
      exit(1);
    }
    *d = (size_t)dim;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      x = realloc(x, cap * *d * sizeof *x);
    }
    if (fread(x + *n * *d, 4, *d, f) != *d) {
      fprintf(stderr, "%s: truncated\n", path);
      exit(1);
    }
    (*n)++;
  }
  fclose(f);
  return x;
}

static void write_raw(const char *out, const char *ext, const void *p, size_t bytes) {
  char path[4096];
  FILE *f;
  snprintf(path, sizeof path, "%s%s", out, ext);
  if (!(f = fopen(path, "wb")) || fwrite(p, 1, bytes, f) != bytes || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static int usage(void) {
  fprintf(stderr, "usage: api_search_driver search|eval|evalfile ... (see its source)\n");
  return 2;
}

static int search_main(int argc, char **argv) {
  int threads = 0, flags = 0, f64 = 0, st;
  const char *cache_path = NULL, *wpath = NULL;
  size_t rows = 0, nq, nd, dq, dd, k;
  float *q, *db, *D;
  int64_t *I;
  void *qdata, *ddata;
  SlemError err = {0};
  SlemCache *cache = NULL;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "-n") == 0) flags |= SLEM_SEARCH_NORMALIZE;
    else if (strcmp(argv[i], "-f64") == 0) f64 = 1;
    else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) cache_path = argv[++i];
    else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) rows = (size_t)atol(argv[++i]);
    else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc) wpath = argv[++i];
    else return usage();
  }
  if (argc - i != 4) return usage();
  k = (size_t)atol(argv[i]);
  q = read_fvecs(argv[i + 1], &nq, &dq);
  db = read_fvecs(argv[i + 2], &nd, &dd);
  if (rows > 0) { /* more queries: the file's rows again, each moved by its row number */
    float *more = malloc(rows * dq * sizeof *more);
    for (size_t r = 0; r < rows; r++)
      for (size_t j = 0; j < dq; j++)
        more[r * dq + j] = q[(r % nq) * dq + j] + (float)((r * 7 + j) % 13) * 0.25f;
    free(q);
    q = more;
    nq = rows;
    if (wpath) {
      FILE *f = fopen(wpath, "wb");
      int32_t dim = (int32_t)dq;
      for (size_t r = 0; f && r < nq; r++)
        if (fwrite(&dim, 4, 1, f) != 1 || fwrite(q + r * dq, 4, dq, f) != dq) break;
      if (!f || fclose(f) != 0) {
        perror(wpath);
        return 1;
      }
    }
  }
  qdata = q;
  ddata = db;
  if (f64) {
    double *q64 = malloc(nq * dq * sizeof *q64), *d64 = malloc(nd * dd * sizeof *d64);
    for (size_t j = 0; j < nq * dq; j++) q64[j] = q[j];
    for (size_t j = 0; j < nd * dd; j++) d64[j] = db[j];
    qdata = q64;
    ddata = d64;
  }
  {
    SlemArray qa = {qdata, f64 ? SLEM_FLOAT64 : SLEM_FLOAT32, nq, dq};
    SlemArray da = {ddata, f64 ? SLEM_FLOAT64 : SLEM_FLOAT32, nd, dd};
    D = malloc(nq * k * sizeof *D);
    I = malloc(nq * k * sizeof *I);
    if (cache_path) {
      if (slem_load(&cache, cache_path, &err) != SLEM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
      }
      st = slem_search_kernel(cache, &qa, &da, k, flags, threads, D, I, &err);
    } else {
      st = slem_search(&qa, &da, k, flags, threads, D, I, &err);
    }
  }
  if (st != SLEM_OK) {
    fprintf(stderr, "api_search_driver: %s (%s)\n", err.msg, slem_error_str(st));
    return 1;
  }
  write_raw(argv[i + 3], ".D", D, nq * k * sizeof *D);
  write_raw(argv[i + 3], ".I", I, nq * k * sizeof *I);
  slem_cache_free(cache);
  if (f64) {
    free(qdata);
    free(ddata);
  }
  free(q);
  free(db);
  free(D);
  free(I);
  return 0;
}

/* One integer label per line into a new array. */
static int64_t *read_labels(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  int64_t *v = NULL;
  size_t cap = 0;
  long long x;
  *n = 0;
  if (!f) {
    perror(path);
    exit(1);
  }
  while (fscanf(f, "%lld", &x) == 1) {
    if (*n == cap) v = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
    v[(*n)++] = (int64_t)x;
  }
  fclose(f);
  return v;
}

/* An int64 npy file (as slem-match writes OUT.I.npy) into nq x k rows. */
static int64_t *read_npy_i8(const char *path, size_t *nq, size_t *k) {
  FILE *f = fopen(path, "rb");
  unsigned char pre[10];
  char hdr[4096];
  unsigned len;
  unsigned long long a = 0, b = 0;
  const char *s;
  int64_t *v;
  if (!f || fread(pre, 1, 10, f) != 10 || (len = pre[8] | pre[9] << 8) >= sizeof hdr ||
      fread(hdr, 1, len, f) != len) {
    fprintf(stderr, "%s: not an npy file\n", path);
    exit(1);
  }
  hdr[len] = '\0';
  if (!strstr(hdr, "'<i8'") || !(s = strstr(hdr, "'shape': (")) ||
      sscanf(s + 10, "%llu, %llu", &a, &b) != 2) {
    fprintf(stderr, "%s: not a 2-D int64 npy file\n", path);
    exit(1);
  }
  *nq = (size_t)a;
  *k = (size_t)b;
  v = malloc((a * b > 0 ? a * b : 1) * sizeof *v);
  if (fread(v, sizeof *v, a * b, f) != a * b) {
    fprintf(stderr, "%s: truncated\n", path);
    exit(1);
  }
  fclose(f);
  return v;
}

static int eval_main(int argc, char **argv, int file) {
  SlemTruthArrays truth = {0};
  const char *inpy = NULL, *ranking = NULL;
  int64_t *ql = NULL, *dl = NULL, *I = NULL;
  size_t nql = 0, nq = 0, k = 0;
  double *values;
  SlemError err = {0};
  int i = 1, st;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "-q") == 0 && i + 1 < argc) ql = read_labels(argv[++i], &nql);
    else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) dl = read_labels(argv[++i], &truth.ndb);
    else if (strcmp(argv[i], "-Q") == 0 && i + 1 < argc) truth.qrels = argv[++i];
    else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) inpy = argv[++i];
    else return usage();
  }
  truth.query_labels = ql;
  truth.db_labels = dl;
  truth.nq = nql;
  if (file) {
    if (i >= argc) return usage();
    ranking = argv[i++];
  } else {
    if (!inpy) return usage();
    I = read_npy_i8(inpy, &nq, &k);
  }
  values = malloc((size_t)(argc - i + 1) * sizeof *values);
  st = file ? slem_evaluate_file(ranking, NULL, &truth, (const char *const *)argv + i,
                                 (size_t)(argc - i), values, &err)
            : slem_evaluate(I, nq, k, &truth, (const char *const *)argv + i, (size_t)(argc - i),
                            values, &err);
  if (st != SLEM_OK) {
    fprintf(stderr, "api_search_driver: %s (%s)\n", err.msg, slem_error_str(st));
    free(values);
    return 1;
  }
  for (int m = i; m < argc; m++) printf("%s\t%.17g\n", argv[m], values[m - i]);
  free(values);
  free(ql);
  free(dl);
  free(I);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  if (strcmp(argv[1], "search") == 0) return search_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "eval") == 0) return eval_main(argc - 1, argv + 1, 0);
  if (strcmp(argv[1], "evalfile") == 0) return eval_main(argc - 1, argv + 1, 1);
  return usage();
}
