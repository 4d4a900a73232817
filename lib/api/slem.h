/* slem.h: the public C API of libslem (installed as include/slem.h; its source is
 * lib/api/slem.h) for square-loss exemplar machine descriptors and cosine retrieval.
 * One header, C99 and C++; link with `pkg-config --libs slem`.
 *
 * Conventions, for every function below:
 * - A fallible function returns a status (SLEM_OK, 0, on success) and, on failure, fills
 *   the caller's SlemError (which may be NULL) with a message naming the option, the
 *   dimension, the row or the file. Nothing prints, exits or aborts. On failure no output
 *   argument is set (*out stays NULL) and no file is written.
 * - Ownership: only functions that take `T **out` hand memory to the caller; each T has a
 *   slem_T_free() that accepts NULL. Everything else borrows, for the call only.
 * - Arrays are row-major and C-contiguous: rows x cols elements of dtype, read in place
 *   (float32 is never copied; float64 is converted a block at a time).
 * - threads: the BLAS threads of this call (0: SLEM_THREADS, else all cores). The BLAS
 *   thread count is process-wide: set for the call and restored before it returns, so
 *   two threads of the caller must not call into libslem at the same time (the results
 *   never depend on it: every score is the same bits at any thread count). The BLAS core
 *   (OPENBLAS_CORETYPE) is chosen once, when the library is loaded.
 */
#ifndef SLEM_PUBLIC_H
#define SLEM_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libslem.so is built -fvisibility=hidden: what this header declares is what it exports
 * (with its version script, lib/api/libslem.map, made from this header). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---- version ---- */

#define SLEM_VERSION_MAJOR 0
#define SLEM_VERSION_MINOR 1
#define SLEM_VERSION_PATCH 0
#define SLEM_VERSION "0.1.0"

/* The version of the library linked ("0.1.0"), which may be newer than SLEM_VERSION. */
const char *slem_version(void);

/* ---- errors ---- */

#ifndef SLEM_STATUS_DEFINED
#define SLEM_STATUS_DEFINED
enum {
  SLEM_OK = 0,
  SLEM_EIO = 1,       /* open, read, write, fsync, rename failed */
  SLEM_EFORMAT = 2,   /* malformed or inconsistent input data */
  SLEM_ENUMERIC = 3,  /* singular matrix, non-finite result */
  SLEM_ENOMEM = 4,    /* allocation failed */
  SLEM_EINVAL = 5     /* bad argument from the caller */
};

#define SLEM_ERRMSG_MAX 1024

typedef struct SlemError {
  int status;
  char msg[SLEM_ERRMSG_MAX];
} SlemError;
#endif

/* A short constant name for a status ("I/O error", "format error", ...). */
const char *slem_error_str(int status);

/* ---- arrays ---- */

enum { SLEM_FLOAT32 = 1, SLEM_FLOAT64 = 2 };

/* rows x cols elements of dtype (SLEM_FLOAT32 or SLEM_FLOAT64), row-major, contiguous. A
 * non-finite element is SLEM_EFORMAT naming its row ("row 12: NaN"). */
typedef struct SlemArray {
  const void *data;
  int dtype;
  size_t rows, cols;
} SlemArray;

/* ---- negative statistics (slem-negstats) ---- */

/* The options of a fit: those of slem-negstats, of every variant of the table, by name. */
typedef struct SlemFitOptions SlemFitOptions;

/* New options, slem-negstats' defaults (lambda-rel 1, linear SLEM). Errors: SLEM_ENOMEM. */
int slem_fit_options_new(SlemFitOptions **out, SlemError *err);
void slem_fit_options_free(SlemFitOptions *opts);

/* Sets option name (slem-negstats' long option without its dashes: "lambda",
 * "lambda-rel", "kernel", "rank", "depth", "eigen", "pca", "partial", "diagonal", ...) to
 * value, its text as on the command line (NULL for a flag), parsed and range-checked by
 * the very spec the tool uses. Rules between options are checked by slem_fit(). Errors:
 * SLEM_EINVAL, with slem-negstats' message ("--rank: '0' is not a whole number from 1 to
 * 1048576", "unknown option 'rnk'"). */
int slem_fit_options_set(SlemFitOptions *opts, const char *name, const char *value,
                         SlemError *err);

/* The options slem_fit_options_set() knows, in slem-negstats --help's order: i < count;
 * name, metavar (NULL for a flag) and help text (static storage). */
size_t slem_fit_options_count(void);
const char *slem_fit_option_name(size_t i);
const char *slem_fit_option_metavar(size_t i);
const char *slem_fit_option_help(size_t i);

/* A cache: negative statistics of one variant, as slem-negstats writes them. */
typedef struct SlemCache SlemCache;

/* Fits the statistics of the negatives x (n x d, n >= 1) with opts (NULL: the defaults):
 * the cache slem-negstats writes from a file of the same rows, the same bytes but for
 * its provenance (so the same fingerprint). Errors: those of slem-negstats (SLEM_EINVAL
 * for options that do not go together, SLEM_ENUMERIC for a singular matrix with a lambda
 * to try, SLEM_EFORMAT for a non-finite row). */
int slem_fit(SlemCache **out, const SlemArray *x, const SlemFitOptions *opts, int threads,
             SlemError *err);

/* The same from files: vector files of any format slem reads, or partial caches
 * (written with the option "partial"), merged exactly (paths[0..n)). */
int slem_fit_files(SlemCache **out, const char *const *paths, size_t n,
                   const SlemFitOptions *opts, int threads, SlemError *err);

/* Merges partial caches (fitted with "partial", of shards with "shard" I/N) into the cache
 * of one fit over all their rows, bit for bit: a final cache with opts' lambda, or a
 * partial one if opts has "partial". Errors: a missing or repeated shard, partial caches of
 * other data or arithmetic (SLEM_EINVAL, SLEM_EFORMAT). */
int slem_fit_merge(SlemCache **out, const SlemCache *const *parts, size_t n,
                   const SlemFitOptions *opts, int threads, SlemError *err);

/* Loads a .slem cache written by slem-negstats or slem_save(), checked as the tools check
 * it. Errors: SLEM_EIO, SLEM_EFORMAT (naming the file and what is wrong). */
int slem_load(SlemCache **out, const char *path, SlemError *err);

/* Writes the cache to path atomically (a temporary file renamed; nothing at path on
 * failure, an existing file unchanged): the bytes it was fitted or loaded as. path "-" is
 * SLEM_EINVAL. */
int slem_save(const SlemCache *cache, const char *path, SlemError *err);

void slem_cache_free(SlemCache *cache);

/* The JSON header of the cache, as slem-negstats --info prints it (kind, d, n, lambda,
 * arithmetic with its BLAS core, sections, fingerprint); owned by the cache. */
const char *slem_cache_info(const SlemCache *cache);

/* The cache's kind ("linear", "kernel", "partial", ...), the dimension of the vectors it
 * encodes, and its fingerprint (16 hex digits of its payload's checksum), owned by it. */
const char *slem_cache_kind_name(const SlemCache *cache);
size_t slem_cache_dim(const SlemCache *cache);
const char *slem_cache_fingerprint_of(const SlemCache *cache);

/* ---- encoding (slem-encode) ---- */

typedef struct SlemEncodeOptions SlemEncodeOptions;

int slem_encode_options_new(SlemEncodeOptions **out, SlemError *err);
void slem_encode_options_free(SlemEncodeOptions *opts);

/* Sets an option of slem-encode by name, as slem_fit_options_set(): "alpha", "basic",
 * "classifier", "theta", "couple", "projections", "coordinates", "precision". */
int slem_encode_options_set(SlemEncodeOptions *opts, const char *name, const char *value,
                            SlemError *err);

/* The number of values of one encoded row of cache with opts (NULL: defaults), or 0 with
 * err filled when the options do not go with the cache. */
size_t slem_encode_dim(const SlemCache *cache, const SlemEncodeOptions *opts, SlemError *err);

/* Encodes the rows of x (x->cols the cache's dimension) into out, x->rows x
 * slem_encode_dim() float32 values: row i of out is the very bytes slem-encode writes for
 * row i of a file holding x, whatever the threads and however the rows are cut. */
int slem_encode(const SlemCache *cache, const SlemArray *x, const SlemEncodeOptions *opts,
                int threads, float *out, SlemError *err);

/* ---- search (slem-match) ---- */

enum {
  SLEM_SEARCH_NORMALIZE = 1  /* cosine: queries and database rows scaled to unit length */
};

/* The k best database rows of every query by inner product (or cosine), into D
 * (queries->rows x k float32 scores) and I (int64 rows of database), FAISS's layout: a
 * query's hits by decreasing score, ties by the lower row, and when k > database->rows the
 * rest of the row padded with I = -1, D = -FLT_MAX (as faiss.IndexFlatIP; an empty
 * database: padding alone). The scores and rows are those of `slem-match -F npy` on the
 * same vectors, at any thread count. Memory: one block of the database beyond the caller's
 * arrays. Errors: SLEM_EINVAL for k 0, dimensions that differ, an empty query set;
 * SLEM_EFORMAT for a non-finite value (or a float64 beyond float32's range), naming the
 * array, its row and column; all checked before D and I are written. */
int slem_search(const SlemArray *queries, const SlemArray *database, size_t k, int flags,
                int threads, float *D, int64_t *I, SlemError *err);

/* Kernel SLEM's exact similarity (slem-match -c CACHE): queries and database are raw
 * vectors (the cache's dimension), encoded through the kernel cache, scored exactly.
 * Errors: those of slem_search(); SLEM_EINVAL for a cache of another kind or of depth
 * above 1, SLEM_SEARCH_NORMALIZE (the similarity is normalised); SLEM_EFORMAT for a
 * negative value with a kernel of histograms (chi2, intersection, hellinger). */
int slem_search_kernel(const SlemCache *cache, const SlemArray *queries,
                       const SlemArray *database, size_t k, int flags, int threads, float *D,
                       int64_t *I, SlemError *err);

/* ---- evaluation (slem-eval) ---- */

/* Ground truth for slem_evaluate(): qrels (a TREC qrels file whose qids and docnos are
 * query and database row numbers, or the ids named), or labels (relevant: the same
 * label). Exactly one of qrels and query_labels. */
typedef struct SlemTruthArrays {
  const char *qrels;                /* path, or NULL */
  const int64_t *query_labels;      /* nq labels, or NULL */
  const int64_t *db_labels;         /* ndb labels (with query_labels) */
  size_t ndb;                       /* with qrels too: > 0 bounds the rows of I (0: none) */
  size_t nq;                        /* query_labels' count (slem_evaluate(): 0 is its nq) */
} SlemTruthArrays;

/* Evaluates I (nq x k database rows per query, -1 padding ignored) against truth:
 * measure names as slem-eval -M takes them, and "map", "P_1", "P_5", "P_10", "recall_K"
 * of its summary; values[i] is measures[i] over all queries, what slem-eval prints for a
 * ranking of the same rows (queries named "0", "1", ..., results by their row). A measure
 * of -M must give one value ("ndcg_cut.10", not "ndcg_cut"). Errors: SLEM_EINVAL for an
 * unknown measure or a row out of range (below -1, or at ndb and beyond when ndb > 0),
 * SLEM_EFORMAT for a row twice in a query, those of reading qrels; values written only on
 * success. */
int slem_evaluate(const int64_t *I, size_t nq, size_t k, const SlemTruthArrays *truth,
                  const char *const *measures, size_t nmeasures, double *values,
                  SlemError *err);

/* The same for a ranking file of slem-match (any ranking format, format NULL: by its
 * name or content). */
int slem_evaluate_file(const char *ranking, const char *format, const SlemTruthArrays *truth,
                       const char *const *measures, size_t nmeasures, double *values,
                       SlemError *err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
