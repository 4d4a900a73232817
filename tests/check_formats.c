/* The table of vector formats: names, aliases and extensions; each format against files
 * numpy wrote (testdata/formats, scripts/gen-formats.py); Fortran order from files and
 * pipes; the big-ann-benchmarks formats; float16 and int8 output; bad inputs. */
#include "testutil.h"

#include "../lib/io/crc32.h"
#include "../lib/io/ids.h"
#include <cjson/cJSON.h>
#include "../lib/formats/vecfmt.h"
#include "../lib/formats/vecs.h"
#include "../lib/formats/prefetch.h"
#include <hdf5.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static long tu_file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

START_TEST(names_come_from_one_table) {
  /* every canonical name in the list parses back to a format that has that name, and
   * selects the format as an extension too */
  char list[256], *save = NULL;
  size_t count = 0;
  SlemFormat f;
  snprintf(list, sizeof list, "%s", slem_format_names());
  ck_assert_str_eq(list, "fvecs, bvecs, ivecs, npy, text, fbin, u8bin, i8bin, ibin, slem, hdf5");
  for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    char path[64];
    ck_assert_int_eq(slem_format_parse(&f, tok), SLEM_OK);
    ck_assert_int_ne(f, SLEM_FMT_AUTO);
    ck_assert_str_eq(slem_format_name(f), tok);
    snprintf(path, sizeof path, "dir.x/file.%s", tok);
    ck_assert_int_eq(slem_format_from_path(path), f);
    count++;
  }
  /* SLEM_FMT_FOREIGN (npz, .mat) is not listed, nor SLEM_FMT_MEM (the caller's arrays) */
  ck_assert_uint_eq(count, SLEM_FMT_END - 3);
  /* an array is reached by slem_vecreader_open_array() only: by no name nor extension */
  ck_assert_int_eq(slem_format_parse(&f, "array"), SLEM_EINVAL);
  ck_assert_int_eq(slem_format_from_path("x.array"), SLEM_FMT_AUTO);
  for (int i = 1; i < SLEM_FMT_END; i++) ck_assert_str_ne(slem_format_name((SlemFormat)i), "auto");
  /* aliases, auto, unknown names, paths without an extension */
  static const char *text_aliases[] = {"txt", "csv", "tsv"};
  for (size_t i = 0; i < 3; i++) {
    ck_assert_int_eq(slem_format_parse(&f, text_aliases[i]), SLEM_OK);
    ck_assert_int_eq(f, SLEM_FMT_TEXT);
  }
  ck_assert_int_eq(slem_format_parse(&f, "auto"), SLEM_OK);
  ck_assert_int_eq(f, SLEM_FMT_AUTO);
  ck_assert_int_eq(slem_format_parse(&f, "xml"), SLEM_EINVAL);
  ck_assert_int_eq(slem_format_parse(&f, "FVECS"), SLEM_EINVAL);
  ck_assert_int_eq(slem_format_from_path("a.dir/noext"), SLEM_FMT_AUTO);
  ck_assert_int_eq(slem_format_from_path("x.xml"), SLEM_FMT_AUTO);
  ck_assert_int_eq(slem_format_from_path(NULL), SLEM_FMT_AUTO);
  ck_assert_str_eq(slem_format_name(SLEM_FMT_AUTO), "auto");
}
END_TEST

#define FD "testdata/formats/"

/* Reads path whole (in blocks of block rows, as double or float) into a new array of
 * *n x *d doubles. Fails the test on any error. */
static double *read_whole(const char *path, SlemFormat fmt, size_t block, int f32, size_t *n,
                          size_t *d) {
  SlemVecReader *r = NULL;
  SlemError err;
  double *all = NULL;
  size_t got, cap = 0;
  ck_assert_msg(slem_vecreader_open(&r, path, fmt, &err) == SLEM_OK, "%s: %s", path, err.msg);
  *d = slem_vecreader_dim(r);
  *n = 0;
  for (;;) {
    float fb[64 * 16];
    double db[64 * 16];
    ck_assert_uint_le(block * *d, 64 * 16);
    int st = f32 ? slem_vecreader_read_f32(r, fb, block, &got, &err)
                 : slem_vecreader_read(r, db, block, &got, &err);
    ck_assert_msg(st == SLEM_OK, "%s", err.msg);
    if (!got) break;
    if ((*n + got) * *d > cap) {
      cap = 2 * (*n + got) * *d;
      all = realloc(all, cap * sizeof *all);
    }
    for (size_t i = 0; i < got * *d; i++) all[*n * *d + i] = f32 ? fb[i] : db[i];
    *n += got;
  }
  ck_assert_uint_eq(slem_vecreader_done(r), *n);
  if (slem_vecreader_count(r) >= 0) ck_assert_int_eq(slem_vecreader_count(r), (int64_t)*n);
  slem_vecreader_free(r);
  return all;
}

/* path holds exactly the values of the numpy-made FD name.expect.txt, read both ways. */
static void expect_values(const char *path, SlemFormat fmt, SlemFormat want_fmt, const char *name) {
  char ep[256];
  size_t n, d, en, ed;
  double *want, *got;
  SlemVecReader *r = NULL;
  SlemError err;
  snprintf(ep, sizeof ep, FD "%s.expect.txt", name);
  want = read_whole(ep, SLEM_FMT_TEXT, 5, 0, &en, &ed);
  ck_assert_msg(slem_vecreader_open(&r, path, fmt, &err) == SLEM_OK, "%s: %s", path, err.msg);
  ck_assert_int_eq(slem_vecreader_format(r), want_fmt);
  slem_vecreader_free(r);
  for (int f32 = 0; f32 < 2; f32++) {
    got = read_whole(path, fmt, 2, f32, &n, &d);
    ck_assert_msg(n == en && d == ed, "%s: %zu x %zu, expected %zu x %zu", path, n, d, en, ed);
    for (size_t i = 0; i < n * d; i++)
      ck_assert_msg(f32 ? (float)got[i] == (float)want[i] : got[i] == want[i],
                    "%s (%s): value %zu: %.17g, expected %.17g", path, f32 ? "float" : "double",
                    i, got[i], want[i]);
    free(got);
  }
  free(want);
}

START_TEST(numpy_golden_files) {
  static const struct { const char *file, *expect; SlemFormat fmt; } g[] = {
      {"f4.npy", "float", SLEM_FMT_NPY},          {"f8.npy", "float", SLEM_FMT_NPY},
      {"f4be.npy", "float", SLEM_FMT_NPY},        {"f8be.npy", "float", SLEM_FMT_NPY},
      {"f4fortran.npy", "float", SLEM_FMT_NPY},   {"f8befortran.npy", "float", SLEM_FMT_NPY},
      {"float.fbin", "float", SLEM_FMT_FBIN},     {"f2.npy", "f2", SLEM_FMT_NPY},
      {"f2be.npy", "f2", SLEM_FMT_NPY},           {"i1.npy", "i1", SLEM_FMT_NPY},
      {"i1.i8bin", "i1", SLEM_FMT_I8BIN},         {"i2.npy", "i2", SLEM_FMT_NPY},
      {"i2be.npy", "i2", SLEM_FMT_NPY},           {"i4.npy", "i4", SLEM_FMT_NPY},
      {"i4be.npy", "i4", SLEM_FMT_NPY},           {"i4fortran.npy", "i4", SLEM_FMT_NPY},
      {"i4.ibin", "i4", SLEM_FMT_IBIN},           {"u1.npy", "u1", SLEM_FMT_NPY},
      {"u1.u8bin", "u1", SLEM_FMT_U8BIN},         {"gt.ibin", "gt", SLEM_FMT_IBIN}};
  for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
    char path[256];
    snprintf(path, sizeof path, FD "%s", g[i].file);
    expect_values(path, SLEM_FMT_AUTO, g[i].fmt, g[i].expect); /* by extension */
    expect_values(path, g[i].fmt, g[i].fmt, g[i].expect);      /* by name */
  }
}
END_TEST

START_TEST(fortran_order_in_blocks) {
  /* 300 x 6 in blocks of 7 and of 64 rows, double and float, against the C-order twin;
   * then again after a rewind */
  size_t n, d, n2, d2;
  double *c = read_whole(FD "big_c.npy", SLEM_FMT_AUTO, 64, 0, &n, &d);
  SlemVecReader *r = NULL;
  SlemError err;
  double row[6];
  size_t got;
  for (int f32 = 0; f32 < 2; f32++)
    for (size_t block = 7; block <= 64; block += 57) {
      double *f = read_whole(FD "big_fortran.npy", SLEM_FMT_AUTO, block, f32, &n2, &d2);
      ck_assert_uint_eq(n2, 300);
      ck_assert_uint_eq(d2, 6);
      ck_assert_uint_eq(n, n2);
      for (size_t i = 0; i < n * d; i++) ck_assert_double_eq(f[i], c[i]);
      free(f);
    }
  ck_assert_int_eq(slem_vecreader_open(&r, FD "big_fortran.npy", SLEM_FMT_AUTO, &err), SLEM_OK);
  for (int k = 0; k < 3; k++) ck_assert_int_eq(slem_vecreader_read(r, row, 1, &got, &err), SLEM_OK);
  ck_assert_double_eq(row[5], c[2 * 6 + 5]);
  ck_assert_int_eq(slem_vecreader_rewind(r, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read(r, row, 1, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, 1);
  for (size_t j = 0; j < 6; j++) ck_assert_double_eq(row[j], c[j]);
  slem_vecreader_free(r);
  free(c);
}
END_TEST

/* A block source for the prefetch: rows of 2 values, row i holding i and -i, 23 blocks of
 * at most 10 rows (the last shorter), then the end. */
static int count_rows(void *ctx, void *x, size_t max, int f32, size_t *got, SlemBlockPos *pos,
                      SlemError *err) {
  uint64_t *next = ctx;
  double *xd = x;
  size_t n = 0;
  for (; n < max && *next < 225; n++, ++*next) {
    xd[2 * n] = (double)*next;
    xd[2 * n + 1] = -(double)*next;
  }
  *got = n;
  *pos = (SlemBlockPos){"rows", *next - n + 1, *next - n};
  return SLEM_OK;
}

/* slem_prefetch_keep(): the blocks the caller keeps stay as they were read until given
 * back, in order, whether the thread had read ahead before the call or not. */
START_TEST(prefetch_keeps_blocks) {
  for (int keep = 1; keep <= 2; keep++)
    for (int late = 0; late < 2; late++) {
      SlemPrefetch *pf = NULL;
      SlemError err;
      uint64_t next = 0, expect = 0;
      double *held[3] = {NULL, NULL, NULL};
      size_t held_n[3] = {0, 0, 0};
      ck_assert_int_eq(slem_prefetch_new_fn(&pf, count_rows, &next, 2, 10, 0, &err), SLEM_OK);
      if (late) usleep(20000); /* the thread has read two blocks and waits */
      ck_assert_int_eq(slem_prefetch_keep(pf, keep, &err), SLEM_OK);
      for (int b = 0;; b++) {
        void *rows;
        size_t got;
        ck_assert_int_eq(slem_prefetch_next(pf, &rows, &got, &err), SLEM_OK);
        if (got == 0) break;
        held[b % 3] = rows;
        held_n[b % 3] = got;
        for (size_t i = 0; i < got; i++, expect++)
          ck_assert_double_eq(((double *)rows)[2 * i], (double)expect);
        /* the block before, when kept, is still whole */
        if (keep == 2 && b > 0) {
          const double *p = held[(b + 2) % 3];
          uint64_t first = expect - got - held_n[(b + 2) % 3];
          for (size_t i = 0; i < held_n[(b + 2) % 3]; i++) {
            ck_assert_double_eq(p[2 * i], (double)(first + i));
            ck_assert_double_eq(p[2 * i + 1], -(double)(first + i));
          }
        }
      }
      ck_assert_uint_eq(expect, 225);
      slem_prefetch_free(pf);
    }
  {
    SlemPrefetch *pf = NULL;
    SlemError err;
    uint64_t next = 0;
    ck_assert_int_eq(slem_prefetch_new_fn(&pf, count_rows, &next, 2, 10, 0, &err), SLEM_OK);
    ck_assert_int_eq(slem_prefetch_keep(pf, 3, &err), SLEM_EINVAL);
    ck_assert_int_eq(slem_prefetch_keep(pf, 0, &err), SLEM_EINVAL);
    slem_prefetch_free(pf);
  }
}
END_TEST

/* A block source that counts the blocks read (atomically: the test reads the count while the
 * thread reads): blocks of `max` rows of 2 values, never an end. */
static int count_blocks(void *ctx, void *x, size_t max, int f32, size_t *got, SlemBlockPos *pos,
                        SlemError *err) {
  int *blocks = ctx;
  memset(x, 0, max * 2 * sizeof(double));
  *got = max;
  *pos = (SlemBlockPos){"blocks", 1, 0};
  __atomic_add_fetch(blocks, 1, __ATOMIC_SEQ_CST);
  return SLEM_OK;
}

/* Waits up to 2 s for *blocks to reach want; the count then. */
static int blocks_within(int *blocks, int want) {
  for (int i = 0; i < 200 && __atomic_load_n(blocks, __ATOMIC_SEQ_CST) < want; i++)
    usleep(10000);
  return __atomic_load_n(blocks, __ATOMIC_SEQ_CST);
}

/* slem_prefetch_keep(2) after the thread has read its two blocks and waits: the third
 * buffer is read at once, ahead of the caller, not when the caller asks for its third block
 * (the thread slept on, nobody woke it: slem-encode's lanes waited for that read). */
START_TEST(prefetch_keep_wakes_the_reader) {
  SlemPrefetch *pf = NULL;
  SlemError err;
  int blocks = 0;
  void *rows;
  size_t got;
  ck_assert_int_eq(slem_prefetch_new_fn(&pf, count_blocks, &blocks, 2, 10, 0, &err), SLEM_OK);
  ck_assert_int_eq(blocks_within(&blocks, 2), 2);
  usleep(20000); /* the thread waits for a buffer */
  ck_assert_int_eq(slem_prefetch_keep(pf, 2, &err), SLEM_OK);
  ck_assert_int_eq(blocks_within(&blocks, 3), 3);
  /* the caller keeps two blocks: the thread has the third buffer only */
  ck_assert_int_eq(slem_prefetch_next(pf, &rows, &got, &err), SLEM_OK);
  ck_assert_int_eq(slem_prefetch_next(pf, &rows, &got, &err), SLEM_OK);
  usleep(20000);
  ck_assert_int_eq(__atomic_load_n(&blocks, __ATOMIC_SEQ_CST), 3);
  ck_assert_int_eq(slem_prefetch_next(pf, &rows, &got, &err), SLEM_OK); /* gives back the first */
  ck_assert_int_eq(blocks_within(&blocks, 4), 4);
  slem_prefetch_free(pf);
}
END_TEST

/* Makes fd 0 a pipe holding the first n bytes of path (n at most 64 KiB: the pipe's
 * buffer) followed by extra. Check forks each test, so stdin is the test's own. */
static void stdin_from(const char *path, size_t n, const void *extra, size_t extra_n) {
  unsigned char buf[65536];
  FILE *f = fopen(path, "rb");
  int p[2];
  size_t got;
  ck_assert_ptr_nonnull(f);
  got = fread(buf, 1, n < sizeof buf ? n : sizeof buf, f);
  fclose(f);
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(write(p[1], buf, got), (ssize_t)got);
  if (extra_n) ck_assert_int_eq(write(p[1], extra, extra_n), (ssize_t)extra_n);
  close(p[1]);
  ck_assert_int_eq(dup2(p[0], 0), 0);
  close(p[0]);
}

START_TEST(fortran_order_from_a_pipe) {
  size_t n, d;
  double *c = read_whole(FD "big_c.npy", SLEM_FMT_AUTO, 64, 0, &n, &d), *f;
  size_t n2, d2;
  stdin_from(FD "big_fortran.npy", 1 << 16, NULL, 0);
  f = read_whole("-", SLEM_FMT_AUTO, 7, 0, &n2, &d2);
  ck_assert_uint_eq(n2, n);
  for (size_t i = 0; i < n * d; i++) ck_assert_double_eq(f[i], c[i]);
  free(f);
  free(c);
}
END_TEST

/* An npy header as numpy writes it (version 1, padded to 64 bytes) into buf; returns its
 * length. */
static size_t npy_header(unsigned char *buf, const char *dict) {
  size_t len = strlen(dict), hl = len + 1;
  while ((10 + hl) % 64) hl++;
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)(hl & 0xff);
  buf[9] = (unsigned char)(hl >> 8);
  memcpy(buf + 10, dict, len);
  memset(buf + 10 + len, ' ', hl - len - 1);
  buf[10 + hl - 1] = '\n';
  return 10 + hl;
}

static void expect_open_error(const char *path, SlemFormat fmt, int st, const char *want) {
  SlemVecReader *r = NULL;
  SlemError err;
  int got = slem_vecreader_open(&r, path, fmt, &err);
  ck_assert_msg(got == st, "%s: status %d, expected %d (%s)", path, got, st, got ? err.msg : "");
  ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
  ck_assert_ptr_null(r);
}

static void expect_read_error(const char *path, SlemFormat fmt, const char *want) {
  SlemVecReader *r = NULL;
  SlemError err;
  double buf[4096];
  size_t got;
  int st;
  ck_assert_msg(slem_vecreader_open(&r, path, fmt, &err) == SLEM_OK, "%s: %s", path, err.msg);
  do st = slem_vecreader_read(r, buf, 4096 / slem_vecreader_dim(r), &got, &err);
  while (st == SLEM_OK && got > 0);
  ck_assert_msg(st == SLEM_EFORMAT, "%s: read status %d", path, st);
  ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
  slem_vecreader_free(r);
}

START_TEST(fortran_order_on_a_pipe_is_bounded) {
  unsigned char buf[256];
  /* 5e6 x 4 float32 = 80 MB to hold: refused from the header alone */
  size_t hl = npy_header(buf, "{'descr': '<f4', 'fortran_order': True, 'shape': (5000000, 4), }");
  char *p = tu_path("huge.npy");
  tu_write_bytes(p, buf, hl);
  stdin_from(p, hl, NULL, 0);
  expect_open_error("-", SLEM_FMT_AUTO, SLEM_EFORMAT, "Fortran order on a pipe");
  free(p);
}
END_TEST

START_TEST(fortran_order_truncated_on_a_pipe) {
  unsigned char buf[256];
  float v[5] = {1, 2, 3, 4, 5};
  size_t hl = npy_header(buf, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }");
  char *p = tu_path("short.npy");
  memcpy(buf + hl, v, sizeof v);
  tu_write_bytes(p, buf, hl + sizeof v); /* 5 of 6 values */
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "truncated or corrupt");
  stdin_from(p, hl + sizeof v, NULL, 0);
  expect_open_error("-", SLEM_FMT_AUTO, SLEM_EFORMAT, "npy data truncated (20 of 24 bytes)");
  free(p);
}
END_TEST

START_TEST(bad_npy_values) {
  unsigned char buf[512];
  char *p = tu_path("nan.npy");
  size_t hl;
  /* float16 NaN and Inf, big-endian NaN, named by record and value */
  uint16_t h[4] = {0x3c00, 0x3c00, 0x7e00, 0x3c00};
  hl = npy_header(buf, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }");
  memcpy(buf + hl, h, sizeof h);
  tu_write_bytes(p, buf, hl + sizeof h);
  expect_read_error(p, SLEM_FMT_AUTO, "record 2: value 1 is NaN");
  h[2] = 0xfc00;
  memcpy(buf + hl, h, sizeof h);
  tu_write_bytes(p, buf, hl + sizeof h);
  expect_read_error(p, SLEM_FMT_AUTO, "record 2: value 1 is infinite");
  {
    unsigned char be[16] = {0x3f, 0x80, 0, 0, 0x3f, 0x80, 0, 0, 0x3f, 0x80, 0, 0, 0x7f, 0xc0, 0, 0};
    hl = npy_header(buf, "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 2), }");
    memcpy(buf + hl, be, sizeof be);
    tu_write_bytes(p, buf, hl + sizeof be);
    /* column-major: the 4th value is row 2, column 2 */
    expect_read_error(p, SLEM_FMT_AUTO, "record 2: value 2 is NaN");
  }
  /* int64, numpy's default integer, is read (exact up to 2^53) */
  hl = npy_header(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }");
  {
    int64_t v[2] = {-3, (int64_t)1 << 40};
    SlemVecReader *r = NULL;
    SlemError err;
    double x[2];
    size_t got = 0;
    memcpy(buf + hl, v, 16);
    tu_write_bytes(p, buf, hl + 16);
    ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_read(r, x, 1, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 1);
    ck_assert(x[0] == -3 && x[1] == 1099511627776.0);
    slem_vecreader_free(r);
  }
  /* the dtypes still refused */
  hl = npy_header(buf, "{'descr': '<c8', 'fortran_order': False, 'shape': (1, 2), }");
  tu_write_bytes(p, buf, hl + 16);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "dtype '<c8' is not supported");
  hl = npy_header(buf, "{'descr': '|i2', 'fortran_order': False, 'shape': (1, 2), }");
  tu_write_bytes(p, buf, hl + 4);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "dtype '|i2' is not supported");
  free(p);
}
END_TEST

START_TEST(bad_bin_files) {
  char *p = tu_path("bad.fbin"), *pi = tu_path("bad.ibin");
  unsigned char buf[64];
  uint32_t hd[2];
  float v[6] = {1, 2, 3, 4, 5, 6};
  hd[0] = 2, hd[1] = 3;
  memcpy(buf, hd, 8);
  memcpy(buf + 8, v, sizeof v);
  tu_write_bytes(p, buf, 8 + sizeof v);
  expect_values(FD "float.fbin", SLEM_FMT_AUTO, SLEM_FMT_FBIN, "float"); /* sanity */
  /* truncated: one value short; one value too many */
  tu_write_bytes(p, buf, 8 + sizeof v - 4);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "n = 2, d = 3 of fbin needs 32: truncated");
  tu_write_bytes(p, buf, 8 + sizeof v);
  {
    FILE *f = fopen(p, "ab");
    fwrite(v, 4, 1, f);
    fclose(f);
  }
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "record 3: data beyond the 2 vectors of "
                    "dimension 3 that the header counts");
  tu_write_bytes(p, buf, 5);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "fbin header truncated (5 of 8 bytes)");
  tu_write_bytes(p, buf, 0);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "no vectors (empty file)");
  /* absurd sizes, refused from the header before anything is allocated */
  hd[0] = 0xffffffffu, hd[1] = 1u << 20;
  memcpy(buf, hd, 8);
  tu_write_bytes(p, buf, 8 + sizeof v);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "truncated or corrupt");
  hd[1] = (1u << 20) + 1;
  memcpy(buf, hd, 8);
  tu_write_bytes(p, buf, 8 + sizeof v);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "dimension 1048577 is out of range");
  hd[0] = 0, hd[1] = 3;
  memcpy(buf, hd, 8);
  tu_write_bytes(p, buf, 8);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "header says 0 vectors");
  hd[0] = 2, hd[1] = 0;
  memcpy(buf, hd, 8);
  tu_write_bytes(p, buf, 8);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "dimension 0 is out of range");
  /* on a pipe the size is unknown: an absurd count fails at the first missing record */
  hd[0] = 0xffffffffu, hd[1] = 3;
  memcpy(buf, hd, 8);
  memcpy(buf + 8, v, sizeof v);
  tu_write_bytes(p, buf, 8 + sizeof v);
  stdin_from(p, 8 + sizeof v, NULL, 0);
  expect_read_error("-", SLEM_FMT_FBIN, "record 3: missing (the header says 4294967295)");
  /* NaN and Inf */
  hd[0] = 2;
  v[3] = NAN;
  memcpy(buf, hd, 8);
  memcpy(buf + 8, v, sizeof v);
  tu_write_bytes(p, buf, 8 + sizeof v);
  expect_read_error(p, SLEM_FMT_AUTO, "record 2: value 1 is NaN");
  /* ibin: data, or data and as much again (ground truth), nothing else */
  {
    int32_t iv[6] = {1, 2, 3, 4, 5, 6};
    memcpy(buf + 8, iv, sizeof iv);
    tu_write_bytes(pi, buf, 8 + sizeof iv - 4);
    expect_open_error(pi, SLEM_FMT_AUTO, SLEM_EFORMAT, "(or twice the data for ground truth)");
  }
  free(p);
  free(pi);
}
END_TEST

/* Writes x(n, d) to path (format from the name) with element type dt. */
static void write_all(const char *path, SlemDtype dt, const float *x, size_t n, size_t d) {
  SlemVecWriter *w = NULL;
  SlemError err;
  ck_assert_msg(slem_vecwriter_open(&w, path, SLEM_FMT_AUTO, d, -1, &err) == SLEM_OK, "%s",
                err.msg);
  ck_assert_msg(slem_vecwriter_set_dtype(w, dt, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_vecwriter_write(w, x, 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_vecwriter_write(w, x + d, n - 1, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_vecwriter_close(w, &err) == SLEM_OK, "%s", err.msg);
}

/* Makes stdin a pipe that a child process fills with buf(n) (any size) and closes. */
static void stdin_from_child(const unsigned char *buf, size_t n) {
  int p[2];
  pid_t pid;
  ck_assert_int_eq(pipe(p), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    size_t o = 0;
    close(p[0]);
    while (o < n) {
      ssize_t k = write(p[1], buf + o, n - o);
      if (k <= 0) _exit(1);
      o += (size_t)k;
    }
    _exit(0);
  }
  close(p[1]);
  ck_assert_int_eq(dup2(p[0], 0), 0);
  close(p[0]);
}

/* Reads every vector of path; returns the status of the read that ended it. */
static int read_to_end(const char *path, SlemFormat fmt, uint64_t *n, SlemError *err) {
  SlemVecReader *r = NULL;
  double buf[4096];
  size_t got;
  int st;
  *n = 0;
  ck_assert_msg(slem_vecreader_open(&r, path, fmt, err) == SLEM_OK, "%s: %s", path,
                err->msg);
  do {
    st = slem_vecreader_read(r, buf, 4096 / slem_vecreader_dim(r), &got, err);
    if (st == SLEM_OK) *n += got;
  } while (st == SLEM_OK && got > 0);
  slem_vecreader_free(r);
  return st;
}

/* One format whose header counts the rows: a file of data(len) (header included) holding
 * more rows than counted is refused at open, the same bytes on a pipe when its end is
 * reached, with the same message (the name aside) and status. */
static void expect_beyond(const char *name, SlemFormat fmt, const unsigned char *data,
                          size_t len, const char *want) {
  char *p = tu_path(name);
  SlemError err;
  uint64_t n;
  int st;
  tu_write_bytes(p, data, len);
  stdin_from_child(data, len);
  st = read_to_end("-", fmt, &n, &err);
  ck_assert_msg(st == SLEM_EFORMAT, "%s on a pipe: status %d (%s), %" PRIu64 " rows", name, st,
                st ? err.msg : "", n);
  ck_assert_msg(strstr(err.msg, want) != NULL, "%s on a pipe: message '%s' lacks '%s'", name,
                err.msg, want);
  ck_assert_msg(strncmp(err.msg, "<stdin>: ", 9) == 0, "pipe message '%s'", err.msg);
  expect_open_error(p, fmt, SLEM_EFORMAT, want);
  free(p);
}

/* The same bytes, well formed: the same rows from a file and a pipe. */
static void expect_rows(const char *name, SlemFormat fmt, const unsigned char *data, size_t len,
                        uint64_t rows) {
  char *p = tu_path(name);
  SlemError err;
  uint64_t n;
  tu_write_bytes(p, data, len);
  ck_assert_int_eq(read_to_end(p, fmt, &n, &err), SLEM_OK);
  ck_assert_uint_eq(n, rows);
  stdin_from_child(data, len);
  ck_assert_msg(read_to_end("-", fmt, &n, &err) == SLEM_OK, "%s on a pipe: %s", name, err.msg);
  ck_assert_uint_eq(n, rows);
  free(p);
}

/* Rows beyond the header's count (2, and 6000 of 16 values: past the reading blocks and a
 * pipe's 64 KiB), npy in C and Fortran order, fbin, u8bin, i8bin, ibin (which may hold
 * twice its rows: ground truth's distances follow its ids). */
START_TEST(rows_beyond_the_count_file_and_pipe) {
  static const size_t counts[2] = {2, 6000};
  const size_t d = 16;
  for (int c = 0; c < 2; c++) {
    size_t n = counts[c], extra = c == 0 ? 1 : 700;
    size_t cap = 128 + (2 * n + extra) * d * 4;
    unsigned char *buf = calloc(1, cap);
    char want[160], dict[128];
    static const struct { const char *ext; uint32_t esize; SlemFormat fmt; } bins[] = {
        {"fbin", 4, SLEM_FMT_FBIN}, {"u8bin", 1, SLEM_FMT_U8BIN}, {"i8bin", 1, SLEM_FMT_I8BIN},
        {"ibin", 4, SLEM_FMT_IBIN}};
    for (size_t i = 0; i < (2 * n + extra) * d * 4; i++) buf[128 + i] = (unsigned char)(i % 61);
    /* npy, C and Fortran order: header + (n + extra) rows */
    for (int f = 0; f < 2; f++) {
      size_t hl;
      unsigned char *q;
      snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': %s, 'shape': (%zu, %zu), }",
               f ? "True" : "False", n, d);
      q = malloc(cap);
      hl = npy_header(q, dict);
      for (size_t i = 0; i < (n + extra) * d; i++) {
        float v = (float)(i % 97);
        memcpy(q + hl + 4 * i, &v, 4);
      }
      snprintf(want, sizeof want, "record %zu: data beyond the %zu vectors of dimension %zu "
               "that the shape counts", n + 1, n, d);
      expect_beyond(f ? "beyond_f.npy" : "beyond_c.npy", SLEM_FMT_NPY, q, hl + (n + extra) * d * 4, want);
      expect_rows(f ? "exact_f.npy" : "exact_c.npy", SLEM_FMT_NPY, q, hl + n * d * 4, n);
      free(q);
    }
    for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
      uint32_t hd[2] = {(uint32_t)n, (uint32_t)d};
      size_t rec = d * bins[b].esize;
      char fname[32];
      unsigned char *q = buf + 128 - 8;
      memcpy(q, hd, 8);
      snprintf(fname, sizeof fname, "beyond.%s", bins[b].ext);
      snprintf(want, sizeof want, "record %zu: data beyond the %zu vectors of dimension %zu "
               "that the header counts", n + 1, n, d);
      expect_beyond(fname, bins[b].fmt, q, 8 + (n + extra) * rec, want);
      snprintf(fname, sizeof fname, "exact.%s", bins[b].ext);
      expect_rows(fname, bins[b].fmt, q, 8 + n * rec, n);
      if (bins[b].esize == 4 && strcmp(bins[b].ext, "ibin") == 0) {
        expect_rows("twice.ibin", SLEM_FMT_IBIN, q, 8 + 2 * n * rec, n);
        expect_beyond("twice_plus.ibin", SLEM_FMT_IBIN, q, 8 + (2 * n + extra) * rec, want);
      }
    }
    free(buf);
  }
}
END_TEST

START_TEST(bin_round_trips) {
  static const struct { const char *ext; SlemFormat fmt; float lo, hi; } b[] = {
      {"fbin", SLEM_FMT_FBIN, 0, 0},       {"u8bin", SLEM_FMT_U8BIN, 0, 255},
      {"i8bin", SLEM_FMT_I8BIN, -128, 127}, {"ibin", SLEM_FMT_IBIN, -2147483648.0f, 2147483520.0f}};
  const size_t n = 700, d = 5;
  float *x = malloc(n * d * sizeof *x);
  tu_seed(5);
  for (size_t k = 0; k < 4; k++) {
    char name[32], *path;
    size_t rn, rd;
    double *back;
    for (size_t i = 0; i < n * d; i++)
      x[i] = b[k].hi == 0 ? (float)(tu_gauss() * 100)
             : (float)floor(b[k].lo + tu_uniform() * ((double)b[k].hi - b[k].lo + 1));
    x[0] = b[k].hi == 0 ? 1.17549435e-38f : b[k].lo;
    x[1] = b[k].hi == 0 ? -3.40282347e38f : b[k].hi;
    snprintf(name, sizeof name, "rt.%s", b[k].ext);
    path = tu_path(name);
    write_all(path, SLEM_DTYPE_F4, x, n, d);
    ck_assert_int_eq(tu_file_size(path), 8 + (long)(n * d * (k == 1 || k == 2 ? 1 : 4)));
    back = read_whole(path, SLEM_FMT_AUTO, 64, 0, &rn, &rd);
    ck_assert_uint_eq(rn, n);
    ck_assert_uint_eq(rd, d);
    for (size_t i = 0; i < n * d; i++) ck_assert_float_eq((float)back[i], x[i]);
    free(back);
    /* values that do not fit are refused, naming record and value */
    if (b[k].hi != 0) {
      SlemVecWriter *w = NULL;
      SlemError err;
      float bad[5] = {1, 2, 3, 4, 0.5f};
      char want[64];
      ck_assert_int_eq(slem_vecwriter_open(&w, path, SLEM_FMT_AUTO, d, -1, &err), SLEM_OK);
      ck_assert_int_eq(slem_vecwriter_write(w, bad, 1, &err), SLEM_EINVAL);
      snprintf(want, sizeof want, "record 1: value 5 (0.5) does not fit %s", b[k].ext);
      ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
      slem_vecwriter_abort(w);
    }
    free(path);
  }
  free(x);
}
END_TEST

START_TEST(float16_output_rounds_as_numpy) {
  size_t n, d, n2, d2;
  double *src = read_whole(FD "f2src.npy", SLEM_FMT_AUTO, 64, 0, &n, &d), *ours, *theirs;
  float *x = malloc(n * d * sizeof *x);
  char *p = tu_path("half.npy");
  SlemVecWriter *w = NULL;
  SlemError err;
  for (size_t i = 0; i < n * d; i++) x[i] = (float)src[i];
  write_all(p, SLEM_DTYPE_F2, x, n, d);
  ck_assert_int_eq(tu_file_size(p), 128 + (long)(2 * n * d));
  ours = read_whole(p, SLEM_FMT_AUTO, 3, 0, &n2, &d2);
  theirs = read_whole(FD "f2.npy", SLEM_FMT_AUTO, 3, 0, &n2, &d2);
  for (size_t i = 0; i < n * d; i++) {
    ck_assert_msg(ours[i] == theirs[i] && signbit(ours[i]) == signbit(theirs[i]),
                  "value %zu (%.9g): %.17g, numpy %.17g", i, x[i], ours[i], theirs[i]);
  }
  /* beyond the range of float16: refused */
  x[3] = 65520;
  ck_assert_int_eq(slem_vecwriter_open(&w, p, SLEM_FMT_NPY, d, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_F2, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, x, 1, &err), SLEM_EINVAL);
  ck_assert_msg(strstr(err.msg, "record 1: value 4 (65520) does not fit float16"), "%s", err.msg);
  slem_vecwriter_abort(w);
  free(src);
  free(ours);
  free(theirs);
  free(x);
  free(p);
}
END_TEST

START_TEST(int8_output_with_its_scale) {
  size_t n, d, n2, d2;
  double *src = read_whole(FD "i1src.npy", SLEM_FMT_AUTO, 64, 0, &n, &d), *back, *q;
  float *x = malloc(n * d * sizeof *x);
  char *p = tu_path("q.npy");
  unsigned char hdr[129];
  FILE *f;
  for (size_t i = 0; i < n * d; i++) x[i] = (float)src[i];
  write_all(p, SLEM_DTYPE_I1, x, n, d);
  ck_assert_int_eq(tu_file_size(p), 128 + (long)(n * d));
  f = fopen(p, "rb");
  ck_assert_uint_eq(fread(hdr, 1, 128, f), 128);
  fclose(f);
  hdr[128] = 0;
  ck_assert_ptr_nonnull(strstr((char *)hdr + 10, "'descr': '|i1'"));
  ck_assert_ptr_nonnull(strstr((char *)hdr + 10, "} # slem-scale: 1/127"));
  /* read back as q / 127, q = round(127 x) as numpy computed it */
  back = read_whole(p, SLEM_FMT_AUTO, 2, 0, &n2, &d2);
  q = read_whole(FD "i1q.expect.txt", SLEM_FMT_AUTO, 64, 0, &n2, &d2);
  ck_assert_uint_eq(n2, n);
  for (size_t i = 0; i < n * d; i++)
    ck_assert_msg(back[i] == q[i] / 127, "value %zu (%.9g): %.17g, expected %.17g / 127", i,
                  x[i], back[i], q[i]);
  /* a numpy int8 file has no scale: its integers as they are */
  free(back);
  back = read_whole(FD "i1.npy", SLEM_FMT_AUTO, 2, 0, &n2, &d2);
  ck_assert_double_eq(back[0], -128);
  free(src);
  free(back);
  free(q);
  free(x);
  free(p);
}
END_TEST

START_TEST(dtype_and_output_names) {
  SlemVecWriter *w = NULL;
  SlemError err;
  SlemFormat f;
  SlemDtype dt;
  float x[2] = {1, 2};
  char *p = tu_path("x.fvecs"), *pu = tu_path("x.unknown"), *pn = tu_path("noext");
  ck_assert_int_eq(slem_dtype_parse(&dt, "f2"), SLEM_OK);
  ck_assert_int_eq(dt, SLEM_DTYPE_F2);
  ck_assert_int_eq(slem_dtype_parse(&dt, "int8"), SLEM_OK);
  ck_assert_int_eq(dt, SLEM_DTYPE_I1);
  ck_assert_int_eq(slem_dtype_parse(&dt, "f4"), SLEM_OK);
  ck_assert_int_eq(dt, SLEM_DTYPE_F4);
  ck_assert_int_eq(slem_dtype_parse(&dt, "f8"), SLEM_EINVAL);
  /* only npy stores f2 and i1 */
  ck_assert_int_eq(slem_vecwriter_open(&w, p, SLEM_FMT_AUTO, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_F2, &err), SLEM_EINVAL);
  ck_assert_msg(strstr(err.msg, "fvecs output cannot store f2 values"), "%s", err.msg);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_F4, &err), SLEM_OK);
  slem_vecwriter_abort(w);
  /* and not after the first vector */
  ck_assert_int_eq(slem_vecwriter_open(&w, p, SLEM_FMT_NPY, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, x, 1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_I1, &err), SLEM_EINVAL);
  slem_vecwriter_abort(w);
  ck_assert(!tu_file_exists(p));
  /* an output name whose extension names no format is refused; - and devices are fvecs */
  ck_assert_int_eq(slem_format_for_output(&f, pu, &err), SLEM_EINVAL);
  ck_assert_msg(strstr(err.msg, "x.unknown: the output's extension names no vector format "
                                "(.fvecs .bvecs .ivecs .npy .text .txt .csv .tsv .fbin .u8bin "
                                ".i8bin .ibin .slem)"), "%s", err.msg);
  ck_assert_int_eq(slem_format_for_output(&f, pn, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_vecwriter_open(&w, pu, SLEM_FMT_AUTO, 2, -1, &err), SLEM_EINVAL);
  ck_assert_ptr_null(w);
  ck_assert(!tu_file_exists(pu));
  ck_assert_int_eq(slem_vecwriter_open(&w, pu, SLEM_FMT_TEXT, 2, -1, &err), SLEM_OK);
  slem_vecwriter_abort(w);
  ck_assert_int_eq(slem_format_for_output(&f, "-", &err), SLEM_OK);
  ck_assert_int_eq(f, SLEM_FMT_FVECS);
  ck_assert_int_eq(slem_format_for_output(&f, "/dev/null", &err), SLEM_OK);
  ck_assert_int_eq(f, SLEM_FMT_FVECS);
  ck_assert_int_eq(slem_format_for_output(&f, "a/b.u8bin", &err), SLEM_OK);
  ck_assert_int_eq(f, SLEM_FMT_U8BIN);
  free(p);
  free(pu);
  free(pn);
}
END_TEST

/* A container of kernel projections: rows of doubles, kept bit for bit, their layout in the
 * header, and read only by a caller that accepts them. */
static int write_projections(const char *path, size_t kd, size_t kr, const double *x, size_t n,
                             SlemError *err) {
  SlemVecWriter *w = NULL;
  SlemDescMeta m;
  int st;
  memset(&m, 0, sizeof m);
  m.cache_fingerprint = "0123456789abcdef";
  m.kind_of_rows = "kernel-projections";
  m.kernel_d = kd;
  m.kernel_r = kr;
  ck_assert_int_eq(slem_vecwriter_open(&w, path, SLEM_FMT_AUTO, 5, -1, err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_meta(w, &m, err), SLEM_OK);
  /* doubles only once the writer is set to them, and then nothing else */
  ck_assert_int_eq(slem_vecwriter_write_f64(w, x, 1, err), SLEM_EINVAL);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_F8, err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, (const float *)x, 1, err), SLEM_EINVAL);
  if ((st = slem_vecwriter_write_f64(w, x, n, err)) != SLEM_OK) {
    slem_vecwriter_abort(w);
    return st;
  }
  return slem_vecwriter_close(w, err);
}

/* A container of descriptors made with the cache fp (its own fingerprint when couple is 0, else
 * the coupling's, cache_fp the cache's). */
static void write_coupled(const char *path, const char *fp, int couple, const char *cache_fp) {
  const float x[2] = {0.6f, 0.8f};
  SlemVecWriter *w = NULL;
  SlemDescMeta m;
  SlemError err;
  memset(&m, 0, sizeof m);
  m.cache_fingerprint = fp;
  m.kind_of_rows = "descriptors";
  m.couple = couple;
  m.couple_cache_fp = cache_fp;
  ck_assert_int_eq(slem_vecwriter_open(&w, path, SLEM_FMT_AUTO, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_meta(w, &m, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, x, 1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_close(w, &err), SLEM_OK);
}

/* Descriptors of two couplings of one cache (slem-encode --couple) are refused naming the
 * cache and both couplings; of another cache, naming that cache, not the coupling's
 * fingerprint (it spoke of an older cache and gave the coupling's fingerprint). */
START_TEST(two_couplings_of_one_cache_named) {
  static const char *const names[] = {"plain.slem", "exact.slem", "authors.slem", "other.slem",
                                      "exact2.slem"};
  SlemVecReader *r[5] = {NULL};
  SlemError err;
  int plain;
  char *p[5];
  for (int i = 0; i < 5; i++) p[i] = tu_path(names[i]);
  write_coupled(p[0], "aaaaaaaaaaaaaaaa", 0, NULL);
  write_coupled(p[1], "bbbbbbbbbbbbbbbb", SLEM_COUPLE_EXACT, "aaaaaaaaaaaaaaaa");
  write_coupled(p[2], "cccccccccccccccc", SLEM_COUPLE_AUTHORS, "aaaaaaaaaaaaaaaa");
  write_coupled(p[3], "dddddddddddddddd", SLEM_COUPLE_EXACT, "eeeeeeeeeeeeeeee");
  write_coupled(p[4], "bbbbbbbbbbbbbbbb", SLEM_COUPLE_EXACT, "aaaaaaaaaaaaaaaa");
  for (int i = 0; i < 5; i++)
    ck_assert_msg(slem_vecreader_open(&r[i], p[i], SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_vecreaders_compatible(r[0], r[1], &plain, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "plain.slem holds descriptors of the cache aaaaaaaaaaaaaaaa "
                       "without --couple, but ") &&
                strstr(err.msg, "exact.slem holds them coupled by --couple (exact): two "
                       "couplings of one cache cannot be compared"), "%s", err.msg);
  ck_assert_int_eq(slem_vecreaders_compatible(r[1], r[2], &plain, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "coupled by --couple (exact), but ") &&
                strstr(err.msg, "authors.slem holds them coupled by --couple=authors: two "
                       "couplings"), "%s", err.msg);
  ck_assert_int_eq(slem_vecreaders_compatible(r[0], r[3], &plain, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "made with the cache aaaaaaaaaaaaaaaa, but ") &&
                strstr(err.msg, "other.slem with the cache eeeeeeeeeeeeeeee, coupled by "
                       "--couple (exact): they cannot be compared") &&
                !strstr(err.msg, "dddddddddddddddd"), "%s", err.msg);
  ck_assert_int_eq(slem_vecreaders_compatible(r[1], r[4], &plain, &err), SLEM_OK);
  for (int i = 0; i < 5; i++) {
    slem_vecreader_free(r[i]);
    free(p[i]);
  }
}
END_TEST

START_TEST(double_rows_of_kernel_projections) {
  const double x[10] = {0.1, -1e-300, 1.0 / 3, 2, 1e300, 0.7, 0, -0.0, 5e-324, 1};
  char *p = tu_path("p.slem"), *q = tu_path("q.slem");
  SlemVecReader *r = NULL;
  SlemError err;
  SlemVecWriter *w = NULL;
  double back[10];
  size_t got, kd = 0, kr = 0;
  int kc = -1;
  /* d 2, rank 1, not coupled: 2 + 2 + 1 = 5 values a row */
  ck_assert_int_eq(SLEM_KPROJ_WIDTH(2, 1, 0), 5);
  ck_assert_int_eq(SLEM_KPROJ_WIDTH(2, 1, 1), 6);
  ck_assert_int_eq(write_projections(p, 2, 1, x, 2, &err), SLEM_OK);
  ck_assert_int_eq(tu_file_size(p), 65536 + 10 * 8);
  ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert(slem_vecreader_projections(r, &kd, &kr, &kc));
  ck_assert_uint_eq(kd, 2);
  ck_assert_uint_eq(kr, 1);
  ck_assert_int_eq(kc, 0);
  ck_assert_uint_eq(slem_vecreader_dim(r), 5);
  ck_assert_str_eq(slem_vecreader_fingerprint(r), "0123456789abcdef");
  ck_assert_int_eq(slem_vecreader_read(r, back, 2, &got, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "p.slem: kernel projections (slem-encode --projections), which "
                               "only slem-match -c CACHE reads"), "%s", err.msg);
  slem_vecreader_accept_projections(r);
  ck_assert_int_eq(slem_vecreader_read(r, back, 2, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, 2);
  ck_assert_mem_eq(back, x, sizeof x);
  slem_vecreader_free(r);
  /* a plain container is no projection container */
  ck_assert_int_eq(slem_vecwriter_open(&w, q, SLEM_FMT_SLEM, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_F8, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_close(w, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_open(&r, q, SLEM_FMT_AUTO, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "rows of dtype <f8, which slem writes only for kernel "
                               "projections"), "%s", err.msg);
  /* a layout that does not add up to the row's width is refused at the open */
  ck_assert_int_eq(write_projections(q, 2, 2, x, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_open(&r, q, SLEM_FMT_AUTO, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "without a consistent layout"), "%s", err.msg);
  /* other formats store no doubles */
  ck_assert_int_eq(slem_vecwriter_open(&w, q, SLEM_FMT_NPY, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_dtype(w, SLEM_DTYPE_F8, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_vecwriter_write_f64(w, x, 1, &err), SLEM_EINVAL);
  slem_vecwriter_abort(w);
  free(p);
  free(q);
}
END_TEST


/* Makes fd 0 a pipe that a child process fills with the whole file path (any size). */
static void stdin_from_file(const char *path) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf;
  long n;
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  ck_assert_int_ge(n, 0);
  rewind(f);
  buf = malloc(n ? (size_t)n : 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  stdin_from_child(buf, (size_t)n);
  free(buf);
}

/* A container of d 1 whose row i holds i, n rows. */
static void write_counting(const char *path, uint64_t n) {
  SlemVecWriter *w = NULL;
  SlemError err;
  float *x = malloc(65536 * sizeof *x);
  ck_assert_ptr_nonnull(x);
  ck_assert_int_eq(slem_vecwriter_open(&w, path, SLEM_FMT_SLEM, 1, -1, &err), SLEM_OK);
  for (uint64_t i = 0; i < n;) {
    size_t k = n - i < 65536 ? (size_t)(n - i) : 65536;
    for (size_t j = 0; j < k; j++) x[j] = (float)(i + j);
    ck_assert_int_eq(slem_vecwriter_write(w, x, k, &err), SLEM_OK);
    i += k;
  }
  ck_assert_int_eq(slem_vecwriter_close(w, &err), SLEM_OK);
  free(x);
}

/* More blocks of 1024 rows than the table holds (8192): blocks of 2048 rows, their CRCs
 * combined from the halves; every window read back, a corrupt byte found by the block that
 * holds it, whichever window reads it. */
START_TEST(container_blocks_fold_past_the_table) {
  const uint64_t n = 8192 * 1024 + 1500;
  char *p = tu_path("big.slem");
  SlemVecReader *r = NULL;
  SlemError err;
  float x[3000];
  size_t got;
  const uint64_t starts[] = {0, 1, 2047, 2048, 4000000, n - 1500, n - 1};
  write_counting(p, n);
  ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_msg(strstr(slem_vecreader_meta(r), "\"rows\":\t2048,\n\t\t\"count\":\t4097,"),
                "%s", slem_vecreader_meta(r));
  for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
    ck_assert_int_eq(slem_vecreader_seek(r, starts[s], &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_read_f32(r, x, 3000, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, n - starts[s] < 3000 ? n - starts[s] : 3000);
    for (size_t j = 0; j < got; j++) ck_assert_float_eq(x[j], (float)(starts[s] + j));
  }
  slem_vecreader_free(r);
  { /* record 4000001 (block 1954: records 3999745 to 4001792) changed */
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 65536 + 4000000 * 4 + 1, SEEK_SET), 0);
    ck_assert_int_eq(putc(0x55, f), 0x55);
    ck_assert_int_eq(fclose(f), 0);
  }
  ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_seek(r, 3000000, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read_f32(r, x, 1000, &got, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_seek(r, 4000100, &err), SLEM_EFORMAT); /* its block */
  ck_assert_msg(strstr(err.msg, "big.slem: checksum mismatch in the rows: records 3999745 to "
                               "4001792 (block 1954 of 4097) are corrupt"), "%s", err.msg);
  ck_assert_int_eq(slem_vecreader_seek(r, 3999000, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read_f32(r, x, 100, &got, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read_f32(r, x, 3000, &got, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "records 3999745 to 4001792 (block 1954 of 4097)"), "%s", err.msg);
  slem_vecreader_free(r);
  free(p);
}
END_TEST

/* Reads the whole of path ("-": stdin), returning the status of the first failure. */
static int read_all(const char *path, SlemError *err) {
  SlemVecReader *r = NULL;
  float x[4096];
  size_t got = 1;
  int st = slem_vecreader_open(&r, path, SLEM_FMT_AUTO, err);
  while (st == SLEM_OK && got > 0) st = slem_vecreader_read_f32(r, x, 4096 / slem_vecreader_dim(r), &got, err);
  slem_vecreader_free(r);
  return st;
}


/* Makes the container at path one of the release before block tables: "blocks" out of its
 * JSON header, the header's lengths and checksums made again (the payload's CRC, which
 * that release checks, is unchanged), the table's bytes zeroed. */
static void to_first_release(const char *path) {
  unsigned char room[65536];
  FILE *f = fopen(path, "r+b");
  cJSON *json;
  char *text;
  uint32_t len, crc;
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fread(room, 1, sizeof room, f), sizeof room);
  memcpy(&len, room + 20, 4);
  json = cJSON_ParseWithLength((const char *)room + 64, len);
  ck_assert_ptr_nonnull(json);
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(json, "blocks"));
  cJSON_DeleteItemFromObjectCaseSensitive(json, "blocks");
  text = cJSON_PrintUnformatted(json);
  len = (uint32_t)strlen(text);
  memset(room + 64, 0, sizeof room - 64);
  memcpy(room + 64, text, len);
  room[64 + len] = '\n';
  memcpy(room + 20, &len, 4);
  crc = slem_crc32(0, text, len);
  memcpy(room + 48, &crc, 4);
  crc = slem_crc32(0, room, 60);
  memcpy(room + 60, &crc, 4);
  ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
  ck_assert_uint_eq(fwrite(room, 1, sizeof room, f), sizeof room);
  ck_assert_int_eq(fclose(f), 0);
  free(text);
  cJSON_Delete(json);
}

/* A container of the release before block tables: read whole and in windows from a file,
 * whole from a pipe, verified whole at the open either way; a pipe holds it whole for
 * that, up to 64 MiB, and refuses a larger one before reading its rows. */
START_TEST(containers_without_a_table) {
  char *p = tu_path("v1.slem"), *big = tu_path("v1big.slem");
  SlemVecReader *r = NULL;
  SlemError err;
  float x[3000];
  size_t got;
  write_counting(p, 3000);
  to_first_release(p);
  ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_ptr_null(strstr(slem_vecreader_meta(r), "blocks"));
  ck_assert_int_eq(slem_vecreader_seek(r, 2500, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read_f32(r, x, 3000, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, 500);
  ck_assert_float_eq(x[499], 2999.0f);
  slem_vecreader_free(r);
  ck_assert_int_eq(read_all(p, &err), SLEM_OK);
  stdin_from_file(p);
  ck_assert_int_eq(read_all("-", &err), SLEM_OK);
  wait(NULL);
  { /* record 2001 changed: refused at the open, whatever is read */
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 65536 + 2000 * 4, SEEK_SET), 0);
    ck_assert_int_eq(putc(0x7f, f), 0x7f);
    ck_assert_int_eq(fclose(f), 0);
  }
  ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "v1.slem: checksum mismatch in the rows: corrupt"), "%s", err.msg);
  stdin_from_file(p);
  ck_assert_int_eq(read_all("-", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "<stdin>: checksum mismatch in the rows: corrupt"), "%s", err.msg);
  wait(NULL);
  /* 17 Mi rows of 4 bytes: 68 MiB, more than a pipe holds */
  write_counting(big, (uint64_t)17 << 20);
  to_first_release(big);
  ck_assert_int_eq(read_all(big, &err), SLEM_OK);
  stdin_from_file(big);
  ck_assert_int_eq(read_all("-", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "<stdin>: a container without a block table (written before "
                               "them) on a pipe is held whole to be verified, up to 64 MiB"),
                "%s", err.msg);
  close(0);
  wait(NULL);
  unlink(big);
  free(p);
  free(big);
}
END_TEST

/* A container whose ids repeat (no slem tool writes one: their ids files are checked) is
 * refused from a file and from a pipe, naming both records. */
START_TEST(container_ids_unique_from_file_and_pipe) {
  char *p = tu_path("dup.slem");
  SlemIds *a = NULL, *b = NULL, *both = NULL;
  SlemIds *parts[2];
  SlemVecWriter *w = NULL;
  SlemDescMeta m;
  SlemError err;
  float x[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  ck_assert_int_eq(slem_ids_unpack(&a, "a", "x\0y\0", 4, 2, &err), SLEM_OK);
  ck_assert_int_eq(slem_ids_unpack(&b, "b", "z\0x\0", 4, 2, &err), SLEM_OK);
  parts[0] = a;
  parts[1] = b;
  ck_assert_int_eq(slem_ids_unique(parts, 2, "database file", &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "b (database file 2): record 2: id 'x' appears twice (a (database "
                            "file 1): record 1): rows named alike could not be told apart");
  ck_assert_int_eq(slem_ids_concat(&both, parts, 2, &err), SLEM_OK);
  memset(&m, 0, sizeof m);
  m.ids = both;
  ck_assert_int_eq(slem_vecwriter_open(&w, p, SLEM_FMT_SLEM, 1, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_set_meta(w, &m, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, x, 4, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_close(w, &err), SLEM_OK);
  ck_assert_int_eq(read_all(p, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "dup.slem: record 4: id 'x' appears twice (") &&
                strstr(err.msg, "dup.slem: record 1)"), "%s", err.msg);
  stdin_from_file(p);
  ck_assert_int_eq(read_all("-", &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "<stdin>: record 4: id 'x' appears twice (<stdin>: record 1)"),
                "%s", err.msg);
  wait(NULL);
  slem_ids_free(a);
  slem_ids_free(b);
  slem_ids_free(both);
  free(p);
}
END_TEST

/* A container's ids section: text that tsv and jsonl can carry, or refused naming the record. */
START_TEST(container_ids_are_text) {
  static const struct { const char *buf; size_t bytes; const char *msg; } bad[] = {
      {"ok\0\xff\xfe\0", 6, "c.slem: record 2: id is not UTF-8 text"},
      {"ok\0a\xc3\0", 6, "c.slem: record 2: id is not UTF-8 text"},
      {"a\tb\0ok\0", 7, "c.slem: record 1: id contains white space or NUL"},
      {"ok\0a\x1b[0m\0", 9, "c.slem: record 2: id contains the control character 0x1b"},
      {"ok\0a\x7f\0", 6, "c.slem: record 2: id contains the control character 0x7f"},
      {"ok\0\0", 4, "c.slem: record 2: empty id"},
      {"ok\0ok\0", 6, "c.slem: record 2: id 'ok' appears twice (c.slem: record 1)"},
  };
  SlemIds *ids = NULL;
  SlemError err;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(slem_ids_unpack(&ids, "c.slem", bad[i].buf, bad[i].bytes, 2, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, bad[i].msg), "%zu: %s", i, err.msg);
    ck_assert_ptr_null(ids);
  }
  ck_assert_int_eq(slem_ids_unpack(&ids, "c.slem", "caf\xc3\xa9\0ok\0", 9, 2, &err), SLEM_OK);
  ck_assert_str_eq(slem_ids_get(ids, 0), "caf\xc3\xa9");
  slem_ids_free(ids);
}
END_TEST

/* Records laid out as the caller's rows (fbin float32 read as float, npy <f8 read as double)
 * are read straight into them: the rows with a NaN or an Inf are skipped there as anywhere,
 * in blocks that end within them, and the others come out in order. */
START_TEST(records_read_in_place_skip_as_others) {
  const size_t n = 7, d = 3;
  double x[7 * 3];
  char *fb = tu_path("nf.fbin"), *np = tu_path("nf.npy");
  for (size_t i = 0; i < n * d; i++) x[i] = (double)(i + 1) / 8;
  x[1 * d + 2] = NAN;      /* record 2 */
  x[4 * d + 0] = INFINITY; /* record 5 */
  x[6 * d + 1] = -INFINITY; /* record 7, the last */
  {
    unsigned char buf[8 + 7 * 3 * 4];
    uint32_t h[2] = {(uint32_t)n, (uint32_t)d};
    memcpy(buf, h, 8);
    for (size_t i = 0; i < n * d; i++) {
      float v = (float)x[i];
      memcpy(buf + 8 + 4 * i, &v, 4);
    }
    tu_write_bytes(fb, buf, sizeof buf);
  }
  {
    char hdr[128];
    unsigned char buf[128 + sizeof x];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, "
                       "'shape': (%zu, %zu), }", n, d);
    while ((10 + len + 1) % 64 != 0) hdr[len++] = ' ';
    hdr[len++] = '\n';
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(len & 0xff);
    buf[9] = (unsigned char)(len >> 8);
    memcpy(buf + 10, hdr, (size_t)len);
    memcpy(buf + 10 + len, x, sizeof x);
    tu_write_bytes(np, buf, 10 + (size_t)len + sizeof x);
  }
  for (int k = 0; k < 2; k++) {
    const char *path = k ? np : fb;
    for (int f32 = 0; f32 < 2; f32++) {
      SlemVecReader *r = NULL;
      SlemError err;
      float rf[3 * 3];
      double rd[3 * 3], all[7 * 3];
      size_t got, m = 0;
      ck_assert_msg(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
      slem_vecreader_skip_nonfinite(r, 1);
      for (;;) {
        int st = f32 ? slem_vecreader_read_f32(r, rf, 3, &got, &err)
                     : slem_vecreader_read(r, rd, 3, &got, &err);
        ck_assert_msg(st == SLEM_OK, "%s", err.msg);
        if (!got) break;
        for (size_t i = 0; i < got * d; i++) all[m * d + i] = f32 ? rf[i] : rd[i];
        m += got;
      }
      ck_assert_uint_eq(m, 4);
      ck_assert_uint_eq(slem_vecreader_skipped(r), 3);
      for (size_t i = 0, o = 0; i < n; i++) {
        if (i == 1 || i == 4 || i == 6) continue;
        for (size_t j = 0; j < d; j++)
          ck_assert_msg(all[o * d + j] == (double)(float)x[i * d + j], "%s (%s): row %zu",
                        path, f32 ? "float" : "double", i + 1);
        o++;
      }
      slem_vecreader_free(r);
      /* without skipping, the first is an error naming file, record and value */
      ck_assert_int_eq(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err), SLEM_OK);
      ck_assert_int_eq(f32 ? slem_vecreader_read_f32(r, rf, 3, &got, &err)
                           : slem_vecreader_read(r, rd, 3, &got, &err), SLEM_EFORMAT);
      ck_assert_msg(strstr(err.msg, k ? "nf.npy: record 2: value 3 is NaN"
                                      : "nf.fbin: record 2: value 3 is NaN"), "%s", err.msg);
      slem_vecreader_free(r);
    }
  }
  free(fb);
  free(np);
}
END_TEST

START_TEST(float16_conversions) {
  /* every float16 converts to a float and back to itself */
  for (uint32_t h = 0; h < 0x10000; h++) {
    uint16_t back;
    float v = slem_half_to_float((uint16_t)h);
    if ((h & 0x7c00) == 0x7c00) continue; /* Inf, NaN */
    ck_assert_int_eq(slem_float_to_half(v, &back), 0);
    ck_assert_uint_eq(back, h);
  }
}
END_TEST

/* Inputs with no vectors: refused by slem_vecreader_open(), opened by
 * slem_vecreader_open_empty() with count 0, the header's dimension or the one given, and
 * no vector read; in every format, from a file and from a pipe. */
START_TEST(empty_inputs_open_when_allowed) {
  static const struct { const char *name; const char *bytes; size_t n; size_t d; } cases[] = {
    {"e.fvecs", "", 0, 5},
    {"e.txt", "# nothing\n\n", 11, 5},
    {"e.fbin", "\0\0\0\0\3\0\0\0", 8, 3},
    {"e.npy", NULL, 0, 4}, /* made below: shape (0, 4), Fortran order */
    {"e.bin", "", 0, 5}, /* no extension: recognised by content, which there is none of */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char *p = tu_path(cases[c].name);
    SlemVecReader *r = NULL;
    SlemError err;
    float x[16];
    size_t got = 1;
    if (cases[c].bytes) {
      tu_write_bytes(p, cases[c].bytes, cases[c].n);
    } else {
      char npy[128];
      int len = snprintf(npy, sizeof npy, "\x93NUMPY\x01%c%c%c{'descr': '<f4', "
                         "'fortran_order': True, 'shape': (0, 4), }", 0, 118, 0);
      memset(npy + len, ' ', sizeof npy - (size_t)len - 1);
      npy[127] = '\n';
      tu_write_bytes(p, npy, sizeof npy);
    }
    ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, "no vectors") || strstr(err.msg, "0 vectors"), "%s: %s",
                  cases[c].name, err.msg);
    ck_assert_msg(slem_vecreader_open_empty(&r, p, SLEM_FMT_AUTO, 5, &err) == SLEM_OK, "%s: %s",
                  cases[c].name, err.msg);
    ck_assert(slem_vecreader_is_empty(r));
    ck_assert_int_eq(slem_vecreader_count(r), 0);
    ck_assert_uint_eq(slem_vecreader_dim(r), cases[c].d);
    ck_assert_int_eq(slem_vecreader_read_f32(r, x, 3, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 0);
    ck_assert_int_eq(slem_vecreader_rewind(r, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_read_f32(r, x, 3, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 0);
    slem_vecreader_free(r);
    free(p);
  }
  { /* a file with vectors opens as always, not empty */
    char *p = tu_path("one.fvecs");
    const unsigned char one[8] = {1, 0, 0, 0, 0, 0, 0x80, 0x3f};
    SlemVecReader *r = NULL;
    SlemError err;
    tu_write_bytes(p, one, 8);
    ck_assert_int_eq(slem_vecreader_open_empty(&r, p, SLEM_FMT_AUTO, 5, &err), SLEM_OK);
    ck_assert(!slem_vecreader_is_empty(r));
    ck_assert_int_eq(slem_vecreader_count(r), 1);
    ck_assert_uint_eq(slem_vecreader_dim(r), 1);
    slem_vecreader_free(r);
    free(p);
  }
}
END_TEST

/* HDF5 far beyond the block sizes: 10 000 rows in gzip chunks of 333 rows (a chunk that is
 * no block), read in blocks of 997 rows as double and as float, after a rewind too; an
 * int64 dataset (converted to double by the library) and a NaN that names its record. */
START_TEST(hdf5_in_blocks) {
  enum { N = 10000, D = 8 };
  char *p = tu_path("big.h5"), path[4200];
  float *x = malloc((size_t)N * D * sizeof *x), *f = malloc(997 * D * sizeof *f);
  int64_t *iv = malloc((size_t)N * 3 * sizeof *iv);
  double *y = malloc(997 * D * sizeof *y);
  hsize_t dims[2] = {N, D}, chunk[2] = {333, D}, idims[2] = {N, 3};
  hid_t file, space, dcpl, ds;
  SlemVecReader *r = NULL;
  SlemError err;
  size_t got, row;
  ck_assert(x && f && iv && y);
  for (size_t i = 0; i < (size_t)N * D; i++) x[i] = (float)((i * 2654435761u) % 100003) / 977.0f - 50;
  for (size_t i = 0; i < (size_t)N * 3; i++) iv[i] = (int64_t)i * 1000003 - 7;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  file = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert(file >= 0);
  space = H5Screate_simple(2, dims, NULL);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 6);
  ds = H5Dcreate2(file, "grp_x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ck_assert(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  H5Dclose(ds);
  H5Sclose(space);
  space = H5Screate_simple(2, idims, NULL);
  ds = H5Dcreate2(file, "i64", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert(H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, iv) >= 0);
  H5Dclose(ds);
  H5Sclose(space);
  {
    float bad[2 * D] = {0};
    hsize_t bd[2] = {2, D};
    bad[D + 3] = NAN;
    space = H5Screate_simple(2, bd, NULL);
    ds = H5Dcreate2(file, "nan", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert(H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, bad) >= 0);
    H5Dclose(ds);
    H5Sclose(space);
  }
  H5Pclose(dcpl);
  H5Fclose(file);

  snprintf(path, sizeof path, "%s:grp_x", p);
  ck_assert_int_eq(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_format(r), SLEM_FMT_HDF5);
  ck_assert_int_eq(slem_vecreader_count(r), N);
  ck_assert_uint_eq(slem_vecreader_dim(r), D);
  for (int pass = 0; pass < 2; pass++) {
    row = 0;
    for (;;) {
      ck_assert_int_eq(pass ? slem_vecreader_read_f32(r, f, 997, &got, &err)
                            : slem_vecreader_read(r, y, 997, &got, &err), SLEM_OK);
      if (got == 0) break;
      for (size_t i = 0; i < got * D; i++)
        ck_assert(pass ? f[i] == x[row * D + i] : y[i] == (double)x[row * D + i]);
      row += got;
    }
    ck_assert_uint_eq(row, N);
    ck_assert_int_eq(slem_vecreader_rewind(r, &err), SLEM_OK);
  }
  slem_vecreader_free(r);

  snprintf(path, sizeof path, "%s:i64", p);
  ck_assert_int_eq(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err), SLEM_OK);
  row = 0;
  while (slem_vecreader_read(r, y, 997, &got, &err) == SLEM_OK && got > 0) {
    for (size_t i = 0; i < got * 3; i++) ck_assert(y[i] == (double)iv[row * 3 + i]);
    row += got;
  }
  ck_assert_uint_eq(row, N);
  slem_vecreader_free(r);

  snprintf(path, sizeof path, "%s:nan", p);
  ck_assert_int_eq(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read(r, y, 997, &got, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "big.h5:nan: record 2: value 4 is NaN"), "%s", err.msg);
  slem_vecreader_free(r);
  r = NULL;
  snprintf(path, sizeof path, "%s:missing", p);
  ck_assert_int_eq(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "no dataset 'missing' (it holds: grp_x, i64, nan)"), "%s", err.msg);
  ck_assert_ptr_null(r);
  free(x);
  free(f);
  free(iv);
  free(y);
  free(p);
}
END_TEST

/* Every row of the file read into all of x(n, d) float32, through the file's reader. */
static float *read_whole_f32(const char *path, size_t *n, size_t *d) {
  SlemVecReader *r = NULL;
  SlemError err;
  size_t got;
  float *x;
  ck_assert_int_eq(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err), SLEM_OK);
  *d = slem_vecreader_dim(r);
  *n = (size_t)slem_vecreader_count(r);
  x = malloc(*n * *d * sizeof *x);
  ck_assert_int_eq(slem_vecreader_read_f32(r, x, *n, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, *n);
  slem_vecreader_free(r);
  return x;
}

/* Reads every row of r in blocks of b, as float32 (f32) or double, following the CRC of
 * the values; returns the rows read. */
static size_t read_blocks(SlemVecReader *r, size_t b, int f32, uint32_t *crc) {
  size_t d = slem_vecreader_dim(r), got, total = 0;
  void *buf = malloc(b * d * 8);
  SlemError err;
  slem_vecreader_follow_values(r);
  do {
    int st = f32 ? slem_vecreader_read_f32(r, buf, b, &got, &err)
                 : slem_vecreader_read(r, buf, b, &got, &err);
    ck_assert_msg(st == SLEM_OK, "%s", err.msg);
    total += got;
  } while (got > 0);
  *crc = slem_vecreader_values_crc(r);
  free(buf);
  return total;
}

START_TEST(arrays_read_as_their_files) {
  const char *path = "testdata/digits/negatives.fvecs";
  size_t n, d;
  float *x = read_whole_f32(path, &n, &d);
  double *x64 = malloc(n * d * sizeof *x64);
  SlemVecReader *f = NULL, *a = NULL;
  SlemError err;
  uint32_t cf, ca;
  size_t got;
  for (size_t i = 0; i < n * d; i++) x64[i] = x[i];
  ck_assert_uint_gt(n, 300); /* beyond the blocks below, and the prefetch's */
  /* float32: as the fvecs file, in float32 and in double, whatever the blocks */
  for (int f32 = 0; f32 < 2; f32++) {
    ck_assert_int_eq(slem_vecreader_open(&f, path, SLEM_FMT_AUTO, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_open_array(&a, "negatives", x, SLEM_DTYPE_F4, n, d, &err),
                     SLEM_OK);
    ck_assert_uint_eq(slem_vecreader_dim(a), d);
    ck_assert_int_eq(slem_vecreader_count(a), (int64_t)n);
    ck_assert_int_eq(slem_vecreader_f32_exact(a), 1);
    ck_assert_int_eq(slem_vecreader_integers(a), 0);
    ck_assert_int_eq(slem_vecreader_format(a), SLEM_FMT_MEM);
    ck_assert_str_eq(slem_vecreader_name(a), "negatives");
    ck_assert_int_eq(slem_vecreader_can_seek(a), 1);
    ck_assert_uint_eq(read_blocks(f, 97, f32, &cf), n);
    ck_assert_uint_eq(read_blocks(a, 13, f32, &ca), n);
    ck_assert_uint_eq(ca, cf);
    ck_assert_uint_eq(slem_vecreader_done(a), n);
    /* again from the start, then from a row */
    ck_assert_int_eq(slem_vecreader_rewind(a, &err), SLEM_OK);
    ck_assert_uint_eq(read_blocks(a, 4096, f32, &ca), n);
    ck_assert_uint_eq(ca, cf);
    slem_vecreader_free(f);
    slem_vecreader_free(a);
  }
  {
    float row[4096];
    ck_assert_int_eq(slem_vecreader_open_array(&a, NULL, x, SLEM_DTYPE_F4, n, d, &err), SLEM_OK);
    ck_assert_str_eq(slem_vecreader_name(a), "array");
    ck_assert_int_eq(slem_vecreader_seek(a, 123, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_read_f32(a, row, 1, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 1);
    ck_assert_mem_eq(row, x + 123 * d, d * sizeof *x);
    slem_vecreader_free(a);
  }
  /* float64: the same values, read as double exactly, as float32 rounded */
  {
    double *y = malloc(n * d * sizeof *y);
    float *yf = malloc(n * d * sizeof *yf);
    ck_assert_int_eq(slem_vecreader_open_array(&a, "x", x64, SLEM_DTYPE_F8, n, d, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_f32_exact(a), 0);
    ck_assert_int_eq(slem_vecreader_read(a, y, n + 5, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, n);
    ck_assert_mem_eq(y, x64, n * d * sizeof *y);
    ck_assert_int_eq(slem_vecreader_read(a, y, n, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 0);
    ck_assert_int_eq(slem_vecreader_rewind(a, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecreader_read_f32(a, yf, n, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, n);
    ck_assert_mem_eq(yf, x, n * d * sizeof *yf);
    slem_vecreader_free(a);
    free(y);
    free(yf);
  }
  free(x);
  free(x64);
}
END_TEST

START_TEST(arrays_refuse_or_skip_nonfinite_rows) {
  enum { N = 600, D = 5 };
  static float x[N][D];
  static double y[N][D];
  float out[N][D];
  double outd[N][D];
  SlemVecReader *a = NULL;
  SlemError err;
  size_t got, total;
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < D; j++) x[i][j] = (float)(y[i][j] = (double)i + 0.25 * (double)j);
  x[300][2] = NAN;
  x[450][0] = -INFINITY;
  /* refused, naming the row and the column as the caller indexes them */
  ck_assert_int_eq(slem_vecreader_open_array(&a, "queries", x, SLEM_DTYPE_F4, N, D, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read_f32(a, &out[0][0], 256, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, 256);
  ck_assert_int_eq(slem_vecreader_read_f32(a, &out[0][0], 256, &got, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "queries: row 300, column 2: NaN");
  slem_vecreader_free(a);
  ck_assert_int_eq(slem_vecreader_open_array(&a, "q", x, SLEM_DTYPE_F4, N, D, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_seek(a, 301, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read(a, &outd[0][0], N, &got, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "q: row 450, column 0: infinite");
  slem_vecreader_free(a);
  /* skipped and counted, as the files' readers do */
  ck_assert_int_eq(slem_vecreader_open_array(&a, "q", x, SLEM_DTYPE_F4, N, D, &err), SLEM_OK);
  slem_vecreader_skip_nonfinite(a, 1);
  ck_assert_int_eq(slem_vecreader_can_seek(a), 0);
  total = 0;
  do {
    ck_assert_int_eq(slem_vecreader_read_f32(a, &out[total][0], 100, &got, &err), SLEM_OK);
    total += got;
  } while (got > 0);
  ck_assert_uint_eq(total, N - 2);
  ck_assert_uint_eq(slem_vecreader_skipped(a), 2);
  ck_assert_float_eq(out[299][0], 299.0f);
  ck_assert_float_eq(out[300][0], 301.0f); /* row 300 skipped */
  ck_assert_float_eq(out[448][0], 449.0f);
  ck_assert_float_eq(out[449][0], 451.0f); /* and row 450 */
  slem_vecreader_free(a);
  /* float64 beyond float32: read as double it is a value, as float32 it is refused */
  y[7][4] = 1e300;
  ck_assert_int_eq(slem_vecreader_open_array(&a, "x", y, SLEM_DTYPE_F8, N, D, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read(a, &outd[0][0], N, &got, &err), SLEM_OK);
  ck_assert_uint_eq(got, N);
  ck_assert_double_eq(outd[7][4], 1e300);
  ck_assert_int_eq(slem_vecreader_rewind(a, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecreader_read_f32(a, &out[0][0], N, &got, &err), SLEM_EFORMAT);
  ck_assert_str_eq(err.msg, "x: row 7, column 4: 1.0000000000000001e+300 is beyond float32's "
                   "range, in which the vectors are read");
  slem_vecreader_free(a);
  /* what cannot be an array */
  ck_assert_int_eq(slem_vecreader_open_array(&a, "x", y, 7, N, D, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "x: element type 7, not float32 or float64");
  ck_assert_ptr_null(a);
  ck_assert_int_eq(slem_vecreader_open_array(&a, "x", y, SLEM_DTYPE_F8, 0, D, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "x: no rows");
  ck_assert_int_eq(slem_vecreader_open_array(&a, "x", y, SLEM_DTYPE_F8, N, 0, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "x: 0 columns, not 1 to 1048576");
  ck_assert_int_eq(slem_vecreader_open_array(&a, "x", NULL, SLEM_DTYPE_F8, N, D, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "x: no data (a null pointer)");
  ck_assert_ptr_null(a);
  /* the format given by its id to the file reader finds no file to read */
  ck_assert_int_eq(slem_vecreader_open(&a, "testdata/digits/queries.fvecs", SLEM_FMT_MEM, &err),
                   SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "testdata/digits/queries.fvecs: the array format reads the "
                   "caller's memory, not a file");
  ck_assert_ptr_null(a);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("formats");
  TCase *tc = tcase_create("formats");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, names_come_from_one_table);
  tcase_add_test(tc, numpy_golden_files);
  tcase_add_test(tc, fortran_order_in_blocks);
  tcase_add_test(tc, prefetch_keeps_blocks);
  tcase_add_test(tc, prefetch_keep_wakes_the_reader);
  tcase_add_test(tc, fortran_order_from_a_pipe);
  tcase_add_test(tc, fortran_order_on_a_pipe_is_bounded);
  tcase_add_test(tc, fortran_order_truncated_on_a_pipe);
  tcase_add_test(tc, bad_npy_values);
  tcase_add_test(tc, bad_bin_files);
  tcase_add_test(tc, rows_beyond_the_count_file_and_pipe);
  tcase_add_test(tc, bin_round_trips);
  tcase_add_test(tc, float16_output_rounds_as_numpy);
  tcase_add_test(tc, int8_output_with_its_scale);
  tcase_add_test(tc, dtype_and_output_names);
  tcase_add_test(tc, float16_conversions);
  tcase_add_test(tc, double_rows_of_kernel_projections);
  tcase_add_test(tc, two_couplings_of_one_cache_named);
  tcase_add_test(tc, container_blocks_fold_past_the_table);
  tcase_add_test(tc, container_ids_unique_from_file_and_pipe);
  tcase_add_test(tc, container_ids_are_text);
  tcase_add_test(tc, containers_without_a_table);
  tcase_add_test(tc, records_read_in_place_skip_as_others);
  tcase_add_test(tc, empty_inputs_open_when_allowed);
  tcase_add_test(tc, hdf5_in_blocks);
  tcase_add_test(tc, arrays_read_as_their_files);
  tcase_add_test(tc, arrays_refuse_or_skip_nonfinite_rows);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
