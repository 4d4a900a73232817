#!/bin/sh
# The installed header (lib/api/slem.h, installed as include/slem.h) stands alone and is
# C99 and C++ clean: compiled from a directory that holds it alone as C99
# (cc -std=c99 -pedantic -Wall -Wextra -Werror) and C++ (g++ -std=c++11 -pedantic -Wall
# -Wextra -Werror), and by clang when it is installed; its types and every function it
# declares used from both; a C++ program linked against lib/libslem.so (when built) finds
# slem_error_str and slem_version by their C names (extern "C"). Run from the top of the
# tree.
. "$(dirname "$0")/testlib.sh"
# under make check SANITIZE=1 the library needs the sanitizers' runtime in the program
SAN_FLAGS=
[ "${SANITIZE:-}" = 1 ] && SAN_FLAGS="-fsanitize=address,undefined"
H=${SLEM_HEADER:-lib/api/slem.h}
mkdir -p "$T/inc"
cp "$H" "$T/inc/slem.h"
# a translation unit that names every function of the header (its address), its types
# and its macros
{
  echo '#include "slem.h"'
  echo '#include "slem.h"'
  echo 'typedef void (*slem_fn)(void);'
  echo 'int slem_header_use(void);'
  echo 'int slem_header_use(void) {'
  echo '  SlemError err = {SLEM_OK, {0}};'
  echo '  SlemArray a = {0, SLEM_FLOAT32, 0, 0};'
  echo '  static SlemTruthArrays t;'
  echo '  slem_fn fns[] = {'
  sh scripts/api-map.sh --list "$H" | sed 's/^/    (slem_fn)/; s/$/,/'
  echo '    0};'
  echo '  (void)t;'
  echo '  return err.status + a.dtype + SLEM_VERSION_MAJOR + SLEM_VERSION_MINOR + SLEM_VERSION_PATCH'
  echo '    + (int)sizeof(SLEM_VERSION) + SLEM_SEARCH_NORMALIZE + SLEM_FLOAT64 + SLEM_EINVAL'
  echo '    + (fns[0] != 0);'
  echo '}'
} >"$T/use.c"
cp "$T/use.c" "$T/use.cpp"
CC=${CC:-cc}
# the C++ compiler of the C compiler's family (a clang-sanitized library wants clang's runtime)
case $CC in *clang*) command -v clang++ >/dev/null 2>&1 && CXX=${CXX:-clang++} ;; esac
CXX=${CXX:-g++}
if $CC -std=c99 -pedantic -Wall -Wextra -Werror -I"$T/inc" -c "$T/use.c" -o "$T/use.o" 2>"$T/err"; then ok
else bad "$H as C99 ($CC -std=c99 -pedantic -Wall -Wextra -Werror): $(head -c 600 "$T/err")"; fi
if command -v "$CXX" >/dev/null 2>&1; then
  if $CXX -std=c++11 -pedantic -Wall -Wextra -Werror -I"$T/inc" -c "$T/use.cpp" -o "$T/usepp.o" 2>"$T/err"; then ok
  else bad "$H as C++11 ($CXX -std=c++11 -pedantic -Wall -Wextra -Werror): $(head -c 600 "$T/err")"; fi
else
  bad "no C++ compiler $CXX (scripts/install-deps.sh installs g++)"
fi
if command -v clang >/dev/null 2>&1; then
  clang -std=c99 -pedantic -Wall -Wextra -Werror -I"$T/inc" -c "$T/use.c" -o "$T/usec.o" 2>"$T/err" && ok ||
    bad "$H as C99 with clang: $(head -c 600 "$T/err")"
fi
# C++ finds the C names in the library
if [ -f lib/libslem.so ] && command -v "$CXX" >/dev/null 2>&1; then
  cat >"$T/link.cpp" <<'C'
#include <cstdio>
#include "slem.h"
int main() {
  std::printf("%s\n", slem_error_str(SLEM_EIO));
  return 0;
}
C
  if $CXX $SAN_FLAGS -std=c++11 -Wall -Wextra -Werror -I"$T/inc" -o "$T/link" "$T/link.cpp" -Llib -lslem 2>"$T/err" &&
    LD_LIBRARY_PATH=$TOP/lib "$T/link" >"$T/out" 2>>"$T/err" && [ -s "$T/out" ]; then ok
  else bad "a C++ program calling slem_error_str against lib/libslem.so: $(head -c 600 "$T/err")"; fi
fi
finish header
