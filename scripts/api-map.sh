#!/bin/sh
# scripts/api-map.sh: the functions the public header declares, for libslem.so's version
# script (lib/api/libslem.map, made from lib/api/slem.h by the Makefile) and for the test
# of its exports (tests/so-symbols.sh), so that the two cannot drift from the header.
#
# Usage: scripts/api-map.sh [--list] HEADER
#   --list   the names, one a line, sorted
#   without  the version script: one node SLEM_MAJOR.MINOR (the header's
#            SLEM_VERSION_MAJOR and _MINOR) exporting those names, everything else local
#
# A declaration is a line at file scope (not indented) outside comments and preprocessor
# lines, holding an identifier slem_* followed by '(' : the header's style (the return
# type and the name on the first line, parameters continued on indented lines).
set -u
list=0
if [ "${1:-}" = --list ]; then list=1; shift; fi
[ $# = 1 ] || { echo "usage: scripts/api-map.sh [--list] HEADER" >&2; exit 2; }
h=$1
[ -r "$h" ] || { echo "scripts/api-map.sh: cannot read $h" >&2; exit 1; }
names=$(awk '
  { line = $0
    # comments, also across lines
    out = ""
    while (line != "") {
      if (incomment) {
        if ((i = index(line, "*/")) == 0) { line = ""; break }
        line = substr(line, i + 2); incomment = 0
      } else if ((i = index(line, "/*")) == 0) { out = out line; line = "" }
      else { out = out substr(line, 1, i - 1) " "; line = substr(line, i + 2); incomment = 1 }
    }
  }
  out ~ /^[ \t#]/ || out == "" { next }
  { while (match(out, /(^|[^A-Za-z0-9_])slem_[A-Za-z0-9_]+[ \t]*\(/)) {
      s = substr(out, RSTART, RLENGTH); sub(/^[^s]*/, "", s); sub(/[ \t]*\($/, "", s)
      print s; out = substr(out, RSTART + RLENGTH)
    } }' "$h" | LC_ALL=C sort -u)
[ -n "$names" ] || { echo "scripts/api-map.sh: $h declares no slem_* function" >&2; exit 1; }
if [ "$list" = 1 ]; then printf '%s\n' "$names"; exit 0; fi
major=$(sed -n 's/^#define SLEM_VERSION_MAJOR \([0-9][0-9]*\)$/\1/p' "$h")
minor=$(sed -n 's/^#define SLEM_VERSION_MINOR \([0-9][0-9]*\)$/\1/p' "$h")
[ -n "$major" ] && [ -n "$minor" ] ||
  { echo "scripts/api-map.sh: $h lacks SLEM_VERSION_MAJOR or SLEM_VERSION_MINOR" >&2; exit 1; }
echo "/* libslem.so's version script, made by scripts/api-map.sh from lib/api/slem.h: the"
echo " * functions that header declares, and nothing else (tests/so-symbols.sh). */"
echo "SLEM_$major.$minor {"
echo "  global:"
printf '%s\n' "$names" | sed 's/^/    /; s/$/;/'
echo "  local: *;"
echo "};"
