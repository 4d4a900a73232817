/* slem's descriptor container: the .slem family of the cache (cache.h), kind "descriptors".
 *
 *   0      64 bytes  the fixed header of the cache format (magic, version, byte-order mark,
 *                    lengths and offsets, CRC-32 of the JSON, of the payload, of the header)
 *   64     JSON      kind "descriptors", rows "descriptors", "classifiers" or
 *                    "kernel-projections", d, n, dtype, the fingerprint of the cache that
 *                    made the rows, the input they come from, the shard they are, sections,
 *                    blocks: {rows B, count, offset, crc32 of the table, tail_crc32 of what
 *                    follows the rows}
 *   32768  table     the CRC-32 of each block of B rows (uint32), the last block shorter;
 *                    B = 1024, doubled while there would be more than 8192 blocks
 *   65536  payload   n rows of d float32 ("<f4"), little-endian, or of d float64 ("<f8")
 *                    for kernel projections; then, when the rows have ids, at the next
 *                    multiple of 64, the ids as NUL-terminated strings
 *
 * Kernel projections (slem-encode --projections) are the rows of a database for the exact
 * kernel similarity, computed once: per row the prepared features, v, z, N and, coupled,
 * t (kproj.h, slem_kproj_pack(); SLEM_KPROJ_WIDTH in vecs.h), their layout in
 * "kernel_projections": {d, r, couple}. Only a reader that accepts them
 * (slem_vecreader_accept_projections()) reads their rows.
 *
 * The payload starts at a fixed offset, so that rows are written as they come and the
 * header and the table are completed at the close (a pipe gets the rows held in memory until
 * then). A reader checks the header, the JSON and the table before the first row, and hands
 * out no row before the block that holds it has been verified: a window (a shard) reads the
 * blocks at its edges whole, a pipe verifies each block as it comes and what follows the
 * rows after the last one. The table lies where the previous release left zeros, and the
 * payload's CRC is still written, so that release reads these containers; a container it
 * wrote (no "blocks") is verified whole at the open, before any row is used.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "crc32.h"
#include "ids.h"
#include "mem.h"
#include "vecfmt.h"

#define FIXED_LEN 64
#define PAY_OFF 65536
#define BOM 0x01020304u
#define VERSION 1

static const unsigned char magic[8] = {0x89, 'S', 'L', 'E', 'M', '\r', '\n', 0x1a};

static uint64_t le64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* The arithmetic (arith.h) the rows were made with: recorded by the process that writes
 * them, read back for the warnings and refusals of slem-match and slem-merge. */
static void arith_write(cJSON *meta) { slem_arith_to_json(meta, NULL); }

static void arith_read(SlemVecReader *r, const cJSON *json) {
  slem_arith_from_json(json, r->arith, sizeof r->arith);
}

static int sniff_slem(const unsigned char *p, size_t n) {
  return n >= 8 && memcmp(p, magic, 8) == 0 ? 100 : 0;
}


#define TABLE_OFF 32768 /* where the writer puts the block table: in the room before the rows */
#define TABLE_MAX ((PAY_OFF - TABLE_OFF) / 4) /* 8192 blocks at most */
#define BLOCK_ROWS 1024 /* rows per block, doubled while the table would hold more blocks */

/* Reads a non-negative integer member at most max that is exactly representable. */
static int json_u64(const cJSON *obj, const char *key, uint64_t max, uint64_t *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || it->valuedouble > (double)max ||
      it->valuedouble != (double)(uint64_t)it->valuedouble)
    return -1;
  *out = (uint64_t)it->valuedouble;
  return 0;
}

/* The "blocks" member of the JSON header (rows per block, their count, the table's offset
 * and CRC-32, the CRC-32 of what follows the rows); none, a container of the first release,
 * leaves r->blk_rows 0. r->count and r->rec are set. */
static int blocks_json(SlemVecReader *r, const cJSON *json, uint64_t json_end, uint64_t pay_off,
                       uint32_t *table_crc, SlemError *err) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(json, "blocks");
  uint64_t rows, count, off, crc, tail, n = (uint64_t)r->count;
  if (!b) return SLEM_OK;
  if (!cJSON_IsObject(b) || json_u64(b, "rows", (uint64_t)1 << 52, &rows) || rows == 0 ||
      json_u64(b, "count", (uint64_t)1 << 52, &count) || count != (n + rows - 1) / rows ||
      json_u64(b, "offset", pay_off, &off) || off % 4 != 0 || off < json_end ||
      count > (pay_off - off) / 4 || json_u64(b, "crc32", 0xffffffffu, &crc) ||
      json_u64(b, "tail_crc32", 0xffffffffu, &tail))
    return slem_error(err, SLEM_EFORMAT, "%s: the block table in the JSON header is inconsistent",
                      slem_in_name(r->in));
  r->blk_rows = rows;
  r->blk_count = count;
  r->blk_off = off;
  r->tail_crc = (uint32_t)tail;
  *table_crc = (uint32_t)crc;
  return SLEM_OK;
}

/* Takes the block table from p (r->blk_count CRCs, little-endian), checked against its own
 * checksum. */
static int blocks_table(SlemVecReader *r, const unsigned char *p, uint32_t want, SlemError *err) {
  size_t bytes = (size_t)r->blk_count * 4;
  if (slem_crc32(0, p, bytes) != want)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the block table: corrupt",
                      slem_in_name(r->in));
  if (!(r->blk_crc = malloc(bytes ? bytes : 1))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  memcpy(r->blk_crc, p, bytes);
  return SLEM_OK;
}

/* What follows the rows, against its own checksum (containers with a block table). */
static int tail_check(SlemVecReader *r, SlemError *err) {
  if (r->blk_rows && slem_crc32(0, r->crc_tail, r->crc_tail_len) != r->tail_crc)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the ids after the rows: corrupt",
                      slem_in_name(r->in));
  return SLEM_OK;
}

/* From a pipe, after the last row: what follows the rows, read now. Its ids are checked (a
 * container's ids are valid wherever it is read) but cannot name the rows any more. */
static int read_tail(SlemVecReader *r, SlemError *err) {
  size_t got;
  int st;
  if (r->tail_read) return SLEM_OK;
  st = slem_in_read(r->in, r->crc_tail, r->crc_tail_len, &got, err);
  if (st == SLEM_OK && got < r->crc_tail_len)
    st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its ids", slem_in_name(r->in));
  r->tail_read = 1;
  return st;
}

static int pipe_ids(SlemVecReader *r, SlemError *err) {
  SlemIds *ids = NULL;
  int st = SLEM_OK;
  if (!slem_in_seekable(r->in) && r->tail_ids_bytes)
    st = slem_ids_unpack(&ids, slem_in_name(r->in), (const char *)r->crc_tail + r->tail_ids_off,
                         r->tail_ids_bytes, (uint64_t)r->count, err);
  slem_ids_free(ids);
  return st;
}

static int rows_end_pipe(SlemVecReader *r, SlemError *err) {
  int st = read_tail(r, err);
  if (st == SLEM_OK) st = tail_check(r, err);
  if (st == SLEM_OK) st = pipe_ids(r, err);
  return st;
}

static int read_raw(SlemVecReader *r, unsigned char *dst, uint64_t first, size_t nrows,
                    SlemError *err);
static int verify_whole(SlemVecReader *r, SlemError *err);

static int open_slem(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  unsigned char h[FIXED_LEN];
  char *json_text = NULL;
  cJSON *json = NULL;
  const cJSON *kind, *dtype, *fp, *rows_kind;
  size_t got, esize = 4;
  uint32_t json_len, v, table_crc = 0;
  uint64_t json_off, pay_off, pay_len, n, d, ids_off = 0, ids_bytes = 0;
  int st = slem_in_read(r->in, h, FIXED_LEN, &got, err);
  if (st) return st;
  if (got < FIXED_LEN || memcmp(h, magic, 8) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: not a slem container, or truncated", name);
  memcpy(&v, h + 60, 4);
  if (slem_crc32(0, h, 60) != v)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the fixed header", name);
  memcpy(&v, h + 8, 4);
  if (v != VERSION)
    return slem_error(err, SLEM_EFORMAT, "%s: format version %u; this slem reads version %d",
                      name, v, VERSION);
  memcpy(&v, h + 12, 4);
  if (v != BOM) return slem_error(err, SLEM_EFORMAT, "%s: written with another byte order", name);
  memcpy(&json_len, h + 20, 4);
  json_off = le64(h + 24);
  pay_off = le64(h + 32);
  pay_len = le64(h + 40);
  if (json_off != FIXED_LEN || json_len == 0 || pay_off < FIXED_LEN ||
      json_len > pay_off - FIXED_LEN || pay_off % 64 != 0 || pay_off > ((uint64_t)1 << 30))
    return slem_error(err, SLEM_EFORMAT, "%s: the header's offsets are inconsistent", name);
  if (!(json_text = malloc(json_len)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_in_read(r->in, json_text, json_len, &got, err);
  if (st == SLEM_OK && got < json_len)
    st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its JSON header", name);
  memcpy(&v, h + 48, 4);
  if (st == SLEM_OK && slem_crc32(0, json_text, json_len) != v)
    st = slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the JSON header", name);
  if (st == SLEM_OK && !(json = cJSON_ParseWithLength(json_text, json_len)))
    st = slem_error(err, SLEM_EFORMAT, "%s: the JSON header does not parse", name);
  free(json_text);
  if (st) goto done;
  kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
  dtype = cJSON_GetObjectItemCaseSensitive(json, "dtype");
  fp = cJSON_GetObjectItemCaseSensitive(json, "cache_fingerprint");
  rows_kind = cJSON_GetObjectItemCaseSensitive(json, "rows");
  if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "descriptors") != 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: a slem cache of kind '%s', not descriptors: give it "
                    "with -c", name, cJSON_IsString(kind) ? kind->valuestring : "?");
    goto done;
  }
  {
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(json, "d");
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(json, "n");
    if (!cJSON_IsNumber(jd) || !cJSON_IsNumber(jn) || jd->valuedouble < 1 ||
        jd->valuedouble > SLEM_DIM_MAX || jd->valuedouble != (double)(uint64_t)jd->valuedouble ||
        jn->valuedouble < 0 || jn->valuedouble > 9007199254740992.0 ||
        jn->valuedouble != (double)(uint64_t)jn->valuedouble || !cJSON_IsString(dtype) ||
        (strcmp(dtype->valuestring, "<f4") != 0 && strcmp(dtype->valuestring, "<f8") != 0)) {
      st = slem_error(err, SLEM_EFORMAT, "%s: the JSON header lacks a valid d, n or dtype", name);
      goto done;
    }
    d = (uint64_t)jd->valuedouble;
    n = (uint64_t)jn->valuedouble;
  }
  /* kernel projections are the one kind of rows in double, and always in double */
  r->kproj = cJSON_IsString(rows_kind) && strcmp(rows_kind->valuestring, "kernel-projections") == 0;
  if (r->kproj != (strcmp(dtype->valuestring, "<f8") == 0)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: rows of dtype %s, which slem writes only for %s", name,
                    dtype->valuestring, r->kproj ? "descriptors" : "kernel projections");
    goto done;
  }
  esize = r->kproj ? 8 : 4;
  if (r->kproj) { /* the layout of a row: x (d), v (r), z (r), N, then t when coupled */
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(json, "kernel_projections");
    const cJSON *kd = cJSON_GetObjectItemCaseSensitive(k, "d");
    const cJSON *kr = cJSON_GetObjectItemCaseSensitive(k, "r");
    const cJSON *kc = cJSON_GetObjectItemCaseSensitive(k, "couple");
    if (!cJSON_IsNumber(kd) || !cJSON_IsNumber(kr) || !cJSON_IsBool(kc) || kd->valuedouble < 1 ||
        kr->valuedouble < 1 || kd->valuedouble > SLEM_DIM_MAX || kr->valuedouble > SLEM_DIM_MAX ||
        kd->valuedouble != (double)(size_t)kd->valuedouble ||
        kr->valuedouble != (double)(size_t)kr->valuedouble ||
        SLEM_KPROJ_WIDTH((uint64_t)kd->valuedouble, (uint64_t)kr->valuedouble, cJSON_IsTrue(kc)) != d) {
      st = slem_error(err, SLEM_EFORMAT, "%s: kernel projections without a consistent layout "
                      "(kernel_projections: d, r, couple)", name);
      goto done;
    }
    r->kp_d = (size_t)kd->valuedouble;
    r->kp_r = (size_t)kr->valuedouble;
    r->kp_couple = cJSON_IsTrue(kc);
  }
  if (n > 0 && pay_len / n / esize < d) {
    st = slem_error(err, SLEM_EFORMAT, "%s: the payload holds %" PRIu64 " bytes, not %" PRIu64
                    " rows of %" PRIu64 " values", name, pay_len, n, d);
    goto done;
  }
  {
    /* the ids section, if any: right after the rows (64-byte aligned) to the end */
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(json, "sections"), *s;
    uint64_t rows_end = n * d * esize;
    ids_off = ids_bytes = 0;
    cJSON_ArrayForEach(s, secs) {
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s, "name");
      const cJSON *off = cJSON_GetObjectItemCaseSensitive(s, "offset");
      const cJSON *by = cJSON_GetObjectItemCaseSensitive(s, "bytes");
      const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(s, "count");
      if (!cJSON_IsString(nm) || strcmp(nm->valuestring, "ids") != 0) continue;
      if (!cJSON_IsNumber(off) || !cJSON_IsNumber(by) || !cJSON_IsNumber(cnt) ||
          off->valuedouble != (double)(pay_off + (rows_end + 63) / 64 * 64) ||
          by->valuedouble < (double)n || by->valuedouble > 1e15 || cnt->valuedouble != (double)n ||
          (uint64_t)off->valuedouble - pay_off + (uint64_t)by->valuedouble != pay_len) {
        st = slem_error(err, SLEM_EFORMAT, "%s: the ids section is inconsistent", name);
        goto done;
      }
      ids_off = (uint64_t)off->valuedouble;
      ids_bytes = (uint64_t)by->valuedouble;
    }
    if (!ids_off && pay_len != rows_end) {
      st = slem_error(err, SLEM_EFORMAT, "%s: size disagrees with its header: truncated or "
                      "corrupt", name);
      goto done;
    }
  }
  if ((slem_in_size(r->in) >= 0 && (uint64_t)slem_in_size(r->in) != pay_off + pay_len)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: size disagrees with its header: truncated or "
                    "corrupt", name);
    goto done;
  }
  if (cJSON_IsString(fp) && strlen(fp->valuestring) == 16)
    snprintf(r->cache_fp, sizeof r->cache_fp, "%s", fp->valuestring);
  arith_read(r, json);
  r->meta_json = cJSON_Print(json);
  r->d = (size_t)d;
  r->count = (int64_t)n;
  r->rec = r->d * esize;
  if ((st = blocks_json(r, json, FIXED_LEN + json_len, pay_off, &table_crc, err)) != SLEM_OK)
    goto done;
  /* up to the payload, keeping the block table that lies there */
  {
    uint64_t room_len = pay_off - FIXED_LEN - json_len;
    unsigned char *room = malloc(room_len ? room_len : 1);
    if (!room) st = slem_error(err, SLEM_ENOMEM, "out of memory");
    if (st == SLEM_OK) st = slem_in_read(r->in, room, (size_t)room_len, &got, err);
    if (st == SLEM_OK && got < room_len)
      st = slem_error(err, SLEM_EFORMAT, "%s: truncated before its rows", name);
    if (st == SLEM_OK && r->blk_rows)
      st = blocks_table(r, room + (r->blk_off - FIXED_LEN - json_len), table_crc, err);
    free(room);
    if (st) goto done;
  }
  /* the header's payload checksum names the content (slem_vecreader_payload_crc()) */
  memcpy(&r->payload_crc, h + 52, 4);
  r->has_payload = 1;
  /* what follows the rows (padding, the ids): from a file, read now, before the rows they
   * name; from a pipe, after the last row (rows_end_pipe()) */
  {
    uint64_t rows_end = pay_off + n * d * esize;
    memcpy(&r->crc_want, h + 52, 4);
    r->crc_tail_len = (size_t)(pay_off + pay_len - rows_end);
    r->tail_ids_off = ids_off ? ids_off - rows_end : 0;
    r->tail_ids_bytes = ids_bytes;
    if (!(r->crc_tail = calloc(r->crc_tail_len ? r->crc_tail_len : 1, 1)))
      st = slem_error(err, SLEM_ENOMEM, "out of memory for the ids of %s", name);
    if (st) goto done;
    r->data_off = pay_off;
    if (slem_in_seekable(r->in)) {
      if (r->crc_tail_len > 0) {
        st = slem_in_seek(r->in, rows_end, err);
        if (st == SLEM_OK) st = slem_in_read(r->in, r->crc_tail, r->crc_tail_len, &got, err);
        if (st == SLEM_OK && got < r->crc_tail_len)
          st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its ids", name);
      }
      r->tail_read = 1;
      if (st == SLEM_OK) st = tail_check(r, err);
      /* a container without a block table (written before them): its one checksum covers
       * the whole payload, verified now, before any row is used, whatever is read of it */
      if (st == SLEM_OK && !r->blk_rows) st = verify_whole(r, err);
      if (st == SLEM_OK && ids_off)
        st = slem_ids_unpack(&r->ids, name, (const char *)r->crc_tail + r->tail_ids_off,
                             ids_bytes, n, err);
      if (st == SLEM_OK) st = slem_in_seek(r->in, pay_off, err);
    } else if (!r->blk_rows) { /* the same from a pipe: the rows held and verified first */
      if (pay_len > SLEM_NPY_FORTRAN_PIPE_MAX)
        st = slem_error(err, SLEM_EFORMAT, "%s: a container without a block table (written "
                        "before them) on a pipe is held whole to be verified, up to 64 MiB, and "
                        "this one has %" PRIu64 " bytes: give the file, or write it again with "
                        "slem-encode", name, pay_len);
      if (st == SLEM_OK && n > 0 && !(r->blk_buf = slem_alloc_large((size_t)(n * d * esize))))
        st = slem_error(err, SLEM_ENOMEM, "out of memory for the rows of %s", name);
      if (st == SLEM_OK && n > 0) st = read_raw(r, r->blk_buf, 0, (size_t)n, err);
      if (st == SLEM_OK) st = read_tail(r, err);
      if (st == SLEM_OK && slem_crc32(slem_crc32(0, r->blk_buf, (size_t)(n * d * esize)),
                                      r->crc_tail, r->crc_tail_len) != r->crc_want)
        st = slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the rows: corrupt", name);
      if (st == SLEM_OK) st = pipe_ids(r, err);
      r->blk_rows = n ? n : 1; /* one block, read ahead whole */
      r->blk_n = (size_t)n;
      r->blk_cap = (size_t)(n * d * esize);
    } else if (n == 0) { /* no row will be read: the end of the pipe is checked now */
      st = rows_end_pipe(r, err);
      r->exact_end = 1;
      r->count_from = "the header";
      if (st == SLEM_OK) st = slem_vfmt_pipe_end(r, err);
    }
    if (st) goto done;
  }
  r->count_from = "the header";
  r->exact_end = 1; /* on a pipe, nothing may follow the ids (vecs.c: pipe_tail()) */
  r->dtype = r->kproj ? SLEM_DT_F8 : SLEM_DT_F4;
  r->esize = esize;
  r->prefix = 0; /* n may be 0: a shard with no row */
done:
  cJSON_Delete(json);
  return st;
}


/* ---- reading the rows of a container with a block table ---- */

/* Reads the nrows rows from record first (0-based) on into dst; a short input is an error
 * naming the record. */
static int read_raw(SlemVecReader *r, unsigned char *dst, uint64_t first, size_t nrows,
                    SlemError *err) {
  size_t want = nrows * r->rec, nbytes;
  int st = slem_in_read(r->in, dst, want, &nbytes, err);
  if (st) return st;
  if (nbytes % r->rec != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": truncated (%zu of %zu bytes)",
                      slem_in_name(r->in), first + nbytes / r->rec + 1, nbytes % r->rec, r->rec);
  if (nbytes < want)
    return slem_error(err, SLEM_EFORMAT, "%s: record %" PRIu64 ": missing (the header says %"
                      PRId64 ")", slem_in_name(r->in), first + nbytes / r->rec + 1, r->count);
  return SLEM_OK;
}

/* Verifies the rows [first, first + nrows) at raw, whole blocks of the table (the last one
 * may end at the last row); after the last row of a pipe, what follows the rows too. */
static int verify_blocks(SlemVecReader *r, uint64_t first, const unsigned char *raw,
                         uint64_t nrows, SlemError *err) {
  uint64_t rows = r->blk_rows, n = (uint64_t)r->count;
  for (uint64_t row = first; row < first + nrows;) {
    uint64_t b = row / rows, end = (b + 1) * rows < n ? (b + 1) * rows : n;
    if (slem_crc32(0, raw + (row - first) * r->rec, (size_t)((end - row) * r->rec)) != r->blk_crc[b])
      return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the rows: records %" PRIu64
                        " to %" PRIu64 " (block %" PRIu64 " of %" PRIu64 ") are corrupt",
                        slem_in_name(r->in), row + 1, end, b + 1, r->blk_count);
    row = end;
  }
  if (first + nrows == n && !r->tail_read) return rows_end_pipe(r, err);
  return SLEM_OK;
}

/* Reads the block that starts at record first into r->blk_buf, verified; its rows are
 * handed out from the next read on. */
static int read_ahead(SlemVecReader *r, uint64_t first, SlemError *err) {
  uint64_t left = (uint64_t)r->count - first;
  size_t n = (size_t)(left < r->blk_rows ? left : r->blk_rows);
  int st;
  r->blk_n = r->blk_at = 0;
  if (n * r->rec > r->blk_cap) {
    free(r->blk_buf);
    r->blk_cap = 0;
    if (!(r->blk_buf = slem_alloc_large(n * r->rec)))
      return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", n);
    r->blk_cap = n * r->rec;
  }
  if ((st = read_raw(r, r->blk_buf, first, n, err)) != SLEM_OK ||
      (st = verify_blocks(r, first, r->blk_buf, n, err)) != SLEM_OK)
    return st;
  r->blk_n = n;
  return SLEM_OK;
}

/* Rows leave the reader only from blocks verified whole: whole blocks straight into the
 * caller's rows, fewer rows than a block (a window's edge, a short read) from the block read
 * ahead. A container without a table was verified at the open: read as fixed records. */
static int read_slem(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                     SlemError *err) {
  size_t out = 0;
  if (!r->blk_rows) return slem_vfmt_read_records(r, xd, xf, max, got, err);
  while (out < max && r->recs < (uint64_t)r->count) {
    uint64_t left = (uint64_t)r->count - r->recs;
    size_t want = max - out < left ? max - out : (size_t)left, n, o;
    double *xo = xd ? xd + out * r->d : NULL;
    float *fo = xf ? xf + out * r->d : NULL;
    const unsigned char *raw;
    int st;
    if (r->blk_at < r->blk_n) { /* the rest of the block read ahead */
      n = r->blk_n - r->blk_at < want ? r->blk_n - r->blk_at : want;
      raw = r->blk_buf + r->blk_at * r->rec;
      r->blk_at += n;
    } else if (want >= r->blk_rows || want == left) { /* whole blocks (r->recs starts one) */
      unsigned char *dst;
      n = want == left ? want : (size_t)(want / r->blk_rows * r->blk_rows);
      if (xf ? r->dtype == SLEM_DT_F4 : r->dtype == SLEM_DT_F8) { /* read in place */
        dst = xf ? (unsigned char *)fo : (unsigned char *)xo;
      } else {
        if (n * r->rec > r->raw_cap) {
          free(r->raw);
          r->raw_cap = 0;
          if (!(r->raw = slem_alloc_large(n * r->rec)))
            return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", n);
          r->raw_cap = n * r->rec;
        }
        dst = r->raw;
      }
      if ((st = read_raw(r, dst, r->recs, n, err)) != SLEM_OK ||
          (st = verify_blocks(r, r->recs, dst, n, err)) != SLEM_OK)
        return st;
      raw = dst;
    } else {
      if ((st = read_ahead(r, r->recs, err)) != SLEM_OK) return st;
      n = want;
      raw = r->blk_buf;
      r->blk_at = n;
    }
    if ((st = slem_vfmt_decode(r, raw, n, xo, fo, &o, err)) != SLEM_OK) return st;
    r->recs += n;
    out += o; /* fewer when rows with a NaN or an Inf were skipped */
  }
  *got = out;
  r->done += out;
  return SLEM_OK;
}

/* A container without a table, from a file: its whole payload is verified at the open (its
 * one checksum covers nothing smaller), in slices of 4 MiB. */
static int verify_whole(SlemVecReader *r, SlemError *err) {
  uint64_t left = (uint64_t)r->count * r->rec;
  size_t cap = (size_t)1 << 22, got;
  unsigned char *buf = malloc(cap);
  uint32_t crc = 0;
  int st = buf ? slem_in_seek(r->in, r->data_off, err)
               : slem_error(err, SLEM_ENOMEM, "out of memory");
  while (st == SLEM_OK && left > 0) {
    size_t want = left < cap ? (size_t)left : cap;
    if ((st = slem_in_read(r->in, buf, want, &got, err)) != SLEM_OK) break;
    if (got < want)
      st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its rows", slem_in_name(r->in));
    crc = slem_crc32(crc, buf, got);
    left -= got;
  }
  free(buf);
  if (st) return st;
  if (slem_crc32(crc, r->crc_tail, r->crc_tail_len) != r->crc_want)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the rows: corrupt",
                      slem_in_name(r->in));
  return SLEM_OK;
}

static int seek_slem(SlemVecReader *r, uint64_t row, SlemError *err) {
  uint64_t first;
  int st;
  r->blk_n = r->blk_at = 0;
  if (!r->blk_rows) /* no table: the whole payload was verified at the open */
    return slem_in_seek(r->in, r->data_off + row * r->rec, err);
  first = row / r->blk_rows * r->blk_rows; /* the block of row is read whole */
  if ((st = slem_in_seek(r->in, r->data_off + first * r->rec, err)) != SLEM_OK) return st;
  if (row == first || row == (uint64_t)r->count) return SLEM_OK;
  if ((st = read_ahead(r, first, err)) != SLEM_OK) return st;
  r->blk_at = (size_t)(row - first);
  return SLEM_OK;
}

static int rewind_slem(SlemVecReader *r, SlemError *err) {
  r->blk_n = r->blk_at = 0;
  return slem_in_seek(r->in, r->data_off, err);
}

/* ---- writing ---- */

/* a b modulo the CRC-32 polynomial, in the bit order of the register (bit 31: x^0) */
static uint32_t gf2_mul(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = 1u << 31; m; m >>= 1) {
    if (a & m) p ^= b;
    b = b & 1 ? (b >> 1) ^ 0xEDB88320u : b >> 1;
  }
  return p;
}

/* The CRC-32 of A then B from crc_a, crc_b and B's length: crc_a carried len_b bytes on
 * (times x^(8 len_b) modulo P), plus crc_b (the register's conditioning cancels out). */
static uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  uint32_t p = 1u << 31, sq = 1u << 23; /* x^0, x^8 */
  for (; len_b; len_b >>= 1, sq = gf2_mul(sq, sq))
    if (len_b & 1) p = gf2_mul(p, sq);
  return gf2_mul(p, crc_a) ^ crc_b;
}

static size_t row_bytes(const SlemVecWriter *w) {
  return w->d * (w->dtype == SLEM_DTYPE_F8 ? 8 : 4);
}

static int blocks_push(SlemVecWriter *w, SlemError *err) {
  if (w->blk_count == w->blk_cap) {
    size_t cap = w->blk_cap ? 2 * w->blk_cap : 1024;
    uint32_t *t = realloc(w->blk_crc, cap * sizeof *t);
    if (!t) return slem_error(err, SLEM_ENOMEM, "out of memory");
    w->blk_crc = t;
    w->blk_cap = cap;
  }
  w->blk_crc[w->blk_count++] = w->blk_cur;
  w->blk_cur = 0;
  w->blk_fill = 0;
  return SLEM_OK;
}

/* Follows the CRC-32 of each block of BLOCK_ROWS rows as the rows come. */
static int blocks_feed(SlemVecWriter *w, const unsigned char *p, size_t bytes, SlemError *err) {
  uint64_t block = (uint64_t)BLOCK_ROWS * row_bytes(w);
  int st = SLEM_OK;
  while (bytes > 0 && st == SLEM_OK) {
    size_t take = block - w->blk_fill < bytes ? (size_t)(block - w->blk_fill) : bytes;
    w->blk_cur = slem_crc32(w->blk_cur, p, take);
    w->blk_fill += take;
    p += take;
    bytes -= take;
    if (w->blk_fill == block) st = blocks_push(w, err);
  }
  return st;
}

/* Ends the table: the last block, shorter, then blocks twice as long while there are more
 * than the room holds (their CRCs combined, not computed again). *rows: rows per block. */
static int blocks_end(SlemVecWriter *w, uint64_t *rows, SlemError *err) {
  uint64_t bytes = (uint64_t)BLOCK_ROWS * row_bytes(w), total = w->n * row_bytes(w);
  int st = w->blk_fill > 0 ? blocks_push(w, err) : SLEM_OK;
  *rows = BLOCK_ROWS;
  while (st == SLEM_OK && w->blk_count > TABLE_MAX) {
    size_t k = 0;
    for (size_t i = 0; i < w->blk_count; i += 2) {
      if (i + 1 == w->blk_count) {
        w->blk_crc[k++] = w->blk_crc[i];
      } else {
        uint64_t len = i + 2 == w->blk_count ? total - (i + 1) * bytes : bytes;
        w->blk_crc[k++] = crc32_combine(w->blk_crc[i], w->blk_crc[i + 1], len);
      }
    }
    w->blk_count = k;
    *rows *= 2;
    bytes *= 2;
  }
  return st;
}

/* The block table's member of the JSON header (its own function: other members are added
 * beside it). */
static void blocks_add_json(cJSON *meta, uint64_t rows, size_t count, uint32_t table_crc,
                            uint32_t tail_crc) {
  cJSON *b = cJSON_AddObjectToObject(meta, "blocks");
  if (!b) return;
  cJSON_AddNumberToObject(b, "rows", (double)rows);
  cJSON_AddNumberToObject(b, "count", (double)count);
  cJSON_AddNumberToObject(b, "offset", TABLE_OFF);
  cJSON_AddNumberToObject(b, "crc32", table_crc);
  cJSON_AddNumberToObject(b, "tail_crc32", tail_crc);
}

/* Appends bytes of rows: to a file as they come, to a pipe held until the close. */
static int write_rows(SlemVecWriter *w, const void *x, size_t bytes, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  int st = blocks_feed(w, x, bytes, err);
  if (st) return st;
  if (!slem_out_seekable(w->out)) { /* held until the close */
    if (w->buf_n + bytes > w->buf_cap) {
      size_t cap = w->buf_cap ? w->buf_cap : 1 << 18;
      unsigned char *b;
      while (cap < w->buf_n + bytes) cap *= 2;
      if (!(b = realloc(w->buf, cap)))
        return slem_error(err, SLEM_ENOMEM, "out of memory holding the rows for %s",
                          slem_out_name(w->out));
      w->buf = b;
      w->buf_cap = cap;
    }
    memcpy(w->buf + w->buf_n, x, bytes);
    w->buf_n += bytes;
    return SLEM_OK;
  }
  if (!w->room) { /* the room of the header, completed at the close */
    static const unsigned char zeros[4096] = {0};
    for (size_t pos = 0; pos < PAY_OFF; pos += sizeof zeros)
      if (fwrite(zeros, 1, sizeof zeros, fp) != sizeof zeros) return slem_vfmt_write_error(w, err);
    w->room = 1;
  }
  w->crc = slem_crc32(w->crc, x, bytes);
  if (fwrite(x, 1, bytes, fp) != bytes) return slem_vfmt_write_error(w, err);
  return SLEM_OK;
}

static int write_slem(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  if (w->dtype == SLEM_DTYPE_F8)
    return slem_error(err, SLEM_EINVAL, "%s: a container of kernel projections takes doubles",
                      slem_out_name(w->out));
  return write_rows(w, x, n * w->d * sizeof *x, err);
}

int slem_vfmt_slem_write_f64(SlemVecWriter *w, const double *x, size_t n, SlemError *err) {
  return write_rows(w, x, n * w->d * sizeof *x, err);
}

static int end_slem(SlemVecWriter *w, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  cJSON *meta = cJSON_CreateObject(), *secs, *sec, *shape;
  const SlemDescMeta *m = &w->meta;
  unsigned char h[FIXED_LEN];
  char *text = NULL;
  size_t esize = w->dtype == SLEM_DTYPE_F8 ? 8 : 4;
  const char *dtype = esize == 8 ? "<f8" : "<f4";
  uint64_t n = w->n, pay_len = n * w->d * esize, pos, blk_rows;
  uint32_t json_len, v32, crc_json, tail_crc = 0;
  int st = SLEM_OK;
  if (!slem_out_seekable(w->out)) w->crc = slem_crc32(0, w->buf, w->buf_n);
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  cJSON_AddStringToObject(meta, "format", "slem-cache");
  cJSON_AddNumberToObject(meta, "format_version", VERSION);
  cJSON_AddStringToObject(meta, "kind", "descriptors");
  cJSON_AddStringToObject(meta, "rows", m->kind_of_rows ? m->kind_of_rows : "descriptors");
  cJSON_AddNumberToObject(meta, "d", (double)w->d);
  cJSON_AddNumberToObject(meta, "n", (double)n);
  cJSON_AddStringToObject(meta, "dtype", dtype);
  if (m->kernel_r) {
    cJSON *k = cJSON_AddObjectToObject(meta, "kernel_projections");
    if (k) {
      cJSON_AddNumberToObject(k, "d", (double)m->kernel_d);
      cJSON_AddNumberToObject(k, "r", (double)m->kernel_r);
      cJSON_AddBoolToObject(k, "couple", m->kernel_couple);
    }
  }
  if (m->cache_fingerprint) cJSON_AddStringToObject(meta, "cache_fingerprint", m->cache_fingerprint);
  if (m->cache_path) cJSON_AddStringToObject(meta, "cache", m->cache_path);
  arith_write(meta);
  if (m->input) {
    cJSON *in = cJSON_AddObjectToObject(meta, "input");
    if (in) {
      cJSON_AddStringToObject(in, "name", m->input);
      if (m->input_count >= 0) cJSON_AddNumberToObject(in, "count", (double)m->input_count);
    }
  }
  if (m->shard_count > 0) {
    cJSON *sh = cJSON_AddObjectToObject(meta, "shard");
    if (sh) {
      cJSON_AddNumberToObject(sh, "index", (double)m->shard_index);
      cJSON_AddNumberToObject(sh, "count", (double)m->shard_count);
      cJSON_AddNumberToObject(sh, "first_row", (double)m->first_row);
    }
  }
  secs = cJSON_AddArrayToObject(meta, "sections");
  sec = cJSON_CreateObject();
  shape = cJSON_CreateArray();
  if (secs && sec && shape) {
    cJSON_AddStringToObject(sec, "name", "rows");
    cJSON_AddNumberToObject(sec, "offset", PAY_OFF);
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)n));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)w->d));
    cJSON_AddItemToObject(sec, "shape", shape);
    cJSON_AddStringToObject(sec, "dtype", dtype);
    cJSON_AddItemToArray(secs, sec);
  } else {
    cJSON_Delete(sec);
    cJSON_Delete(shape);
  }
  if (m->ids) { /* the ids of the rows, after them at the next multiple of 64 */
    static const unsigned char zeros[64] = {0};
    uint64_t rows_end = n * w->d * esize, ids_off = (rows_end + 63) / 64 * 64, bytes = 0;
    cJSON *s = cJSON_CreateObject();
    for (uint64_t i = 0; i < n; i++) bytes += strlen(slem_ids_get(m->ids, m->ids_first + i)) + 1;
    if (s) {
      cJSON_AddStringToObject(s, "name", "ids");
      cJSON_AddNumberToObject(s, "offset", (double)(PAY_OFF + ids_off));
      cJSON_AddNumberToObject(s, "bytes", (double)bytes);
      cJSON_AddNumberToObject(s, "count", (double)n);
      cJSON_AddItemToArray(secs, s);
    }
    if (fseek(fp, 0, SEEK_END) != 0 && slem_out_seekable(w->out)) st = slem_vfmt_write_error(w, err);
    if (!slem_out_seekable(w->out)) { /* after the held rows: written below, after them */
      w->ids_pad = (size_t)(ids_off - rows_end);
    } else if (st == SLEM_OK && fwrite(zeros, 1, (size_t)(ids_off - rows_end), fp) != ids_off - rows_end) {
      st = slem_vfmt_write_error(w, err);
    }
    w->crc = slem_crc32(w->crc, zeros, (size_t)(ids_off - rows_end));
    tail_crc = slem_crc32(0, zeros, (size_t)(ids_off - rows_end));
    for (uint64_t i = 0; i < n && st == SLEM_OK; i++) {
      const char *id = slem_ids_get(m->ids, m->ids_first + i);
      size_t len = strlen(id) + 1;
      w->crc = slem_crc32(w->crc, id, len);
      tail_crc = slem_crc32(tail_crc, id, len);
      if (slem_out_seekable(w->out) && fwrite(id, 1, len, fp) != len) st = slem_vfmt_write_error(w, err);
    }
    pay_len = ids_off + bytes;
    if (st) {
      cJSON_Delete(meta);
      return st;
    }
  }
  if ((st = blocks_end(w, &blk_rows, err)) != SLEM_OK) {
    cJSON_Delete(meta);
    return st;
  }
  blocks_add_json(meta, blk_rows, w->blk_count, slem_crc32(0, w->blk_crc, w->blk_count * 4),
                  tail_crc);
  text = cJSON_PrintUnformatted(meta);
  cJSON_Delete(meta);
  if (!text) return slem_error(err, SLEM_ENOMEM, "out of memory");
  json_len = (uint32_t)strlen(text);
  if (FIXED_LEN + (uint64_t)json_len + 1 > TABLE_OFF) {
    free(text);
    return slem_error(err, SLEM_EINVAL, "%s: the header of the container is too long (%u bytes)",
                      slem_out_name(w->out), json_len);
  }
  crc_json = slem_crc32(0, text, json_len);
  memset(h, 0, sizeof h);
  memcpy(h, magic, 8);
  v32 = VERSION; memcpy(h + 8, &v32, 4);
  v32 = BOM; memcpy(h + 12, &v32, 4);
  v32 = FIXED_LEN; memcpy(h + 16, &v32, 4);
  memcpy(h + 20, &json_len, 4);
  pos = FIXED_LEN; memcpy(h + 24, &pos, 8);
  pos = PAY_OFF; memcpy(h + 32, &pos, 8);
  memcpy(h + 40, &pay_len, 8);
  memcpy(h + 48, &crc_json, 4);
  memcpy(h + 52, &w->crc, 4);
  v32 = slem_crc32(0, h, 60); memcpy(h + 60, &v32, 4);
  if (slem_out_seekable(w->out)) {
    if (!w->room) { /* no write came: the room of the header still has to be made */
      static const unsigned char zeros[4096] = {0};
      for (pos = 0; pos < PAY_OFF; pos += sizeof zeros)
        if (fwrite(zeros, 1, sizeof zeros, fp) != sizeof zeros) st = slem_vfmt_write_error(w, err);
    }
    if (st == SLEM_OK && (fseek(fp, 0, SEEK_SET) != 0 || fwrite(h, 1, FIXED_LEN, fp) != FIXED_LEN ||
                          fwrite(text, 1, json_len, fp) != json_len || putc('\n', fp) == EOF ||
                          fseek(fp, TABLE_OFF, SEEK_SET) != 0 ||
                          (w->blk_count && fwrite(w->blk_crc, 4, w->blk_count, fp) != w->blk_count) ||
                          fseek(fp, 0, SEEK_END) != 0))
      st = slem_vfmt_write_error(w, err);
  } else {
    if (fwrite(h, 1, FIXED_LEN, fp) != FIXED_LEN || fwrite(text, 1, json_len, fp) != json_len ||
        putc('\n', fp) == EOF)
      st = slem_vfmt_write_error(w, err);
    for (pos = FIXED_LEN + json_len + 1; st == SLEM_OK && pos < TABLE_OFF; pos++)
      if (putc(0, fp) == EOF) st = slem_vfmt_write_error(w, err);
    if (st == SLEM_OK && w->blk_count && fwrite(w->blk_crc, 4, w->blk_count, fp) != w->blk_count)
      st = slem_vfmt_write_error(w, err);
    for (pos = TABLE_OFF + 4 * (uint64_t)w->blk_count; st == SLEM_OK && pos < PAY_OFF; pos++)
      if (putc(0, fp) == EOF) st = slem_vfmt_write_error(w, err);
    if (st == SLEM_OK && w->buf_n > 0 && fwrite(w->buf, 1, w->buf_n, fp) != w->buf_n)
      st = slem_vfmt_write_error(w, err);
    if (st == SLEM_OK && m->ids) {
      for (size_t i = 0; st == SLEM_OK && i < w->ids_pad; i++)
        if (putc(0, fp) == EOF) st = slem_vfmt_write_error(w, err);
      for (uint64_t i = 0; st == SLEM_OK && i < n; i++) {
        const char *id = slem_ids_get(m->ids, m->ids_first + i);
        if (fwrite(id, 1, strlen(id) + 1, fp) != strlen(id) + 1) st = slem_vfmt_write_error(w, err);
      }
    }
  }
  free(text);
  return st;
}

const SlemVecFormatDef slem_vfmt_slem = {
    SLEM_FMT_SLEM, {"slem", NULL}, sniff_slem, open_slem, read_slem, rewind_slem,
    1u << SLEM_DTYPE_F8, NULL, NULL, write_slem, end_slem, seek_slem};
