/* Text vectors: one vector per line, values separated by white space, commas or
 * semicolons (one comma or semicolon at most between two values: "1,,2" is an empty value,
 * an error); blank lines and lines starting with '#' are skipped. Values are decimal
 * numbers, as numpy.loadtxt reads them: strtod's hexadecimal ("0x1p3") is refused. Lines
 * end with LF or CR LF (slem_in_getline() drops the CR); a CR elsewhere is refused by
 * name. Written with %.9g. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "vecfmt.h"

/* Printable bytes and white space only: text, with more confidence than any binary
 * guess but less than a magic number. */

/* The reader's own state (r->priv). */
typedef struct TextState {
  double *pending;      /* the first line, parsed at open */
  double *row;          /* one row, for reading into float */
  size_t pending_bad;   /* 1 + index of a non-finite value in the pending row */
  uint64_t pending_line;
  int has_pending;
  uint64_t line_no;     /* lines read */
} TextState;
#define TS(r) ((TextState *)(r)->priv)

static void close_text(SlemVecReader *r) {
  if (r->priv) {
    free(TS(r)->pending);
    free(TS(r)->row);
  }
  free(r->priv);
  r->priv = NULL;
}

static int sniff_text(const unsigned char *p, size_t n) {
  if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3, n -= 3; /* a UTF-8 byte-order mark */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (c == 0) return 0;
    if (!(isprint(c) || isspace(c))) return 0;
  }
  return n > 0 ? 50 : 0;
}

/* The first bytes of the value at p (up to a separator), for a message: a byte that is not
 * printable as \xNN, so that no control byte reaches a terminal. */
static const char *value_text(char *buf, size_t cap, const char *p) {
  size_t k = 0;
  for (size_t i = 0; p[i] && !strchr(" \t,;", p[i]) && i < 20 && k + 5 < cap; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
    else buf[k++] = (char)c;
  }
  buf[k] = '\0';
  return buf;
}

/* Parses the values of one text line into out (when out is not NULL, at most cap of
 * them). Returns the count, -1 with err set, or -2 for a non-finite value when such lines
 * are skipped. */
static long parse_text_line(SlemVecReader *r, char *line, double *out, size_t cap,
                            int allow_nonfinite, SlemError *err) {
  long n = 0;
  char *p = line;
  for (;;) {
    char *end;
    double v;
    int seps = 0; /* commas and semicolons before the value: one at most, between values */
    while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';') seps += *p == ',' || *p == ';', p++;
    if (seps > 1 || (seps == 1 && (n == 0 || *p == '\0'))) {
      slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %ld is empty (%s)",
                 slem_in_name(r->in), TS(r)->line_no, n + 1,
                 n == 0 ? "a separator before the first value"
                        : *p == '\0' ? "a separator after the last value" : "two separators in a row");
      return -1;
    }
    if (*p == '\0') break;
    errno = 0;
    v = strtod(p, &end);
    /* strtod skips white space before a number: a CR, VT or FF there is no separator */
    if (end == p || isspace((unsigned char)*p) || (*end && !strchr(" \t,;", *end))) {
      char tok[128];
      const char *cr = memchr(p, '\r', strcspn(p, " \t,;"));
      if (cr) /* CR line endings (classic Mac OS) made the file one line */
        slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": a CR byte (column %zu) inside the "
                   "line: lines end with LF or CR LF, not with a CR alone", slem_in_name(r->in),
                   TS(r)->line_no, (size_t)(cr - line) + 1);
      else
        slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %ld: not a number: '%s'",
                   slem_in_name(r->in), TS(r)->line_no, n + 1, value_text(tok, sizeof tok, p));
      return -1;
    }
    {
      const char *q = p + (*p == '+' || *p == '-');
      if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        char tok[128];
        slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %ld: '%s' is hexadecimal: "
                   "text values are decimal numbers", slem_in_name(r->in), TS(r)->line_no,
                   n + 1, value_text(tok, sizeof tok, p));
        return -1;
      }
    }
    if (!isfinite(v) && !allow_nonfinite) {
      if (r->skip_nonfinite) return -2;
      slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %ld is not finite (%.*s)",
                 slem_in_name(r->in), TS(r)->line_no, n + 1, (int)(end - p), p);
      return -1;
    }
    if (out) {
      if ((size_t)n >= cap) return n + 1; /* too many: caller reports */
      out[n] = v;
    }
    n++;
    p = end;
  }
  return n;
}

/* Next non-blank, non-comment line, or *line NULL at the end. */
static int next_text_line(SlemVecReader *r, char **line, SlemError *err) {
  size_t len;
  for (;;) {
    char *s;
    int st = slem_in_getline(r->in, line, &len, err);
    if (st || !*line) return st;
    TS(r)->line_no++;
    s = *line;
    while (*s == ' ' || *s == '\t') s++;
    if (*s && *s != '#') return SLEM_OK;
  }
}

static int open_text(SlemVecReader *r, SlemError *err) {
  char *line;
  long n;
  int st;
  if (!(r->priv = calloc(1, sizeof(TextState)))) return slem_error(err, SLEM_ENOMEM, "out of memory");
  if ((st = next_text_line(r, &line, err)) != SLEM_OK) return st;
  if (!line) return slem_vfmt_empty(r, "empty file", err);
  /* non-finite values are let through here: whether they are an error depends on
   * skip_nonfinite, set after open, and is decided when the row is read */
  n = parse_text_line(r, line, NULL, 0, 1, err);
  if (n < 0) return err ? err->status : SLEM_EFORMAT;
  if (n == 0 || (size_t)n > SLEM_DIM_MAX)
    return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %ld values", slem_in_name(r->in),
                      TS(r)->line_no, n);
  r->d = (size_t)n;
  TS(r)->pending = malloc(r->d * sizeof *TS(r)->pending);
  TS(r)->row = malloc(r->d * sizeof *TS(r)->row);
  if (!TS(r)->pending || !TS(r)->row) return slem_error(err, SLEM_ENOMEM, "out of memory");
  parse_text_line(r, line, TS(r)->pending, r->d, 1, err);
  TS(r)->has_pending = 1;
  TS(r)->pending_line = TS(r)->line_no;
  TS(r)->pending_bad = 0;
  for (size_t j = 0; j < r->d && !TS(r)->pending_bad; j++)
    if (!isfinite(TS(r)->pending[j])) TS(r)->pending_bad = j + 1;
  r->count = -1;
  return SLEM_OK;
}

static int rewind_text(SlemVecReader *self, SlemError *err) {
  char *line;
  int st = slem_in_seek(self->in, 0, err);
  if (st) return st;
  TS(self)->line_no = 0;
  st = next_text_line(self, &line, err);
  if (st) return st;
  if (!line || parse_text_line(self, line, TS(self)->pending, self->d, 1, err) != (long)self->d)
    return slem_error(err, SLEM_EFORMAT, "%s: changed while being read", slem_in_name(self->in));
  TS(self)->has_pending = 1;
  TS(self)->pending_line = TS(self)->line_no;
  return SLEM_OK;
}

static int read_text(SlemVecReader *r, double *x, size_t max, size_t *got, SlemError *err) {
  size_t i = 0;
  if (TS(r)->has_pending && max > 0) {
    TS(r)->has_pending = 0;
    if (TS(r)->pending_bad && !r->skip_nonfinite)
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %zu is not finite",
                        slem_in_name(r->in), TS(r)->pending_line, TS(r)->pending_bad);
    if (TS(r)->pending_bad) {
      r->skipped++;
    } else {
      memcpy(x, TS(r)->pending, r->d * sizeof *x);
      i = 1;
    }
  }
  while (i < max) {
    char *line;
    long n;
    int st = next_text_line(r, &line, err);
    if (st) return st;
    if (!line) break;
    n = parse_text_line(r, line, x + i * r->d, r->d, 0, err);
    if (n == -2) {
      r->skipped++;
      continue;
    }
    if (n < 0) return err ? err->status : SLEM_EFORMAT;
    if ((size_t)n != r->d) {
      if ((size_t)n > r->d) n = parse_text_line(r, line, NULL, 0, 1, err);
      return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": %ld values, expected %zu",
                        slem_in_name(r->in), TS(r)->line_no, n, r->d);
    }
    i++;
  }
  *got = i;
  r->done += i;
  return SLEM_OK;
}

/* Into double directly; into float a line at a time through the reader's row buffer. */
static int read_text_any(SlemVecReader *r, double *xd, float *xf, size_t max, size_t *got,
                         SlemError *err) {
  if (xd) return read_text(r, xd, max, got, err);
  for (size_t i = 0; i < max; i++) {
    size_t g;
    int st = read_text(r, TS(r)->row, 1, &g, err);
    if (st) return st;
    if (!g) break;
    for (size_t j = 0; j < r->d; j++)
      if (!isfinite(xf[i * r->d + j] = (float)TS(r)->row[j]))
        return slem_error(err, SLEM_EFORMAT, "%s: line %" PRIu64 ": value %zu (%.9g) is "
                          "beyond float32's range, in which the vectors are read",
                          slem_in_name(r->in), TS(r)->line_no, j + 1, TS(r)->row[j]);
    (*got)++;
  }
  return SLEM_OK;
}

static int write_text(SlemVecWriter *w, const float *x, size_t n, SlemError *err) {
  FILE *fp = slem_out_file(w->out);
  size_t d = w->d;
  for (size_t i = 0; i < n; i++) {
    const float *xr = x + i * d;
    for (size_t j = 0; j < d; j++) {
      char buf[SLEM_FMT_G9_MAX + 1];
      int len = slem_fmt_g9(buf + 1, xr[j]);
      buf[0] = ' ';
      if (fwrite(j ? buf : buf + 1, 1, (size_t)len + (j > 0), fp) != (size_t)len + (j > 0))
        return slem_vfmt_write_error(w, err);
    }
    if (putc('\n', fp) == EOF) return slem_vfmt_write_error(w, err);
  }
  return SLEM_OK;
}

const SlemVecFormatDef slem_vfmt_text = {
    .id = SLEM_FMT_TEXT, .names = {"text", "txt", "csv", "tsv", NULL}, .text = 1,
    .sniff = sniff_text,
    .open = open_text, .read = read_text_any, .rewind = rewind_text, .write = write_text,
    .close = close_text};
