/* The negative-statistics cache (.slem): what slem-negstats computes once and every
 * slem-encode reads. This file is the container of caches, generic over their kinds.
 *
 * Layout: the fixed header of the .slem container (container.h: magic, version, byte-order
 * mark, lengths, offsets, CRC-32s; SLEM_CACHE_VERSION is its version),
 * then the JSON header (cJSON: format, format_version, kind, d, n, the kind's own members,
 * sections with offset/shape/dtype, the arithmetic that made it (arith.h), provenance),
 * then the sections, each at a 64-byte aligned absolute offset, float64 little-endian,
 * row-major, so that a reader can use them in place from mmap.
 *
 * Kinds: each kind of cache belongs to a SLEM variant of lib/encode/ (variant.h), whose
 * file declares its struct and accessor, writes its members and sections with
 * slem_cache_write() and reads them back through slem_cache_section() and
 * slem_cache_header() (kind_NAME.[ch], or a new variant's var_NAME.c); slem_cache_read()
 * of lib/encode/cachekinds.c loads a cache (slem_cache_load()) and hands it to its kind's
 * reader, found through the variants' table. This file knows no kind but "partial"'s
 * n = 0 (a shard with no row).
 */
#ifndef SLEM_CACHE_H
#define SLEM_CACHE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "container.h"
#include "error.h"

#define SLEM_CACHE_VERSION 1

typedef struct SlemCache {
  const char *kind;       /* the JSON header's kind ("linear", "kernel", ...), owned by self */
  size_t d;               /* dimension of the input vectors */
  uint64_t n;             /* negatives summarised */
  /* The kind's own data, owned by the cache, read through its kind's accessor
   * (kind_NAME.h: slem_cache_linear(), ..., each NULL for the other kinds), set by the
   * kind's reader with slem_cache_set_kind(). */
  const void *kind_data;
  struct SlemCachePriv *priv;
} SlemCache;

/* A section to write: name, data(rows, cols) row-major (cols 0: a vector of rows). */
typedef SlemContainerSection SlemCacheSection;

/* Maps and checks path, whatever its kind: magic, byte order, version, header checksum,
 * both checksums, the JSON header's kind, d, n and sections, and no NaN or infinity in the
 * payload. *self is set to a new cache (kind_data NULL) freed by slem_cache_free(); its
 * kind's reader (cachekinds.h) then reads its members and sections. Errors: SLEM_EIO,
 * SLEM_EINVAL (path "-"), SLEM_EFORMAT with what is wrong ("written with byte order ...",
 * "version 7; this slem reads version 1", "checksum mismatch in the payload"). */
int slem_cache_load(SlemCache **self, const char *path, SlemError *err);
/* Also the public API's (slem.h, whose SlemCache is this one): exported by libslem.so,
 * whose other objects are hidden. */
#pragma GCC visibility push(default)
void slem_cache_free(SlemCache *self);
#pragma GCC visibility pop

/* A cache of kind with no file of its own, named name in messages, for the kind's reader
 * to fill with slem_cache_set_kind(): a stage of a cache holding several (its sections
 * those of parent, which must outlive it), or a view over sections held in memory (parent
 * NULL). It has no JSON header (slem_cache_json() returns NULL) and its fingerprint is
 * that of no payload. kind is borrowed (a string constant). Errors: SLEM_ENOMEM. */
int slem_cache_view_new(SlemCache **self, const char *name, const char *kind, size_t d,
                        uint64_t n, const SlemCache *parent, SlemError *err);

/* For kinds' readers. The kind's name; the parsed JSON header (a view: its parent's; NULL
 * for a view of no parent), owned by self. */
const char *slem_cache_kind(const SlemCache *self);
const cJSON *slem_cache_header(const SlemCache *self);
/* Section name of shape rows x cols (cols 0: a vector), inside the payload, in *data (in
 * the cache's mapping). Errors: SLEM_EFORMAT naming the file and the section ("section
 * 'ainv' is missing", a shape other than d, or d and r once slem_cache_set_rank() gave r). */
int slem_cache_section(const SlemCache *self, const char *name, uint64_t rows, uint64_t cols,
                       const double **data, SlemError *err);
/* 1 when self's header lists section name, else 0. */
int slem_cache_has_section(const SlemCache *self, const char *name);
/* A member of obj that is a whole number in [0, max] in *out: 0, else -1. */
int slem_cache_member_uint(const cJSON *obj, const char *key, uint64_t max, uint64_t *out);
/* The rank r of a kernel or pca cache, named in the messages on its sections. */
void slem_cache_set_rank(SlemCache *self, size_t r);
/* Sets self's kind_data to data; own (may be NULL) is freed with own_free when self is. */
void slem_cache_set_kind(SlemCache *self, const void *data, void *own, void (*own_free)(void *));

/* The JSON header, pretty-printed, with the fingerprint, owned by self; NULL when out of
 * memory. */
const char *slem_cache_json(const SlemCache *self);

/* 16 hex digits: FNV-1a (64 bits) of the payload, which names this cache's numbers in the
 * descriptors made with it; owned by self. Computed at the first call (from any thread),
 * since most runs never need it and hashing byte by byte costs more than reading. */
const char *slem_cache_fingerprint(const SlemCache *self);
const char *slem_cache_path(const SlemCache *self);
/* Renames self in messages (slem_cache_path()): a cache loaded from a temporary file that
 * is gone. Errors: SLEM_ENOMEM (the name unchanged). */
int slem_cache_set_path(SlemCache *self, const char *name, SlemError *err);
/* The bytes of the file self was loaded from (its mapping, owned by self): 1 with *p and *n
 * set; 0 for a view (slem_cache_view_new()), which has none. Cannot fail. */
int slem_cache_bytes(const SlemCache *self, const void **p, size_t *n);

/* The line of the arithmetic that made the cache (arith.h: its BLAS core and versions), as
 * its JSON header records it, owned by self; NULL when it records none (an older slem). */
const char *slem_cache_arith(const SlemCache *self);

/* The lines of the arithmetics a cache mixes (arith.h: a merge of partial caches allowed to
 * mix them, " + " between), owned by self; NULL when it mixes none. */
const char *slem_cache_arith_mixed(const SlemCache *self);

/* The time a cache records in its provenance (its "time", UTC): fixed != 0: epoch, in
 * seconds since 1970 (reproducible caches; cmd/ passes SOURCE_DATE_EPOCH); fixed == 0: the
 * time of writing (the default). Process-wide: call it before any thread writes a cache.
 * No errors. */
void slem_cache_set_time(int fixed, int64_t epoch);

/* What a cache records of how it was made. */
typedef struct SlemProvenance {
  const char *tool;
  const char *const *inputs;
  size_t ninputs;
  const char *arith_mixed;  /* NULL, or the arithmetics of inputs that were allowed to mix */
} SlemProvenance;

/* The inputs prov records: inputs[0..n), then extra (a file of positives), in *pin, which
 * the caller frees. Errors: SLEM_ENOMEM. */
int slem_cache_prov_append(SlemProvenance *prov, const char ***pin, const char *const *inputs,
                           size_t n, const char *extra, SlemError *err);

/* Writes a cache of kind atomically (temporary file, fsync, rename): its JSON header the
 * common members (format, format_version, kind, d, n), then members' items in their order
 * (moved out of members, which the caller still frees), the sections' table, the
 * arithmetic and the provenance; then the sections. A value that is not finite is refused.
 * Errors: SLEM_ENUMERIC (naming the section), SLEM_EIO, SLEM_ENOMEM. */
int slem_cache_write(const char *path, const char *kind, size_t d, uint64_t n, cJSON *members,
                     const SlemCacheSection *sec, size_t nsec, const SlemProvenance *prov,
                     SlemError *err);

/* 1 when path is a regular file whose first bytes are the container magic and which is not
 * a descriptor container (JSON kind "descriptors": vectors; 0 also when it cannot be read;
 * a pipe or FIFO is not opened, so no byte of it is consumed). */
int slem_cache_sniff(const char *path);

#endif
