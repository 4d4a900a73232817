/* The interface a vector format implements (internal to lib/, not part of the API).
 *
 * A format is one SlemVecFormatDef: its names, how to recognise it from its first bytes,
 * and the hooks of its reader and writer. lib/formats/vecs.c holds the table of formats and
 * its lookup, vecreader.c and vecwriter.c the public reader and writer that dispatch
 * through it, and vecfmt.c what the formats share (the reading of fixed-size binary
 * records, float16, the end of a pipe, the messages); each family of formats lives in its
 * own file (fmt_vecs.c, fmt_npy.c, fmt_text.c, fmt_bin.c, fmt_slem.c, fmt_hdf5.c,
 * fmt_foreign.c), its own state behind the reader's and the writer's priv. Adding a format
 * is one new file lib/formats/fmt_NAME.c holding its definition and one line in the table
 * of vecs.c.
 */
#ifndef SLEM_VECFMT_H
#define SLEM_VECFMT_H

#include <stddef.h>
#include <stdint.h>

#include "arith.h"
#include "error.h"
#include "io.h"
#include "vectypes.h"

/* The message for data after the last of the records that count_from counts, the same for
 * a file (found by its size at open) and a pipe (found at its end): SLEM_EFORMAT naming
 * the file and the record. */
int slem_vfmt_beyond_count(const SlemVecReader *r, SlemError *err);
/* With exact_end, on a pipe whose count's records have all been read: reads what is left
 * and fails (slem_vfmt_beyond_count()) when more than tail_ok bytes follow, or other than
 * none or tail_ok. Checks once; SLEM_OK on a file or before the last record. */
int slem_vfmt_pipe_end(SlemVecReader *r, SlemError *err);

/* Element types of binary payloads (little-endian unless the reader's swap is set). */
enum { SLEM_DT_F4, SLEM_DT_F8, SLEM_DT_F2, SLEM_DT_U1, SLEM_DT_I1, SLEM_DT_I2, SLEM_DT_I4,
       SLEM_DT_I8 };

typedef struct SlemVecFormatDef SlemVecFormatDef;

struct SlemVecReader {
  SlemIn *in;
  const SlemVecFormatDef *def;
  SlemFormat fmt;
  size_t d;
  int64_t count;      /* -1 unknown */
  uint64_t done;      /* vectors returned */
  uint64_t recs;      /* records consumed, skipped ones included */
  uint64_t skipped;   /* records skipped for a NaN or Inf */
  int values_on;       /* values_crc is followed (slem_vecreader_follow_values()) */
  uint32_t values_crc; /* CRC-32 of the values returned since the start, as returned */
  int skip_nonfinite;
  /* fixed-size binary records, set by the format's open hook: */
  int dtype;          /* element type */
  int swap;           /* elements are big-endian */
  double divisor;     /* values are divided by this (1 unless the file records a scale) */
  size_t esize;       /* bytes per element */
  size_t prefix;      /* bytes before the values of each record: 4 for an int32 d, else 0 */
  size_t rec;         /* bytes per record, prefix included */
  uint64_t data_off;  /* where the first record starts (rewind goes back there) */
  const char *count_from; /* non-NULL when count is exact and a short file is an error:
                           * what says so, in messages ("the shape") */
  int exact_end;      /* with count_from: nothing may follow the count's records, on a pipe
                         as in a file (checked at the end of a pipe; a file's size at open) */
  uint64_t tail_ok;   /* exact_end: this many bytes may follow instead (ibin's distances) */
  unsigned char *raw;
  size_t raw_cap;
  int scattered;      /* the records do not follow one another (npy in Fortran order): no
                       * seek, and the format's own read hook */
  /* what the input records of its rows, set by formats that carry it: */
  char cache_fp[17];  /* the fingerprint of the cache that made the descriptors, or "" */
  char arith[SLEM_ARITH_MAX];  /* the arithmetic that encoded them (arith.h), or "" */
  char *meta_json;    /* its JSON header, or NULL */
  struct SlemIds *ids; /* the ids of its rows, or NULL */
  int has_payload;    /* payload_crc is the checksum of the whole payload that names it */
  uint32_t payload_crc;
  uint64_t shard_index, shard_count, shard_first; /* the shard it records (slem-encode
                       * --shard): I, N (0: none) and the input's row of its first row */
  int64_t shard_total; /* with shard_count: the input's rows, -1 when not recorded */
  char shard_encoding[64]; /* with shard_count: its encoding options (SlemDescMeta), or "" */
  int kproj;          /* its rows are kernel projections, laid out by kp_d, kp_r, kp_couple */
  int kproj_ok;       /* the caller reads them as such (else reading them is refused) */
  size_t kp_d, kp_r;
  int kp_couple;
  int couple;         /* descriptors of a coupling (SLEM_COUPLE_*; 0 none, or not recorded) */
  char couple_fp[17]; /* with couple: the fingerprint of the cache they couple */
  void *priv;         /* the format's own state (its open hook allocates it, close frees it) */
  char *member;       /* PATH:NAME: the array NAME inside the file (formats with members:
                       * an HDF5 dataset), or NULL */
  int sniffed;        /* the format was guessed from the content (no -f, no extension) */
  int integral;       /* its values are stored as integers though read as F8 (an HDF5
                       * integer dataset); slem_vecreader_integers() */
  char distance[32];  /* the distance its file says its rows are compared by (an HDF5
                       * file's attribute 'distance', ann-benchmarks'), or "" */
  /* an input with no vectors: */
  size_t empty_dim;   /* > 0: such an input opens, with this dimension if it has none */
  int empty;          /* it is one: every read returns no vector */
};

struct SlemVecWriter {
  SlemOut *out;
  const SlemVecFormatDef *def;
  SlemFormat fmt;
  size_t d;
  int64_t n_hint;
  uint64_t n;          /* vectors written */
  SlemDtype dtype;     /* element type asked for (formats with out_dtypes) */
  int started;         /* the header is written */
  unsigned char *rec;  /* one record of 4 + 4d bytes, for formats that convert values */
  SlemDescMeta meta;   /* what the output records of where its rows come from (formats
                        * that keep it: the descriptor container) */
  char *meta_strs;     /* the copies of meta's strings */
  void *priv;          /* the format's own state (begin or header allocates it, wclose frees
                        * it) */
};

struct SlemVecFormatDef {
  SlemFormat id;
  /* The canonical name first, then aliases, NULL-terminated; each is also a file
   * extension that selects the format. */
  const char *names[5];
  /* Its files hold named arrays, read as PATH:NAME (r->member). */
  int members;
  /* Not listed among the formats (--help, messages): recognised only to be refused. */
  int unlisted;
  /* Its readers hold the caller's memory (fmt_mem.c): opened by slem_vecreader_open_array()
   * only, never from a name, an extension, the content or a format given (its names are
   * for messages: slem_format_parse() knows none of them). */
  int memory;
  /* Its files carry what their rows are beside them: their ids, the metadata of the cache
   * that made them, kernel projections (the descriptor container; slem_format_carries()). */
  int carries;
  /* How sure the first n bytes (n >= 1, at most 4096) are of this format: 0 (no) to 100
   * (a magic number). The highest wins; NULL: never recognised by content. */
  int (*sniff)(const unsigned char *p, size_t n);
  /* Reads the header (the input is at its start; the format is known) and sets d, count
   * and, for binary records, dtype, esize, prefix, rec, data_off, count_from. */
  int (*open)(SlemVecReader *r, SlemError *err);
  /* Reads up to max vectors into xd (double) or xf (float), whichever is not NULL, and
   * adds them to r->done. NULL: fixed-size binary records, read by
   * slem_vfmt_read_records() (vecfmt.c). */
  int (*read)(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
              SlemError *err);
  /* Back to the first vector. NULL: seek to data_off. */
  int (*rewind)(SlemVecReader *r, SlemError *err);
  /* The element types the writer can store, as bits 1u << SlemDtype (0: float32 only
   * or the format's own type). */
  unsigned out_dtypes;
  /* Checks that the output can be written (w->out is open; NULL: it can). */
  int (*begin)(SlemVecWriter *w, SlemError *err);
  /* Writes the header, if any, before the first record or at the close (NULL: none). */
  int (*header)(SlemVecWriter *w, SlemError *err);
  /* Writes n vectors x(n, d) as records w->n + 1, ... (w->n is advanced by the caller). */
  int (*write)(SlemVecWriter *w, const float *x, size_t n, SlemError *err);
  /* Completes the file before the commit (NULL: nothing to do). */
  int (*end)(SlemVecWriter *w, SlemError *err);
  /* Moves to record row (below or at the count; the input is a regular file of fixed-size
   * records) so that the next read returns it; r->recs and r->done are set by the caller.
   * NULL: seek to data_off + row * rec, and a reader of scattered records (r->scattered)
   * cannot move. */
  int (*seek)(SlemVecReader *r, uint64_t row, SlemError *err);
  /* Frees r->priv (NULL: the format has none, or free() is enough). */
  void (*close)(SlemVecReader *r);
  /* Frees w->priv, after a commit or an abort (NULL: free() is enough). */
  void (*wclose)(SlemVecWriter *w);
  /* Writes n vectors x(n, d) of doubles (w->dtype SLEM_DTYPE_F8; NULL: the format stores
   * no doubles). */
  int (*write_f64)(SlemVecWriter *w, const double *x, size_t n, SlemError *err);
};

/* For a format's open hook that found no vectors (what: "empty file", "npy array holds no
 * vectors", ...): when the caller allowed it (slem_vecreader_open_empty), marks r as an
 * empty input (count 0, its dimension r->d if the header gave one, else empty_dim) and
 * returns SLEM_OK; else SLEM_EFORMAT "NAME: no vectors (WHAT)". */
int slem_vfmt_empty(SlemVecReader *r, const char *what, SlemError *err);

extern const SlemVecFormatDef slem_vfmt_fvecs, slem_vfmt_bvecs, slem_vfmt_ivecs;
extern const SlemVecFormatDef slem_vfmt_npy;
extern const SlemVecFormatDef slem_vfmt_fbin, slem_vfmt_u8bin, slem_vfmt_i8bin, slem_vfmt_ibin;
extern const SlemVecFormatDef slem_vfmt_text;
extern const SlemVecFormatDef slem_vfmt_slem;
extern const SlemVecFormatDef slem_vfmt_hdf5;
extern const SlemVecFormatDef slem_vfmt_foreign;
extern const SlemVecFormatDef slem_vfmt_mem;

/* The definition of fmt, or NULL (SLEM_FMT_AUTO, or not a format). */
const SlemVecFormatDef *slem_vfmt_find(SlemFormat fmt);

/* The format of the table (vecs.c) whose sniffer is the most confident about the first n
 * bytes p (n >= 1); fvecs when none recognises them. Cannot fail. */
SlemFormat slem_vfmt_sniff(const unsigned char *p, size_t n);

/* Little-endian uint32 at p. */
static inline uint32_t slem_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bytes of a Fortran-order npy payload that are held whole when it comes from a pipe. */
#define SLEM_NPY_FORTRAN_PIPE_MAX ((uint64_t)64 << 20)

/* The threads a block of fixed-size binary records from a regular file is read and checked
 * on, in pieces of 4 MiB or more (1, the default: one read), for every reader of the
 * process; set once at start-up. SLEM_TEST_READ_PIECES=N (tests) cuts every block of N
 * records or more into N pieces, whatever their size. */
void slem_vfmt_set_read_threads(int n);
/* slem_vecreader_rows_for_pieces() */
size_t slem_vfmt_rows_for_pieces(size_t rec);

/* The reader of fixed-size binary records (the default when a format has no read hook). */
int slem_vfmt_read_records(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                           SlemError *err);

/* Refuses value j of record recno when it is not an integer within [lo, hi] (the
 * message names the format), else returns SLEM_OK. */
int slem_vfmt_check_integral(SlemVecWriter *w, float v, double lo, double hi, uint64_t recno,
                             size_t j, SlemError *err);

/* Decodes n records at raw (r->rec bytes each, numbered from r->recs + 1) into xd or xf
 * (whichever is not NULL) as *out rows: checks the dimension prefix, applies swap and
 * divisor, and skips (counting them in r->skipped) or refuses non-finite values. Errors:
 * SLEM_EFORMAT naming the record. Does not advance r->recs or r->done. */
int slem_vfmt_decode(SlemVecReader *r, const unsigned char *raw, size_t n, double *xd,
                     float *xf, size_t *out, SlemError *err);

/* The float16 bits h as a float (exact). */
float slem_half_to_float(uint16_t h);
/* v rounded to the nearest float16, ties to even. Returns -1 when v is finite but beyond
 * the float16 range (|v| >= 65520) or not finite, else 0. */
int slem_float_to_half(float v, uint16_t *h);

/* Sets err to the failed write on w's output (from errno) and returns SLEM_EIO. */
int slem_vfmt_write_error(SlemVecWriter *w, SlemError *err);

#endif
