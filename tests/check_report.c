/* slem-report's pieces: PNG through libpng and back, images from vectors, HTML escaping,
 * relative links, the SVG curves against slem-eval's, and the page's structure. */
#include "testutil.h"

#include <png.h>
#include <sys/stat.h>

#include "../lib/eval/eval.h"
#include "../lib/report/html.h"
#include "../lib/report/image.h"
#include "../lib/eval/permtest.h"
#include "../lib/report/plot.h"
#include "../lib/report/pngenc.h"
#include "../lib/report/report.h"
#include "../lib/report/thumbs.h"

#define DIGITS "testdata/digits/"
#define EVAL "testdata/eval/"

/* What a writer put on a stream, as a new string. */
typedef struct Cap {
  FILE *fp;
  char *buf;
  size_t len;
} Cap;

static void cap_open(Cap *c) {
  c->buf = NULL;
  c->fp = open_memstream(&c->buf, &c->len);
  ck_assert_ptr_nonnull(c->fp);
}

static char *cap_close(Cap *c) {
  ck_assert_int_eq(fclose(c->fp), 0);
  return c->buf;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static size_t count(const char *s, const char *what) {
  size_t n = 0;
  for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

/* Decodes a PNG with libpng's own reader into pixels(h, w, channels). */
static unsigned char *png_decode(const unsigned char *data, size_t n, int channels, size_t *w, size_t *h) {
  png_image im;
  unsigned char *pix;
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  ck_assert_msg(png_image_begin_read_from_memory(&im, data, n), "libpng: %s", im.message);
  ck_assert_uint_eq(im.format & PNG_FORMAT_FLAG_COLOR, channels == 3 ? PNG_FORMAT_FLAG_COLOR : 0);
  im.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  pix = malloc(PNG_IMAGE_SIZE(im));
  ck_assert_msg(png_image_finish_read(&im, NULL, pix, 0, NULL), "libpng: %s", im.message);
  *w = im.width;
  *h = im.height;
  return pix;
}

START_TEST(png_round_trip) {
  static const size_t dims[][3] = {{13, 7, 1}, {5, 9, 3}, {1, 1, 1}, {64, 64, 3}};
  tu_seed(17);
  for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
    size_t w = dims[k][0], h = dims[k][1], c = dims[k][2], rw, rh;
    unsigned char *pix = malloc(w * h * c), *back;
    SlemPng *png = NULL;
    SlemError err;
    for (size_t i = 0; i < w * h * c; i++) pix[i] = (unsigned char)(tu_next() & 255);
    ck_assert_msg(slem_pngenc_new(&png, pix, w, h, (int)c, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_uint_gt(png->size, 8);
    ck_assert_mem_eq(png->data, "\x89PNG\r\n\x1a\n", 8);
    back = png_decode(png->data, png->size, (int)c, &rw, &rh);
    ck_assert_uint_eq(rw, w);
    ck_assert_uint_eq(rh, h);
    ck_assert_mem_eq(back, pix, w * h * c);
    free(back);
    free(pix);
    slem_pngenc_free(png);
  }
}
END_TEST

START_TEST(png_refuses_bad_geometry) {
  unsigned char px[4] = {0};
  SlemPng *png = (SlemPng *)1;
  SlemError err;
  ck_assert_int_eq(slem_pngenc_new(&png, px, 0, 1, 1, &err), SLEM_EINVAL);
  ck_assert_ptr_null(png);
  ck_assert_int_eq(slem_pngenc_new(&png, px, 1, SLEM_PNG_MAX_SIDE + 1, 1, &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_pngenc_new(&png, px, 2, 1, 2, &err), SLEM_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "channels"));
  slem_pngenc_free(NULL);
}
END_TEST

START_TEST(image_shapes) {
  SlemImageShape s;
  SlemError err;
  ck_assert_int_eq(slem_image_shape_parse(&s, "8x8", &err), SLEM_OK);
  ck_assert(s.height == 8 && s.width == 8 && s.channels == 1 && !s.planar);
  ck_assert_int_eq(slem_image_shape_parse(&s, "28x14", &err), SLEM_OK);
  ck_assert(s.height == 28 && s.width == 14 && slem_image_shape_size(&s) == 392);
  ck_assert_int_eq(slem_image_shape_parse(&s, "32x32x3", &err), SLEM_OK);
  ck_assert(s.channels == 3 && !s.planar && slem_image_shape_size(&s) == 3072);
  ck_assert_int_eq(slem_image_shape_parse(&s, "3x32x16", &err), SLEM_OK);
  ck_assert(s.channels == 3 && s.planar && s.height == 32 && s.width == 16);
  ck_assert_int_eq(slem_image_shape_parse(&s, "3x3x3", &err), SLEM_OK);
  ck_assert(!s.planar);
  {
    const char *bad[] = {"8", "0x8", "8x", "x8", "8x8x2", "8x8x3x1", "-8x8", "8 x8", "5000x1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
      ck_assert_msg(slem_image_shape_parse(&s, bad[i], &err) == SLEM_EINVAL, "accepted '%s'", bad[i]);
  }
  ck_assert_uint_eq(slem_image_scale(&(SlemImageShape){8, 8, 1, 0}, 64), 8);
  ck_assert_uint_eq(slem_image_scale(&(SlemImageShape){28, 28, 1, 0}, 64), 3);
  ck_assert_uint_eq(slem_image_scale(&(SlemImageShape){100, 20, 1, 0}, 64), 1);
}
END_TEST

START_TEST(image_render_ranges_and_scale) {
  SlemImageShape s = {1, 2, 1, 0};
  SlemPixelRange mm = {0, 0, 0, 0}, fixed = {0, 0, 0, 0}, inv;
  SlemError err;
  float x[2] = {2, 6}, y[2] = {-1, 20}, flat[2] = {3, 3};
  unsigned char p[16];
  ck_assert_int_eq(slem_image_pixel_range_parse(&fixed, "0:16", &err), SLEM_OK);
  ck_assert(fixed.fixed && fixed.lo == 0 && fixed.hi == 16);
  ck_assert_int_eq(slem_image_pixel_range_parse(&inv, "1:1", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_image_pixel_range_parse(&inv, "a:1", &err), SLEM_EINVAL);
  ck_assert_int_eq(slem_image_pixel_range_parse(&inv, "0:", &err), SLEM_EINVAL);
  /* min-max: 2 -> 0, 6 -> 255; scale 2 repeats each value in a 2x2 block */
  slem_image_render(p, x, &s, &mm, 2);
  ck_assert_mem_eq(p, "\x00\x00\xff\xff\x00\x00\xff\xff", 8);
  /* fixed 0:16: 2 -> round(255 * 2/16) = 32, 6 -> 96; clamped outside */
  slem_image_render(p, x, &s, &fixed, 1);
  ck_assert_uint_eq(p[0], 32);
  ck_assert_uint_eq(p[1], 96);
  slem_image_render(p, y, &s, &fixed, 1);
  ck_assert_uint_eq(p[0], 0);
  ck_assert_uint_eq(p[1], 255);
  inv = fixed;
  inv.invert = 1;
  slem_image_render(p, x, &s, &inv, 1);
  ck_assert_uint_eq(p[0], 255 - 32);
  /* one value everywhere: black */
  slem_image_render(p, flat, &s, &mm, 1);
  ck_assert_uint_eq(p[0] | p[1], 0);
  {
    /* 1x2 RGB: interleaved r0 g0 b0 r1 g1 b1 against planar r0 r1 g0 g1 b0 b1 */
    float v[6] = {0, 1, 2, 3, 4, 5};
    SlemImageShape hwc = {1, 2, 3, 0}, chw = {1, 2, 3, 1};
    SlemPixelRange r05 = {1, 0, 5, 0};
    slem_image_render(p, v, &hwc, &r05, 1);
    ck_assert_mem_eq(p, "\x00\x33\x66\x99\xcc\xff", 6);
    slem_image_render(p, v, &chw, &r05, 1);
    ck_assert_mem_eq(p, "\x00\x66\xcc\x33\x99\xff", 6);
  }
}
END_TEST

START_TEST(html_escaping) {
  Cap c;
  char *s;
  cap_open(&c);
  slem_html_text(c.fp, "<script>alert(\"x\")</script> & 'q'");
  s = cap_close(&c);
  ck_assert_str_eq(s, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;");
  free(s);
  cap_open(&c);
  slem_html_url(c.fp, "../a b/#1?%\"<x>.png");
  s = cap_close(&c);
  ck_assert_str_eq(s, "../a%20b/%231%3F%25%22%3Cx%3E.png");
  free(s);
  ck_assert_str_eq(slem_html_image_mime("a/b.JPG"), "image/jpeg");
  ck_assert_str_eq(slem_html_image_mime("x.png"), "image/png");
  ck_assert_ptr_null(slem_html_image_mime("x.png/readme"));
  ck_assert_ptr_null(slem_html_image_mime("x.txt"));
}
END_TEST

START_TEST(base64_rfc4648) {
  static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  static const char *const out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (size_t i = 0; i < 7; i++) {
    Cap c;
    char *s;
    cap_open(&c);
    slem_html_base64(c.fp, (const unsigned char *)in[i], strlen(in[i]));
    s = cap_close(&c);
    ck_assert_str_eq(s, out[i]);
    free(s);
  }
}
END_TEST

START_TEST(relative_paths) {
  char *a = tu_path("rel"), *b, *cdir, *x, *rel = NULL;
  SlemError err;
  b = malloc(strlen(a) + 16);
  cdir = malloc(strlen(a) + 16);
  x = malloc(strlen(a) + 32);
  sprintf(b, "%s/b", a);
  sprintf(cdir, "%s/c", a);
  sprintf(x, "%s/c/x.png", a);
  mkdir(a, 0700);
  mkdir(b, 0700);
  mkdir(cdir, 0700);
  tu_write_bytes(x, "x", 1);
  ck_assert_int_eq(slem_html_relpath_new(&rel, x, b, &err), SLEM_OK);
  ck_assert_str_eq(rel, "../c/x.png");
  free(rel);
  ck_assert_int_eq(slem_html_relpath_new(&rel, x, cdir, &err), SLEM_OK);
  ck_assert_str_eq(rel, "x.png");
  free(rel);
  ck_assert_int_eq(slem_html_relpath_new(&rel, x, a, &err), SLEM_OK);
  ck_assert_str_eq(rel, "c/x.png");
  free(rel);
  ck_assert_int_eq(slem_html_relpath_new(&rel, "/nonexistent/x.png", a, &err), SLEM_EIO);
  ck_assert_ptr_null(rel);
  free(a);
  free(b);
  free(cdir);
  free(x);
}
END_TEST

START_TEST(histogram_bins) {
  double lo, hi;
  ck_assert_uint_eq(slem_plot_bin(0, 0, 1, 10), 0);
  ck_assert_uint_eq(slem_plot_bin(-1, 0, 1, 10), 0);
  ck_assert_uint_eq(slem_plot_bin(0.0999, 0, 1, 10), 0);
  ck_assert_uint_eq(slem_plot_bin(0.1, 0, 1, 10), 1);
  ck_assert_uint_eq(slem_plot_bin(0.95, 0, 1, 10), 9);
  ck_assert_uint_eq(slem_plot_bin(1, 0, 1, 10), 9);
  ck_assert_uint_eq(slem_plot_bin(0.015, 0, 0.02, 10), 7);
  ck_assert_uint_eq(slem_plot_bin(0.905, 0.9, 1, 10), 0);
  /* the span: [0, 1] unless every value lies low (or high) */
  slem_plot_span(&lo, &hi, 0, 1);
  ck_assert(lo == 0 && hi == 1);
  slem_plot_span(&lo, &hi, 0.3, 0.6);
  ck_assert(lo == 0 && hi == 1);
  slem_plot_span(&lo, &hi, 0.001, 0.08);
  ck_assert(lo == 0 && hi == 0.1);
  slem_plot_span(&lo, &hi, 0, 0.015);
  ck_assert(lo == 0 && hi == 0.02);
  slem_plot_span(&lo, &hi, 0.2, 0.5);
  ck_assert(lo == 0 && hi == 0.5);
  slem_plot_span(&lo, &hi, 0.93, 1);
  ck_assert(lo == 1 - 0.1 && hi == 1);
  slem_plot_span(&lo, &hi, NAN, 0.01);
  ck_assert(lo == 0 && hi == 1);
  {
    /* 4 values: bars of 1, 0, 2 and 1 in 4 bins */
    double v[] = {0.1, 0.6, 0.7, 1.0};
    SlemSeries s = {"run", "#000000", v, 4};
    Cap c;
    char *svg;
    cap_open(&c);
    slem_plot_histogram(c.fp, &s, 1, 4, 0, 1, "AP");
    svg = cap_close(&c);
    ck_assert_uint_eq(count(svg, "<rect class=\"bar\""), 4);
    ck_assert_uint_eq(count(svg, "data-count=\"1\""), 2);
    ck_assert_uint_eq(count(svg, "data-count=\"2\""), 1);
    ck_assert_uint_eq(count(svg, "data-count=\"0\""), 1);
    free(svg);
  }
  {
    /* APs below 0.1 over [0, 0.1]: spread over the bins (1, 1, 2, 0, 1), not all in the
     * first; the ticks are the bins' edges, 0.00 to 0.10 */
    double v[] = {0.005, 0.03, 0.041, 0.05, 0.09};
    SlemSeries s = {"run", "#000000", v, 5};
    Cap c;
    char *svg;
    cap_open(&c);
    slem_plot_histogram(c.fp, &s, 1, 5, 0, 0.1, "AP");
    svg = cap_close(&c);
    ck_assert_uint_eq(count(svg, "data-count=\"1\""), 3);
    ck_assert_uint_eq(count(svg, "data-count=\"2\""), 1);
    ck_assert_uint_eq(count(svg, "data-count=\"0\""), 1);
    ck_assert_uint_eq(count(svg, ">0.02</text>"), 1);
    ck_assert_uint_eq(count(svg, ">0.10</text>"), 1);
    ck_assert_uint_eq(count(svg, "in [0.04, 0.06)"), 1);
    free(svg);
  }
  {
    /* the scatter over [0, 0.1]: the point (0.05, 0.1) at the middle of the x axis and at
     * the top of the plot, not in the corner */
    double x[] = {0.05}, y[] = {0.1};
    Cap c;
    char *svg;
    char want[64];
    cap_open(&c);
    slem_plot_scatter(c.fp, x, y, 1, 0, 0.1, "a", "b", "#000000");
    svg = cap_close(&c);
    snprintf(want, sizeof want, "<circle cx=\"%.1f\" cy=\"%.1f\"", 52 + 0.5 * 374, 14.0);
    ck_assert_msg(strstr(svg, want), "no %s in %s", want, svg);
    ck_assert_uint_eq(count(svg, ">0.10</text>"), 2);
    free(svg);
  }
}
END_TEST

/* ---- the page ---- */

/* 1 when every element opened is closed in order: void elements (meta, img, br) and
 * self-closed SVG elements excepted, the contents of <style> skipped. */
static int balanced(const char *html, char *why, size_t n) {
  char stack[256][16];
  size_t depth = 0;
  for (const char *p = html; (p = strchr(p, '<')); ) {
    char name[16];
    size_t len = 0;
    const char *end = strchr(p, '>');
    int closing = p[1] == '/';
    if (!end) return snprintf(why, n, "unterminated tag"), 0;
    if (p[1] == '!') {
      p = end + 1;
      continue;
    }
    for (const char *q = p + 1 + closing; len < sizeof name - 1 && (q[0] == '-' || (q[0] >= 'a' && q[0] <= 'z') || (q[0] >= '0' && q[0] <= '9')); q++)
      name[len++] = *q;
    name[len] = '\0';
    if (!len) return snprintf(why, n, "bad tag at '%.20s'", p), 0;
    if (closing) {
      if (!depth || strcmp(stack[depth - 1], name))
        return snprintf(why, n, "</%s> closes <%s>", name, depth ? stack[depth - 1] : "nothing"), 0;
      depth--;
    } else if (end[-1] != '/' && strcmp(name, "meta") && strcmp(name, "img") && strcmp(name, "br") &&
               strcmp(name, "input")) {
      if (depth == 256) return snprintf(why, n, "too deep"), 0;
      strcpy(stack[depth++], name);
      if (!strcmp(name, "style")) {
        end = strstr(end, "</style>");
        if (!end) return snprintf(why, n, "unterminated style"), 0;
        p = end;
        continue;
      }
    }
    p = end + 1;
  }
  if (depth) return snprintf(why, n, "<%s> never closed", stack[depth - 1]), 0;
  return 1;
}

/* The part of html from the element with id="name" (or class) to its </section>. */
static char *section(const char *html, const char *marker) {
  const char *a = strstr(html, marker), *b;
  char *s;
  ck_assert_msg(a != NULL, "no %s", marker);
  b = strstr(a, "</section>");
  ck_assert_ptr_nonnull(b);
  s = strndup(a, (size_t)(b - a));
  return s;
}

static SlemTruth *digit_labels(void) {
  SlemTruth *t = NULL;
  SlemError err;
  ck_assert_msg(slem_truth_read_labels(&t, DIGITS "queries.labels", DIGITS "database.labels", NULL,
                                       NULL, SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
  return t;
}

START_TEST(balance_checker_catches_errors) {
  char why[128];
  ck_assert(balanced("<p><b>x</b><img src=\"a\"></p>", why, sizeof why));
  ck_assert(!balanced("<p><b>x</p></b>", why, sizeof why));
  ck_assert(!balanced("<div><p>x</p>", why, sizeof why));
  ck_assert(balanced("<svg><path d=\"M0\"/></svg>", why, sizeof why));
}
END_TEST

/* The paired test by hand: with n = 3 and every difference 1, two of the 8 sign patterns
 * reach |sum| = 3; differences 1, 1, -2 sum to 0, which every pattern reaches. */
START_TEST(paired_test_by_hand) {
  const double a[] = {0, 0, 0, 0.5}, b[] = {1, 1, 1, 0.5}, c[] = {1, 1, -2};
  double p, p2;
  SlemError err;
  ck_assert_int_eq(slem_permtest_paired(&p, a, b, 3, 8, 1, &err), SLEM_OK);
  ck_assert_double_eq(p, 0.25);
  ck_assert_int_eq(slem_permtest_paired(&p, a, b, 4, 16, 1, &err), SLEM_OK); /* a tie adds nothing */
  ck_assert_double_eq(p, 0.25);
  ck_assert_int_eq(slem_permtest_paired(&p, a, c, 3, 8, 1, &err), SLEM_OK);
  ck_assert_double_eq(p, 1);
  ck_assert_int_eq(slem_permtest_paired(&p, a, b, 0, 8, 1, &err), SLEM_OK);
  ck_assert_double_eq(p, 1);
  /* random: as scipy, twice the smaller share (count + 1) / (N + 1), count about N/8 of
   * each side, the same for the same seed */
  ck_assert_int_eq(slem_permtest_paired(&p, a, b, 3, 7, 5, &err), SLEM_OK);
  ck_assert_int_eq(slem_permtest_paired(&p2, a, b, 3, 7, 5, &err), SLEM_OK);
  ck_assert_double_eq(p, p2);
  ck_assert(p >= 2.0 / 8 && p <= 1);
  /* the floor of the random test is scipy's 2 / (N + 1): 70 differences of 1, which no
   * random flip reaches (2^-70); not 1 / (N + 1) */
  {
    double z[70] = {0}, o[70];
    for (int i = 0; i < 70; i++) o[i] = 1;
    ck_assert_int_eq(slem_permtest_paired(&p, z, o, 70, 999, 1, &err), SLEM_OK);
    ck_assert_double_eq(p, 2.0 / 1000);
    ck_assert_int_eq(slem_permtest_paired(&p, o, z, 70, 999, 1, &err), SLEM_OK); /* either side */
    ck_assert_double_eq(p, 2.0 / 1000);
  }
  ck_assert_int_eq(slem_permtest_paired(&p, a, b, 3, 0, 1, &err), SLEM_EINVAL);
}
END_TEST

START_TEST(page_structure) {
  SlemTruth *t = digit_labels();
  SlemReport *rep = NULL;
  SlemReportOpts o;
  SlemError err;
  char *path = tu_path("page.html"), *html, *s, why[128];
  slem_report_opts_init(&o);
  ck_assert_int_eq(slem_report_new(&rep, t, &o, &err), SLEM_OK);
  ck_assert_msg(slem_report_add_run(rep, "cosine", EVAL "cosine-full.tsv", SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_msg(slem_report_add_run(rep, "SLEM", EVAL "slem-top100.tsv", SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_report_choose(rep, NULL, &err), SLEM_OK);
    ck_assert_msg(slem_report_read_results(rep, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(rep->nshown, 10);
  ck_assert_msg(slem_report_write(rep, NULL, path, &err) == SLEM_OK, "%s", err.msg);
  html = read_file(path);
  ck_assert_msg(balanced(html, why, sizeof why), "unbalanced: %s", why);
  ck_assert_ptr_nonnull(strstr(html, "<!DOCTYPE html>"));
  /* the per-query table's data and code, no other script, nothing fetched */
  ck_assert_uint_eq(count(html, "<script"), 2);
  ck_assert_ptr_nonnull(strstr(html, "<script type=\"application/json\" id=\"pq-data\">"));
  ck_assert_ptr_null(strstr(html, "<script src"));
  ck_assert_ptr_null(strstr(html, "http://www.w3.org/1999")); /* nothing but the SVG namespace */
  ck_assert_uint_eq(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  /* results kept for the queries shown only */
  for (size_t r = 0; r < 2; r++) {
    size_t kept = 0;
    for (size_t q = 0; q < rep->nq; q++) kept += rep->runs[r].hits[q] != NULL;
    ck_assert_uint_ge(kept, 10);
    ck_assert_uint_le(kept, 10 + 2 * 2 * 3);
    for (size_t i = 0; i < rep->nshown; i++) {
      ck_assert_ptr_nonnull(rep->runs[r].hits[rep->shown[i]]);
      ck_assert_uint_eq(rep->runs[r].nhits[rep->shown[i]], 10);
    }
  }
  /* summary: one table, a row per run */
  s = section(html, "id=\"summary\"");
  ck_assert_uint_eq(count(s, "<table"), 1);
  ck_assert_uint_eq(count(s, "<tr>"), 3);
  free(s);
  /* figures: curves, histogram and the scatter of the two runs (a point per evaluated
   * query), one curve per run, 10 bins x 2 runs */
  s = section(html, "id=\"figures\"");
  ck_assert_uint_eq(count(s, "<svg"), 3);
  ck_assert_uint_eq(count(s, "<circle cx"), 11 * 2 + rep->runs[0].evaluated);
  ck_assert_uint_eq(count(s, "<path class=\"pr\""), 2);
  ck_assert_uint_eq(count(s, "<rect class=\"bar\""), 20);
  free(s);
  /* chosen queries: one table, a row per query and run, top 10 results in each */
  s = section(html, "id=\"queries\"");
  ck_assert_uint_eq(count(s, "<table"), 1);
  ck_assert_uint_eq(count(s, "<tr>"), 1 + 10 * 2);
  ck_assert_uint_eq(count(s, "<figure class=\"q\""), 10);
  ck_assert_uint_eq(count(s, "<figure class=\"hit "), 10 * 2 * 10);
  free(s);
  /* worst and best: a section per run, 3 + 3 queries */
  ck_assert_uint_eq(count(html, "<section class=\"extremes\""), 2);
  s = section(html, "id=\"run-2\"");
  ck_assert_uint_eq(count(s, "<table"), 1);
  ck_assert_uint_eq(count(s, "<tr>"), 1 + 6);
  ck_assert_uint_eq(count(s, "<figure class=\"hit "), 6 * 10);
  ck_assert_uint_eq(count(s, ">worst<"), 3);
  ck_assert_uint_eq(count(s, ">best<"), 3);
  free(s);
  free(html);
  free(path);
  slem_report_free(rep);
  slem_truth_free(t);
}
END_TEST

/* The points of the <path class="pr" data-run="run"> of html: "x,y" strings. */
static size_t svg_points(const char *html, const char *run, char pts[][40], size_t max) {
  char key[128];
  const char *p, *d, *end;
  size_t n = 0;
  snprintf(key, sizeof key, "<path class=\"pr\" data-run=\"%s\"", run);
  p = strstr(html, key);
  ck_assert_msg(p != NULL, "no curve of %s", run);
  d = strstr(p, " d=\"");
  ck_assert_ptr_nonnull(d);
  d += 4;
  end = strchr(d, '"');
  while (d < end && n < max) {
    size_t len;
    if (*d == 'M' || *d == 'L' || *d == ' ') {
      d++;
      continue;
    }
    len = strcspn(d, " \"");
    ck_assert_uint_lt(len, 40);
    memcpy(pts[n], d, len);
    pts[n][len] = '\0';
    n++;
    d += len;
  }
  return n;
}

START_TEST(curves_are_slem_evals) {
  static const char *const runs[][2] = {{"cosine", EVAL "cosine-full.tsv"}, {"SLEM", EVAL "slem-top100.tsv"}};
  for (size_t points = 11; points <= 101; points += 90) {
    SlemTruth *t = digit_labels();
    SlemReport *rep = NULL;
    SlemReportOpts o;
    SlemError err;
    char *path = tu_path("curves.html"), *html;
    slem_report_opts_init(&o);
    o.curve_points = points;
    ck_assert_int_eq(slem_report_new(&rep, t, &o, &err), SLEM_OK);
    for (size_t r = 0; r < 2; r++)
      ck_assert_msg(slem_report_add_run(rep, runs[r][0], runs[r][1], SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_int_eq(slem_report_choose(rep, NULL, &err), SLEM_OK);
    ck_assert_msg(slem_report_read_results(rep, &err) == SLEM_OK, "%s", err.msg);
    ck_assert_int_eq(slem_report_write(rep, NULL, path, &err), SLEM_OK);
    html = read_file(path);
    for (size_t r = 0; r < 2; r++) {
      char pts[101][40], *curve = tu_path("curve.txt"), *text, *line;
      size_t n = svg_points(html, runs[r][0], pts, 101), i = 0;
      /* the curve as slem-eval --curve writes it */
      SlemEvalResult *res = NULL;
      SlemEvalOpts eo;
      slem_eval_opts_init(&eo);
      eo.curve_points = points;
      ck_assert_int_eq(slem_eval_result_read(&res, runs[r][1], SLEM_RANK_AUTO, t, &eo, &err), SLEM_OK);
      ck_assert_int_eq(slem_eval_result_write_curve(res, curve, runs[r][0], &err), SLEM_OK);
      slem_eval_result_free(res);
      ck_assert_uint_eq(n, points);
      text = read_file(curve);
      for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char want[64];
        double x, y, px, py;
        if (line[0] == '#') continue;
        ck_assert_int_eq(sscanf(line, "%lf\t%lf", &x, &y), 2);
        snprintf(want, sizeof want, "%s", line);
        *strchr(want, '\t') = ',';
        ck_assert_uint_lt(i, n);
        ck_assert_str_eq(pts[i], want); /* the same characters, so the same printed numbers */
        ck_assert_int_eq(sscanf(pts[i], "%lf,%lf", &px, &py), 2);
        ck_assert_double_eq(px, x);
        ck_assert_double_eq(py, y);
        i++;
      }
      ck_assert_uint_eq(i, n);
      free(text);
      free(curve);
    }
    free(html);
    free(path);
    slem_report_free(rep);
    slem_truth_free(t);
  }
}
END_TEST

/* A hand-made run: query "<script>q" with relevant a, junk j, wrong x"y, and a query with
 * a quote in its name. */
static SlemReport *hand_report(SlemTruth **truth, size_t top) {
  char *rank = tu_path("hand.tsv"), *qrels = tu_path("hand.qrels"), *junk = tu_path("hand.junk");
  const char *r = "<script>q\t1\ta\t0.9\n<script>q\t2\tj\t0.8\n<script>q\t3\tx\"y\t0.7\n"
                  "<script>q\t4\tb\t0.6\nq'2\t1\tb\t0.5\nq'2\t2\ta\t0.4\n";
  const char *q = "<script>q 0 a 1\n<script>q 0 b 1\nq'2 0 a 1\n";
  SlemReport *rep = NULL;
  SlemReportOpts o;
  SlemError err;
  tu_write_bytes(rank, r, strlen(r));
  tu_write_bytes(qrels, q, strlen(q));
  tu_write_bytes(junk, "<script>q j\n", 12);
  ck_assert_int_eq(slem_truth_read_qrels(truth, qrels, &err), SLEM_OK);
  ck_assert_int_eq(slem_truth_read_junk(*truth, junk, &err), SLEM_OK);
  slem_report_opts_init(&o);
  o.top = top;
  o.title = "A & B <i>";
  ck_assert_int_eq(slem_report_new(&rep, *truth, &o, &err), SLEM_OK);
  ck_assert_msg(slem_report_add_run(rep, "run \"1\" <b>", rank, SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_report_choose(rep, NULL, &err), SLEM_OK);
    ck_assert_msg(slem_report_read_results(rep, &err) == SLEM_OK, "%s", err.msg);
  free(rank);
  free(qrels);
  free(junk);
  return rep;
}

START_TEST(ids_are_escaped_and_frames_follow_relevance) {
  SlemTruth *t = NULL;
  SlemReport *rep = hand_report(&t, 10);
  SlemError err;
  char *path = tu_path("hand.html"), *html, *s, why[128];
  ck_assert_uint_eq(rep->nq, 2);
  ck_assert_uint_eq(rep->nshown, 2);
  ck_assert_int_eq(slem_report_write(rep, NULL, path, &err), SLEM_OK);
  html = read_file(path);
  ck_assert_msg(balanced(html, why, sizeof why), "unbalanced: %s", why);
  ck_assert_ptr_null(strstr(html, "<script>q"));
  ck_assert_uint_eq(count(html, "<script"), 2); /* the page's own: table data and code */
  ck_assert_ptr_nonnull(strstr(html, "[\"\\u003cscript\\u003eq\",2,"));
  ck_assert_ptr_null(strstr(html, "\"1\" <b>"));
  ck_assert_ptr_null(strstr(html, "<i>"));
  ck_assert_ptr_nonnull(strstr(html, "<title>A &amp; B &lt;i&gt;</title>"));
  ck_assert_ptr_nonnull(strstr(html, "data-run=\"run &quot;1&quot; &lt;b&gt;\""));
  ck_assert_ptr_nonnull(strstr(html, "<figcaption>&lt;script&gt;q</figcaption>"));
  ck_assert_ptr_nonnull(strstr(html, "title=\"query q&#39;2\""));
  s = section(html, "id=\"queries\"");
  /* AP of "<script>q": a at 1, b at 3 after junk: (1 + 2/3) / 2 */
  ck_assert_ptr_nonnull(strstr(s, "AP 0.833"));
  ck_assert_ptr_nonnull(strstr(s, "<figure class=\"hit rel\" title=\"rank 1: a (relevant), score 0.9\">"));
  ck_assert_ptr_nonnull(strstr(s, "<figure class=\"hit junk\" title=\"rank 2: j (junk), score 0.8\">"));
  ck_assert_ptr_nonnull(strstr(s, "<figure class=\"hit wrong\" title=\"rank 3: x&quot;y (wrong), score 0.7\">"));
  ck_assert_ptr_nonnull(strstr(s, "<span class=\"pic tile\">x&quot;y</span>"));
  ck_assert_uint_eq(count(s, "<figure class=\"hit "), 6);
  free(s);
  free(html);
  free(path);
  slem_report_free(rep);
  slem_truth_free(t);
}
END_TEST

START_TEST(top_k_limits_the_results) {
  SlemTruth *t = NULL;
  SlemReport *rep = hand_report(&t, 2);
  SlemError err;
  char *path = tu_path("top2.html"), *html, *s;
  ck_assert_int_eq(slem_report_write(rep, NULL, path, &err), SLEM_OK);
  html = read_file(path);
  s = section(html, "id=\"queries\"");
  ck_assert_uint_eq(count(s, "<figure class=\"hit "), 4);
  ck_assert_ptr_null(strstr(s, "rank 3"));
  free(s);
  free(html);
  free(path);
  slem_report_free(rep);
  slem_truth_free(t);
}
END_TEST

START_TEST(results_follow_the_rank_field) {
  /* lines out of rank order and a query's lines split in two groups: the results come
   * by rank, cut at top */
  char *rank = tu_path("order.tsv"), *qrels = tu_path("order.qrels");
  const char *r = "q\t3\tc\t0.7\nq\t1\ta\t0.9\nz\t1\ta\t0.5\nq\t2\tb\t0.8\nq\t4\td\t0.6\n";
  SlemTruth *t = NULL;
  SlemReport *rep = NULL;
  SlemReportOpts o;
  SlemError err;
  tu_write_bytes(rank, r, strlen(r));
  tu_write_bytes(qrels, "q 0 b 1\nz 0 a 1\n", 16);
  ck_assert_int_eq(slem_truth_read_qrels(&t, qrels, &err), SLEM_OK);
  slem_report_opts_init(&o);
  o.top = 3;
  ck_assert_int_eq(slem_report_new(&rep, t, &o, &err), SLEM_OK);
  ck_assert_msg(slem_report_add_run(rep, "r", rank, SLEM_RANK_AUTO, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_int_eq(slem_report_choose(rep, NULL, &err), SLEM_OK);
  ck_assert_int_eq(slem_report_read_results(rep, &err), SLEM_OK);
  {
    long q = slem_truth_find_query(t, "q");
    const SlemReportHit *h = rep->runs[0].hits[q];
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(rep->runs[0].nhits[q], 3);
    ck_assert_str_eq(h[0].id, "a");
    ck_assert_str_eq(h[1].id, "b");
    ck_assert_str_eq(h[2].id, "c");
    ck_assert_int_eq(h[0].rel, SLEM_HIT_WRONG);
    ck_assert_int_eq(h[1].rel, SLEM_HIT_RELEVANT);
    ck_assert_double_eq(h[2].score, 0.7);
    ck_assert_int_eq(h[2].rank, 3);
  }
  slem_report_free(rep);
  slem_truth_free(t);
  free(rank);
  free(qrels);
}
END_TEST

START_TEST(per_query_ap_follows_the_option) {
  /* --ap oxford: the per-query AP is slem-eval's oxford AP; the summary keeps both */
  SlemTruth *t = digit_labels();
  SlemReport *rep = NULL;
  SlemReportOpts o;
  SlemEvalOpts eo;
  SlemEvalResult *res[2] = {NULL, NULL};
  SlemError err;
  slem_report_opts_init(&o);
  o.ap = SLEM_AP_OXFORD;
  ck_assert_int_eq(slem_report_new(&rep, t, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_report_add_run(rep, "s", EVAL "slem-top100.tsv", SLEM_RANK_AUTO, &err), SLEM_OK);
  slem_eval_opts_init(&eo);
  for (int k = 0; k < 2; k++) {
    eo.ap = (SlemApKind)k;
    ck_assert_int_eq(slem_eval_result_read(&res[k], EVAL "slem-top100.tsv", SLEM_RANK_AUTO, t, &eo, &err), SLEM_OK);
    ck_assert_double_eq(rep->runs[0].map[k], res[k]->map);
  }
  ck_assert(res[0]->map != res[1]->map);
  for (size_t q = 0; q < rep->nq; q++) ck_assert_double_eq(rep->runs[0].ap[q], res[1]->q[q].ap);
  ck_assert_double_eq(rep->runs[0].p10, res[0]->p10);
  ck_assert_double_eq(rep->runs[0].rk, res[0]->rk);
  slem_eval_result_free(res[0]);
  slem_eval_result_free(res[1]);
  slem_report_free(rep);
  slem_truth_free(t);
}
END_TEST

START_TEST(choosing_queries) {
  SlemTruth *t = digit_labels();
  SlemReport *rep = NULL;
  SlemReportOpts o;
  SlemError err;
  char *list = tu_path("queries.txt");
  size_t worst[3], best[3], nw, nb;
  slem_report_opts_init(&o);
  o.nqueries = 5;
  ck_assert_int_eq(slem_report_new(&rep, t, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_report_add_run(rep, "cosine", EVAL "cosine-full.tsv", SLEM_RANK_AUTO, &err), SLEM_OK);
  /* one run: spread from the worst to the best */
  ck_assert_int_eq(slem_report_choose(rep, NULL, &err), SLEM_OK);
  ck_assert_uint_eq(rep->nshown, 5);
  slem_report_extremes(rep, 0, worst, &nw, best, &nb);
  ck_assert_uint_eq(nw, 3);
  ck_assert_uint_eq(nb, 3);
  ck_assert_uint_eq(rep->shown[0], worst[0]);
  ck_assert_uint_eq(rep->shown[4], best[0]);
  for (size_t i = 1; i < 5; i++) ck_assert(rep->runs[0].ap[rep->shown[i - 1]] <= rep->runs[0].ap[rep->shown[i]]);
  for (size_t q = 0; q < rep->nq; q++) {
    ck_assert(rep->runs[0].ap[q] >= rep->runs[0].ap[worst[0]]);
    ck_assert(rep->runs[0].ap[q] <= rep->runs[0].ap[best[0]]);
  }
  ck_assert(rep->runs[0].ap[worst[0]] <= rep->runs[0].ap[worst[1]]);
  ck_assert(rep->runs[0].ap[best[0]] >= rep->runs[0].ap[best[1]]);
  /* two runs: the largest differences first, and no other query differs more */
  ck_assert_int_eq(slem_report_add_run(rep, "SLEM", EVAL "slem-top100.tsv", SLEM_RANK_AUTO, &err), SLEM_OK);
  ck_assert_int_eq(slem_report_choose(rep, NULL, &err), SLEM_OK);
  ck_assert_uint_eq(rep->nshown, 5);
  {
    double last = fabs(rep->runs[0].ap[rep->shown[4]] - rep->runs[1].ap[rep->shown[4]]);
    for (size_t i = 1; i < 5; i++)
      ck_assert(fabs(rep->runs[0].ap[rep->shown[i - 1]] - rep->runs[1].ap[rep->shown[i - 1]]) >=
                fabs(rep->runs[0].ap[rep->shown[i]] - rep->runs[1].ap[rep->shown[i]]));
    for (size_t q = 0; q < rep->nq; q++) {
      int shown = 0;
      for (size_t i = 0; i < 5; i++) shown |= rep->shown[i] == q;
      if (!shown) ck_assert(fabs(rep->runs[0].ap[q] - rep->runs[1].ap[q]) <= last);
    }
  }
  /* a list, in its order; an unknown query is an error naming the line */
  tu_write_bytes(list, "7\n3\n", 4);
  ck_assert_int_eq(slem_report_choose(rep, list, &err), SLEM_OK);
  ck_assert_uint_eq(rep->nshown, 2);
  ck_assert_str_eq(rep->qids[rep->shown[0]], "7");
  ck_assert_str_eq(rep->qids[rep->shown[1]], "3");
  tu_write_bytes(list, "7\nnope\n", 7);
  ck_assert_int_eq(slem_report_choose(rep, list, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "line 2"));
  ck_assert_ptr_nonnull(strstr(err.msg, "nope"));
  free(list);
  slem_report_free(rep);
  slem_truth_free(t);
}
END_TEST

/* base64 back to bytes (the test's own decoder). */
static unsigned char *unbase64(const char *s, size_t *n) {
  size_t len = strlen(s), k = 0;
  unsigned char *out = malloc(len);
  unsigned long v = 0;
  int bits = 0;
  for (size_t i = 0; i < len && s[i] != '='; i++) {
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(tab, s[i]);
    ck_assert_ptr_nonnull(p);
    v = v << 6 | (unsigned long)(p - tab);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = (unsigned char)(v >> bits & 255);
    }
  }
  *n = k;
  return out;
}

START_TEST(thumbnails_from_vectors) {
  /* 3 RGB images of 2x3 pixels, named by an ids file; the PNG in the data: URI decodes to
   * the rendering of the vector, scaled by 4 (6 px asked, sides of 2 and 3 -> factor 2;
   * 12 asked -> 4) */
  char *vec = tu_path("rgb.fvecs"), *ids = tu_path("rgb.ids");
  double x[3 * 18];
  SlemImageShape shape;
  SlemThumbOpts o;
  SlemThumbs *th = NULL;
  SlemError err;
  const char *want[] = {"c", "a", "zz"}, *first;
  for (size_t i = 0; i < 54; i++) x[i] = (double)((i * 37) % 11);
  tu_write_fvecs(vec, x, 3, 18);
  tu_write_bytes(ids, "a\nb\nc\n", 6);
  ck_assert_int_eq(slem_image_shape_parse(&shape, "2x3x3", &err), SLEM_OK);
  slem_thumbs_opts_init(&o);
  o.shape = &shape;
  o.vectors[SLEM_THUMB_DB] = vec;
  o.ids[SLEM_THUMB_DB] = ids;
  o.min_side = 12;
  ck_assert_int_eq(slem_thumbs_new(&th, &o, &err), SLEM_OK);
  ck_assert_msg(slem_thumbs_load(th, SLEM_THUMB_DB, want, 3, &err) == SLEM_OK, "%s", err.msg);
  ck_assert_uint_eq(slem_thumbs_side(th), 12);
  ck_assert_uint_eq(slem_thumbs_missing(th, &first), 1);
  ck_assert_str_eq(first, "zz");
  ck_assert_ptr_null(slem_thumbs_src(th, SLEM_THUMB_DB, "zz"));
  ck_assert_ptr_null(slem_thumbs_src(th, SLEM_THUMB_DB, "b")); /* never asked for */
  for (size_t k = 0; k < 2; k++) {
    const char *src = slem_thumbs_src(th, SLEM_THUMB_DB, want[k]);
    size_t row = k == 0 ? 2 : 0, n, w, h;
    unsigned char *png, *pix, expect[12 * 8 * 3];
    float v[18];
    ck_assert_ptr_nonnull(src);
    ck_assert_int_eq(strncmp(src, "data:image/png;base64,", 22), 0);
    png = unbase64(src + 22, &n);
    pix = png_decode(png, n, 3, &w, &h);
    ck_assert_uint_eq(w, 12);
    ck_assert_uint_eq(h, 8);
    for (size_t j = 0; j < 18; j++) v[j] = (float)x[row * 18 + j];
    slem_image_render(expect, v, &shape, &o.range, 4);
    ck_assert_mem_eq(pix, expect, sizeof expect);
    free(pix);
    free(png);
  }
  slem_thumbs_free(th);
  /* a dimension that is not the shape's size */
  ck_assert_int_eq(slem_image_shape_parse(&shape, "4x4", &err), SLEM_OK);
  ck_assert_int_eq(slem_thumbs_new(&th, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_thumbs_load(th, SLEM_THUMB_DB, want, 1, &err), SLEM_EFORMAT);
  ck_assert_ptr_nonnull(strstr(err.msg, "dimension 18"));
  slem_thumbs_free(th);
  free(vec);
  free(ids);
}
END_TEST

START_TEST(thumbnails_from_files) {
  char *dir = tu_path("imgs"), *page = tu_path("pages"), *f = malloc(strlen(dir) + 32);
  SlemThumbOpts o;
  SlemThumbs *th = NULL;
  SlemError err;
  const char *ids[] = {"cat 1", "dog", "x.gif"};
  mkdir(dir, 0700);
  mkdir(page, 0700);
  sprintf(f, "%s/cat 1.JPG", dir);
  tu_write_bytes(f, "jpeg!", 5);
  sprintf(f, "%s/x.gif", dir);
  tu_write_bytes(f, "GIF89a", 6);
  slem_thumbs_opts_init(&o);
  o.images_dir = dir;
  o.base_dir = page;
  ck_assert_int_eq(slem_thumbs_new(&th, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_thumbs_load(th, SLEM_THUMB_QUERY, ids, 3, &err), SLEM_OK);
  ck_assert_str_eq(slem_thumbs_src(th, SLEM_THUMB_QUERY, "cat 1"), "../imgs/cat%201.JPG");
  ck_assert_str_eq(slem_thumbs_src(th, SLEM_THUMB_QUERY, "x.gif"), "../imgs/x.gif");
  ck_assert_ptr_null(slem_thumbs_src(th, SLEM_THUMB_QUERY, "dog"));
  ck_assert_ptr_null(slem_thumbs_src(th, SLEM_THUMB_DB, "cat 1"));
  slem_thumbs_free(th);
  o.embed = 1;
  ck_assert_int_eq(slem_thumbs_new(&th, &o, &err), SLEM_OK);
  ck_assert_int_eq(slem_thumbs_load(th, SLEM_THUMB_DB, ids, 3, &err), SLEM_OK);
  ck_assert_str_eq(slem_thumbs_src(th, SLEM_THUMB_DB, "cat 1"), "data:image/jpeg;base64,anBlZyE=");
  ck_assert_str_eq(slem_thumbs_src(th, SLEM_THUMB_DB, "x.gif"), "data:image/gif;base64,R0lGODlh");
  slem_thumbs_free(th);
  free(dir);
  free(page);
  free(f);
}
END_TEST

/* slem-report's arguments, the page's note and the pictures' rules, in the library (they
 * were cmd/slem-report.c's) */
START_TEST(run_arguments_note_and_picture_rules) {
  SlemReportInput in;
  SlemTruthSpec spec = {0};
  SlemReportProtocol proto = {0};
  SlemThumbOpts o;
  SlemImageShape shape;
  SlemError err;
  char a1[] = "base=runs/x.tsv", a2[] = "dir/run.v2.tsv", a3[] = "-", a4[] = "=x.tsv", buf[64];
  char note[256], *file = tu_path("a=b.tsv"), a5[4096];
  const char *junk[2] = {"j1", "j2"};

  slem_report_input_parse(&in, a1, buf, sizeof buf);
  ck_assert_str_eq(in.name, "base");
  ck_assert_str_eq(in.path, "runs/x.tsv");
  slem_report_input_parse(&in, a2, buf, sizeof buf);
  ck_assert_str_eq(in.name, "run.v2");
  ck_assert_str_eq(in.path, "dir/run.v2.tsv");
  slem_report_input_parse(&in, a3, buf, sizeof buf);
  ck_assert_str_eq(in.name, "stdin");
  slem_report_input_parse(&in, a4, buf, sizeof buf); /* '=' first: a path */
  ck_assert_str_eq(in.path, "=x.tsv");
  ck_assert_str_eq(in.name, "=x");
  tu_write_bytes(file, "", 0); /* a file of that very name wins */
  snprintf(a5, sizeof a5, "%s", file);
  slem_report_input_parse(&in, a5, buf, sizeof buf);
  ck_assert_str_eq(in.path, file);
  ck_assert_str_eq(in.name, "a=b");

  spec.qlabels = "d/q.labels";
  spec.dblabels = "d/db.labels";
  ck_assert_str_eq(slem_report_truth_note(note, sizeof note, &spec, NULL),
                   "labels q.labels and db.labels");
  spec.qrels = "x/t.qrels";
  spec.junk = junk;
  spec.njunk = 2;
  ck_assert_str_eq(slem_report_truth_note(note, sizeof note, &spec, NULL),
                   "qrels t.qrels, junk from 2 files");
  proto.protocol = SLEM_PROTO_HARD;
  proto.easy = "g/easy.txt";
  proto.hard = "g/hard.txt";
  spec.qrels = NULL;
  spec.njunk = 1;
  ck_assert_str_eq(slem_report_truth_note(note, sizeof note, &spec, &proto),
                   "revisitop hard, easy easy.txt, hard hard.txt, junk from 1 file");

  slem_thumbs_opts_init(&o);
  ck_assert_int_eq(slem_thumbs_check(&o, &err), SLEM_OK);
  ck_assert_int_eq(slem_image_shape_parse(&shape, "8x8", &err), SLEM_OK);
  o.shape = &shape;
  ck_assert_int_eq(slem_thumbs_check(&o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--image-shape needs --query-vectors or --db-vectors");
  o.vectors[SLEM_THUMB_DB] = "db.fvecs";
  o.embed = 1;
  ck_assert_int_eq(slem_thumbs_check(&o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--embed-images is for --images; rendered vectors are always embedded");
  o.embed = 0;
  ck_assert_int_eq(slem_thumbs_check(&o, &err), SLEM_OK);
  o.shape = NULL;
  ck_assert_int_eq(slem_thumbs_check(&o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--query-vectors and --db-vectors need --image-shape");
  o.vectors[SLEM_THUMB_DB] = NULL;
  o.range.invert = 1;
  ck_assert_int_eq(slem_thumbs_check(&o, &err), SLEM_EINVAL);
  ck_assert_str_eq(err.msg, "--invert goes with --image-shape");
  free(file);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("report");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, png_round_trip);
  tcase_add_test(tc, png_refuses_bad_geometry);
  tcase_add_test(tc, image_shapes);
  tcase_add_test(tc, image_render_ranges_and_scale);
  tcase_add_test(tc, html_escaping);
  tcase_add_test(tc, base64_rfc4648);
  tcase_add_test(tc, relative_paths);
  tcase_add_test(tc, histogram_bins);
  tcase_add_test(tc, balance_checker_catches_errors);
  tcase_add_test(tc, page_structure);
  tcase_add_test(tc, curves_are_slem_evals);
  tcase_add_test(tc, ids_are_escaped_and_frames_follow_relevance);
  tcase_add_test(tc, top_k_limits_the_results);
  tcase_add_test(tc, results_follow_the_rank_field);
  tcase_add_test(tc, per_query_ap_follows_the_option);
  tcase_add_test(tc, choosing_queries);
  tcase_add_test(tc, paired_test_by_hand);
  tcase_add_test(tc, thumbnails_from_vectors);
  tcase_add_test(tc, thumbnails_from_files);
  tcase_add_test(tc, run_arguments_note_and_picture_rules);
  suite_add_tcase(s, tc);
  return s;
}

TU_RUN(suite)
