/* The table of vector formats: names, aliases and extensions; and each format's files. */
#include "testutil.h"

#include "../lib/vecs.h"

START_TEST(names_come_from_one_table) {
  /* every canonical name in the list parses back to a format that has that name, and
   * selects the format as an extension too */
  char list[256], *save = NULL;
  size_t count = 0;
  SlemFormat f;
  snprintf(list, sizeof list, "%s", slem_format_names());
  ck_assert_str_eq(list, "fvecs, bvecs, ivecs, npy, text");
  for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    char path[64];
    ck_assert_int_eq(slem_format_parse(&f, tok), SLEM_OK);
    ck_assert_int_ne(f, SLEM_FMT_AUTO);
    ck_assert_str_eq(slem_format_name(f), tok);
    snprintf(path, sizeof path, "dir.x/file.%s", tok);
    ck_assert_int_eq(slem_format_from_path(path), f);
    count++;
  }
  ck_assert_uint_eq(count, SLEM_FMT_END - 1);
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

static Suite *suite(void) {
  Suite *s = suite_create("formats");
  TCase *tc = tcase_create("formats");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, names_come_from_one_table);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
