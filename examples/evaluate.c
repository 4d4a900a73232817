/* evaluate.c: a ranking of slem-match measured through the C API, as slem-eval measures
 * it. Reads the labels of the queries and of the database (one whole number a line, row
 * after row), evaluates RANKING (any ranking format of slem-match: tsv, trec, jsonl, npy)
 * against them (relevant: the same label) and prints mAP, P@1 and P@10 as slem-eval
 * prints its summary ("mAP<TAB>0.680605"; tests/install.sh compares them).
 *
 * Build against an installed libslem:
 *   cc -o evaluate evaluate.c $(pkg-config --cflags --libs slem)
 * Usage: evaluate RANKING QUERY.labels DATABASE.labels
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slem.h>

/* Reads a file of whole numbers, one a line, into a new array; 0 on success, else -1
 * with a message on stderr. */
static int labels_read(const char *path, int64_t **out, size_t *n) {
  FILE *f = fopen(path, "r");
  int64_t *v = NULL;
  size_t len = 0, cap = 0;
  long long x;
  int c, rc = -1;
  if (!f) {
    fprintf(stderr, "evaluate: %s: %s\n", path, strerror(errno));
    return -1;
  }
  while ((c = fscanf(f, "%lld", &x)) == 1) {
    if (len == cap) {
      size_t ncap = cap ? 2 * cap : 1024;
      int64_t *w = realloc(v, ncap * sizeof *v);
      if (!w) {
        fprintf(stderr, "evaluate: %s: out of memory\n", path);
        goto cleanup;
      }
      v = w;
      cap = ncap;
    }
    v[len++] = (int64_t)x;
  }
  if (c != EOF || ferror(f) || len == 0) {
    fprintf(stderr, "evaluate: %s: line %zu: not a whole number\n", path, len + 1);
    goto cleanup;
  }
  *out = v;
  *n = len;
  v = NULL;
  rc = 0;
cleanup:
  free(v);
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  static const char *const measures[] = {"map", "P_1", "P_10"};
  static const char *const names[] = {"mAP", "P@1", "P@10"};
  double values[3];
  int64_t *ql = NULL, *dbl = NULL;
  size_t nq, ndb;
  SlemError err = {SLEM_OK, {0}};
  int status = 1;

  if (argc != 4) {
    fprintf(stderr, "usage: evaluate RANKING QUERY.labels DATABASE.labels\n");
    return 2;
  }
  if (labels_read(argv[2], &ql, &nq) || labels_read(argv[3], &dbl, &ndb)) goto cleanup;
  SlemTruthArrays truth = {0};
  truth.query_labels = ql;
  truth.nq = nq;
  truth.db_labels = dbl;
  truth.ndb = ndb;
  if (slem_evaluate_file(argv[1], NULL, &truth, measures, 3, values, &err)) {
    fprintf(stderr, "evaluate: %s\n", err.msg[0] ? err.msg : slem_error_str(err.status));
    goto cleanup;
  }
  for (size_t i = 0; i < 3; i++) printf("%s\t%.6f\n", names[i], values[i]);
  status = fflush(stdout) || ferror(stdout) ? 1 : 0;
  if (status) fprintf(stderr, "evaluate: error writing the output\n");
cleanup:
  free(ql);
  free(dbl);
  return status;
}
