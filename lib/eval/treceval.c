#define _POSIX_C_SOURCE 200809L
#include "treceval.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io.h"
#include "measures.h"
#include "strmap.h"
#include "truth.h"

#define MAX_CUTS SLEM_MAX_CUTS
#define MAX_MEASURES 48 /* the table's length, at most (checked in slem_treceval_new) */

typedef struct Judg {
  size_t doc;
  long rel;
} Judg;

typedef struct Res {
  size_t doc;
  double score;
  uint64_t line;
  const char *docno; /* set when evaluating */
  long rel;
} Res;

typedef struct Topic {
  Judg *j;
  size_t nj, cj;
  Res *r;
  size_t nr, cr;
  int judged; /* in the qrels */
} Topic;

struct SlemTrecEval {
  SlemTrecOpts o;
  SlemStrMap *qids, *docs;
  SlemKeySet *seen_q, *seen_r;
  Topic *t;
  size_t nt, ct;
  const SlemMeasure *tab; /* measures.h's table */
  size_t ntab;
  int want[MAX_MEASURES], any_wanted;
  double cuts[MAX_MEASURES][MAX_CUTS]; /* each measure's cut-offs, increasing, or parameters */
  size_t ncuts[MAX_MEASURES];
  int given[MAX_MEASURES];    /* parameters given: later ones are ignored, as trec_eval does */
  int gain_map[MAX_MEASURES]; /* cuts are nDCG's (level, gain) pairs */
  char text[MAX_MEASURES][sizeof ((SlemMeasureReq *)0)->text]; /* parameters as given */
  char *runid; /* the run tag of the run's last line (trec_eval's runid); NULL: none read */
};

void slem_treceval_opts_init(SlemTrecOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->relevance_level = 1;
}

int slem_treceval_new(SlemTrecEval **out, const SlemTrecOpts *opts, SlemError *err) {
  SlemTrecEval *self = calloc(1, sizeof *self);
  *out = NULL;
  if (!self) return slem_error(err, SLEM_ENOMEM, "out of memory");
  self->o = *opts;
  self->qids = slem_strmap_new();
  self->docs = slem_strmap_new();
  self->seen_q = slem_keyset_new();
  self->seen_r = slem_keyset_new();
  self->tab = slem_measures(&self->ntab);
  for (size_t m = 0; m < self->ntab && m < MAX_MEASURES; m++) {
    self->ncuts[m] = self->tab[m].ncuts;
    if (self->ncuts[m]) memcpy(self->cuts[m], self->tab[m].cuts, self->ncuts[m] * sizeof(double));
  }
  if (self->ntab > MAX_MEASURES) {
    slem_treceval_free(self);
    return slem_error(err, SLEM_EINVAL, "treceval.c: MAX_MEASURES is smaller than the table");
  }
  if (!self->qids || !self->docs || !self->seen_q || !self->seen_r) {
    slem_treceval_free(self);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  *out = self;
  return SLEM_OK;
}

void slem_treceval_free(SlemTrecEval *self) {
  if (!self) return;
  for (size_t i = 0; i < self->nt; i++) {
    free(self->t[i].j);
    free(self->t[i].r);
  }
  free(self->t);
  slem_strmap_free(self->qids);
  slem_strmap_free(self->docs);
  slem_keyset_free(self->seen_q);
  slem_keyset_free(self->seen_r);
  free(self->runid);
  free(self);
}

/* trec_eval's nicknames of sets of measures: official and all_trec from the table's flags,
 * set by its names ("" ends a list) */
static const char *const set_names[] = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret",
                                        "utility", "set_P", "set_recall", "set_relative_P",
                                        "set_map", "set_F", ""};

/* What trec_eval 10.0 computes and slem does not: the measures and nicknames, and why */
#define PREFS "preference judgements (trec_eval -R prefs or qrels_prefs); slem reads qrels only"
#define JG "judgement groups (trec_eval -R qrels_jg); slem reads qrels only"
static const struct {
  const char *name, *why;
} unsupported[] = {
    {"rbp", "trec_eval 10.0's m_rbp.c reads two variables (min and max gain) before setting "
            "them, so its value is not defined"},
    {"all_prefs", PREFS}, {"prefs", PREFS}, {"prefs_num_prefs_poss", PREFS},
    {"prefs_num_prefs_ful", PREFS}, {"prefs_num_prefs_ful_ret", PREFS}, {"prefs_simp", PREFS},
    {"prefs_pair", PREFS}, {"prefs_avgjg", PREFS}, {"prefs_avgjg_Rnonrel", PREFS},
    {"prefs_simp_ret", PREFS}, {"prefs_pair_ret", PREFS}, {"prefs_avgjg_ret", PREFS},
    {"prefs_avgjg_Rnonrel_ret", PREFS}, {"prefs_simp_imp", PREFS}, {"prefs_pair_imp", PREFS},
    {"prefs_avgjg_imp", PREFS}, {"qrels_jg", JG}, {"map_avgjg", JG}, {"P_avgjg", JG},
    {"Rprec_mult_avgjg", JG},
};

int slem_treceval_measure(SlemTrecEval *self, const char *spec, SlemError *err) {
  const char *dot = strchr(spec, '.');
  size_t len = dot ? (size_t)(dot - spec) : strlen(spec);
  long m;
  SlemMeasureReq req;
  char names[1024];
  size_t used = 0;
  if (len == 8 && strncmp(spec, "official", 8) == 0 && !dot) {
    for (size_t i = 0; i < self->ntab; i++) self->want[i] |= self->tab[i].official;
    self->any_wanted = 1;
    return SLEM_OK;
  }
  if (len == 8 && strncmp(spec, "all_trec", 8) == 0 && !dot) {
    for (size_t i = 0; i < self->ntab; i++) self->want[i] |= self->tab[i].trec == 1;
    self->any_wanted = 1;
    return SLEM_OK;
  }
  if (strcmp(spec, "set") == 0) {
    for (size_t i = 0; *set_names[i]; i++) {
      long k = slem_measure_find(set_names[i], strlen(set_names[i]));
      if (k >= 0) self->want[k] = 1; /* every name is in the table */
    }
    self->any_wanted = 1;
    return SLEM_OK;
  }
  for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++)
    if (strlen(unsupported[i].name) == len && strncmp(spec, unsupported[i].name, len) == 0)
      return slem_error(err, SLEM_EINVAL, "%s: not supported by slem: %s", spec, unsupported[i].why);
  if ((m = slem_measure_parse(&req, spec, err)) == SLEM_OK && !self->tab[req.m].trec) m = -1;
  if (m == SLEM_OK) {
    m = (long)req.m;
    /* trec_eval takes the first parameters given for a measure (-m P.10 -m P.5: P_10) */
    if (dot && !self->given[m]) {
      self->ncuts[m] = req.ncuts;
      memcpy(self->cuts[m], req.cuts, req.ncuts * sizeof *req.cuts);
      self->gain_map[m] = req.gain_map;
      memcpy(self->text[m], req.text, sizeof req.text);
      self->given[m] = 1;
    }
    self->want[m] = 1;
    self->any_wanted = 1;
    return SLEM_OK;
  }
  if (m > 0) return (int)m;
  names[0] = 0;
  for (size_t i = 0; i < self->ntab && used < sizeof names; i++)
    if (self->tab[i].trec) used += (size_t)snprintf(names + used, sizeof names - used, "%s, ", self->tab[i].name);
  return slem_error(err, SLEM_EINVAL, "unknown measure '%s' (%sofficial, all_trec, set)", spec, names);
}

/* The topic of qid, created when new; NULL when out of memory. */
static Topic *topic(SlemTrecEval *self, const char *qid) {
  long i = slem_strmap_intern(self->qids, qid, strlen(qid));
  if (i < 0) return NULL;
  if ((size_t)i == self->nt) {
    if (self->nt == self->ct) {
      size_t c = self->ct ? 2 * self->ct : 64;
      Topic *t = realloc(self->t, c * sizeof *t);
      if (!t) return NULL;
      self->t = t;
      self->ct = c;
    }
    memset(self->t + self->nt++, 0, sizeof *self->t);
  }
  return self->t + i;
}

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? 2 * *cap : 16;
  void *q = realloc(*p, c * size);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

int slem_treceval_read_qrels(SlemTrecEval *self, const char *path, SlemError *err) {
  SlemTruth *truth = NULL;
  int st = slem_truth_read_graded(&truth, path, 1, err);
  for (size_t q = 0; st == SLEM_OK && q < slem_truth_queries(truth); q++) {
    const char *qid = slem_truth_query(truth, q);
    Topic *t = topic(self, qid);
    if (!t) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", path);
      break;
    }
    t->judged = 1;
    for (size_t i = 0; i < slem_truth_njudged(truth, q); i++) {
      const char *docno;
      long rel, doc;
      slem_truth_judgement(truth, q, i, &docno, &rel, NULL);
      if ((doc = slem_strmap_intern(self->docs, docno, strlen(docno))) < 0 ||
          grow((void **)&t->j, &t->cj, t->nj, sizeof *t->j)) {
        st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", path);
        break;
      }
      switch (slem_keyset_add(self->seen_q, slem_pair((size_t)(t - self->t), (size_t)doc))) {
      case 0: /* a second qrels file judging the pair again */
        st = slem_error(err, SLEM_EFORMAT, "%s: document '%s' judged twice for topic '%s'", path,
                        docno, qid);
        break;
      case -1: st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", path); break;
      default:
        t->j[t->nj].doc = (size_t)doc;
        t->j[t->nj++].rel = rel;
      }
      if (st) break;
    }
  }
  slem_truth_free(truth);
  return st;
}

int slem_treceval_result(SlemTrecEval *self, const char *qid, const char *docno, double score,
                         const char *name, uint64_t line, SlemError *err) {
  Topic *t;
  long doc;
  if (!isfinite(score))
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": score is not finite", name, line);
  if (!(t = topic(self, qid)) || (doc = slem_strmap_intern(self->docs, docno, strlen(docno))) < 0 ||
      grow((void **)&t->r, &t->cr, t->nr, sizeof *t->r))
    return slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
  switch (slem_keyset_add(self->seen_r, slem_pair((size_t)(t - self->t), (size_t)doc))) {
  case 0:
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": document '%s' retrieved twice "
                      "for topic '%s'", name, line, docno, qid);
  case -1: return slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
  }
  t->r[t->nr].doc = (size_t)doc;
  t->r[t->nr].score = score;
  t->r[t->nr++].line = line;
  return SLEM_OK;
}

int slem_treceval_add_run(SlemTrecEval *self, SlemRankReader *rankings, SlemError *err) {
  const SlemRankQuery *q;
  int st;
  while ((st = slem_rankreader_next(rankings, &q, err)) == SLEM_OK && q)
    for (size_t i = 0; i < q->n && st == SLEM_OK; i++)
      if ((st = slem_treceval_result(self, q->query, q->e[i].id, q->e[i].score,
                                     slem_rankreader_name(rankings), q->e[i].line, err)) ==
              SLEM_OK && q->e[i].tag) {
        free(self->runid);
        if (!(self->runid = strdup(q->e[i].tag)))
          st = slem_error(err, SLEM_ENOMEM, "out of memory");
      }
  return st;
}

/* The fields of line, split on blanks in place: up to max, *n gets how many were found. */
static size_t split_blanks(char *line, char **f, size_t max) {
  size_t n = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p || n == max) break;
    f[n++] = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
    if (*p) *p++ = 0;
  }
  return n;
}

int slem_treceval_read_run(SlemTrecEval *self, const char *path, SlemError *err) {
  FILE *fp;
  fp = strcmp(path, "-") ? fopen(path, "r") : slem_in_stdin_file();
  const char *name = strcmp(path, "-") ? path : "<stdin>";
  char *line = NULL, *f[7];
  size_t cap = 0;
  uint64_t ln = 0;
  int st = SLEM_OK;
  if (!fp && strcmp(path, "-") == 0 && slem_in_stdin_closed(err) != SLEM_OK) return SLEM_EIO;
  if (!fp) return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(errno));
  ssize_t len;
  while ((len = getline(&line, &cap, fp)) >= 0) {
    size_t n;
    char *end;
    double score;
    ln++;
    const char *nul = memchr(line, 0, (size_t)len);
    if (nul) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": a NUL byte (column %zu): not a "
                      "text line", name, ln, (size_t)(nul - line) + 1);
      break;
    }
    /* a comment, as trec_eval skips it: '#' first on the line */
    if (line[0] == '#' || (n = split_blanks(line, f, 7)) == 0) continue;
    if (n < 6) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %zu fields, expected 6 (qid Q0 "
                      "docno rank score tag)", name, ln, n);
      break;
    }
    errno = 0;
    score = strtod(f[4], &end);
    if (end == f[4] || *end) {
      st = slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": score '%s' is not a number", name,
                      ln, f[4]);
      break;
    }
    if ((st = slem_treceval_result(self, f[0], f[2], score, name, ln, err)) != SLEM_OK) break;
    free(self->runid);
    if (!(self->runid = strdup(f[5]))) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory reading %s", name);
      break;
    }
  }
  if (st == SLEM_OK && ferror(fp)) st = slem_error(err, SLEM_EIO, "%s: read error", name);
  free(line);
  if (fp != stdin) fclose(fp);
  return st;
}

/* Whether path's first non-blank line has at least 6 blank-separated fields and is not JSON
 * (a TREC run rather than tsv, jsonl or npy); 0 when it cannot be read (the reader says why). */
static int looks_trec(const char *path) {
  struct stat sb;
  FILE *fp = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? fopen(path, "r") : NULL; /* a pipe is read once */
  char *line = NULL, *f[6];
  size_t cap = 0, n = 0;
  int trec = 0;
  if (!fp) return 0;
  while (getline(&line, &cap, fp) >= 0) {
    if (line[0] == '#' || (n = split_blanks(line, f, 6)) == 0) continue;
    trec = n == 6 && f[0][0] != '{' && (unsigned char)f[0][0] != 0x93;
    break;
  }
  free(line);
  fclose(fp);
  return trec;
}

int slem_treceval_add_path(SlemTrecEval *self, const char *path, SlemRankFormat format,
                           SlemError *err) {
  SlemRankReader *r = NULL;
  int st;
  if (format == SLEM_RANK_TREC || (format == SLEM_RANK_AUTO && strcmp(path, "-") && looks_trec(path)))
    return slem_treceval_read_run(self, path, err);
  if ((st = slem_rankreader_open(&r, path, format, err)) == SLEM_OK)
    st = slem_treceval_add_run(self, r, err);
  slem_rankreader_free(r);
  return st;
}

int slem_treceval_write_path(SlemTrecEval *self, const char *path, uint64_t *skipped,
                             SlemError *err) {
  SlemOut *out = NULL;
  int st = slem_out_open(&out, path, err);
  if (st == SLEM_OK) st = slem_treceval_write(self, slem_out_file(out), skipped, err);
  if (st != SLEM_OK) {
    slem_out_abort(out);
    return st;
  }
  return slem_out_commit(out, err);
}

/* trec_eval's order: higher score first, equal scores by docno in decreasing order. */
static int by_score_docno(const void *a, const void *b) {
  const Res *x = a, *y = b;
  if (x->score > y->score) return -1;
  if (x->score < y->score) return 1;
  return strcmp(y->docno, x->docno);
}

static int by_doc(const void *a, const void *b) {
  const Judg *x = a, *y = b;
  return x->doc < y->doc ? -1 : x->doc > y->doc;
}

static int by_gain_desc(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x > y ? -1 : x < y;
}

static int by_double_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : x < y;
}

/* The values measure m prints: one per cut-off, or one */
static size_t nvalues(const SlemTrecEval *self, size_t m) {
  return self->tab[m].cut == SLEM_CUT_NONE ? 1 : self->ncuts[m];
}

/* The gain of qrels value rel under measure m's gain map: the map's, else rel when positive
 * (trec_eval's setup_gains and get_gain) */
static double mapped_gain(const SlemTrecEval *self, size_t m, long rel) {
  for (size_t i = 0; i + 1 < self->ncuts[m]; i += 2)
    if (self->cuts[m][i] == (double)rel) return self->cuts[m][i + 1];
  return rel > 0 ? (double)rel : 0.0;
}

/* q's rank_gain and ideal_gain under measure m's gain map, in rank_gain (q->n) and
 * ideal_gain (t->nj): the judged documents' positive gains, decreasing, for the ideal
 * ranking. trec_eval sorts its gain levels comparing the gains' difference cast to int, so
 * that two gains less than 1 apart may come out of order there; here they are sorted. */
static void map_gains(const SlemTrecEval *self, size_t m, const Topic *t, SlemJudged *q,
                      double *rank_gain, double *ideal_gain) {
  size_t n = 0;
  for (size_t i = 0; i < q->n; i++) rank_gain[i] = mapped_gain(self, m, q->rel[i]);
  for (size_t i = 0; i < t->nj; i++) {
    double g;
    if (t->j[i].rel >= 0 && (g = mapped_gain(self, m, t->j[i].rel)) > 0) ideal_gain[n++] = g;
  }
  if (n > 1) qsort(ideal_gain, n, sizeof *ideal_gain, by_double_desc);
  q->rank_gain = rank_gain;
  q->ideal_gain = ideal_gain;
  q->nideal = n;
}

typedef struct Values {
  double v[MAX_MEASURES][MAX_CUTS];
} Values;

/* The wanted measures of one topic; t->r sorted and its rel values set. A topic the run
 * lacks (complete mode) has nr = 0. Returns -1 out of memory. */
static int topic_values(const SlemTrecEval *self, const Topic *t, const int *want, Values *out) {
  long *gains = NULL, *rel = NULL;
  double *rank_gain = NULL, *ideal_gain = NULL;
  size_t ng = 0;
  SlemJudged q = {0};
  int st = 0, any_map = 0;
  for (size_t m = 0; m < self->ntab; m++) any_map |= want[m] && self->gain_map[m];
  if ((t->nj > 0 && !(gains = malloc(t->nj * sizeof *gains))) ||
      !(rel = malloc((t->nr ? t->nr : 1) * sizeof *rel)) ||
      (any_map && (!(rank_gain = malloc((t->nr ? t->nr : 1) * sizeof *rank_gain)) ||
                   !(ideal_gain = malloc((t->nj ? t->nj : 1) * sizeof *ideal_gain))))) {
    st = -1;
    goto done;
  }
  q.level = self->o.relevance_level;
  q.num_docs = self->o.num_docs;
  for (size_t i = 0; i < t->nj; i++) {
    long r = t->j[i].rel;
    if (r < 0) continue; /* in the pool, not judged: neither relevant nor non-relevant */
    q.num_rel += r >= q.level;
    q.num_nonrel += r < q.level;
    if (r > 0) gains[ng++] = r;
  }
  if (ng > 0) qsort(gains, ng, sizeof *gains, by_gain_desc);
  /* trec_eval: the first max_per_topic results, then (-J) the judged ones among them */
  for (size_t i = 0; i < t->nr && (self->o.max_per_topic <= 0 || i < (size_t)self->o.max_per_topic); i++)
    if (!self->o.judged_only || t->r[i].rel >= 0) rel[q.n++] = t->r[i].rel;
  /* a topic the run lacks (-c): trec_eval evaluates a stand-in ranking of one document the
   * qrels do not name, then zeroes some measures (zero_if_missing) */
  if (t->nr == 0 && !self->o.judged_only) rel[q.n++] = SLEM_UNJUDGED;
  q.rel = rel;
  q.gains = gains;
  q.ngains = ng;
  for (size_t m = 0; m < self->ntab; m++)
    if (want[m]) {
      SlemJudged qm = q;
      if (self->gain_map[m]) map_gains(self, m, t, &qm, rank_gain, ideal_gain);
      self->tab[m].per_query(&qm, self->cuts[m], self->ncuts[m], out->v[m]);
      /* trec_eval zeroes them by their value's name, which parameters change ("utility_2,
       * -1,0,0" is left as computed) */
      if (t->nr == 0 && self->tab[m].zero_if_missing && !self->text[m][0])
        for (size_t c = 0; c < nvalues(self, m); c++) out->v[m][c] = 0;
    }
done:
  free(gains);
  free(rel);
  free(rank_gain);
  free(ideal_gain);
  return st;
}

/* Writes the lines of measure m for qid; 0 on a write error. */
static int print_measure(const SlemTrecEval *self, FILE *out, size_t m, const char *qid,
                         const Values *v) {
  const SlemMeasure *me = self->tab + m;
  char name[64];
  int ok = 1;
  if (me->aggregate == SLEM_AGG_STRING) {
    char str[MAX_CUTS], vname[sizeof self->text[m] + 64];
    size_t len = (size_t)v->v[m][0];
    for (size_t i = 0; i < len && i < MAX_CUTS - 1; i++) {
      long r = (long)v->v[m][i + 1];
      str[i] = (char)(r > 9 ? '>' : r >= 0 ? '0' + r : r == SLEM_UNJUDGED ? '-' : r == SLEM_POOLED ? '.' : '<');
    }
    str[len < MAX_CUTS - 1 ? len : MAX_CUTS - 1] = 0;
    snprintf(vname, sizeof vname, self->text[m][0] ? "%s_%s" : "%s", me->name, self->text[m]);
    if (strcmp(qid, "all")) ok &= fprintf(out, "%-22s\t%s\t'%s'\n", vname, qid, str) > 0;
  } else if (me->aggregate == SLEM_AGG_TEXT) {
    ok &= fprintf(out, "%-22s\t%s\t%s\n", me->name, qid, self->runid ? self->runid : "slem") > 0;
  } else if (me->cut != SLEM_CUT_NONE) {
    for (size_t c = 0; c < self->ncuts[m]; c++) {
      SlemMeasureReq req;
      req.m = m;
      req.ncuts = self->ncuts[m];
      memcpy(req.cuts, self->cuts[m], req.ncuts * sizeof *req.cuts);
      slem_measure_value_name(&req, c, name, sizeof name);
      ok &= fprintf(out, "%-22s\t%s\t%6.4f\n", name, qid, v->v[m][c]) > 0;
    }
  } else if (me->count) {
    ok &= fprintf(out, "%-22s\t%s\t%ld\n", me->name, qid, (long)v->v[m][0]) > 0;
  } else if (self->text[m][0]) { /* parameters given: trec_eval prints NAME_PARAMS */
    ok &= fprintf(out, "%s_%-*s\t%s\t%6.4f\n", me->name,
                  (int)(strlen(me->name) < 21 ? 21 - strlen(me->name) : 0), self->text[m], qid,
                  v->v[m][0]) > 0;
  } else {
    ok &= fprintf(out, "%-22s\t%s\t%6.4f\n", me->name, qid, v->v[m][0]) > 0;
  }
  return ok;
}

int slem_treceval_write(SlemTrecEval *self, FILE *out, uint64_t *skipped_out, SlemError *err) {
  Values acc, v;
  uint64_t nq = 0, skipped = 0;
  size_t *order = NULL;
  int ok = 1, want[MAX_MEASURES];
  memset(&acc, 0, sizeof acc);
  for (size_t m = 0; m < self->ntab; m++)
    want[m] = self->any_wanted ? self->want[m] : self->tab[m].official;
  if (self->nt > 0 && !(order = malloc(self->nt * sizeof *order)))
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  /* topics of the qrels in strcmp order */
  size_t n = 0;
  for (size_t i = 0; i < self->nt; i++)
    if (self->t[i].judged) order[n++] = i;
  for (size_t a = 1; a < n; a++) { /* insertion sort: topic counts are small */
    size_t x = order[a], b = a;
    const char *qx = slem_strmap_get(self->qids, x);
    while (b > 0 && strcmp(slem_strmap_get(self->qids, order[b - 1]), qx) > 0) {
      order[b] = order[b - 1];
      b--;
    }
    order[b] = x;
  }
  for (size_t a = 0; a < n; a++) {
    Topic *t = self->t + order[a];
    const char *qid = slem_strmap_get(self->qids, order[a]);
    if (t->nr == 0 && !self->o.complete) {
      skipped++;
      continue;
    }
    if (t->nj > 0) qsort(t->j, t->nj, sizeof *t->j, by_doc);
    for (size_t i = 0; i < t->nr; i++) {
      Judg key = {t->r[i].doc, 0};
      Judg *hit = t->nj > 0 ? bsearch(&key, t->j, t->nj, sizeof *t->j, by_doc) : NULL;
      t->r[i].docno = slem_strmap_get(self->docs, t->r[i].doc);
      t->r[i].rel = !hit ? SLEM_UNJUDGED : hit->rel < 0 ? SLEM_POOLED : hit->rel;
    }
    if (t->nr > 0) qsort(t->r, t->nr, sizeof *t->r, by_score_docno);
    if (topic_values(self, t, want, &v) != 0) {
      free(order);
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    }
    nq++;
    for (size_t m = 0; m < self->ntab; m++)
      if (want[m])
        for (size_t c = 0; c < nvalues(self, m); c++) acc.v[m][c] += v.v[m][c];
    /* the counts print as whole numbers; the string measure has no sum */
    if (self->o.per_query)
      for (size_t m = 0; m < self->ntab; m++)
        if (want[m] && self->tab[m].per_topic) ok &= print_measure(self, out, m, qid, &v);
  }
  free(order);
  if (skipped_out) *skipped_out = skipped;
  if (nq == 0)
    return slem_error(err, SLEM_EFORMAT, "no topic has both results and relevance judgements");
  for (size_t m = 0; m < self->ntab; m++)
    for (size_t c = 0; c < nvalues(self, m); c++) {
      double *x = &acc.v[m][c];
      switch (self->tab[m].aggregate) {
      case SLEM_AGG_NUM_Q: *x = (double)nq; break;
      case SLEM_AGG_GEO: *x = exp(*x / (double)nq); break;
      case SLEM_AGG_MEAN: *x /= (double)nq; break;
      case SLEM_AGG_NUM_REL:
        if (self->o.complete) {
          *x = 0;
          for (size_t i = 0; i < self->nt; i++)
            for (size_t j = 0; self->t[i].judged && j < self->t[i].nj; j++) *x += self->t[i].j[j].rel > 0;
        }
        break;
      case SLEM_AGG_SUM:
      case SLEM_AGG_TEXT:
      case SLEM_AGG_STRING: break;
      }
    }
  for (size_t m = 0; m < self->ntab && !self->o.no_summary; m++)
    if (want[m]) ok &= print_measure(self, out, m, "all", &acc);
  if (!ok || ferror(out)) return slem_error(err, SLEM_EIO, "write error");
  return SLEM_OK;
}

int slem_treceval_run(const SlemTrecOpts *opts, const char *const *measures, size_t nmeasures,
                      const char *qrels, const char *path, SlemRankFormat format,
                      const char *output, uint64_t *skipped, int *usage, SlemError *err) {
  SlemTrecEval *ev = NULL;
  int st = slem_treceval_new(&ev, opts, err);
  if (usage) *usage = 0;
  *skipped = 0;
  for (size_t i = 0; st == SLEM_OK && i < nmeasures; i++)
    if ((st = slem_treceval_measure(ev, measures[i], err)) != SLEM_OK && usage) *usage = 1;
  if (st == SLEM_OK) st = slem_treceval_read_qrels(ev, qrels, err);
  if (st == SLEM_OK) st = slem_treceval_add_path(ev, path, format, err);
  if (st == SLEM_OK) st = slem_treceval_write_path(ev, output, skipped, err);
  slem_treceval_free(ev);
  return st;
}
