/* The arithmetic a result was made with: what, besides its inputs, decides the last bits
 * of a cache, a descriptor or a score. OpenBLAS picks its kernels (its "core": Haswell,
 * SkylakeX, Zen, ...) when it is loaded, from the CPU or OPENBLAS_CORETYPE, and the
 * kernels of two cores round differently; its version, GSL's (eigensolver, Cholesky) and
 * the C library's (exp, log in the kernels) may too. slem's own dot products (dot.h) give
 * the same bits on SSE2 and AVX, so their path is recorded but not compared.
 *
 * One line names it, "Haswell (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)": two results can
 * be the same byte for byte only when their lines are equal. Caches and descriptor
 * containers record it in their JSON header as
 *   "arithmetic": {"name": LINE, "blas_core": ..., "blas_config": ..., "gsl": ...,
 *                  "libc": ..., "lanes": "avx" | "sse2"[, "mixed": "LINE + LINE"]}
 * ("mixed": the inputs of a merge that was allowed to mix arithmetics).
 */
#ifndef SLEM_ARITH_H
#define SLEM_ARITH_H

#include <stddef.h>

/* Room for one line (with its NUL), and for several joined by " + ". */
#define SLEM_ARITH_MAX 160
#define SLEM_ARITH_LIST_MAX 512

struct cJSON;

/* This process's line (owned by the library; cannot fail). */
const char *slem_arith_name(void);

/* This process's BLAS core, as openblas_get_corename() says ("unknown" with another BLAS). */
const char *slem_arith_core(void);

/* Adds "arithmetic" (this process's) to the JSON object obj, with "mixed" when mixed is
 * neither NULL nor empty. Returns 0, or -1 when out of memory. */
int slem_arith_to_json(struct cJSON *obj, const char *mixed);

/* Copies the line of obj's "arithmetic" into name (size bytes, truncated); "" when obj
 * records none (written by an older slem). Cannot fail. */
void slem_arith_from_json(const struct cJSON *obj, char *name, size_t size);

/* Copies obj's "arithmetic" "mixed" list (the lines of a merge allowed to mix them, " + "
 * between) into list (size bytes, truncated); "" when it records none. Cannot fail. */
void slem_arith_mixed_from_json(const struct cJSON *obj, char *list, size_t size);

/* Appends every line of other (a list, " + " between) to list as slem_arith_list_add()
 * does. */
void slem_arith_list_merge(char *list, size_t size, const char *other);

/* Whether two recorded lines may differ in their bits: both known and not equal. A line
 * not recorded ("" or NULL) differs from none. */
int slem_arith_differ(const char *a, const char *b);

/* Whether two recorded lines name other libraries (OpenBLAS, GSL, C library), whatever
 * their cores: what decides the bits of slem-match's exact scores, which use the BLAS
 * only to find candidates within a proven bound (match.h). Unknown lines differ from none. */
int slem_arith_differ_libs(const char *a, const char *b);

/* The core named in a line: the text before " (", copied into core (size bytes). */
void slem_arith_core_of(const char *name, char *core, size_t size);

/* Appends name to the list (" + " between), unless it is empty or already there; list
 * holds size bytes and is truncated when full. */
void slem_arith_list_add(char *list, size_t size, const char *name);

#endif
