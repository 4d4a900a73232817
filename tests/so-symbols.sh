#!/bin/sh
# libslem.so exports the public API and nothing else (docs/library.md, "Building and
# linking"): its dynamic symbols (nm -D --defined-only) are exactly the functions that
# lib/api/slem.h declares (scripts/api-map.sh --list), at most 150, all slem_*; the version
# script lib/api/libslem.map is the one made from that header; objdump -p shows the soname
# libslem.so.MAJOR (the header's SLEM_VERSION_MAJOR), the links libslem.so ->
# libslem.so.MAJOR -> libslem.so.VERSION are in place; a program links against it and
# runs, and one that calls an internal function (slem_error) does not link. A function the
# header declares that no file defines yet is named as such. Run from the top of the tree
# after make.
. "$(dirname "$0")/testlib.sh"
# under make check SANITIZE=1 the library needs the sanitizers' runtime in the program
SAN_FLAGS=
[ "${SANITIZE:-}" = 1 ] && SAN_FLAGS="-fsanitize=address,undefined"
H=lib/api/slem.h
SO=lib/libslem.so
for t in nm objdump; do
  command -v $t >/dev/null 2>&1 || { echo "so-symbols: skipped (no $t)"; exit 0; }
done
[ -f "$SO" ] || { bad "$SO is not built (make)"; finish so-symbols; exit 1; }
sh scripts/api-map.sh --list "$H" >"$T/declared" 2>"$T/err" || bad "scripts/api-map.sh: $(cat "$T/err")"
# the version script is the header's
if sh scripts/api-map.sh "$H" | cmp -s - lib/api/libslem.map; then ok
else bad "lib/api/libslem.map is not what scripts/api-map.sh makes of $H (make lib/api/libslem.map)"; fi
# what the library exports: functions and data it defines, less the version node itself (A)
nm -D --defined-only "$SO" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' | LC_ALL=C sort -u >"$T/exported"
n=$(wc -l <"$T/exported")
[ "$n" -le 150 ] && ok || bad "$SO exports $n symbols, more than 150"
other=$(grep -v '^slem_' "$T/exported" | tr '\n' ' ')
[ -z "$other" ] && ok || bad "$SO exports symbols not slem_*: $other"
# declared, not exported: not defined yet, or defined without default visibility (a
# declaration outside the header's #pragma GCC visibility push(default))
missing=$(LC_ALL=C comm -23 "$T/declared" "$T/exported")
if [ -z "$missing" ]; then ok
else
  nm -A --defined-only build/pic/*/*.o 2>/dev/null | awk '$(NF - 1) ~ /^[TDRB]$/ { print $NF, $1 }' |
    sed 's/:[^ ]*$//' >"$T/defs"
  for f in $missing; do
    where=$(awk -v f="$f" '$1 == f { print $2; exit }' "$T/defs")
    if [ -n "$where" ]; then bad "$f: declared in $H, defined in $where, not exported (hidden)"
    else bad "$f: declared in $H, defined nowhere yet (lib/api/*.c), so not exported"; fi
  done
fi
extra=$(LC_ALL=C comm -13 "$T/declared" "$T/exported" | tr '\n' ' ')
[ -z "$extra" ] && ok || bad "$SO exports what $H does not declare: $extra"
# every exported function in the version node SLEM_MAJOR.MINOR
node=SLEM_$(sed -n 's/^#define SLEM_VERSION_MAJOR //p' "$H").$(sed -n 's/^#define SLEM_VERSION_MINOR //p' "$H")
unversioned=$(nm -D --defined-only "$SO" | awk -v v="@@$node" '$2 != "A" && index($3, v) == 0 { print $3 }' | tr '\n' ' ')
[ -z "$unversioned" ] && ok || bad "exported outside the version node $node: $unversioned"
# the soname and the links
major=$(sed -n 's/^#define SLEM_VERSION_MAJOR //p' "$H")
version=$(sed -n 's/^#define SLEM_VERSION "\(.*\)"$/\1/p' "$H")
# the tools' version (lib/io/libslem.h, what --version and a cache's provenance say) is the
# library's, and MAJOR.MINOR.PATCH spell it
tools=$(sed -n 's/^#define SLEM_VERSION "\(.*\)"$/\1/p' lib/io/libslem.h)
parts=$(sed -n 's/^#define SLEM_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' "$H" | tr '\n' . | sed 's/\.$//')
[ -n "$version" ] && [ "$tools" = "$version" ] && [ "$parts" = "$version" ] && ok ||
  bad "versions differ: $H says $version ($parts), lib/io/libslem.h says $tools"
soname=$(objdump -p "$SO" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libslem.so.$major" ] && ok || bad "$SO: SONAME '$soname', expected libslem.so.$major"
[ "$(readlink lib/libslem.so)" = "libslem.so.$major" ] && [ "$(readlink "lib/libslem.so.$major")" = "libslem.so.$version" ] &&
  [ -f "lib/libslem.so.$version" ] && [ ! -L "lib/libslem.so.$version" ] && ok ||
  bad "the links lib/libslem.so -> libslem.so.$major -> libslem.so.$version are not in place"
# the library is linked whole: NEEDED the BLAS bound, no undefined symbol of slem_ (weak
# ones aside: slem_esvm_rand, which slem-esvm alone defines, lib/encode/esvm_rand.h)
objdump -p "$SO" | grep -q 'NEEDED.*libopenblas' && ok || bad "$SO does not need libopenblas"
und=$(nm -D --undefined-only "$SO" | awk '$1 == "U" && $2 ~ /^slem_/ { print $2 }' | tr '\n' ' ')
[ -z "$und" ] && ok || bad "$SO leaves slem_ symbols undefined: $und"
# a program of the API links and runs; one that calls an internal function does not link
cat >"$T/api.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "slem.h"
int main(void) {
  const char *s = slem_error_str(SLEM_EFORMAT);
  puts(s);
  return s == NULL || strlen(s) == 0;
}
C
cat >"$T/internal.c" <<'C'
#include "slem.h"
int slem_error(SlemError *err, int status, const char *fmt, ...);
int main(void) { SlemError e; return slem_error(&e, SLEM_EIO, "x") != SLEM_EIO; }
C
CC=${CC:-cc}
if $CC $SAN_FLAGS -std=c99 -Ilib/api -o "$T/api" "$T/api.c" -Llib -lslem 2>"$T/err" &&
  LD_LIBRARY_PATH=$TOP/lib "$T/api" >"$T/out" 2>>"$T/err" && [ -s "$T/out" ]; then ok
else bad "a program calling slem_error_str does not link or run against $SO: $(head -c 300 "$T/err")"; fi
if $CC $SAN_FLAGS -std=c99 -Ilib/api -o "$T/internal" "$T/internal.c" -Llib -lslem 2>"$T/err"; then
  bad "a program calling the internal slem_error links against $SO"
elif grep -q 'slem_error' "$T/err"; then ok
else bad "a program calling slem_error: the link failed otherwise: $(head -c 300 "$T/err")"; fi
finish so-symbols
