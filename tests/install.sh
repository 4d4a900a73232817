#!/bin/sh
# make install and make uninstall of the library into a staging root (DESTDIR, PREFIX=/usr):
# include/slem.h, lib/libslem.so.VERSION with its links and soname, lib/libslem.a,
# lib/pkgconfig/slem.pc (its version the header's, its flags finding the install),
# share/man/man3/slem.3, the Python package (when python/slem/ is in the tree) under
# Debian's lib/python3/dist-packages; examples/fit.c and examples/evaluate.c built with
# `cc $(pkg-config --cflags --libs slem)` against that install and run on the demo digits,
# their output the tools' on the same data (slem-negstats, slem-encode, slem-match;
# slem-eval); slem(3)'s examples run against it; then nothing of ours left by uninstall.
# Run from the top of the tree after make.
. "$(dirname "$0")/testlib.sh"
# under make check SANITIZE=1 the library needs the sanitizers' runtime in the program
# (and in a Python, which is not instrumented: testlib.sh's san_python; the man page's `cc`
# is then $CC with those flags, from a directory put first on PATH)
SAN_FLAGS=
if [ "${SANITIZE:-}" = 1 ]; then
  SAN_FLAGS="-fsanitize=address,undefined"
  mkdir -p "$T/sanbin"
  printf '#!/bin/sh\nexec %s %s "$@"\n' "${CC:-cc}" "$SAN_FLAGS" >"$T/sanbin/cc"
  chmod +x "$T/sanbin/cc"
fi
R="$T/root"
H=lib/api/slem.h
version=$(sed -n 's/^#define SLEM_VERSION "\(.*\)"$/\1/p' "$H")
major=${version%%.*}
make -s install DESTDIR="$R" PREFIX=/usr >"$T/log" 2>&1 || bad "make install: $(tail -3 "$T/log")"
L=$R/usr/lib
cmp -s "$R/usr/include/slem.h" "$H" && ok || bad "include/slem.h is not $H"
[ -f "$L/libslem.so.$version" ] && [ ! -L "$L/libslem.so.$version" ] && cmp -s "$L/libslem.so.$version" "lib/libslem.so.$version" &&
  ok || bad "lib/libslem.so.$version not installed"
[ "$(readlink "$L/libslem.so.$major")" = "libslem.so.$version" ] && [ "$(readlink "$L/libslem.so")" = "libslem.so.$major" ] &&
  ok || bad "the links libslem.so -> libslem.so.$major -> libslem.so.$version not installed"
cmp -s "$L/libslem.a" lib/libslem.a && ok || bad "lib/libslem.a not installed"
[ -f "$R/usr/share/man/man3/slem.3" ] && grep -q '^\.TH SLEM 3 ' "$R/usr/share/man/man3/slem.3" && ok ||
  bad "the man page slem(3) not installed"
# pkg-config finds the staged install (its flags name /usr, the sysroot prepends $R; the
# system directories are not filtered out, as they are for a real /usr)
PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_ALLOW_SYSTEM_CFLAGS PKG_CONFIG_ALLOW_SYSTEM_LIBS
if command -v pkg-config >/dev/null 2>&1; then
  [ "$(pkg-config --modversion slem 2>&1)" = "$version" ] && ok || bad "pkg-config --modversion slem: $(pkg-config --modversion slem 2>&1)"
  [ "$(pkg-config --cflags slem | sed "s/ *$//")" = "-I$R/usr/include" ] && ok || bad "pkg-config --cflags slem: $(pkg-config --cflags slem 2>&1)"
  [ "$(pkg-config --libs slem | sed "s/ *$//")" = "-L$L -lslem" ] && ok || bad "pkg-config --libs slem: $(pkg-config --libs slem 2>&1)"
  pkg-config --static --libs slem | grep -q -- '-lslem .*-lgsl .*-lopenblas' && ok ||
    bad "pkg-config --static --libs slem lacks the library's LIBS: $(pkg-config --static --libs slem 2>&1)"
else
  bad "no pkg-config (scripts/install-deps.sh installs it)"
fi
# the Python package, where Debian's python3 looks for it under /usr
for f in python/slem/*.py; do
  [ -f "$f" ] || continue
  cmp -s "$R/usr/lib/python3/dist-packages/slem/${f##*/}" "$f" && ok || bad "$f not installed under lib/python3/dist-packages/slem/"
done
# the installed package imports (with Debian's numpy, where it is installed) and loads the
# installed library, PREFIX/lib/libslem.so.MAJOR, not the checkout's
if [ -f python/slem/__init__.py ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  (cd "$T" && unset SLEM_LIBRARY && PYTHONPATH="$R/usr/lib/python3/dist-packages" san_python /usr/bin/python3 -c \
    'import slem; print(slem.library_path); print(slem.__version__)') >"$T/py" 2>"$T/err"
  [ "$(sed -n 1p "$T/py")" = "$L/libslem.so.$major" ] && [ "$(sed -n 2p "$T/py")" = "$version" ] && ok ||
    bad "the installed Python package: $(cat "$T/py" "$T/err" | head -c 400)"
fi
# the examples, built against the install alone, their output the tools'
D=$TOP/testdata/digits
CC=${CC:-cc}
built=1
for x in fit evaluate; do
  # shellcheck disable=SC2046
  if $CC $SAN_FLAGS -std=c99 -Wall -Wextra -Werror -o "$T/$x" "examples/$x.c" $(pkg-config --cflags --libs slem) 2>"$T/err"; then ok
  else
    built=0
    miss=$(grep -o "undefined reference to \`slem_[a-z0-9_]*'" "$T/err" | sed "s/.*\`//; s/'//" | sort -u | tr '\n' ' ')
    if [ -n "$miss" ]; then bad "examples/$x.c: libslem.so does not define $miss(lib/api/*.c)"
    else bad "examples/$x.c does not build against the install: $(head -c 400 "$T/err")"; fi
  fi
done
if [ "$built" = 1 ]; then
  objdump -p "$T/fit" | grep -q "NEEDED *libslem.so.$major\$" && ok || bad "fit does not need libslem.so.$major"
  export LD_LIBRARY_PATH="$L"
  slem-negstats -q --lambda-rel 1000 -o "$T/neg.slem" "$D/negatives.fvecs" &&
    slem-encode -c "$T/neg.slem" -o "$T/db.fvecs" "$D/database.fvecs" &&
    slem-encode -c "$T/neg.slem" "$D/queries.fvecs" | slem-match -k 100 -d "$T/db.fvecs" >"$T/tools.tsv" ||
    bad "the tools' pipeline failed"
  for t in 1 2; do
    if SLEM_THREADS=$t "$T/fit" "$D/negatives.fvecs" "$D/queries.fvecs" "$D/database.fvecs" 100 >"$T/fit.tsv" 2>"$T/err"; then
      cmp -s "$T/fit.tsv" "$T/tools.tsv" && [ -s "$T/fit.tsv" ] && ok ||
        bad "examples/fit.c (SLEM_THREADS=$t): not slem-match's ranking: $(cmp "$T/fit.tsv" "$T/tools.tsv" 2>&1)"
    else
      bad "examples/fit.c (SLEM_THREADS=$t): $(head -c 300 "$T/err")"
    fi
  done
  # the static archive with slem.pc's Libs.private: the same ranking
  # shellcheck disable=SC2046
  if $CC $SAN_FLAGS -std=c99 -o "$T/fit-static" examples/fit.c $(pkg-config --cflags slem) \
      $(pkg-config --static --libs slem | sed 's/-lslem /-l:libslem.a /') 2>"$T/err" &&
    ! objdump -p "$T/fit-static" | grep -q 'NEEDED *libslem' &&
    "$T/fit-static" "$D/negatives.fvecs" "$D/queries.fvecs" "$D/database.fvecs" 100 >"$T/fit.tsv" 2>>"$T/err" &&
    cmp -s "$T/fit.tsv" "$T/tools.tsv"; then ok
  else bad "examples/fit.c linked with libslem.a and pkg-config --static: $(head -c 300 "$T/err")"; fi
  slem-eval --query-labels "$D/queries.labels" --db-labels "$D/database.labels" "$T/tools.tsv" |
    grep -E '^(mAP|P@1|P@10)	' >"$T/eval.tools"
  if "$T/evaluate" "$T/tools.tsv" "$D/queries.labels" "$D/database.labels" >"$T/eval.ex" 2>"$T/err"; then
    [ "$(wc -l <"$T/eval.tools")" = 3 ] && cmp -s "$T/eval.ex" "$T/eval.tools" && ok ||
      bad "examples/evaluate.c: $(tr '\n' ' ' <"$T/eval.ex"), slem-eval: $(tr '\n' ' ' <"$T/eval.tools")"
  else
    bad "examples/evaluate.c: $(head -c 300 "$T/err")"
  fi
  # slem(3)'s examples, against the install
  PATH=${SAN_FLAGS:+$T/sanbin:}$PATH sh tests/man-examples.sh man/slem.3 >"$T/man" 2>&1 && ok || bad "man/slem.3's examples: $(grep -v '^man-examples:' "$T/man" | head -c 600)"
  unset LD_LIBRARY_PATH
fi
make -s uninstall DESTDIR="$R" PREFIX=/usr >"$T/log" 2>&1 || bad "make uninstall: $(tail -3 "$T/log")"
left=$(find "$R" ! -type d | head -5 | tr '\n' ' ')
[ -z "$left" ] && ok || bad "uninstall left $left"
[ ! -e "$R/usr/lib/python3/dist-packages/slem" ] && ok || bad "uninstall left lib/python3/dist-packages/slem"
finish install
