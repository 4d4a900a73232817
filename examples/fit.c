/* fit.c: the pipeline of slem-negstats, slem-encode and slem-match through the C API, in
 * memory. Fits the negative statistics of NEGATIVES (lambda-rel 1000), encodes QUERIES and
 * DATABASE, searches the K best database rows of every query by inner product and prints
 * them as slem-match's tsv ranking: "query<TAB>rank<TAB>row<TAB>score", the very lines
 * slem-match prints for the same files (tests/install.sh compares them).
 *
 * The vector files are fvecs, read here with plain C: each row an int32 dimension d, then
 * d float32 values.
 *
 * Build against an installed libslem:
 *   cc -o fit fit.c $(pkg-config --cflags --libs slem)
 * Usage: fit NEGATIVES.fvecs QUERIES.fvecs DATABASE.fvecs [K]   (K: default 10)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slem.h>

/* Reads an fvecs file into a new array of rows x d float32 values; 0 on success, else
 * -1 with a message on stderr. */
static int fvecs_read(const char *path, float **out, size_t *rows, size_t *d) {
  FILE *f = fopen(path, "rb");
  float *x = NULL;
  size_t n = 0, cap = 0;
  int32_t dim = 0, first = -1;
  int rc = -1;
  if (!f) {
    fprintf(stderr, "fit: %s: %s\n", path, strerror(errno));
    return -1;
  }
  while (fread(&dim, sizeof dim, 1, f) == 1) {
    if (dim <= 0 || (first >= 0 && dim != first)) {
      fprintf(stderr, "fit: %s: row %zu: dimension %d\n", path, n, (int)dim);
      goto cleanup;
    }
    first = dim;
    if (n == cap) {
      size_t ncap = cap ? 2 * cap : 1024;
      float *y = realloc(x, ncap * (size_t)dim * sizeof *x);
      if (!y) {
        fprintf(stderr, "fit: %s: out of memory\n", path);
        goto cleanup;
      }
      x = y;
      cap = ncap;
    }
    if (fread(x + n * (size_t)dim, sizeof *x, (size_t)dim, f) != (size_t)dim) {
      fprintf(stderr, "fit: %s: row %zu: truncated\n", path, n);
      goto cleanup;
    }
    n++;
  }
  if (ferror(f) || n == 0) {
    fprintf(stderr, "fit: %s: %s\n", path, ferror(f) ? strerror(errno) : "no rows");
    goto cleanup;
  }
  *out = x;
  *rows = n;
  *d = (size_t)first;
  x = NULL;
  rc = 0;
cleanup:
  free(x);
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  float *neg = NULL, *q = NULL, *db = NULL, *qe = NULL, *dbe = NULL, *D = NULL;
  int64_t *I = NULL;
  size_t nneg, nq, ndb, d, dq, ddb, e, k = 10;
  SlemFitOptions *opts = NULL;
  SlemCache *cache = NULL;
  SlemError err = {SLEM_OK, {0}};
  int status = 1;

  if (argc < 4 || argc > 5 || (argc == 5 && (k = strtoul(argv[4], NULL, 10)) == 0)) {
    fprintf(stderr, "usage: fit NEGATIVES.fvecs QUERIES.fvecs DATABASE.fvecs [K]\n");
    return 2;
  }
  if (fvecs_read(argv[1], &neg, &nneg, &d) || fvecs_read(argv[2], &q, &nq, &dq) ||
      fvecs_read(argv[3], &db, &ndb, &ddb))
    goto cleanup;

  /* the statistics of the negatives: slem-negstats --lambda-rel 1000 */
  SlemArray negatives = {neg, SLEM_FLOAT32, nneg, d};
  if (slem_fit_options_new(&opts, &err) || slem_fit_options_set(opts, "lambda-rel", "1000", &err) ||
      slem_fit(&cache, &negatives, opts, 0, &err))
    goto fail;

  /* the descriptors of queries and database: slem-encode -c */
  if ((e = slem_encode_dim(cache, NULL, &err)) == 0) goto fail;
  qe = malloc(nq * e * sizeof *qe);
  dbe = malloc(ndb * e * sizeof *dbe);
  D = malloc(nq * k * sizeof *D);
  I = malloc(nq * k * sizeof *I);
  if (!qe || !dbe || !D || !I) {
    fprintf(stderr, "fit: out of memory\n");
    goto cleanup;
  }
  SlemArray queries = {q, SLEM_FLOAT32, nq, dq}, database = {db, SLEM_FLOAT32, ndb, ddb};
  if (slem_encode(cache, &queries, NULL, 0, qe, &err) ||
      slem_encode(cache, &database, NULL, 0, dbe, &err))
    goto fail;

  /* the search: slem-match -k K */
  SlemArray qa = {qe, SLEM_FLOAT32, nq, e}, dba = {dbe, SLEM_FLOAT32, ndb, e};
  if (slem_search(&qa, &dba, k, 0, 0, D, I, &err)) goto fail;
  for (size_t i = 0; i < nq; i++)
    for (size_t j = 0; j < k && I[i * k + j] >= 0; j++)
      printf("%zu\t%zu\t%lld\t%.9g\n", i, j + 1, (long long)I[i * k + j], (double)D[i * k + j]);
  status = fflush(stdout) || ferror(stdout) ? 1 : 0;
  if (status) fprintf(stderr, "fit: error writing the output\n");
  goto cleanup;

fail:
  fprintf(stderr, "fit: %s\n", err.msg[0] ? err.msg : slem_error_str(err.status));
cleanup:
  slem_cache_free(cache);
  slem_fit_options_free(opts);
  free(neg);
  free(q);
  free(db);
  free(qe);
  free(dbe);
  free(D);
  free(I);
  return status;
}
