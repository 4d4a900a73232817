/* Unit tests of the option specs (optspec.h) and of the options of slem-negstats and
 * slem-encode declared with them (negstats.h, encstream.h, variant.h): each type accepted
 * and refused at its bounds with the tools' exact message, flags, given bits, optional
 * values, unknown names, the --help layout, and every name used once per tool. */
#include "testutil.h"

#include <stdint.h>

#include "../lib/encode/encstream.h"
#include "../lib/encode/negstats.h"
#include "../lib/encode/variant.h"
#include "../lib/io/optspec.h"

typedef struct Demo {
  int flag, small;
  size_t count;
  uint64_t seed;
  long offset;
  double pos, nonneg, unit, any;
  const char *text;
  SlemShard shard;
  unsigned given;
} Demo;

static int parse_upper(const SlemOptSpec *s, void *opts, const char *value, SlemError *err) {
  if (!value || value[0] < 'A' || value[0] > 'Z')
    return slem_error(err, SLEM_EINVAL, "--%s: '%s' is not upper case", s->name,
                      value ? value : "(none)");
  ((Demo *)opts)->text = value;
  return SLEM_OK;
}

#define D(f) SLEM_OPT_FIELD(Demo, f)
static const SlemOptSpec demo[] = {
    {.name = "flag", .key = 'x', .type = SLEM_OPT_FLAG, D(flag), .given = 1u << 0,
     .help = "a flag"},
    {.name = "small", .metavar = "N", .type = SLEM_OPT_WHOLE, D(small), .min = -3, .max = 7,
     .help = "an int"},
    {.name = "count", .key = 'n', .metavar = "N", .type = SLEM_OPT_WHOLE, D(count), .min = 1,
     .max = 1L << 20, .given = 1u << 1, .help = "a size_t\nover two lines"},
    {.name = "seed", .metavar = "S", .type = SLEM_OPT_WHOLE, D(seed), .min = 0,
     .max = 0x7fffffffL, .help = "a uint64_t"},
    {.name = "offset", .metavar = "O", .type = SLEM_OPT_WHOLE, D(offset), .min = -5, .max = 5,
     .help = "a long"},
    {.name = "pos", .metavar = "T", .type = SLEM_OPT_REAL, D(pos), .real = SLEM_OPT_POSITIVE},
    {.name = "nonneg", .metavar = "L", .type = SLEM_OPT_REAL, D(nonneg), .real = SLEM_OPT_NONNEG},
    {.name = "unit", .metavar = "T", .type = SLEM_OPT_REAL, D(unit), .real = SLEM_OPT_UNIT},
    {.name = "any", .metavar = "A", .type = SLEM_OPT_REAL, D(any)},
    {.name = "text", .metavar = "FILE", .type = SLEM_OPT_TEXT, D(text)},
    {.name = "upper", .metavar = "[WORD]", .type = SLEM_OPT_CUSTOM, D(text), .parse = parse_upper,
     .given = 1u << 2},
    {.name = "shard", .metavar = "I/N", .type = SLEM_OPT_CUSTOM, D(shard),
     .parse = slem_optspec_shard},
    {.name = "a-long-option-name", .metavar = "VALUE", .type = SLEM_OPT_TEXT, D(text),
     .help = "head too long"},
    {0}};
#undef D

static const SlemOptSpec *spec(const char *name) {
  const SlemOptSpec *s = slem_optspec_find(demo, name);
  ck_assert_msg(s != NULL, "no spec %s", name);
  return s;
}

/* Refused with exactly msg, and nothing of d changed. */
static void refused(const char *name, const char *value, const char *msg) {
  Demo d, before;
  SlemError err;
  memset(&d, 0x5A, sizeof d);
  d.given = 0;
  before = d;
  ck_assert_int_eq(slem_optspec_set(spec(name), &d, &d.given, value, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, msg);
  ck_assert_msg(memcmp(&d, &before, sizeof d) == 0, "--%s %s changed the options", name,
                value ? value : "");
}

static Demo accepted(const char *name, const char *value) {
  Demo d = {0};
  SlemError err;
  ck_assert_msg(slem_optspec_set(spec(name), &d, &d.given, value, &err) == SLEM_OK,
                "--%s %s: %s", name, value ? value : "", err.msg);
  return d;
}

START_TEST(whole_numbers_at_their_bounds) {
  ck_assert_int_eq(accepted("small", "-3").small, -3);
  ck_assert_int_eq(accepted("small", "7").small, 7);
  refused("small", "8", "--small: '8' is not a whole number from -3 to 7");
  refused("small", "-4", "--small: '-4' is not a whole number from -3 to 7");
  ck_assert_uint_eq(accepted("count", "1").count, 1);
  ck_assert_uint_eq(accepted("count", "1048576").count, 1048576);
  refused("count", "0", "--count: '0' is not a whole number from 1 to 1048576");
  refused("count", "1048577", "--count: '1048577' is not a whole number from 1 to 1048576");
  refused("count", "x", "--count: 'x' is not a whole number from 1 to 1048576");
  refused("count", "", "--count: '' is not a whole number from 1 to 1048576");
  refused("count", " 5", "--count: ' 5' is not a whole number from 1 to 1048576");
  refused("count", "5 ", "--count: '5 ' is not a whole number from 1 to 1048576");
  refused("count", "2.5", "--count: '2.5' is not a whole number from 1 to 1048576");
  refused("count", "99999999999999999999",
          "--count: '99999999999999999999' is not a whole number from 1 to 1048576");
  ck_assert_uint_eq(accepted("seed", "0").seed, 0);
  ck_assert_uint_eq(accepted("seed", "2147483647").seed, 2147483647u);
  refused("seed", "-1", "--seed: '-1' is not a whole number from 0 to 2147483647");
  ck_assert_int_eq(accepted("offset", "-5").offset, -5);
  refused("offset", "6", "--offset: '6' is not a whole number from -5 to 5");
}
END_TEST

START_TEST(real_numbers_and_their_rules) {
  ck_assert(accepted("pos", "1e-300").pos == 1e-300);
  refused("pos", "0", "--pos: must be positive");
  refused("pos", "-1", "--pos: must be positive");
  ck_assert(accepted("nonneg", "0").nonneg == 0);
  refused("nonneg", "-0.5", "--nonneg: must not be negative");
  ck_assert(accepted("unit", "0").unit == 0);
  ck_assert(accepted("unit", "0.999").unit == 0.999);
  refused("unit", "1", "--unit: from 0 to below 1");
  refused("unit", "-1e-9", "--unit: from 0 to below 1");
  ck_assert(accepted("any", "-0.5").any == -0.5);
  refused("any", "nan", "--any: 'nan' is not a finite number");
  refused("any", "inf", "--any: 'inf' is not a finite number");
  refused("any", "1e999", "--any: '1e999' is not a finite number");
  refused("any", "1x", "--any: '1x' is not a finite number");
  refused("any", " 1", "--any: ' 1' is not a finite number");
  refused("any", "", "--any: '' is not a finite number");
  refused("pos", "x", "--pos: 'x' is not a finite number");
}
END_TEST

START_TEST(flags_text_custom_and_given_bits) {
  Demo d = accepted("flag", NULL);
  ck_assert_int_eq(d.flag, 1);
  ck_assert_uint_eq(d.given, 1u << 0);
  ck_assert_uint_eq(accepted("count", "3").given, 1u << 1);
  ck_assert_uint_eq(accepted("seed", "3").given, 0);
  ck_assert_str_eq(accepted("text", "a b").text, "a b");
  d = accepted("upper", "Word");
  ck_assert_str_eq(d.text, "Word");
  ck_assert_uint_eq(d.given, 1u << 2);
  refused("upper", "word", "--upper: 'word' is not upper case");
  refused("upper", NULL, "--upper: '(none)' is not upper case");
  d = accepted("shard", "1/3");
  ck_assert(d.shard.index == 1 && d.shard.count == 3);
  refused("flag", "1", "option '--flag' takes no value");
  refused("count", NULL, "option '--count' needs a value");
  {
    Demo e;
    SlemError err;
    memset(&e, 0x5A, sizeof e);
    ck_assert_int_eq(slem_optspec_set(spec("shard"), &e, NULL, "3/3", &err), SLEM_EINVAL);
    ck_assert_msg(strncmp(err.msg, "--shard: ", 9) == 0, "%s", err.msg);
  }
  ck_assert_int_eq(slem_optspec_has_value(spec("flag")), 0);
  ck_assert_int_eq(slem_optspec_has_value(spec("count")), 1);
  ck_assert_int_eq(slem_optspec_has_value(spec("upper")), 2);
  ck_assert_ptr_null(slem_optspec_find(demo, "coun"));
  ck_assert_ptr_null(slem_optspec_find(NULL, "count"));
}
END_TEST

START_TEST(help_lines_in_the_tools_layout) {
  char buf[512];
  size_t n = slem_optspec_help(spec("count"), 25, buf, sizeof buf);
  ck_assert_str_eq(buf, "  -n, --count N          a size_t\n"
                        "                         over two lines\n");
  ck_assert_uint_eq(n, strlen(buf));
  slem_optspec_help(spec("seed"), 27, buf, sizeof buf);
  ck_assert_str_eq(buf, "      --seed S             a uint64_t\n");
  /* a head of the column's width or more stands on its own line */
  slem_optspec_help(spec("a-long-option-name"), 25, buf, sizeof buf);
  ck_assert_str_eq(buf, "      --a-long-option-name VALUE\n"
                        "                         head too long\n");
  /* cut as snprintf() cuts, the length of the whole told */
  ck_assert_uint_eq(slem_optspec_help(spec("count"), 25, buf, 10), n);
  ck_assert_str_eq(buf, "  -n, --c");
  ck_assert_uint_eq(slem_optspec_help(spec("count"), 25, NULL, 0), n);
}
END_TEST

/* slem-negstats' options by name, through the very specs the tool parses with. */
static void negstats_refused(const char *name, const char *value, const char *msg) {
  SlemNegstatsOpts o, before;
  SlemError err;
  slem_negstats_opts_init(&o);
  before = o;
  ck_assert_int_eq(slem_negstats_opts_set(&o, name, value, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, msg);
  ck_assert_msg(memcmp(&o, &before, sizeof o) == 0, "%s changed the options", name);
}

START_TEST(negstats_options_by_name) {
  SlemNegstatsOpts o;
  SlemError err;
  slem_negstats_opts_init(&o);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "rank", "1048576", &err), SLEM_OK);
  ck_assert_uint_eq(o.rank, 1048576);
  ck_assert_uint_eq(o.given, SLEM_NEGSTATS_GIVEN_RANK);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "lambda-rel", "0", &err), SLEM_OK);
  ck_assert_uint_eq(o.given, SLEM_NEGSTATS_GIVEN_RANK | SLEM_NEGSTATS_GIVEN_LAMBDA_REL);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "tol", "0.5", &err), SLEM_OK);
  ck_assert(o.tol == 0.5 && (o.given & SLEM_NEGSTATS_GIVEN_TOL));
  ck_assert_int_eq(slem_negstats_opts_set(&o, "seed", "2147483647", &err), SLEM_OK);
  ck_assert_uint_eq(o.seed, 2147483647u);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "kernel", "rbf:g=1", &err), SLEM_OK);
  ck_assert_str_eq(o.kernel, "rbf:g=1");
  ck_assert_int_eq(slem_negstats_opts_set(&o, "factor", "kpca", &err), SLEM_OK);
  ck_assert_int_eq(o.factor, SLEM_FACTOR_KPCA);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "eigen", NULL, &err), SLEM_OK);
  ck_assert_int_eq(o.eigen, 1);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "shard", "0/2", &err), SLEM_OK);
  ck_assert(o.shard.index == 0 && o.shard.count == 2);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "positives-format", "npy", &err), SLEM_OK);
  ck_assert_int_eq(o.pos_format, SLEM_FMT_NPY);
  ck_assert(o.given & SLEM_NEGSTATS_GIVEN_POS_FORMAT);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "diagonal", NULL, &err), SLEM_OK);
  ck_assert_str_eq(o.variant, "diagonal");
  negstats_refused("rank", "0", "--rank: '0' is not a whole number from 1 to 1048576");
  negstats_refused("rank", "x", "--rank: 'x' is not a whole number from 1 to 1048576");
  negstats_refused("depth", "1025", "--depth: '1025' is not a whole number from 1 to 1024");
  negstats_refused("sample", "1", "--sample: '1' is not a whole number from 2 to 100000");
  negstats_refused("block", "16777217",
                   "--block: '16777217' is not a whole number from 1 to 16777216");
  negstats_refused("tol", "1", "--tol: from 0 to below 1");
  negstats_refused("theta", "0", "--theta: must be positive");
  negstats_refused("lambda", "-1", "--lambda: must not be negative");
  negstats_refused("lambda-rel", "-1", "--lambda-rel: must not be negative");
  negstats_refused("lambda", "x", "--lambda: 'x' is not a finite number");
  negstats_refused("factor", "svd", "--factor: 'svd' is not icd, kpca or full");
  negstats_refused("rnk", "5", "unknown option 'rnk'");
  negstats_refused("output", "x", "unknown option 'output'");
  {
    SlemNegstatsOpts b;
    slem_negstats_opts_init(&b);
    ck_assert_int_eq(slem_negstats_opts_set(&b, "kernel", "rbf:bogus=1", &err), SLEM_EINVAL);
    ck_assert_msg(strncmp(err.msg, "--kernel: ", 10) == 0, "%s", err.msg);
    ck_assert_ptr_null(b.kernel);
    ck_assert_int_eq(slem_negstats_opts_set(&b, "format", "xyz", &err), SLEM_EINVAL);
    ck_assert_msg(strncmp(err.msg, "--format: unknown format 'xyz' (", 32) == 0, "%s", err.msg);
  }
}
END_TEST

/* Two variants asked for by their own flags are refused; one flag twice is one. */
static const SlemOptSpec other_variant[] = {
    {.name = "other", .type = SLEM_OPT_CUSTOM, .parse = slem_negstats_opt_variant}, {0}};

START_TEST(one_variant_flag_at_a_time) {
  SlemNegstatsOpts o;
  SlemError err;
  slem_negstats_opts_init(&o);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "diagonal", NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_negstats_opts_set(&o, "diagonal", NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_optspec_set(&other_variant[0], &o, &o.given, NULL, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--diagonal and --other ask for two variants: give one");
  ck_assert_str_eq(o.variant, "diagonal");
  ck_assert_ptr_eq(slem_variants_by_option("diagonal"), slem_variants_by_option("diagonal"));
  ck_assert_str_eq(slem_variants_by_option("diagonal")->name, "diagonal");
  ck_assert_str_eq(slem_variants_by_option("rank")->name, "kernel");
  ck_assert_ptr_null(slem_variants_by_option("lambda"));
}
END_TEST

static void encstream_refused(const char *name, const char *value, const char *msg) {
  SlemEncStreamOpts o, before;
  SlemError err;
  slem_encstream_opts_init(&o);
  before = o;
  ck_assert_int_eq(slem_encstream_opts_set(&o, name, value, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, msg);
  ck_assert_msg(memcmp(&o, &before, sizeof o) == 0, "%s changed the options", name);
}

START_TEST(encstream_options_by_name) {
  SlemEncStreamOpts o;
  SlemError err;
  slem_encstream_opts_init(&o);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "theta", "2", &err), SLEM_OK);
  ck_assert(o.theta == 2 && o.theta_set == 1);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "alpha", "-0.5", &err), SLEM_OK);
  ck_assert(o.alpha == -0.5 && o.alpha_set == 1);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "couple", NULL, &err), SLEM_OK);
  ck_assert_int_eq(o.couple, SLEM_COUPLE_EXACT);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "couple", "authors", &err), SLEM_OK);
  ck_assert_int_eq(o.couple, SLEM_COUPLE_AUTHORS);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "classifier", NULL, &err), SLEM_OK);
  ck_assert_int_eq(o.mode, SLEM_ENCODE_CLASSIFIER);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "block", "1048576", &err), SLEM_OK);
  ck_assert_uint_eq(o.block, 1048576);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "output-format", "npy", &err), SLEM_OK);
  ck_assert_int_eq(o.format, SLEM_FMT_NPY);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "dtype", "f2", &err), SLEM_OK);
  ck_assert_int_eq(o.dtype, SLEM_DTYPE_F2);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "precision", "double", &err), SLEM_OK);
  ck_assert_int_eq(o.precision, SLEM_PRECISION_DOUBLE);
  ck_assert_int_eq(slem_encstream_opts_set(&o, "basic", NULL, &err), SLEM_OK);
  ck_assert_int_eq(o.basic, 1);
  encstream_refused("theta", "0", "--theta: must be positive");
  encstream_refused("theta", "-2", "--theta: must be positive");
  encstream_refused("alpha", "nan", "--alpha: 'nan' is not a finite number");
  encstream_refused("block", "0", "--block: '0' is not a whole number from 1 to 1048576");
  encstream_refused("couple", "both", "--couple: unknown coupling 'both' (exact, authors)");
  encstream_refused("dtype", "f8x", "--dtype: 'f8x' is not f4, f2 or i1");
  encstream_refused("precision", "half", "--precision: 'half' is not auto, single or double");
  encstream_refused("projections", "1", "option '--projections' takes no value");
  encstream_refused("cache", "c.slem", "unknown option 'cache'");
  {
    SlemEncStreamOpts b;
    slem_encstream_opts_init(&b);
    /* an output's format is a real one: not "auto" */
    ck_assert_int_eq(slem_encstream_opts_set(&b, "output-format", "auto", &err), SLEM_EINVAL);
    ck_assert_msg(strncmp(err.msg, "--output-format: unknown format 'auto' (", 40) == 0, "%s",
                  err.msg);
  }
}
END_TEST

/* What a tool lists: count() specs, get(i) each, the common ones first, then each variant's
 * (one of the two arrays of each) in the table's order; every name and every letter once,
 * every help line within 79 columns at the tool's help column. */
static void check_listing(size_t (*count)(void), const SlemOptSpec *(*get)(size_t), int fit,
                          int column) {
  size_t n = count(), i, first_variant = n;
  for (i = 0; i < n; i++) {
    const SlemOptSpec *s = get(i);
    const char *h;
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(s->name);
    ck_assert_msg(s->help && *s->help, "--%s has no help", s->name);
    for (size_t j = 0; j < i; j++) {
      ck_assert_msg(strcmp(get(j)->name, s->name) != 0, "--%s is declared twice", s->name);
      ck_assert_msg(!s->key || get(j)->key != s->key, "-%c is declared twice", s->key);
    }
    for (h = s->help; h; h = strchr(h, '\n') ? strchr(h, '\n') + 1 : NULL)
      ck_assert_msg(column + (int)strcspn(h, "\n") <= 79, "--%s: a help line too long: %.*s",
                    s->name, (int)strcspn(h, "\n"), h);
  }
  ck_assert_ptr_null(get(n));
  /* the variants' own, in the table's order, after the common ones */
  for (size_t v = 0, k = 0; v < slem_variants_count(); v++) {
    const SlemVariant *var = slem_variants_get(v);
    const SlemOptSpec *t = fit ? var->fit_options : var->encode_options;
    for (; t && t->name; t++, k++) {
      if (first_variant == n) {
        for (first_variant = 0; first_variant < n && get(first_variant) != t; first_variant++)
          continue;
        ck_assert_msg(first_variant < n, "--%s of %s is not listed", t->name, var->name);
      }
      ck_assert_msg(first_variant + k < n && get(first_variant + k) == t,
                    "--%s of %s is not in the table's place", t->name, var->name);
    }
    if (v + 1 == slem_variants_count()) ck_assert_uint_eq(first_variant + k, n);
  }
}

START_TEST(every_name_once_in_the_tables_order) {
  check_listing(slem_negstats_opts_count, slem_negstats_opts_get, 1, 25);
  check_listing(slem_encstream_opts_count, slem_encstream_opts_get, 0, 27);
  ck_assert_str_eq(slem_negstats_opts_get(0)->name, "lambda");
  ck_assert_str_eq(slem_encstream_opts_get(0)->name, "output-format");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("optspec");
  TCase *tc = tcase_create("optspec");
  tcase_add_test(tc, whole_numbers_at_their_bounds);
  tcase_add_test(tc, real_numbers_and_their_rules);
  tcase_add_test(tc, flags_text_custom_and_given_bits);
  tcase_add_test(tc, help_lines_in_the_tools_layout);
  tcase_add_test(tc, negstats_options_by_name);
  tcase_add_test(tc, one_variant_flag_at_a_time);
  tcase_add_test(tc, encstream_options_by_name);
  tcase_add_test(tc, every_name_once_in_the_tables_order);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
