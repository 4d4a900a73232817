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
# ground truth from a pipe (a FIFO here; <(...) in bash): slem-tune copies it once, so it
# is taken (refused before as "cannot read it"), with the same table
mkfifo "$T/vl.fifo"
cat "$H/validation.labels" >"$T/vl.fifo" &
writer=$!
tune -q "$H/validation.fvecs" -d "$H/database.fvecs" --query-labels "$T/vl.fifo" --db-labels "$H/database.labels" >"$T/t1p" ||
  bad "slem-tune, labels from a FIFO: $(cat "$T/err")"
kill "$writer" 2>/dev/null # still waiting for a reader when the FIFO was not read
wait "$writer" 2>/dev/null
cmp -s "$T/t1" "$T/t1p" && ok || bad "slem-tune, labels from a FIFO: $(cat "$T/t1p")"
# slem-parallel's tasks open their inputs by name, some more than once: a FIFO is refused
# by name and for that reason, before any work (status 1)
mkfifo "$T/q.fifo"
"$S/slem-parallel" -N 2 -n "$D/negatives.fvecs" -q "$T/q.fifo" -d "$D/database.fvecs" -k 5 \
  -o "$T/fifo.tsv" --quiet 2>"$T/err"
st=$?
[ "$st" = 1 ] && grep -q "q.fifo: not a regular file" "$T/err" && [ ! -e "$T/fifo.tsv" ] && ok ||
  bad "slem-parallel, a FIFO as -q: status $st: $(cat "$T/err")"

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
# a curve file whose name holds '=' (it was cut at the first '=': 'a: cannot read'), with a
# label, and whole without one (its name the label); a label holding '=' is still one
cp "$T/plain.pr" "$T/lambda=1.pr"
(cd "$T" && gnuplot -c ref.gp ref3.png "precision-recall" plain.pr "L=1") || bad "gnuplot -c: the third reference PNG"
"$S/plot-pr" "$T/p5.png" "$T/lambda=1.pr=L=1" 2>"$T/err" && cmp -s "$T/p5.png" "$T/ref3.png" && ok ||
  bad "plot-pr, a curve named lambda=1.pr with a label: $(cat "$T/err")"
"$S/plot-pr" "$T/p5.png" "$T/plain.pr=L=1" 2>"$T/err" && cmp -s "$T/p5.png" "$T/ref3.png" && ok ||
  bad "plot-pr, a label holding '=': $(cat "$T/err")"
(cd "$T" && gnuplot -c ref.gp ref4.png "precision-recall" plain.pr "lambda=1.pr") || bad "gnuplot -c: the fourth reference PNG"
"$S/plot-pr" "$T/p6.png" "$T/lambda=1.pr" 2>"$T/err" && cmp -s "$T/p6.png" "$T/ref4.png" && ok ||
  bad "plot-pr, a curve named lambda=1.pr: $(cat "$T/err")"
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
# a relative TMPDIR, and one that starts with '-' (here ./-up.), are directories: the first
# failed slem-parallel ("step negstats did not finish": the run works in other directories),
# the second reached mktemp, head, tail, cat and rm as options (-u: a dry run, no directory)
for td in rel -up.; do
  mkdir -p "$T/$td"
  (cd "$T" && TMPDIR=$td "$S/slem-parallel" --quiet -N 2 -k 3 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" \
    -d "$D/database.fvecs" -o "$T/td.tsv") 2>"$T/err" && [ -s "$T/td.tsv" ] && ok ||
    bad "slem-parallel, TMPDIR=$td: $(cat "$T/err")"
  (cd "$T" && TMPDIR=$td "$S/slem-tune" -g 1000 -k 100 -n "$D/negatives.fvecs" -q "$D/validation.fvecs" \
    -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels") >"$T/out" 2>"$T/err" &&
    ok || bad "slem-tune, TMPDIR=$td: $(cat "$T/err")"
  (cd "$T" && TMPDIR=$td "$S/plot-pr" "$T/td.png" "$T/plain.pr") 2>"$T/err" && [ -s "$T/td.png" ] && ok ||
    bad "plot-pr, TMPDIR=$td: $(cat "$T/err")"
  [ -z "$(ls -A "$T/$td")" ] && ok || bad "a script left files in TMPDIR=$td: $(ls -A "$T/$td")"
  rm -f "$T/td.tsv" "$T/td.png"
done

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

# a typo of a long option: the nearest option named, as the C tools do (cmd/cli.c: an edit
# distance under 3 and under half the word), status 2; a word near none, or an option of
# the other engine, named alone
typo() { # typo SCRIPT ARG WANT
  "$S/$1" "$2" x >/dev/null 2>"$T/err"
  st=$?
  if [ $st = 2 ] && [ "$(cat "$T/err")" = "$3" ]; then ok; else bad "$1 $2: status $st, '$(cat "$T/err")'"; fi
}
typo slem-tune --grdi "slem-tune: unknown argument '--grdi'; did you mean '--grid'? (see --help)"
typo slem-tune --qrles "slem-tune: unknown argument '--qrles'; did you mean '--qrels'? (see --help)"
typo slem-tune --quite "slem-tune: unknown argument '--quite'; did you mean '--quiet'? (see --help)"
typo slem-tune --zz "slem-tune: unknown argument '--zz' (see --help)"
typo plot-pr --titel "plot-pr: unknown option '--titel'; did you mean '--title'? (see --help)"
typo slem-reindex --rebiuld "slem-reindex: unknown option '--rebiuld'; did you mean '--rebuild'? (see --help)"
typo slem-sbatch --partiton "slem-sbatch: unknown argument '--partiton'; did you mean '--partition'? (see --help)"
typo slem-parallel --partiton "slem-parallel: unknown argument '--partiton' (see --help)"
typo slem-parallel --sshlogfile "slem-parallel: unknown argument '--sshlogfile'; did you mean '--sshloginfile'? (see --help)"

# the engines are the drivers present, engines/NAME.sh beside slem-scale (libexec/slem/engines
# once installed), each chosen by its engine_command: a copy of slem-scale with a third
# driver runs that engine by its name, lists it among the names it may be run as, shows its
# options in --help and suggests them; with a driver gone, its name is refused
EG="$T/engines-copy"
mkdir -p "$EG/engines"
cp "$S/slem-scale" "$EG/"
cp "$S/engines/parallel.sh" "$S/engines/slurm.sh" "$EG/engines/"
cat >"$EG/engines/fake.sh" <<'EOF'
# slem-scale's engine Fake (a test's); --help:
# Fake (slem-fake):
#   --fake-opt X       an option of the fake engine

engine_command=slem-fake
engine_flags="--fake-flag"
engine_task=""
fake=""
engine_option() {
  case $1 in
    --fake-opt) fake=$2; taken=2 ;;
    --fake-flag) taken=1 ;;
    *) return 1 ;;
  esac
}
engine_validate() { [ "$fake" = x ] || die "--fake-opt: x"; }
engine_check() { fail "the fake engine took $fake and is not installed"; }
engine_previous() { :; }
engine_submit() { :; }
engine_wait() { :; }
EOF
for n in slem-fake slem-nope slem-sbatch slem-parallel; do ln -s slem-scale "$EG/$n"; done
"$EG/slem-nope" -N 2 >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] && [ "$(cat "$T/err")" = "slem-nope: run me as slem-fake, slem-parallel or slem-sbatch" ] && ok ||
  bad "a name of no engine: status $st, '$(cat "$T/err")'"
"$EG/slem-fake" -N 2 -k 3 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" \
  -o "$T/fake.tsv" --fake-opt x --fake-flag >/dev/null 2>"$T/err"
st=$?
[ $st = 1 ] && [ "$(cat "$T/err")" = "slem-fake: the fake engine took x and is not installed" ] && [ ! -e "$T/fake.tsv" ] &&
  ok || bad "the fake engine's driver, chosen by its name: status $st, '$(cat "$T/err")'"
"$EG/slem-fake" -N 2 --fake-opt y >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] && [ "$(cat "$T/err")" = "slem-fake: --fake-opt: x" ] && ok ||
  bad "the fake engine's check of its option: status $st, '$(cat "$T/err")'"
"$EG/slem-fake" --fake-otp x >/dev/null 2>"$T/err"
[ "$(cat "$T/err")" = "slem-fake: unknown argument '--fake-otp'; did you mean '--fake-opt'? (see --help)" ] && ok ||
  bad "the fake engine's option not suggested: '$(cat "$T/err")'"
"$EG/slem-parallel" --fake-otp x >/dev/null 2>"$T/err"
[ "$(cat "$T/err")" = "slem-parallel: unknown argument '--fake-otp' (see --help)" ] && ok ||
  bad "slem-parallel suggested another engine's option: '$(cat "$T/err")'"
"$EG/slem-fake" --help >"$T/out" 2>"$T/err"
grep -q '^Usage: slem-fake ' "$T/out" && grep -q '^Fake (slem-fake):' "$T/out" && grep -q '^Slurm (slem-sbatch):' "$T/out" &&
  [ "$(grep -v '^Fake (slem-fake):$' "$T/out" | grep -v '^  --fake-opt X ' | sed 's/^Usage: slem-fake /Usage: slem-parallel /')" = \
    "$("$S/slem-parallel" --help)" ] && ok || bad "slem-fake --help: $(head -3 "$T/out") $(cat "$T/err")"
rm "$EG/engines/slurm.sh"
"$EG/slem-sbatch" -N 2 >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] && [ "$(cat "$T/err")" = "slem-sbatch: run me as slem-fake or slem-parallel" ] && ok ||
  bad "the name of a driver gone: status $st, '$(cat "$T/err")'"

# file names that start with '-' (given relative to the directory they are in), and a
# hostile environment: POSIXLY_CORRECT (an option after a file name is then a file name)
# and CDPATH (a cd goes to a directory of the same name there, and prints it). Every name
# stays a file and every cd goes where the script means: the same results as plain names.
# They once failed: slem-reindex with status 2 (the tools took '-q.fvecs' for an option),
# slem-tune with an unknown option, or --query-ids taken for a second query file,
# slem-parallel --workdir with "cannot create", and a script run by a relative name found
# no tools beside it.
DD="$T/dash"
mkdir -p "$DD" "$T/cdpath/wd" "$T/cdpath/tools"
echo "not the run's" >"$T/cdpath/wd/mine"
for f in negatives.fvecs queries.fvecs database.fvecs validation.fvecs; do cp "$D/$f" "$DD/-$f"; done
cp "$D/validation.labels" "$D/database.labels" "$D/queries.labels" "$D/queries.ids" "$D/database.ids" "$DD/"
"$S/slem-reindex" -k 5 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -o "$T/ri-ref.tsv" "$T/index-ref" "$D/database.fvecs" \
  2>"$T/err" || bad "slem-reindex, plain names: $(cat "$T/err")"
(cd "$DD" && POSIXLY_CORRECT=1 CDPATH="$T/cdpath" "$S/slem-reindex" -k 5 -n -negatives.fvecs -q -queries.fvecs \
  -o -r.tsv -- -index -database.fvecs) >"$T/out" 2>"$T/err" && cmp -s "$DD/-r.tsv" "$T/ri-ref.tsv" && ok ||
  bad "slem-reindex, names starting with '-': status $?: $(cat "$T/err")"
nobin=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$BIN" | grep -v '^$' | paste -sd: -)
if PATH=$nobin command -v slem-encode >/dev/null 2>&1; then
  echo "cli-scripts: slem tools installed on PATH: the CDPATH test of finding the tools is weak"
fi
rm -f "$DD/-r.tsv"
(cd "$TOP" && PATH=$nobin CDPATH="$T/cdpath" tools/slem-reindex -k 5 -n "$D/negatives.fvecs" \
  -q "$D/queries.fvecs" -o "$DD/-r.tsv" "$T/index-cd" "$D/database.fvecs") >"$T/out" 2>"$T/err" &&
  cmp -s "$DD/-r.tsv" "$T/ri-ref.tsv" && ok || bad "slem-reindex under CDPATH, by a relative name: $(cat "$T/err")"
"$S/slem-tune" -g 1000 -k 100 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/queries.labels" --db-labels "$D/database.labels" --query-ids "$D/queries.ids" \
  --db-ids "$D/database.ids" >"$T/tune-ref" 2>"$T/err" || bad "slem-tune, plain names: $(cat "$T/err")"
(cd "$DD" && POSIXLY_CORRECT=1 CDPATH="$T/cdpath" "$S/slem-tune" -g 1000 -k 100 -n -negatives.fvecs -q -queries.fvecs \
  -d -database.fvecs --query-labels queries.labels --db-labels database.labels --query-ids queries.ids \
  --db-ids database.ids) >"$T/out" 2>"$T/err" && cmp -s "$T/out" "$T/tune-ref" && ok ||
  bad "slem-tune, names starting with '-' under POSIXLY_CORRECT: $(cat "$T/err")"
if command -v parallel >/dev/null 2>&1; then
  "$S/slem-parallel" -N 2 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -k 5 \
    -o "$T/par-ref.tsv" --quiet 2>"$T/err" || bad "slem-parallel, plain names: $(cat "$T/err")"
  (cd "$DD" && POSIXLY_CORRECT=1 CDPATH="$T/cdpath" "$S/slem-parallel" -N 2 -n -negatives.fvecs -q -queries.fvecs \
    -d -database.fvecs -k 5 -o -par.tsv --workdir wd --quiet) >"$T/out" 2>"$T/err" &&
    cmp -s "$DD/-par.tsv" "$T/par-ref.tsv" && ok ||
    bad "slem-parallel, names starting with '-', a relative --workdir under CDPATH: $(cat "$T/err")"
  [ "$(ls -A "$T/cdpath/wd")" = mine ] && [ ! -e "$DD/wd" ] && ok ||
    bad "slem-parallel under CDPATH: the work directory went elsewhere: $(ls -A "$T/cdpath/wd")"
  # a work directory named '-': cd - went to OLDPWD (and printed it), the run failed there
  mkdir -p "$DD/-" "$T/oldpwd"
  echo "mine" >"$DD/-/notes"
  (cd "$DD" && OLDPWD="$T/oldpwd" "$S/slem-parallel" -N 2 -n -negatives.fvecs -q -queries.fvecs \
    -d -database.fvecs -k 5 -o -par2.tsv --workdir - --quiet) >"$T/out" 2>"$T/err" &&
    cmp -s "$DD/-par2.tsv" "$T/par-ref.tsv" && ok || bad "slem-parallel --workdir -: $(cat "$T/err")"
  [ "$(ls -A "$DD/-")" = notes ] && [ -z "$(ls -A "$T/oldpwd")" ] && ok ||
    bad "slem-parallel --workdir -: left $(ls -A "$DD/-") in it, $(ls -A "$T/oldpwd") in OLDPWD"
fi

# slem-sbatch when sbatch refuses a step (a fake sbatch: no cluster needed). Refused at the
# first step, no job queued: status 1, and nothing left beside the ranking (a new work
# directory was once left by every refused run, unnamed). Refused after a job was queued:
# the work directory is kept, names the job in its 'queued' (the next run waits for it) and
# is named in the message
mkdir -p "$T/sb" "$T/fakesb"
printf '#!/bin/sh\necho "fake sbatch: invalid partition" >&2\nexit 1\n' >"$T/fakesb/sbatch"
chmod +x "$T/fakesb/sbatch"
expect_fail "slem-sbatch, sbatch refuses" 1 "invalid partition" "$T/sb/r.tsv" env PATH="$T/fakesb:$PATH" \
  "$S/slem-sbatch" -N 2 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/sb/r.tsv" -k 5
[ -z "$(ls -A "$T/sb")" ] && ok || bad "slem-sbatch, sbatch refuses: left $(ls -A "$T/sb")"
cat >"$T/fakesb/sbatch" <<'EOF2'
#!/bin/sh
[ -e "${0%/*}/queued" ] && { echo "fake sbatch: queue full" >&2; exit 1; }
: >"${0%/*}/queued"
echo "4242;cluster"
EOF2
expect_fail "slem-sbatch, sbatch refuses the second step" 1 "queue full" "$T/sb/r.tsv" env PATH="$T/fakesb:$PATH" \
  "$S/slem-sbatch" -N 2 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/sb/r.tsv" -k 5
w=$(find "$T/sb" -maxdepth 1 -name '.slem-work.*')
[ -n "$w" ] && [ "$(cat "$w/queued" 2>/dev/null)" = 4242 ] && grep -qF -- "--workdir '$w' --wait" "$T/err" && ok ||
  bad "slem-sbatch, a step refused after a job was queued: $(cat "$T/err"); $(ls -A "$T/sb" "$w")"

# two runs of slem-parallel in one work directory at once (cron firing twice): the second
# does nothing, says so, and exits with 75; the first's directory is left as it was. Once
# both ran, the second failed part way or succeeded, saying "run again to resume" about a
# directory the first had removed
if command -v parallel >/dev/null 2>&1 && command -v flock >/dev/null 2>&1; then
  mkdir -p "$T/busywd"
  echo "mine" >"$T/busywd/notes"
  (exec 7<"$T/busywd" && flock 7 && exec sleep 30) & # the sleep holds the lock: kill ends it
  holder=$!
  i=0
  while flock -n "$T/busywd" true 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  expect_fail "slem-parallel, the work directory of a running run" 75 "another run, still running" "$T/busy.tsv" \
    "$S/slem-parallel" -N 2 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -k 5 \
    -o "$T/busy.tsv" --workdir "$T/busywd"
  [ "$(ls -A "$T/busywd")" = notes ] && ok || bad "slem-parallel, a locked work directory was changed: $(ls -A "$T/busywd")"
  kill $holder 2>/dev/null
  wait $holder 2>/dev/null
  "$S/slem-parallel" -N 2 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -k 5 \
    -o "$T/busy.tsv" --workdir "$T/busywd" --quiet 2>"$T/err" && cmp -s "$T/busy.tsv" "$T/par-ref.tsv" &&
    [ "$(ls -A "$T/busywd")" = notes ] && ok || bad "slem-parallel, the work directory once free: $(cat "$T/err")"
fi

# an output that is one of the script's inputs (the tools refuse that, but the scripts gave
# them copies or links): refused before any work with status 2, the input as it was. They
# once wrote the ranking (or the best cache) over the queries, status 0
cp "$D/queries.fvecs" "$DD/myq.fvecs"
cp "$D/queries.labels" "$DD/-ql.labels"
ln -sf myq.fvecs "$DD/link.tsv"
expect_fail "slem-reindex -o QUERIES" 2 "is also an input" - "$S/slem-reindex" -k 3 -n "$D/negatives.fvecs" \
  -q "$DD/myq.fvecs" -o "$DD/./myq.fvecs" "$T/index-in" "$D/database.fvecs"
[ ! -e "$T/index-in" ] && ok || bad "slem-reindex -o QUERIES: made the index"
expect_fail "slem-tune -o QUERIES" 2 "is also an input" - "$S/slem-tune" -g 1000 -k 10 -n "$D/negatives.fvecs" \
  -q "$DD/myq.fvecs" -d "$D/database.fvecs" --query-labels "$DD/-ql.labels" --db-labels "$D/database.labels" -o "$DD/myq.fvecs"
(cd "$DD" && "$S/slem-tune" -g 1000 -k 10 -n "$D/negatives.fvecs" -q myq.fvecs -d "$D/database.fvecs" \
  --query-labels -ql.labels --db-labels "$D/database.labels" -o ./-ql.labels) >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q "is also an input" "$T/err" && ok || bad "slem-tune -o LABELS (named '-ql.labels'): $(cat "$T/err")"
if command -v parallel >/dev/null 2>&1; then
  expect_fail "slem-parallel -o QUERIES, through a link" 2 "is also an input" - "$S/slem-parallel" -N 2 -k 5 \
    -n "$D/negatives.fvecs" -q "$DD/myq.fvecs" -d "$D/database.fvecs" -o "$DD/link.tsv"
fi
if command -v parallel >/dev/null 2>&1; then
  # a failed step names the tasks of this run only: the log of a task that the engine did
  # not start this time (-j 1: task 0 fails first, on a text database, which cannot be cut)
  # was reported as this run's failure, with an earlier run's message (planted here)
  slem-encode -q -c "$T/c.slem" -F text -o "$T/db.txt" "$D/database.fvecs"
  for run in 1 2; do
    "$S/slem-parallel" -N 2 -j 1 -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$T/db.txt" -k 5 \
      -o "$T/stale.tsv" --workdir "$T/stale" --quiet >"$T/out" 2>"$T/err"
    st=$?
    [ $run = 1 ] && echo "an earlier run's failure" >"$T/stale/log/encode.1.log"
  done
  [ $st = 1 ] && grep -q "step encode, task 0 failed" "$T/err" && ! grep -q "task 1\|an earlier run" "$T/err" && ok ||
    bad "slem-parallel, a failed step: status $st, reported $(cat "$T/err")"
  # the tools name the database by its link in the work directory: the report gives the
  # user's name beside it
  grep -qF "($T/stale/in/database.txt is $T/db.txt)" "$T/err" && ok ||
    bad "slem-parallel, a failed step: the user's file is not named: $(cat "$T/err")"
fi
# a -k above slem-match's 2^20 (or 0 to slem-tune) is a usage error before any work: it was
# refused by the match alone, after the statistics and the encoding had run
mkdir -p "$T/bigk"
expect_fail "slem-reindex -k 1048577" 2 "at most 1048576" "$T/bigk/r.tsv" "$S/slem-reindex" -k 1048577 \
  -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -o "$T/bigk/r.tsv" "$T/bigk/index" "$D/database.fvecs"
expect_fail "slem-tune -k 0" 2 "from 1 to 1048576" - "$S/slem-tune" -g 1000 -k 0 -n "$D/negatives.fvecs" \
  -q "$D/queries.fvecs" -d "$D/database.fvecs" --query-labels "$D/queries.labels" --db-labels "$D/database.labels"
if command -v parallel >/dev/null 2>&1; then
  expect_fail "slem-parallel -k 1048577" 2 "from 1 to 1048576" "$T/bigk/r.tsv" "$S/slem-parallel" -N 2 -k 1048577 \
    -n "$D/negatives.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/bigk/r.tsv"
fi
[ -z "$(ls -A "$T/bigk")" ] && ok || bad "a -k too large: the scripts left $(ls -A "$T/bigk")"
cmp -s "$DD/myq.fvecs" "$D/queries.fvecs" && cmp -s "$DD/-ql.labels" "$D/queries.labels" && ok ||
  bad "an output named as an input: the input was written over"

# An output named through a symbolic link, taken as the tools take one: the file the link
# leads to is replaced (keeping its mode) and the link stays (slem-tune's and plot-pr's mv
# replaced the link by a regular file and left its file as it was); a dangling link creates
# the file it names; another user's link in a sticky world-writable directory (/tmp) is
# refused before any work; a FIFO is written in place (mv replaced it)
mkdir -p "$T/ol/sub"
tune_o() { "$S/slem-tune" -g 1000 -k 100 -o "$1" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels" >/dev/null 2>"$T/err"; }
echo old >"$T/ol/cache.slem"
chmod 640 "$T/ol/cache.slem"
ln -s cache.slem "$T/ol/link.slem"
tune_o "$T/ol/link.slem" || bad "slem-tune -o LINK: $(cat "$T/err")"
[ -L "$T/ol/link.slem" ] && slem-negstats --info "$T/ol/cache.slem" >/dev/null 2>&1 &&
  [ "$(stat -c %a "$T/ol/cache.slem")" = 640 ] && ok || bad "slem-tune -o LINK: the link replaced, or its file not written: $(ls -l "$T/ol")"
ln -s sub/new.slem "$T/ol/dangling.slem"
tune_o "$T/ol/dangling.slem" || bad "slem-tune -o DANGLING-LINK: $(cat "$T/err")"
[ -L "$T/ol/dangling.slem" ] && slem-negstats --info "$T/ol/sub/new.slem" >/dev/null 2>&1 && ok ||
  bad "slem-tune -o DANGLING-LINK: the file it names not created: $(ls -l "$T/ol" "$T/ol/sub")"
echo old >"$T/ol/p.png"
ln -s p.png "$T/ol/link.png"
"$S/plot-pr" "$T/ol/link.png" "$T/plain.pr" 2>"$T/err" || bad "plot-pr LINK: $(cat "$T/err")"
[ -L "$T/ol/link.png" ] && cmp -s "$T/ol/p.png" "$T/ref2.png" && ok || bad "plot-pr LINK: the link replaced, or its file not written"
mkfifo "$T/ol/fifo.png"
timeout 10 cat "$T/ol/fifo.png" >"$T/ol/from-fifo.png" &
reader=$!
"$S/plot-pr" "$T/ol/fifo.png" "$T/plain.pr" 2>"$T/err" || bad "plot-pr FIFO: $(cat "$T/err")"
wait "$reader"
[ -p "$T/ol/fifo.png" ] && cmp -s "$T/ol/from-fifo.png" "$T/ref2.png" && ok || bad "plot-pr FIFO: the FIFO replaced, or nothing written to it"
[ -z "$(find "$T/ol" -name '*.tmp.*')" ] && ok || bad "-o a link: a temporary file left: $(ls -a "$T/ol")"
mkdir -m 1777 "$T/ol/sticky"
echo precious >"$T/ol/victim"
ln -s ../victim "$T/ol/sticky/planted.slem"
ln -s ../victim "$T/ol/sticky/planted.png"
if chown -h nobody "$T/ol/sticky/planted.slem" "$T/ol/sticky/planted.png" 2>/dev/null &&
  [ "$(stat -c %U "$T/ol/sticky/planted.slem")" = nobody ] && [ "$(id -u)" != "$(id -u nobody)" ]; then
  expect_fail "slem-tune -o another user's link in /tmp" 1 "planted.slem: Permission denied" - tune_o "$T/ol/sticky/planted.slem"
  expect_fail "plot-pr, another user's link in /tmp" 1 "planted.png: Permission denied" - "$S/plot-pr" "$T/ol/sticky/planted.png" "$T/plain.pr"
  [ "$(cat "$T/ol/victim")" = precious ] && ok || bad "another user's link in /tmp: the file it leads to was replaced"
fi
ln -s ../victim "$T/ol/sticky/own.png"
"$S/plot-pr" "$T/ol/sticky/own.png" "$T/plain.pr" 2>"$T/err" && cmp -s "$T/ol/victim" "$T/ref2.png" && ok ||
  bad "plot-pr, one's own link in a sticky directory: $(cat "$T/err")"

finish cli-scripts
