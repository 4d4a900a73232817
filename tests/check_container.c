/* The .slem file layer (lib/io/container.[ch]): the fixed header packed and read back, every
 * refusal in the words of each role, the CRC-32 combination behind the doubled blocks of a
 * long table, the table's verification, the ids section, the fingerprint. */
#include "testutil.h"

#include "../lib/io/container.h"
#include "../lib/io/crc32.h"

static void head_example(SlemContainerHead *h) {
  h->json_len = 100;
  h->json_off = 64;
  h->pay_off = 192;
  h->pay_len = 4096;
  h->json_crc = 0x12345678u;
  h->pay_crc = 0x9abcdef0u;
}

static void expect_refusal(const unsigned char *p, size_t n, SlemContainerRole role, int64_t size,
                           const char *want) {
  SlemContainerHead h;
  SlemError err = {0};
  ck_assert_int_eq(slem_container_head_unpack(&h, p, n, role, size, "f.slem", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, want) != NULL, "'%s' lacks '%s'", err.msg, want);
  ck_assert_msg(strncmp(err.msg, "f.slem: ", 8) == 0, "%s", err.msg);
}

/* p with its header checksum made right again after a change */
static void reseal(unsigned char *p) {
  uint32_t v = slem_crc32(0, p, 60);
  memcpy(p + 60, &v, 4);
}

START_TEST(head_round_trip_and_refusals) {
  SlemContainerHead h, back;
  SlemError err = {0};
  unsigned char p[64], q[64];
  uint32_t v;
  head_example(&h);
  slem_container_head_pack(p, &h);
  ck_assert(slem_container_sniff(p, 64));
  ck_assert(!slem_container_sniff(p, 7));
  ck_assert_int_eq(slem_container_head_unpack(&back, p, 64, SLEM_CONTAINER_CACHE, 192 + 4096,
                                              "f.slem", &err), SLEM_OK);
  ck_assert_int_eq(slem_container_head_unpack(&back, p, 64, SLEM_CONTAINER_DESCRIPTORS, -1,
                                              "f.slem", &err), SLEM_OK);
  ck_assert_uint_eq(back.json_len, 100);
  ck_assert_uint_eq(back.pay_off, 192);
  ck_assert_uint_eq(back.pay_len, 4096);
  ck_assert_uint_eq(back.json_crc, 0x12345678u);
  ck_assert_uint_eq(back.pay_crc, 0x9abcdef0u);
  for (int i = 56; i < 60; i++) ck_assert_int_eq(p[i], 0); /* reserved */

  expect_refusal(p, 63, SLEM_CONTAINER_DESCRIPTORS, -1, "not a slem container, or truncated");
  memcpy(q, p, 64);
  q[1] = 'X';
  expect_refusal(q, 64, SLEM_CONTAINER_CACHE, -1, "not a slem cache (bad magic)");
  memcpy(q, p, 64);
  v = 0x04030201u;
  memcpy(q + 12, &v, 4);
  expect_refusal(q, 64, SLEM_CONTAINER_CACHE, -1, "other byte order; rebuild it with slem-negstats");
  expect_refusal(q, 64, SLEM_CONTAINER_DESCRIPTORS, -1, "written with another byte order");
  memcpy(q, p, 64);
  v = 2;
  memcpy(q + 8, &v, 4);
  expect_refusal(q, 64, SLEM_CONTAINER_CACHE, -1,
                 "cache format version 2; this slem reads version 1: rebuild it with slem-negstats");
  expect_refusal(q, 64, SLEM_CONTAINER_DESCRIPTORS, -1, ": format version 2; this slem reads version 1");
  memcpy(q, p, 64);
  q[45] ^= 1;
  expect_refusal(q, 64, SLEM_CONTAINER_DESCRIPTORS, -1, "checksum mismatch in the fixed header");
  /* offsets that cannot be: the JSON past the payload, an unaligned payload */
  memcpy(q, p, 64);
  v = 200;
  memcpy(q + 20, &v, 4);
  reseal(q);
  expect_refusal(q, 64, SLEM_CONTAINER_DESCRIPTORS, -1, "the header's offsets are inconsistent");
  expect_refusal(q, 64, SLEM_CONTAINER_CACHE, 192 + 4096, "header offsets disagree with the file size 4288");
  memcpy(q, p, 64);
  q[32] = 193;
  reseal(q);
  expect_refusal(q, 64, SLEM_CONTAINER_DESCRIPTORS, -1, "the header's offsets are inconsistent");
  /* a file shorter or longer than the header says */
  expect_refusal(p, 64, SLEM_CONTAINER_DESCRIPTORS, 192 + 4095,
                 "size disagrees with its header: truncated or corrupt");
  expect_refusal(p, 64, SLEM_CONTAINER_CACHE, 192 + 4097, "disagree with the file size 4289");
}
END_TEST

START_TEST(json_and_payload_checksums) {
  const char *text = "{\"kind\":\"linear\"}", *bad = "[1,2]";
  unsigned char pay[100];
  SlemContainerHead h = {0};
  SlemError err = {0};
  cJSON *json = NULL;
  for (int i = 0; i < 100; i++) pay[i] = (unsigned char)i;
  h.json_len = (uint32_t)strlen(text);
  h.json_crc = slem_crc32(0, text, h.json_len);
  h.pay_len = 100;
  h.pay_crc = slem_crc32(0, pay, 100);
  ck_assert_int_eq(slem_container_json_parse(&json, &h, text, "f", &err), SLEM_OK);
  ck_assert_str_eq(cJSON_GetObjectItem(json, "kind")->valuestring, "linear");
  cJSON_Delete(json);
  ck_assert_int_eq(slem_container_payload_check(&h, pay, "f", &err), SLEM_OK);
  pay[99] ^= 1;
  ck_assert_int_eq(slem_container_payload_check(&h, pay, "f", &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "f: checksum mismatch in the payload: corrupt");
  h.json_crc ^= 1;
  ck_assert_int_eq(slem_container_json_parse(&json, &h, text, "f", &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "f: checksum mismatch in the JSON header");
  ck_assert_ptr_null(json);
  h.json_len = (uint32_t)strlen(bad); /* valid JSON, but not an object */
  h.json_crc = slem_crc32(0, bad, h.json_len);
  ck_assert_int_eq(slem_container_json_parse(&json, &h, bad, "f", &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "f: the JSON header does not parse");
}
END_TEST

/* FNV-1a's step over the basis 1469598103934665603 (one digit short of the published
 * one, as the first release wrote it: the fingerprints of existing files stay valid). */
START_TEST(fingerprint_is_fnv1a) {
  char fp[17];
  slem_container_fingerprint(fp, "", 0);
  ck_assert_str_eq(fp, "14650fb0739d0383");
  slem_container_fingerprint(fp, "a", 1);
  ck_assert_str_eq(fp, "44bd8ad473cd9906");
}
END_TEST

START_TEST(crc32_combine_equals_one_pass) {
  unsigned char buf[5000];
  tu_seed(3);
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)tu_next();
  for (size_t cut = 0; cut <= sizeof buf; cut += 397) {
    uint32_t a = slem_crc32(0, buf, cut), b = slem_crc32(0, buf + cut, sizeof buf - cut);
    ck_assert_uint_eq(slem_container_crc32_combine(a, b, sizeof buf - cut),
                      slem_crc32(0, buf, sizeof buf));
  }
}
END_TEST

/* More rows than the table holds at 1024 rows per block: the blocks double (their CRCs
 * combined), and each is the CRC-32 of its rows; a flipped byte is found in its block. */
START_TEST(long_table_doubles_its_blocks) {
  const size_t row = 4;
  const uint64_t n = (uint64_t)SLEM_CONTAINER_TABLE_MAX * SLEM_CONTAINER_BLOCK_ROWS * 2 + 777;
  unsigned char *rows = malloc(n * row);
  SlemContainerBlocks b = {0};
  SlemContainerTable t = {0};
  SlemError err = {0};
  uint64_t per, feed = 0;
  cJSON *meta = cJSON_CreateObject(), *none = cJSON_CreateObject();
  ck_assert_ptr_nonnull(rows);
  tu_seed(5);
  for (uint64_t i = 0; i < n * row; i++) rows[i] = (unsigned char)tu_next();
  while (feed < n * row) { /* in uneven pieces, as writes come */
    size_t k = (size_t)(n * row - feed < 123457 ? n * row - feed : 123457);
    ck_assert_int_eq(slem_container_blocks_feed(&b, row, rows + feed, k, &err), SLEM_OK);
    feed += k;
  }
  ck_assert_int_eq(slem_container_blocks_end(&b, row, n, &per, &err), SLEM_OK);
  ck_assert_uint_eq(per, 4 * SLEM_CONTAINER_BLOCK_ROWS);
  ck_assert_uint_eq(b.count, (n + per - 1) / per);
  ck_assert_uint_le(b.count, SLEM_CONTAINER_TABLE_MAX);
  for (size_t i = 0; i < b.count; i++) {
    uint64_t first = i * per, end = first + per < n ? first + per : n;
    ck_assert_uint_eq(b.crc[i], slem_crc32(0, rows + first * row, (size_t)((end - first) * row)));
  }
  /* read back through the JSON member and the table's bytes */
  slem_container_blocks_json(meta, &b, per, 0xabcu);
  ck_assert_int_eq(slem_container_table_parse(&t, meta, n, 1000, SLEM_CONTAINER_PAY_OFF, "f", &err),
                   SLEM_OK);
  ck_assert_uint_eq(t.rows, per);
  ck_assert_uint_eq(t.off, SLEM_CONTAINER_TABLE_OFF);
  ck_assert_uint_eq(t.tail_crc, 0xabcu);
  ck_assert_int_eq(slem_container_table_parse(&t, meta, n + per, 1000, SLEM_CONTAINER_PAY_OFF, "f",
                                              &err), SLEM_EFORMAT);
  ck_assert_int_eq(slem_container_table_parse(&t, meta, n, 1000, SLEM_CONTAINER_PAY_OFF, "f", &err),
                   SLEM_OK);
  ck_assert_int_eq(slem_container_table_load(&t, (const unsigned char *)b.crc, "f", &err), SLEM_OK);
  ck_assert_int_eq(slem_container_table_verify(&t, n, row, 0, rows, n, "f", &err), SLEM_OK);
  ck_assert_int_eq(slem_container_table_verify(&t, n, row, per, rows + per * row, n - per, "f",
                                               &err), SLEM_OK);
  rows[(per + 5) * row] ^= 1;
  ck_assert_int_eq(slem_container_table_verify(&t, n, row, 0, rows, n, "f", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "records 4097 to 8192 (block 2 of ") != NULL, "%s", err.msg);
  slem_container_table_free(&t);
  /* a table whose checksum is not its own */
  b.crc[0] ^= 1;
  ck_assert_int_eq(slem_container_table_load(&t, (const unsigned char *)b.crc, "f", &err),
                   SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "f: checksum mismatch in the block table: corrupt");
  /* none: a container of the first release */
  ck_assert_int_eq(slem_container_table_parse(&t, none, n, 1000,
                                              SLEM_CONTAINER_PAY_OFF, "f", &err), SLEM_OK);
  ck_assert_uint_eq(t.rows, 0);
  cJSON_Delete(none);
  cJSON_Delete(meta);
  slem_container_blocks_free(&b);
  free(rows);
}
END_TEST

START_TEST(ids_section) {
  cJSON *secs = cJSON_CreateArray();
  SlemError err = {0};
  uint64_t off, bytes;
  /* 10 rows of 100 bytes: the ids at the next multiple of 64 after them, 30 bytes */
  slem_container_ids_json(secs, 65536 + 1024, 30, 10);
  ck_assert_int_eq(slem_container_ids_find(secs, 65536, 1024 + 30, 1000, 10, &off, &bytes, "f",
                                           &err), SLEM_OK);
  ck_assert_uint_eq(off, 65536 + 1024);
  ck_assert_uint_eq(bytes, 30);
  ck_assert_int_eq(slem_container_ids_find(secs, 65536, 1024 + 31, 1000, 10, &off, &bytes, "f",
                                           &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "f: the ids section is inconsistent");
  ck_assert_int_eq(slem_container_ids_find(secs, 65536, 1024 + 30, 1000, 11, &off, &bytes, "f",
                                           &err), SLEM_EFORMAT);
  cJSON_Delete(secs);
  secs = cJSON_CreateArray();
  ck_assert_int_eq(slem_container_ids_find(secs, 65536, 1000, 1000, 10, &off, &bytes, "f", &err),
                   SLEM_OK);
  ck_assert_uint_eq(off, 0);
  ck_assert_int_eq(slem_container_ids_find(secs, 65536, 1001, 1000, 10, &off, &bytes, "f", &err),
                   SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "f: size disagrees with its header: truncated or corrupt");
  cJSON_Delete(secs);
}
END_TEST

/* The header as written: the bytes of a file, the zeros up to the payload. */
START_TEST(write_head_lays_out_the_bytes) {
  char *path = tu_path("head.bin");
  const char *text = "{\"a\":1}";
  SlemContainerHead h = {7, 64, 128, 0, 0, 0}, back;
  SlemError err = {0};
  unsigned char buf[256];
  FILE *fp = fopen(path, "wb");
  size_t n;
  h.json_crc = slem_crc32(0, text, 7);
  ck_assert_ptr_nonnull(fp);
  ck_assert_int_eq(slem_container_write_head(fp, &h, text, 128), 0);
  ck_assert_int_eq(fclose(fp), 0);
  fp = fopen(path, "rb");
  n = fread(buf, 1, sizeof buf, fp);
  fclose(fp);
  ck_assert_uint_eq(n, 128);
  ck_assert_int_eq(slem_container_head_unpack(&back, buf, n, SLEM_CONTAINER_CACHE, 128, path, &err),
                   SLEM_OK);
  ck_assert_int_eq(memcmp(buf + 64, text, 7), 0);
  ck_assert_int_eq(buf[71], '\n');
  for (size_t i = 72; i < 128; i++) ck_assert_int_eq(buf[i], 0);
  free(path);
}
END_TEST

/* Sections written and loaded back: each at its aligned offset, found by name and shape;
 * a flipped payload byte, a short file and a FIFO are refused. */
START_TEST(sections_round_trip) {
  char *path = tu_path("sec.slem"), *missing = tu_path("nonexistent.slem");
  double mu[3] = {1, 2, 3}, a[6] = {1, 2, 3, 4, 5, 6};
  SlemContainerSection sec[2] = {{"mu", mu, 3, 0}, {"a", a, 2, 3}};
  cJSON *meta = cJSON_CreateObject(), *json = NULL;
  SlemContainerHead h;
  SlemError err = {0};
  void *map = NULL;
  size_t len = 0;
  uint64_t off, want1[1] = {3}, want2[2] = {2, 3}, bad[2] = {3, 2};
  const cJSON *secs;
  FILE *fp;
  cJSON_AddStringToObject(meta, "kind", "test");
  ck_assert_int_eq(slem_container_write_sections(path, meta, sec, 2, &err), SLEM_OK);
  cJSON_Delete(meta);
  ck_assert_int_eq(slem_container_load(&map, &len, &h, &json, path, SLEM_CONTAINER_CACHE, &err),
                   SLEM_OK);
  ck_assert_uint_eq(h.pay_off % 64, 0);
  ck_assert_uint_eq(h.pay_len, 64 + 64); /* each section padded to 64 bytes, the last too */
  ck_assert_uint_eq(len, h.pay_off + h.pay_len);
  secs = cJSON_GetObjectItem(json, "sections");
  ck_assert(slem_container_section_has(secs, "a"));
  ck_assert(!slem_container_section_has(secs, "b"));
  ck_assert_int_eq(slem_container_section_find(&off, secs, "mu", 1, want1, h.pay_off, h.pay_len,
                                               "d = 3", path, &err), SLEM_OK);
  ck_assert_int_eq(memcmp((char *)map + off, mu, sizeof mu), 0);
  ck_assert_int_eq(slem_container_section_find(&off, secs, "a", 2, want2, h.pay_off, h.pay_len,
                                               "d = 3", path, &err), SLEM_OK);
  ck_assert_uint_eq(off, h.pay_off + 64);
  ck_assert_int_eq(memcmp((char *)map + off, a, sizeof a), 0);
  ck_assert_int_eq(slem_container_section_find(&off, secs, "a", 2, bad, h.pay_off, h.pay_len,
                                               "d = 3", path, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "section 'a': shape disagrees with d = 3"), "%s", err.msg);
  ck_assert_int_eq(slem_container_section_find(&off, secs, "b", 1, want1, h.pay_off, h.pay_len,
                                               "d = 3", path, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "section 'b' is missing"), "%s", err.msg);
  /* corrupt, short */
  ((unsigned char *)map)[len - 1] ^= 1;
  tu_write_bytes(path, map, len);
  cJSON_Delete(json);
  free(map);
  ck_assert_int_eq(slem_container_load(&map, &len, &h, &json, path, SLEM_CONTAINER_CACHE, &err),
                   SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "checksum mismatch in the payload"), "%s", err.msg);
  ck_assert_ptr_null(map);
  ck_assert_ptr_null(json);
  fp = fopen(path, "wb");
  fputs("short", fp);
  fclose(fp);
  ck_assert_int_eq(slem_container_load(&map, &len, &h, &json, path, SLEM_CONTAINER_CACHE, &err),
                   SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "too short (5 bytes): not a slem cache, or truncated"), "%s",
                err.msg);
  ck_assert_int_eq(slem_container_load(&map, &len, &h, &json, missing, SLEM_CONTAINER_CACHE,
                                       &err), SLEM_EIO);
  free(path);
  free(missing);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("container");
  TCase *tc = tcase_create("container");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, head_round_trip_and_refusals);
  tcase_add_test(tc, json_and_payload_checksums);
  tcase_add_test(tc, fingerprint_is_fnv1a);
  tcase_add_test(tc, crc32_combine_equals_one_pass);
  tcase_add_test(tc, long_table_doubles_its_blocks);
  tcase_add_test(tc, ids_section);
  tcase_add_test(tc, write_head_lays_out_the_bytes);
  tcase_add_test(tc, sections_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
