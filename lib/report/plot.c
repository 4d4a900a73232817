#include "plot.h"

#include <math.h>
#include <stdlib.h>

#include "html.h"

/* Colours that stay apart from the relevance frames' green, grey and red. */
static const char *const palette[] = {"#2563eb", "#ea7317", "#7c3aed", "#0891b2", "#c026d3",
                                      "#4d7c0f", "#b45309", "#475569"};

const char *slem_plot_colour(size_t i) { return palette[i % (sizeof palette / sizeof palette[0])]; }

/* The geometry both figures share: the plot area inside margins for axis labels. */
enum { W = 440, H = 320, ML = 52, MR = 14, MT = 14, MB = 44 };
#define PW (W - ML - MR)
#define PH (H - MT - MB)

static void open_svg(FILE *fp, const char *cls, const char *label) {
  fprintf(fp,
          "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" "
          "height=\"%d\" role=\"img\" aria-label=\"",
          cls, W, H, W, H);
  slem_html_text(fp, label);
  fputs("\">\n", fp);
}

/* Grid lines and labels of the y axis from 0 to ymax in steps of step. */
static void y_axis(FILE *fp, double ymax, double step, const char *fmt, const char *label) {
  for (double v = 0; v <= ymax + 1e-9; v += step) {
    double y = MT + PH - v / ymax * PH;
    fprintf(fp, "<line class=\"grid\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>", ML, y, ML + PW, y);
    fprintf(fp, "<text class=\"tick\" x=\"%d\" y=\"%.2f\" text-anchor=\"end\">", ML - 6, y + 4);
    fprintf(fp, fmt, v);
    fputs("</text>\n", fp);
  }
  fprintf(fp,
          "<text class=\"axis\" transform=\"translate(14,%d) rotate(-90)\" "
          "text-anchor=\"middle\">",
          MT + PH / 2);
  slem_html_text(fp, label);
  fputs("</text>\n", fp);
}

static void frame(FILE *fp) {
  fprintf(fp, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", ML, MT, PW, PH);
}

void slem_plot_pr(FILE *fp, const SlemSeries *series, size_t nseries, const char *const *legend) {
  open_svg(fp, "plot pr", "precision-recall curves");
  y_axis(fp, 1, 0.2, "%.1f", "precision");
  for (int i = 0; i <= 5; i++) {
    double x = ML + i * 0.2 * PW;
    if (i > 0 && i < 5)
      fprintf(fp, "<line class=\"grid\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>", x, MT, x, MT + PH);
    fprintf(fp, "<text class=\"tick\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%.1f</text>\n", x,
            MT + PH + 16, i * 0.2);
  }
  fprintf(fp, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">recall</text>\n",
          ML + PW / 2, H - 6);
  frame(fp);
  /* data units: x = recall in [0, 1], y = precision in [0, 1] upwards */
  fprintf(fp, "<g transform=\"translate(%d %d) scale(%d %d)\">\n", ML, MT + PH, PW, -PH);
  for (size_t s = 0; s < nseries; s++) {
    const SlemSeries *c = series + s;
    fprintf(fp, "<path class=\"pr\" data-run=\"");
    slem_html_text(fp, c->name);
    fprintf(fp, "\" stroke=\"%s\" vector-effect=\"non-scaling-stroke\" d=\"", c->colour);
    for (size_t j = 0; j < c->n; j++)
      fprintf(fp, "%s%.6g,%.6f", j ? " L" : "M", (double)j / (double)(c->n - 1), c->y[j]);
    fputs("\"><title>", fp);
    slem_html_text(fp, legend && legend[s] ? legend[s] : c->name);
    fputs("</title></path>\n", fp);
  }
  fputs("</g>\n", fp);
  /* point markers in pixels (a circle under a non-uniform scale would be an ellipse) */
  for (size_t s = 0; s < nseries; s++) {
    const SlemSeries *c = series + s;
    if (c->n > 21) continue;
    fprintf(fp, "<g class=\"marks\" fill=\"%s\">", c->colour);
    for (size_t j = 0; j < c->n; j++)
      fprintf(fp, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.6\"/>",
              ML + (double)j / (double)(c->n - 1) * PW, MT + PH - c->y[j] * PH);
    fputs("</g>\n", fp);
  }
  /* legend, bottom left where precision-recall curves rarely go */
  for (size_t s = 0; s < nseries; s++) {
    double y = MT + PH - 14 - (double)(nseries - 1 - s) * 18;
    fprintf(fp, "<line class=\"key\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>",
            ML + 12, y - 4, ML + 34, y - 4, series[s].colour);
    fprintf(fp, "<text class=\"legend\" x=\"%d\" y=\"%.1f\">", ML + 40, y);
    slem_html_text(fp, legend && legend[s] ? legend[s] : series[s].name);
    fputs("</text>\n", fp);
  }
  fputs("</svg>\n", fp);
}

size_t slem_plot_bin(double v, double lo, double hi, size_t nbins) {
  double b;
  if (!(v > lo)) return 0;
  b = floor((v - lo) / (hi - lo) * (double)nbins);
  return b >= (double)nbins ? nbins - 1 : (size_t)b;
}

void slem_plot_span(double *lo, double *hi, double vmin, double vmax) {
  static const double h[] = {0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001};
  double up = 1, down = 1;
  *lo = 0;
  *hi = 1;
  if (!isfinite(vmin) || !isfinite(vmax)) return;
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
    if (vmax <= h[i]) up = h[i];
    if (vmin >= 1 - h[i]) down = h[i];
  }
  if (up < 1 && up <= down) *hi = up;
  else if (down < 1) *lo = 1 - down;
}

/* The decimals that write every multiple of step exactly (0.05 needs 2, 0.025 3), at
 * least 1; a step no few decimals write (1/30) gets two significant digits (0.033). */
static int decimals(double step) {
  int d;
  for (d = 1; d <= 6; d++) {
    double m = step * pow(10, d);
    if (fabs(m - floor(m + 0.5)) < 1e-6 * m) return d;
  }
  d = (int)ceil(-log10(step)) + 1;
  return d < 1 ? 1 : d;
}

/* Tick labels and grid lines of the x axis: k + 1 ticks over [lo, hi]. */
static void x_axis(FILE *fp, double lo, double hi, size_t k, int every, int grid) {
  int dec = decimals((hi - lo) / (double)k);
  for (size_t i = 0; i <= k; i++) {
    double x = ML + (double)i / (double)k * PW;
    if (grid && i > 0 && i < k)
      fprintf(fp, "<line class=\"grid\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>", x, MT, x, MT + PH);
    if (i % (size_t)every == 0)
      fprintf(fp, "<text class=\"tick\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%.*f</text>\n", x,
              MT + PH + 16, dec, lo + (hi - lo) * (double)i / (double)k);
  }
}

/* A round step for an axis up to max: 1, 2 or 5 times a power of ten, about 5 ticks. */
static double nice_step(double max) {
  double raw = max / 5, p = pow(10, floor(log10(raw))), f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

void slem_plot_histogram(FILE *fp, const SlemSeries *series, size_t nseries, size_t nbins,
                         double lo, double hi, const char *xlabel) {
  size_t *count = calloc(nbins * (nseries ? nseries : 1), sizeof *count), top = 1;
  double ymax, step, bw = (double)PW / (double)nbins, gap = bw * 0.12;
  int dec = decimals((hi - lo) / (double)nbins);
  open_svg(fp, "plot hist", "histogram");
  if (!count) { /* out of memory: an empty figure rather than a failed page */
    fputs("</svg>\n", fp);
    return;
  }
  for (size_t s = 0; s < nseries; s++)
    for (size_t i = 0; i < series[s].n; i++) {
      size_t *c = count + s * nbins + slem_plot_bin(series[s].y[i], lo, hi, nbins);
      if (++*c > top) top = *c;
    }
  /* headroom above the highest bar for the legend, one line per series */
  step = nice_step((double)top * (1.1 + 0.08 * (double)nseries));
  if (step < 1) step = 1;
  ymax = ceil((double)top * (1.1 + 0.08 * (double)nseries) / step) * step;
  y_axis(fp, ymax, step, "%.0f", "queries");
  x_axis(fp, lo, hi, nbins, nbins <= 10 ? 1 : 2, 0);
  fprintf(fp, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + PW / 2, H - 6);
  slem_html_text(fp, xlabel);
  fputs("</text>\n", fp);
  frame(fp);
  for (size_t b = 0; b < nbins; b++) {
    double x0 = ML + (double)b * bw + gap / 2, w = (bw - gap) / (double)(nseries ? nseries : 1);
    for (size_t s = 0; s < nseries; s++) {
      size_t c = count[s * nbins + b];
      double h = (double)c / ymax * PH;
      fprintf(fp,
              "<rect class=\"bar\" data-count=\"%zu\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
              "height=\"%.2f\" fill=\"%s\"><title>",
              c, x0 + (double)s * w, MT + PH - h, w, h, series[s].colour);
      slem_html_text(fp, series[s].name);
      fprintf(fp, ": %zu queries with %s in [%.*f, %.*f%s</title></rect>\n", c, xlabel, dec,
              lo + (hi - lo) * (double)b / (double)nbins, dec,
              lo + (hi - lo) * (double)(b + 1) / (double)nbins, b + 1 == nbins ? "]" : ")");
    }
  }
  /* legend, top left */
  for (size_t s = 0; s < nseries; s++) {
    double y = MT + 18 + (double)s * 18;
    fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", ML + 12, y - 10,
            series[s].colour);
    fprintf(fp, "<text class=\"legend\" x=\"%d\" y=\"%.1f\">", ML + 30, y);
    slem_html_text(fp, series[s].name);
    fputs("</text>\n", fp);
  }
  free(count);
  fputs("</svg>\n", fp);
}

void slem_plot_scatter(FILE *fp, const double *x, const double *y, size_t n, double lo, double hi,
                       const char *xlabel, const char *ylabel, const char *colour) {
  double span = hi - lo;
  int dec = decimals(span / 5);
  open_svg(fp, "plot scatter", "per-query scatter");
  /* the y axis as the x axis: 6 ticks over [lo, hi] */
  for (int i = 0; i <= 5; i++) {
    double py = MT + PH - i * 0.2 * PH;
    fprintf(fp, "<line class=\"grid\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>", ML, py, ML + PW, py);
    fprintf(fp, "<text class=\"tick\" x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%.*f</text>\n", ML - 6,
            py + 4, dec, lo + span * i / 5);
  }
  fprintf(fp,
          "<text class=\"axis\" transform=\"translate(14,%d) rotate(-90)\" "
          "text-anchor=\"middle\">",
          MT + PH / 2);
  slem_html_text(fp, ylabel);
  fputs("</text>\n", fp);
  x_axis(fp, lo, hi, 5, 1, 1);
  fprintf(fp, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + PW / 2, H - 6);
  slem_html_text(fp, xlabel);
  fputs("</text>\n", fp);
  frame(fp);
  fprintf(fp, "<line class=\"diag\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", ML, MT + PH, ML + PW, MT);
  fprintf(fp, "<g class=\"pts\" fill=\"%s\">", colour);
  for (size_t i = 0; i < n; i++)
    fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>", ML + (x[i] - lo) / span * PW,
            MT + PH - (y[i] - lo) / span * PH);
  fputs("</g>\n</svg>\n", fp);
}
