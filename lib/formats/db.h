/* A database: one or more vector files read as one sequence of rows, numbered from 0
 * consecutively across the files, optionally restricted to a shard of it.
 *
 * The files (segments) must share a dimension. Each may come with its ids file, so that
 * the ids of the whole database are the files' ids one after the other. (A file that
 * carries its own ids, such as a descriptor container, would supply them here too.)
 *
 * A shard (shard.h) restricts the rows read to [lo, hi) of the R rows; R must then be
 * known before reading, from the files' headers or sizes: a text file or a pipe whose
 * count is unknown cannot be sharded. Files wholly before the shard are not read; the
 * rows of a file before lo are read and dropped.
 */
#ifndef SLEM_DB_H
#define SLEM_DB_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ids.h"
#include "prefetch.h"
#include "shard.h"
#include "vecs.h"

typedef struct SlemDb SlemDb;

/* Opens the n >= 1 files paths[0..n-1] ("-": stdin, at most once) in format fmt (or
 * SLEM_FMT_AUTO, per file). ids_paths is NULL or n ids files, ids_paths[i] naming the
 * rows of paths[i]. Checked here, before any row is read: one dimension in every file,
 * and each ids file's count against its file's count when the header or the file size
 * tells it (otherwise when that file has been read), kernel projections in all files or
 * none, and every id once in the whole database (ids files, or the ids the containers
 * carry), and the shards of an encode (containers of slem-encode --shard I/N, which record
 * I, N, their first row and the input's rows): where one appears, shards 0/N to (N-1)/N of
 * that encode follow in order, each once, each starting where the one before ended and
 * together holding the input's rows; plain files and other whole runs of shards may come
 * before or after (a run's rows then follow the rows before it). Errors: those of opening
 * the files and reading the ids, SLEM_EFORMAT (dimensions, ids counts, a mix of projections
 * and vectors, an id given twice: the message names the file and line or record of both,
 * slem_ids_unique(); a shard missing, repeated, out of order or of another encode, naming
 * the file, the one before and the shard expected), SLEM_EINVAL (n 0, stdin twice),
 * SLEM_ENOMEM. */
int slem_db_open(SlemDb **self, const char *const *paths, const char *const *ids_paths,
                 size_t n, SlemFormat fmt, SlemError *err);

/* Reads a list of database files, one path per line (blank lines skipped; a path is the
 * whole line, spaces included, relative to the current directory). *paths (n entries) is
 * freed by slem_db_list_free(). Errors: SLEM_EIO, SLEM_EFORMAT (no path), SLEM_ENOMEM. */
int slem_db_list_read(char ***paths, size_t *n, const char *list, SlemError *err);
void slem_db_list_free(char **paths, size_t n);

/* A database over one reader, borrowed (it must outlive self), without ids. Errors:
 * SLEM_ENOMEM. */
int slem_db_wrap(SlemDb **self, SlemVecReader *r, SlemError *err);

void slem_db_free(SlemDb *self);

size_t slem_db_dim(const SlemDb *self);
size_t slem_db_files(const SlemDb *self);
/* The name of the database in messages: its file's name, or the first file's name and
 * how many follow. Owned by self. */
const char *slem_db_name(const SlemDb *self);
/* R: rows of all files, or -1 when some file's count is not known before reading. */
int64_t slem_db_rows(const SlemDb *self);
/* The reader of file i (i < slem_db_files()), borrowed: for its format and metadata. */
const SlemVecReader *slem_db_reader(const SlemDb *self, size_t i);
/* The ids of all rows (NULL without ids files, or without ids in every file when the files
 * are descriptor containers and no ids files were given), owned by self. */
const SlemIds *slem_db_ids(const SlemDb *self);

/* Whether the files are containers of kernel projections (slem-encode --projections) for
 * the kernel cache of fingerprint fp, base dimension d, rank r and coupling couple: *on 1
 * when all are (their rows are then accepted: SLEM_KPROJ_WIDTH(d, r, couple) doubles each),
 * 0 when none is (slem_db_open() refuses a mix). Errors: SLEM_EFORMAT naming the file, when
 * one comes from another cache, layout or coupling. */
int slem_db_projections(SlemDb *self, const char *fp, size_t d, size_t r, int couple, int *on,
                        SlemError *err);

/* Restricts reading to the rows of shard (all rows when shard->count is 0); call before
 * reading. Errors: SLEM_EINVAL when R is not known up front, naming the file that hides
 * its count. */
int slem_db_select(SlemDb *self, const SlemShard *shard, SlemError *err);
/* The rows [*lo, *hi) that reading returns; *hi is UINT64_MAX while R is unknown. */
void slem_db_window(const SlemDb *self, uint64_t *lo, uint64_t *hi);

/* Whether every file can be read again (regular files). */
int slem_db_seekable(const SlemDb *self);

/* 16 hex digits naming the database, for the shard line of its rankings (rankings.h): an
 * FNV-1a (64 bits) of its dimension, its rows, the fingerprints of the caches its
 * descriptors came from (containers), and its ids when it has some; not of how its rows are
 * split into files. Rankings of shards of other databases (another size, another cache,
 * other ids) then differ; two databases alike in all these but their values do not.
 * Cannot fail. */
void slem_db_fingerprint(const SlemDb *self, char out[17]);
/* 16 hex digits naming the database by its content, for the shard line of its rankings:
 * slem_db_fingerprint() and, file by file in order, a checksum of the file: for a
 * descriptor container the CRC-32 its header records of its payload (rows and ids: free),
 * for any other format the CRC-32 and size of the whole file, read for it (about 11 GB/s
 * from the page cache; a sharded search reads the whole file once more). Two databases of
 * other values, or split otherwise into files, then differ. Errors: SLEM_EINVAL (a file on
 * a pipe, other than a container, cannot be read again), SLEM_EIO, SLEM_ENOMEM. */
int slem_db_content_fingerprint(const SlemDb *self, char out[17], SlemError *err);

/* 16 hex digits naming a set of queries, for the shard line: their count n, dimension, the
 * CRC-32 of their values as read (queries must have followed them from the start:
 * slem_vecreader_follow_values()), and their ids in order (ids may be NULL). Cannot fail. */
void slem_db_query_fingerprint(const SlemVecReader *queries, uint64_t n, const SlemIds *ids,
                               char out[17]);

/* Starts again from the first row of the window. Errors: SLEM_EIO (a pipe). */
int slem_db_rewind(SlemDb *self, SlemError *err);

/* Reads the next block of at most max rows of the window into x (float32 when f32, else
 * double), never across a file boundary; pos tells the file, its record and the global
 * row of the block's first row. *got is 0 at the end. A SlemBlockReadFn with self as the
 * context. Errors: those of slem_vecreader_read(), SLEM_EFORMAT (an ids file whose count
 * disagrees with its file, found at the file's end). */
int slem_db_read(void *self, void *x, size_t max, int f32, size_t *got, SlemBlockPos *pos,
                 SlemError *err);

#endif
