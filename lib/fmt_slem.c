/* slem's descriptor container: the .slem family of the cache (cache.h), kind "descriptors".
 *
 *   0      64 bytes  the fixed header of the cache format (magic, version, byte-order mark,
 *                    lengths and offsets, CRC-32 of the JSON, of the payload, of the header)
 *   64     JSON      kind "descriptors", rows "descriptors", "classifiers" or
 *                    "kernel-projections", d, n, dtype, the fingerprint of the cache that
 *                    made the rows, the input they come from, the shard they are, sections
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
 * header is completed at the close (a pipe gets the rows held in memory until then). A
 * reader checks the header and the JSON before the first row, and the payload checksum
 * first when the input is a regular file (one pass over it), else at its end.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32.h"
#include "ids.h"
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

static int sniff_slem(const unsigned char *p, size_t n) {
  return n >= 8 && memcmp(p, magic, 8) == 0 ? 100 : 0;
}

static int open_slem(SlemVecReader *r, SlemError *err) {
  const char *name = slem_in_name(r->in);
  unsigned char h[FIXED_LEN];
  char *json_text = NULL;
  cJSON *json = NULL;
  const cJSON *kind, *dtype, *fp, *rows_kind;
  size_t got, esize = 4;
  uint32_t json_len, v;
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
  r->meta_json = cJSON_Print(json);
  /* up to the payload */
  for (uint64_t pos = FIXED_LEN + json_len; st == SLEM_OK && pos < pay_off;) {
    unsigned char skip[4096];
    size_t want = pay_off - pos < sizeof skip ? (size_t)(pay_off - pos) : sizeof skip;
    st = slem_in_read(r->in, skip, want, &got, err);
    if (st == SLEM_OK && got < want)
      st = slem_error(err, SLEM_EFORMAT, "%s: truncated before its rows", name);
    pos += got;
  }
  if (st) goto done;
  /* the payload's checksum is followed as the rows are read, from the first row to the last
   * (at the end of the rows, or now when there is none): opening a container costs its
   * header, whatever its size. What follows the rows (padding, the ids) is kept for it. */
  if (slem_in_seekable(r->in)) {
    uint64_t rows_end = pay_off + n * d * esize;
    memcpy(&r->crc_want, h + 52, 4);
    r->crc_tail_len = (size_t)(pay_off + pay_len - rows_end);
    if (!(r->crc_tail = calloc(r->crc_tail_len ? r->crc_tail_len : 1, 1)))
      st = slem_error(err, SLEM_ENOMEM, "out of memory for the ids of %s", name);
    if (st == SLEM_OK && r->crc_tail_len > 0) { /* the ids, read before the rows they name */
      if (st == SLEM_OK) st = slem_in_seek(r->in, rows_end, err);
      if (st == SLEM_OK) st = slem_in_read(r->in, r->crc_tail, r->crc_tail_len, &got, err);
      if (st == SLEM_OK && got < r->crc_tail_len)
        st = slem_error(err, SLEM_EFORMAT, "%s: truncated in its ids", name);
      if (st == SLEM_OK && ids_off)
        st = slem_ids_unpack(&r->ids, name, (const char *)r->crc_tail + (ids_off - rows_end),
                             ids_bytes, n, err);
    }
    /* an empty segment's ids section is empty: its rows have ids all the same (none) */
    if (st == SLEM_OK && ids_off && r->crc_tail_len == 0 && n == 0)
      st = slem_ids_unpack(&r->ids, name, "", 0, 0, err);
    r->crc_on = r->crc_can = 1;
    if (st == SLEM_OK && n == 0) st = slem_vfmt_crc_end(r, err);
    if (st == SLEM_OK) st = slem_in_seek(r->in, pay_off, err);
    if (st) goto done;
  }
  r->d = (size_t)d;
  r->count = (int64_t)n;
  r->count_from = "the header";
  r->dtype = r->kproj ? SLEM_DT_F8 : SLEM_DT_F4;
  r->esize = esize;
  r->prefix = 0;
  r->rec = r->d * esize;
  r->data_off = pay_off; /* n may be 0: a shard with no row */
done:
  cJSON_Delete(json);
  return st;
}

/* Appends bytes of rows: to a file as they come, to a pipe held until the close. */
static int write_rows(SlemVecWriter *w, const void *x, size_t bytes, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
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
  uint64_t n = w->n, pay_len = n * w->d * esize, pos;
  uint32_t json_len, v32, crc_json;
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
    for (uint64_t i = 0; i < n && st == SLEM_OK; i++) {
      const char *id = slem_ids_get(m->ids, m->ids_first + i);
      size_t len = strlen(id) + 1;
      w->crc = slem_crc32(w->crc, id, len);
      if (slem_out_seekable(w->out) && fwrite(id, 1, len, fp) != len) st = slem_vfmt_write_error(w, err);
    }
    pay_len = ids_off + bytes;
    if (st) {
      cJSON_Delete(meta);
      return st;
    }
  }
  text = cJSON_PrintUnformatted(meta);
  cJSON_Delete(meta);
  if (!text) return slem_error(err, SLEM_ENOMEM, "out of memory");
  json_len = (uint32_t)strlen(text);
  if (FIXED_LEN + (uint64_t)json_len + 1 > PAY_OFF) {
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
                          fseek(fp, 0, SEEK_END) != 0))
      st = slem_vfmt_write_error(w, err);
  } else {
    if (fwrite(h, 1, FIXED_LEN, fp) != FIXED_LEN || fwrite(text, 1, json_len, fp) != json_len ||
        putc('\n', fp) == EOF)
      st = slem_vfmt_write_error(w, err);
    for (pos = FIXED_LEN + json_len + 1; st == SLEM_OK && pos < PAY_OFF; pos++)
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
    SLEM_FMT_SLEM, {"slem", NULL}, sniff_slem, open_slem, NULL, NULL, 1u << SLEM_DTYPE_F8,
    NULL, NULL, write_slem, end_slem};
