/* The .slem container, one file layer for the negative-statistics cache (cache.h) and the
 * descriptor container (fmt_slem.c) alike: the fixed header, the JSON header's checksum,
 * the block table of per-block CRC-32s, the ids section, the fingerprint of a payload.
 *
 * The fixed header, all integers little-endian:
 *   0   8  magic "\x89SLEM\r\n\x1a"
 *   8   4  format version (SLEM_CONTAINER_VERSION)
 *   12  4  byte-order mark 0x01020304 as written by the host
 *   16  4  fixed header length (64)
 *   20  4  JSON header length in bytes
 *   24  8  JSON header offset (64)
 *   32  8  payload offset (a multiple of 64)
 *   40  8  payload length (to the end of the file)
 *   48  4  CRC-32 of the JSON header
 *   52  4  CRC-32 of the payload
 *   56  4  reserved, 0
 *   60  4  CRC-32 of bytes 0..59
 * then the JSON header and a newline (so that `head -c` shows it whole), zeros up to the
 * payload. Its users lay out the JSON members and the payload; what is written here is
 * byte for byte what the first release wrote.
 */
#ifndef SLEM_CONTAINER_H
#define SLEM_CONTAINER_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

#define SLEM_CONTAINER_VERSION 1
#define SLEM_CONTAINER_FIXED_LEN 64
#define SLEM_CONTAINER_ALIGN 64

/* The descriptor container's layout: the block table in the room before the rows, the
 * rows at a fixed offset (so that they are written as they come, the header at the close). */
#define SLEM_CONTAINER_TABLE_OFF 32768
#define SLEM_CONTAINER_PAY_OFF 65536
#define SLEM_CONTAINER_TABLE_MAX \
  ((SLEM_CONTAINER_PAY_OFF - SLEM_CONTAINER_TABLE_OFF) / 4) /* 8192 blocks at most */
#define SLEM_CONTAINER_BLOCK_ROWS 1024 /* doubled while the table would hold more blocks */

/* Who reads a container: its messages name it as such (a cache is rebuilt with
 * slem-negstats, descriptors are written again with slem-encode). */
typedef enum { SLEM_CONTAINER_CACHE, SLEM_CONTAINER_DESCRIPTORS } SlemContainerRole;

/* The variable fields of the fixed header. */
typedef struct SlemContainerHead {
  uint32_t json_len;
  uint64_t json_off, pay_off, pay_len;
  uint32_t json_crc, pay_crc;
} SlemContainerHead;

/* 1 when the n bytes at p begin with the magic number, else 0. */
int slem_container_sniff(const unsigned char *p, size_t n);

/* Fills the 64 bytes at out: magic, version, byte-order mark, h, the header's CRC-32.
 * Cannot fail. */
void slem_container_head_pack(unsigned char *out, const SlemContainerHead *h);

/* Reads the fixed header from the n bytes at p into h, checking the magic, the byte order,
 * the version, the header's checksum and the offsets; file_size >= 0 (a regular file) is
 * checked against them. Errors: SLEM_EFORMAT naming the file (name) in the role's words. */
int slem_container_head_unpack(SlemContainerHead *h, const unsigned char *p, size_t n,
                               SlemContainerRole role, int64_t file_size, const char *name,
                               SlemError *err);

/* Checks the JSON header text (h->json_len bytes) against its checksum and parses it into
 * *json (the caller frees it with cJSON_Delete). Errors: SLEM_EFORMAT (checksum mismatch,
 * not a JSON object). */
int slem_container_json_parse(cJSON **json, const SlemContainerHead *h, const char *text,
                              const char *name, SlemError *err);

/* Checks the payload at p (h->pay_len bytes) against the header's checksum. Errors:
 * SLEM_EFORMAT. */
int slem_container_payload_check(const SlemContainerHead *h, const void *p, const char *name,
                                 SlemError *err);

/* Writes the fixed header of h (packed here), the JSON text (h->json_len bytes) and its
 * newline, then zeros up to byte upto (>= 64 + json_len + 1). Returns 0, or -1 with errno
 * set by the failed write. */
int slem_container_write_head(FILE *fp, const SlemContainerHead *h, const char *json,
                              uint64_t upto);

/* Writes n zero bytes. Returns 0, or -1 with errno set. */
int slem_container_write_zeros(FILE *fp, uint64_t n);

/* The fingerprint of a payload: FNV-1a, 64 bits, over the basis 1469598103934665603 (as
 * the first release wrote it), as 16 hex digits and a NUL into out (17 bytes). */
void slem_container_fingerprint(char *out, const void *payload, uint64_t len);

/* The CRC-32 of A then B from crc_a, crc_b and B's length in bytes. */
uint32_t slem_container_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* ---- float64 sections (the cache) ---- */

/* A section: rows x cols float64 (cols 0: a vector of rows), row-major. */
typedef struct SlemContainerSection {
  const char *name;
  const double *data;
  size_t rows, cols;
} SlemContainerSection;

/* Writes path atomically (a temporary beside it, renamed at the end): the fixed header, meta
 * with a "sections" member added here (name, offset, shape, dtype "<f8" of each), the
 * sections each at a 64-byte aligned absolute offset, zeros between them. meta is kept by
 * the caller. Errors: SLEM_EIO naming path, SLEM_ENOMEM. */
int slem_container_write_sections(const char *path, cJSON *meta, const SlemContainerSection *sec,
                                  size_t nsec, SlemError *err);

/* Reads the regular file path whole into *map (*len bytes, 64-byte aligned, the caller
 * frees it with free()), checks its fixed header, its JSON header and its payload against
 * their checksums, and parses the JSON header into *json (the caller frees it). A file that
 * changes size while it is read is refused. Errors: SLEM_EIO (open, read, not a regular
 * file: a FIFO is not waited for), SLEM_ENOMEM, SLEM_EFORMAT naming path. */
int slem_container_load(void **map, size_t *len, SlemContainerHead *h, cJSON **json,
                        const char *path, SlemContainerRole role, SlemError *err);

/* Finds the section name among sections: dtype "<f8", ndim dimensions equal to want[0]
 * (and want[1]), lying within the payload [pay_off, pay_off + pay_len). *off is its absolute
 * offset. what names the dimensions in the message of a shape that disagrees ("d = 64").
 * Errors: SLEM_EFORMAT naming path and the section (missing, bad dtype, offset or shape,
 * outside the payload). */
int slem_container_section_find(uint64_t *off, const cJSON *sections, const char *name, int ndim,
                                const uint64_t *want, uint64_t pay_off, uint64_t pay_len,
                                const char *what, const char *path, SlemError *err);

/* 1 when sections holds one named name, else 0. */
int slem_container_section_has(const cJSON *sections, const char *name);

/* ---- the block table of a descriptor container ---- */

/* The table as it is written: the CRC-32 of each block of SLEM_CONTAINER_BLOCK_ROWS rows
 * written so far, and of the block being filled. Zero-initialise; slem_container_blocks_free
 * releases it. */
typedef struct SlemContainerBlocks {
  uint32_t *crc; /* crc[count] */
  size_t count, cap;
  uint32_t cur;  /* of the block being written, fill bytes so far */
  uint64_t fill;
} SlemContainerBlocks;

/* Follows bytes of rows of row_bytes each. Errors: SLEM_ENOMEM. */
int slem_container_blocks_feed(SlemContainerBlocks *b, size_t row_bytes, const void *p,
                               size_t bytes, SlemError *err);

/* Ends the table of n rows of row_bytes: the last block, shorter, then blocks twice as long
 * while there are more than the room holds (their CRCs combined). *rows: rows per block.
 * Errors: SLEM_ENOMEM. */
int slem_container_blocks_end(SlemContainerBlocks *b, size_t row_bytes, uint64_t n,
                              uint64_t *rows, SlemError *err);

/* Adds the "blocks" member to the JSON header: rows per block, their count, the table's
 * offset and CRC-32, the CRC-32 of what follows the rows. */
void slem_container_blocks_json(cJSON *meta, const SlemContainerBlocks *b, uint64_t rows,
                                uint32_t tail_crc);

void slem_container_blocks_free(SlemContainerBlocks *b);

/* The table as it is read. */
typedef struct SlemContainerTable {
  uint64_t rows;   /* rows per block; 0: no table (a container of the first release) */
  uint64_t count;  /* blocks */
  uint64_t off;    /* where the table lies in the file */
  uint32_t crc;    /* of the table */
  uint32_t tail_crc; /* of what follows the rows in the payload (padding, ids) */
  uint32_t *blk;   /* blk[count], once loaded */
} SlemContainerTable;

/* Reads the "blocks" member of json for n rows (none leaves t->rows 0); the table must lie
 * between json_end and pay_off. Errors: SLEM_EFORMAT. */
int slem_container_table_parse(SlemContainerTable *t, const cJSON *json, uint64_t n,
                               uint64_t json_end, uint64_t pay_off, const char *name,
                               SlemError *err);

/* Takes the table from p (t->count CRCs), checked against its own checksum. Errors:
 * SLEM_EFORMAT, SLEM_ENOMEM. */
int slem_container_table_load(SlemContainerTable *t, const unsigned char *p, const char *name,
                              SlemError *err);

/* Verifies the rows [first, first + nrows) of n at raw (rec bytes each), whole blocks of
 * the table (the last one may end at row n). Errors: SLEM_EFORMAT naming the records. */
int slem_container_table_verify(const SlemContainerTable *t, uint64_t n, size_t rec,
                                uint64_t first, const unsigned char *raw, uint64_t nrows,
                                const char *name, SlemError *err);

void slem_container_table_free(SlemContainerTable *t);

/* ---- the ids section ---- */

/* Adds the ids section ({name "ids", offset, bytes, count}) to the sections array. */
void slem_container_ids_json(cJSON *sections, uint64_t offset, uint64_t bytes, uint64_t count);

/* Finds the ids section among sections of a payload at pay_off of pay_len bytes holding
 * rows_end bytes of n rows: it lies right after the rows, 64-byte aligned, to the end.
 * *off and *bytes are 0 when there is none. Errors: SLEM_EFORMAT (inconsistent, or no ids
 * and a payload longer than the rows). */
int slem_container_ids_find(const cJSON *sections, uint64_t pay_off, uint64_t pay_len,
                            uint64_t rows_end, uint64_t n, uint64_t *off, uint64_t *bytes,
                            const char *name, SlemError *err);

#endif
