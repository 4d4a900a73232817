/* slem's descriptor container: the .slem family of the cache (cache.h), kind "descriptors".
 *
 *   0      64 bytes  the fixed header of the container (container.h: magic, version,
 *                    byte-order mark, lengths and offsets, CRC-32 of the JSON, of the
 *                    payload, of the header)
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
 * wrote (no "blocks") is verified whole at the open, before any row is used. The header,
 * the JSON checksum, the block table and the ids section are container.c's; the streaming
 * of the rows is here.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "container.h"
#include "crc32.h"
#include "ids.h"
#include "mem.h"
#include "vecfmt.h"

#define FIXED_LEN SLEM_CONTAINER_FIXED_LEN
#define PAY_OFF SLEM_CONTAINER_PAY_OFF
#define TABLE_OFF SLEM_CONTAINER_TABLE_OFF

/* The reader's own state (r->priv). */
typedef struct SlemState {
  uint32_t crc_want;  /* of the whole payload: the records, then crc_tail */
  unsigned char *crc_tail; /* what follows the rows in the payload (padding, ids) */
  size_t crc_tail_len;
  uint64_t tail_ids_off, tail_ids_bytes; /* where the ids lie in crc_tail (bytes 0: none) */
  int tail_read;      /* crc_tail holds what follows the rows (a pipe: only after the last row) */
  /* its block table: the rows in blocks, each with its CRC-32, so that a read of any window
   * verifies the blocks it touches, and no row leaves the reader unverified (rows 0: no
   * table, a container of the first release) */
  SlemContainerTable table;
  unsigned char *blk_buf; /* one block read ahead and verified; its rows from blk_at on are
                           * the next ones handed out */
  size_t blk_n, blk_at, blk_cap;
} SlemState;
#define S(r) ((SlemState *)(r)->priv)

/* The writer's own state (w->priv). */
typedef struct SlemWState {
  uint32_t crc;        /* CRC-32 of the payload written so far */
  unsigned char *buf;  /* to a pipe: the rows' bytes, held until the close */
  size_t buf_n, buf_cap, ids_pad;
  int room;            /* the room of the header is written (to a file) */
  SlemContainerBlocks blocks; /* the CRC-32 of each block of rows written so far */
} SlemWState;
#define W(w) ((SlemWState *)(w)->priv)

static void close_slem(SlemVecReader *r) {
  if (r->priv) {
    free(S(r)->crc_tail);
    slem_container_table_free(&S(r)->table);
    free(S(r)->blk_buf);
  }
  free(r->priv);
  r->priv = NULL;
}

static void wclose_slem(SlemVecWriter *w) {
  if (w->priv) {
    free(W(w)->buf);
    slem_container_blocks_free(&W(w)->blocks);
  }
  free(w->priv);
  w->priv = NULL;
}

/* The arithmetic (arith.h) the rows were made with: recorded by the process that writes
 * them, read back for the warnings and refusals of slem-match and slem-merge. */
static void arith_write(cJSON *meta) { slem_arith_to_json(meta, NULL); }

static void arith_read(SlemVecReader *r, const cJSON *json) {
  slem_arith_from_json(json, r->arith, sizeof r->arith);
}

static int sniff_slem(const unsigned char *p, size_t n) {
  return slem_container_sniff(p, n) ? 100 : 0;
}

/* What follows the rows, against its own checksum (containers with a block table). */
static int tail_check(SlemVecReader *r, SlemError *err) {
  if (S(r)->table.rows && slem_crc32(0, S(r)->crc_tail, S(r)->crc_tail_len) != S(r)->table.tail_crc)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the ids after the rows: corrupt",
                      slem_in_name(r->in));
  return SLEM_OK;
}

/* From a pipe, after the last row: what follows the rows, read now. Its ids are checked (a
 * container's ids are valid wherever it is read) but cannot name the rows any more. */
static int read_tail(SlemVecReader *r, SlemError *err) {
  size_t got;
  int st;
  if (S(r)->tail_read) return SLEM_OK;
  st = slem_in_read(r->in, S(r)->crc_tail, S(r)->crc_tail_len, &got, err);
  if (st == SLEM_OK && got < S(r)->crc_tail_len)
    st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its ids", slem_in_name(r->in));
  S(r)->tail_read = 1;
  return st;
}

static int pipe_ids(SlemVecReader *r, SlemError *err) {
  SlemIds *ids = NULL;
  int st = SLEM_OK;
  if (!slem_in_seekable(r->in) && S(r)->tail_ids_bytes)
    st = slem_ids_unpack(&ids, slem_in_name(r->in), (const char *)S(r)->crc_tail + S(r)->tail_ids_off,
                         S(r)->tail_ids_bytes, (uint64_t)r->count, err);
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

/* 1 when j is a whole number in [0, 2^53]. */
static int whole(const cJSON *j) {
  return cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble <= 9007199254740992.0 &&
         j->valuedouble == (double)(uint64_t)j->valuedouble;
}

/* The shard the container records ("shard": {index, count, first_row}, and the input's rows
 * in "input": {count}), which slem_db_open() checks against the files around it. Errors:
 * SLEM_EFORMAT when "shard" is there but not consistent with itself or with n. */
static int shard_read(SlemVecReader *r, const cJSON *json, uint64_t n, const char *name,
                      SlemError *err) {
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(json, "shard");
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(json, "input");
  const cJSON *ji = cJSON_GetObjectItemCaseSensitive(sh, "index");
  const cJSON *jc = cJSON_GetObjectItemCaseSensitive(sh, "count");
  const cJSON *jf = cJSON_GetObjectItemCaseSensitive(sh, "first_row");
  const cJSON *jt = cJSON_GetObjectItemCaseSensitive(in, "count");
  const cJSON *je = cJSON_GetObjectItemCaseSensitive(sh, "encoding");
  if (!sh) return SLEM_OK;
  if (je && (!cJSON_IsString(je) || strlen(je->valuestring) >= sizeof r->shard_encoding))
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header's shard has a bad encoding", name);
  if (je) snprintf(r->shard_encoding, sizeof r->shard_encoding, "%s", je->valuestring);
  if (!whole(ji) || !whole(jc) || !whole(jf) || jc->valuedouble < 1 ||
      ji->valuedouble >= jc->valuedouble)
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header's shard lacks a valid index, count "
                      "or first_row", name);
  r->shard_index = (uint64_t)ji->valuedouble;
  r->shard_count = (uint64_t)jc->valuedouble;
  r->shard_first = (uint64_t)jf->valuedouble;
  r->shard_total = whole(jt) ? (int64_t)jt->valuedouble : -1;
  if (r->shard_total >= 0 && r->shard_first + n > (uint64_t)r->shard_total)
    return slem_error(err, SLEM_EFORMAT, "%s: shard %" PRIu64 "/%" PRIu64 " of rows %" PRIu64
                      " to %" PRIu64 ", beyond the %" PRId64 " rows of its input", name,
                      r->shard_index, r->shard_count, r->shard_first, r->shard_first + n,
                      r->shard_total);
  return SLEM_OK;
}

static int open_slem(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  unsigned char h[FIXED_LEN];
  char *json_text = NULL;
  cJSON *json = NULL;
  const cJSON *kind, *dtype, *fp, *rows_kind;
  size_t got, esize = 4;
  uint32_t json_len;
  uint64_t pay_off, pay_len, n, d, ids_off = 0, ids_bytes = 0;
  SlemContainerHead head;
  int st;
  if (!(r->priv = calloc(1, sizeof(SlemState)))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_in_read(r->in, h, FIXED_LEN, &got, err)) != SLEM_OK ||
      (st = slem_container_head_unpack(&head, h, got, SLEM_CONTAINER_DESCRIPTORS,
                                       slem_in_size(r->in), name, err)) != SLEM_OK)
    return st;
  json_len = head.json_len;
  pay_off = head.pay_off;
  pay_len = head.pay_len;
  if (!(json_text = malloc(json_len)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  st = slem_in_read(r->in, json_text, json_len, &got, err);
  if (st == SLEM_OK && got < json_len)
    st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its JSON header", name);
  if (st == SLEM_OK) st = slem_container_json_parse(&json, &head, json_text, name, err);
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
    if (r->kp_couple) { /* "coupling": which one (kproj.h); absent, the exact one */
      const cJSON *kn = cJSON_GetObjectItemCaseSensitive(k, "coupling");
      if (kn && (!cJSON_IsString(kn) || (r->kp_couple = slem_couple_parse(kn->valuestring)) < 0)) {
        st = slem_error(err, SLEM_EFORMAT, "%s: kernel projections of an unknown coupling "
                        "(kernel_projections: coupling)", name);
        goto done;
      }
    }
  }
  if (n > 0 && pay_len / n / esize < d) {
    st = slem_error(err, SLEM_EFORMAT, "%s: the payload holds %" PRIu64 " bytes, not %" PRIu64
                    " rows of %" PRIu64 " values", name, pay_len, n, d);
    goto done;
  }
  /* the ids section, if any: right after the rows (64-byte aligned) to the end */
  if ((st = slem_container_ids_find(cJSON_GetObjectItemCaseSensitive(json, "sections"), pay_off,
                                    pay_len, n * d * esize, n, &ids_off, &ids_bytes, name,
                                    err)) != SLEM_OK)
    goto done;
  if (cJSON_IsString(fp) && strlen(fp->valuestring) == 16)
    snprintf(r->cache_fp, sizeof r->cache_fp, "%s", fp->valuestring);
  { /* descriptors of a coupling: which one, of which cache (absent: none, or not recorded) */
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(json, "coupling");
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(c, "name");
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(c, "cache_fingerprint");
    if (c && (!cJSON_IsString(cn) || (r->couple = slem_couple_parse(cn->valuestring)) < 0 ||
              !cJSON_IsString(cf) || strlen(cf->valuestring) != 16)) {
      st = slem_error(err, SLEM_EFORMAT, "%s: descriptors of an unknown coupling (coupling: "
                      "name, cache_fingerprint)", name);
      goto done;
    }
    if (c) snprintf(r->couple_fp, sizeof r->couple_fp, "%s", cf->valuestring);
  }
  arith_read(r, json);
  if ((st = shard_read(r, json, n, name, err)) != SLEM_OK) goto done;
  r->meta_json = cJSON_Print(json);
  r->d = (size_t)d;
  r->count = (int64_t)n;
  r->rec = r->d * esize;
  if ((st = slem_container_table_parse(&S(r)->table, json, n, FIXED_LEN + json_len, pay_off,
                                       name, err)) != SLEM_OK)
    goto done;
  /* up to the payload, keeping the block table that lies there */
  {
    uint64_t room_len = pay_off - FIXED_LEN - json_len;
    unsigned char *room = malloc(room_len ? room_len : 1);
    if (!room) st = slem_error(err, SLEM_ENOMEM, "out of memory");
    if (st == SLEM_OK) st = slem_in_read(r->in, room, (size_t)room_len, &got, err);
    if (st == SLEM_OK && got < room_len)
      st = slem_error(err, SLEM_EFORMAT, "%s: truncated before its rows", name);
    if (st == SLEM_OK && S(r)->table.rows)
      st = slem_container_table_load(&S(r)->table, room + (S(r)->table.off - FIXED_LEN - json_len),
                                     name, err);
    free(room);
    if (st) goto done;
  }
  /* the header's payload checksum names the content (slem_vecreader_payload_crc()) */
  r->payload_crc = head.pay_crc;
  r->has_payload = 1;
  /* what follows the rows (padding, the ids): from a file, read now, before the rows they
   * name; from a pipe, after the last row (rows_end_pipe()) */
  {
    uint64_t rows_end = pay_off + n * d * esize;
    S(r)->crc_want = head.pay_crc;
    S(r)->crc_tail_len = (size_t)(pay_off + pay_len - rows_end);
    S(r)->tail_ids_off = ids_off ? ids_off - rows_end : 0;
    S(r)->tail_ids_bytes = ids_bytes;
    if (!(S(r)->crc_tail = calloc(S(r)->crc_tail_len ? S(r)->crc_tail_len : 1, 1)))
      st = slem_error(err, SLEM_ENOMEM, "out of memory for the ids of %s", name);
    if (st) goto done;
    r->data_off = pay_off;
    if (slem_in_seekable(r->in)) {
      if (S(r)->crc_tail_len > 0) {
        st = slem_in_seek(r->in, rows_end, err);
        if (st == SLEM_OK) st = slem_in_read(r->in, S(r)->crc_tail, S(r)->crc_tail_len, &got, err);
        if (st == SLEM_OK && got < S(r)->crc_tail_len)
          st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its ids", name);
      }
      S(r)->tail_read = 1;
      if (st == SLEM_OK) st = tail_check(r, err);
      /* a container without a block table (written before them): its one checksum covers
       * the whole payload, verified now, before any row is used, whatever is read of it */
      if (st == SLEM_OK && !S(r)->table.rows) st = verify_whole(r, err);
      if (st == SLEM_OK && ids_off)
        st = slem_ids_unpack(&r->ids, name, (const char *)S(r)->crc_tail + S(r)->tail_ids_off,
                             ids_bytes, n, err);
      if (st == SLEM_OK) st = slem_in_seek(r->in, pay_off, err);
    } else if (!S(r)->table.rows) { /* the same from a pipe: the rows held and verified first */
      if (pay_len > SLEM_NPY_FORTRAN_PIPE_MAX)
        st = slem_error(err, SLEM_EFORMAT, "%s: a container without a block table (written "
                        "before them) on a pipe is held whole to be verified, up to 64 MiB, and "
                        "this one has %" PRIu64 " bytes: give the file, or write it again with "
                        "slem-encode", name, pay_len);
      if (st == SLEM_OK && n > 0 && !(S(r)->blk_buf = slem_mem_alloc_large((size_t)(n * d * esize))))
        st = slem_error(err, SLEM_ENOMEM, "out of memory for the rows of %s", name);
      if (st == SLEM_OK && n > 0) st = read_raw(r, S(r)->blk_buf, 0, (size_t)n, err);
      if (st == SLEM_OK) st = read_tail(r, err);
      if (st == SLEM_OK && slem_crc32(slem_crc32(0, S(r)->blk_buf, (size_t)(n * d * esize)),
                                      S(r)->crc_tail, S(r)->crc_tail_len) != S(r)->crc_want)
        st = slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the rows: corrupt", name);
      if (st == SLEM_OK) st = pipe_ids(r, err);
      S(r)->table.rows = n ? n : 1; /* one block, read ahead whole */
      S(r)->blk_n = (size_t)n;
      S(r)->blk_cap = (size_t)(n * d * esize);
    } else if (n == 0) { /* no row will be read: the end of the pipe is checked now */
      st = rows_end_pipe(r, err);
      r->exact_end = 1;
      r->count_from = "the header";
      if (st == SLEM_OK) st = slem_vfmt_pipe_end(r, err);
    }
    if (st) goto done;
  }
  r->count_from = "the header";
  r->exact_end = 1; /* on a pipe, nothing may follow the ids (vecfmt.c: slem_vfmt_pipe_end()) */
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
  uint64_t n = (uint64_t)r->count;
  int st = slem_container_table_verify(&S(r)->table, n, r->rec, first, raw, nrows,
                                       slem_in_name(r->in), err);
  if (st == SLEM_OK && first + nrows == n && !S(r)->tail_read) st = rows_end_pipe(r, err);
  return st;
}

/* Reads the block that starts at record first into S(r)->blk_buf, verified; its rows are
 * handed out from the next read on. */
static int read_ahead(SlemVecReader *r, uint64_t first, SlemError *err) {
  uint64_t left = (uint64_t)r->count - first;
  size_t n = (size_t)(left < S(r)->table.rows ? left : S(r)->table.rows);
  int st;
  S(r)->blk_n = S(r)->blk_at = 0;
  if (n * r->rec > S(r)->blk_cap) {
    free(S(r)->blk_buf);
    S(r)->blk_cap = 0;
    if (!(S(r)->blk_buf = slem_mem_alloc_large(n * r->rec)))
      return slem_error(err, SLEM_ENOMEM, "out of memory for a block of %zu records", n);
    S(r)->blk_cap = n * r->rec;
  }
  if ((st = read_raw(r, S(r)->blk_buf, first, n, err)) != SLEM_OK ||
      (st = verify_blocks(r, first, S(r)->blk_buf, n, err)) != SLEM_OK)
    return st;
  S(r)->blk_n = n;
  return SLEM_OK;
}

/* Rows leave the reader only from blocks verified whole: whole blocks straight into the
 * caller's rows, fewer rows than a block (a window's edge, a short read) from the block read
 * ahead. A container without a table was verified at the open: read as fixed records. */
static int read_slem(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                     SlemError *err) {
  size_t out = 0;
  if (!S(r)->table.rows) return slem_vfmt_read_records(r, xd, xf, max, got, err);
  while (out < max && r->recs < (uint64_t)r->count) {
    uint64_t left = (uint64_t)r->count - r->recs;
    size_t want = max - out < left ? max - out : (size_t)left, n, o;
    double *xo = xd ? xd + out * r->d : NULL;
    float *fo = xf ? xf + out * r->d : NULL;
    const unsigned char *raw;
    int st;
    if (S(r)->blk_at < S(r)->blk_n) { /* the rest of the block read ahead */
      n = S(r)->blk_n - S(r)->blk_at < want ? S(r)->blk_n - S(r)->blk_at : want;
      raw = S(r)->blk_buf + S(r)->blk_at * r->rec;
      S(r)->blk_at += n;
    } else if (want >= S(r)->table.rows || want == left) { /* whole blocks (r->recs starts one) */
      unsigned char *dst;
      n = want == left ? want : (size_t)(want / S(r)->table.rows * S(r)->table.rows);
      if (xf ? r->dtype == SLEM_DT_F4 : r->dtype == SLEM_DT_F8) { /* read in place */
        dst = xf ? (unsigned char *)fo : (unsigned char *)xo;
      } else {
        if (n * r->rec > r->raw_cap) {
          free(r->raw);
          r->raw_cap = 0;
          if (!(r->raw = slem_mem_alloc_large(n * r->rec)))
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
      raw = S(r)->blk_buf;
      S(r)->blk_at = n;
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
  if (slem_crc32(crc, S(r)->crc_tail, S(r)->crc_tail_len) != S(r)->crc_want)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the rows: corrupt",
                      slem_in_name(r->in));
  return SLEM_OK;
}

static int seek_slem(SlemVecReader *r, uint64_t row, SlemError *err) {
  uint64_t first;
  int st;
  S(r)->blk_n = S(r)->blk_at = 0;
  if (!S(r)->table.rows) /* no table: the whole payload was verified at the open */
    return slem_in_seek(r->in, r->data_off + row * r->rec, err);
  first = row / S(r)->table.rows * S(r)->table.rows; /* the block of row is read whole */
  if ((st = slem_in_seek(r->in, r->data_off + first * r->rec, err)) != SLEM_OK) return st;
  if (row == first || row == (uint64_t)r->count) return SLEM_OK;
  if ((st = read_ahead(r, first, err)) != SLEM_OK) return st;
  S(r)->blk_at = (size_t)(row - first);
  return SLEM_OK;
}

static int rewind_slem(SlemVecReader *r, SlemError *err) {
  S(r)->blk_n = S(r)->blk_at = 0;
  return slem_in_seek(r->in, r->data_off, err);
}

/* ---- writing ---- */

static size_t row_bytes(const SlemVecWriter *w) {
  return w->d * (w->dtype == SLEM_DTYPE_F8 ? 8 : 4);
}

static int begin_slem(SlemVecWriter *w, SlemError *err) {
  if (!(w->priv = calloc(1, sizeof(SlemWState)))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  return SLEM_OK;
}

/* Appends bytes of rows: to a file as they come, to a pipe held until the close. */
static int write_rows(SlemVecWriter *w, const void *x, size_t bytes, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  int st = slem_container_blocks_feed(&W(w)->blocks, row_bytes(w), x, bytes, err);
  if (st) return st;
  if (!slem_out_seekable(w->out)) { /* held until the close */
    if (W(w)->buf_n + bytes > W(w)->buf_cap) {
      size_t cap = W(w)->buf_cap ? W(w)->buf_cap : 1 << 18;
      unsigned char *b;
      while (cap < W(w)->buf_n + bytes) cap *= 2;
      if (!(b = realloc(W(w)->buf, cap)))
        return slem_error(err, SLEM_ENOMEM, "out of memory holding the rows for %s",
                          slem_out_name(w->out));
      W(w)->buf = b;
      W(w)->buf_cap = cap;
    }
    memcpy(W(w)->buf + W(w)->buf_n, x, bytes);
    W(w)->buf_n += bytes;
    return SLEM_OK;
  }
  if (!W(w)->room) { /* the room of the header, completed at the close */
    if (slem_container_write_zeros(fp, PAY_OFF) != 0) return slem_vfmt_write_error(w, err);
    W(w)->room = 1;
  }
  W(w)->crc = slem_crc32(W(w)->crc, x, bytes);
  if (fwrite(x, 1, bytes, fp) != bytes) return slem_vfmt_write_error(w, err);
  return SLEM_OK;
}

static int write_slem(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  if (w->dtype == SLEM_DTYPE_F8)
    return slem_error(err, SLEM_EINVAL, "%s: a container of kernel projections takes doubles",
                      slem_out_name(w->out));
  return write_rows(w, x, n * w->d * sizeof *x, err);
}

static int write_slem_f64(SlemVecWriter *w, const double *x, size_t n, SlemError *err) {
  return write_rows(w, x, n * w->d * sizeof *x, err);
}

static int end_slem(SlemVecWriter *w, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  cJSON *meta = cJSON_CreateObject(), *secs, *sec, *shape;
  const SlemDescMeta *m = &w->meta;
  SlemContainerHead head;
  char *text = NULL;
  size_t esize = w->dtype == SLEM_DTYPE_F8 ? 8 : 4;
  const char *dtype = esize == 8 ? "<f8" : "<f4";
  uint64_t n = w->n, pay_len = n * w->d * esize, blk_rows;
  uint32_t json_len, tail_crc = 0;
  int st = SLEM_OK;
  if (!slem_out_seekable(w->out)) W(w)->crc = slem_crc32(0, W(w)->buf, W(w)->buf_n);
  if (!meta) return slem_error(err, SLEM_ENOMEM, "out of memory");
  cJSON_AddStringToObject(meta, "format", "slem-cache");
  cJSON_AddNumberToObject(meta, "format_version", SLEM_CONTAINER_VERSION);
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
      cJSON_AddBoolToObject(k, "couple", m->kernel_couple != 0);
      if (m->kernel_couple && m->kernel_couple != SLEM_COUPLE_EXACT)
        cJSON_AddStringToObject(k, "coupling", slem_couple_name(m->kernel_couple));
    }
  }
  if (m->cache_fingerprint) cJSON_AddStringToObject(meta, "cache_fingerprint", m->cache_fingerprint);
  if (m->couple && m->couple_cache_fp) { /* which coupling of which cache (messages name them) */
    cJSON *c = cJSON_AddObjectToObject(meta, "coupling");
    if (c) {
      cJSON_AddStringToObject(c, "name", slem_couple_name(m->couple));
      cJSON_AddStringToObject(c, "cache_fingerprint", m->couple_cache_fp);
    }
  }
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
      if (m->encoding) cJSON_AddStringToObject(sh, "encoding", m->encoding);
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
    for (uint64_t i = 0; i < n; i++) bytes += strlen(slem_ids_get(m->ids, m->ids_first + i)) + 1;
    slem_container_ids_json(secs, PAY_OFF + ids_off, bytes, n);
    if (fseek(fp, 0, SEEK_END) != 0 && slem_out_seekable(w->out)) st = slem_vfmt_write_error(w, err);
    if (!slem_out_seekable(w->out)) { /* after the held rows: written below, after them */
      W(w)->ids_pad = (size_t)(ids_off - rows_end);
    } else if (st == SLEM_OK && fwrite(zeros, 1, (size_t)(ids_off - rows_end), fp) != ids_off - rows_end) {
      st = slem_vfmt_write_error(w, err);
    }
    W(w)->crc = slem_crc32(W(w)->crc, zeros, (size_t)(ids_off - rows_end));
    tail_crc = slem_crc32(0, zeros, (size_t)(ids_off - rows_end));
    for (uint64_t i = 0; i < n && st == SLEM_OK; i++) {
      const char *id = slem_ids_get(m->ids, m->ids_first + i);
      size_t len = strlen(id) + 1;
      W(w)->crc = slem_crc32(W(w)->crc, id, len);
      tail_crc = slem_crc32(tail_crc, id, len);
      if (slem_out_seekable(w->out) && fwrite(id, 1, len, fp) != len) st = slem_vfmt_write_error(w, err);
    }
    pay_len = ids_off + bytes;
    if (st) {
      cJSON_Delete(meta);
      return st;
    }
  }
  if ((st = slem_container_blocks_end(&W(w)->blocks, row_bytes(w), n, &blk_rows, err)) != SLEM_OK) {
    cJSON_Delete(meta);
    return st;
  }
  slem_container_blocks_json(meta, &W(w)->blocks, blk_rows, tail_crc);
  text = cJSON_PrintUnformatted(meta);
  cJSON_Delete(meta);
  if (!text) return slem_error(err, SLEM_ENOMEM, "out of memory");
  json_len = (uint32_t)strlen(text);
  if (FIXED_LEN + (uint64_t)json_len + 1 > TABLE_OFF) {
    free(text);
    return slem_error(err, SLEM_EINVAL, "%s: the header of the container is too long (%u bytes)",
                      slem_out_name(w->out), json_len);
  }
  head.json_len = json_len;
  head.json_off = FIXED_LEN;
  head.pay_off = PAY_OFF;
  head.pay_len = pay_len;
  head.json_crc = slem_crc32(0, text, json_len);
  head.pay_crc = W(w)->crc;
  if (slem_out_seekable(w->out)) { /* the rows are in place: the header and table go before */
    if (!W(w)->room && slem_container_write_zeros(fp, PAY_OFF) != 0) /* no write came */
      st = slem_vfmt_write_error(w, err);
    if (st == SLEM_OK && (fseek(fp, 0, SEEK_SET) != 0 ||
                          slem_container_write_head(fp, &head, text, 0) != 0 ||
                          fseek(fp, TABLE_OFF, SEEK_SET) != 0 ||
                          fwrite(W(w)->blocks.crc, 4, W(w)->blocks.count, fp) != W(w)->blocks.count ||
                          fseek(fp, 0, SEEK_END) != 0))
      st = slem_vfmt_write_error(w, err);
  } else { /* to a pipe: everything in order, the rows held until now */
    if (slem_container_write_head(fp, &head, text, TABLE_OFF) != 0 ||
        fwrite(W(w)->blocks.crc, 4, W(w)->blocks.count, fp) != W(w)->blocks.count ||
        slem_container_write_zeros(fp, PAY_OFF - TABLE_OFF - 4 * (uint64_t)W(w)->blocks.count) != 0 ||
        fwrite(W(w)->buf, 1, W(w)->buf_n, fp) != W(w)->buf_n)
      st = slem_vfmt_write_error(w, err);
    if (st == SLEM_OK && m->ids) {
      if (slem_container_write_zeros(fp, W(w)->ids_pad) != 0) st = slem_vfmt_write_error(w, err);
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
    .id = SLEM_FMT_SLEM, .names = {"slem", NULL}, .carries = 1, .sniff = sniff_slem, .open = open_slem,
    .read = read_slem, .rewind = rewind_slem, .out_dtypes = 1u << SLEM_DTYPE_F8,
    .begin = begin_slem, .write = write_slem, .end = end_slem, .seek = seek_slem,
    .close = close_slem, .wclose = wclose_slem, .write_f64 = write_slem_f64};
