/* Figures as inline SVG, drawn by slem itself: precision-recall curves, a histogram and a scatter.
 *
 * The output is an <svg> element for an HTML page (no XML prolog), sized in CSS pixels
 * with a viewBox so that it scales with the page. Texts are escaped (html.h). Write
 * errors are left on the stream for slem_out_commit().
 */
#ifndef SLEM_PLOT_H
#define SLEM_PLOT_H

#include <stddef.h>
#include <stdio.h>

/* One line or one set of bars: name (shown in the legend), colour ("#rrggbb"). */
typedef struct SlemSeries {
  const char *name;
  const char *colour;
  const double *y;  /* y(n) */
  size_t n;
} SlemSeries;

/* The run colours the report uses, in order, cycling after the last. Static storage. */
const char *slem_plot_colour(size_t i);

/* Precision against recall, one line per series: series[i].y(n) is the interpolated
 * precision at recall j / (n - 1), n >= 2, as slem-eval --curve prints it. Each line is
 * a <path class="pr" data-run="NAME"> whose "d" holds the points in data units, recall
 * as "%.6g" and precision as "%.6f" (the very numbers of slem-eval --curve), drawn through
 * a transform onto the axes; legend labels are taken from legend[i] when not NULL. */
void slem_plot_pr(FILE *fp, const SlemSeries *series, size_t nseries, const char *const *legend);

/* The span [*lo, *hi] of an axis for values in [0, 1] (e.g. per-query AP) from their
 * minimum vmin and maximum vmax: [0, 1], narrowed to [0, h] when vmax <= h, or else to
 * [1 - h, 1] when vmin >= 1 - h, h the smallest of 0.5, 0.2, 0.1, 0.05, 0.02, 0.01,
 * 0.005, 0.002, 0.001 that holds them, so that APs all below 0.1 (or all above 0.9) fill
 * the figure instead of one bin or one corner. Non-finite bounds give [0, 1]. */
void slem_plot_span(double *lo, double *hi, double vmin, double vmax);

/* A histogram of values in [lo, hi] (slem_plot_span) in nbins equal bins (the last one
 * closed), the series side by side in each bin: series[i].y(n) are one run's values (e.g.
 * per-query AP). Each bar is a <rect class="bar"> with a data-count attribute and a
 * <title>; the ticks are the bins' edges. */
void slem_plot_histogram(FILE *fp, const SlemSeries *series, size_t nseries, size_t nbins,
                         double lo, double hi, const char *xlabel);

/* A scatter of n points (x[i], y[i]) in [lo, hi]^2 (slem_plot_span of both) with the
 * diagonal y = x: per-query AP of one run (x) against another (y), points above the line
 * favour y. Each point is a <circle> of the group <g class="pts"> in pixels, %.1f. */
void slem_plot_scatter(FILE *fp, const double *x, const double *y, size_t n, double lo, double hi,
                       const char *xlabel, const char *ylabel, const char *colour);

/* The bin of v among nbins equal bins over [lo, hi]: values below lo go to the first, hi
 * and above to the last. */
size_t slem_plot_bin(double v, double lo, double hi, size_t nbins);

#endif
