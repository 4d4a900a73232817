/* The vocabulary of vector files that the public reader and writer (vecs.h) and the
 * formats behind them (vecfmt.h, fmt_*.c) share: the formats' ids, the element types, what
 * a descriptor container records of its rows. Types only, so that the formats depend on
 * it and not on the table of formats (vecs.c) that depends on them.
 */
#ifndef SLEM_VECTYPES_H
#define SLEM_VECTYPES_H

#include <stddef.h>
#include <stdint.h>

struct SlemIds;
typedef struct SlemVecReader SlemVecReader;
typedef struct SlemVecWriter SlemVecWriter;

typedef enum SlemFormat {
  SLEM_FMT_AUTO = 0,
  SLEM_FMT_FVECS,
  SLEM_FMT_BVECS,
  SLEM_FMT_IVECS,
  SLEM_FMT_NPY,
  SLEM_FMT_TEXT,
  SLEM_FMT_FBIN,
  SLEM_FMT_U8BIN,
  SLEM_FMT_I8BIN,
  SLEM_FMT_IBIN,
  SLEM_FMT_SLEM,    /* slem's descriptor container (.slem, kind "descriptors") */
  SLEM_FMT_HDF5,    /* a dataset of an HDF5 file, FILE.h5:DATASET (read only) */
  SLEM_FMT_FOREIGN, /* npz, mat: recognised to be refused with what to do instead */
  SLEM_FMT_MEM,     /* an array in the caller's memory (slem_vecreader_open_array() only) */
  SLEM_FMT_END /* one past the last format; new formats go just before it */
} SlemFormat;

/* Largest dimension accepted from a file header, to refuse absurd sizes before
 * allocating anything. */
#define SLEM_DIM_MAX (1u << 20)

/* What a descriptor container (SLEM_FMT_SLEM) records of its rows: the cache that made them
 * (its fingerprint, cache.h), where they come from, and the shard they are. */
typedef struct SlemDescMeta {
  const char *cache_fingerprint;  /* 16 hex digits, or NULL */
  const char *cache_path;         /* the cache's file, for messages; may be NULL */
  const char *input;              /* the input's name; may be NULL */
  int64_t input_count;            /* the input's vectors, -1 unknown */
  uint64_t shard_index, shard_count;  /* shard_count 0: not a shard */
  uint64_t first_row;             /* the global row of the first row */
  const char *kind_of_rows;       /* "descriptors", "classifiers" or "kernel-projections" */
  size_t kernel_d, kernel_r;      /* kernel projections: the base dimension, the rank */
  int kernel_couple;              /* kernel projections: their coupling (SLEM_COUPLE_*, 0 none) */
  int couple;                     /* descriptors of a coupling (SLEM_COUPLE_*, 0 none): then */
  const char *couple_cache_fp;    /* the fingerprint of the cache they couple (cache_fingerprint
                                     is then that of the coupling: slem-encode --couple) */
  const struct SlemIds *ids;      /* NULL, or the ids of the input: the container keeps those
                                     of its rows (from first_row - the shard's start - on) */
  uint64_t ids_first;             /* the index in ids of the container's first row */
  const char *encoding;           /* a shard's: the options that change its bits besides the
                                     cache's fingerprint ("precision auto", "...; theta 2"),
                                     which the shards of one encode share; may be NULL */
} SlemDescMeta;

/* Doubles per row of a container of kernel projections (kproj.h, slem_kproj_pack()): the
 * prepared features (d), v and z (r each), N, and when coupled t. */
#define SLEM_KPROJ_WIDTH(d, r, couple) ((d) + 2 * (r) + 1 + ((couple) ? 1 : 0))

/* The couplings of kernel SLEM (kproj.h), as projections record them: 0 none, "exact"
 * (the inner product of the coupled exemplars, the default of --couple), "authors" (the
 * score of the authors' slem_similarity.m). */
enum { SLEM_COUPLE_NONE = 0, SLEM_COUPLE_EXACT = 1, SLEM_COUPLE_AUTHORS = 2 };

/* The name of coupling couple ("none" for 0), NULL for a value that is none. */
static inline const char *slem_couple_name(int couple) {
  static const char *const names[] = {"none", "exact", "authors"};
  return couple >= 0 && couple < (int)(sizeof names / sizeof names[0]) ? names[couple] : NULL;
}

/* The coupling named name ("exact", "authors"; not "none"), or -1. */
static inline int slem_couple_parse(const char *name) {
  for (int c = SLEM_COUPLE_EXACT; slem_couple_name(c); c++) {
    const char *a = slem_couple_name(c), *b = name;
    while (*a && *a == *b) a++, b++;
    if (*a == *b) return c;
  }
  return -1;
}

/* Element types a writer can store instead of float32 (npy only): float16 (rounded to
 * nearest, ties to even; values beyond +-65504 are refused), or int8 holding
 * round(SLEM_I1_SCALE * x) (halves away from zero), clipped to +-SLEM_I1_SCALE, for
 * unit-norm descriptors. The scale is recorded in the npy header after the dictionary
 * ("# slem-scale: 1/127", which numpy.load ignores), and slem's reader divides by it
 * again; other readers see the integers. float64 only for a container of kernel
 * projections, written by slem_vecwriter_write_f64(). */
typedef enum SlemDtype { SLEM_DTYPE_F4 = 0, SLEM_DTYPE_F2, SLEM_DTYPE_I1, SLEM_DTYPE_F8 } SlemDtype;
#define SLEM_I1_SCALE 127

#endif
