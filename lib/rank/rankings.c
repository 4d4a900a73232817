/* The table of ranking formats (rankings.h, rankfmt.h) and its lookup: by index, name,
 * extension; the files a path names. The writer, the reader and the shard lines are
 * rankwriter.c's, rankreader.c's and rankshard.c's; what the formats share is rankfmt.c's. */
#define _POSIX_C_SOURCE 200809L
#include "rankings.h"

#include <stdio.h>
#include <string.h>

#include "rankfmt.h"

/* ---- the formats ---- */

/* The table: a format's index is its SlemRankFormat (the order of the enum's names). */
static const SlemRankFormatOps *const formats[] = {
    &slem_rank_tsv,
    &slem_rank_trec,
    &slem_rank_jsonl,
    &slem_rank_npy,
};
#define NFORMATS (sizeof formats / sizeof *formats)

static const SlemRankFormatOps *ops_of(SlemRankFormat fmt) {
  return fmt >= 0 && (size_t)fmt < NFORMATS ? formats[fmt] : NULL;
}

const SlemRankFormatOps *slem_rankformat_ops(SlemRankFormat fmt) { return ops_of(fmt); }

int slem_rankings_key_cmp(const void *a, const void *b) {
  const SlemRankKey *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int slem_rankformat_parse(SlemRankFormat *fmt, const char *name, SlemError *err) {
  for (size_t i = 0; i < NFORMATS; i++)
    if (strcmp(name, formats[i]->name) == 0) {
      *fmt = (SlemRankFormat)i;
      return SLEM_OK;
    }
  return slem_error(err, SLEM_EINVAL, "unknown format '%s' (%s)", name,
                    slem_rankformat_names());
}

const char *slem_rankformat_name(SlemRankFormat fmt) {
  return ops_of(fmt) ? ops_of(fmt)->name : "auto";
}

const char *slem_rankformat_names(void) {
  static char names[256];
  if (!names[0]) /* the table is constant: the same text whoever writes it first */
    for (size_t i = 0, pos = 0; i < NFORMATS && pos < sizeof names; i++)
      pos += (size_t)snprintf(names + pos, sizeof names - pos, "%s%s", i ? ", " : "",
                              formats[i]->name);
  return names;
}

const char *slem_rankformat_extensions(void) {
  static char exts[256];
  if (!exts[0])
    for (size_t i = 0, pos = 0; i < NFORMATS && pos < sizeof exts; i++)
      pos += (size_t)snprintf(exts + pos, sizeof exts - pos, "%s%s", i ? ", " : "",
                              formats[i]->extension);
  return exts;
}

SlemRankFormat slem_rankformat_from_path(const char *path) {
  const char *dot = path ? strrchr(path, '.') : NULL, *slash = path ? strrchr(path, '/') : NULL;
  if (!dot || (slash && slash > dot)) return SLEM_RANK_AUTO;
  for (size_t i = 0; i < NFORMATS; i++)
    if (strcmp(dot, formats[i]->extension) == 0) return (SlemRankFormat)i;
  return SLEM_RANK_AUTO;
}

int slem_rankformat_files(SlemRankFormat fmt, const char *path, char names[2][4096], size_t *n) {
  const SlemRankFormatOps *ops = ops_of(fmt);
  if (ops && ops->files) return ops->files(path, names, n);
  *n = 0;
  if (strlen(path) >= sizeof names[0]) return -1;
  strcpy(names[0], path);
  *n = 1;
  return 0;
}

int slem_rankformat_has_shard(SlemRankFormat fmt) {
  return ops_of(fmt) && ops_of(fmt)->shard_lines;
}

int slem_rankformat_check_output(SlemRankFormat fmt, const char *path, SlemError *err) {
  const SlemRankFormatOps *ops = ops_of(fmt);
  char example[64], names[2][4096];
  size_t n = 0;
  if (!ops || !ops->open || (path && strcmp(path, "-") != 0)) return SLEM_OK;
  /* a format of its own files: what it makes of a name, shown on NAME and its extension */
  snprintf(example, sizeof example, "NAME%s", ops->extension);
  if (ops->files && ops->files(example, names, &n) == 0 && n == 2)
    return slem_error(err, SLEM_EINVAL, "%s rankings are two files (%s and %s): give -o %s",
                      ops->name, names[0], names[1], example);
  return slem_error(err, SLEM_EINVAL, "%s rankings are files of their own: give -o %s",
                    ops->name, example);
}
