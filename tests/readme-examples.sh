#!/bin/sh
# Runs the README's examples as tests, as tests/man-examples.sh runs the man pages': the
# indented blocks of "A worked pipeline" and "A results page", each block in a fresh
# directory that holds the files it names (made from testdata/: the digits, their labels,
# qrels from the labels, the revisited Oxford/Paris lists), with the tools and the scripts
# under the names `make install` gives them first on PATH. A command goes on after a line
# that ends in '\' or '|'; each command must exit 0 and write the files it names (after
# -o, after '>', slem-plot-pr's OUT.png), not empty. The "Set up and run" block (make demo,
# make check, make install) is the build itself and is left to tests/cli-install.sh. First,
# that the README stays a front page (at most 250 lines) and that every relative link of it
# and of docs/*.md names a file and a heading that exist.
# Run from the top of the tree after make.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
S="$T/scripts"
mkdir -p "$S"
ln -s "$TOP/tools/slem-tune" "$S/slem-tune"
ln -s "$TOP/tools/plot-pr" "$S/slem-plot-pr"
ln -s "$TOP/tools/slem-scale" "$S/slem-parallel"
ln -s "$TOP/tools/slem-scale" "$S/slem-sbatch"
ln -s "$TOP/tools/slem-reindex" "$S/slem-reindex"
PATH=$S:$PATH

# ---- the README is a front page: at most 250 lines, every relative link found ----
lines=$(wc -l <"$TOP/README.md")
[ "$lines" -le 250 ] && ok || bad "README.md has $lines lines, more than 250: move a section to docs/"
# links: each [text](TARGET) of README.md and docs/*.md that is not a URL names a file that
# exists, relative to the page, and its #ANCHOR a heading of that file (GitHub's slugs:
# lower case, punctuation dropped, spaces as '-')
slugs() {
  awk '/^#+ / { s = tolower($0); sub(/^#+ /, "", s); gsub(/[^a-z0-9 _-]/, "", s)
    gsub(/ /, "-", s); print s }' "$1"
}
for page in "$TOP/README.md" "$TOP"/docs/*.md; do
  dir=$(dirname "$page")
  grep -o '](\([^)]*\))' "$page" | sed 's/^](//; s/)$//' | sort -u >"$T/links"
  while IFS= read -r link; do
    case $link in http://* | https://* | mailto:*) continue ;; esac
    file=${link%%#*}
    anchor=
    case $link in *'#'*) anchor=${link#*#} ;; esac
    target=$page
    [ -n "$file" ] && target=$dir/$file
    name=${page#"$TOP"/}
    [ -e "$target" ] || { bad "$name: link '$link' names no file"; continue; }
    if [ -n "$anchor" ] && ! slugs "$target" | grep -qxF -- "$anchor"; then
      bad "$name: link '$link' names no heading"; continue
    fi
    ok
  done <"$T/links"
done

# block TITLE: the commands of the indented block(s) of the README's section TITLE, one a
# line (continued lines joined), comments left out
block() {
  awk -v title="## $1" '
    /^## / { on = ($0 == title); next }
    !on || !/^    / { next }
    { line = substr($0, 5); sub(/^ +/, " ", line) }
    cmd != "" { cmd = cmd line } cmd == "" { cmd = line }
    cmd ~ /^#/ { cmd = ""; next }
    cmd ~ /\\$/ { sub(/\\$/, "", cmd); next }
    cmd ~ /\|$/ { cmd = cmd " "; next }
    { print cmd; cmd = "" }' "$TOP/README.md"
}

# run_block TITLE DIR: each command in DIR; its status and the files it names
run_block() {
  block "$1" >"$T/cmds"
  n=$(wc -l <"$T/cmds")
  [ "$n" -ge 3 ] && ok || bad "README, $1: $n commands found"
  while IFS= read -r cmd; do
    (cd "$2" && sh -c "$cmd") >"$T/out" 2>"$T/err" </dev/null ||
      { bad "README, $1: '$cmd' (status $?): $(head -c 400 "$T/err")"; continue; }
    outs=$(printf '%s\n' "$cmd" | grep -o -e ' -o [^ ]*' -e '> [^ ]*' | sed 's/^ *-o //; s/^> //')
    case $cmd in slem-plot-pr*) outs="$outs $(printf '%s' "$cmd" | awk '{ print $2 }')" ;; esac
    for f in $outs; do
      [ -s "$2/$f" ] && ok || bad "README, $1: '$cmd' wrote no $f"
    done
  done <"$T/cmds"
}

# ---- A worked pipeline: the digits under the README's names ----
W="$T/pipeline"
mkdir -p "$W"
cp "$D/negatives.fvecs" "$D/database.fvecs" "$D/queries.fvecs" "$D/queries.labels" "$W/"
cp "$D/database.labels" "$W/db.labels"
cp "$D/validation.fvecs" "$W/val.fvecs"
cp "$D/validation.labels" "$W/val.labels"
cp "$D/negatives.fvecs" "$W/heldout.fvecs"
# two shards of the negatives (records of 4 + 64 x 4 bytes), 20 exemplars of the queries
head -c $((300 * 260)) "$D/negatives.fvecs" >"$W/shard1.fvecs"
tail -c +$((300 * 260 + 1)) "$D/negatives.fvecs" >"$W/shard2.fvecs"
head -c $((20 * 260)) "$D/queries.fvecs" >"$W/exemplars.fvecs"
head -n 20 "$D/queries.labels" >"$W/exemplars.labels"
# qrels from the labels (rows by number, as the rankings name them), and a junk list
awk 'NR == FNR { db[NR - 1] = $0; n = NR; next }
  { for (i = 0; i < n; i++) if (db[i] == $0) print FNR - 1, 0, i, 1 }' \
  "$D/database.labels" "$D/queries.labels" >"$W/qrels.txt"
cp "$TOP/testdata/eval/junk.txt" "$W/junk.txt"
run_block "A worked pipeline" "$W"

# ---- Python: the block as one program where the pipeline ran (the package from the
# checkout, Debian's python3 and numpy, which make check installs; without numpy it is
# said and skipped, as make check needs numpy for the package alone): it must print the
# mAP and P@10 that slem-eval gives the pipeline's ranking.tsv (the same cache, lambda-rel
# 100, the same k 100) against the same qrels ----
awk '/^## / { on = ($0 == "## Python"); next } on && /^    / { print substr($0, 5) }' \
  "$TOP/README.md" >"$W/readme.py"
n=$(wc -l <"$W/readme.py")
[ "$n" -ge 3 ] && ok || bad "README, Python: $n lines found"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  if (cd "$W" && PYTHONPATH=$TOP/python san_python /usr/bin/python3 readme.py) >"$T/py" 2>"$T/err" </dev/null; then
    got=$(tr -d "{}',:" <"$T/py" | awk '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
      printf "%.6f %.6f", v["map"], v["P_10"] }')
    want=$(slem-eval --qrels "$W/qrels.txt" "$W/ranking.tsv" |
      awk '$1 == "mAP" { m = $2 } $1 == "P@10" { p = $2 } END { printf "%s %s", m, p }')
    [ "$got" = "$want" ] && ok || bad "README, Python: printed '$(head -c 200 "$T/py")', slem-eval: $want"
  else
    bad "README, Python: status $?: $(tail -c 400 "$T/err")"
  fi
else
  echo "readme-examples: no numpy for /usr/bin/python3: the README's Python block not run"
fi

# ---- A results page: rankings of the digits, pictures, the revisited lists ----
R="$T/results"
mkdir -p "$R/photos" "$R/out"
cp "$D/queries.labels" "$R/q.labels"
cp "$D/database.labels" "$R/db.labels"
cp "$D/queries.fvecs" "$R/q.fvecs"
cp "$D/database.fvecs" "$R/db.fvecs"
cp "$TOP/testdata/eval/cosine-full.tsv" "$R/cosine.tsv"
cp "$TOP/testdata/eval/slem-top100.tsv" "$R/slem.tsv"
cp "$TOP/testdata/eval/slem-top100.tsv" "$R/qe.tsv"
cp "$TOP/testdata/eval/cosine-full.tsv" "$R/run.tsv"
RV=$TOP/testdata/revisitop
cp "$RV/easy.txt" "$RV/hard.txt" "$RV/junk.txt" "$R/"
awk '{ print $1, 0, $2, 1 }' "$RV/easy.txt" "$RV/hard.txt" >"$R/qrels.txt"
# a few pictures named by ids (the others shown as tiles, said on stderr)
for id in 0 1 2; do printf 'GIF89a' >"$R/photos/$id.gif"; done
run_block "A results page" "$R"

finish readme-examples
