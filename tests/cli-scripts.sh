#!/bin/sh
# The scripts under hostile file names and titles: nothing the user gives runs, every name
# works; slem-tune passes ids, junk and qrels through and tunes against qrels that name
# queries by id. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
S=$TOP/scripts
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
finish cli-scripts
