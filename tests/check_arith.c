/* lib/linalg/arith.h: the line that names an arithmetic, its JSON member, and the comparisons
 * the merges make of recorded lines. */
#include <cjson/cJSON.h>

#include "../lib/linalg/arith.h"
#include "../lib/linalg/blas.h"
#include "testutil.h"

START_TEST(name_starts_with_the_core) {
  const char *n = slem_arith_name(), *core = slem_arith_core();
  char got[64];
  ck_assert_int_eq(strncmp(n, core, strlen(core)), 0);
  ck_assert_int_eq(strncmp(n + strlen(core), " (", 2), 0);
  ck_assert_ptr_nonnull(strstr(n, ", GSL "));
  ck_assert_str_eq(slem_arith_core(), slem_blas_corename());
  slem_arith_core_of(n, got, sizeof got);
  ck_assert_str_eq(got, core);
  slem_arith_core_of("Haswell", got, sizeof got);  /* no versions: the whole line */
  ck_assert_str_eq(got, "Haswell");
  slem_arith_core_of("SapphireRapids (OpenBLAS 0.3.26)", got, 5);  /* truncated */
  ck_assert_str_eq(got, "Sapp");
}
END_TEST

START_TEST(json_round_trip) {
  cJSON *o = cJSON_CreateObject(), *back;
  char line[SLEM_ARITH_MAX], *text;
  const cJSON *a;
  ck_assert_int_eq(slem_arith_to_json(o, NULL), 0);
  a = cJSON_GetObjectItemCaseSensitive(o, "arithmetic");
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(a, "blas_core")->valuestring, slem_arith_core());
  ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a, "lanes")));
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(a, "mixed"));
  text = cJSON_PrintUnformatted(o);
  back = cJSON_Parse(text);
  slem_arith_from_json(back, line, sizeof line);
  ck_assert_str_eq(line, slem_arith_name());
  cJSON_Delete(o), cJSON_Delete(back), free(text);
  o = cJSON_CreateObject();
  ck_assert_int_eq(slem_arith_to_json(o, "A (x) + B (x)"), 0);
  a = cJSON_GetObjectItemCaseSensitive(o, "arithmetic");
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(a, "mixed")->valuestring, "A (x) + B (x)");
  cJSON_Delete(o);
  /* none recorded (an older slem), or not a string: "" */
  o = cJSON_Parse("{\"kind\":\"linear\"}");
  strcpy(line, "junk");
  slem_arith_from_json(o, line, sizeof line);
  ck_assert_str_eq(line, "");
  cJSON_Delete(o);
  o = cJSON_Parse("{\"arithmetic\":{\"name\":7}}");
  slem_arith_from_json(o, line, sizeof line);
  ck_assert_str_eq(line, "");
  cJSON_Delete(o);
}
END_TEST

START_TEST(comparisons) {
  const char *h = "Haswell (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)";
  const char *s = "SkylakeX (OpenBLAS 0.3.21, GSL 2.7.1, glibc 2.36)";
  const char *h2 = "Haswell (OpenBLAS 0.3.26, GSL 2.7.1, glibc 2.36)";
  ck_assert(!slem_arith_differ(h, h));
  ck_assert(slem_arith_differ(h, s));
  ck_assert(slem_arith_differ(h, h2));
  ck_assert(!slem_arith_differ(h, ""));  /* not recorded: not compared */
  ck_assert(!slem_arith_differ(NULL, s));
  /* the match: cores do not matter, libraries do */
  ck_assert(!slem_arith_differ_libs(h, s));
  ck_assert(slem_arith_differ_libs(h, h2));
  ck_assert(slem_arith_differ_libs(s, h2));
  ck_assert(!slem_arith_differ_libs("", h2));
  ck_assert(slem_arith_differ_libs("Haswell", "SkylakeX"));  /* no versions to compare */
}
END_TEST

START_TEST(lists) {
  char list[SLEM_ARITH_LIST_MAX] = "", small[12] = "";
  slem_arith_list_add(list, sizeof list, NULL);
  slem_arith_list_add(list, sizeof list, "");
  ck_assert_str_eq(list, "");
  slem_arith_list_add(list, sizeof list, "B (x)");
  slem_arith_list_add(list, sizeof list, "A (x)");
  slem_arith_list_add(list, sizeof list, "B (x)");
  slem_arith_list_add(list, sizeof list, "A (x)");
  ck_assert_str_eq(list, "B (x) + A (x)");
  /* a line that holds another is not taken for it */
  slem_arith_list_add(list, sizeof list, "A (x");
  slem_arith_list_add(list, sizeof list, "(x)");
  ck_assert_str_eq(list, "B (x) + A (x) + A (x + (x)");
  slem_arith_list_add(small, sizeof small, "Haswell (x)");
  slem_arith_list_add(small, sizeof small, "SkylakeX (x)");
  ck_assert_str_eq(small, "Haswell (x)");  /* truncated, never overrun */
}
END_TEST

int main(void) {
  Suite *s = suite_create("arith");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;
  tcase_add_test(tc, name_starts_with_the_core);
  tcase_add_test(tc, json_round_trip);
  tcase_add_test(tc, comparisons);
  tcase_add_test(tc, lists);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
