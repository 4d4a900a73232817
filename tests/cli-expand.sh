#!/bin/sh
# CLI tests of slem-expand: AQE, alpha-QE and DBA on unit digits against numpy references of
# dirtorch's formula (testdata/expand, scripts/gen-esvm.py), the rankings slem-match writes
# in every format, ids, pipes, the errors. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
X=$TOP/testdata/expand
D=$TOP/testdata/digits

# max_cos_gap A B: the largest 1 - cos over the rows of two text files of equal width
max_cos_gap() {
  paste -d ' ' "$1" "$2" | awk '{
    n = NF / 2; ab = aa = bb = 0
    for (j = 1; j <= n; j++) { a = $j; b = $(n + j); ab += a * b; aa += a * a; bb += b * b }
    g = 1 - ab / sqrt(aa * bb); if (g > m) m = g } END { if (NR) printf "%.3g\n", m }'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
same_rows() { [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ] && [ "$(wc -l <"$1")" -gt 0 ]; }

# ---- against numpy ----
slem-match -k 10 -d "$X/db.fvecs" "$X/q.fvecs" >"$T/q.tsv"
check "aqe" slem-expand -d "$X/db.fvecs" -n 2 -F text -o "$T/aqe.txt" -r "$T/q.tsv" "$X/q.fvecs"
g=$(max_cos_gap "$T/aqe.txt" "$X/aqe-n2.txt")
same_rows "$T/aqe.txt" "$X/aqe-n2.txt" && le "$g" 1e-6 && ok || bad "AQE: 1 - cos to numpy $g"
check "alpha-qe" slem-expand -d "$X/db.fvecs" -n 5 --alpha 3 -F text -o "$T/a3.txt" -r "$T/q.tsv" "$X/q.fvecs"
g=$(max_cos_gap "$T/a3.txt" "$X/aqe-n5-a3.txt")
same_rows "$T/a3.txt" "$X/aqe-n5-a3.txt" && le "$g" 1e-6 && ok || bad "alpha-QE: 1 - cos to numpy $g"
# DBA: the database against itself, self excluded, through a pipe
slem-match --exclude-self -k 5 -d "$X/db.fvecs" "$X/db.fvecs" |
  slem-expand -d "$X/db.fvecs" -n 2 -F text "$X/db.fvecs" >"$T/dba.txt"
g=$(max_cos_gap "$T/dba.txt" "$X/dba-n2.txt")
same_rows "$T/dba.txt" "$X/dba-n2.txt" && le "$g" 1e-6 && ok || bad "DBA: 1 - cos to numpy $g"
awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i * $i; if (NF != 64 || s < 0.99999 || s > 1.00001) exit 1 }' \
  "$T/aqe.txt" && ok || bad "expanded vectors are not unit rows of 64 values"

# ---- the same from trec and jsonl rankings, with ids, vectors from stdin ----
slem-expand -d "$X/db.fvecs" -n 2 -r "$T/q.tsv" -o "$T/aqe.fvecs" "$X/q.fvecs"
for f in trec jsonl; do
  slem-match -k 10 -F "$f" -d "$X/db.fvecs" "$X/q.fvecs" >"$T/q.$f"
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/q.$f" -o "$T/aqe.$f.fvecs" "$X/q.fvecs" 2>"$T/err"
  cmp -s "$T/aqe.$f.fvecs" "$T/aqe.fvecs" && ok || bad "$f ranking gives other vectors: $(cat "$T/err")"
done
IDS="--query-ids $X/q.ids --db-ids $X/db.ids"
# shellcheck disable=SC2086
slem-match -k 10 $IDS -d "$X/db.fvecs" "$X/q.fvecs" >"$T/ids.tsv"
grep -q "digit" "$T/ids.tsv" && ok || bad "the ids ranking names no ids"
# shellcheck disable=SC2086
slem-expand -d "$X/db.fvecs" -n 2 $IDS -r "$T/ids.tsv" -o "$T/aqe.ids.fvecs" - <"$X/q.fvecs" 2>"$T/err"
cmp -s "$T/aqe.ids.fvecs" "$T/aqe.fvecs" && ok || bad "ids and stdin vectors give other vectors: $(cat "$T/err")"
# the whole pipeline: match, expand, match again
slem-match -k 10 -d "$X/db.fvecs" "$X/q.fvecs" | slem-expand -d "$X/db.fvecs" -n 2 "$X/q.fvecs" |
  slem-match -k 10 -d "$X/db.fvecs" >"$T/again.tsv"
[ "$(wc -l <"$T/again.tsv")" = 500 ] && ok || bad "match | expand | match: $(wc -l <"$T/again.tsv") lines"
slem-expand --help | grep -q -- "--alpha" && ok || bad "--help"

# ---- errors ----
slem-match -k 1 -d "$X/db.fvecs" "$X/q.fvecs" >"$T/k1.tsv"
expect_fail "n beyond the ranking" 1 "query '0' of .*k1.tsv: the ranking lists 1 result, fewer than the 2 to add" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/k1.tsv" -o "$T/x.fvecs" "$X/q.fvecs"
slem-esvm -q --classifier -n "$D/negatives.fvecs" -o "$T/clf.fvecs" "$X/q.fvecs"
expect_fail "classifiers given" 1 "clf.fvecs: 65 values per row, but the database has dimension 64: is it a file of classifiers" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/q.tsv" -o "$T/x.fvecs" "$T/clf.fvecs"
expect_fail "another dimension" 1 "pos.fvecs: 32 values per row, but the database has dimension 64" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/q.tsv" -o "$T/x.fvecs" "$TOP/testdata/esvm/pos.fvecs"
expect_fail "ids without --db-ids" 1 "document 'digit.* is not a row of the database (0 to 199; give --db-ids" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 --query-ids "$X/q.ids" -r "$T/ids.tsv" -o "$T/x.fvecs" "$X/q.fvecs"
expect_fail "queries out of order" 1 "query 'digit.*' where '0' (vector 1 of" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/ids.tsv" --db-ids "$X/db.ids" -o "$T/x.fvecs" "$X/q.fvecs"
head -20 "$T/q.tsv" >"$T/short.tsv"
expect_fail "ranking too short" 1 "short.tsv ends before query '2' (vector 3 of" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/short.tsv" -o "$T/x.fvecs" "$X/q.fvecs"
# a query after the last vector: named by its line, or its row in an npy pair (from 0, as
# the npy reader's messages; it said "line 51")
{ cat "$X/q.fvecs"; head -c 260 "$X/q.fvecs"; } >"$T/q51.fvecs"
for f in tsv npy; do slem-match -q -k 2 -F $f -d "$X/db.fvecs" -o "$T/q51.$f" "$T/q51.fvecs"; done
expect_fail "ranking too long" 1 "q51.tsv: line 101: query '50' after the last of the 50 vectors" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/q51.tsv" -o "$T/x.fvecs" "$X/q.fvecs"
expect_fail "npy ranking too long" 1 "q51.I.npy: row 50: query '50' after the last of the 50 vectors" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/q51.npy" -o "$T/x.fvecs" "$X/q.fvecs"
expect_fail "alpha negative" 2 "--alpha: must not be negative" "$T/x.fvecs" \
  slem-expand -d "$X/db.fvecs" -n 2 --alpha -1 -r "$T/q.tsv" -o "$T/x.fvecs" "$X/q.fvecs"
expect_fail "no -n" 2 "no -n" "$T/x.fvecs" slem-expand -d "$X/db.fvecs" -r "$T/q.tsv" -o "$T/x.fvecs" "$X/q.fvecs"
expect_fail "stdin twice" 2 "give the ranking with -r" "$T/x.fvecs" slem-expand -d "$X/db.fvecs" -n 2 -o "$T/x.fvecs"
cp "$T/aqe.fvecs" "$T/keep.fvecs"
slem-expand -d "$X/db.fvecs" -n 2 -r "$T/k1.tsv" -o "$T/keep.fvecs" "$X/q.fvecs" 2>/dev/null
[ $? = 1 ] && cmp -s "$T/keep.fvecs" "$T/aqe.fvecs" && ok || bad "a failed run changed an existing output"

# a ranking whose lines are not in rank order (re-sorted by document, as TREC tools do)
# expands with its best results, as slem-eval evaluates it: once the first lines were
# taken whatever their rank (the worst of the list, here)
for f in tsv trec; do
  if [ $f = tsv ]; then sort -t "$(printf '\t')" -s -k1,1n -k3,3 "$T/q.tsv"; else sort -s -k1,1n -k3,3 "$T/q.trec"; fi >"$T/bydoc.$f"
  cmp -s "$T/bydoc.$f" "$T/q.$f" && bad "re-sorting the $f ranking changed nothing: no test"
  slem-expand -d "$X/db.fvecs" -n 2 -r "$T/bydoc.$f" -o "$T/aqe.bydoc.fvecs" "$X/q.fvecs" 2>"$T/err"
  cmp -s "$T/aqe.bydoc.fvecs" "$T/aqe.fvecs" && ok || bad "a $f ranking by document: other vectors: $(cat "$T/err")"
done

# -d twice: slem-match's one database of two files; here it was the last file alone, and
# the ranking's rows of the first file were read from the second
expect_fail "expand -d twice" 2 "-d twice ('$D/database.fvecs', '$D/queries.fvecs'): slem-expand reads one database file" "$T/dd.fvecs" \
  slem-expand -d "$D/database.fvecs" -d "$D/queries.fvecs" -n 2 -r /dev/null -o "$T/dd.fvecs" "$D/queries.fvecs"
finish cli-expand
