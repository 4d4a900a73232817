/* The table of variants (variant.h): the cache kinds (cachekinds.h), the fits of
 * slem-negstats (fit.h) and the encoders are found through it; a kind nobody knows is refused by name, and a cache of
 * each kind is read back through its own reader only. */
#include "testutil.h"

#include "../lib/encode/cachekinds.h"
#include "../lib/encode/fit.h"
#include "../lib/encode/var_linear.h"
#include "../lib/encode/negstats.h"
#include "../lib/encode/variant.h"
#include "../lib/formats/cache.h"
#include "../lib/io/container.h"

START_TEST(every_kind_is_in_the_table) {
  static const char *names[] = {"linear", "recursive", "recursive-nubeta", "pca", "partial",
                                "kernel", "kernel-recursive"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const SlemCacheKindOps *k = slem_cachekinds_find(names[i]);
    ck_assert_msg(k != NULL, "kind %s is missing from the table", names[i]);
    ck_assert_str_eq(k->name, names[i]);
    ck_assert_ptr_nonnull(k->read);
  }
  ck_assert_ptr_null(slem_cachekinds_find("descriptors"));
  ck_assert_ptr_null(slem_cachekinds_find("Linear"));
}
END_TEST

/* The fit that each combination of options gets, in the table's order. */
START_TEST(fits_are_chosen_by_their_options) {
  SlemNegstatsOpts o;
  struct {
    const char *kernel, *adaptive, *mixed;
    size_t depth, pca;
    int partial, eigen;
    const char *want;
  } cases[] = {
      {NULL, NULL, NULL, 1, 0, 0, 0, "linear"},
      {NULL, NULL, NULL, 1, 0, 1, 0, "partial"},
      {NULL, NULL, NULL, 1, 0, 0, 1, "whiten"},
      {NULL, NULL, NULL, 1, 3, 0, 0, "whiten"},
      {NULL, NULL, "pos.fvecs", 1, 0, 0, 1, "mixed"},
      {NULL, NULL, NULL, 2, 0, 0, 0, "recursive"},
      {NULL, "pos.fvecs", NULL, 3, 0, 0, 0, "nubeta"},
      {"rbf:g=1", NULL, NULL, 1, 0, 0, 0, "kernel"},
      {"rbf:g=1", NULL, NULL, 2, 0, 0, 0, "kernel-recursive"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const SlemFitOps *f;
    slem_negstats_opts_init(&o);
    o.kernel = cases[i].kernel;
    o.adaptive = cases[i].adaptive;
    o.mixed = cases[i].mixed;
    o.depth = cases[i].depth;
    o.pca = cases[i].pca;
    o.partial = cases[i].partial;
    o.eigen = cases[i].eigen;
    f = slem_fits_choose(&o);
    ck_assert_msg(strcmp(f->name, cases[i].want) == 0, "case %zu: fit %s, want %s", i, f->name,
                  cases[i].want);
    /* a fit either finishes the shared stream or reads its inputs itself, never both */
    ck_assert_int_eq(f->finish != NULL, f->fit == NULL);
    ck_assert_int_eq(f->appends != NULL, f->appends_what != NULL);
  }
}
END_TEST

/* A cache whose kind no entry of the table reads is refused by its kind's name, after the
 * same look for mu that a known kind with mu gets. */
START_TEST(an_unknown_kind_is_refused_by_name) {
  const double mu[2] = {1, 2};
  SlemCacheSection sec[1] = {{"mu", mu, 2, 0}};
  char *path = tu_path("odd.slem");
  cJSON *m = cJSON_CreateObject();
  SlemCache *c = NULL;
  SlemError err;
  cJSON_AddNumberToObject(m, "lambda", 1);
  ck_assert_int_eq(slem_cache_write(path, "odd", 2, 5, m, sec, 1, NULL, &err), SLEM_OK);
  cJSON_Delete(m);
  /* the generic container loads it; the table does not know it */
  ck_assert_msg(slem_cache_load(&c, path, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_str_eq(slem_cache_kind(c), "odd");
  ck_assert_ptr_null(c->kind_data);
  ck_assert_ptr_null(slem_cache_linear(c));
  slem_cache_free(c);
  ck_assert_int_eq(slem_cache_read(&c, path, &err), SLEM_EFORMAT);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(strstr(err.msg, "cache kind 'odd' is not known to this slem"));
  free(path);
}
END_TEST

/* The members a writer gives come after the common ones, in their order. */
START_TEST(members_keep_their_order) {
  const double mu[2] = {1, 2}, ainv[4] = {1, 0, 0, 1};
  char *path = tu_path("lin.slem");
  SlemLinearInfo info = {0.5, 0.25, 3, 0.125};
  SlemCache *c = NULL;
  SlemError err;
  const cJSON *it;
  const char *want[] = {"format", "format_version", "kind", "d", "n", "lambda", "lambda_rel",
                        "trace_sigma", "rcond"};
  size_t k = 0;
  ck_assert_int_eq(slem_cache_write_linear(path, 2, 7, &info, mu, ainv, NULL, &err), SLEM_OK);
  ck_assert_msg(slem_cache_read(&c, path, &err) == SLEM_OK, "%s", err.msg);
  for (it = slem_cache_header(c)->child; it && k < sizeof want / sizeof *want; it = it->next)
    ck_assert_str_eq(it->string, want[k++]);
  ck_assert_uint_eq(k, sizeof want / sizeof *want);
  ck_assert_double_eq(slem_cache_linear(c)->lambda, 0.5);
  ck_assert_double_eq(slem_cache_linear(c)->rcond, 0.125);
  slem_cache_free(c);
  free(path);
}
END_TEST

/* Every variant is named once, brings at least one member, and each kind, fit and encoder
 * belongs to one variant only; the lookups find the members through it. */
START_TEST(the_variant_table_is_whole) {
  size_t n = slem_variants_count();
  ck_assert_uint_ge(n, 11);
  for (size_t i = 0; i < n; i++) {
    const SlemVariant *v = slem_variants_get(i);
    ck_assert_ptr_nonnull(v->name);
    ck_assert_msg(v->summary && strlen(v->summary) > 10, "%s has no summary", v->name);
    ck_assert_msg(v->kind || v->fit || v->encoder, "%s brings nothing", v->name);
    if (v->kind) ck_assert_ptr_eq(slem_cachekinds_find(v->kind->name), v->kind);
    for (size_t j = 0; j < i; j++) {
      const SlemVariant *w = slem_variants_get(j);
      ck_assert_msg(strcmp(v->name, w->name) != 0, "variant %s twice", v->name);
      ck_assert(!v->kind || v->kind != w->kind);
      ck_assert(!v->fit || v->fit != w->fit);
      ck_assert(!v->encoder || v->encoder != w->encoder);
    }
  }
  /* the linear fit, which takes any options, is the last fit of the table */
  for (size_t i = 0, seen = 0; i < n; i++) {
    const SlemVariant *v = slem_variants_get(i);
    ck_assert_msg(!seen || !v->fit, "fit %s after linear's is never asked", v->name);
    if (v->fit && strcmp(v->fit->name, "linear") == 0) seen = 1;
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("variants");
  TCase *tc = tcase_create("variants");
  tcase_add_test(tc, the_variant_table_is_whole);
  tcase_add_test(tc, every_kind_is_in_the_table);
  tcase_add_test(tc, fits_are_chosen_by_their_options);
  tcase_add_test(tc, an_unknown_kind_is_refused_by_name);
  tcase_add_test(tc, members_keep_their_order);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
