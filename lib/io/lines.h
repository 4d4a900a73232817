/* Line files: the loop that qrels, junk lists and rankings share.
 *
 * A SlemLines hands out the non-blank lines of a file one by one (a blank line holds only
 * spaces and tabs, and is skipped) with their 1-based line number, for messages of the
 * form "FILE: line N: ...". slem_lines_split() cuts a line into fields in place.
 */
#ifndef SLEM_LINES_H
#define SLEM_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct SlemLines SlemLines;

/* Opens path ("-": stdin). Errors: SLEM_EIO naming the path. */
int slem_lines_open(SlemLines **self, const char *path, SlemError *err);
void slem_lines_free(SlemLines *self);

/* The next non-blank line (without its newline) in a buffer owned by self, valid until
 * the next call, and its length; *line is NULL at end of file. Errors: SLEM_EIO,
 * SLEM_EFORMAT (a line over 64 MiB). */
int slem_lines_next(SlemLines *self, char **line, size_t *len, SlemError *err);

/* The next non-blank line split at white space into at most max fields (f[0..max));
 * *nf is the number of fields on the line, which may exceed max; 0 only at end of
 * file (lines with no field are skipped). */
int slem_lines_fields(SlemLines *self, char **f, size_t max, size_t *nf, SlemError *err);

/* Up to n bytes not yet read, without consuming them (slem_in_peek()): a reader can
 * recognise a binary file before reading it as lines. Errors: SLEM_EIO. */
int slem_lines_peek(SlemLines *self, size_t n, const unsigned char **p, size_t *avail,
                    SlemError *err);

/* 1 when the last line returned had no newline (see slem_in_unterminated()). */
int slem_lines_unterminated(const SlemLines *self);

/* The 1-based number of the line last returned. */
uint64_t slem_lines_number(const SlemLines *self);

/* The name for messages: the path, or "<stdin>". Owned by self. */
const char *slem_lines_name(const SlemLines *self);

/* Splits line in place at any byte of seps into f[0..max); returns the field count,
 * which may exceed max. collapse: runs of separators count as one and leading or
 * trailing ones are ignored (white-space formats); otherwise every separator ends a
 * field, so empty fields count (tab-separated formats). */
size_t slem_lines_split(char *line, const char *seps, int collapse, char **f, size_t max);

#endif
