/* Rankings as FAISS-style npy matrices: the headers numpy reads, the rows and scores in
 * place, the padding of short lists, the refusals. The files are read back byte by byte here,
 * not through the code under test. */
#include "testutil.h"

#include <float.h>

#include "../lib/rank/npypair.h"

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf;
  long len;
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)len);
  ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return buf;
}

START_TEST(writes_i_and_d) {
  char dir[] = "/tmp/slem-npypair-XXXXXX", path[256], iname[256], dname[256];
  SlemNpyPair *w;
  SlemError err;
  SlemHit q0[3] = {{17, 0.5f}, {3, 0.25f}, {9, 0.25f}}, q1[1] = {{4, -1.5f}};
  unsigned char *ib, *db;
  size_t in, dn;
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/run.npy", dir);
  ck_assert_int_eq(slem_npypair_open(&w, path, 3, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_write(w, 0, q0, 3, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_write(w, 1, q1, 1, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_write(w, 5, q1, 1, &err), SLEM_EINVAL); /* out of order */
  ck_assert_int_eq(slem_npypair_close(w, &err), SLEM_OK);
  ck_assert_int_eq(slem_npypair_names(path, iname, dname, sizeof iname), 0);
  ck_assert_str_eq(strrchr(iname, '/'), "/run.I.npy");
  ck_assert_str_eq(strrchr(dname, '/'), "/run.D.npy");
  ib = slurp(iname, &in);
  db = slurp(dname, &dn);
  ck_assert_uint_eq(in, 128 + 2 * 3 * 8);
  ck_assert_uint_eq(dn, 128 + 2 * 3 * 4);
  ck_assert(memcmp(ib, "\x93NUMPY\x01\x00", 8) == 0);
  ck_assert_uint_eq(ib[8] | ib[9] << 8, 118); /* 10 + 118 = 128, a multiple of 64 */
  ck_assert_uint_eq(ib[127], '\n');
  ck_assert_ptr_nonnull(strstr((char *)ib + 10, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"));
  ck_assert_ptr_nonnull(strstr((char *)db + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  {
    int64_t want_i[6] = {17, 3, 9, 4, -1, -1};
    float want_d[6] = {0.5f, 0.25f, 0.25f, -1.5f, -FLT_MAX, -FLT_MAX};
    for (int j = 0; j < 6; j++) {
      int64_t iv;
      float dv;
      memcpy(&iv, ib + 128 + 8 * j, 8);
      memcpy(&dv, db + 128 + 4 * j, 4);
      ck_assert_int_eq(iv, want_i[j]);
      ck_assert(dv == want_d[j]);
    }
  }
  free(ib);
  free(db);
  /* refusals: stdout, k = 0; an aborted writer leaves nothing */
  ck_assert_int_eq(slem_npypair_open(&w, "-", 3, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "two files"));
  ck_assert_int_eq(slem_npypair_open(&w, path, 0, &err), SLEM_EINVAL);
  snprintf(path, sizeof path, "%s/gone.npy", dir);
  ck_assert_int_eq(slem_npypair_open(&w, path, 2, &err), SLEM_OK);
  slem_npypair_abort(w);
  snprintf(path, sizeof path, "%s/gone.I.npy", dir);
  ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(names_of_a_pair) {
  /* a name that is one of a pair's names names that pair (FAISS users' np.save names too);
   * any other gets .I.npy and .D.npy */
  static const char *const cases[][3] = {
      {"rk.npy", "rk.I.npy", "rk.D.npy"},       {"rk", "rk.I.npy", "rk.D.npy"},
      {"rk.I.npy", "rk.I.npy", "rk.D.npy"},     {"rk.D.npy", "rk.I.npy", "rk.D.npy"},
      {"x_I.npy", "x_I.npy", "x_D.npy"},        {"x_D.npy", "x_I.npy", "x_D.npy"},
      {"x-I.npy", "x-I.npy", "x-D.npy"},        {"I.npy", "I.npy", "D.npy"},
      {"dir/D.npy", "dir/I.npy", "dir/D.npy"}, {"xI.npy", "xI.I.npy", "xI.D.npy"},
      {"a.I.npy.npy", "a.I.npy.I.npy", "a.I.npy.D.npy"}};
  char iname[64], dname[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_assert_int_eq(slem_npypair_names(cases[i][0], iname, dname, sizeof iname), 0);
    ck_assert_str_eq(iname, cases[i][1]);
    ck_assert_str_eq(dname, cases[i][2]);
  }
  ck_assert_int_eq(slem_npypair_names("x_I.npy", iname, dname, 7), -1); /* does not fit */
}
END_TEST

int main(void) {
  Suite *s = suite_create("npypair");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;
  tcase_add_test(tc, writes_i_and_d);
  tcase_add_test(tc, names_of_a_pair);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
