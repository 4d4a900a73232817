#!/bin/sh
# Runs the EXAMPLES of the man pages as tests. In each .EX/.EE block of the EXAMPLES
# section, a line "$ command" is run with sh (in a fresh directory per page, testdata/
# linked in, bin/ first on PATH) and must exit 0; the lines after it, up to the next
# command, are its expected stdout, compared by tests/numcmp.awk: the text around the
# numbers exactly, integers exactly, other numbers to a relative 1e-6 wherever they stand
# (`"variance_kept": 0.85197638578813117,` too): the last digits of a float that went
# through BLAS differ between OpenBLAS's kernels (see tests/numcmp.awk for the bound).
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
for page in "$@"; do
  # a page that is another's (.so, or generated from it) has that page's examples
  case $(head -n 1 "$page") in .so\ *|'.\" Generated from '*) continue ;; esac
  dir=$(mktemp -d "${TMPDIR:-/tmp}/slem-man.XXXXXX")
  ln -s "$TOP/testdata" "$dir/testdata"
  # split the examples into cmd.N and exp.N files
  awk -v dir="$dir" '
    /^\.SH / { inex = ($0 ~ /^\.SH EXAMPLES/); next }
    inex && /^\.EX/ { inblock = 1; next }
    inex && /^\.EE/ { inblock = 0; next }
    inex && inblock {
      line = $0
      gsub(/\\e/, "\\", line); gsub(/\\-/, "-", line)
      if (line ~ /^\$ /) { n++; print substr(line, 3) > (dir "/cmd." n); printf "" > (dir "/exp." n); next }
      if (n) print line > (dir "/exp." n)
    }
    END { print n + 0 > (dir "/count") }' "$page"
  count=$(cat "$dir/count")
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
