/* The interface a vector format implements (internal to lib/, not part of the API).
 *
 * A format is one SlemVecFormatDef: its names, how to recognise it from its first bytes,
 * and the hooks of its reader and writer. lib/vecs.c holds the table of formats, the
 * public reader and writer that dispatch through it, and the reading of fixed-size binary
 * records that most formats share; each family of formats lives in its own file
 * (fmt_vecs.c, fmt_npy.c, fmt_text.c, fmt_bin.c). Adding a format is one definition there
 * and one line in the table.
 */
#ifndef SLEM_VECFMT_H
#define SLEM_VECFMT_H

#include <stddef.h>
#include <stdint.h>

#include "arith.h"
#include "error.h"
#include "io.h"
#include "vecs.h"

/* The message for data after the last of the records that count_from counts, the same for
 * a file (found by its size at open) and a pipe (found at its end): SLEM_EFORMAT naming
 * the file and the record. */
int slem_vfmt_beyond_count(const SlemVecReader *r, SlemError *err);
/* With exact_end, on a pipe whose count's records have all been read: reads what is left
 * and fails (slem_vfmt_beyond_count()) when more than tail_ok bytes follow, or other than
 * none or tail_ok. Checks once; SLEM_OK on a file or before the last record. */
int slem_vfmt_pipe_end(SlemVecReader *r, SlemError *err);

/* Element types of binary payloads (little-endian unless the reader's swap is set). */
enum { SLEM_DT_F4, SLEM_DT_F8, SLEM_DT_F2, SLEM_DT_U1, SLEM_DT_I1, SLEM_DT_I2, SLEM_DT_I4 };

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
  /* npy in Fortran order (column-major): read by npy's own hook */
  int fortran;
  int fd;             /* own descriptor for pread, or -1 */
  unsigned char *whole; /* from a pipe: the whole payload, or NULL */
  unsigned char *cols;  /* one block, column by column */
  size_t cols_cap;
  /* text: */
  double *pending;    /* the first line, parsed at open */
  double *row;        /* one row, for reading into float */
  size_t pending_bad; /* 1 + index of a non-finite value in the pending row */
  uint64_t pending_line;
  int has_pending;
  uint64_t line_no;   /* lines read */
  /* the descriptor container: */
  uint32_t crc_want;  /* of the whole payload: the records, then crc_tail */
  unsigned char *crc_tail; /* what follows the rows in the payload (padding, ids) */
  size_t crc_tail_len;
  int has_payload;    /* payload_crc is the header's checksum of the whole payload */
  uint32_t payload_crc;
  char cache_fp[17];  /* the fingerprint of the cache that made the descriptors, or "" */
  char arith[SLEM_ARITH_MAX];  /* the arithmetic that encoded them (arith.h), or "" */
  char *meta_json;    /* its JSON header, or NULL */
  struct SlemIds *ids; /* the ids it carries, or NULL */
  uint64_t tail_ids_off, tail_ids_bytes; /* where the ids lie in crc_tail (bytes 0: none) */
  int tail_read;      /* crc_tail holds what follows the rows (a pipe: only after the last row) */
  /* its block table: the rows in blocks of blk_rows, each with its CRC-32, so that a read of
   * any window verifies the blocks it touches, and no row leaves the reader unverified */
  uint64_t blk_rows;  /* 0: no table (a container of the first release, or another format) */
  uint64_t blk_count;
  uint64_t blk_off;   /* where the table lies in the file */
  uint32_t *blk_crc;  /* blk_crc[blk_count] */
  uint32_t tail_crc;  /* of what follows the rows in the payload (padding, ids) */
  unsigned char *blk_buf; /* one block read ahead and verified; its rows from blk_at on are
                           * the next ones handed out */
  size_t blk_n, blk_at, blk_cap;
  int kproj;          /* its rows are kernel projections, laid out by kp_d, kp_r, kp_couple */
  int kproj_ok;       /* the caller reads them as such (else reading them is refused) */
  size_t kp_d, kp_r;
  int kp_couple;
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
  unsigned char *rec;  /* one record of 4 + 4d bytes, for formats that assemble one */
  /* the descriptor container: */
  SlemDescMeta meta;   /* what the container records of where its rows come from */
  char *meta_strs;     /* the copies of meta's strings */
  uint32_t crc;        /* CRC-32 of the payload written so far */
  unsigned char *buf;  /* to a pipe: the rows' bytes, held until the close */
  size_t buf_n, buf_cap, ids_pad;
  int room;            /* the room of the header is written (to a file) */
  uint32_t *blk_crc;   /* the CRC-32 of each block of rows written so far */
  size_t blk_count, blk_cap;
  uint32_t blk_cur;    /* of the block being written, blk_fill bytes so far */
  uint64_t blk_fill;
};

struct SlemVecFormatDef {
  SlemFormat id;
  /* The canonical name first, then aliases, NULL-terminated; each is also a file
   * extension that selects the format. */
  const char *names[5];
  /* How sure the first n bytes (n >= 1, at most 4096) are of this format: 0 (no) to 100
   * (a magic number). The highest wins; NULL: never recognised by content. */
  int (*sniff)(const unsigned char *p, size_t n);
  /* Reads the header (the input is at its start; the format is known) and sets d, count
   * and, for binary records, dtype, esize, prefix, rec, data_off, count_from. */
  int (*open)(SlemVecReader *r, SlemError *err);
  /* Reads up to max vectors into xd (double) or xf (float), whichever is not NULL, and
   * adds them to r->done. NULL: fixed-size binary records, read by lib/vecs.c. */
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
   * NULL: seek to data_off + row * rec. */
  int (*seek)(SlemVecReader *r, uint64_t row, SlemError *err);
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

/* The definition of fmt, or NULL (SLEM_FMT_AUTO, or not a format). */
const SlemVecFormatDef *slem_vfmt_find(SlemFormat fmt);

/* Little-endian uint32 at p. */
static inline uint32_t slem_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bytes of a Fortran-order npy payload that are held whole when it comes from a pipe. */
#define SLEM_NPY_FORTRAN_PIPE_MAX ((uint64_t)64 << 20)

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

/* Appends n rows of doubles to a container of kernel projections. */
int slem_vfmt_slem_write_f64(SlemVecWriter *w, const double *x, size_t n, SlemError *err);

#endif
