#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "html.h"
#include "ids.h"
#include "io.h"
#include "permtest.h"
#include "plot.h"
#include "libslem.h"

void slem_report_opts_init(SlemReportOpts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->ap = SLEM_AP_TREC;
  opts->recall_k = 100;
  opts->curve_points = 11;
  opts->top = 10;
  opts->nqueries = 10;
  opts->extremes = 3;
  opts->bins = 10;
  opts->permutations = 10000;
  opts->seed = 1;
}

static void run_clear(SlemReportRun *r, size_t nq) {
  free(r->name);
  free(r->source);
  free(r->curve);
  free(r->ap);
  free(r->status);
  for (size_t q = 0; r->hits && q < nq; q++) {
    for (size_t i = 0; r->hits[q] && i < r->nhits[q]; i++) free(r->hits[q][i].id);
    free(r->hits[q]);
  }
  free(r->hits);
  free(r->nhits);
  for (size_t q = 0; r->found && q < nq; q++) free(r->found[q]);
  free(r->found);
  free(r->nfound);
  if (r->spool_fd >= 0) close(r->spool_fd);
  free(r->path);
}

void slem_report_free(SlemReport *self) {
  if (!self) return;
  for (size_t r = 0; r < self->nruns; r++) run_clear(self->runs + r, self->nq);
  free(self->runs);
  free(self->qids);
  free(self->shown);
  slem_ids_free(self->dblabels);
  slem_strmap_free(self->dbrow);
  free(self);
}

int slem_report_new(SlemReport **self, const SlemTruth *truth, const SlemReportOpts *opts,
                    SlemError *err) {
  SlemReport *r;
  *self = NULL;
  if (opts->top < 1 || opts->top > 1000)
    return slem_error(err, SLEM_EINVAL, "results per query: %zu (1 to 1000)", opts->top);
  if (opts->bins < 1 || opts->bins > 100)
    return slem_error(err, SLEM_EINVAL, "histogram bins: %zu (1 to 100)", opts->bins);
  if (opts->curve_points != 11 && opts->curve_points != 101)
    return slem_error(err, SLEM_EINVAL, "curve points: %zu (11 or 101)", opts->curve_points);
  if (opts->recall_k < 1) return slem_error(err, SLEM_EINVAL, "R@K: K must be at least 1");
  r = calloc(1, sizeof *r);
  if (!r) return slem_error(err, SLEM_ENOMEM, "out of memory");
  r->opts = *opts;
  r->truth = truth;
  r->nq = slem_truth_queries(truth);
  if (!(r->qids = malloc((r->nq + 1) * sizeof *r->qids))) {
    free(r);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  for (size_t q = 0; q < r->nq; q++) r->qids[q] = slem_truth_query(truth, q);
  *self = r;
  return SLEM_OK;
}

int slem_report_set_labels(SlemReport *self, const char *dblabels, const char *dbids,
                           SlemError *err) {
  SlemIds *lab = NULL, *ids = NULL;
  SlemStrMap *map = slem_strmap_new();
  int st = SLEM_OK;
  if (!map) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = slem_ids_labels_read(&lab, dblabels, err)) != SLEM_OK) goto cleanup;
  if (dbids && (st = slem_ids_read(&ids, dbids, err)) != SLEM_OK) goto cleanup;
  if (ids && slem_ids_count(ids) != slem_ids_count(lab)) {
    st = slem_error(err, SLEM_EFORMAT, "%s: %zu ids for %zu labels in %s", dbids, slem_ids_count(ids),
                    slem_ids_count(lab), dblabels);
    goto cleanup;
  }
  for (size_t i = 0; i < slem_ids_count(lab); i++) {
    char row[32];
    const char *id = ids ? slem_ids_get(ids, i) : row;
    if (!ids) snprintf(row, sizeof row, "%zu", i);
    if (slem_strmap_intern(map, id, strlen(id)) < 0) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto cleanup;
    }
  }
  slem_ids_free(self->dblabels);
  slem_strmap_free(self->dbrow);
  self->dblabels = lab;
  self->dbrow = map;
  lab = NULL;
  map = NULL;
cleanup:
  slem_ids_free(lab);
  slem_ids_free(ids);
  slem_strmap_free(map);
  return st;
}

/* The label of database id, or NULL. Ids are unique (the ground truth refused a repeated
 * one), so a row's index in the map is the row itself. */
static const char *db_label(const SlemReport *self, const char *id) {
  long row;
  if (!self->dblabels) return NULL;
  row = slem_strmap_find(self->dbrow, id, strlen(id));
  return row < 0 || (size_t)row >= slem_ids_count(self->dblabels) ? NULL : slem_ids_get(self->dblabels, (size_t)row);
}

/* ---- choosing queries ---- */

typedef struct Keyed {
  double key;
  size_t q;
} Keyed;

static int by_key(const void *a, const void *b) {
  const Keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->q < y->q ? -1 : x->q > y->q;
}

/* A query every run evaluated (it has relevant items): statuses agree across runs, since
 * they share the ground truth. */
static int evaluated(const SlemReport *self, size_t q) {
  return self->nruns && self->runs[0].status[q] != SLEM_Q_SKIPPED;
}

/* keys(*n): the evaluated queries keyed by key_of, sorted ascending. */
static Keyed *sorted_queries(const SlemReport *self, double (*key_of)(const SlemReport *, size_t, size_t),
                             size_t r, size_t *n) {
  Keyed *k = malloc((self->nq ? self->nq : 1) * sizeof *k);
  *n = 0;
  if (!k) return NULL;
  for (size_t q = 0; q < self->nq; q++)
    if (evaluated(self, q)) {
      k[*n].key = key_of(self, q, r);
      k[*n].q = q;
      (*n)++;
    }
  qsort(k, *n, sizeof *k, by_key);
  return k;
}

static double ap_of(const SlemReport *self, size_t q, size_t r) { return self->runs[r].ap[q]; }
static double neg_ap(const SlemReport *self, size_t q, size_t r) { return -self->runs[r].ap[q]; }

/* minus the spread, so that ascending order puts the largest spread first */
static double neg_spread(const SlemReport *self, size_t q, size_t r) {
  double lo = self->runs[0].ap[q], hi = lo;
  (void)r;
  for (size_t i = 1; i < self->nruns; i++) {
    double a = self->runs[i].ap[q];
    if (a < lo) lo = a;
    if (a > hi) hi = a;
  }
  return -(hi - lo);
}

int slem_report_choose(SlemReport *self, const char *path, SlemError *err) {
  size_t *shown = NULL, n = 0;
  int st = SLEM_OK;
  if (path) {
    SlemIds *ids = NULL;
    if ((st = slem_ids_read(&ids, path, err)) != SLEM_OK) return st;
    shown = malloc(slem_ids_count(ids) * sizeof *shown + 1);
    if (!shown) {
      slem_ids_free(ids);
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < slem_ids_count(ids); i++) {
      const char *id = slem_ids_get(ids, i);
      long q = slem_truth_find_query(self->truth, id);
      if (q < 0) {
        st = slem_error(err, SLEM_EFORMAT, "%s: line %zu: query '%s' is not in the ground truth",
                        path, i + 1, id);
        free(shown);
        slem_ids_free(ids);
        return st;
      }
      shown[n++] = (size_t)q;
    }
    slem_ids_free(ids);
  } else if (self->nruns > 0) {
    size_t m, want = self->opts.nqueries;
    Keyed *k = sorted_queries(self, self->nruns > 1 ? neg_spread : ap_of, 0, &m);
    if (!k) return slem_error(err, SLEM_ENOMEM, "out of memory");
    if (want > m) want = m;
    shown = malloc((want ? want : 1) * sizeof *shown);
    if (!shown) {
      free(k);
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < want; i++) {
      /* several runs: the first want; one run: evenly spaced from worst to best */
      size_t j = self->nruns > 1 || want == 1 ? i : i * (m - 1) / (want - 1);
      shown[n++] = k[j].q;
    }
    free(k);
  }
  free(self->shown);
  self->shown = shown;
  self->nshown = n;
  self->listed = path != NULL;
  return SLEM_OK;
}

int slem_report_test(SlemReport *self, SlemError *err) {
  double *a = malloc((self->nq + 1) * sizeof *a), *b = malloc((self->nq + 1) * sizeof *b);
  int st = SLEM_OK;
  if (!a || !b) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto cleanup;
  }
  for (size_t r = 0; r < self->nruns; r++) self->runs[r].pvalue = -1;
  for (size_t r = 1; r < self->nruns && self->opts.permutations; r++) {
    size_t n = 0;
    for (size_t q = 0; q < self->nq; q++)
      if (evaluated(self, q)) {
        a[n] = self->runs[0].ap[q];
        b[n++] = self->runs[r].ap[q];
      }
    if ((st = slem_permtest_paired(&self->runs[r].pvalue, a, b, n, self->opts.permutations,
                                   self->opts.seed, err)) != SLEM_OK)
      goto cleanup;
  }
cleanup:
  free(a);
  free(b);
  return st;
}

void slem_report_extremes(const SlemReport *self, size_t r, size_t *worst, size_t *nworst,
                          size_t *best, size_t *nbest) {
  /* out of memory: no extremes, the page still comes out */
  size_t m, e = self->opts.extremes;
  Keyed *lo = sorted_queries(self, ap_of, r, &m), *hi = sorted_queries(self, neg_ap, r, &m);
  *nworst = *nbest = 0;
  if (lo && hi) {
    if (2 * e > m) e = m / 2 + m % 2; /* the worst get the middle one of an odd count */
    for (size_t i = 0; i < e && i < m; i++) worst[(*nworst)++] = lo[i].q;
    for (size_t i = 0; i < e && *nworst + *nbest < m; i++) best[(*nbest)++] = hi[i].q;
  }
  free(lo);
  free(hi);
}

/* ---- the page ---- */

static const char css[] =
    ":root{--ok:#16a34a;--junk:#a3a9b3;--bad:#dc2626;--ink:#1f2937;--mute:#6b7280;"
    "--line:#e5e7eb;--thumb:72px}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#f4f6f9;color:var(--ink);"
    "font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif}\n"
    "main{max-width:1320px;margin:0 auto;padding:28px 32px 40px}\n"
    "header h1{font-size:26px;font-weight:650;margin:0 0 4px;letter-spacing:-.01em}\n"
    ".sub{color:var(--mute);margin:0}\n"
    "section{background:#fff;border:1px solid var(--line);border-radius:10px;padding:18px 22px;"
    "margin-top:18px}\n"
    "h2{font-size:17px;font-weight:620;margin:0 0 12px}\n"
    "h2 small{font-weight:400;color:var(--mute);font-size:13px;margin-left:8px}\n"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
    "th{font-weight:600;color:var(--mute);font-size:12px;letter-spacing:.02em;text-align:left}\n"
    ".summary th,.summary td{padding:7px 16px;text-align:right;border-bottom:1px solid var(--line)}\n"
    ".summary th:first-child,.summary td:first-child{text-align:left;padding-left:0}\n"
    ".summary td{font-size:15px}\n"
    ".summary td.best{font-weight:700}\n"
    ".src{color:var(--mute);font-size:12px;margin-left:6px}\n"
    ".swatch{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:8px;"
    "vertical-align:-1px}\n"
    ".note{color:var(--mute);font-size:12px;margin:10px 0 0}\n"
    ".figs{display:flex;flex-wrap:wrap;gap:28px}\n"
    "figure{margin:0}\n"
    ".figs figcaption{color:var(--mute);font-size:12px;margin-top:4px;max-width:440px}\n"
    "svg.plot{max-width:100%;height:auto;font-size:11px}\n"
    "svg .grid{stroke:#eceff3}svg .frame{fill:none;stroke:#9ca3af}\n"
    "svg .pr{fill:none;stroke-width:2.4;stroke-linejoin:round}\n"
    "svg .key{stroke-width:3}svg .tick{fill:#6b7280}svg .axis{fill:#374151;font-size:12px}\n"
    "svg .legend{fill:#1f2937;font-size:12px}\n"
    ".hits td{padding:8px 10px 8px 0;vertical-align:middle;border-top:1px solid var(--line)}\n"
    ".hits th{padding:0 10px 6px 0}\n"
    ".hits td.qcell{padding-right:18px;text-align:center}\n"
    ".hits td.run{white-space:nowrap;min-width:150px}\n"
    ".ap{display:block;color:var(--mute);font-size:12px}\n"
    ".badge{display:inline-block;font-size:11px;font-weight:600;text-transform:uppercase;"
    "letter-spacing:.04em;padding:1px 6px;border-radius:4px;background:#fee2e2;color:#991b1b}\n"
    ".badge.best{background:#dcfce7;color:#166534}\n"
    ".strip{display:flex;gap:6px;flex-wrap:wrap}\n"
    "figure.hit,figure.q{display:flex;flex-direction:column;align-items:center;width:calc(var(--thumb) + 6px)}\n"
    ".pic{display:flex;align-items:center;justify-content:center;width:calc(var(--thumb) + 6px);"
    "height:calc(var(--thumb) + 6px);border:3px solid;border-radius:5px;background:#fff;overflow:hidden}\n"
    ".pic img{width:var(--thumb);height:var(--thumb);object-fit:contain;image-rendering:pixelated;"
    "display:block}\n"
    ".tile{font-size:10px;line-height:1.2;padding:2px;text-align:center;word-break:break-all;"
    "color:var(--ink)}\n"
    ".hit.rel .pic{border-color:var(--ok)}.hit.junk .pic{border-color:var(--junk)}"
    ".hit.wrong .pic{border-color:var(--bad)}.q .pic{border-color:#1f2937}\n"
    "figure.hit figcaption,figure.q figcaption{font-size:11px;color:var(--mute);white-space:nowrap;"
    "margin-top:2px;max-width:calc(var(--thumb) + 6px);overflow:hidden;text-overflow:ellipsis}\n"
    "figcaption b{color:var(--ink)}\n"
    ".none{color:var(--mute);font-style:italic}\n"
    ".keyrow{display:flex;gap:16px;color:var(--mute);font-size:12px;margin:0 0 10px}\n"
    ".keyrow span[class]::before{content:\"\";display:inline-block;width:10px;height:10px;border:3px solid;"
    "border-radius:3px;margin-right:6px;vertical-align:-2px}\n"
    ".keyrow span.k-rel::before{border-color:var(--ok)}.keyrow span.k-junk::before{border-color:var(--junk)}"
    ".keyrow span.k-wrong::before{border-color:var(--bad)}\n"
    "footer{color:var(--mute);font-size:12px;margin-top:18px}\n"
    ".lab{display:block;font-size:10px;color:var(--bad);max-width:calc(var(--thumb) + 6px);overflow:hidden;"
    "text-overflow:ellipsis;white-space:nowrap;text-align:center}\n"
    ".missed{font-size:12px;color:var(--mute);margin-top:6px}\n"
    ".missed b{color:var(--ok);font-weight:600}\n"
    ".missed .m{display:inline-block;border:1px solid var(--ok);border-radius:4px;padding:0 5px;margin:2px 4px 0 0;"
    "color:var(--ink)}\n"
    ".missed .m small{color:var(--mute);margin-left:4px}\n"
    ".plot .diag{stroke:#9ca3af;stroke-dasharray:4 3}.plot .pts circle{fill-opacity:.55}\n"
    ".figs svg.plot{width:370px}.figs figcaption{max-width:370px}\n"
    ".pq-tools{display:flex;gap:12px;align-items:center;margin:0 0 10px;flex-wrap:wrap}\n"
    ".pq-tools input{font:inherit;padding:4px 8px;border:1px solid var(--line);border-radius:6px;min-width:220px}\n"
    ".pq-tools button{font:inherit;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:#fff;"
    "cursor:pointer}\n"
    ".pq-tools button:disabled{color:var(--mute);cursor:default}\n"
    "table.pq th,table.pq td{padding:4px 14px;text-align:right;border-bottom:1px solid var(--line)}\n"
    "table.pq th:first-child,table.pq td:first-child{text-align:left;padding-left:0}\n"
    "table.pq th{cursor:pointer;user-select:none;white-space:nowrap}\n"
    "table.pq th[aria-sort=ascending]::after{content:\" \\25B2\"}"
    "table.pq th[aria-sort=descending]::after{content:\" \\25BC\"}\n"
    "table.pq td.up{color:var(--ok)}table.pq td.down{color:var(--bad)}\n";

/* The per-query table's behaviour: sort by a column (click its header, again to reverse),
 * filter by a part of the query id, 20 rows a page. Its data is the JSON of
 * <script id="pq-data">: {"runs": [names], "rows": [[query, relevant, AP..., delta]]},
 * AP null for a query with no relevant item; AP shown with 4 decimals, the difference too
 * unless it is below 5e-5 and not 0, then in scientific notation (its data has six
 * significant digits), so that runs that differ never show 0.0000. It writes nothing to the console and holds no '<', so that no
 * reader of the page mistakes a comparison for a tag. */
static const char pq_script[] =
    "(function(){\n"
    "var D=JSON.parse(document.getElementById('pq-data').textContent),R=D.runs.length;\n"
    "var tb=document.querySelector('#per-query tbody'),hs=document.querySelectorAll('#per-query th');\n"
    "var f=document.getElementById('pq-filter'),info=document.getElementById('pq-info');\n"
    "var prev=document.getElementById('pq-prev'),next=document.getElementById('pq-next');\n"
    "var per=20,page=0,key=-1,dir=1,view=D.rows.slice();\n"
    "function num(v,c){return c===0?v:(v===null?-Infinity:v);}\n"
    "function cmp(a,b){var x=num(a[key],key),y=num(b[key],key);"
    "if(y>x)return -dir;if(x>y)return dir;return a.i-b.i;}\n"
    "D.rows.forEach(function(r,i){r.i=i;});\n"
    "function cell(r,c){var td=document.createElement('td'),v=r[c];\n"
    " if(c===0)td.textContent=v;else if(c===1)td.textContent=String(v);\n"
    " else if(v===null)td.textContent='\\u2013';\n"
    " else if(c===R+2){td.textContent=(v>0?'+':'')+(v!==0&&5e-5>Math.abs(v)?v.toExponential(2):v.toFixed(4));\n"
    "  if(v>0)td.className='up';else if(0>v)td.className='down';}\n"
    " else td.textContent=v.toFixed(4);\n"
    " return td;}\n"
    "function render(){var n=view.length,pages=Math.max(1,Math.ceil(n/per));if(page>=pages)page=pages-1;\n"
    " var lo=page*per,hi=Math.min(n,lo+per),frag=document.createDocumentFragment();\n"
    " for(var i=lo;hi>i;i++){var tr=document.createElement('tr');"
    "for(var c=0;view[i].length>c;c++)tr.appendChild(cell(view[i],c));frag.appendChild(tr);}\n"
    " tb.textContent='';tb.appendChild(frag);\n"
    " info.textContent=n?('rows '+(lo+1)+'\\u2013'+hi+' of '+n+(D.rows.length>n?' (of '+D.rows.length+')':'')):'no query matches';\n"
    " prev.disabled=page===0;next.disabled=page>=pages-1;}\n"
    "function apply(){var t=f.value.toLowerCase();\n"
    " view=D.rows.filter(function(r){return r[0].toLowerCase().indexOf(t)>=0;});\n"
    " if(key>=0)view.sort(cmp);page=0;render();}\n"
    "Array.prototype.forEach.call(hs,function(h,c){h.addEventListener('click',function(){\n"
    " dir=key===c?-dir:(c===0?1:-1);key=c;\n"
    " for(var i=0;hs.length>i;i++)hs[i].setAttribute('aria-sort',i===c?(dir>0?'ascending':'descending'):'none');\n"
    " apply();});});\n"
    "f.addEventListener('input',apply);\n"
    "prev.addEventListener('click',function(){page--;render();});\n"
    "next.addEventListener('click',function(){page++;render();});\n"
    "render();})();\n";

static const char *const rel_class[] = {"wrong", "rel", "junk"};
static const char *const rel_word[] = {"wrong", "relevant", "junk"};

/* A picture in its frame: the <img>, or the id in a tile when there is none. */
static void picture(FILE *fp, const SlemThumbs *th, int side, const char *id) {
  const char *src = th ? slem_thumbs_src(th, side, id) : NULL;
  if (src) {
    fputs("<span class=\"pic\"><img src=\"", fp);
    fputs(src, fp); /* percent-encoded URL or base64: nothing to escape */
    fputs("\" alt=\"", fp);
    slem_html_text(fp, id);
    fputs("\"></span>", fp);
  } else {
    fputs("<span class=\"pic tile\">", fp);
    slem_html_text(fp, id);
    fputs("</span>", fp);
  }
}

static void query_figure(FILE *fp, const SlemReport *self, const SlemThumbs *th, size_t q) {
  fputs("<figure class=\"q\" title=\"query ", fp);
  slem_html_text(fp, self->qids[q]);
  fputs("\">", fp);
  picture(fp, th, SLEM_THUMB_QUERY, self->qids[q]);
  fputs("<figcaption>", fp);
  slem_html_text(fp, self->qids[q]);
  fputs("</figcaption></figure>", fp);
}

static int by_found_rank(const void *a, const void *b) {
  const SlemReportFound *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return x->doc < y->doc ? -1 : x->doc > y->doc;
}

enum { MISSED_LISTED = 12 };

/* The relevant documents of query q that run r's results shown do not hold: first those
 * it ranks further down (by rank), then those it does not rank (in the truth's order); at
 * most MISSED_LISTED named. Out of memory: nothing listed. */
static void missed(FILE *fp, const SlemReport *self, size_t r, size_t q) {
  const SlemReportRun *run = self->runs + r;
  size_t nrel = slem_truth_nrel(self->truth, q), nf = run->nfound[q], shown = 0, nmiss, listed = 0;
  long last = run->nhits[q] == self->opts.top && run->nhits[q] ? run->hits[q][run->nhits[q] - 1].rank : -1;
  SlemReportFound *f;
  if (run->status[q] == SLEM_Q_SKIPPED || !run->hits[q]) return;
  for (size_t i = 0; i < run->nhits[q]; i++) shown += run->hits[q][i].rel == SLEM_HIT_RELEVANT;
  nmiss = nrel > shown ? nrel - shown : 0;
  if (nmiss == 0) return;
  if (!(f = malloc((nf + 1) * sizeof *f))) return;
  if (nf > 0) { /* found[q] is NULL when the run ranks none of them further down */
    memcpy(f, run->found[q], nf * sizeof *f);
    qsort(f, nf, sizeof *f, by_found_rank);
  }
  fprintf(fp, "<div class=\"missed\"><b>missed</b> %zu of %zu relevant:", nmiss, nrel);
  for (size_t i = 0; i < nf && listed < MISSED_LISTED; i++)
    if (last >= 0 && f[i].rank > last) {
      fputs(" <span class=\"m\">", fp);
      slem_html_text(fp, slem_truth_doc(self->truth, f[i].doc));
      fprintf(fp, "<small>rank %ld</small></span>", f[i].rank);
      listed++;
    }
  for (size_t d = 0, nd = slem_truth_docs(self->truth); d < nd && listed < MISSED_LISTED; d++) {
    int ranked = 0;
    if (!slem_truth_relevant(self->truth, q, d) || slem_truth_junk(self->truth, q, d)) continue;
    for (size_t i = 0; i < nf && !ranked; i++) ranked = f[i].doc == d;
    if (ranked) continue;
    fputs(" <span class=\"m\">", fp);
    slem_html_text(fp, slem_truth_doc(self->truth, d));
    fputs("<small>not ranked</small></span>", fp);
    listed++;
  }
  if (listed < nmiss) fprintf(fp, " and %zu more", nmiss - listed);
  fputs("</div>", fp);
  free(f);
}

static void strip(FILE *fp, const SlemReport *self, const SlemThumbs *th, size_t r, size_t q) {
  const SlemReportRun *run = self->runs + r;
  const SlemReportHit *h = run->hits[q];
  fputs("<td><div class=\"strip\">", fp);
  if (run->nhits[q] == 0)
    fputs(run->status[q] == SLEM_Q_MISSING ? "<span class=\"none\">not in this ranking</span>"
                                           : "<span class=\"none\">no results</span>",
          fp);
  for (size_t i = 0; i < run->nhits[q]; i++) {
    fprintf(fp, "<figure class=\"hit %s\" title=\"rank %ld: ", rel_class[h[i].rel], h[i].rank);
    slem_html_text(fp, h[i].id);
    fprintf(fp, " (%s), score %.9g\">", rel_word[h[i].rel], h[i].score);
    picture(fp, th, SLEM_THUMB_DB, h[i].id);
    fprintf(fp, "<figcaption><b>%ld</b> %.3g</figcaption>", h[i].rank, h[i].score);
    if (h[i].rel == SLEM_HIT_WRONG && h[i].label) {
      fputs("<span class=\"lab\">", fp);
      slem_html_text(fp, h[i].label);
      fputs("</span>", fp);
    }
    fputs("</figure>", fp);
  }
  fputs("</div>", fp);
  missed(fp, self, r, q);
  fputs("</td>", fp);
}

static void run_label(FILE *fp, const SlemReport *self, size_t r) {
  fprintf(fp, "<span class=\"swatch\" style=\"background:%s\"></span>", slem_plot_colour(r));
  slem_html_text(fp, self->runs[r].name);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

static const char *ap_name(SlemApKind k) { return k == SLEM_AP_TREC ? "trec" : "oxford"; }

static void summary(FILE *fp, const SlemReport *self) {
  const char *head[] = {"mAP", "mAP (Oxford)", "P@1", "P@5", "P@10", NULL};
  double best[7];
  char rk[32];
  snprintf(rk, sizeof rk, "R@%zu", self->opts.recall_k);
  for (int c = 0; c < 6; c++) best[c] = -1;
  for (size_t r = 0; r < self->nruns; r++) {
    const SlemReportRun *x = self->runs + r;
    double v[6] = {x->map[SLEM_AP_TREC], x->map[SLEM_AP_OXFORD], x->p1, x->p5, x->p10, x->rk};
    for (int c = 0; c < 6; c++)
      if (v[c] > best[c]) best[c] = v[c];
  }
  fputs("<section id=\"summary\"><h2>Summary</h2>\n<table class=\"summary\"><thead><tr><th>run</th>", fp);
  for (int c = 0; head[c]; c++) fprintf(fp, "<th>%s</th>", head[c]);
  fprintf(fp, "<th>%s</th><th>queries</th>", rk);
  if (self->nruns > 1 && self->opts.permutations) fputs("<th title=\"paired randomisation test against the first run\">p</th>", fp);
  fputs("</tr></thead>\n<tbody>\n", fp);
  for (size_t r = 0; r < self->nruns; r++) {
    const SlemReportRun *x = self->runs + r;
    double v[6] = {x->map[SLEM_AP_TREC], x->map[SLEM_AP_OXFORD], x->p1, x->p5, x->p10, x->rk};
    fputs("<tr><td>", fp);
    run_label(fp, self, r);
    fputs("<span class=\"src\" title=\"", fp);
    slem_html_text(fp, x->source);
    fputs("\">", fp);
    slem_html_text(fp, base_name(x->source));
    fputs("</span></td>", fp);
    for (int c = 0; c < 6; c++)
      fprintf(fp, "<td%s title=\"%.6f\">%.4f</td>", self->nruns > 1 && v[c] == best[c] ? " class=\"best\"" : "",
              v[c], v[c]); /* the title holds slem-eval's digits */
    fprintf(fp, "<td>%zu", x->evaluated);
    if (x->missing) fprintf(fp, "<span class=\"src\">%zu not ranked, AP 0</span>", x->missing);
    fputs("</td>", fp);
    if (self->nruns > 1 && self->opts.permutations) {
      if (x->pvalue < 0) fputs("<td class=\"pvalue\">\u2013</td>", fp);
      /* below 0.0001 (many --permutations) in two significant digits: never 0.0000 */
      else fprintf(fp, x->pvalue >= 0.0001 ? "<td class=\"pvalue\" title=\"%.6g\">%.4f</td>"
                                           : "<td class=\"pvalue\" title=\"%.6g\">%.2g</td>",
                   x->pvalue, x->pvalue);
    }
    fputs("</tr>\n", fp);
  }
  fputs("</tbody></table>\n", fp);
  if (self->opts.protocol) {
    const char *pn = slem_revisitop_protocol_name(self->opts.protocol->protocol);
    fprintf(fp, "<table class=\"summary revisitop\"><thead><tr><th>run</th><th>mAP (revisitop %s)</th>", pn);
    for (int k = 0; k < SLEM_REVISIT_NK; k++) fprintf(fp, "<th>mP@%zu</th>", slem_revisit_kappas[k]);
    fputs("<th>queries</th></tr></thead>\n<tbody>\n", fp);
    for (size_t r = 0; r < self->nruns; r++) {
      const SlemRevisitResult *v = &self->runs[r].revisit;
      fputs("<tr><td>", fp);
      run_label(fp, self, r);
      fprintf(fp, "</td><td title=\"%.6f\">%.4f</td>", v->map, v->map);
      for (int k = 0; k < SLEM_REVISIT_NK; k++) fprintf(fp, "<td title=\"%.6f\">%.4f</td>", v->mp[k], v->mp[k]);
      fprintf(fp, "<td>%zu</td></tr>\n", v->evaluated);
    }
    fprintf(fp, "</tbody></table>\n<p class=\"note\">The revisited Oxford/Paris protocol %s "
                "(revisitop's compute_map, as slem-eval --protocol): ", pn);
    fputs(self->opts.protocol->protocol == SLEM_PROTO_EASY ? "easy positives relevant, hard ones junk"
          : self->opts.protocol->protocol == SLEM_PROTO_HARD ? "hard positives relevant, easy ones junk"
                                                             : "easy and hard positives relevant", fp);
    fputs("; its AP is the Oxford one, which the page uses for every query.</p>\n", fp);
  }
  fputs("<p class=\"note\">mAP: trec_eval's non-interpolated AP (unretrieved "
        "relevant items count 0); mAP (Oxford): the trapezoid of the Oxford/Holidays compute_ap. "
        "Junk is removed before counting; queries with no relevant item are skipped.",
        fp);
  if (self->nruns > 1) fputs(" The best value of each column is in bold.", fp);
  if (self->nruns > 1 && self->opts.permutations)
    fprintf(fp, " p: two-sided paired randomisation test of the per-query AP (%s) against the first "
                "run, over the %zu queries evaluated: %zu random sign flips from seed %llu "
                "(all of them when there are at most that many), so the page is the same at "
                "every run; two-sided as scipy.stats.permutation_test, twice the smaller one-sided share.",
            ap_name(self->opts.ap), self->runs[0].evaluated, self->opts.permutations,
            (unsigned long long)self->opts.seed);
  fputs("</p></section>\n", fp);
}

static int figures(FILE *fp, const SlemReport *self, SlemError *err) {
  SlemSeries *s = calloc(self->nruns + 1, sizeof *s);
  double *aps = malloc((self->nruns * self->nq + 1) * sizeof *aps);
  char **legend = calloc(self->nruns + 1, sizeof *legend);
  double vmin = 1, vmax = 0, lo, hi;
  int st = SLEM_OK;
  if (!s || !aps || !legend) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto cleanup;
  }
  for (size_t r = 0; r < self->nruns; r++) {
    const SlemReportRun *x = self->runs + r;
    size_t len = strlen(x->name) + 32;
    if (!(legend[r] = malloc(len))) {
      st = slem_error(err, SLEM_ENOMEM, "out of memory");
      goto cleanup;
    }
    snprintf(legend[r], len, "%s (mAP %.3f)", x->name, x->map[self->opts.ap]);
    s[r].name = x->name;
    s[r].colour = slem_plot_colour(r);
    s[r].y = x->curve;
    s[r].n = x->curve_points;
  }
  fputs("<section id=\"figures\"><h2>Precision and recall</h2>\n<div class=\"figs\">\n<figure>", fp);
  slem_plot_pr(fp, s, self->nruns, (const char *const *)legend);
  fprintf(fp,
          "<figcaption>Interpolated precision at %zu recall levels, averaged over the queries "
          "(the curve of slem-eval --curve).</figcaption></figure>\n<figure>",
          self->opts.curve_points);
  for (size_t r = 0; r < self->nruns; r++) {
    size_t n = 0;
    for (size_t q = 0; q < self->nq; q++)
      if (evaluated(self, q)) aps[r * self->nq + n++] = self->runs[r].ap[q];
    s[r].y = aps + r * self->nq;
    s[r].n = n;
  }
  /* one span for both figures, over every run's AP: narrowed when they all lie low (or high) */
  for (size_t r = 0; r < self->nruns; r++)
    for (size_t i = 0; i < s[r].n; i++) {
      if (s[r].y[i] < vmin) vmin = s[r].y[i];
      if (s[r].y[i] > vmax) vmax = s[r].y[i];
    }
  slem_plot_span(&lo, &hi, vmin <= vmax ? vmin : 0, vmin <= vmax ? vmax : 1);
  slem_plot_histogram(fp, s, self->nruns, self->opts.bins, lo, hi, "AP of a query");
  fprintf(fp, "<figcaption>Queries by their AP (%s), in bins of %.3g", ap_name(self->opts.ap),
          (hi - lo) / (double)self->opts.bins);
  if (lo > 0 || hi < 1) fprintf(fp, " from %g to %g, the span of the APs", lo, hi);
  fputs(".</figcaption></figure>\n", fp);
  if (self->nruns > 1) {
    size_t n = s[0].n, above = 0, below = 0;
    for (size_t i = 0; i < n; i++) {
      above += s[1].y[i] > s[0].y[i];
      below += s[1].y[i] < s[0].y[i];
    }
    fputs("<figure>", fp);
    slem_plot_scatter(fp, s[0].y, s[1].y, n, lo, hi, self->runs[0].name, self->runs[1].name,
                      slem_plot_colour(1));
    fputs("<figcaption>AP of each query (", fp);
    fputs(ap_name(self->opts.ap), fp);
    fputs("): ", fp);
    slem_html_text(fp, self->runs[1].name);
    fputs(" against ", fp);
    slem_html_text(fp, self->runs[0].name);
    fprintf(fp, "; %zu queries above the diagonal, %zu below, %zu on it", above, below,
            n - above - below);
    if (lo > 0 || hi < 1) fprintf(fp, "; both axes from %g to %g, the span of the APs", lo, hi);
    fputs(".</figcaption></figure>\n", fp);
  }
  fputs("</div></section>\n", fp);
cleanup:
  for (size_t r = 0; legend && r < self->nruns; r++) free(legend[r]);
  free(legend);
  free(aps);
  free(s);
  return st;
}

/* s as a JSON string, safe inside <script>: '<', '>' and '&' escaped too. */
static void json_text(FILE *fp, const char *s) {
  fputc('"', fp);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(fp, "\\%c", *p);
    else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') fprintf(fp, "\\u%04x", *p);
    else fputc(*p, fp);
  }
  fputc('"', fp);
}

/* Every query of the ground truth: its relevant count, each run's AP and, with two runs or
 * more, the second's AP minus the first's; a table that the inline script sorts, filters
 * and pages (the data as JSON, so that 10 000 queries make no 10 000-row DOM). */
static void per_query(FILE *fp, const SlemReport *self) {
  fprintf(fp, "<section id=\"per-query\"><h2>Every query<small>%zu queries, AP (%s); click a "
              "column to sort</small></h2>\n",
          self->nq, ap_name(self->opts.ap));
  fputs("<div class=\"pq-tools\"><input id=\"pq-filter\" type=\"search\" placeholder=\"filter by "
        "query id\" aria-label=\"filter by query id\"><button id=\"pq-prev\" type=\"button\">"
        "\u2039 previous</button><button id=\"pq-next\" type=\"button\">next \u203a</button>"
        "<span id=\"pq-info\" class=\"note\"></span></div>\n",
        fp);
  fputs("<table class=\"pq\"><thead><tr><th aria-sort=\"none\">query</th><th aria-sort=\"none\">"
        "relevant</th>", fp);
  for (size_t r = 0; r < self->nruns; r++) {
    fputs("<th aria-sort=\"none\">AP ", fp);
    slem_html_text(fp, self->runs[r].name);
    fputs("</th>", fp);
  }
  if (self->nruns > 1) {
    fputs("<th aria-sort=\"none\">\u0394 ", fp);
    slem_html_text(fp, self->runs[1].name);
    fputs(" \u2212 ", fp);
    slem_html_text(fp, self->runs[0].name);
    fputs("</th>", fp);
  }
  fputs("</tr></thead><tbody></tbody></table>\n<noscript><p class=\"note\">The table needs "
        "JavaScript; slem-eval --per-query prints the same numbers.</p></noscript>\n"
        "<script type=\"application/json\" id=\"pq-data\">{\"runs\":[", fp);
  for (size_t r = 0; r < self->nruns; r++) {
    if (r) fputc(',', fp);
    json_text(fp, self->runs[r].name);
  }
  fputs("],\"rows\":[", fp);
  for (size_t q = 0; q < self->nq; q++) {
    int ev = evaluated(self, q);
    fputs(q ? ",\n[" : "\n[", fp);
    json_text(fp, self->qids[q]);
    fprintf(fp, ",%zu", slem_truth_nrel(self->truth, q));
    for (size_t r = 0; r < self->nruns; r++)
      if (ev) fprintf(fp, ",%.4f", self->runs[r].ap[q]);
      else fputs(",null", fp);
    if (self->nruns > 1) {
      if (ev) fprintf(fp, ",%.6g", self->runs[1].ap[q] - self->runs[0].ap[q]);
      else fputs(",null", fp);
    }
    fputc(']', fp);
  }
  fprintf(fp, "]}</script>\n<script>\n%s</script>\n</section>\n", pq_script);
}

static void keyrow(FILE *fp) {
  fputs("<div class=\"keyrow\"><span class=\"k-rel\">relevant</span><span class=\"k-junk\">junk"
        "</span><span class=\"k-wrong\">wrong</span><span>under each result: rank and score</span></div>\n",
        fp);
}

static void hits_head(FILE *fp, const SlemReport *self, const char *first, const char *second) {
  fprintf(fp, "<table class=\"hits\"><thead><tr><th>%s</th><th>%s</th><th>top %zu results</th></tr>"
              "</thead>\n<tbody>\n", first, second, self->opts.top);
}

static void chosen(FILE *fp, const SlemReport *self, const SlemThumbs *th) {
  fputs("<section id=\"queries\"><h2>", fp);
  if (self->listed) fputs("Chosen queries", fp);
  else if (self->nruns > 1) fputs("Queries where the runs differ most", fp);
  else fputs("Queries from worst to best", fp);
  fprintf(fp, "<small>%zu queries, AP (%s)</small></h2>\n", self->nshown, ap_name(self->opts.ap));
  keyrow(fp);
  hits_head(fp, self, "query", "run");
  for (size_t i = 0; i < self->nshown; i++) {
    size_t q = self->shown[i];
    for (size_t r = 0; r < self->nruns; r++) {
      fputs("<tr>", fp);
      if (r == 0) {
        fprintf(fp, "<td class=\"qcell\" rowspan=\"%zu\">", self->nruns);
        query_figure(fp, self, th, q);
        fprintf(fp, "<span class=\"ap\">%zu relevant</span></td>", slem_truth_nrel(self->truth, q));
      }
      fputs("<td class=\"run\">", fp);
      run_label(fp, self, r);
      if (self->runs[r].status[q] == SLEM_Q_SKIPPED) fputs("<span class=\"ap\">no relevant item</span>", fp);
      else fprintf(fp, "<span class=\"ap\">AP %.3f</span>", self->runs[r].ap[q]);
      fputs("</td>", fp);
      strip(fp, self, th, r, q);
      fputs("</tr>\n", fp);
    }
  }
  fputs("</tbody></table></section>\n", fp);
}

static int extremes(FILE *fp, const SlemReport *self, const SlemThumbs *th, size_t r, SlemError *err) {
  size_t *worst = malloc((self->opts.extremes + 1) * sizeof *worst);
  size_t *best = malloc((self->opts.extremes + 1) * sizeof *best), nw, nb;
  if (!worst || !best) {
    free(worst);
    free(best);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  slem_report_extremes(self, r, worst, &nw, best, &nb);
  fprintf(fp, "<section class=\"extremes\" id=\"run-%zu\"><h2>", r + 1);
  run_label(fp, self, r);
  fprintf(fp, ": worst and best queries<small>AP (%s)</small></h2>\n", ap_name(self->opts.ap));
  hits_head(fp, self, "", "query");
  for (size_t i = 0; i < nw + nb; i++) {
    size_t q = i < nw ? worst[i] : best[i - nw];
    fprintf(fp, "<tr><td class=\"qcell\"><span class=\"badge%s\">%s</span></td><td class=\"run\">",
            i < nw ? "" : " best", i < nw ? "worst" : "best");
    query_figure(fp, self, th, q);
    fprintf(fp, "<span class=\"ap\">AP %.3f, %zu relevant</span></td>", self->runs[r].ap[q],
            slem_truth_nrel(self->truth, q));
    strip(fp, self, th, r, q);
    fputs("</tr>\n", fp);
  }
  fputs("</tbody></table></section>\n", fp);
  free(worst);
  free(best);
  return SLEM_OK;
}

/* Every id the page shows, loaded into thumbs before writing. */
static int load_pictures(const SlemReport *self, SlemThumbs *th, SlemError *err) {
  size_t cap = (self->nshown + 2 * self->opts.extremes * self->nruns) * (1 + self->nruns * self->opts.top) + 1;
  const char **ids = malloc(cap * sizeof *ids);
  size_t *qs = malloc(cap * sizeof *qs), *worst = malloc((self->opts.extremes + 1) * sizeof *worst);
  size_t *best = malloc((self->opts.extremes + 1) * sizeof *best), nqs = 0, nids = 0, nw, nb;
  int st = SLEM_OK;
  if (!ids || !qs || !worst || !best) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto cleanup;
  }
  for (size_t i = 0; i < self->nshown; i++) qs[nqs++] = self->shown[i];
  for (size_t r = 0; r < self->nruns; r++) {
    slem_report_extremes(self, r, worst, &nw, best, &nb);
    for (size_t i = 0; i < nw; i++) qs[nqs++] = worst[i];
    for (size_t i = 0; i < nb; i++) qs[nqs++] = best[i];
  }
  for (size_t i = 0; i < nqs; i++) ids[i] = self->qids[qs[i]];
  if ((st = slem_thumbs_load(th, SLEM_THUMB_QUERY, ids, nqs, err)) != SLEM_OK) goto cleanup;
  for (size_t i = 0; i < nqs; i++)
    for (size_t r = 0; r < self->nruns; r++) {
      const SlemReportRun *x = self->runs + r;
      for (size_t j = 0; j < x->nhits[qs[i]]; j++) ids[nids++] = x->hits[qs[i]][j].id;
    }
  st = slem_thumbs_load(th, SLEM_THUMB_DB, ids, nids, err);
cleanup:
  free(ids);
  free(qs);
  free(worst);
  free(best);
  return st;
}

int slem_report_write(const SlemReport *self, SlemThumbs *thumbs, const char *path,
                      SlemError *err) {
  SlemOut *out = NULL;
  FILE *fp;
  const char *title = self->opts.title ? self->opts.title : "Retrieval report";
  size_t side = thumbs ? slem_thumbs_side(thumbs) : 0;
  int st;
  if (thumbs && (st = load_pictures(self, thumbs, err)) != SLEM_OK) return st;
  if ((st = slem_out_open(&out, path, err)) != SLEM_OK) return st;
  fp = slem_out_file(out);
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"slem-report " SLEM_VERSION "\">\n<title>",
        fp);
  slem_html_text(fp, title);
  fprintf(fp, "</title>\n<style>\n%s", css);
  if (side) fprintf(fp, ":root{--thumb:%zupx}\n", side);
  fputs("</style>\n</head>\n<body>\n<main>\n<header><h1>", fp);
  slem_html_text(fp, title);
  fprintf(fp, "</h1><p class=\"sub\">%zu run%s, %zu queries in the ground truth", self->nruns,
          self->nruns == 1 ? "" : "s", self->nq);
  if (self->opts.truth_note) {
    fputs(" (", fp);
    slem_html_text(fp, self->opts.truth_note);
    fputs(")", fp);
  }
  fputs("</p></header>\n", fp);
  summary(fp, self);
  if ((st = figures(fp, self, err)) != SLEM_OK) goto fail;
  if (self->nruns > 0) per_query(fp, self);
  chosen(fp, self, thumbs);
  for (size_t r = 0; r < self->nruns; r++)
    if ((st = extremes(fp, self, thumbs, r, err)) != SLEM_OK) goto fail;
  fputs("<footer>Made by slem-report " SLEM_VERSION " from the rankings and the ground truth alone; "
        "the numbers are those of slem-eval.</footer>\n</main>\n</body>\n</html>\n",
        fp);
  return slem_out_commit(out, err);
fail:
  slem_out_abort(out);
  return st;
}

/* ---- the measures of a run (the one place that knows the evaluation API) ---- */

/* A revisitop evaluation with the ground truth of proto read in (files in a fixed order:
 * qrels, easy, hard, junk). */
static int revisit_load(SlemRevisit **rv, const SlemReportProtocol *proto, SlemError *err) {
  int st;
  if ((st = slem_revisit_new(rv, proto->protocol, err)) != SLEM_OK) return st;
  if (proto->qrels) st = slem_revisit_read_qrels(*rv, proto->qrels, err);
  if (st == SLEM_OK && proto->easy) st = slem_revisit_read(*rv, SLEM_GT_EASY, proto->easy, err);
  if (st == SLEM_OK && proto->hard) st = slem_revisit_read(*rv, SLEM_GT_HARD, proto->hard, err);
  for (size_t i = 0; i < proto->njunk && st == SLEM_OK; i++)
    st = slem_revisit_read(*rv, SLEM_GT_JUNK, proto->junk[i], err);
  if (st != SLEM_OK) {
    slem_revisit_free(*rv);
    *rv = NULL;
  }
  return st;
}

/* Copies the pairs of the ground truth file path (kind: SLEM_GT_*, or -1 for graded qrels)
 * into qrels ("q 0 d 1" for a positive under protocol p, "q 0 d 0" else, so that every
 * query is known) and junk ("q d" for junk and the positives p ignores). The file was
 * read by revisitop.h first: it is well formed. */
static int revisit_copy(FILE *qrels, FILE *junk, const char *path, int kind, SlemProtocol p,
                        SlemError *err) {
  FILE *in = fopen(path, "r");
  char *line = NULL, *save, *f[4];
  size_t cap = 0;
  int st = SLEM_OK;
  if (!in) return slem_error(err, SLEM_EIO, "%s: %s", path, strerror(errno));
  while (getline(&line, &cap, in) > 0) {
    int nf = 0, k = kind, pos;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nf < 4; t = strtok_r(NULL, " \t\r\n", &save))
      f[nf++] = t;
    if (kind < 0) { /* graded: 2 easy, 1 hard, -1 junk, 0 ignored */
      long g;
      if (nf < 4) continue;
      g = strtol(f[3], NULL, 10);
      k = g == 2 ? SLEM_GT_EASY : g == 1 ? SLEM_GT_HARD : g == -1 ? SLEM_GT_JUNK : -1;
      if (k < 0) continue;
      f[1] = f[2];
    } else if (nf < 2) {
      continue;
    }
    pos = (k == SLEM_GT_EASY && p != SLEM_PROTO_HARD) || (k == SLEM_GT_HARD && p != SLEM_PROTO_EASY);
    fprintf(qrels, "%s 0 %s %d\n", f[0], f[1], pos);
    if (!pos) fprintf(junk, "%s %s\n", f[0], f[1]);
  }
  if (ferror(in)) st = slem_error(err, SLEM_EIO, "%s: read: %s", path, strerror(errno));
  free(line);
  fclose(in);
  return st;
}

/* A temporary file in dir (NULL or "": /tmp), removed from its folder at once. */
static int temp_file(FILE **fp, const char *dir, SlemError *err) {
  char path[4096];
  int fd;
  if (!dir || !*dir) dir = "/tmp";
  snprintf(path, sizeof path, "%s/slem-report.XXXXXX", dir);
  if ((fd = mkstemp(path)) < 0)
    return slem_error(err, SLEM_EIO, "%s: cannot make a temporary file there (TMPDIR): %s", dir,
                      strerror(errno));
  unlink(path);
  if (!(*fp = fdopen(fd, "w+"))) {
    close(fd);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  return SLEM_OK;
}

int slem_report_protocol_truth(SlemTruth **truth, const SlemReportProtocol *proto, SlemError *err) {
  SlemRevisit *rv = NULL;
  FILE *qrels = NULL, *junk = NULL;
  char qpath[64], jpath[64];
  int st;
  *truth = NULL;
  if ((st = revisit_load(&rv, proto, err)) != SLEM_OK) return st; /* the files' errors */
  if ((st = temp_file(&qrels, proto->tmpdir, err)) != SLEM_OK ||
      (st = temp_file(&junk, proto->tmpdir, err)) != SLEM_OK) goto cleanup;
  if (proto->qrels) st = revisit_copy(qrels, junk, proto->qrels, -1, proto->protocol, err);
  if (st == SLEM_OK && proto->easy) st = revisit_copy(qrels, junk, proto->easy, SLEM_GT_EASY, proto->protocol, err);
  if (st == SLEM_OK && proto->hard) st = revisit_copy(qrels, junk, proto->hard, SLEM_GT_HARD, proto->protocol, err);
  for (size_t i = 0; i < proto->njunk && st == SLEM_OK; i++)
    st = revisit_copy(qrels, junk, proto->junk[i], SLEM_GT_JUNK, proto->protocol, err);
  if (st != SLEM_OK) goto cleanup;
  if (fflush(qrels) || fflush(junk)) {
    st = slem_error(err, SLEM_EIO, "temporary ground truth: %s", strerror(errno));
    goto cleanup;
  }
  snprintf(qpath, sizeof qpath, "/dev/fd/%d", fileno(qrels));
  snprintf(jpath, sizeof jpath, "/dev/fd/%d", fileno(junk));
  if ((st = slem_truth_read_qrels(truth, qpath, err)) == SLEM_OK &&
      (st = slem_truth_read_junk(*truth, jpath, err)) != SLEM_OK) {
    slem_truth_free(*truth);
    *truth = NULL;
  }
cleanup:
  if (qrels) fclose(qrels);
  if (junk) fclose(junk);
  slem_revisit_free(rv);
  return st;
}

/* revisitop's measures of the ranking at path into x, and its per-query AP in x->ap. */
static int revisit_run(const SlemReport *self, SlemReportRun *x, const char *path, SlemRankFormat fmt,
                       SlemError *err) {
  SlemRevisit *rv = NULL;
  SlemRankReader *rr = NULL;
  int st;
  if ((st = revisit_load(&rv, self->opts.protocol, err)) != SLEM_OK ||
      (st = slem_rankreader_open(&rr, path, fmt, err)) != SLEM_OK ||
      (st = slem_revisit_add_run(rv, rr, err)) != SLEM_OK ||
      (st = slem_revisit_result(rv, &x->revisit, err)) != SLEM_OK)
    goto cleanup;
  for (size_t i = 0; i < slem_revisit_nqueries(rv); i++) {
    const char *qid;
    double ap, mp[SLEM_REVISIT_NK];
    int status;
    long q;
    slem_revisit_query_result(rv, i, &qid, &ap, mp, &status);
    if ((q = slem_truth_find_query(self->truth, qid)) >= 0) x->ap[q] = ap;
  }
cleanup:
  slem_rankreader_free(rr);
  slem_revisit_free(rv);
  return st;
}

/* 1 when path names a regular file (what can be read again); a missing one is left to the
 * reader to report. */
static int regular_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) != 0 || S_ISREG(sb.st_mode);
}

/* A ranking on stdin ("-") or on another pipe (src names it) is read three times (two AP
 * definitions, then the top results), so it is first copied to a temporary file, removed
 * from its folder at once (nothing is left behind, even by a killed run) and read again
 * through *path, "/dev/fd/N" for the descriptor *fd that keeps it alive; messages then
 * name "<stdin>" or src again. The copy is made in dir (NULL or "": /tmp). */
static int spool_in(const char *src, const char *dir, char **path, int *fd, SlemError *err) {
  const char *shown = strcmp(src, "-") == 0 ? "<stdin>" : src;
  char buf[65536], *tmp;
  size_t len;
  int st = SLEM_OK, in = 0, own = strcmp(src, "-") != 0;
  *path = NULL;
  *fd = -1;
  if (own && (in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
    return slem_error(err, SLEM_EIO, "%s: %s", src, strerror(errno));
  if (!own && (st = slem_in_stdin_closed(err)) != SLEM_OK) return st;
  if (!own) slem_in_block_stdin();
  if (!dir || !*dir) dir = "/tmp";
  len = strlen(dir) + 32;
  if (!(tmp = malloc(len))) {
    if (own) close(in);
    return slem_error(err, SLEM_ENOMEM, "out of memory");
  }
  snprintf(tmp, len, "%s/slem-report.XXXXXX", dir);
  if ((*fd = mkstemp(tmp)) < 0) {
    st = slem_error(err, SLEM_EIO, "%s: cannot make a temporary copy of %s there (TMPDIR): %s",
                    dir, shown, strerror(errno));
    if (own) close(in);
    free(tmp);
    return st;
  }
  unlink(tmp);
  for (;;) {
    ssize_t got = read(in, buf, sizeof buf), put = 0;
    if (got < 0 && (errno == EINTR || slem_io_wait_ready(in, POLLIN))) continue;
    if (got < 0) {
      st = slem_error(err, SLEM_EIO, "%s: read: %s", shown, strerror(errno));
      break;
    }
    if (got == 0) break;
    while (put < got) {
      ssize_t w = write(*fd, buf + put, (size_t)(got - put));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        st = slem_error(err, SLEM_EIO, "%s: write: %s", tmp, strerror(errno));
        break;
      }
      put += w;
    }
    if (st) break;
  }
  if (own) close(in);
  if (st == SLEM_OK) {
    snprintf(tmp, len, "/dev/fd/%d", *fd);
    *path = tmp;
    return SLEM_OK;
  }
  close(*fd);
  *fd = -1;
  free(tmp);
  return st;
}

/* Replaces the temporary file's name by shown ("<stdin>", or the pipe's path) in err's
 * message. */
static void name_spooled(SlemError *err, const char *tmp, const char *shown) {
  char msg[SLEM_ERRMSG_MAX];
  const char *p = strstr(err->msg, tmp);
  if (!p) return;
  snprintf(msg, sizeof msg, "%.*s%s%s", (int)(p - err->msg), err->msg, shown, p + strlen(tmp));
  snprintf(err->msg, sizeof err->msg, "%s", msg);
}

/* Adds entry e of query q to the query's results, kept sorted by rank (then file order)
 * and cut at top. */
static int keep_hit(const SlemReport *self, SlemReportRun *x, size_t q, const SlemRankEntry *e) {
  SlemReportHit *h = x->hits[q];
  size_t n = x->nhits[q], at = n;
  long d = slem_truth_find_doc(self->truth, e->id);
  char *id;
  if (d >= 0 && !slem_truth_junk(self->truth, q, (size_t)d) && slem_truth_relevant(self->truth, q, (size_t)d)) {
    SlemReportFound *f = realloc(x->found[q], (x->nfound[q] + 1) * sizeof *f);
    if (!f) return SLEM_ENOMEM;
    x->found[q] = f;
    f[x->nfound[q]].doc = (size_t)d;
    f[x->nfound[q]++].rank = e->rank;
  }
  while (at > 0 && h[at - 1].rank > e->rank) at--;
  if (at == self->opts.top) return SLEM_OK;
  if (!(id = strdup(e->id))) return SLEM_ENOMEM;
  if (n == self->opts.top) free(h[--n].id);
  memmove(h + at + 1, h + at, (n - at) * sizeof *h);
  h[at].id = id;
  h[at].rank = e->rank;
  h[at].score = e->score;
  h[at].label = db_label(self, e->id);
  h[at].rel = d < 0                                            ? SLEM_HIT_WRONG
              : slem_truth_junk(self->truth, q, (size_t)d)     ? SLEM_HIT_JUNK
              : slem_truth_relevant(self->truth, q, (size_t)d) ? SLEM_HIT_RELEVANT
                                                               : SLEM_HIT_WRONG;
  x->nhits[q] = n + 1;
  return SLEM_OK;
}

/* The first results of the queries of run x that have room for them (hits[q] set). */
static int read_hits(const SlemReport *self, SlemReportRun *x, SlemError *err) {
  SlemRankReader *rr = NULL;
  const SlemRankQuery *q;
  int st;
  if ((st = slem_rankreader_open(&rr, x->path, x->fmt, err)) != SLEM_OK) goto cleanup;
  while ((st = slem_rankreader_next(rr, &q, err)) == SLEM_OK && q) {
    long qi = slem_truth_find_query(self->truth, q->query);
    if (qi < 0 || !x->hits[qi]) continue; /* not shown; unknown ones were refused before */
    for (size_t i = 0; i < q->n; i++)
      if (keep_hit(self, x, (size_t)qi, q->e + i) != SLEM_OK) {
        st = slem_error(err, SLEM_ENOMEM, "out of memory");
        goto cleanup;
      }
  }
cleanup:
  if (st != SLEM_OK && x->spool_fd >= 0) name_spooled(err, x->path, x->source);
  slem_rankreader_free(rr);
  return st;
}

int slem_report_read_results(SlemReport *self, SlemError *err) {
  size_t e = self->opts.extremes, *worst = malloc((e + 1) * sizeof *worst);
  size_t *best = malloc((e + 1) * sizeof *best), nw, nb;
  unsigned char *shown = calloc(self->nq + 1, 1);
  int st = SLEM_OK;
  if (!worst || !best || !shown) goto nomem;
  for (size_t i = 0; i < self->nshown; i++) shown[self->shown[i]] = 1;
  for (size_t r = 0; r < self->nruns; r++) {
    slem_report_extremes(self, r, worst, &nw, best, &nb);
    for (size_t i = 0; i < nw; i++) shown[worst[i]] = 1;
    for (size_t i = 0; i < nb; i++) shown[best[i]] = 1;
  }
  for (size_t r = 0; r < self->nruns && st == SLEM_OK; r++) {
    SlemReportRun *x = self->runs + r;
    for (size_t q = 0; q < self->nq; q++) {
      for (size_t i = 0; x->hits[q] && i < x->nhits[q]; i++) free(x->hits[q][i].id);
      free(x->hits[q]);
      x->hits[q] = NULL;
      x->nhits[q] = 0;
      free(x->found[q]);
      x->found[q] = NULL;
      x->nfound[q] = 0;
      if (shown[q] && !(x->hits[q] = calloc(self->opts.top, sizeof **x->hits))) goto nomem;
    }
    st = read_hits(self, x, err);
  }
  goto cleanup;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
cleanup:
  free(worst);
  free(best);
  free(shown);
  return st;
}

int slem_report_add_run(SlemReport *self, const char *name, const char *path, SlemRankFormat fmt,
                        SlemError *err) {
  SlemEvalResult *res[2] = {NULL, NULL};
  SlemReportRun *runs, *x = NULL;
  SlemEvalOpts o;
  char *spool = NULL;
  int spool_fd = -1;
  const char *src = path;
  int st;
  /* a ranking is read twice (its measures, then the results shown): stdin and any other
   * input that cannot be read again (a pipe, /dev/stdin) are copied to a temporary file */
  if (strcmp(path, "-") == 0 || !regular_file(path)) {
    if ((st = spool_in(path, self->opts.tmpdir, &spool, &spool_fd, err)) != SLEM_OK) return st;
    src = spool;
  }
  slem_eval_opts_init(&o);
  o.recall_k = self->opts.recall_k;
  o.curve_points = self->opts.curve_points;
  for (int k = 0; k < 2; k++) {
    o.ap = (SlemApKind)k;
    if ((st = slem_eval_result_read(&res[k], src, fmt, self->truth, &o, err)) != SLEM_OK) goto cleanup;
  }
  runs = realloc(self->runs, (self->nruns + 1) * sizeof *runs);
  if (!runs) goto nomem;
  self->runs = runs;
  x = runs + self->nruns;
  memset(x, 0, sizeof *x);
  x->spool_fd = -1;
  x->name = strdup(name);
  x->source = strdup(strcmp(path, "-") == 0 ? "<stdin>" : path);
  x->curve = malloc(res[0]->curve_points * sizeof *x->curve);
  x->ap = malloc((self->nq + 1) * sizeof *x->ap);
  x->status = malloc((self->nq + 1) * sizeof *x->status);
  x->hits = calloc(self->nq + 1, sizeof *x->hits);
  x->nhits = calloc(self->nq + 1, sizeof *x->nhits);
  x->found = calloc(self->nq + 1, sizeof *x->found);
  x->nfound = calloc(self->nq + 1, sizeof *x->nfound);
  x->pvalue = -1;
  if (!x->name || !x->source || !x->curve || !x->ap || !x->status || !x->hits || !x->nhits ||
      !x->found || !x->nfound)
    goto nomem;
  for (int k = 0; k < 2; k++) x->map[k] = res[k]->map;
  x->p1 = res[0]->p1;
  x->p5 = res[0]->p5;
  x->p10 = res[0]->p10;
  x->rk = res[0]->rk;
  x->evaluated = res[0]->evaluated;
  x->skipped = res[0]->skipped;
  x->missing = res[0]->missing;
  x->curve_points = res[0]->curve_points;
  memcpy(x->curve, res[0]->curve, x->curve_points * sizeof *x->curve);
  for (size_t q = 0; q < self->nq; q++) {
    x->ap[q] = res[self->opts.ap]->q[q].ap;
    x->status[q] = res[0]->q[q].status;
  }
  x->fmt = fmt;
  x->path = spool ? spool : strdup(path);
  if (!x->path) goto nomem;
  x->spool_fd = spool_fd;
  spool = NULL;
  spool_fd = -1;
  if (self->opts.protocol && (st = revisit_run(self, x, x->path, fmt, err)) != SLEM_OK) {
    if (x->spool_fd >= 0) name_spooled(err, x->path, x->source);
    goto cleanup;
  }
  self->nruns++;
  x = NULL;
  goto cleanup;
nomem:
  st = slem_error(err, SLEM_ENOMEM, "out of memory");
cleanup:
  if (x) run_clear(x, self->nq);
  if (spool) { /* not handed to the run */
    if (st != SLEM_OK) name_spooled(err, spool, strcmp(path, "-") == 0 ? "<stdin>" : path);
    close(spool_fd);
    free(spool);
  }
  slem_eval_result_free(res[0]);
  slem_eval_result_free(res[1]);
  return st;
}

void slem_report_input_parse(SlemReportInput *in, char *arg, char *buf, size_t size) {
  struct stat sb;
  char *eq = strchr(arg, '=');
  if (eq && eq > arg && stat(arg, &sb) != 0) { /* a file of that very name wins */
    *eq = '\0';
    in->name = arg;
    in->path = eq + 1;
    return;
  }
  in->path = arg;
  if (strcmp(arg, "-") == 0) {
    snprintf(buf, size, "stdin");
  } else {
    const char *base = strrchr(arg, '/');
    char *dot;
    snprintf(buf, size, "%s", base ? base + 1 : arg);
    dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
  }
  in->name = buf;
}

/* Appends to buf (size bytes, holding a string) what fmt says, cut at its end. */
static void note_append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note_append(char *buf, size_t size, const char *fmt, ...) {
  size_t len = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, size - len, fmt, ap);
  va_end(ap);
}

const char *slem_report_truth_note(char *buf, size_t size, const SlemTruthSpec *spec,
                                   const SlemReportProtocol *p) {
  buf[0] = '\0';
  if (p) {
    note_append(buf, size, "revisitop %s, ", slem_revisitop_protocol_name(p->protocol));
    if (p->qrels) note_append(buf, size, "graded qrels %s", base_name(p->qrels));
    if (p->easy) note_append(buf, size, "easy %s", base_name(p->easy));
    if (p->hard) note_append(buf, size, "%shard %s", p->easy ? ", " : "", base_name(p->hard));
  } else if (spec->qrels) {
    note_append(buf, size, "qrels %s", base_name(spec->qrels));
  } else {
    note_append(buf, size, "labels %s and %s", base_name(spec->qlabels), base_name(spec->dblabels));
  }
  if (spec->njunk)
    note_append(buf, size, ", junk from %zu file%s", spec->njunk, spec->njunk > 1 ? "s" : "");
  return buf;
}

int slem_report_make(const char *output, const SlemTruthSpec *spec, const SlemReportInput *runs,
                     size_t nruns, SlemRankFormat fmt, const char *queries_file,
                     const SlemReportOpts *opts, const SlemThumbOpts *thumbs, size_t *missing,
                     char *first, size_t first_size, SlemError *err) {
  SlemTruth *truth = NULL;
  SlemReport *rep = NULL;
  SlemThumbs *th = NULL;
  SlemThumbOpts topts = *thumbs;
  char *outdir = NULL;
  const SlemReportProtocol *p = opts->protocol;
  int st = slem_truth_check(spec, p != NULL, p ? p->easy : NULL, p ? p->hard : NULL, 0, err);
  if (st != SLEM_OK) return st;
  if (strcmp(output, "-") != 0) {
    /* the folder the page lands in: a link's file's, not the link's (slem_out_open()) */
    char real[PATH_MAX + 256];
    char *copy = strdup(slem_out_resolve(output, real, sizeof real) == 0 ? real : output);
    if (!copy || !(outdir = strdup(dirname(copy)))) {
      free(copy);
      return slem_error(err, SLEM_ENOMEM, "out of memory");
    }
    free(copy);
    topts.base_dir = outdir;
  }
  /* the database's labels and ids are read twice (for the ground truth, then for the
   * page's labels): stdin or a pipe would be empty the second time */
  for (int i = 0; !opts->protocol && spec->dblabels && i < 2; i++) {
    const char *f = i == 0 ? spec->dblabels : spec->dbids;
    if (f && strcmp(f, "-") == 0) {
      st = slem_error(err, SLEM_EINVAL, "the database's %s are read twice: not from stdin; "
                      "give a file", i == 0 ? "labels" : "ids");
      goto cleanup;
    }
    if (f && (st = slem_in_rereadable(f, err)) != SLEM_OK) goto cleanup;
  }
  if ((st = opts->protocol ? slem_report_protocol_truth(&truth, opts->protocol, err)
                            : slem_truth_read(&truth, spec, err)) != SLEM_OK ||
      (st = slem_report_new(&rep, truth, opts, err)) != SLEM_OK)
    goto cleanup;
  if (!opts->protocol && spec->dblabels && (st = slem_report_set_labels(rep, spec->dblabels, spec->dbids, err)) != SLEM_OK)
    goto cleanup;
  for (size_t r = 0; r < nruns; r++)
    if ((st = slem_report_add_run(rep, runs[r].name, runs[r].path, fmt, err)) != SLEM_OK) goto cleanup;
  if ((st = slem_report_choose(rep, queries_file, err)) != SLEM_OK ||
      (st = slem_report_test(rep, err)) != SLEM_OK ||
      (st = slem_report_read_results(rep, err)) != SLEM_OK ||
      (st = slem_thumbs_new(&th, &topts, err)) != SLEM_OK ||
      (st = slem_report_write(rep, th, output, err)) != SLEM_OK)
    goto cleanup;
  {
    const char *f;
    size_t m = slem_thumbs_missing(th, &f);
    if (missing) *missing = m;
    if (first && first_size) snprintf(first, first_size, "%s", m ? f : "");
  }
cleanup:
  slem_thumbs_free(th);
  slem_report_free(rep);
  slem_truth_free(truth);
  free(outdir);
  return st;
}
