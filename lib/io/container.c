/* The .slem container's file layer (container.h). */
#define _POSIX_C_SOURCE 200809L
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"
#include "io.h"
#include "mem.h"

#define BOM 0x01020304u

static const unsigned char magic[8] = {0x89, 'S', 'L', 'E', 'M', '\r', '\n', 0x1a};

/* What a reader of each role says of a header it refuses. */
static const struct {
  const char *not_magic;   /* not the magic number (or, for a stream, too short) */
  const char *other_order; /* the mark of the other byte order */
  const char *bad_order;   /* another mark */
  const char *version;     /* before "format version N" */
  const char *rebuild;     /* after "this slem reads version N" */
  const char *geometry;    /* offsets inconsistent; NULL: the file-size message */
  const char *size;        /* offsets disagreeing with the file's size; NULL: likewise */
  const char *short_file;  /* a file shorter than the fixed header */
  const char *noun;        /* what it is, in messages */
} roles[] = {
    [SLEM_CONTAINER_CACHE] = {"not a slem cache (bad magic)",
                              "written on a host of the other byte order; rebuild it with "
                              "slem-negstats here",
                              "bad byte-order mark", "cache ", ": rebuild it with slem-negstats",
                              NULL, NULL, "not a slem cache, or truncated", "cache"},
    [SLEM_CONTAINER_DESCRIPTORS] = {"not a slem container, or truncated",
                                    "written with another byte order",
                                    "written with another byte order", "", "",
                                    "the header's offsets are inconsistent",
                                    "size disagrees with its header: truncated or corrupt",
                                    "not a slem container, or truncated", "container"},
};

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static uint64_t get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

int slem_container_sniff(const unsigned char *p, size_t n) {
  return n >= 8 && memcmp(p, magic, 8) == 0;
}

void slem_container_head_pack(unsigned char *out, const SlemContainerHead *h) {
  uint32_t v32;
  memset(out, 0, SLEM_CONTAINER_FIXED_LEN);
  memcpy(out, magic, 8);
  v32 = SLEM_CONTAINER_VERSION; memcpy(out + 8, &v32, 4);
  v32 = BOM; memcpy(out + 12, &v32, 4);
  v32 = SLEM_CONTAINER_FIXED_LEN; memcpy(out + 16, &v32, 4);
  memcpy(out + 20, &h->json_len, 4);
  memcpy(out + 24, &h->json_off, 8);
  memcpy(out + 32, &h->pay_off, 8);
  memcpy(out + 40, &h->pay_len, 8);
  memcpy(out + 48, &h->json_crc, 4);
  memcpy(out + 52, &h->pay_crc, 4);
  v32 = slem_crc32(0, out, 60); memcpy(out + 60, &v32, 4);
}

/* The message of offsets that disagree with the file (size < 0: not a file). */
static int geometry_error(const char *msg, int64_t size, const char *name, SlemError *err) {
  if (msg) return slem_error(err, SLEM_EFORMAT, "%s: %s", name, msg);
  return slem_error(err, SLEM_EFORMAT, "%s: header offsets disagree with the file size %lld: "
                    "truncated or corrupt", name, (long long)size);
}

int slem_container_head_unpack(SlemContainerHead *h, const unsigned char *p, size_t n,
                               SlemContainerRole role, int64_t file_size, const char *name,
                               SlemError *err) {
  uint32_t v;
  if (n < SLEM_CONTAINER_FIXED_LEN || memcmp(p, magic, 8) != 0)
    return slem_error(err, SLEM_EFORMAT, "%s: %s", name, roles[role].not_magic);
  v = get32(p + 12);
  if (v != BOM)
    return slem_error(err, SLEM_EFORMAT, "%s: %s", name,
                      v == 0x04030201u ? roles[role].other_order : roles[role].bad_order);
  v = get32(p + 8);
  if (v != SLEM_CONTAINER_VERSION)
    return slem_error(err, SLEM_EFORMAT, "%s: %sformat version %" PRIu32 "; this slem reads "
                      "version %d%s", name, roles[role].version, v, SLEM_CONTAINER_VERSION,
                      roles[role].rebuild);
  if (slem_crc32(0, p, 60) != get32(p + 60))
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the fixed header", name);
  h->json_len = get32(p + 20);
  h->json_off = get64(p + 24);
  h->pay_off = get64(p + 32);
  h->pay_len = get64(p + 40);
  h->json_crc = get32(p + 48);
  h->pay_crc = get32(p + 52);
  if (get32(p + 16) != SLEM_CONTAINER_FIXED_LEN || h->json_off != SLEM_CONTAINER_FIXED_LEN ||
      h->json_len == 0 || h->pay_off < SLEM_CONTAINER_FIXED_LEN ||
      h->json_len > h->pay_off - SLEM_CONTAINER_FIXED_LEN ||
      h->pay_off % SLEM_CONTAINER_ALIGN != 0 || h->pay_off > ((uint64_t)1 << 30))
    return geometry_error(roles[role].geometry, file_size, name, err);
  if (file_size >= 0 &&
      (h->pay_off > (uint64_t)file_size || h->pay_len != (uint64_t)file_size - h->pay_off))
    return geometry_error(roles[role].size, file_size, name, err);
  return SLEM_OK;
}

int slem_container_json_parse(cJSON **json, const SlemContainerHead *h, const char *text,
                              const char *name, SlemError *err) {
  *json = NULL;
  if (slem_crc32(0, text, h->json_len) != h->json_crc)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the JSON header", name);
  *json = cJSON_ParseWithLength(text, h->json_len);
  if (!*json || !cJSON_IsObject(*json)) {
    cJSON_Delete(*json);
    *json = NULL;
    return slem_error(err, SLEM_EFORMAT, "%s: the JSON header does not parse", name);
  }
  return SLEM_OK;
}

int slem_container_payload_check(const SlemContainerHead *h, const void *p, const char *name,
                                 SlemError *err) {
  if (slem_crc32(0, p, h->pay_len) != h->pay_crc)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the payload: corrupt", name);
  return SLEM_OK;
}

int slem_container_write_zeros(FILE *fp, uint64_t n) {
  static const unsigned char zeros[4096] = {0};
  while (n > 0) {
    size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
    if (fwrite(zeros, 1, k, fp) != k) return -1;
    n -= k;
  }
  return 0;
}

int slem_container_write_head(FILE *fp, const SlemContainerHead *h, const char *json,
                              uint64_t upto) {
  unsigned char hdr[SLEM_CONTAINER_FIXED_LEN];
  uint64_t at = SLEM_CONTAINER_FIXED_LEN + (uint64_t)h->json_len + 1;
  slem_container_head_pack(hdr, h);
  if (fwrite(hdr, 1, sizeof hdr, fp) != sizeof hdr ||
      fwrite(json, 1, h->json_len, fp) != h->json_len || putc('\n', fp) == EOF)
    return -1;
  return upto > at ? slem_container_write_zeros(fp, upto - at) : 0;
}

void slem_container_fingerprint(char *out, const void *payload, uint64_t len) {
  const unsigned char *p = payload;
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
  snprintf(out, 17, "%016" PRIx64, h);
}

/* a b modulo the CRC-32 polynomial, in the bit order of the register (bit 31: x^0) */
static uint32_t gf2_mul(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = 1u << 31; m; m >>= 1) {
    if (a & m) p ^= b;
    b = b & 1 ? (b >> 1) ^ 0xEDB88320u : b >> 1;
  }
  return p;
}

/* crc_a carried len_b bytes on (times x^(8 len_b) modulo P), plus crc_b (the register's
 * conditioning cancels out). */
uint32_t slem_container_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  uint32_t p = 1u << 31, sq = 1u << 23; /* x^0, x^8 */
  for (; len_b; len_b >>= 1, sq = gf2_mul(sq, sq))
    if (len_b & 1) p = gf2_mul(p, sq);
  return gf2_mul(p, crc_a) ^ crc_b;
}

/* ---- float64 sections ---- */

static uint64_t align_up(uint64_t x) {
  return (x + SLEM_CONTAINER_ALIGN - 1) / SLEM_CONTAINER_ALIGN * SLEM_CONTAINER_ALIGN;
}

static uint64_t section_bytes(const SlemContainerSection *s) {
  return (uint64_t)s->rows * (s->cols ? s->cols : 1) * 8;
}

/* Fills in the section offsets for a payload starting at pay_off; returns the payload
 * length. */
static uint64_t place_sections(cJSON *secs, const SlemContainerSection *sec, size_t nsec,
                               uint64_t pay_off) {
  uint64_t off = pay_off;
  for (size_t i = 0; i < nsec; i++) {
    cJSON *s = cJSON_GetArrayItem(secs, (int)i);
    cJSON_ReplaceItemInObjectCaseSensitive(s, "offset", cJSON_CreateNumber((double)off));
    off = align_up(off + section_bytes(&sec[i]));
  }
  return off - pay_off;
}

int slem_container_write_sections(const char *path, cJSON *meta, const SlemContainerSection *sec,
                                  size_t nsec, SlemError *err) {
  static const unsigned char zeros[SLEM_CONTAINER_ALIGN] = {0};
  cJSON *secs = cJSON_CreateArray();
  char *text = NULL;
  SlemContainerHead head;
  uint64_t pay_off = 0, pay_len = 0;
  uint32_t json_len = 0, crc_pay = 0;
  SlemOut *out = NULL;
  FILE *fp;
  int status;
  for (size_t i = 0; i < nsec; i++) {
    cJSON *s = cJSON_CreateObject(), *shape = cJSON_CreateArray();
    cJSON_AddStringToObject(s, "name", sec[i].name);
    cJSON_AddNumberToObject(s, "offset", 0);
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sec[i].rows));
    if (sec[i].cols) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sec[i].cols));
    cJSON_AddItemToObject(s, "shape", shape);
    cJSON_AddStringToObject(s, "dtype", "<f8");
    cJSON_AddItemToArray(secs, s);
  }
  cJSON_AddItemToObject(meta, "sections", secs);
  /* the offsets are in the JSON, whose length decides them: iterate to a fixed point */
  for (int iter = 0; iter < 8; iter++) {
    uint64_t want;
    pay_len = place_sections(secs, sec, nsec, pay_off);
    free(text);
    text = cJSON_PrintUnformatted(meta);
    if (!text) {
      status = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto done;
    }
    json_len = (uint32_t)strlen(text);
    want = align_up(SLEM_CONTAINER_FIXED_LEN + json_len + 1);
    if (want == pay_off) break;
    pay_off = want;
  }
  for (size_t i = 0; i < nsec; i++) {
    uint64_t bytes = section_bytes(&sec[i]);
    crc_pay = slem_crc32(crc_pay, sec[i].data, bytes);
    if (align_up(bytes) != bytes) crc_pay = slem_crc32(crc_pay, zeros, align_up(bytes) - bytes);
  }
  head.json_len = json_len;
  head.json_off = SLEM_CONTAINER_FIXED_LEN;
  head.pay_off = pay_off;
  head.pay_len = pay_len;
  head.json_crc = slem_crc32(0, text, json_len);
  head.pay_crc = crc_pay;
  if ((status = slem_out_open(&out, path, err)) != SLEM_OK) goto done;
  fp = slem_out_file(out);
  if (slem_container_write_head(fp, &head, text, pay_off) != 0) goto ioerr;
  for (size_t i = 0; i < nsec; i++) {
    uint64_t bytes = section_bytes(&sec[i]);
    if (fwrite(sec[i].data, 1, bytes, fp) != bytes) goto ioerr;
    if (align_up(bytes) != bytes &&
        fwrite(zeros, 1, align_up(bytes) - bytes, fp) != align_up(bytes) - bytes)
      goto ioerr;
  }
  status = slem_out_commit(out, err);
  out = NULL;
  goto done;
ioerr:
  status = slem_error(err, SLEM_EIO, "%s: write: %s", slem_out_name(out), strerror(errno));
done:
  slem_out_abort(out);
  free(text);
  return status;
}

/* The bytes between the JSON header and the payload, which no checksum covers: zeros to the
 * 64-byte boundary, the first of them a newline where slem_container_write_head() wrote them
 * (a writer of its own may leave a zero there). A flipped byte there is said, naming its
 * offset, rather than taken. */
static int gap_check(const SlemContainerHead *h, const unsigned char *p, const char *path,
                     SlemError *err) {
  uint64_t at = h->json_off + h->json_len;
  for (uint64_t i = at; i < h->pay_off; i++)
    if (p[i] != 0 && !(i == at && p[i] == '\n'))
      return slem_error(err, SLEM_EFORMAT, "%s: byte %" PRIu64 ", in the padding between the "
                        "JSON header and the payload, is 0x%02x, expected 0%s: corrupt", path, i,
                        p[i], i == at ? " or a newline" : "");
  return SLEM_OK;
}

/* Descriptors given where a cache is read (-c db.slem): said as such, before the layout
 * of their payload (a block table where a cache has zeros) is taken for corruption. */
static int kind_check(const cJSON *json, SlemContainerRole role, const char *path,
                      SlemError *err) {
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
  if (role == SLEM_CONTAINER_CACHE && cJSON_IsString(kind) &&
      strcmp(kind->valuestring, "descriptors") == 0)
    return slem_error(err, SLEM_EFORMAT, "%s: descriptors (slem-encode's output), not a cache: "
                      "give the cache that slem-negstats wrote", path);
  return SLEM_OK;
}

int slem_container_load(void **map, size_t *len, SlemContainerHead *h, cJSON **json,
                        const char *path, SlemContainerRole role, SlemError *err) {
  struct stat sb;
  unsigned char *p = NULL;
  size_t n, got = 0;
  ssize_t r = 1;
  char extra;
  int st, fd;
  *map = NULL;
  *len = 0;
  *json = NULL;
  /* O_NONBLOCK: a FIFO named as the file must not block the tool in open() */
  if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
    return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(errno));
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = slem_error(err, SLEM_EIO, "%s: not a regular file", path);
    goto done;
  }
  /* a size of 0 may be a pseudo-file's (/proc, some FUSE file systems) that holds bytes:
   * such a file is read once, as a pipe is, and a container is read by its size */
  if (sb.st_size == 0 && (r = read(fd, &extra, 1)) > 0) {
    st = slem_error(err, SLEM_EIO, "%s: its size says 0 bytes but it holds some (a file of "
                    "/proc, or of a file system that does not know sizes ahead): copy it to "
                    "a regular file and give that", path);
    goto done;
  }
  r = 1;
  if (sb.st_size < SLEM_CONTAINER_FIXED_LEN) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %s (%lld bytes): %s", path,
                    sb.st_size ? "too short" : "empty", (long long)sb.st_size,
                    roles[role].short_file);
    goto done;
  }
  /* Read into private memory, not mapped: a mapping of a file that another process
   * truncates in place (cp over it, truncate) kills the reader with SIGBUS at the first
   * page past the new end. Aligned as in the file; a large one on huge pages (mem.h),
   * which fault once per 2 MiB. */
  n = (size_t)sb.st_size;
  if ((uint64_t)sb.st_size > SIZE_MAX ||
      (n >= ((size_t)2 << 20) ? !(p = slem_mem_alloc_large(n))
                              : posix_memalign((void **)&p, SLEM_CONTAINER_ALIGN, n) != 0)) {
    p = NULL;
    st = slem_error(err, SLEM_ENOMEM, "%s: out of memory for a %s of %lld bytes", path,
                    roles[role].noun, (long long)sb.st_size);
    goto done;
  }
  while (got < n) {
    r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (r > 0)
    while ((r = read(fd, &extra, 1)) < 0 && errno == EINTR) {}
  if (r < 0) {
    st = slem_error(err, SLEM_EIO, "%s: read: %s", path, strerror(errno));
    goto done;
  }
  if (got != n || r != 0) {
    st = slem_error(err, SLEM_EFORMAT, "%s: the file changed size while it was read (%zu bytes "
                    "expected, %s): it is being rewritten in place; replace a %s by renaming a "
                    "new file over it", path, n, r != 0 ? "more found" : "fewer found",
                    roles[role].noun);
    goto done;
  }
  if ((st = slem_container_head_unpack(h, p, n, role, (int64_t)n, path, err)) != SLEM_OK ||
      (st = slem_container_json_parse(json, h, (const char *)p + h->json_off, path, err)) !=
          SLEM_OK ||
      (st = kind_check(*json, role, path, err)) != SLEM_OK ||
      (st = gap_check(h, p, path, err)) != SLEM_OK ||
      (st = slem_container_payload_check(h, p + h->pay_off, path, err)) != SLEM_OK)
    goto done;
  *map = p;
  *len = n;
  p = NULL;
done:
  close(fd);
  free(p);
  if (st != SLEM_OK) {
    cJSON_Delete(*json);
    *json = NULL;
  }
  return st;
}

/* Reads a non-negative integer member at most max that is exactly representable. */
static int json_uint(const cJSON *obj, const char *key, uint64_t max, uint64_t *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  double v;
  if (!cJSON_IsNumber(it)) return -1;
  v = it->valuedouble;
  if (!(v >= 0) || v > (double)max || v != floor(v)) return -1;
  *out = (uint64_t)v;
  return 0;
}

int slem_container_section_find(uint64_t *off, const cJSON *sections, const char *name, int ndim,
                                const uint64_t *want, uint64_t pay_off, uint64_t pay_len,
                                const char *what, const char *path, SlemError *err) {
  const cJSON *s;
  cJSON_ArrayForEach(s, sections) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s, "name");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(s, "shape");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(s, "dtype");
    uint64_t bytes, dims[2] = {0, 0};
    if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name) != 0) continue;
    if (!cJSON_IsString(dtype) || strcmp(dtype->valuestring, "<f8") != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': dtype is not <f8", path, name);
    if (json_uint(s, "offset", UINT64_MAX / 2, off) != 0)
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': bad offset", path, name);
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) != ndim)
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': bad shape", path, name);
    for (int i = 0; i < ndim; i++) {
      const cJSON *it = cJSON_GetArrayItem(shape, i);
      if (!cJSON_IsNumber(it) || it->valuedouble != (double)want[i])
        return slem_error(err, SLEM_EFORMAT, "%s: section '%s': shape disagrees with %s", path,
                          name, what);
      dims[i] = (uint64_t)it->valuedouble;
    }
    /* sections of n rows (kernel negatives) can claim sizes that overflow */
    if (ndim == 2 && dims[0] > UINT64_MAX / 8 / (dims[1] ? dims[1] : 1))
      return slem_error(err, SLEM_EFORMAT, "%s: section '%s': shape too large", path, name);
    bytes = dims[0] * (ndim == 2 ? dims[1] : 1) * 8;
    if (*off % SLEM_CONTAINER_ALIGN != 0 || *off < pay_off || bytes > pay_len ||
        *off - pay_off > pay_len - bytes)
      return slem_error(err, SLEM_EFORMAT,
                        "%s: section '%s' (offset %" PRIu64 ", %" PRIu64 " bytes) lies outside "
                        "the payload", path, name, *off, bytes);
    return SLEM_OK;
  }
  return slem_error(err, SLEM_EFORMAT, "%s: section '%s' is missing", path, name);
}

int slem_container_section_has(const cJSON *sections, const char *name) {
  const cJSON *s;
  cJSON_ArrayForEach(s, sections) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s, "name");
    if (cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0) return 1;
  }
  return 0;
}

/* ---- the block table ---- */

static int blocks_push(SlemContainerBlocks *b, SlemError *err) {
  if (b->count == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 1024;
    uint32_t *t = realloc(b->crc, cap * sizeof *t);
    if (!t) return slem_error(err, SLEM_ENOMEM, "out of memory");
    b->crc = t;
    b->cap = cap;
  }
  b->crc[b->count++] = b->cur;
  b->cur = 0;
  b->fill = 0;
  return SLEM_OK;
}

int slem_container_blocks_feed(SlemContainerBlocks *b, size_t row_bytes, const void *x,
                               size_t bytes, SlemError *err) {
  const unsigned char *p = x;
  uint64_t block = (uint64_t)SLEM_CONTAINER_BLOCK_ROWS * row_bytes;
  int st = SLEM_OK;
  while (bytes > 0 && st == SLEM_OK) {
    size_t take = block - b->fill < bytes ? (size_t)(block - b->fill) : bytes;
    b->cur = slem_crc32(b->cur, p, take);
    b->fill += take;
    p += take;
    bytes -= take;
    if (b->fill == block) st = blocks_push(b, err);
  }
  return st;
}

int slem_container_blocks_end(SlemContainerBlocks *b, size_t row_bytes, uint64_t n,
                              uint64_t *rows, SlemError *err) {
  uint64_t bytes = (uint64_t)SLEM_CONTAINER_BLOCK_ROWS * row_bytes, total = n * row_bytes;
  int st = b->fill > 0 ? blocks_push(b, err) : SLEM_OK;
  *rows = SLEM_CONTAINER_BLOCK_ROWS;
  while (st == SLEM_OK && b->count > SLEM_CONTAINER_TABLE_MAX) {
    size_t k = 0;
    for (size_t i = 0; i < b->count; i += 2) {
      if (i + 1 == b->count) {
        b->crc[k++] = b->crc[i];
      } else {
        uint64_t len = i + 2 == b->count ? total - (i + 1) * bytes : bytes;
        b->crc[k++] = slem_container_crc32_combine(b->crc[i], b->crc[i + 1], len);
      }
    }
    b->count = k;
    *rows *= 2;
    bytes *= 2;
  }
  return st;
}

void slem_container_blocks_json(cJSON *meta, const SlemContainerBlocks *b, uint64_t rows,
                                uint32_t tail_crc) {
  cJSON *o = cJSON_AddObjectToObject(meta, "blocks");
  if (!o) return;
  cJSON_AddNumberToObject(o, "rows", (double)rows);
  cJSON_AddNumberToObject(o, "count", (double)b->count);
  cJSON_AddNumberToObject(o, "offset", SLEM_CONTAINER_TABLE_OFF);
  cJSON_AddNumberToObject(o, "crc32", slem_crc32(0, b->crc, b->count * 4));
  cJSON_AddNumberToObject(o, "tail_crc32", tail_crc);
}

void slem_container_blocks_free(SlemContainerBlocks *b) {
  free(b->crc);
  memset(b, 0, sizeof *b);
}

/* Reads a non-negative integer member at most max that is exactly representable. */
static int json_u64(const cJSON *obj, const char *key, uint64_t max, uint64_t *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || it->valuedouble > (double)max ||
      it->valuedouble != (double)(uint64_t)it->valuedouble)
    return -1;
  *out = (uint64_t)it->valuedouble;
  return 0;
}

int slem_container_table_parse(SlemContainerTable *t, const cJSON *json, uint64_t n,
                               uint64_t json_end, uint64_t pay_off, const char *name,
                               SlemError *err) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(json, "blocks");
  uint64_t rows, count, off, crc, tail;
  t->rows = 0;
  if (!b) return SLEM_OK;
  if (!cJSON_IsObject(b) || json_u64(b, "rows", (uint64_t)1 << 52, &rows) || rows == 0 ||
      json_u64(b, "count", (uint64_t)1 << 52, &count) || count != (n + rows - 1) / rows ||
      json_u64(b, "offset", pay_off, &off) || off % 4 != 0 || off < json_end ||
      count > (pay_off - off) / 4 || json_u64(b, "crc32", 0xffffffffu, &crc) ||
      json_u64(b, "tail_crc32", 0xffffffffu, &tail))
    return slem_error(err, SLEM_EFORMAT, "%s: the block table in the JSON header is inconsistent",
                      name);
  t->rows = rows;
  t->count = count;
  t->off = off;
  t->crc = (uint32_t)crc;
  t->tail_crc = (uint32_t)tail;
  return SLEM_OK;
}

int slem_container_table_load(SlemContainerTable *t, const unsigned char *p, const char *name,
                              SlemError *err) {
  size_t bytes = (size_t)t->count * 4;
  if (slem_crc32(0, p, bytes) != t->crc)
    return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the block table: corrupt",
                      name);
  if (!(t->blk = malloc(bytes ? bytes : 1))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  memcpy(t->blk, p, bytes);
  return SLEM_OK;
}

int slem_container_table_verify(const SlemContainerTable *t, uint64_t n, size_t rec,
                                uint64_t first, const unsigned char *raw, uint64_t nrows,
                                const char *name, SlemError *err) {
  uint64_t rows = t->rows;
  for (uint64_t row = first; row < first + nrows;) {
    uint64_t b = row / rows, end = (b + 1) * rows < n ? (b + 1) * rows : n;
    if (slem_crc32(0, raw + (row - first) * rec, (size_t)((end - row) * rec)) != t->blk[b])
      return slem_error(err, SLEM_EFORMAT, "%s: checksum mismatch in the rows: records %" PRIu64
                        " to %" PRIu64 " (block %" PRIu64 " of %" PRIu64 ") are corrupt",
                        name, row + 1, end, b + 1, t->count);
    row = end;
  }
  return SLEM_OK;
}

void slem_container_table_free(SlemContainerTable *t) {
  free(t->blk);
  t->blk = NULL;
}

/* ---- the ids section ---- */

void slem_container_ids_json(cJSON *sections, uint64_t offset, uint64_t bytes, uint64_t count) {
  cJSON *s = cJSON_CreateObject();
  if (!s) return;
  cJSON_AddStringToObject(s, "name", "ids");
  cJSON_AddNumberToObject(s, "offset", (double)offset);
  cJSON_AddNumberToObject(s, "bytes", (double)bytes);
  cJSON_AddNumberToObject(s, "count", (double)count);
  cJSON_AddItemToArray(sections, s);
}

int slem_container_ids_find(const cJSON *sections, uint64_t pay_off, uint64_t pay_len,
                            uint64_t rows_end, uint64_t n, uint64_t *ids_off, uint64_t *ids_bytes,
                            const char *name, SlemError *err) {
  const cJSON *s;
  *ids_off = *ids_bytes = 0;
  cJSON_ArrayForEach(s, sections) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(s, "name");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(s, "offset");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(s, "bytes");
    const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(s, "count");
    if (!cJSON_IsString(nm) || strcmp(nm->valuestring, "ids") != 0) continue;
    if (!cJSON_IsNumber(off) || !cJSON_IsNumber(by) || !cJSON_IsNumber(cnt) ||
        off->valuedouble != (double)(pay_off + (rows_end + 63) / 64 * 64) ||
        by->valuedouble < (double)n || by->valuedouble > 1e15 || cnt->valuedouble != (double)n ||
        (uint64_t)off->valuedouble - pay_off + (uint64_t)by->valuedouble != pay_len)
      return slem_error(err, SLEM_EFORMAT, "%s: the ids section is inconsistent", name);
    *ids_off = (uint64_t)off->valuedouble;
    *ids_bytes = (uint64_t)by->valuedouble;
  }
  if (!*ids_off && pay_len != rows_end)
    return slem_error(err, SLEM_EFORMAT, "%s: size disagrees with its header: truncated or "
                      "corrupt", name);
  return SLEM_OK;
}
