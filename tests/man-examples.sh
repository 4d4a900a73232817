#!/bin/sh
# Runs the EXAMPLES of the man pages as tests. In each .EX/.EE block of the EXAMPLES
# section, a line "$ command" is run with sh (in a fresh directory per page, testdata/
# linked in, bin/ first on PATH) and must exit 0. A command line that ends in a
# backslash (\e in the page) goes on on the next line, as typed in a shell, and the lines
# so joined run as one command. The lines after a command, up to the next command, are
# its expected stdout, compared by tests/numcmp.awk: the text around the
# numbers exactly, integers exactly, other numbers to a relative 1e-6 wherever they stand
# (`"variance_kept": 0.85197638578813117,` too): the last digits of a float that went
# through BLAS differ between OpenBLAS's kernels (see tests/numcmp.awk for the bound).
# Every page must also render within 80 columns at MANWIDTH=80 (checked where man is).
# A page of section 3 (man/slem.3, the C API) has no tool whose --help to compare: its
# examples build examples/*.c (linked in beside testdata/) against an installed libslem,
# so tests/install.sh runs this script on it with pkg-config and the dynamic linker pointed
# at its install; `make man-test` leaves it out.
# Usage: tests/man-examples.sh man/slem-*.1
set -u
TOP=$(pwd)
pass=0
fail=0
# the scripts under the names `make install` gives them
S=$(mktemp -d "${TMPDIR:-/tmp}/slem-man-scripts.XXXXXX")
trap 'rm -rf "$S"' EXIT
ln -s "$TOP/tools/slem-tune" "$S/slem-tune"
ln -s "$TOP/tools/plot-pr" "$S/slem-plot-pr"
ln -s "$TOP/tools/slem-scale" "$S/slem-parallel"
ln -s "$TOP/tools/slem-scale" "$S/slem-sbatch"
ln -s "$TOP/tools/slem-reindex" "$S/slem-reindex"
ln -s "$TOP/bin/slem-eval" "$S/slem-trec_eval"
# slem-sbatch.1 is slem-parallel.1 under its own title (`man -l` cannot follow a .so link
# from a file): it must be what `make man/slem-sbatch.1` makes of slem-parallel.1 now
if sh scripts/man-alias.sh man/slem-parallel.1 SLEM-SBATCH | cmp -s - man/slem-sbatch.1; then
  pass=$((pass + 1))
else
  echo "FAIL: man/slem-sbatch.1 is out of date with man/slem-parallel.1 (make man/slem-sbatch.1)"
  fail=$((fail + 1))
fi
# every page renders without a groff warning (a line that starts with '.' or "'" is taken
# as a request, and its text vanishes from the page); skipped where groff is absent
if command -v groff >/dev/null 2>&1; then
  for page in "$@"; do
    if w=$(groff -man -ww -Tutf8 "$page" 2>&1 >/dev/null) && [ -z "$w" ]; then
      pass=$((pass + 1))
    else
      echo "FAIL: $page: groff warns: $w"
      fail=$((fail + 1))
    fi
  done
fi
# every page renders within 80 columns in an 80-column terminal (the terminal would wrap
# a wider line: a long example command goes on on the next line after a trailing \e);
# columns are characters (UTF-8 continuation bytes not counted); skipped where man is absent
if command -v man >/dev/null 2>&1; then
  for page in "$@"; do
    if ! MANWIDTH=80 man -l "$page" >"$S/render" 2>"$S/err"; then
      echo "FAIL: $page: man -l fails: $(head -c 300 "$S/err")"; fail=$((fail + 1)); continue
    fi
    wide=$(LC_ALL=C awk '{ s = $0; gsub(/[\200-\277]/, "", s) }
      length(s) > 80 { print "  " length(s) ": " $0 }' "$S/render")
    if [ -z "$wide" ]; then
      pass=$((pass + 1))
    else
      echo "FAIL: $page: lines wider than 80 columns at MANWIDTH=80:"; echo "$wide"
      fail=$((fail + 1))
    fi
  done
else
  echo "man-examples: no man here: the 80-column check of the pages is skipped"
fi
# ---- --help against the page: the same options, the same numbers as defaults; --help
# and --version to stdout, status 0, within 80 columns ----
# options NAME...: "OPTION<TAB>DEFAULT" for each name of an option (-x or --xx) and the
# first number after "default" (any case, then ':' or a blank) in what it says, '-' for
# none. On stdin an option table of --help (option lines indented at most 8, their text
# after two blanks, continued by lines indented 9 or more), or with -m a man page (the
# tag line after .TP, its text up to the next request)
options() {
  awk -v man="${1:-}" '
    function flush(   d, n, a, i) {
      if (names == "") return
      d = "-"
      if (match(tolower(desc), /default:? -?[0-9][0-9.e^\/+-]*/)) {
        d = substr(desc, RSTART, RLENGTH); sub(/^[^ ]+ /, "", d); sub(/[.]$/, "", d)
      }
      n = split(names, a, " ")
      for (i = 1; i <= n; i++) print a[i] "\t" d
      names = ""; desc = ""
    }
    function take(spec,   t) {
      while (match(spec, /(^|[ ,|[(])--?[A-Za-z0-9][A-Za-z0-9-]*/)) {
        t = substr(spec, RSTART, RLENGTH); sub(/^[^-]/, "", t)
        names = names " " t; spec = substr(spec, RSTART + RLENGTH)
      }
    }
    man == "" && /^ +-/ && match($0, /^ +/) && RLENGTH <= 8 {
      flush(); s = $0; sub(/^ +/, "", s)
      n = match(s, /   |  [^-]/)
      take(n ? substr(s, 1, n - 1) : s); desc = n ? substr(s, n) : ""; next
    }
    man == "" && /^         / && names != "" { desc = desc " " $0; next }
    man == "" { flush(); next }
    { s = $0; gsub(/\\-/, "-", s); gsub(/\\f[BIRP]/, "", s) }
    tag { flush(); take(s); tag = 0; next }
    /^\.(TP|SH|SS|PP|IP|RS|RE)/ { flush(); tag = ($0 ~ /^\.TP/); next }
    names != "" { desc = desc " " s }
    END { flush() }' | sort -u
}
for page in "$@"; do
  case $page in *.3) continue ;; esac
  name=$(basename "$page" .1)
  run="env PATH=$TOP/bin:$S:$PATH LC_ALL=C $name"
  for opt in --help --version; do
    if $run $opt >"$S/out" 2>"$S/err" && [ -s "$S/out" ] && [ ! -s "$S/err" ]; then
      pass=$((pass + 1))
    else
      echo "FAIL: $name $opt: not to stdout with status 0: $(head -c 300 "$S/err")"; fail=$((fail + 1))
    fi
    wide=$(awk 'length($0) > 80 { print length($0) ": " $0; exit }' "$S/out")
    if [ -z "$wide" ]; then pass=$((pass + 1)); else echo "FAIL: $name $opt: a line wider than 80 columns: $wide"; fail=$((fail + 1)); fi
  done
  $run --help | options >"$S/help.opts"
  options -m <"$page" >"$S/page.opts"
  diff=$(join -t "$(printf '\t')" -a 1 -a 2 -e NONE -o 0,1.2,2.2 "$S/help.opts" "$S/page.opts" | awk -F '\t' '
    $2 == "NONE" { print "  " $1 ": in the page, not in --help" }
    $3 == "NONE" { print "  " $1 ": in --help, not in the page" }
    $2 != "NONE" && $3 != "NONE" && $2 != "-" && $3 != "-" && $2 != $3 {
      print "  " $1 ": default " $2 " in --help, " $3 " in the page" }')
  if [ -z "$diff" ]; then pass=$((pass + 1)); else echo "FAIL: $page and $name --help differ:"; echo "$diff"; fail=$((fail + 1)); fi
done
for page in "$@"; do
  # a page that is another's (.so, or generated from it) has that page's examples
  case $(head -n 1 "$page") in .so\ *|'.\" Generated from '*) continue ;; esac
  dir=$(mktemp -d "${TMPDIR:-/tmp}/slem-man.XXXXXX")
  ln -s "$TOP/testdata" "$dir/testdata"
  ln -s "$TOP/examples" "$dir/examples"
  # split the examples into cmd.N and exp.N files
  awk -v dir="$dir" '
    /^\.SH / { inex = ($0 ~ /^\.SH EXAMPLES/); next }
    inex && /^\.EX/ { inblock = 1; next }
    inex && /^\.EE/ { if (cont) print "a command ends in a backslash at .EE" > (dir "/broken"); inblock = 0; cont = 0; next }
    inex && inblock {
      line = $0
      gsub(/\\e/, "\\", line); gsub(/\\-/, "-", line)
      # a command line that ends in a backslash goes on on the next line
      if (cont) { print line > (dir "/cmd." n); cont = (line ~ /\\$/); next }
      if (line ~ /^\$ /) {
        n++; print substr(line, 3) > (dir "/cmd." n); printf "" > (dir "/exp." n)
        cont = (line ~ /\\$/); next
      }
      if (n) print line > (dir "/exp." n)
    }
    END { print n + 0 > (dir "/count") }' "$page"
  count=$(cat "$dir/count")
  if [ -f "$dir/broken" ]; then echo "FAIL: $page: $(cat "$dir/broken")"; fail=$((fail + 1)); fi
  if [ "$count" = 0 ]; then echo "FAIL: $page has no runnable examples"; fail=$((fail + 1)); fi
  i=1
  while [ "$i" -le "$count" ]; do
    cmd=$(cat "$dir/cmd.$i")
    if (cd "$dir" && PATH="$TOP/bin:$S:$PATH" LC_ALL=C sh -c "$cmd") >"$dir/out.$i" 2>"$dir/err.$i"; then
      if [ -s "$dir/exp.$i" ] && ! awk -f "$TOP/tests/numcmp.awk" "$dir/exp.$i" "$dir/out.$i" >"$dir/why.$i"; then
        echo "FAIL: $page: \$ $cmd"
        echo "  expected:"; sed 's/^/    /' "$dir/exp.$i"
        echo "  got:"; sed 's/^/    /' "$dir/out.$i"
        sed 's/^/  /' "$dir/why.$i"
        fail=$((fail + 1))
      else
        pass=$((pass + 1))
      fi
    else
      echo "FAIL: $page: \$ $cmd (status $?): $(head -c 300 "$dir/err.$i")"
      fail=$((fail + 1))
    fi
    i=$((i + 1))
  done
  rm -rf "$dir"
done
echo "man-examples: $pass passed, $fail failed"
[ "$fail" = 0 ]
