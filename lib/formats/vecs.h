/* Vector files: fvecs, bvecs, ivecs, npy, text, fbin, u8bin, i8bin and ibin, read in
 * blocks and written atomically; HDF5 datasets (FILE.h5:DATASET) read.
 * Each format is one entry of a table (lib/formats/vecs.c; the formats are in lib/formats/fmt_*.c behind
 * the internal interface lib/formats/vecfmt.h): its names and extensions, its magic, its reader
 * and its writer.
 *
 * fvecs/bvecs/ivecs: per record an int32 little-endian dimension d, then d float32 /
 * uint8 / int32 values. npy: versions 1-3, dtype f2, f4, f8, i1, u1, i2, i4, i8 in either
 * byte order, C or Fortran order (read by strided reads; from a pipe held whole up to
 * 64 MiB), 2-D (n, d) or 1-D (d,) as one vector. Text: one vector per line, values
 * separated by white space or commas; blank lines and lines starting with '#' are
 * skipped. fbin/u8bin/i8bin/ibin (big-ann-benchmarks): uint32 n, uint32 d, then n x d
 * float32 / uint8 / int8 / int32; an ibin ground-truth file (ids, then as many float32
 * distances) reads as its ids. HDF5: a 2-D dataset of any float or integer type, from a
 * file (lib/formats/fmt_hdf5.c).
 *
 * Records are numbered from 1 in messages, text lines from 1.
 */
#ifndef SLEM_VECS_H
#define SLEM_VECS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "vectypes.h"

/* Rows per block for streaming vectors of dimension d: about 2^21 values (16 MiB of
 * doubles), at least 256 and at most 4096 rows, so that memory stays bounded at any d
 * while the BLAS calls keep a good shape. */
size_t slem_block_rows(size_t d);

/* Parses a format's name or alias ("fvecs", "bvecs", "ivecs", "npy", "text", also "txt",
 * "csv", "tsv"), or "auto". Returns SLEM_EINVAL on an unknown name. */
int slem_format_parse(SlemFormat *fmt, const char *name);
/* The canonical name of fmt ("fvecs", ...), "auto" for SLEM_FMT_AUTO. Static storage. */
const char *slem_format_name(SlemFormat fmt);

/* The canonical names of every format, for messages and --help: "fvecs, bvecs, ivecs,
 * npy, text". Static storage; cannot fail. */
const char *slem_format_names(void);

/* What a format's writer can do, from the table of formats: whether it stores values of
 * dt (SLEM_DTYPE_F4 always; npy also f2 and i1, the container f8), and whether its files
 * carry their rows' ids, the metadata of the cache that made them and kernel projections
 * (the descriptor container). 0 for SLEM_FMT_AUTO or an unknown format. Cannot fail. */
int slem_format_stores(SlemFormat fmt, SlemDtype dt);
int slem_format_carries(SlemFormat fmt);

/* The format named by path's extension, or SLEM_FMT_AUTO when it names none. */
SlemFormat slem_format_from_path(const char *path);

typedef struct SlemVecReader SlemVecReader;

/* Opens path ("-": stdin) and reads as far as the dimension. fmt SLEM_FMT_AUTO takes the
 * format from the extension, else from the first bytes (npy magic, HDF5 magic, text, else
 * fvecs; bvecs is recognised when its second record header agrees; fvecs whose values
 * have the bit patterns of small integers is refused as possibly ivecs, SLEM_EFORMAT
 * asking for the format; npz and MATLAB .mat files are refused by name). A path that does
 * not exist as named but whose part before the last ':' does is FILE:NAME, the dataset
 * NAME of an HDF5 file (any other format refuses a NAME). Errors: SLEM_EIO (open),
 * SLEM_EFORMAT (empty file, bad header, file size not a multiple of the record size or
 * not the header's, unsupported npy dtype, a Fortran-order npy on a pipe above 64 MiB,
 * dimension 0 or above SLEM_DIM_MAX). */
int slem_vecreader_open(SlemVecReader **self, const char *path, SlemFormat fmt,
                        SlemError *err);
/* Opens a reader of the caller's array data: rows x cols values of dtype (SLEM_DTYPE_F4 or
 * SLEM_DTYPE_F8), row-major, contiguous, which must stay valid and unchanged until
 * slem_vecreader_free() (nothing is copied at the open; each read copies the rows it
 * returns). name (NULL: "array") names it in messages, its rows and columns numbered from
 * 0 ("x: row 12, column 3: NaN"). It reads as a file of those values would (float32: as
 * fvecs, slem_vecreader_f32_exact(); float64: as an f8 npy), counts its rows, rewinds and
 * seeks; no file name or format option reaches it. A non-finite value (or, read as float32,
 * a float64 beyond float32's range) is SLEM_EFORMAT, or skipped with
 * slem_vecreader_skip_nonfinite(). Errors: SLEM_EINVAL (another dtype, rows 0, cols 0 or
 * above SLEM_DIM_MAX, data NULL), SLEM_ENOMEM. */
int slem_vecreader_open_array(SlemVecReader **self, const char *name, const void *data,
                              int dtype, size_t rows, size_t cols, SlemError *err);
/* An array's reader: 1, its bytes (rows x cols values, as given) in *data and their number
 * in *size (either may be NULL); 0 for a reader of anything else. Cannot fail. */
int slem_vecreader_array(const SlemVecReader *self, const void **data, size_t *size);

/* The inputs of a run that are arrays, for a pipeline that opens its inputs by name, once
 * per pass: an input named by the very string that slem_vecreader_name() of one of
 * readers[0..n) returns (that pointer, not its text) is that array, so that no text (a file
 * name, an option) ever names one. {NULL, 0}: none. */
typedef struct SlemVecArrays {
  SlemVecReader *const *readers;
  size_t n;
} SlemVecArrays;

/* The reader of arrays (which may be NULL) that path names, or NULL: path is a path (or
 * "-"). Cannot fail. */
const SlemVecReader *slem_vecarrays_find(const SlemVecArrays *arrays, const char *path);

/* Opens path as slem_vecreader_open(path, fmt) does, unless it names an array of arrays
 * (slem_vecarrays_find()): then a new reader of that array from its first row, over the
 * same memory (fmt is not looked at). Errors: those of slem_vecreader_open(), SLEM_ENOMEM. */
int slem_vecreader_open_input(SlemVecReader **self, const char *path, SlemFormat fmt,
                              const SlemVecArrays *arrays, SlemError *err);

/* As slem_vecreader_open(), but an input with no vectors (an empty file or pipe, an npy
 * array or an fbin header of 0 rows, text with no vector line) is not an error: it opens
 * with count 0, reads no vector, and has the dimension its header gives, else empty_dim
 * (> 0). What encodes a night with no new images uses. */
int slem_vecreader_open_empty(SlemVecReader **self, const char *path, SlemFormat fmt,
                              size_t empty_dim, SlemError *err);
/* 1 when self was opened by slem_vecreader_open_empty() on an input with no vectors. */
int slem_vecreader_is_empty(const SlemVecReader *self);
void slem_vecreader_free(SlemVecReader *self);

size_t slem_vecreader_dim(const SlemVecReader *self);
/* Non-zero when float32 holds every value of self exactly (binary float32, float16, 8-
 * and 16-bit integers, unscaled): slem_vecreader_read_f32() then loses nothing, and half
 * the bytes of slem_vecreader_read() pass through memory. */
int slem_vecreader_f32_exact(const SlemVecReader *self);
/* 1 when self stores integers (ivecs, bvecs, ibin, u8bin, i8bin, an integer npy or HDF5
 * dataset), 0 when it stores floating-point values (fvecs, fbin, a float or scaled npy, a
 * float HDF5 dataset, descriptors), -1 when its values are text (typed by their digits
 * only). */
int slem_vecreader_integers(const SlemVecReader *self);
/* The distance self's file says its rows are compared by: an HDF5 file's attribute
 * 'distance', as ann-benchmarks writes it ("angular", "euclidean", "hamming", "jaccard"),
 * at most 31 bytes of it; "(not a string)" for an attribute of another type; NULL when the
 * file says none (every other format). */
const char *slem_vecreader_distance(const SlemVecReader *self);
/* Number of vectors when the header or the file size tells it, else -1. */
int64_t slem_vecreader_count(const SlemVecReader *self);
SlemFormat slem_vecreader_format(const SlemVecReader *self);
const char *slem_vecreader_name(const SlemVecReader *self);
/* Vectors returned so far. */
uint64_t slem_vecreader_done(const SlemVecReader *self);

/* Reads up to max vectors into x(max, d), row-major, as double. *got is 0 at the end.
 * Every value is checked finite. A container's rows come only from blocks verified whole
 * (from a pipe too; its ids are verified with its last rows), so that a caller that reads
 * to the end, or to the end of its window, has been told of any corruption before it
 * commits what it wrote. Errors: SLEM_EFORMAT naming the record (dimension that differs,
 * truncated record, NaN or Inf, text that is not a number, "checksum mismatch in the rows:
 * records A to B ... are corrupt"), SLEM_EIO. */
int slem_vecreader_read(SlemVecReader *self, double *x, size_t max, size_t *got,
                        SlemError *err);

/* The same into float32 x(max, d): binary float32 records are copied as they are (after
 * the checks), other types converted. For code that computes in float32 anyway. */
int slem_vecreader_read_f32(SlemVecReader *self, float *x, size_t max, size_t *got,
                            SlemError *err);

/* Every reader of the process reads a block of fixed-size binary records from a regular
 * file (fvecs, bvecs, ivecs, npy, the bin formats, a container without a block table) in
 * pieces of 4 MiB or more on up to n threads, each piece checked by its thread (1, the
 * default: one read, checked by the caller's thread). The same rows and the same errors.
 * Set once, at start-up. */
void slem_vecreader_set_read_threads(int n);

/* Rows of rec bytes in a block that is read on every reading thread set above: one piece
 * of 4 MiB per thread (0 with one reading thread). For a caller whose blocks are small
 * otherwise. Cannot fail. */
size_t slem_vecreader_rows_for_pieces(size_t rec);

/* With on, records holding a NaN or an Inf are skipped and counted instead of being an
 * error (text lines too). Record numbers in messages still count them. */
void slem_vecreader_skip_nonfinite(SlemVecReader *self, int on);
uint64_t slem_vecreader_skipped(const SlemVecReader *self);

/* Starts again from the first vector. Errors: SLEM_EIO when the input is not a regular
 * file. */
int slem_vecreader_rewind(SlemVecReader *self, SlemError *err);
int slem_vecreader_seekable(const SlemVecReader *self);

/* Moves to vector row (from 0) without reading the rows before it: a regular file of
 * fixed-size records whose number is known (not text, not a Fortran-order npy) read
 * without skipping non-finite records; slem_vecreader_can_seek() tells. A container reads
 * the block of its table that holds row whole, and verifies it, before handing out row.
 * Errors: SLEM_EINVAL when it cannot, SLEM_EIO, SLEM_EFORMAT (that block is corrupt). */
int slem_vecreader_seek(SlemVecReader *self, uint64_t row, SlemError *err);
int slem_vecreader_can_seek(const SlemVecReader *self);

/* Whether self reads a container of kernel projections (slem-encode --projections); if so
 * its layout: the base dimension, the rank, the coupling (any may be NULL). */
int slem_vecreader_projections(const SlemVecReader *self, size_t *d, size_t *r, int *couple);

/* Lets self's rows be read when they are kernel projections; reading them is refused
 * otherwise (SLEM_EFORMAT naming the file: they are not vectors to any other tool). */
void slem_vecreader_accept_projections(SlemVecReader *self);

/* After slem_vecreader_follow_values() (before the first read), values_crc is the CRC-32
 * of the values the read calls returned since the start (or the last rewind), d per row, as
 * they returned them (float32 or double): the same for the same vectors read the same way,
 * whatever the blocks; 0 when not followed (it costs a pass over the values). Cannot fail. */
void slem_vecreader_follow_values(SlemVecReader *self);
uint32_t slem_vecreader_values_crc(const SlemVecReader *self);

/* A descriptor container: 1 and *crc the checksum its header records of its whole payload
 * (its rows and ids), which names its content without reading it; 0 for any other format. */
int slem_vecreader_payload_crc(const SlemVecReader *self, uint32_t *crc);

/* The fingerprint of the cache that made the descriptors of a container read by self, or
 * NULL for any other format (plain vectors, as far as slem can tell). */
const char *slem_vecreader_fingerprint(const SlemVecReader *self);

/* The encoding options a shard's container records (SlemDescMeta's encoding), or NULL:
 * not a shard, or one written by an older slem. */
const char *slem_vecreader_shard_encoding(const SlemVecReader *self);

/* The line of the arithmetic (arith.h) that made the rows of a container read by self, or
 * NULL: another format, or a container that records none (an older slem). */
const char *slem_vecreader_arith(const SlemVecReader *self);

/* The ids a container read by self carries (owned by self), or NULL: none, or a container
 * on a pipe (its ids follow its rows, so they cannot name them while they are read; they
 * are verified, checksum, text and uniqueness, when the last row is read). */
const struct SlemIds *slem_vecreader_ids(const SlemVecReader *self);

/* The shard a container read by self records (written by slem-encode --shard I/N): 1 and
 * *index (I), *count (N), *first_row (the row of the whole input that its first row is) and
 * *total (the input's rows, -1 when the container does not record them); any may be NULL.
 * 0 for a container that is no shard and for any other format. Cannot fail. */
int slem_vecreader_shard(const SlemVecReader *self, uint64_t *index, uint64_t *count,
                         uint64_t *first_row, int64_t *total);

/* The JSON header of a container read by self (owned by self), or NULL. */
const char *slem_vecreader_meta(const SlemVecReader *self);

/* Refuses what cannot be compared: a and b (queries and one database file) both
 * containers from different caches (SLEM_EFORMAT naming both files and fingerprints, and
 * that the older side must be re-encoded), or of two couplings of one cache (slem-encode
 * --couple: SLEM_EFORMAT naming both files, the cache and both couplings). Returns SLEM_OK otherwise. When exactly one
 * side is a container, *plain_side is set to 1 (a is plain) or 2 (b is plain), else 0:
 * the caller then checks that the plain side holds unit-norm descriptors. */
int slem_vecreaders_compatible(const SlemVecReader *a, const SlemVecReader *b, int *plain_side,
                               SlemError *err);

typedef struct SlemVecWriter SlemVecWriter;

/* Parses "f4", "f2", "i1" (also "float32", "float16", "int8"). Returns SLEM_EINVAL on an
 * unknown name. */
int slem_dtype_parse(SlemDtype *dt, const char *name);

/* The format a writer to path would use when none is given: from path's extension;
 * fvecs for "-" (stdout) and for a path that exists and is not a regular file (a device,
 * a FIFO). Errors: SLEM_EINVAL when the extension is missing or names no format (the
 * message names path and the known extensions). */
int slem_format_for_output(SlemFormat *fmt, const char *path, SlemError *err);

/* Opens path ("-": stdout) for n_hint vectors of dimension d (n_hint -1 when unknown)
 * in format fmt (SLEM_FMT_AUTO: as slem_format_for_output() says). npy and the *bin
 * formats need the count in their header: to stdout they need n_hint; to a file the
 * header is patched on close. Errors: SLEM_EIO, SLEM_EINVAL (no format for path, npy or
 * *bin to a pipe with no count). */
int slem_vecwriter_open(SlemVecWriter **self, const char *path, SlemFormat fmt, size_t d,
                        int64_t n_hint, SlemError *err);

/* Stores the values as dt instead of float32; before the first write. Errors:
 * SLEM_EINVAL when the format cannot store dt (only npy can store f2 and i1), or after a
 * write. */
int slem_vecwriter_set_dtype(SlemVecWriter *self, SlemDtype dt, SlemError *err);

/* Records meta (copied) in a container output; ignored by the other formats. Call before
 * the first write. Errors: SLEM_ENOMEM. */
int slem_vecwriter_set_meta(SlemVecWriter *self, const SlemDescMeta *meta, SlemError *err);

/* The format self writes (never SLEM_FMT_AUTO): whether set_meta() records anything. */
SlemFormat slem_vecwriter_format(const SlemVecWriter *self);

/* Appends n vectors x(n, d). bvecs, ivecs, u8bin, i8bin and ibin accept only integral
 * values in range; an npy of float16 only values within +-65504. */
int slem_vecwriter_write(SlemVecWriter *self, const float *x, size_t n, SlemError *err);

/* Appends n rows x(n, d) of doubles: a container (SLEM_FMT_SLEM) of kernel projections
 * only, whose writer was set to SLEM_DTYPE_F8. Errors: SLEM_EINVAL otherwise, SLEM_EIO. */
int slem_vecwriter_write_f64(SlemVecWriter *self, const double *x, size_t n, SlemError *err);

/* Finishes the file and moves it into place; frees self whatever happens. */
int slem_vecwriter_close(SlemVecWriter *self, SlemError *err);

/* Drops the output, leaving no file; frees self. Accepts NULL. */
void slem_vecwriter_abort(SlemVecWriter *self);

#endif
