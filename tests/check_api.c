/* The public C API (lib/api/slem.h) against the tools: a fit of an array is slem-negstats'
 * cache of the same rows (its fingerprint, its bytes but for the provenance), of files the
 * very bytes; shards' partial caches merge into the fit of all; encode gives slem-encode's
 * float32 rows at any thread count and block; bad input is an error with the library's
 * message, and nothing is written. The tools are run from bin/ (make check builds them
 * first), by execv, no shell. */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../lib/api/slem.h"
#include "../lib/formats/cache.h"

#define NEG "testdata/digits/negatives.fvecs"
#define QUERIES "testdata/digits/queries.fvecs"
#define EPOCH "1700000000"

/* Every row of an fvecs file, read by hand (not through the library): x(*n, *d) float32. */
static float *read_fvecs(const char *path, size_t *n, size_t *d) {
  FILE *f = fopen(path, "rb");
  float *x = NULL;
  int32_t d32;
  size_t cap = 0;
  ck_assert_ptr_nonnull(f);
  *n = *d = 0;
  while (fread(&d32, 4, 1, f) == 1) {
    ck_assert_int_gt(d32, 0);
    if (*d == 0) *d = (size_t)d32;
    ck_assert_uint_eq((size_t)d32, *d);
    if (*n == cap) x = realloc(x, (cap = cap ? 2 * cap : 256) * *d * sizeof *x);
    ck_assert_uint_eq(fread(x + *n * *d, sizeof *x, *d, f), *d);
    (*n)++;
  }
  fclose(f);
  return x;
}

/* A whole file into memory (*len bytes); the caller frees it. */
static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  unsigned char *p;
  long n;
  ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  p = malloc((size_t)n + 1);
  ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return p;
}

/* Runs argv (argv[0] a tool of bin/) with SOURCE_DATE_EPOCH set, no shell; its exit
 * status. */
static int run_tool(char *const argv[]) {
  char path[256];
  pid_t pid;
  int status;
  snprintf(path, sizeof path, "bin/%s", argv[0]);
  ck_assert_msg(access(path, X_OK) == 0, "%s is not built (make check builds it)", path);
  if ((pid = fork()) == 0) {
    setenv("SOURCE_DATE_EPOCH", EPOCH, 1);
    execv(path, argv);
    _exit(127);
  }
  ck_assert_int_gt(pid, 0);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The JSON header without its provenance (what names the inputs and the time) and the
 * sections' offsets (which the header's length moves). */
static char *header_sans_provenance(const SlemCache *c) {
  cJSON *j = cJSON_Parse(slem_cache_info(c)), *sec;
  char *s;
  ck_assert_ptr_nonnull(j);
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(j, "provenance"));
  cJSON_DeleteItemFromObjectCaseSensitive(j, "provenance");
  cJSON_ArrayForEach(sec, cJSON_GetObjectItemCaseSensitive(j, "sections")) {
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(sec, "offset"));
    cJSON_DeleteItemFromObjectCaseSensitive(sec, "offset");
  }
  s = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return s;
}

/* a and b hold the same statistics: the same fingerprint, kind, dimension, and JSON header
 * but for the provenance. */
static void assert_same_cache(const SlemCache *a, const SlemCache *b) {
  char *ha = header_sans_provenance(a), *hb = header_sans_provenance(b);
  ck_assert_str_eq(slem_cache_fingerprint_of(a), slem_cache_fingerprint_of(b));
  ck_assert_str_eq(slem_cache_kind_name(a), slem_cache_kind_name(b));
  ck_assert_uint_eq(slem_cache_dim(a), slem_cache_dim(b));
  ck_assert_str_eq(ha, hb);
  free(ha);
  free(hb);
}

static SlemFitOptions *options(const char *const *kv) {
  SlemFitOptions *o = NULL;
  SlemError err;
  ck_assert_int_eq(slem_fit_options_new(&o, &err), SLEM_OK);
  for (; kv && kv[0]; kv += 2)
    ck_assert_msg(slem_fit_options_set(o, kv[0], kv[1], &err) == SLEM_OK, "%s", err.msg);
  return o;
}

/* The number of entries of directory dir (. and .. aside). */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int k = 0;
  ck_assert_ptr_nonnull(d);
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) k++;
  closedir(d);
  return k;
}

START_TEST(version_is_the_header_s) {
  ck_assert_str_eq(slem_version(), SLEM_VERSION);
  ck_assert_int_eq(SLEM_VERSION_MAJOR, 0);
}
END_TEST

/* The fit of an array is the tool's of the file: fingerprint and header; the fit of the
 * file is the tool's bytes. */
START_TEST(fit_of_an_array_is_the_tool_s) {
  size_t n, d, len1, len2;
  float *x = read_fvecs(NEG, &n, &d);
  double *x64 = malloc(n * d * sizeof *x64);
  SlemArray a = {x, SLEM_FLOAT32, n, d}, a64 = {x64, SLEM_FLOAT64, n, d};
  SlemCache *ca = NULL, *c64 = NULL, *cf = NULL, *ct = NULL;
  const char *paths[] = {NEG};
  char *tool = tu_path("tool.slem"), *mine = tu_path("mine.slem");
  unsigned char *b1, *b2;
  SlemError err;
  for (size_t i = 0; i < n * d; i++) x64[i] = x[i];
  ck_assert_msg(slem_fit(&ca, &a, NULL, 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_fit(&c64, &a64, NULL, 2, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_fit_files(&cf, paths, 1, NULL, 2, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_str_eq(slem_cache_kind_name(ca), "linear");
  ck_assert_uint_eq(slem_cache_dim(ca), d);
  assert_same_cache(ca, cf);
  assert_same_cache(c64, cf);
  /* the tool's cache of the file: the same fingerprint, and slem_save() of the fit of the
   * file its very bytes (the same provenance: the file's name, the time fixed) */
  {
    char *argv[] = {"slem-negstats", "-q", "-o", tool, NEG, NULL};
    ck_assert_int_eq(run_tool(argv), 0);
  }
  ck_assert_int_eq(slem_load(&ct, tool, &err), SLEM_OK);
  ck_assert_str_eq(slem_cache_fingerprint_of(ct), slem_cache_fingerprint_of(ca));
  slem_cache_free(cf);
  cf = NULL;
  slem_cache_set_time(1, atoll(EPOCH));
  ck_assert_int_eq(slem_fit_files(&cf, paths, 1, NULL, 1, &err), SLEM_OK);
  ck_assert_msg(slem_save(cf, mine, &err) == SLEM_OK, "%s", err.msg);
  b1 = slurp(tool, &len1);
  b2 = slurp(mine, &len2);
  ck_assert_uint_eq(len1, len2);
  ck_assert_mem_eq(b1, b2, len1);
  /* what slem_save() writes loads back as the same cache, and mode 0600 was never widened
   * beyond the umask */
  slem_cache_free(ct);
  ck_assert_int_eq(slem_load(&ct, mine, &err), SLEM_OK);
  ck_assert_str_eq(slem_cache_info(ct), slem_cache_info(cf));
  free(b1);
  free(b2);
  slem_cache_free(ca);
  slem_cache_free(c64);
  slem_cache_free(cf);
  slem_cache_free(ct);
  free(x);
  free(x64);
  free(tool);
  free(mine);
}
END_TEST

/* The variants' own options: a kernel fit, a PCA-reduced, a recursive and a diagonal one,
 * each the tool's fingerprint on the same rows. */
START_TEST(variants_fit_as_the_tool) {
  static const char *const kernel[] = {"kernel", "rbf:g=1", "rank", "64", "lambda-rel", "100", NULL};
  static const char *const pca[] = {"pca", "16", NULL};
  static const char *const depth[] = {"depth", "2", "lambda-rel", "0.5", NULL};
  static const char *const diagonal[] = {"diagonal", NULL, NULL};
  static const struct {
    const char *const *kv;
    const char *kind;
    char *argv[12];
  } cases[] = {
      {kernel, "kernel", {"slem-negstats", "-q", "--kernel", "rbf:g=1", "--rank", "64",
                          "--lambda-rel", "100", "-o", NULL}},
      {pca, "pca", {"slem-negstats", "-q", "--pca", "16", "-o", NULL}},
      {depth, "recursive", {"slem-negstats", "-q", "--depth", "2", "--lambda-rel", "0.5", "-o",
                            NULL}},
      {diagonal, "diagonal", {"slem-negstats", "-q", "--diagonal", "-o", NULL}},
  };
  size_t n, d;
  float *x = read_fvecs(NEG, &n, &d);
  SlemArray a = {x, SLEM_FLOAT32, n, d};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    SlemFitOptions *o = options(cases[c].kv);
    SlemCache *ca = NULL, *ct = NULL;
    SlemError err;
    char *out = tu_path("variant.slem"), *argv[16];
    size_t k = 0;
    for (; cases[c].argv[k]; k++) argv[k] = cases[c].argv[k];
    argv[k++] = out;
    argv[k++] = NEG;
    argv[k] = NULL;
    ck_assert_int_eq(run_tool(argv), 0);
    ck_assert_int_eq(slem_load(&ct, out, &err), SLEM_OK);
    ck_assert_msg(slem_fit(&ca, &a, o, 2, &err) == SLEM_OK, "%s: %s", cases[c].kind, err.msg);
    ck_assert_str_eq(slem_cache_kind_name(ca), cases[c].kind);
    assert_same_cache(ca, ct);
    slem_cache_free(ca);
    slem_cache_free(ct);
    slem_fit_options_free(o);
    free(out);
  }
  free(x);
}
END_TEST

/* Two shards of an array, fitted partial, merged: the fit of all its rows, bit for bit;
 * one shard alone is refused, naming the caller's part. */
START_TEST(shards_merge_into_the_fit_of_all) {
  static const char *const whole[] = {"leaf-rows", "64", NULL};
  static const char *const s1[] = {"leaf-rows", "64", "partial", NULL, "shard", "0/2", NULL};
  static const char *const s2[] = {"leaf-rows", "64", "partial", NULL, "shard", "1/2", NULL};
  size_t n, d;
  float *x = read_fvecs(NEG, &n, &d);
  SlemArray a = {x, SLEM_FLOAT32, n, d};
  SlemFitOptions *ow = options(whole), *o1 = options(s1), *o2 = options(s2);
  SlemCache *all = NULL, *p1 = NULL, *p2 = NULL, *m = NULL;
  SlemError err;
  ck_assert_msg(slem_fit(&all, &a, ow, 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_fit(&p1, &a, o1, 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_fit(&p2, &a, o2, 2, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_str_eq(slem_cache_kind_name(p1), "partial");
  {
    const SlemCache *parts[] = {p2, p1}; /* in any order */
    ck_assert_msg(slem_fit_merge(&m, parts, 2, NULL, 2, &err) == SLEM_OK, "%s", err.msg);
  }
  ck_assert_str_eq(slem_cache_kind_name(m), "linear");
  ck_assert_str_eq(slem_cache_fingerprint_of(m), slem_cache_fingerprint_of(all));
  slem_cache_free(m);
  m = NULL;
  {
    const SlemCache *parts[] = {p2};
    ck_assert_int_eq(slem_fit_merge(&m, parts, 1, NULL, 1, &err), SLEM_EINVAL);
    ck_assert_ptr_null(m);
    ck_assert_msg(strncmp(err.msg, "parts[0] and the partial caches with it hold leaves ", 52) == 0,
                  "%s", err.msg);
  }
  {
    const SlemCache *parts[] = {p1, all};
    ck_assert_int_eq(slem_fit_merge(&m, parts, 2, NULL, 1, &err), SLEM_EFORMAT);
    ck_assert_str_eq(err.msg, "parts[1]: only partial caches (--partial) can be merged");
  }
  slem_cache_free(all);
  slem_cache_free(p1);
  slem_cache_free(p2);
  slem_fit_options_free(ow);
  slem_fit_options_free(o1);
  slem_fit_options_free(o2);
  free(x);
}
END_TEST

/* slem-encode's float32 rows of out.fvecs (the dimension prefixes dropped) into y. */
static float *tool_rows(const char *path, size_t *n, size_t *dim) { return read_fvecs(path, n, dim); }

/* Encoding the queries gives slem-encode's rows, at threads 1 and 2, in blocks of any
 * size, from float32 and float64 alike; with options (classifiers, whitening) too. */
START_TEST(encode_gives_the_tool_s_rows) {
  static const struct {
    const char *fit[4];
    const char *enc[5];
    char *argv[8];
  } cases[] = {
      {{NULL}, {NULL}, {NULL}},
      {{NULL}, {"classifier", NULL, "theta", "2", NULL}, {"--classifier", "--theta", "2", NULL}},
      {{"eigen", NULL, NULL}, {"alpha", "0.5", NULL}, {"--alpha", "0.5", NULL}},
      {{"kernel", "rbf:g=1", "rank", "64"}, {NULL}, {NULL}},
  };
  size_t n, d, nq, dq;
  float *neg = read_fvecs(NEG, &n, &d), *q = read_fvecs(QUERIES, &nq, &dq);
  double *q64 = malloc(nq * dq * sizeof *q64);
  SlemArray a = {neg, SLEM_FLOAT32, n, d}, xq = {q, SLEM_FLOAT32, nq, dq},
            xq64 = {q64, SLEM_FLOAT64, nq, dq};
  for (size_t i = 0; i < nq * dq; i++) q64[i] = q[i];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    SlemFitOptions *fo = options(cases[c].fit[0] ? cases[c].fit : NULL);
    SlemEncodeOptions *eo = NULL;
    SlemCache *cache = NULL;
    SlemError err;
    char *cpath = tu_path("enc.slem"), *opath = tu_path("enc.fvecs"), *argv[16];
    size_t k = 0, tn, tdim, dim;
    float *want, *y, *y2;
    ck_assert_msg(slem_fit(&cache, &a, fo, 2, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_int_eq(slem_save(cache, cpath, &err), SLEM_OK);
    ck_assert_int_eq(slem_encode_options_new(&eo, &err), SLEM_OK);
    for (const char *const *kv = cases[c].enc; kv[0]; kv += 2)
      ck_assert_msg(slem_encode_options_set(eo, kv[0], kv[1], &err) == SLEM_OK, "%s", err.msg);
    argv[k++] = "slem-encode";
    argv[k++] = "-q";
    argv[k++] = "-t";
    argv[k++] = "2";
    for (size_t i = 0; cases[c].argv[i]; i++) argv[k++] = cases[c].argv[i];
    argv[k++] = "-c";
    argv[k++] = cpath;
    argv[k++] = "-o";
    argv[k++] = opath;
    argv[k++] = QUERIES;
    argv[k] = NULL;
    ck_assert_int_eq(run_tool(argv), 0);
    want = tool_rows(opath, &tn, &tdim);
    dim = slem_encode_dim(cache, eo, &err);
    ck_assert_msg(dim == tdim, "case %zu: dim %zu, the tool's %zu (%s)", c, dim, tdim, err.msg);
    ck_assert_uint_eq(tn, nq);
    y = malloc(nq * dim * sizeof *y);
    y2 = malloc(nq * dim * sizeof *y2);
    for (int threads = 1; threads <= 2; threads++) {
      memset(y, 0xff, nq * dim * sizeof *y);
      ck_assert_msg(slem_encode(cache, &xq, eo, threads, y, &err) == SLEM_OK, "%s", err.msg);
      ck_assert_msg(memcmp(y, want, nq * dim * sizeof *y) == 0, "case %zu, threads %d", c,
                    threads);
      memset(y2, 0xff, nq * dim * sizeof *y2);
      ck_assert_msg(slem_encode(cache, &xq64, eo, threads, y2, &err) == SLEM_OK, "%s", err.msg);
      ck_assert_msg(memcmp(y2, want, nq * dim * sizeof *y2) == 0, "case %zu float64", c);
    }
    /* blocks of 7 rows: the same bytes */
    ck_assert_int_eq(slem_encode_options_set(eo, "block", "7", &err), SLEM_OK);
    memset(y, 0xff, nq * dim * sizeof *y);
    ck_assert_int_eq(slem_encode(cache, &xq, eo, 2, y, &err), SLEM_OK);
    ck_assert_msg(memcmp(y, want, nq * dim * sizeof *y) == 0, "case %zu, blocks of 7", c);
    /* one row alone: its row of the whole */
    {
      SlemArray one = {q + 37 * dq, SLEM_FLOAT32, 1, dq};
      ck_assert_int_eq(slem_encode(cache, &one, NULL, 1, y, &err), SLEM_OK);
      if (!cases[c].enc[0]) ck_assert_mem_eq(y, want + 37 * dim, dim * sizeof *y);
    }
    free(want);
    free(y);
    free(y2);
    free(cpath);
    free(opath);
    slem_encode_options_free(eo);
    slem_fit_options_free(fo);
    slem_cache_free(cache);
  }
  free(neg);
  free(q);
  free(q64);
}
END_TEST

/* Bad input: an error with the library's message, nothing written, nothing left in TMPDIR. */
START_TEST(bad_input_is_an_error_and_writes_nothing) {
  size_t n, d;
  float *x = read_fvecs(NEG, &n, &d);
  char *tmp = tu_path("tmpdir"), *file = tu_path("a-file"), *out;
  SlemArray a = {x, SLEM_FLOAT32, n, d};
  SlemFitOptions *o = NULL;
  SlemEncodeOptions *eo = NULL;
  SlemCache *c = NULL, *bad = NULL;
  SlemError err;
  float *y = malloc(n * d * sizeof *y);
  ck_assert_int_eq(mkdir(tmp, 0700), 0);
  setenv("TMPDIR", tmp, 1);
  tu_write_bytes(file, "x", 1);
  /* options: unknown, out of range, that do not go together */
  ck_assert_int_eq(slem_fit_options_new(&o, &err), SLEM_OK);
  ck_assert_int_eq(slem_fit_options_set(o, "rnk", "3", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "unknown option 'rnk'");
  ck_assert_int_eq(slem_fit_options_set(o, "rank", "0", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--rank: '0' is not a whole number from 1 to 1048576");
  ck_assert_int_eq(slem_fit_options_set(o, "pca", "65", &err), SLEM_OK);
  ck_assert_int_eq(slem_fit(&c, &a, o, 1, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--pca 65: more than the dimension 64 of the negatives");
  ck_assert_ptr_null(c);
  slem_fit_options_free(o);
  /* the options list: every name settable, in --help's order */
  ck_assert_uint_gt(slem_fit_options_count(), 10);
  ck_assert_str_eq(slem_fit_option_name(0), "lambda");
  ck_assert_ptr_null(slem_fit_option_name(slem_fit_options_count()));
  ck_assert_ptr_nonnull(slem_fit_option_help(0));
  /* arrays: a NaN, no rows, a dtype, columns other than the cache's */
  x[5 * d + 3] = NAN;
  ck_assert_int_eq(slem_fit(&c, &a, NULL, 1, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "negatives: row 5, column 3: NaN");
  x[5 * d + 3] = 0;
  a.rows = 0;
  ck_assert_int_eq(slem_fit(&c, &a, NULL, 1, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "negatives: no rows");
  a.rows = n;
  a.dtype = 3;
  ck_assert_int_eq(slem_fit(&c, &a, NULL, 1, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "negatives: dtype 3, not SLEM_FLOAT32 (1) or SLEM_FLOAT64 (2)");
  a.dtype = SLEM_FLOAT32;
  ck_assert_int_eq(slem_fit(&c, &a, NULL, -1, &err), SLEM_EINVAL);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(entries(tmp), 0);
  ck_assert_int_eq(slem_fit(&c, &a, NULL, 1, &err), SLEM_OK);
  ck_assert_int_eq(entries(tmp), 0); /* the fit's file unlinked once loaded */
  {
    SlemArray q = {x, SLEM_FLOAT32, 10, d - 1};
    ck_assert_int_eq(slem_encode(c, &q, NULL, 1, y, &err), SLEM_EINVAL);
    ck_assert_str_eq(err.msg, "rows: 63 columns, but the cache's dimension is 64");
  }
  /* encode options: the output file's, unknown, rows of doubles */
  ck_assert_int_eq(slem_encode_options_new(&eo, &err), SLEM_OK);
  ck_assert_int_eq(slem_encode_options_set(eo, "dtype", "f2", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_encode_options_set(eo, "alphaa", "1", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "unknown option 'alphaa'");
  ck_assert_int_eq(slem_encode_options_set(eo, "theta", "-1", &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--theta: must be positive");
  ck_assert_int_eq(slem_encode_options_set(eo, "alpha", "0.5", &err), SLEM_OK);
  ck_assert_uint_eq(slem_encode_dim(c, eo, &err), 0); /* a cache without --eigen */
  ck_assert_int_eq(err.status, SLEM_EINVAL);
  ck_assert_int_eq(slem_encode(c, &a, eo, 1, y, &err), SLEM_EINVAL);
  slem_encode_options_free(eo);
  /* save: stdout, a missing directory, a directory, a file as a directory */
  ck_assert_int_eq(slem_save(c, "-", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_save(c, "/nonexistent-slem-dir/c.slem", &err), SLEM_EIO);
  ck_assert_int_eq(tu_file_exists("/nonexistent-slem-dir"), 0);
  ck_assert_int_eq(slem_save(c, tmp, &err), SLEM_EIO);
  ck_assert_int_eq(entries(tmp), 0);
  out = malloc(strlen(file) + 8);
  sprintf(out, "%s/c.slem", file);
  ck_assert_int_eq(slem_save(c, out, &err), SLEM_EIO);
  /* a save that fails on writing: nothing is left beside the target */
  ck_assert_int_eq(slem_save(c, "/dev/full", &err), SLEM_EIO);
  /* load: a corrupt cache, not a cache, a missing file */
  {
    char *path = tu_path("corrupt.slem");
    size_t len;
    unsigned char *b;
    ck_assert_int_eq(slem_save(c, path, &err), SLEM_OK);
    b = slurp(path, &len);
    b[len - 9] ^= 0x40; /* a bit of the payload */
    tu_write_bytes(path, b, len);
    ck_assert_int_eq(slem_load(&bad, path, &err), SLEM_EFORMAT);
    ck_assert_ptr_null(bad);
    ck_assert_msg(strstr(err.msg, "corrupt.slem") && strstr(err.msg, "checksum"), "%s", err.msg);
    ck_assert_int_eq(slem_load(&bad, file, &err), SLEM_EFORMAT);
    ck_assert_int_eq(slem_load(&bad, "/nonexistent-slem-dir/c.slem", &err), SLEM_EIO);
    ck_assert_ptr_null(bad);
    free(b);
    free(path);
  }
  /* a file that is not there, among the files */
  {
    const char *paths[] = {"/nonexistent-slem-dir/n.fvecs"};
    ck_assert_int_eq(slem_fit_files(&bad, paths, 1, NULL, 1, &err), SLEM_EIO);
    ck_assert_str_eq(err.msg, "/nonexistent-slem-dir/n.fvecs: No such file or directory");
    ck_assert_int_eq(slem_fit_files(&bad, paths, 0, NULL, 1, &err), SLEM_EINVAL);
  }
  ck_assert_int_eq(entries(tmp), 0);
  slem_cache_free(c);
  unsetenv("TMPDIR");
  free(out);
  free(tmp);
  free(file);
  free(x);
  free(y);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("api");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, version_is_the_header_s);
  tcase_add_test(tc, fit_of_an_array_is_the_tool_s);
  tcase_add_test(tc, variants_fit_as_the_tool);
  tcase_add_test(tc, shards_merge_into_the_fit_of_all);
  tcase_add_test(tc, encode_gives_the_tool_s_rows);
  tcase_add_test(tc, bad_input_is_an_error_and_writes_nothing);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
