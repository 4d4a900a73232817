/* The table of vector formats and its lookup: by id, name, extension, first bytes. The
 * formats themselves are in fmt_*.c (see vecfmt.h); what they share (fixed-size binary
 * records, which most of them are, the end of a pipe) is vecfmt.c's; the reader and the
 * writer that dispatch through the table are vecreader.c's and vecwriter.c's. */
#define _POSIX_C_SOURCE 200809L
#include "vecs.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "vecfmt.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "slem reads and writes little-endian files in host order: a little-endian host is needed"
#endif

/* Every format slem reads and writes, in the order --help lists them. */
static const SlemVecFormatDef *const formats[] = {
    &slem_vfmt_fvecs, &slem_vfmt_bvecs, &slem_vfmt_ivecs, &slem_vfmt_npy, &slem_vfmt_text,
    &slem_vfmt_fbin,  &slem_vfmt_u8bin, &slem_vfmt_i8bin, &slem_vfmt_ibin, &slem_vfmt_slem,
    &slem_vfmt_hdf5,  &slem_vfmt_foreign, &slem_vfmt_mem,
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

size_t slem_block_rows(size_t d) {
  size_t rows = ((size_t)1 << 21) / (d ? d : 1);
  return rows < 256 ? 256 : rows > 4096 ? 4096 : rows;
}

const SlemVecFormatDef *slem_vfmt_find(SlemFormat fmt) {
  for (size_t i = 0; i < N_FORMATS; i++)
    if (formats[i]->id == fmt) return formats[i];
  return NULL;
}

SlemFormat slem_vfmt_sniff(const unsigned char *p, size_t n) {
  SlemFormat best = SLEM_FMT_FVECS;
  int best_score = 0;
  for (size_t i = 0; i < N_FORMATS; i++) {
    int s = formats[i]->sniff ? formats[i]->sniff(p, n) : 0;
    if (s > best_score) best = formats[i]->id, best_score = s;
  }
  return best;
}

int slem_format_parse(SlemFormat *fmt, const char *name) {
  if (strcmp(name, "auto") == 0) {
    *fmt = SLEM_FMT_AUTO;
    return SLEM_OK;
  }
  for (size_t i = 0; i < N_FORMATS; i++)
    for (const char *const *n = formats[i]->names; *n && !formats[i]->memory; n++)
      if (strcmp(name, *n) == 0) {
        *fmt = formats[i]->id;
        return SLEM_OK;
      }
  return SLEM_EINVAL;
}

const char *slem_format_name(SlemFormat fmt) {
  const SlemVecFormatDef *def = slem_vfmt_find(fmt);
  return def ? def->names[0] : "auto";
}

int slem_format_stores(SlemFormat fmt, SlemDtype dt) {
  const SlemVecFormatDef *def = slem_vfmt_find(fmt);
  return def && def->write && (dt == SLEM_DTYPE_F4 || (def->out_dtypes & (1u << dt)));
}

int slem_format_carries(SlemFormat fmt) {
  const SlemVecFormatDef *def = slem_vfmt_find(fmt);
  return def && def->carries;
}

static char names_list[256], ext_list[512];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void append(char *buf, size_t cap, size_t *len, const char *sep, const char *s) {
  int w = snprintf(buf + *len, cap - *len, "%s%s", *len ? sep : "", s);
  if (w > 0 && (size_t)w < cap - *len) *len += (size_t)w;
}

static void make_lists(void) {
  size_t len = 0, elen = 0;
  for (size_t i = 0; i < N_FORMATS; i++) {
    if (formats[i]->unlisted) continue;
    append(names_list, sizeof names_list, &len, ", ", formats[i]->names[0]);
    for (const char *const *n = formats[i]->names; *n && formats[i]->write; n++) {
      char ext[32];
      snprintf(ext, sizeof ext, ".%s", *n);
      append(ext_list, sizeof ext_list, &elen, " ", ext);
    }
  }
}

const char *slem_format_names(void) {
  pthread_once(&names_once, make_lists);
  return names_list;
}

static const char *format_extensions(void) {
  pthread_once(&names_once, make_lists);
  return ext_list;
}

SlemFormat slem_format_from_path(const char *path) {
  const char *dot;
  SlemFormat fmt;
  if (!path) return SLEM_FMT_AUTO;
  dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return SLEM_FMT_AUTO;
  if (slem_format_parse(&fmt, dot + 1) == SLEM_OK) return fmt;
  return SLEM_FMT_AUTO;
}

int slem_format_for_output(SlemFormat *fmt, const char *path, SlemError *err) {
  struct stat sb;
  *fmt = slem_format_from_path(path);
  if (*fmt != SLEM_FMT_AUTO) return SLEM_OK;
  if (!path || strcmp(path, "-") == 0 || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))) {
    *fmt = SLEM_FMT_FVECS;
    return SLEM_OK;
  }
  return slem_error(err, SLEM_EINVAL,
                    "%s: the output's extension names no vector format (%s); give the "
                    "format with -F", path, format_extensions());
}

int slem_dtype_parse(SlemDtype *dt, const char *name) {
  static const struct { const char *name; SlemDtype dt; } tab[] = {
      {"f4", SLEM_DTYPE_F4}, {"float32", SLEM_DTYPE_F4}, {"f2", SLEM_DTYPE_F2},
      {"float16", SLEM_DTYPE_F2}, {"i1", SLEM_DTYPE_I1}, {"int8", SLEM_DTYPE_I1}};
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcmp(name, tab[i].name) == 0) {
      *dt = tab[i].dt;
      return SLEM_OK;
    }
  return SLEM_EINVAL;
}
