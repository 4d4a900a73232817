/* Unit tests of the rules between options, each checked once in the library (issue 44):
 * slem_negstats_check(), slem_encstream_check(), slem_dtype_check() and slem_truth_check().
 * Every rule has a refused combination (SLEM_EINVAL and the tool's message) and, beside it,
 * the nearest accepted one (SLEM_OK), so that a rule removed or widened fails here. */
#include "testutil.h"

#include "../lib/encode/encstream.h"
#include "../lib/encode/negstats.h"
#include "../lib/eval/eval.h"
#include "../lib/eval/revisitop.h"
#include "../lib/eval/treceval.h"
#include "../lib/eval/truth.h"
#include "../lib/linalg/kernel.h"
#include "../lib/report/report.h"
#include "../lib/report/thumbs.h"

/* ---- slem_negstats_check() ---- */

typedef struct {
  const char *name;
  void (*set)(SlemNegstatsOpts *o, const char **in);
  const char *msg; /* a part of the message; NULL: accepted */
} NegCase;

#define NEG(fn, body) static void fn(SlemNegstatsOpts *o, const char **in) { (void)in; body; }
NEG(n_plain, (void)o)
NEG(n_both_lambdas, o->lambda = 1; o->given |= SLEM_NEGSTATS_GIVEN_LAMBDA_REL)
NEG(n_lambda, o->lambda = 1)
NEG(n_partial_lambda, o->partial = 1; o->lambda = 1)
NEG(n_partial_rel, o->partial = 1; o->given |= SLEM_NEGSTATS_GIVEN_LAMBDA_REL)
NEG(n_partial, o->partial = 1)
NEG(n_partial_kernel, o->partial = 1; o->kernel = "rbf")
NEG(n_shard, o->shard.count = 2)
NEG(n_shard_partial, o->shard.count = 2; o->partial = 1)
NEG(n_skip_kernel, o->skip_nonfinite = 1; o->kernel = "rbf")
NEG(n_skip, o->skip_nonfinite = 1)
NEG(n_factor, o->given |= SLEM_NEGSTATS_GIVEN_FACTOR)
NEG(n_couple, o->couple = 1)
NEG(n_rank, o->given |= SLEM_NEGSTATS_GIVEN_RANK)
NEG(n_tol, o->given |= SLEM_NEGSTATS_GIVEN_TOL)
NEG(n_kernel_opts, o->kernel = "rbf"; o->couple = 1;
    o->given |= SLEM_NEGSTATS_GIVEN_FACTOR | SLEM_NEGSTATS_GIVEN_RANK | SLEM_NEGSTATS_GIVEN_TOL)
NEG(n_full_rank, o->kernel = "rbf"; o->factor = SLEM_FACTOR_FULL;
    o->given |= SLEM_NEGSTATS_GIVEN_FACTOR | SLEM_NEGSTATS_GIVEN_RANK)
NEG(n_full_tol, o->kernel = "rbf"; o->factor = SLEM_FACTOR_FULL;
    o->given |= SLEM_NEGSTATS_GIVEN_FACTOR | SLEM_NEGSTATS_GIVEN_TOL)
NEG(n_full, o->kernel = "rbf"; o->factor = SLEM_FACTOR_FULL; o->given |= SLEM_NEGSTATS_GIVEN_FACTOR)
NEG(n_eigen_kernel, o->eigen = 1; o->kernel = "rbf")
NEG(n_pca_partial, o->pca = 4; o->partial = 1)
NEG(n_eigen_pca, o->eigen = 1; o->pca = 4)
NEG(n_eigen, o->eigen = 1)
NEG(n_mixed, o->mixed = "pos.fvecs")
NEG(n_mixed_eigen, o->mixed = "pos.fvecs"; o->eigen = 1)
NEG(n_mixed_depth, o->mixed = "pos.fvecs"; o->eigen = 1; o->depth = 2)
NEG(n_mixed_stdin, o->mixed = "-"; o->eigen = 1)
NEG(n_adaptive, o->adaptive = "pos.fvecs")
NEG(n_adaptive_depth, o->adaptive = "pos.fvecs"; o->depth = 2)
NEG(n_adaptive_stdin, o->adaptive = "-"; o->depth = 2)
NEG(n_posfmt, o->given |= SLEM_NEGSTATS_GIVEN_POS_FORMAT)
NEG(n_posfmt_mixed, o->given |= SLEM_NEGSTATS_GIVEN_POS_FORMAT; o->mixed = "p"; o->eigen = 1)
NEG(n_theta, o->given |= SLEM_NEGSTATS_GIVEN_THETA)
NEG(n_theta_adaptive, o->given |= SLEM_NEGSTATS_GIVEN_THETA; o->adaptive = "p"; o->depth = 2)
NEG(n_depth, o->depth = 3)
NEG(n_depth_pca, o->depth = 3; o->pca = 2)
NEG(n_depth_kernel_adaptive, o->depth = 3; o->kernel = "rbf"; o->adaptive = "p")
NEG(n_depth_couple, o->depth = 3; o->kernel = "rbf"; o->couple = 1)
NEG(n_depth_chi2, o->depth = 3; o->kernel = "chi2")
NEG(n_depth_rbf, o->depth = 3; o->kernel = "rbf"; o->lambda = 1)
NEG(n_depth_lambda, o->depth = 3; o->lambda = 1)
NEG(n_depth_stdin, o->depth = 3; in[0] = "-")
NEG(n_stdin, in[0] = "-")

static const NegCase neg_cases[] = {
    {"plain", n_plain, NULL},
    {"--lambda and --lambda-rel", n_both_lambdas, "give --lambda or --lambda-rel, not both"},
    {"--lambda", n_lambda, NULL},
    {"--partial --lambda", n_partial_lambda, "--partial stores sums only"},
    {"--partial --lambda-rel", n_partial_rel, "--partial stores sums only"},
    {"--partial", n_partial, NULL},
    {"--partial --kernel", n_partial_kernel, "--partial does not go with --kernel"},
    {"--shard", n_shard, "--shard makes partial statistics: add --partial"},
    {"--shard --partial", n_shard_partial, NULL},
    {"--skip-nonfinite --kernel", n_skip_kernel, "--skip-nonfinite is for linear caches"},
    {"--skip-nonfinite", n_skip, NULL},
    {"--factor", n_factor, "--factor is for kernel caches: add --kernel SPEC"},
    {"--couple", n_couple, "--couple is for kernel caches"},
    {"--rank", n_rank, "--rank is for kernel caches"},
    {"--tol", n_tol, "--tol is for kernel caches"},
    {"kernel options", n_kernel_opts, NULL},
    {"--factor full --rank", n_full_rank, "--factor full goes to the numerical rank: no --rank"},
    {"--factor full --tol", n_full_tol, "--factor full goes to the numerical rank: no --tol"},
    {"--factor full", n_full, NULL},
    {"--eigen --kernel", n_eigen_kernel, "--eigen is for linear caches: not with --kernel"},
    {"--pca --partial", n_pca_partial, "--pca is for linear caches: not with --partial"},
    {"--eigen --pca", n_eigen_pca, "give --eigen or --pca, not both"},
    {"--eigen", n_eigen, NULL},
    {"--mixed", n_mixed, "--mixed makes an eigen cache for slem-encode --alpha: add --eigen"},
    {"--mixed --eigen", n_mixed_eigen, NULL},
    {"--mixed --depth", n_mixed_depth, "--mixed needs the whole statistics: not with --depth"},
    {"--mixed -", n_mixed_stdin, "--mixed reads the positives twice: not from stdin"},
    {"--adaptive-theta", n_adaptive, "give --depth K >= 2"},
    {"--adaptive-theta --depth 2", n_adaptive_depth, NULL},
    {"--adaptive-theta -", n_adaptive_stdin, "reads the positives once per stage: not from stdin"},
    {"--positives-format", n_posfmt, "--positives-format goes with --mixed or --adaptive-theta"},
    {"--positives-format --mixed", n_posfmt_mixed, NULL},
    {"--theta", n_theta, "--theta goes with --adaptive-theta"},
    {"--theta --adaptive-theta", n_theta_adaptive, NULL},
    {"--depth 3", n_depth, NULL},
    {"--depth 3 --pca", n_depth_pca, "--depth 3 is for linear or kernel SLEM: not with --pca"},
    {"--depth --kernel --adaptive-theta", n_depth_kernel_adaptive,
     "--adaptive-theta is for linear SLEM: not with --kernel"},
    {"--depth --kernel --couple", n_depth_couple, "--couple is for a kernel cache of depth 1"},
    {"--depth --kernel chi2", n_depth_chi2, "--depth 3 is not for the"},
    {"--depth --kernel --lambda", n_depth_rbf, NULL},
    {"--depth --lambda", n_depth_lambda, "--depth 3 takes --lambda-rel"},
    {"--depth stdin", n_depth_stdin, "--depth 3 reads the negatives once per stage: not from stdin"},
    {"stdin", n_stdin, NULL},
};

START_TEST(test_negstats_rules) {
  const NegCase *c = &neg_cases[_i];
  SlemNegstatsOpts o;
  const char *in[2] = {"a.fvecs", "b.fvecs"};
  SlemError err;
  int st;
  slem_negstats_opts_init(&o);
  c->set(&o, in);
  err.msg[0] = 0;
  st = slem_negstats_check(&o, in, 2, &err);
  if (!c->msg) {
    ck_assert_msg(st == SLEM_OK, "%s: refused: %s", c->name, err.msg);
  } else {
    ck_assert_msg(st == SLEM_EINVAL, "%s: accepted, expected '%s'", c->name, c->msg);
    ck_assert_msg(strstr(err.msg, c->msg) != NULL, "%s: '%s', expected '%s'", c->name, err.msg,
                  c->msg);
  }
}
END_TEST

START_TEST(test_negstats_no_inputs) {
  SlemNegstatsOpts o;
  SlemError err;
  slem_negstats_opts_init(&o);
  ck_assert_int_eq(slem_negstats_check(&o, NULL, 0, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "no negatives: give one or more vector files");
}
END_TEST

/* a caller of the library gets the same refusal from the run, before anything is read (the
 * inputs do not exist) and nothing is written */
START_TEST(test_negstats_run_checks) {
  SlemNegstatsOpts o;
  SlemNegstatsResult res;
  SlemError err;
  const char *in = "/nonexistent/negatives.fvecs";
  char *out = tu_path("rules-neg.slem");
  slem_negstats_opts_init(&o);
  o.eigen = 1;
  o.pca = 3;
  ck_assert_int_eq(slem_negstats_run(out, &in, 1, &o, &res, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "give --eigen or --pca, not both");
  ck_assert(!tu_file_exists(out));
  free(out);
}
END_TEST

/* ---- slem_encstream_check() and slem_encstream_check_dtype() ---- */

typedef struct {
  const char *name;
  void (*set)(SlemEncStreamOpts *o, const char **output, int *ids, int *groups);
  const char *msg; /* a part of the message; NULL: accepted */
} EncCase;

#define ENC(fn, body)                                                           \
  static void fn(SlemEncStreamOpts *o, const char **output, int *ids, int *groups) { \
    (void)o; (void)output; (void)ids; (void)groups; body;                      \
  }
ENC(e_plain, (void)0)
ENC(e_theta, o->theta_set = 1)
ENC(e_theta_classifier, o->theta_set = 1; o->mode = SLEM_ENCODE_CLASSIFIER)
ENC(e_theta_basic, o->theta_set = 1; o->basic = 1)
ENC(e_alpha_classifier, o->alpha_set = 1; o->mode = SLEM_ENCODE_CLASSIFIER)
ENC(e_alpha, o->alpha_set = 1)
ENC(e_no_extension, *output = "out.weird")
ENC(e_format_given, *output = "out.weird"; o->format = SLEM_FMT_FVECS)
ENC(e_f2_fvecs, o->dtype = SLEM_DTYPE_F2)
ENC(e_f2_npy, o->dtype = SLEM_DTYPE_F2; *output = "out.npy")
ENC(e_i1_classifier, o->dtype = SLEM_DTYPE_I1; o->format = SLEM_FMT_NPY;
    o->mode = SLEM_ENCODE_CLASSIFIER)
ENC(e_i1, o->dtype = SLEM_DTYPE_I1; o->format = SLEM_FMT_NPY)
ENC(e_projections_fvecs, o->projections = 1)
ENC(e_projections, o->projections = 1; *output = "out.slem")
ENC(e_projections_classifier, o->projections = 1; o->format = SLEM_FMT_SLEM;
    o->mode = SLEM_ENCODE_CLASSIFIER)
ENC(e_coordinates_couple, o->coordinates = 1; o->couple = 1)
ENC(e_coordinates_classifier, o->coordinates = 1; o->mode = SLEM_ENCODE_CLASSIFIER)
ENC(e_coordinates, o->coordinates = 1)
ENC(e_groups_shard, *groups = 1; o->shard.count = 2)
ENC(e_groups, *groups = 1)
ENC(e_shard, o->shard.count = 2)
ENC(e_ids_fvecs, *ids = 1)
ENC(e_ids_slem, *ids = 1; o->format = SLEM_FMT_SLEM)

static const EncCase enc_cases[] = {
    {"plain", e_plain, NULL},
    {"--theta", e_theta, "--theta goes with --classifier or --basic"},
    {"--theta --classifier", e_theta_classifier, NULL},
    {"--theta --basic", e_theta_basic, NULL},
    {"--alpha --classifier", e_alpha_classifier, "--alpha gives unit descriptors, not classifiers"},
    {"--alpha", e_alpha, NULL},
    {"no extension", e_no_extension, "out.weird: the output's extension names no vector format"},
    {"-F fvecs", e_format_given, NULL},
    {"--dtype f2 to fvecs", e_f2_fvecs, "--dtype f2 needs npy output (-F npy, or OUT.npy)"},
    {"--dtype f2 to npy", e_f2_npy, NULL},
    {"--dtype i1 --classifier", e_i1_classifier, "--dtype i1 is for unit-norm descriptors, not "
                                                 "classifiers"},
    {"--dtype i1", e_i1, NULL},
    {"--projections to fvecs", e_projections_fvecs, "--projections are written to a container"},
    {"--projections to slem", e_projections, NULL},
    {"--projections --classifier", e_projections_classifier, "--projections are not classifiers"},
    {"--coordinates --couple", e_coordinates_couple, "--coordinates go with none of"},
    {"--coordinates --classifier", e_coordinates_classifier, "--coordinates go with none of"},
    {"--coordinates", e_coordinates, NULL},
    {"--groups --shard", e_groups_shard, "--groups needs the whole input: not with --shard"},
    {"--groups", e_groups, NULL},
    {"--shard", e_shard, NULL},
    {"--ids to fvecs", e_ids_fvecs, "--ids: ids travel in the container"},
    {"--ids to slem", e_ids_slem, NULL},
};

START_TEST(test_encstream_rules) {
  const EncCase *c = &enc_cases[_i];
  SlemEncStreamOpts o;
  const char *output = "out.fvecs";
  int ids = 0, groups = 0, st;
  SlemError err;
  slem_encstream_opts_init(&o);
  c->set(&o, &output, &ids, &groups);
  err.msg[0] = 0;
  st = slem_encstream_check(&o, output, ids, groups, &err);
  if (!c->msg) {
    ck_assert_msg(st == SLEM_OK, "%s: refused: %s", c->name, err.msg);
  } else {
    ck_assert_msg(st == SLEM_EINVAL, "%s: accepted, expected '%s'", c->name, c->msg);
    ck_assert_msg(strstr(err.msg, c->msg) != NULL, "%s: '%s', expected '%s'", c->name, err.msg,
                  c->msg);
  }
}
END_TEST

/* the rule of --dtype from the table of formats, with the user's spelling in the message */
START_TEST(test_dtype_rule) {
  SlemError err;
  ck_assert_int_eq(slem_encstream_check_dtype(SLEM_DTYPE_F4, NULL, SLEM_FMT_FVECS, 1, &err),
                   SLEM_OK);
  ck_assert_int_eq(slem_encstream_check_dtype(SLEM_DTYPE_F2, NULL, SLEM_FMT_NPY, 1, &err), SLEM_OK);
  ck_assert_int_eq(slem_encstream_check_dtype(SLEM_DTYPE_F2, "float16", SLEM_FMT_TEXT, 0, &err),
                   SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--dtype float16 needs npy output (-F npy, or OUT.npy)");
  ck_assert_int_eq(slem_encstream_check_dtype(SLEM_DTYPE_I1, NULL, SLEM_FMT_SLEM, 0, &err),
                   SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--dtype i1 needs npy output (-F npy, or OUT.npy)");
  ck_assert_int_eq(slem_encstream_check_dtype(SLEM_DTYPE_I1, NULL, SLEM_FMT_NPY, 1, &err),
                   SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--dtype i1 is for unit-norm descriptors, not classifiers");
  /* what the table says each format can write */
  ck_assert(slem_format_stores(SLEM_FMT_NPY, SLEM_DTYPE_I1));
  ck_assert(!slem_format_stores(SLEM_FMT_FVECS, SLEM_DTYPE_F2));
  ck_assert(slem_format_stores(SLEM_FMT_FVECS, SLEM_DTYPE_F4));
  ck_assert(!slem_format_stores(SLEM_FMT_AUTO, SLEM_DTYPE_F4));
  ck_assert(slem_format_carries(SLEM_FMT_SLEM));
  ck_assert(!slem_format_carries(SLEM_FMT_NPY));
  /* which names of vectors may be a ranking's too (cli_refuse_vector_name()) */
  ck_assert(slem_format_is_text(SLEM_FMT_TEXT));
  ck_assert(!slem_format_is_text(SLEM_FMT_FVECS));
  ck_assert(!slem_format_is_text(SLEM_FMT_NPY));
  ck_assert(!slem_format_is_text(SLEM_FMT_AUTO));
}
END_TEST

/* a caller of the library gets the refusal from the run too, before the input is read */
START_TEST(test_encstream_run_checks) {
  SlemEncStreamOpts o;
  SlemEncStreamResult res;
  SlemError err;
  char *in = tu_path("rules-in.fvecs"), *out = tu_path("rules-enc.fvecs");
  const double x[4] = {1, 2, 3, 4};
  SlemVecReader *r = NULL;
  tu_write_fvecs(in, x, 2, 2);
  ck_assert_int_eq(slem_vecreader_open(&r, in, SLEM_FMT_AUTO, &err), SLEM_OK);
  slem_encstream_opts_init(&o);
  o.esvm_d = 2;
  o.projections = 1;
  ck_assert_int_eq(slem_encstream_run(NULL, r, out, &o, &res, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "--projections are written to a container"));
  ck_assert(!tu_file_exists(out));
  slem_vecreader_free(r);
  free(in);
  free(out);
}
END_TEST

/* slem-encode as one call: a refusal of the cache's encoder is the options' (usage), a
 * missing file is not; a good run writes every row */
START_TEST(test_encstream_run_files) {
  char *neg = tu_path("rf-neg.fvecs"), *cache = tu_path("rf.slem"), *out = tu_path("rf.fvecs");
  double x[40 * 3];
  const char *in = neg;
  SlemNegstatsOpts no;
  SlemNegstatsResult nres;
  SlemEncStreamOpts o;
  SlemEncStreamFiles f = {0};
  SlemEncStreamResult res;
  SlemError err;
  int usage = -1;
  tu_seed(7);
  tu_gaussian_rows(x, 40, 3, 0);
  tu_write_fvecs(neg, x, 40, 3);
  slem_negstats_opts_init(&no);
  ck_assert_int_eq(slem_negstats_run(cache, &in, 1, &no, &nres, &err), SLEM_OK);
  f.cache = cache;
  f.input = neg;
  slem_encstream_opts_init(&o);
  o.couple = 1;
  ck_assert_int_eq(slem_encstream_run_files(&f, out, &o, &res, &usage, &err), SLEM_EINVAL);
  ck_assert_int_eq(usage, 1);
  ck_assert_ptr_nonnull(strstr(err.msg, "--couple needs a kernel cache"));
  ck_assert(!tu_file_exists(out));
  o.couple = 0;
  f.cache = "/nonexistent/cache.slem";
  ck_assert_int_ne(slem_encstream_run_files(&f, out, &o, &res, &usage, &err), SLEM_OK);
  ck_assert_int_eq(usage, 0);
  f.cache = cache;
  ck_assert_int_eq(slem_encstream_run_files(&f, out, &o, &res, &usage, &err), SLEM_OK);
  ck_assert_uint_eq(res.n, 40);
  ck_assert(tu_file_exists(out));
  free(neg);
  free(cache);
  free(out);
}
END_TEST

/* ---- slem_truth_check(): slem-eval's and slem-report's ground truth ---- */

typedef struct {
  const char *name;
  int protocol;
  const char *easy, *hard;
  SlemTruthSpec spec;
  int with_neighbors;
  const char *msg; /* the whole message; NULL: accepted */
} TruthCase;

static const TruthCase truth_cases[] = {
    {"labels", 0, NULL, NULL, {.qlabels = "q", .dblabels = "d"}, 0, NULL},
    {"qrels", 0, NULL, NULL, {.qrels = "r"}, 0, NULL},
    {"neighbors", 0, NULL, NULL, {.neighbors = "n", .qids = "i"}, 1, NULL},
    {"--easy without --protocol", 0, "e", NULL, {.qrels = "r"}, 0,
     "--easy and --hard go with --protocol"},
    {"--hard without --protocol", 0, NULL, "h", {.qrels = "r"}, 1,
     "--easy and --hard go with --protocol"},
    {"--protocol alone", 1, NULL, NULL, {0}, 0,
     "--protocol needs the positives: --easy F and --hard F, or graded --qrels"},
    {"--protocol --qrels --easy", 1, "e", NULL, {.qrels = "r"}, 0,
     "--protocol needs the positives: --easy F and --hard F, or graded --qrels"},
    {"--protocol --easy --hard", 1, "e", "h", {0}, 0, NULL},
    {"--protocol --qrels", 1, NULL, NULL, {.qrels = "r"}, 0, NULL},
    {"--protocol with labels", 1, "e", "h", {.qlabels = "q", .dblabels = "d"}, 0,
     "--protocol takes no labels"},
    {"--protocol --qrels --junk", 1, NULL, NULL, {.qrels = "r", .njunk = 1}, 0,
     "--protocol with --qrels: junk is grade -1 there"},
    {"--protocol --easy --hard --junk", 1, "e", "h", {.njunk = 1}, 0, NULL},
    {"--neighbors --qrels", 0, NULL, NULL, {.neighbors = "n", .qrels = "r"}, 1,
     "--neighbors is the ground truth alone: no --qrels, labels or --exclude-self"},
    {"--neighbors --exclude-self", 0, NULL, NULL, {.neighbors = "n", .exclude_self = 1}, 1,
     "--neighbors is the ground truth alone: no --qrels, labels or --exclude-self"},
    {"nothing (slem-eval)", 0, NULL, NULL, {0}, 1,
     "give the ground truth as --qrels, --query-labels and --db-labels, or --neighbors"},
    {"nothing (slem-report)", 0, NULL, NULL, {0}, 0,
     "give the ground truth as --qrels, or as --query-labels and --db-labels"},
    {"qrels and labels", 0, NULL, NULL, {.qrels = "r", .qlabels = "q", .dblabels = "d"}, 0,
     "give the ground truth as --qrels, or as --query-labels and --db-labels"},
    {"half the labels", 0, NULL, NULL, {.qlabels = "q"}, 1,
     "--query-labels and --db-labels go together"},
    {"--qrels --query-ids", 0, NULL, NULL, {.qrels = "r", .qids = "i"}, 1,
     "--query-ids, --db-ids and --exclude-self go with labels, not --qrels"},
    {"--qrels --exclude-self", 0, NULL, NULL, {.qrels = "r", .exclude_self = 1}, 0,
     "--query-ids, --db-ids and --exclude-self go with labels, not --qrels"},
    {"--protocol --qrels --exclude-self", 1, NULL, NULL, {.qrels = "r", .exclude_self = 1}, 0,
     "--query-ids, --db-ids and --exclude-self go with labels, not --qrels"},
    {"labels with ids and --exclude-self", 0, NULL, NULL,
     {.qlabels = "q", .dblabels = "d", .qids = "i", .dbids = "j", .exclude_self = 1}, 0, NULL},
};

START_TEST(test_truth_rules) {
  const TruthCase *c = &truth_cases[_i];
  SlemError err;
  int st;
  err.msg[0] = 0;
  st = slem_truth_check(&c->spec, c->protocol, c->easy, c->hard, c->with_neighbors, &err);
  if (!c->msg) {
    ck_assert_msg(st == SLEM_OK, "%s: refused: %s", c->name, err.msg);
  } else {
    ck_assert_msg(st == SLEM_EINVAL, "%s: accepted, expected '%s'", c->name, c->msg);
    ck_assert_msg(strcmp(err.msg, c->msg) == 0, "%s: '%s', expected '%s'", c->name, err.msg,
                  c->msg);
  }
}
END_TEST

/* slem_truth_read() refuses as the tools do, before any file is read */
START_TEST(test_truth_read_checks) {
  SlemTruth *t = NULL;
  SlemError err;
  SlemTruthSpec spec = {.qrels = "/nonexistent/qrels", .exclude_self = 1};
  ck_assert_int_eq(slem_truth_read(&t, &spec, &err), SLEM_EINVAL);
  ck_assert_ptr_null(t);
  ck_assert_str_eq(err.msg, "--query-ids, --db-ids and --exclude-self go with labels, not --qrels");
}
END_TEST

static void write_text(const char *path, const char *text) {
  tu_write_bytes(path, text, strlen(text));
}

/* slem-eval as one call: the summary and the curve written together; the rules first */
START_TEST(test_eval_run) {
  char *ql = tu_path("ev-q.labels"), *dl = tu_path("ev-d.labels"), *rk = tu_path("ev.tsv");
  char *out = tu_path("ev.out"), *curve = tu_path("ev.curve");
  SlemTruthSpec spec = {.qlabels = ql};
  SlemEvalOpts o;
  SlemEvalResult *res = NULL;
  SlemTruth *truth = NULL;
  SlemError err;
  write_text(ql, "a\nb\n");
  write_text(dl, "a\nb\nb\n");
  write_text(rk, "0\t1\t1\t0.9\n0\t2\t0\t0.5\n1\t1\t1\t0.8\n1\t2\t2\t0.7\n");
  slem_eval_opts_init(&o);
  ck_assert_int_eq(slem_eval_run(&res, &truth, rk, SLEM_RANK_AUTO, &spec, &o, out, curve, 0, &err),
                   SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--query-labels and --db-labels go together");
  ck_assert(res == NULL && truth == NULL && !tu_file_exists(out) && !tu_file_exists(curve));
  spec.dblabels = dl;
  ck_assert_int_eq(slem_eval_run(&res, &truth, rk, SLEM_RANK_AUTO, &spec, &o, out, curve, 0, &err),
                   SLEM_OK);
  ck_assert_uint_eq(res->nq, 2);
  ck_assert(tu_file_exists(out) && tu_file_exists(curve));
  slem_eval_result_free(res);
  slem_truth_free(truth);
  /* --protocol without positives: refused before the ranking is read */
  ck_assert_int_eq(slem_revisit_run(SLEM_PROTO_HARD, NULL, NULL, NULL, NULL, 0, "/nonexistent",
                                    SLEM_RANK_AUTO, out, 0, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--protocol needs the positives: --easy F and --hard F, or graded "
                            "--qrels");
  free(ql);
  free(dl);
  free(rk);
  free(out);
  free(curve);
}
END_TEST

/* slem-eval --trec-compat as one call: an unknown -m is the options' error, a missing qrels
 * file is not */
START_TEST(test_treceval_run) {
  SlemTrecOpts o;
  SlemError err;
  uint64_t skipped = 1;
  int usage = -1;
  const char *bad[] = {"nosuch"}, *good[] = {"map"};
  char *out = tu_path("te.out");
  slem_treceval_opts_init(&o);
  ck_assert_int_ne(slem_treceval_run(&o, bad, 1, "/nonexistent/q", "/nonexistent/r",
                                     SLEM_RANK_AUTO, out, &skipped, &usage, &err), SLEM_OK);
  ck_assert_int_eq(usage, 1);
  ck_assert_ptr_nonnull(strstr(err.msg, "unknown measure 'nosuch'"));
  ck_assert_int_ne(slem_treceval_run(&o, good, 1, "/nonexistent/q", "/nonexistent/r",
                                     SLEM_RANK_AUTO, out, &skipped, &usage, &err), SLEM_OK);
  ck_assert_int_eq(usage, 0);
  ck_assert(!tu_file_exists(out));
  free(out);
}
END_TEST

/* slem-report's page: the same refusals from the library, before any file is read */
START_TEST(test_report_make_checks) {
  SlemTruthSpec spec = {.qrels = "/nonexistent/qrels", .exclude_self = 1};
  SlemReportInput run = {"run", "/nonexistent/run.tsv"};
  SlemReportOpts o;
  SlemReportProtocol proto = {.protocol = SLEM_PROTO_HARD, .easy = "/nonexistent/easy"};
  SlemThumbOpts th;
  SlemError err;
  char *out = tu_path("rules.html");
  slem_report_opts_init(&o);
  slem_thumbs_opts_init(&th);
  ck_assert_int_eq(slem_report_make(out, &spec, &run, 1, SLEM_RANK_AUTO, NULL, &o, &th, NULL, NULL,
                                    0, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--query-ids, --db-ids and --exclude-self go with labels, not --qrels");
  spec.exclude_self = 0;
  o.protocol = &proto; /* graded qrels and easy positives both */
  ck_assert_int_eq(slem_report_make(out, &spec, &run, 1, SLEM_RANK_AUTO, NULL, &o, &th, NULL, NULL,
                                    0, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--protocol needs the positives: --easy F and --hard F, or graded "
                            "--qrels");
  ck_assert(!tu_file_exists(out));
  free(out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rules");
  TCase *tc = tcase_create("negstats");
  tcase_add_loop_test(tc, test_negstats_rules, 0, (int)(sizeof neg_cases / sizeof neg_cases[0]));
  tcase_add_test(tc, test_negstats_no_inputs);
  tcase_add_test(tc, test_negstats_run_checks);
  suite_add_tcase(s, tc);
  tc = tcase_create("encstream");
  tcase_add_loop_test(tc, test_encstream_rules, 0, (int)(sizeof enc_cases / sizeof enc_cases[0]));
  tcase_add_test(tc, test_dtype_rule);
  tcase_add_test(tc, test_encstream_run_checks);
  tcase_add_test(tc, test_encstream_run_files);
  suite_add_tcase(s, tc);
  tc = tcase_create("truth");
  tcase_add_loop_test(tc, test_truth_rules, 0, (int)(sizeof truth_cases / sizeof truth_cases[0]));
  tcase_add_test(tc, test_truth_read_checks);
  tcase_add_test(tc, test_eval_run);
  tcase_add_test(tc, test_treceval_run);
  tcase_add_test(tc, test_report_make_checks);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
