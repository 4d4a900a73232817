/* Vector files, ids, the cache format and its checks, CRC-32, and which BLAS is bound. */
#include "testutil.h"

#include "../lib/io/io.h"

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <inttypes.h>
#include <math.h>

#include "../lib/formats/cache.h"
#include "../lib/encode/var_linear.h"
#include "../lib/encode/var_pca.h"
#include "../lib/encode/kind_recursive.h"
#include "../lib/encode/var_partial.h"
#include "../lib/encode/var_kernel.h"
#include "../lib/encode/cachekinds.h"
#include "../lib/io/crc32.h"
#include "../lib/io/fmt.h"
#include "../lib/io/ids.h"
#include "../lib/io/io.h"
#include "../lib/linalg/blas.h"
#include "../lib/io/libslem.h"
#include "../lib/formats/vecs.h"

/* Opens path and expects failure with status st and a message containing want. */
static void expect_open_error(const char *path, SlemFormat fmt, int st, const char *want) {
  SlemVecReader *r = NULL;
  SlemError err;
  int got = slem_vecreader_open(&r, path, fmt, &err);
  ck_assert_msg(got == st, "%s: status %d, expected %d (%s)", path, got, st, got ? err.msg : "");
  ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
  ck_assert_ptr_null(r);
}

/* Opens path and reads it all, expecting failure with a message containing want. */
static void expect_read_error(const char *path, const char *want) {
  SlemVecReader *r = NULL;
  SlemError err;
  double buf[4096];
  size_t got;
  int st;
  ck_assert_msg(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
  do st = slem_vecreader_read(r, buf, 4096 / slem_vecreader_dim(r), &got, &err);
  while (st == SLEM_OK && got > 0);
  ck_assert_msg(st == SLEM_EFORMAT, "%s: read status %d", path, st);
  ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
  slem_vecreader_free(r);
}

START_TEST(round_trip_every_format) {
  static const SlemFormat fmts[] = {SLEM_FMT_FVECS, SLEM_FMT_NPY, SLEM_FMT_TEXT, SLEM_FMT_BVECS,
                                    SLEM_FMT_IVECS};
  static const char *ext[] = {"fvecs", "npy", "txt", "bvecs", "ivecs"};
  const size_t n = 2500, d = 7; /* more than one block either way */
  float *x = malloc(n * d * sizeof *x);
  double *back = malloc(n * d * sizeof *back);
  tu_seed(21);
  for (size_t f = 0; f < 5; f++) {
    int integral = fmts[f] == SLEM_FMT_BVECS || fmts[f] == SLEM_FMT_IVECS;
    char name[32];
    char *path;
    SlemVecWriter *w = NULL;
    SlemVecReader *r = NULL;
    SlemError err;
    size_t got, total = 0;
    for (size_t i = 0; i < n * d; i++)
      x[i] = integral ? (float)(tu_next() % 256) : (float)(tu_gauss() * 1e3);
    x[3] = integral ? 255 : 1.17549435e-38f; /* extremes survive %.9g */
    x[4] = integral ? 0 : -3.40282347e38f;
    snprintf(name, sizeof name, "rt.%s", ext[f]);
    path = tu_path(name);
    ck_assert_int_eq(slem_vecwriter_open(&w, path, SLEM_FMT_AUTO, d, -1, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecwriter_write(w, x, 1000, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecwriter_write(w, x + 1000 * d, n - 1000, &err), SLEM_OK);
    ck_assert_int_eq(slem_vecwriter_close(w, &err), SLEM_OK);
    /* by extension, then by content alone through a name without one */
    for (int sniff = 0; sniff < 2; sniff++) {
      char *p2 = tu_path("noext");
      if (sniff) ck_assert_int_eq(link(path, p2) == 0 || (unlink(p2) == 0 && link(path, p2) == 0), 1);
      if (fmts[f] == SLEM_FMT_IVECS && sniff) { /* ivecs is fvecs-shaped: needs --format */
        ck_assert_int_eq(slem_vecreader_open(&r, p2, SLEM_FMT_AUTO, &err), SLEM_EFORMAT);
        ck_assert_msg(strstr(err.msg, "fvecs or ivecs?"), "%s", err.msg);
        unlink(p2);
        free(p2);
        continue;
      }
      ck_assert_msg(slem_vecreader_open(&r, sniff ? p2 : path, SLEM_FMT_AUTO, &err) == SLEM_OK,
                    "%s", err.msg);
      ck_assert_int_eq(slem_vecreader_format(r), fmts[f]);
      ck_assert_uint_eq(slem_vecreader_dim(r), d);
      total = 0;
      do {
        ck_assert_int_eq(slem_vecreader_read(r, back + total * d, 333, &got, &err), SLEM_OK);
        total += got;
      } while (got > 0);
      ck_assert_uint_eq(total, n);
      for (size_t i = 0; i < n * d; i++) ck_assert_float_eq((float)back[i], x[i]);
      /* and again after a rewind */
      ck_assert_int_eq(slem_vecreader_rewind(r, &err), SLEM_OK);
      ck_assert_int_eq(slem_vecreader_read(r, back, 5, &got, &err), SLEM_OK);
      ck_assert_uint_eq(got, 5);
      ck_assert_float_eq((float)back[0], x[0]);
      slem_vecreader_free(r);
      if (sniff) unlink(p2);
      free(p2);
    }
    free(path);
  }
  free(x);
  free(back);
}
END_TEST

/* npy files written byte by byte, as numpy writes them */
static void write_npy(const char *path, int major, const char *dict, const void *data,
                      size_t nbytes) {
  unsigned char buf[4096];
  size_t pre = major == 1 ? 10 : 12, len = strlen(dict), hl = len + 1, pos = 0;
  while ((pre + hl) % 64) hl++;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  if (major == 1) {
    buf[8] = (unsigned char)(hl & 0xFF);
    buf[9] = (unsigned char)(hl >> 8);
  } else {
    uint32_t h = (uint32_t)hl;
    memcpy(buf + 8, &h, 4);
  }
  pos = pre;
  memcpy(buf + pos, dict, len);
  memset(buf + pos + len, ' ', hl - len - 1);
  buf[pre + hl - 1] = '\n';
  pos = pre + hl;
  memcpy(buf + pos, data, nbytes);
  tu_write_bytes(path, buf, pos + nbytes);
}

START_TEST(npy_versions_and_dtypes) {
  double f8[6] = {1, 2, 3, 4, 5, 6.5}, back[6];
  unsigned char u1[6] = {0, 1, 2, 253, 254, 255};
  char *p = tu_path("a.npy");
  SlemVecReader *r = NULL;
  SlemError err;
  size_t got;
  for (int v = 1; v <= 3; v++) {
    write_npy(p, v, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f8, sizeof f8);
    ck_assert_msg(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_uint_eq(slem_vecreader_dim(r), 3);
    ck_assert_int_eq(slem_vecreader_count(r), 2);
    ck_assert_int_eq(slem_vecreader_read(r, back, 10, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 2);
    ck_assert_double_eq(back[5], 6.5);
    ck_assert_int_eq(slem_vecreader_read(r, back, 10, &got, &err), SLEM_OK);
    ck_assert_uint_eq(got, 0);
    slem_vecreader_free(r);
  }
  write_npy(p, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (6,), }", u1, 6);
  ck_assert_int_eq(slem_vecreader_open(&r, p, SLEM_FMT_AUTO, &err), SLEM_OK);
  ck_assert_uint_eq(slem_vecreader_dim(r), 6);
  ck_assert_int_eq(slem_vecreader_count(r), 1);
  ck_assert_int_eq(slem_vecreader_read(r, back, 10, &got, &err), SLEM_OK);
  ck_assert_double_eq(back[5], 255);
  slem_vecreader_free(r);
  free(p);
}
END_TEST

START_TEST(bad_inputs) {
  char *p = tu_path("bad.fvecs"), *pn = tu_path("bad.npy"), *pt = tu_path("bad.txt");
  double x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  unsigned char raw[256];
  float f4[4] = {1, 2, 3, 4};
  int32_t dim;

  tu_write_bytes(p, "", 0);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "empty file");
  expect_open_error("/nonexistent/x.fvecs", SLEM_FMT_AUTO, SLEM_EIO, "/nonexistent/x.fvecs: No such file");
  expect_open_error("/tmp", SLEM_FMT_AUTO, SLEM_EIO, "is a directory");

  tu_write_fvecs(p, x, 3, 4);
  truncate(p, 3 * 20 - 2);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "record 3 is truncated");

  /* mixed dimensions: a d=4 record then a d=3 record then padding to a multiple of 20 */
  dim = 4;
  memcpy(raw, &dim, 4);
  memcpy(raw + 4, f4, 16);
  dim = 3;
  memcpy(raw + 20, &dim, 4);
  memcpy(raw + 24, f4, 16);
  tu_write_bytes(p, raw, 40);
  expect_read_error(p, "record 2: dimension 3, expected 4");

  /* NaN and Inf, named by record and value */
  f4[2] = NAN;
  dim = 4;
  memcpy(raw + 20, &dim, 4);
  memcpy(raw + 24, f4, 16);
  tu_write_bytes(p, raw, 40);
  expect_read_error(p, "record 2: value 3 is NaN");
  f4[2] = INFINITY;
  memcpy(raw + 24, f4, 16);
  tu_write_bytes(p, raw, 40);
  expect_read_error(p, "record 2: value 3 is infinite");

  /* absurd dimension */
  dim = -5;
  memcpy(raw, &dim, 4);
  tu_write_bytes(p, raw, 40);
  expect_open_error(p, SLEM_FMT_AUTO, SLEM_EFORMAT, "dimension -5 is out of range");

  /* npy: the order, dtypes, shapes, truncation (Fortran order and big-endian floats are
   * read since the format table: tests/check_formats.c) */
  write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "'fortran_order' is neither True nor False");
  write_npy(pn, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2, 3), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "dtype '<u8' is not supported"); /* <i8 is read */
  write_npy(pn, 1, "{'descr': '>c8', 'fortran_order': False, 'shape': (2, 3), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "dtype '>c8' is not supported");
  write_npy(pn, 1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3), }", x, 24);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "dtype '|f4' is not supported");
  write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 1), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "3 dimensions");
  write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "out of range");
  write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 4), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "truncated or corrupt");
  write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }", x, 48);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "truncated or corrupt");
  write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", x, 0);
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "no vectors");
  tu_write_bytes(pn, "\x93NUMPY\x01\x00\xff", 9); /* the magic, cut in its header length */
  expect_open_error(pn, SLEM_FMT_AUTO, SLEM_EFORMAT, "npy header truncated");
  tu_write_bytes(pn, "\x93NUMPX\x01\x00\xff\x00", 10);
  expect_open_error(pn, SLEM_FMT_NPY, SLEM_EFORMAT, "not an npy file");
  {
    double bad[6] = {1, 2, 3, 4, INFINITY, 6};
    write_npy(pn, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", bad, 48);
    expect_read_error(pn, "record 2: value 2 is infinite");
  }

  /* text */
  tu_write_bytes(pt, "1 2 3\n4,5,6\n# a comment\n\n7 8\n", 29);
  expect_read_error(pt, "line 5: 2 values, expected 3");
  tu_write_bytes(pt, "1 2 3\n4 x 6\n", 12);
  expect_read_error(pt, "line 2: value 2: not a number: 'x'");
  tu_write_bytes(pt, "1 2 3\n4 nan 6\n", 14);
  expect_read_error(pt, "line 2: value 2 is not finite");
  tu_write_bytes(pt, "1 2 3\n4 0x1p3 6\n", 16);
  expect_read_error(pt, "line 2: value 2: '0x1p3' is hexadecimal: text values are decimal numbers");
  tu_write_bytes(pt, "1 2 3\r4 5 6\r", 12); /* one line: refused at open */
  expect_open_error(pt, SLEM_FMT_AUTO, SLEM_EFORMAT,
                    "line 1: a CR byte (column 6) inside the line: lines end with LF or CR LF");
  tu_write_bytes(pt, "1 2 3\n4 \r5 6\n", 13);
  expect_read_error(pt, "line 2: a CR byte (column 3) inside the line");
  tu_write_bytes(pt, "1 2 3\n4 x\0335 6\n", 14);
  expect_read_error(pt, "line 2: value 2: not a number: 'x\\x1b5'");
  tu_write_bytes(pt, "1 2 3\n4 5 6 7\n", 14);
  expect_read_error(pt, "line 2: 4 values, expected 3");
  tu_write_bytes(pt, "\n# nothing\n", 11);
  expect_open_error(pt, SLEM_FMT_AUTO, SLEM_EFORMAT, "empty file");
  free(p);
  free(pn);
  free(pt);
}
END_TEST

START_TEST(writer_refuses_values_that_do_not_fit) {
  char *p = tu_path("w.bvecs");
  float x[2] = {3, 256};
  SlemVecWriter *w = NULL;
  SlemError err;
  ck_assert_int_eq(slem_vecwriter_open(&w, p, SLEM_FMT_AUTO, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, x, 1, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "record 1: value 2 (256) does not fit bvecs"));
  slem_vecwriter_abort(w);
  ck_assert(!tu_file_exists(p));
  free(p);
}
END_TEST

START_TEST(ids_files) {
  char *p = tu_path("x.ids");
  SlemIds *ids = NULL;
  SlemError err;
  tu_write_bytes(p, "a\nbb\r\nc", 7);
  ck_assert_int_eq(slem_ids_read(&ids, p, &err), SLEM_OK);
  ck_assert_uint_eq(slem_ids_count(ids), 3);
  ck_assert_str_eq(slem_ids_get(ids, 1), "bb");
  ck_assert_str_eq(slem_ids_get(ids, 2), "c");
  slem_ids_free(ids);
  tu_write_bytes(p, "a\n\nc\n", 5);
  ck_assert_int_eq(slem_ids_read(&ids, p, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "line 2: empty id"));
  tu_write_bytes(p, "a b\n", 4);
  ck_assert_int_eq(slem_ids_read(&ids, p, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "line 1: id contains white space"));
  free(p);
}
END_TEST

/* The last bytes of an input: sought in a regular file, read through on a pipe (as a file
 * whose size says 0 is read), the same bytes and place either way. */
START_TEST(tail_of_a_file_and_of_a_pipe) {
  enum { N = 50000 };
  static char text[N];
  static const size_t ns[] = {1, 7, 4096, N, N + 10};
  char *p = tu_path("tail.txt"), pipe_name[64];
  for (size_t i = 0; i < N; i++) text[i] = (char)('a' + (i * 7 + i / 13) % 26);
  tu_write_bytes(p, text, N);
  for (size_t w = 0; w < sizeof ns / sizeof *ns; w++) {
    for (int piped = 0; piped < 2; piped++) {
      SlemIn *in = NULL;
      SlemError err;
      size_t n = ns[w], g = 0, want = n < N ? n : N;
      uint64_t at = 1;
      char *buf = malloc(n);
      int fds[2];
      ck_assert_ptr_nonnull(buf);
      if (piped) {
        ck_assert_int_eq(pipe(fds), 0);
        ck_assert_int_eq(write(fds[1], text, N), N); /* within the pipe's buffer */
        close(fds[1]);
        snprintf(pipe_name, sizeof pipe_name, "/proc/self/fd/%d", fds[0]);
      }
      ck_assert_int_eq(slem_in_open(&in, piped ? pipe_name : p, &err), SLEM_OK);
      ck_assert_int_eq(slem_in_seekable(in), !piped);
      ck_assert_int_eq(slem_in_tail(in, buf, n, &g, &at, &err), SLEM_OK);
      ck_assert_uint_eq(g, want);
      ck_assert_uint_eq(at, N - want);
      ck_assert_int_eq(memcmp(buf, text + N - want, want), 0);
      slem_in_free(in);
      if (piped) close(fds[0]);
      free(buf);
    }
  }
  free(p);
}
END_TEST

/* A NUL byte inside a line is an error naming the file, the line and the column, from
 * the reader every line file goes through; lines before it come back whole. */
START_TEST(nul_byte_in_a_line) {
  static const char text[] = "one\ntwo\r\nth\0ree\nfour\n";
  char *p = tu_path("nul.txt");
  SlemIn *in = NULL;
  SlemError err;
  char *line;
  size_t len;
  tu_write_bytes(p, text, sizeof text - 1);
  ck_assert_int_eq(slem_in_open(&in, p, &err), SLEM_OK);
  ck_assert_int_eq(slem_in_getline(in, &line, &len, &err), SLEM_OK);
  ck_assert_str_eq(line, "one");
  ck_assert_int_eq(slem_in_getline(in, &line, &len, &err), SLEM_OK);
  ck_assert_str_eq(line, "two");
  ck_assert_int_eq(slem_in_getline(in, &line, &len, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, "nul.txt: line 3: a NUL byte (column 3): not a text line") != NULL,
                "%s", err.msg);
  /* from the start again, the numbers too */
  ck_assert_int_eq(slem_in_seek(in, 0, &err), SLEM_OK);
  ck_assert_int_eq(slem_in_getline(in, &line, &len, &err), SLEM_OK);
  ck_assert_int_eq(slem_in_getline(in, &line, &len, &err), SLEM_OK);
  ck_assert_int_eq(slem_in_getline(in, &line, &len, &err), SLEM_EFORMAT);
  ck_assert_msg(strstr(err.msg, ": line 3: ") != NULL, "%s", err.msg);
  slem_in_free(in);
  free(p);
}
END_TEST

START_TEST(crc32_check_value) {
  ck_assert_uint_eq(slem_crc32(0, "123456789", 9), 0xCBF43926u);
  /* split anywhere gives the same as whole */
  ck_assert_uint_eq(slem_crc32(slem_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
  ck_assert_uint_eq(slem_crc32(0, "", 0), 0);
}
END_TEST

/* The carry-less multiplication path (long buffers, where the CPU has it) against zlib's
 * values (Python's zlib.crc32 of the same bytes) and against the tables at every length
 * up to 300, every offset in 16 bytes, and split anywhere. */
START_TEST(crc32_long_buffers_as_zlib) {
  size_t n = (size_t)1 << 20;
  unsigned char *b = malloc(n);
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((i * 7 + i / 256) % 251);
  ck_assert_uint_eq(slem_crc32(0, b, n), 0x52a36025u);
  ck_assert_uint_eq(slem_crc32(0, b, 1000003), 0x0286ada6u);
  ck_assert_uint_eq(slem_crc32(0, b + 5, 777), 0x347b4b42u);
  ck_assert_uint_eq(slem_crc32_tables(0, b, n), 0x52a36025u);
  for (size_t off = 0; off < 16; off++)
    for (size_t len = 0; len <= 300; len++) {
      uint32_t want = slem_crc32_tables(0, b + off, len);
      ck_assert_msg(slem_crc32(0, b + off, len) == want, "offset %zu, length %zu", off, len);
      ck_assert_uint_eq(slem_crc32(slem_crc32(0, b + off, len / 3), b + off + len / 3,
                                   len - len / 3), want);
    }
  ck_assert_uint_eq(slem_crc32(slem_crc32(0, b, 70001), b + 70001, n - 70001), 0x52a36025u);
  free(b);
}
END_TEST

/* writes a small linear cache and returns its bytes */
static unsigned char *cache_bytes(const char *path, size_t *len) {
  double mu[3] = {1, 2, 3}, ainv[9] = {2, 0.5, 0, 0.5, 2, 0, 0, 0, 1};
  const char *inputs[] = {"neg.fvecs"};
  SlemProvenance prov = {"check_io", inputs, 1, NULL};
  SlemError err;
  FILE *f;
  unsigned char *b;
  SlemLinearInfo info = {0.25, 0.1, 7.5, 0.2};
  ck_assert_int_eq(slem_cache_write_linear(path, 3, 42, &info, mu, ainv, &prov, &err), SLEM_OK);
  f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  rewind(f);
  b = malloc(*len);
  ck_assert_uint_eq(fread(b, 1, *len, f), *len);
  fclose(f);
  return b;
}

static void expect_cache_error(const char *path, const unsigned char *b, size_t len,
                               const char *want) {
  SlemCache *c = NULL;
  SlemError err;
  tu_write_bytes(path, b, len);
  ck_assert_int_ne(slem_cache_read(&c, path, &err), SLEM_OK);
  ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
  ck_assert_ptr_null(c);
}

START_TEST(cache_round_trip_and_corruption) {
  char *p = tu_path("c.slem"), *q = tu_path("bad.slem");
  size_t len;
  unsigned char *b = cache_bytes(p, &len), *m = malloc(len);
  SlemCache *c = NULL;
  SlemError err;
  uint32_t v;
  ck_assert_msg(slem_cache_read(&c, p, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_str_eq(c->kind, "linear");
  ck_assert_ptr_nonnull(slem_cache_linear(c));
  ck_assert_uint_eq(c->d, 3);
  ck_assert_uint_eq(c->n, 42);
  ck_assert_double_eq(slem_cache_linear(c)->lambda, 0.25);
  ck_assert_double_eq(slem_cache_linear(c)->mu[2], 3);
  ck_assert_double_eq(slem_cache_linear(c)->ainv[1], 0.5);
  ck_assert_uint_eq((uintptr_t)slem_cache_linear(c)->ainv % 64, 0);
  ck_assert_ptr_nonnull(strstr(slem_cache_json(c), "\"neg.fvecs\""));
  {
    /* the fingerprint, made when first asked: FNV-1a of the payload, as the header has it */
    uint64_t off, plen, h = 1469598103934665603ull;
    char want[64];
    memcpy(&off, b + 32, 8);
    memcpy(&plen, b + 40, 8);
    for (uint64_t i = 0; i < plen; i++) h = (h ^ b[off + i]) * 1099511628211ull;
    snprintf(want, sizeof want, "%016" PRIx64, h);
    ck_assert_str_eq(slem_cache_fingerprint(c), want);
    snprintf(want, sizeof want, "\"fingerprint\":\t\"%016" PRIx64 "\"", h);
    ck_assert_msg(strstr(slem_cache_json(c), want), "%s", slem_cache_json(c));
  }
  slem_cache_free(c);
  ck_assert(slem_cache_sniff(p));

  memcpy(m, b, len);
  m[len - 3] ^= 1; /* a payload bit */
  expect_cache_error(q, m, len, "checksum mismatch in the payload");
  memcpy(m, b, len);
  m[70] ^= 1; /* a JSON bit */
  expect_cache_error(q, m, len, "checksum mismatch in the JSON header");
  memcpy(m, b, len);
  m[45] ^= 1; /* payload length, guarded by the header checksum */
  expect_cache_error(q, m, len, "checksum mismatch in the fixed header");
  memcpy(m, b, len);
  v = 2;
  memcpy(m + 8, &v, 4);
  expect_cache_error(q, m, len, "version 2; this slem reads version 1");
  memcpy(m, b, len);
  v = 0x04030201u;
  memcpy(m + 12, &v, 4);
  expect_cache_error(q, m, len, "other byte order");
  memcpy(m, b, len);
  m[1] = 'X';
  expect_cache_error(q, m, len, "bad magic");
  expect_cache_error(q, b, len - 8, "disagree with the file size");
  expect_cache_error(q, b, 30, "too short");
  expect_cache_error(q, b, 0, "empty");
  ck_assert_int_eq(slem_cache_read(&c, "/nonexistent.slem", &err), SLEM_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent.slem: No such file"));
  free(b);
  free(m);
  free(p);
  free(q);
}
END_TEST

/* A cache file with the given JSON header and payload and valid checksums: what an
 * attacker or a bug could write, so that every field check is reached. */
static void write_crafted(const char *path, const char *json, const double *payload, size_t n) {
  unsigned char hdr[64] = {0x89, 'S', 'L', 'E', 'M', '\r', '\n', 0x1a};
  uint32_t v, jl = (uint32_t)strlen(json);
  uint64_t off = 64, pay_off = (64 + jl + 1 + 63) / 64 * 64, pay_len = n * 8;
  FILE *f = fopen(path, "wb");
  v = 1; memcpy(hdr + 8, &v, 4);
  v = 0x01020304u; memcpy(hdr + 12, &v, 4);
  v = 64; memcpy(hdr + 16, &v, 4);
  memcpy(hdr + 20, &jl, 4);
  memcpy(hdr + 24, &off, 8);
  memcpy(hdr + 32, &pay_off, 8);
  memcpy(hdr + 40, &pay_len, 8);
  v = slem_crc32(0, json, jl); memcpy(hdr + 48, &v, 4);
  v = slem_crc32(0, payload, pay_len); memcpy(hdr + 52, &v, 4);
  v = slem_crc32(0, hdr, 60); memcpy(hdr + 60, &v, 4);
  fwrite(hdr, 1, 64, f);
  fwrite(json, 1, jl, f);
  for (uint64_t p = 64 + jl; p < pay_off; p++) fputc(0, f);
  fwrite(payload, 8, n, f);
  fclose(f);
}

/* Every kind's data come through its own accessor only: each accessor returns its kind's
 * data for a cache of that kind (slem_cache_eigen() for a linear cache with eigenpairs and a
 * pca cache) and NULL for every other kind. */
START_TEST(cache_kind_accessors) {
  enum { D = 3, N = 4, R = 2 };
  const double mu[D] = {1, 2, 3}, ainv[D * D] = {2, 0.5, 0, 0.5, 2, 0, 0, 0, 2};
  const double evals[D] = {3, 2, 1}, evecs[D * D] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double *const stage_mu[2] = {mu, evals}, *const stage_ainv[2] = {ainv, evecs};
  const double lambdas[2] = {0.25, 0.5}, traces[2] = {6, 3}, rconds[2] = {0.5, 0.25};
  const double negs[N * D] = {0}, lp[R * R] = {1, 0, 0.5, 2}, ginv[R * R] = {1, 0, 0, 1};
  const double bneg[N * R] = {0}, mu_b[R] = {0.5, 0.25};
  const uint64_t node[3] = {2, 0, N};  /* level 2: the 4 leaves of one row each */
  const double node_mu[D] = {1, 1, 1}, node_scatter[D * D] = {0};
  SlemLinearInfo li = {0.25, -1, 6, 0.5};
  SlemPartialInfo pi = {1, 0, N, N, N, 0, 0, 1, node, node_mu, node_scatter};
  SlemKernel k;
  SlemKernelInfo ki;
  SlemKernelSections ks = {negs, lp, mu_b, ginv, negs, NULL, bneg};
  const char *kinds[6] = {"linear", "linear", "pca", "partial", "kernel", "recursive"};
  const char *names[6] = {"k-linear.slem", "k-eigen.slem", "k-pca.slem", "k-partial.slem",
                          "k-kernel.slem", "k-recursive.slem"};
  SlemError err;
  ck_assert_int_eq(slem_kernel_parse(&k, "exp:gamma=0.7", &err), SLEM_OK);
  ki = (SlemKernelInfo){&k, R, 0.5, -1, 3, 1, 2, -1, 0, SLEM_FACTOR_ICD, 1};
  for (int i = 0; i < 6; i++) {
    char *path = tu_path(names[i]);
    SlemCache *c = NULL;
    int st = SLEM_OK;
    switch (i) {
    case 0: st = slem_cache_write_linear(path, D, N, &li, mu, ainv, NULL, &err); break;
    case 1:
      st = slem_cache_write_eigen(path, D, N, 0.25, -1, 6, 0.5, 0, mu, ainv, evals, evecs, NULL,
                                  &err);
      break;
    case 2:
      st = slem_cache_write_pca(path, D, N, R, 0.25, -1, 6, mu, evals, evecs, NULL, &err);
      break;
    case 3: st = slem_cache_write_partial(path, D, N, &pi, NULL, &err); break;
    case 4: st = slem_cache_write_kernel(path, D, N, &ki, &ks, NULL, &err); break;
    case 5:
      st = slem_cache_write_recursive(path, D, N, 2, -1, lambdas, traces, rconds, stage_mu,
                                      stage_ainv, NULL, &err);
      break;
    }
    ck_assert_msg(st == SLEM_OK, "%s", err.msg);
    ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_str_eq(c->kind, kinds[i]);
    ck_assert_int_eq(slem_cache_linear(c) != NULL, i <= 1);
    ck_assert_int_eq(slem_cache_eigen(c) != NULL, i == 1 || i == 2);
    ck_assert_int_eq(slem_cache_pca(c) != NULL, i == 2);
    ck_assert_int_eq(slem_cache_partial(c) != NULL, i == 3);
    ck_assert_int_eq(slem_cache_kernel(c) != NULL, i == 4);
    ck_assert_int_eq(slem_cache_recursive(c) != NULL, i == 5);
    ck_assert_ptr_eq(c->kind_data, i == 0 || i == 1 ? (const void *)slem_cache_linear(c)
                                   : i == 2 ? (const void *)slem_cache_pca(c)
                                   : i == 3 ? (const void *)slem_cache_partial(c)
                                   : i == 4 ? (const void *)slem_cache_kernel(c)
                                            : (const void *)slem_cache_recursive(c));
    if (i <= 1) {
      const SlemCacheLinear *l = slem_cache_linear(c);
      ck_assert_double_eq(l->lambda, 0.25);
      ck_assert_double_eq(l->rcond, 0.5);
      ck_assert_double_eq(l->mu[2], 3);
      ck_assert_double_eq(l->ainv[1], 0.5);
      ck_assert_uint_eq(l->eigen.neig, i == 1 ? D : 0);
    }
    if (i == 1 || i == 2) {
      const SlemCacheEigen *e = slem_cache_eigen(c);
      ck_assert_uint_eq(e->neig, i == 1 ? D : R);
      ck_assert_double_eq(e->lambda, 0.25);
      ck_assert_double_eq(e->mu[1], 2);
      ck_assert_double_eq(e->evals[1], 2);
      ck_assert_double_eq(e->evecs[D + 1], 1);
    }
    if (i == 3) {
      ck_assert_uint_eq(slem_cache_partial(c)->nnodes, 1);
      ck_assert_uint_eq(slem_cache_partial(c)->node[2], N);
    }
    if (i == 4) {
      const SlemCacheKernel *kc = slem_cache_kernel(c);
      ck_assert_uint_eq(kc->r, R);
      ck_assert_double_eq(kc->lambda, 0.5);
      ck_assert_int_eq(kc->factor, SLEM_FACTOR_ICD);
      ck_assert_int_eq(kc->couple, 1);
      ck_assert_double_eq(kc->lp[3], 2);
      ck_assert_double_eq(kc->mu[1], 0.25);
      ck_assert_ptr_nonnull(kc->negs);
      ck_assert_ptr_nonnull(kc->bneg);
      ck_assert_ptr_null(kc->proj);
    }
    if (i == 5) {
      const SlemCacheRecursive *r = slem_cache_recursive(c);
      ck_assert_uint_eq(r->depth, 2);
      ck_assert_double_eq(r->lambda[1], 0.5);
      ck_assert_double_eq(r->mu[1][0], 3);
      ck_assert_double_eq(r->ainv[0][1], 0.5);
    }
    slem_cache_free(c);
    free(path);
  }
}
END_TEST

START_TEST(crafted_caches_are_refused) {
  static const struct { const char *json; const char *want; } cases[] = {
      {"{\"kind\":\"linear\",\"d\":2147483648,\"n\":5,\"lambda\":1,\"sections\":[]}", "lacks a valid kind, d or n"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":0,\"lambda\":1,\"sections\":[]}", "lacks a valid kind, d or n"},
      {"{\"kind\":\"linear\",\"d\":2.5,\"n\":3,\"lambda\":1,\"sections\":[]}", "lacks a valid kind, d or n"},
      {"{\"kind\":\"mystery\",\"d\":2,\"n\":3,\"sections\":[{\"name\":\"mu\",\"offset\":%u,\"shape\":[2],\"dtype\":\"<f8\"}]}", "kind 'mystery' is not known"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[{\"name\":\"mu\",\"offset\":4611686018427387904,\"shape\":[2],\"dtype\":\"<f8\"}]}", "lies outside the payload"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[{\"name\":\"mu\",\"offset\":1e300,\"shape\":[2],\"dtype\":\"<f8\"}]}", "bad offset"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[{\"name\":\"mu\",\"offset\":1048576,\"shape\":[2],\"dtype\":\"<f8\"}]}", "lies outside the payload"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[{\"name\":\"mu\",\"offset\":%u,\"shape\":[3],\"dtype\":\"<f8\"}]}", "shape disagrees with d = 2"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[{\"name\":\"mu\",\"offset\":%u,\"shape\":[2],\"dtype\":\"<f4\"}]}", "dtype is not <f8"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[{\"name\":\"mu\",\"offset\":%u,\"shape\":[2],\"dtype\":\"<f8\"}]}", "section 'ainv' is missing"},
      {"{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":-1,\"sections\":[{\"name\":\"mu\",\"offset\":%u,\"shape\":[2],\"dtype\":\"<f8\"}]}", "no valid lambda"},
      {"{\"kind\":\"kernel\",\"d\":2,\"n\":3,\"kernel\":\"rbf:gamma=1\",\"r\":4,\"lambda\":1,\"sections\":[]}", "no valid rank"},
      {"{\"kind\":\"kernel\",\"d\":2,\"n\":3,\"kernel\":\"rbf\",\"r\":1,\"lambda\":1,\"sections\":[]}", "no valid kernel"},
      {"{\"kind\":\"kernel\",\"d\":2,\"n\":3,\"kernel\":\"rbf:gamma=1\",\"r\":1,\"lambda\":1,\"sections\":["
       "{\"name\":\"pivots\",\"offset\":%u,\"shape\":[1,2],\"dtype\":\"<f8\"},{\"name\":\"lp\",\"offset\":%u,\"shape\":[1,1],\"dtype\":\"<f8\"},"
       "{\"name\":\"mu\",\"offset\":%u,\"shape\":[1],\"dtype\":\"<f8\"},{\"name\":\"ginv\",\"offset\":%u,\"shape\":[1,1],\"dtype\":\"<f8\"}]}",
       "'lp' is not a Cholesky factor"},
      {"{not json", "does not parse"},
  };
  double payload[8] = {0};
  char *p = tu_path("crafted.slem");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char json[1024];
    SlemCache *c = NULL;
    SlemError err;
    unsigned po;
    /* the payload offset the writer will choose, for sections that lie inside it */
    snprintf(json, sizeof json, cases[i].json, 0u, 0u, 0u, 0u);
    po = (unsigned)((64 + strlen(json) + 1 + 63) / 64 * 64);
    snprintf(json, sizeof json, cases[i].json, po, po, po, po);
    if ((64 + strlen(json) + 1 + 63) / 64 * 64 != po) { /* the digits moved it: once more */
      po = (unsigned)((64 + strlen(json) + 1 + 63) / 64 * 64);
      snprintf(json, sizeof json, cases[i].json, po, po, po, po);
    }
    write_crafted(p, json, payload, 8);
    ck_assert_int_eq(slem_cache_read(&c, p, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, cases[i].want) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].want);
    ck_assert_ptr_null(c);
  }
  /* a NaN or an infinity in the payload, under right checksums, is refused */
  for (int k = 0; k < 2; k++) {
    SlemCache *c = NULL;
    SlemError err;
    double bad[8] = {0, 1, 2, k ? INFINITY : NAN, 4, 5, 6, 7};
    write_crafted(p, "{\"kind\":\"linear\",\"d\":2,\"n\":3,\"lambda\":1,\"sections\":[]}", bad, 8);
    ck_assert_int_eq(slem_cache_read(&c, p, &err), SLEM_EFORMAT);
    ck_assert_msg(strstr(err.msg, k ? "holds an infinity at byte" : "holds a NaN at byte") != NULL,
                  "%s", err.msg);
    ck_assert_ptr_null(c);
  }
  /* and never written: the writer refuses a non-finite section, and leaves no file */
  {
    double mu[2] = {1, HUGE_VAL}, ainv[4] = {1, 0, 0, 1};
    SlemLinearInfo info = {1, -1, 1, 0};
    SlemError err;
    char *w = tu_path("overflow.slem");
    ck_assert_int_eq(slem_cache_write_linear(w, 2, 3, &info, mu, ainv, NULL, &err), SLEM_ENUMERIC);
    ck_assert_msg(strstr(err.msg, "section 'mu' would hold an infinity (value 2)") != NULL, "%s", err.msg);
    ck_assert(!tu_file_exists(w));
    free(w);
  }
  free(p);
}
END_TEST

START_TEST(failed_write_leaves_no_file) {
  char *p = tu_path("never.fvecs");
  float x[2] = {1, 2};
  SlemVecWriter *w = NULL;
  SlemError err;
  ck_assert_int_eq(slem_vecwriter_open(&w, p, SLEM_FMT_AUTO, 2, -1, &err), SLEM_OK);
  ck_assert_int_eq(slem_vecwriter_write(w, x, 1, &err), SLEM_OK);
  ck_assert(!tu_file_exists(p)); /* nothing under the name before commit */
  slem_vecwriter_abort(w);
  ck_assert(!tu_file_exists(p));
  ck_assert_int_eq(slem_vecwriter_open(&w, "/nonexistent/dir/x.fvecs", SLEM_FMT_AUTO, 2, -1, &err), SLEM_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/dir/x.fvecs"));
  free(p);
}
END_TEST

/* The temporaries ".NAME.tmp.XXXXXX" in dir, counted. */
static int count_tmp(const char *dir, const char *prefix) {
  DIR *dp = opendir(dir);
  struct dirent *e;
  int n = 0;
  ck_assert_ptr_nonnull(dp);
  while ((e = readdir(dp)) != NULL) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(dp);
  return n;
}

/* A writer killed by SIGKILL leaves its temporary file; the next writer of the same name
 * removes it, but never the temporary file of a writer that still lives (another process
 * holding its lock, or another output of this process), nor files of other names. */
START_TEST(stale_temporaries_are_removed) {
  char dir[] = "/tmp/slem-stale.XXXXXX", path[128], other[128], held[128], odd[128];
  SlemOut *a = NULL, *b = NULL;
  SlemError err;
  int st, fds[2], back[2], hfd;
  pid_t pid;
  char c;
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/out.tsv", dir);
  /* a writer that dies in the middle of its write */
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    SlemOut *o;
    if (slem_out_open(&o, path, &err) != SLEM_OK) _exit(1);
    fputs("half", slem_out_file(o));
    fflush(slem_out_file(o));
    raise(SIGKILL);
    _exit(2);
  }
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  ck_assert_int_eq(count_tmp(dir, ".out.tsv.tmp."), 1);
  /* one held by a live process (a writer of this name in another process) */
  snprintf(held, sizeof held, "%s/.out.tsv.tmp.HELD01", dir);
  tu_write_bytes(held, "x", 1);
  ck_assert_int_eq(pipe(fds), 0); /* the parent's orders */
  ck_assert_int_eq(pipe(back), 0); /* the child's answer */
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int fd = open(held, O_RDONLY);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
    if (write(back[1], "l", 1) != 1) _exit(1);
    if (read(fds[0], &c, 1) < 0) _exit(1); /* until the parent writes, then exits */
    _exit(0);
  }
  ck_assert_int_eq(read(back[0], &c, 1), 1);
  /* files of other names, and a name of the pattern's length that is not a regular file */
  snprintf(other, sizeof other, "%s/.other.tsv.tmp.AAAAAA", dir);
  tu_write_bytes(other, "x", 1);
  snprintf(odd, sizeof odd, "%s/.out.tsv.tmp.toolong", dir);
  tu_write_bytes(odd, "x", 1);
  /* the next writer: the dead one's file goes, the others stay */
  ck_assert_int_eq(slem_out_open(&a, path, &err), SLEM_OK);
  ck_assert_int_eq(count_tmp(dir, ".out.tsv.tmp."), 3); /* held, toolong, a's own */
  ck_assert(tu_file_exists(held));
  ck_assert(tu_file_exists(other));
  ck_assert(tu_file_exists(odd));
  /* a second writer of the same name in this process leaves a's file alone */
  ck_assert_int_eq(slem_out_open(&b, path, &err), SLEM_OK);
  ck_assert_int_eq(count_tmp(dir, ".out.tsv.tmp."), 4);
  fputs("a\n", slem_out_file(a));
  ck_assert_int_eq(slem_out_commit(a, &err), SLEM_OK);
  fputs("b\n", slem_out_file(b));
  ck_assert_int_eq(slem_out_commit(b, &err), SLEM_OK);
  ck_assert(tu_file_exists(held)); /* its holder still lives */
  /* the holder exits: its file is now stale, and the next writer removes it */
  ck_assert_int_eq(write(fds[1], "q", 1), 1);
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  hfd = open(held, O_RDONLY); /* its lock went with the process */
  ck_assert_int_ge(hfd, 0);
  ck_assert_int_eq(flock(hfd, LOCK_EX | LOCK_NB), 0);
  close(hfd);
  ck_assert_int_eq(slem_out_open(&a, path, &err), SLEM_OK);
  slem_out_abort(a);
  ck_assert(!tu_file_exists(held));
  ck_assert_int_eq(count_tmp(dir, ".out.tsv.tmp."), 1); /* toolong only */
  close(fds[0]);
  close(fds[1]);
  close(back[0]);
  close(back[1]);
  unlink(odd);
  unlink(other);
  unlink(path);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* STYLE.md point 12: the BLAS calls of GSL and of slem must not resolve to the slow
 * reference libgslcblas that libgsl itself depends on. */
START_TEST(blas_is_openblas_not_gslcblas) {
  static const char *syms[] = {"cblas_dgemm", "cblas_dsyrk", "cblas_dtrsm", "cblas_sgemm",
                               "cblas_dsyr"};
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    Dl_info info;
    void *s = dlsym(RTLD_DEFAULT, syms[i]);
    ck_assert_ptr_nonnull(s);
    ck_assert(dladdr(s, &info) != 0);
    ck_assert_msg(strstr(info.dli_fname, "openblas") != NULL && !strstr(info.dli_fname, "gslcblas"),
                  "%s resolves to %s", syms[i], info.dli_fname);
  }
  ck_assert_ptr_nonnull(strstr(slem_blas_library(), "openblas"));
}
END_TEST

/* slem_fmt_g9 must print what snprintf "%.9g" prints, character for character */
START_TEST(fast_g9_equals_printf) {
  static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 0.5f, 1e-5f, 9.99999994e-5f,
                                  123456789.0f, 999999999.0f, 1e9f, 3.40282347e38f, 1.17549435e-38f,
                                  1.40129846e-45f, 0.999999940f, 16777216.0f, 1e-4f, 0.000123456789f,
                                  INFINITY, -INFINITY, NAN};
  char a[64], b[64];
  uint64_t s = 99;
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
    snprintf(a, sizeof a, "%.9g", (double)special[i]);
    ck_assert_int_eq(slem_fmt_g9(b, special[i]), (int)strlen(a));
    ck_assert_str_eq(b, a);
  }
  for (long i = 0; i < 2000000; i++) {
    uint32_t bits;
    float v;
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    bits = (uint32_t)s;
    if (i % 2) bits = (bits & 0x807FFFFFu) | ((uint32_t)(110 + (s >> 40) % 40) << 23);
    memcpy(&v, &bits, 4);
    snprintf(a, sizeof a, "%.9g", (double)v);
    slem_fmt_g9(b, v);
    ck_assert_msg(strcmp(a, b) == 0, "%08x: printf %s, slem_fmt_g9 %s", bits, a, b);
  }
}
END_TEST

/* Reads path whole in blocks of max vectors (as double, or as float when f32), with the
 * given reading threads; the rows into x, the blocks' sizes into sizes. Returns the status
 * of the read that ended it (err set), after *nread rows and *nblocks blocks. */
static int read_whole(const char *path, int threads, size_t max, int f32, double *x,
                      size_t *sizes, size_t *nread, size_t *nblocks, SlemError *err) {
  SlemVecReader *r = NULL;
  size_t d, got;
  int st;
  float *xf;
  slem_vecreader_set_read_threads(threads);
  ck_assert_msg(slem_vecreader_open(&r, path, SLEM_FMT_AUTO, err) == SLEM_OK, "%s", err->msg);
  d = slem_vecreader_dim(r);
  xf = malloc(max * d * sizeof *xf);
  ck_assert_ptr_nonnull(xf);
  *nread = *nblocks = 0;
  for (;;) {
    if (f32) {
      st = slem_vecreader_read_f32(r, xf, max, &got, err);
      for (size_t i = 0; st == SLEM_OK && i < got * d; i++) x[*nread * d + i] = xf[i];
    } else {
      st = slem_vecreader_read(r, x + *nread * d, max, &got, err);
    }
    if (st != SLEM_OK || got == 0) break;
    sizes[(*nblocks)++] = got;
    *nread += got;
  }
  free(xf);
  slem_vecreader_free(r);
  slem_vecreader_set_read_threads(1);
  return st;
}

/* A block of records read in pieces on several threads (pieces of 4 MiB or more: blocks of
 * 10 MB here, so 2 pieces on 2 threads, 2 on 4) gives the rows, the blocks and the errors
 * of one read: fvecs (dimensions read apart from the values) and npy f4 (read in place as
 * float, converted as double), blocks that do not divide the file, a NaN in a later block. */
START_TEST(pieces_read_as_one_read) {
  const size_t n = 90001, d = 64, maxes[] = {40000, 33333};
  double *x = malloc(n * d * sizeof *x), *y = malloc(n * d * sizeof *y),
         *z = malloc(n * d * sizeof *z);
  size_t sy[8], sz[8], ny, nz, by, bz;
  char *fv = tu_path("pieces.fvecs"), *np = tu_path("pieces.npy"), *bad = tu_path("pieces-nan.fvecs");
  float *xf = malloc(n * d * sizeof *xf);
  SlemVecWriter *w = NULL;
  SlemError e1, e2;
  ck_assert(x && y && z && xf);
  tu_seed(77);
  tu_gaussian_rows(x, n, d, 0.5);
  for (size_t i = 0; i < n * d; i++) x[i] = xf[i] = (float)x[i];
  tu_write_fvecs(fv, x, n, d);
  ck_assert_msg(slem_vecwriter_open(&w, np, SLEM_FMT_NPY, d, (int64_t)n, &e1) == SLEM_OK &&
                slem_vecwriter_write(w, xf, n, &e1) == SLEM_OK &&
                slem_vecwriter_close(w, &e1) == SLEM_OK, "%s", e1.msg);
  for (size_t m = 0; m < 4; m++)
    for (int f32 = 0; f32 <= 1; f32++) {
      int threads[] = {2, 4};
      const char *path = m < 2 ? fv : np;
      ck_assert_int_eq(read_whole(path, 1, maxes[m % 2], f32, y, sy, &ny, &by, &e1), SLEM_OK);
      ck_assert_uint_eq(ny, n);
      ck_assert(memcmp(y, x, n * d * sizeof *x) == 0);
      for (size_t t = 0; t < 2; t++) {
        ck_assert_int_eq(read_whole(path, threads[t], maxes[m % 2], f32, z, sz, &nz, &bz, &e2), SLEM_OK);
        ck_assert_uint_eq(nz, ny);
        ck_assert_uint_eq(bz, by);
        ck_assert(memcmp(sz, sy, by * sizeof *sy) == 0);
        ck_assert_msg(memcmp(z, y, n * d * sizeof *y) == 0, "%s, max %zu, f32 %d, %d threads: "
                      "other rows", path, maxes[m % 2], f32, threads[t]);
      }
    }
  /* a NaN in record 85 001 (the third block of 40 000, its second piece) */
  x[85000 * d + 9] = NAN;
  tu_write_fvecs(bad, x, n, d);
  ck_assert_int_eq(read_whole(bad, 1, 40000, 1, y, sy, &ny, &by, &e1), SLEM_EFORMAT);
  ck_assert_int_eq(read_whole(bad, 4, 40000, 1, z, sz, &nz, &bz, &e2), SLEM_EFORMAT);
  ck_assert_msg(strstr(e1.msg, "record 85001: value 10 is NaN") != NULL, "%s", e1.msg);
  ck_assert_str_eq(e2.msg, e1.msg);
  ck_assert_uint_eq(nz, ny);
  free(x);
  free(xf);
  free(y);
  free(z);
  free(fv);
  free(np);
  free(bad);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("io");
  TCase *tc = tcase_create("io");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, round_trip_every_format);
  tcase_add_test(tc, npy_versions_and_dtypes);
  tcase_add_test(tc, bad_inputs);
  tcase_add_test(tc, writer_refuses_values_that_do_not_fit);
  tcase_add_test(tc, ids_files);
  tcase_add_test(tc, nul_byte_in_a_line);
  tcase_add_test(tc, tail_of_a_file_and_of_a_pipe);
  tcase_add_test(tc, crc32_check_value);
  tcase_add_test(tc, crc32_long_buffers_as_zlib);
  tcase_add_test(tc, cache_round_trip_and_corruption);
  tcase_add_test(tc, failed_write_leaves_no_file);
  tcase_add_test(tc, stale_temporaries_are_removed);
  tcase_add_test(tc, blas_is_openblas_not_gslcblas);
  tcase_add_test(tc, fast_g9_equals_printf);
  tcase_add_test(tc, cache_kind_accessors);
  tcase_add_test(tc, crafted_caches_are_refused);
  tcase_add_test(tc, pieces_read_as_one_read);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
