#!/bin/sh
# The scripts under hostile file names and titles: nothing the user gives runs, every name
# works; slem-tune passes ids, junk and qrels through and tunes against qrels that name
# queries by id. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
S=$TOP/tools
H="$T/we\"ird 'dir' \$(touch $T/pwned1) \`touch $T/pwned2\`"
mkdir -p "$H"
for f in negatives.fvecs validation.fvecs database.fvecs validation.labels database.labels queries.fvecs queries.labels queries.ids database.ids; do
  cp "$D/$f" "$H/$f"
done
tune() { "$S/slem-tune" -g 1000 -k 1000 -n "$H/negatives.fvecs" "$@" 2>"$T/err"; }
# labels, names with quotes and command substitutions
tune -q "$H/validation.fvecs" -d "$H/database.fvecs" --query-labels "$H/validation.labels" --db-labels "$H/database.labels" >"$T/t1" ||
  bad "slem-tune with hostile names: $(cat "$T/err")"
grep -q '^1000 .*0.692047  \*$' "$T/t1" && ok || bad "slem-tune output: $(cat "$T/t1")"
ls "$T" | grep -q pwned && bad "a name was run as a command" || ok

# the same pipeline by hand, with and without junk
slem-negstats -q --partial -o "$T/p.slem" "$D/negatives.fvecs"
slem-negstats -q --lambda-rel 1000 -o "$T/c.slem" "$T/p.slem"
slem-encode -q -c "$T/c.slem" -F fvecs -o "$T/db.fvecs" "$D/database.fvecs"
slem-encode -q -c "$T/c.slem" -F fvecs -o "$T/q.fvecs" "$D/queries.fvecs"
slem-match -q -k 1000 -d "$T/db.fvecs" -o "$T/r.tsv" "$T/q.fvecs"
awk 'NR % 7 == 0 { print $1, $3 }' "$T/r.tsv" >"$H/junk list.txt"
want=$(slem-eval -q --query-labels "$D/queries.labels" --db-labels "$D/database.labels" --junk "$H/junk list.txt" "$T/r.tsv" | awk -F '\t' '$1 == "mAP" { print $2 }')
tune -q "$H/queries.fvecs" -d "$H/database.fvecs" --query-labels "$H/queries.labels" --db-labels "$H/database.labels" --junk "$H/junk list.txt" >"$T/t2" ||
  bad "slem-tune with junk: $(cat "$T/err")"
got=$(awk '$1 == "1000" { print $3 }' "$T/t2")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "slem-tune with junk: mAP $got, slem-eval says $want"

# qrels that name queries and database rows by id, the ids given to slem-tune
paste -d ' ' "$D/queries.ids" "$D/queries.labels" >"$T/ql"
paste -d ' ' "$D/database.ids" "$D/database.labels" >"$T/dl"
awk 'NR == FNR { lab[$1] = $2; next } { for (q in lab) if (lab[q] == $2) print q, 0, $1, 1 }' "$T/ql" "$T/dl" >"$H/by id.qrels"
want=$(slem-eval -q --query-labels "$D/queries.labels" --db-labels "$D/database.labels" "$T/r.tsv" | awk -F '\t' '$1 == "mAP" { print $2 }')
tune -q "$H/queries.fvecs" -d "$H/database.fvecs" --qrels "$H/by id.qrels" --query-ids "$H/queries.ids" --db-ids "$H/database.ids" >"$T/t3" ||
  bad "slem-tune with qrels by id: $(cat "$T/err")"
got=$(awk '$1 == "1000" { print $3 }' "$T/t3")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "slem-tune with qrels by id: mAP $got, with labels $want"
# usage errors exit 2, and say so once
"$S/slem-tune" -g >/dev/null 2>"$T/err"; [ $? = 2 ] && ok || bad "slem-tune -g without a value"
"$S/slem-tune" --ap bad -n a -q b -d c --qrels "$H/by id.qrels" >/dev/null 2>"$T/err"; [ $? = 2 ] && ok || bad "slem-tune --ap bad"

# plot-pr: a title and labels with quotes, backquotes, $(...), gnuplot macros and newlines
slem-eval -q --query-labels "$D/queries.labels" --db-labels "$D/database.labels" --curve "$H/c \"q\".pr" "$T/r.tsv" >/dev/null
"$S/plot-pr" -t "T \"x\" \`touch $T/pwned3\` \$(touch $T/pwned4) @x
new line" "$H/o u t.png" "$H/c \"q\".pr=L \"1\" \`touch $T/pwned5\` \$(touch $T/pwned6)" 2>"$T/err" || bad "plot-pr: $(cat "$T/err")"
[ -s "$H/o u t.png" ] && head -c 4 "$H/o u t.png" | grep -q PNG && ok || bad "plot-pr made no PNG"
ls "$T" | grep -q pwned && bad "plot-pr ran a title or label" || ok
"$S/plot-pr" >/dev/null 2>&1; [ $? = 2 ] && ok || bad "plot-pr without arguments: not a usage error"
"$S/plot-pr" --bad x.png y >/dev/null 2>&1; [ $? = 2 ] && ok || bad "plot-pr --bad: not a usage error"
# OUT.png forgotten: the first curve is not taken for the output and written over; an output
# that is one of the curves (another name for it) neither
cp "$H/c \"q\".pr" "$T/keep.pr"
"$S/plot-pr" "$T/keep.pr" "$T/keep.pr" 2>"$T/err"; st=$?
[ $st = 2 ] && grep -q "keep.pr: the output is a .png file name" "$T/err" && cmp -s "$T/keep.pr" "$H/c \"q\".pr" && ok ||
  bad "plot-pr without OUT.png: status $st, $(cat "$T/err")"
cp "$T/keep.pr" "$T/keep.png"
ln -s keep.png "$T/link.png"
"$S/plot-pr" "$T/link.png" "$T/keep.png" 2>"$T/err"; st=$?
[ $st = 2 ] && grep -q "link.png: the output is also a curve file" "$T/err" && cmp -s "$T/keep.png" "$T/keep.pr" && ok ||
  bad "plot-pr over its own curve: status $st, $(cat "$T/err")"

# plot-pr: the title and labels reach the PNG as given, whatever TMPDIR holds: the PNG equals,
# byte for byte, one drawn by gnuplot from the same settings with the texts passed as
# arguments (gnuplot -c: never parsed); an apostrophe in TMPDIR once lost them
TD="$T/tmp 'a' \$HOME \$(touch $T/pwned7)"
mkdir -p "$TD"
printf '0\t1\n0.5\t0.8\n1\t0.25\n' >"$T/plain.pr"
title="it's \"q\" \$(touch $T/pwned8) \`touch $T/pwned9\` back\\slash @x"
label="l'1 \"2\" \$(x) \\n"
cat >"$T/ref.gp" <<'GP'
set terminal pngcairo size 800,600 noenhanced font ",11"
set output ARG1
set title ARG2
set xlabel "recall"
set ylabel "interpolated precision"
set xrange [0:1]
set yrange [0:1.02]
set grid
set key bottom left
plot ARG3 using 1:2 with linespoints title ARG4
GP
(cd "$T" && gnuplot -c ref.gp ref.png "$title" plain.pr "$label") || bad "gnuplot -c: the reference PNG"
TMPDIR=$TD "$S/plot-pr" -t "$title" "$T/p1.png" "$T/plain.pr=$label" 2>"$T/err" || bad "plot-pr, TMPDIR with quotes: $(cat "$T/err")"
cmp -s "$T/p1.png" "$T/ref.png" && ok || bad "plot-pr: the title or a label was changed on the way to gnuplot"
(cd "$T" && gnuplot -c ref.gp ref2.png "precision-recall" plain.pr "plain.pr") || bad "gnuplot -c: the second reference PNG"
TMPDIR=$TD "$S/plot-pr" "$T/p2.png" "$T/plain.pr" 2>"$T/err" || bad "plot-pr, default title: $(cat "$T/err")"
cmp -s "$T/p2.png" "$T/ref2.png" && ok || bad "plot-pr: the default title or the file name as label changed"
[ -z "$(ls -A "$TD")" ] && ok || bad "plot-pr left files in TMPDIR: $(ls -A "$TD")"
ls "$T" | grep -q pwned && bad "plot-pr ran text of TMPDIR, a title or a label" || ok
# an output that is a directory is refused before any work, nothing left in it or beside it
mkdir -p "$T/outdir"
expect_fail "plot-pr, a directory as output" 1 "outdir: is a directory" "$T/outdir/x" "$S/plot-pr" "$T/outdir" "$T/plain.pr"
[ -z "$(ls -A "$T/outdir")" ] && ok || bad "plot-pr wrote into the directory given as output: $(ls -A "$T/outdir")"
expect_fail "plot-pr, no directory for the output" 1 "no such writable directory" - "$S/plot-pr" "$T/none/o.png" "$T/plain.pr"
# gnuplot failing: status 1, no PNG and no temporary file
mkdir -p "$T/fake"
printf '#!/bin/sh\necho "fake gnuplot: broken" >&2\nexit 1\n' >"$T/fake/gnuplot"
chmod +x "$T/fake/gnuplot"
expect_fail "plot-pr, gnuplot fails" 1 "fake gnuplot: broken" "$T/p3.png" env PATH="$T/fake:$PATH" "$S/plot-pr" "$T/p3.png" "$T/plain.pr"
# slem-tune -o: a directory is refused before any work (it once left DIR/DIR.tmp.PID), an
# output without a directory too
expect_fail "slem-tune -o DIR" 1 "outdir: is a directory" "$T/outdir/x" "$S/slem-tune" -g 1000 -o "$T/outdir" \
  -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
[ -z "$(ls -A "$T/outdir")" ] && ok || bad "slem-tune wrote into the directory given as -o: $(ls -A "$T/outdir")"
expect_fail "slem-tune -o in no directory" 1 "no such writable directory" - "$S/slem-tune" -g 1000 -o "$T/none/c.slem" \
  -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
TMPDIR=$TD "$S/slem-tune" -g 1000 -k 100 -o "$T/best.slem" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels" >"$T/out" 2>"$T/err" || bad "slem-tune -o: $(cat "$T/err")"
slem-negstats --info "$T/best.slem" >/dev/null 2>&1 && ok || bad "slem-tune -o: no cache written"
ls -a "$T" | grep -q '\.tmp\.' && bad "slem-tune left a temporary file" || ok
[ -z "$(ls -A "$TD")" ] && ok || bad "slem-tune left files in TMPDIR: $(ls -A "$TD")"

# a locale whose decimal point is a comma (built here when the system has its source):
# plot-pr refused every curve ("line 3: not recall, precision": awk read 0.834441 as 0)
# and slem-tune --alpha 0.5 passed "0,5" to slem-encode (every alpha row failed)
if command -v localedef >/dev/null 2>&1 && mkdir -p "$T/loc" && localedef -i de_DE -f UTF-8 "$T/loc/de_DE.UTF-8" >/dev/null 2>&1; then
  LOCPATH=$T/loc LC_ALL=de_DE.UTF-8 "$S/plot-pr" "$T/de.png" "$T/plain.pr" 2>"$T/err" && [ -s "$T/de.png" ] && ok ||
    bad "plot-pr under LC_ALL=de_DE.UTF-8: $(cat "$T/err")"
  LOCPATH=$T/loc LC_ALL=de_DE.UTF-8 "$S/slem-tune" -g 1000 -k 100 --alpha 0.5 -n "$D/negatives.fvecs" -q "$D/validation.fvecs" \
    -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels" >"$T/de.out" 2>"$T/err"
  st=$?
  [ "$st" = 0 ] && grep -q '^alpha=0.5 ' "$T/de.out" && ! grep -q failed "$T/de.out" && ok ||
    bad "slem-tune --alpha under LC_ALL=de_DE.UTF-8: status $st: $(cat "$T/de.out" "$T/err" | head -c 400)"
else
  echo "cli-scripts: no de_DE locale could be built (localedef, the locales' sources): the comma-decimal cases are skipped"
fi

# make demo from a tree whose path holds spaces, quotes, $(...) and a glob: no path is split
# or run (the labels' options were once an unquoted string)
R="$T/tree 'x' \"y\" \$(touch $T/pwned10) *"
mkdir -p "$R"
for f in bin scripts tools testdata; do ln -s "$TOP/$f" "$R/$f"; done
(cd "$R" && sh scripts/demo.sh) >"$T/out" 2>"$T/err" && grep -q "wrote .*demo-report.html" "$T/out" && ok ||
  bad "scripts/demo.sh in a tree named with quotes and spaces: $(tail -c 300 "$T/err")"
[ -s "$R/demo-report.html" ] && ok || bad "scripts/demo.sh in a tree named with quotes: no report"
ls "$T" | grep -q pwned && bad "scripts/demo.sh ran a part of the tree's path" || ok
# every script: --version is the tools' version under the script's name, --help names the
# name it was called by (a link of another name too), --quiet (-q for slem-plot-pr) is taken
ver=$(slem-match --version | sed -n '1s/^[^ ]* //p')
L="$T/links"
mkdir -p "$L"
for s in slem-tune:slem-tune plot-pr:slem-plot-pr slem-scale:slem-parallel slem-scale:slem-sbatch slem-reindex:slem-reindex; do
  src=${s%%:*} name=${s#*:}
  ln -sf "$S/$src" "$L/$name"
  for cmd in "$S/$name" "$L/$name"; do
    [ -e "$cmd" ] || continue
    n=${cmd##*/}
    for v in --version -V; do
      "$cmd" $v >"$T/out" 2>"$T/err"
      st=$?
      if [ "$st" = 0 ] && [ "$(head -1 "$T/out")" = "$n $ver" ] && grep -q '^BLAS: ' "$T/out" && [ ! -s "$T/err" ]; then ok
      else bad "$n $v (status $st): $(head -2 "$T/out") $(head -2 "$T/err")"; fi
    done
    "$cmd" --help >"$T/out" 2>"$T/err"
    st=$?
    if [ "$st" = 0 ] && grep -q "^Usage: $n " "$T/out" && ! grep -qE '(scripts|tools)/' "$T/out" && [ ! -s "$T/err" ]; then ok
    else bad "$n --help (status $st): $(grep Usage "$T/out")"; fi
    "$cmd" -h | cmp -s - "$T/out" && ok || bad "$n -h differs from --help"
  done
done
# --quiet: the informational lines go, the results stay
tune -q "$H/validation.fvecs" -d "$H/database.fvecs" --query-labels "$H/validation.labels" \
  --db-labels "$H/database.labels" -g "1 1000" --quiet -o "$T/best.slem" >"$T/t3" || bad "slem-tune --quiet: $(cat "$T/err")"
grep -q '^1000 .*\*$' "$T/t3" && ok || bad "slem-tune --quiet printed: $(cat "$T/t3")"
grep -q 'best cache' "$T/err" && bad "slem-tune --quiet: $(cat "$T/err")" || ok
tune -q "$H/validation.fvecs" -d "$H/database.fvecs" --query-labels "$H/validation.labels" \
  --db-labels "$H/database.labels" -g "1 1000" -o "$T/best.slem" >"$T/t3" || bad "slem-tune -o: $(cat "$T/err")"
grep -q 'best cache' "$T/err" && ok || bad "slem-tune without --quiet: $(cat "$T/err")"
"$S/slem-reindex" --quiet -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -o "$T/ri.tsv" "$T/index" >"$T/out" 2>"$T/err" &&
  [ ! -s "$T/err" ] && ok || bad "slem-reindex --quiet, no segment: $(cat "$T/err")"
"$S/slem-reindex" -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -o "$T/ri.tsv" "$T/index" >"$T/out" 2>"$T/err" &&
  grep -q 'no segment yet' "$T/err" && ok || bad "slem-reindex, no segment: $(cat "$T/err")"
if command -v gnuplot >/dev/null 2>&1; then
  printf '0\t1\n1\t0.5\n' >"$T/c.pr"
  "$S/plot-pr" -q -t "quiet" "$T/q.png" "$T/c.pr" 2>"$T/err" && [ -s "$T/q.png" ] && [ ! -s "$T/err" ] && ok ||
    bad "plot-pr -q: $(cat "$T/err")"
fi
"$S/plot-pr" --no-such >/dev/null 2>&1
[ $? = 2 ] && ok || bad "plot-pr: a bad option is a usage error"

finish cli-scripts
