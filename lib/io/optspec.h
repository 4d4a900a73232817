/* Option specs: one declaration of an option (its name, letter, value, type, range, where it
 * is stored and its help), from which a tool's getopt_long table, its parsing and range
 * checks and its --help lines all come, and through which a library caller sets the same
 * option by name (negstats.h: slem_negstats_opts_set(); encstream.h:
 * slem_encstream_opts_set()).
 *
 * A table of specs is an array ended by an entry whose name is NULL. A spec stores into a
 * field of an options struct, at `offset` (offsetof); SLEM_OPT_FIELD(T, f) fills offset
 * and size. Text values are borrowed: the caller keeps them alive as long as the options.
 */
#ifndef SLEM_OPTSPEC_H
#define SLEM_OPTSPEC_H

#include <stddef.h>

#include "error.h"

typedef enum SlemOptType {
  SLEM_OPT_FLAG,    /* no value: the int field set to 1 */
  SLEM_OPT_WHOLE,   /* a whole number from min to max, stored in a field of `size` bytes
                       (int, long, size_t, uint64_t; min >= 0 for the unsigned ones) */
  SLEM_OPT_REAL,    /* a finite double that passes `real` */
  SLEM_OPT_TEXT,    /* the value itself (const char *, borrowed) */
  SLEM_OPT_CUSTOM   /* parse() decides (a kernel spec, a format, a shard, a choice ...) */
} SlemOptType;

/* What a SLEM_OPT_REAL value must be beyond finite, each with its message. */
typedef enum SlemOptReal {
  SLEM_OPT_ANY = 0,     /* any finite number */
  SLEM_OPT_POSITIVE,    /* "must be positive" */
  SLEM_OPT_NONNEG,      /* "must not be negative" */
  SLEM_OPT_UNIT         /* "from 0 to below 1" */
} SlemOptReal;

typedef struct SlemOptSpec SlemOptSpec;

/* A SLEM_OPT_CUSTOM spec's parser: stores what value (NULL for an option without a value,
 * or an optional value not given) means into opts (the whole options struct; the field
 * at s->offset, or any other). Errors: SLEM_EINVAL with the whole message, "--NAME: ..."
 * as the tools print it; the options are then left as they were. */
typedef int (*SlemOptParseFn)(const SlemOptSpec *s, void *opts, const char *value,
                              SlemError *err);

struct SlemOptSpec {
  const char *name;      /* the long option without its dashes; NULL ends a table */
  int key;               /* its short option letter, or 0 */
  const char *metavar;   /* the value's name in --help; NULL: takes no value; "[MODE]" (in
                            brackets): an optional value */
  SlemOptType type;
  size_t size;           /* SLEM_OPT_WHOLE: the field's size in bytes */
  long min, max;         /* SLEM_OPT_WHOLE: the range, inclusive */
  SlemOptReal real;      /* SLEM_OPT_REAL: what the value must be */
  size_t offset;         /* where the field is in the options struct */
  unsigned given;        /* or'ed into *given when the option is set (0: nothing) */
  SlemOptParseFn parse;  /* SLEM_OPT_CUSTOM: the parser */
  const char *help;      /* --help's text, lines of the help's width, "\n" between them */
};

/* The designated initialisers of a field: offset and size of member f of struct type T. */
#define SLEM_OPT_FIELD(T, f) .offset = offsetof(T, f), .size = sizeof(((T *)0)->f)

/* Parses value for s, checks its range and stores it into opts (see SlemOptType), and
 * or's s->given into *given (given may be NULL: the struct keeps none). value is NULL for
 * a spec without a metavar (and may be for an optional one), and must not be NULL for a
 * spec that takes one. Errors (SLEM_EINVAL; opts and *given then unchanged), with the
 * tools' messages: "--NAME: 'V' is not a whole number from MIN to MAX", "--NAME: 'V' is
 * not a finite number", "--NAME: must be positive", "--NAME: must not be negative",
 * "--NAME: from 0 to below 1", "option '--NAME' takes no value", "option '--NAME' needs a
 * value", and those of a custom parser. */
int slem_optspec_set(const SlemOptSpec *s, void *opts, unsigned *given, const char *value,
                     SlemError *err);

/* A whole number or a real number as s (SLEM_OPT_WHOLE, SLEM_OPT_REAL) takes them, into
 * *v, for custom parsers that store more than the value. Errors: those of
 * slem_optspec_set(). */
int slem_optspec_whole(const SlemOptSpec *s, const char *value, long *v, SlemError *err);
int slem_optspec_real(const SlemOptSpec *s, const char *value, double *v, SlemError *err);

/* 1 when s takes a value (a metavar), and 2 when that value is optional ("[...]"); 0 for
 * a flag. */
int slem_optspec_has_value(const SlemOptSpec *s);

/* The spec named name (without dashes) of table (NULL-name terminated; NULL: none), or
 * NULL. */
const SlemOptSpec *slem_optspec_find(const SlemOptSpec *table, const char *name);

/* A ready parser (SLEM_OPT_CUSTOM) for a SlemShard field (shard.h): "I/N", refused with
 * "--NAME: " and slem_shard_parse()'s message. */
int slem_optspec_shard(const SlemOptSpec *s, void *opts, const char *value, SlemError *err);

/* The --help lines of s, in the tools' layout: "  -K, --NAME METAVAR" (or six spaces and
 * "--NAME ..." without a letter), then the help's first line from column `column` (at
 * least one space after the head; a head too long for it stands alone on its line), each
 * further line indented to that column; every line ended by "\n". Written into buf as
 * snprintf() does (NUL-terminated, cut at size); returns the length of the whole text.
 * Cannot fail. */
size_t slem_optspec_help(const SlemOptSpec *s, int column, char *buf, size_t size);

#endif
