/* Unit tests of the rules between options, each checked once in the library (issue 44):
 * slem_negstats_check(), slem_encstream_check(), slem_dtype_check() and slem_truth_check().
 * Every rule has a refused combination (SLEM_EINVAL and the tool's message) and, beside it,
 * the nearest accepted one (SLEM_OK), so that a rule removed or widened fails here. */
#include "testutil.h"

#include "../lib/encode/negstats.h"
#include "../lib/linalg/kernel.h"

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

static Suite *suite(void) {
  Suite *s = suite_create("rules");
  TCase *tc = tcase_create("negstats");
  tcase_add_loop_test(tc, test_negstats_rules, 0, (int)(sizeof neg_cases / sizeof neg_cases[0]));
  tcase_add_test(tc, test_negstats_no_inputs);
  tcase_add_test(tc, test_negstats_run_checks);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
