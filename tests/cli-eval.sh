#!/bin/sh
# CLI tests of slem-eval: agreement with the numpy reference on the demo data
# (testdata/eval, made by scripts/gen-testdata.py), the three ranking formats, qrels and
# labels, hand-computed cases, and bad inputs. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
E=$TOP/testdata/eval
LABELS="--query-labels $D/queries.labels --db-labels $D/database.labels"

# value KEY FILE: the value of a "key<TAB>value" line of slem-eval's summary
value() { awk -F '\t' -v k="$1" '$1 == k { print $2 }' "$2"; }
# near A B: |A - B| <= 1e-6
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-6) }'; }
ref() { awk -F '\t' -v c="$1" -v k="$2" '$1 == c && $2 == k { print $3 }' "$E/reference.txt"; }

# ---- the numpy reference, both AP definitions, with and without junk ----
for case in cosine-full slem-top100; do
  for junk in "" "+junk"; do
    jopt=""
    [ -n "$junk" ] && jopt="--junk $E/junk.txt"
    for ap in trec oxford; do
      # shellcheck disable=SC2086
      check "eval $case$junk $ap" slem-eval $LABELS $jopt --ap $ap --curve "$T/curve" "$E/$case.tsv"
      cp "$T/out" "$T/summary"
      want=$(ref "$case$junk" "$ap")
      got=$(value mAP "$T/summary")
      near "$got" "$want" && ok || bad "$case$junk: mAP ($ap) $got, reference $want"
      [ "$(value queries "$T/summary")" = 100 ] && ok || bad "$case$junk: query count"
    done
    for m in P@1:p1 P@5:p5 P@10:p10 R@100:r100; do
      got=$(value "${m%%:*}" "$T/summary") want=$(ref "$case$junk" "${m#*:}")
      near "$got" "$want" && ok || bad "$case$junk: ${m%%:*} $got, reference $want"
    done
    # the curve: 11 points against the reference's
    ref "$case$junk" curve | tr ' ' '\n' >"$T/want.curve"
    grep -v '^#' "$T/curve" | cut -f2 | paste - "$T/want.curve" |
      awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-6) exit 1; n++ } END { exit n != 11 }' &&
      ok || bad "$case$junk: curve differs from the reference"
  done
done

# ---- the three ranking formats and qrels give the same numbers ----
slem-negstats -q --lambda-rel 100 -o "$T/neg.slem" "$D/negatives.fvecs"
slem-encode -q -c "$T/neg.slem" -o "$T/db.fvecs" "$D/database.fvecs"
slem-encode -q -c "$T/neg.slem" -o "$T/q.fvecs" "$D/queries.fvecs"
for f in tsv trec jsonl; do
  slem-match -k 50 -F $f -d "$T/db.fvecs" -o "$T/rank.$f" "$T/q.fvecs"
  # shellcheck disable=SC2086
  check "eval $f" slem-eval $LABELS --per-query -o "$T/eval.$f" "$T/rank.$f"
done
cmp -s "$T/eval.tsv" "$T/eval.trec" && cmp -s "$T/eval.tsv" "$T/eval.jsonl" && ok || bad "formats disagree"
# qrels made from the labels: every same-label pair
awk 'NR == FNR { lab[NR - 1] = $1; nq = NR; next }
     { for (q = 0; q < nq; q++) if (lab[q] == $1) print q, 0, FNR - 1, 1 }' "$D/queries.labels" "$D/database.labels" >"$T/qrels"
check "eval qrels" slem-eval --qrels "$T/qrels" --per-query -o "$T/eval.qrels" "$T/rank.trec"
sort "$T/eval.tsv" >"$T/a"; sort "$T/eval.qrels" >"$T/b"  # qrels keep the qrels file's query order
cmp -s "$T/a" "$T/b" && ok || bad "qrels and labels disagree"
# ids instead of rows
slem-match -k 50 --query-ids "$D/queries.ids" --db-ids "$D/database.ids" -d "$T/db.fvecs" -o "$T/rank.ids" "$T/q.fvecs"
# shellcheck disable=SC2086
check "eval with ids" slem-eval $LABELS --query-ids "$D/queries.ids" --db-ids "$D/database.ids" -o "$T/eval.ids" "$T/rank.ids"
[ "$(value mAP "$T/eval.ids")" = "$(value mAP "$T/eval.tsv")" ] && ok || bad "ids change the mAP"
# --json carries the same mAP
# shellcheck disable=SC2086
check "json" slem-eval $LABELS --json "$T/rank.tsv"
m=$(sed -n 's/^[[:space:]]*"map":[[:space:]]*\([0-9.e-]*\),*$/\1/p' "$T/out")
near "$m" "$(value mAP "$T/eval.tsv")" && ok || bad "--json map '$m'"
# --per-query has one line per query
[ "$(grep -c '	ok$' "$T/eval.tsv")" = 100 ] && ok || bad "--per-query lines"
# exclude-self: the database as queries, matched with --exclude-self
slem-match -k 20 --exclude-self -d "$T/db.fvecs" -o "$T/self.tsv" "$T/db.fvecs"
check "exclude-self" slem-eval --query-labels "$D/database.labels" --db-labels "$D/database.labels" --exclude-self "$T/self.tsv"
[ "$(value queries "$T/out")" = 1000 ] && ok || bad "exclude-self query count"

# ---- hand-computed cases ----
printf 'q 0 a 1\n' >"$T/one.qrels"
printf 'q\t1\tx\t0.9\nq\t2\ta\t0.8\n' >"$T/r2.tsv"
check "rank 2 trec" slem-eval --qrels "$T/one.qrels" "$T/r2.tsv"
[ "$(value mAP "$T/out")" = 0.500000 ] && ok || bad "one relevant at rank 2, trec: $(value mAP "$T/out")"
check "rank 2 oxford" slem-eval --ap oxford --qrels "$T/one.qrels" "$T/r2.tsv"
[ "$(value mAP "$T/out")" = 0.250000 ] && ok || bad "one relevant at rank 2, oxford: $(value mAP "$T/out")"
# junk at rank 1 is skipped: the relevant item moves to rank 1
printf 'q x\n' >"$T/j"
check "junk" slem-eval --qrels "$T/one.qrels" --junk "$T/j" "$T/r2.tsv"
[ "$(value mAP "$T/out")" = 1.000000 ] && ok || bad "junk not skipped: $(value mAP "$T/out")"
# a query of the qrels missing from the ranking: AP 0, counted and reported
printf 'q 0 a 1\nm 0 a 1\nz 0 a 0\n' >"$T/three.qrels"
check "missing query" slem-eval --qrels "$T/three.qrels" "$T/r2.tsv"
[ "$(value mAP "$T/out")" = 0.250000 ] && [ "$(value missing "$T/out")" = 1 ] && [ "$(value skipped "$T/out")" = 1 ] &&
  grep -q "warning: 1 queries of the ground truth are not in the ranking.*'m'" "$T/err" && ok ||
  bad "missing query: $(cat "$T/out" "$T/err")"

# ---- bad inputs: message with file and line, status 1 ----
printf 'q\t1\tx\n' >"$T/bad.tsv"
expect_fail "too few fields" 1 "bad.tsv: line 1: 3 fields, expected 4" "$T/o" slem-eval --qrels "$T/one.qrels" -o "$T/o" "$T/bad.tsv"
printf 'q\t1\ta\t0.9\nq\t2\tx\tabc\n' >"$T/bad.tsv"
expect_fail "score not a number" 1 "bad.tsv: line 2: score 'abc' is not a number" "$T/o" slem-eval --qrels "$T/one.qrels" -o "$T/o" "$T/bad.tsv"
printf 'q\tone\ta\t0.9\n' >"$T/bad.tsv"
expect_fail "rank not a number" 1 "line 1: rank 'one' is not a positive whole number" "$T/o" slem-eval --qrels "$T/one.qrels" -o "$T/o" "$T/bad.tsv"
printf 'q\t1\ta\t0.9\nw\t1\ta\t0.9\n' >"$T/bad.tsv"
# a query the qrels lack is left out with a warning, as trec_eval skips it; so is a junk
# line of such a query
printf 'q\t1\ta\t0.9\n' >"$T/good.tsv"
slem-eval --qrels "$T/one.qrels" -o "$T/u1" "$T/good.tsv" 2>/dev/null
printf 'w x\n' >"$T/wjunk"
if slem-eval --qrels "$T/one.qrels" --junk "$T/wjunk" -o "$T/u" "$T/bad.tsv" 2>"$T/err" && cmp -s "$T/u" "$T/u1" &&
   grep -q "1 queries of the ranking are not in the qrels: left out, as trec_eval leaves them out (the first at line 2)" "$T/err" &&
   grep -q "1 junk lines name queries that are not in the qrels" "$T/err"; then ok; else bad "unknown query: $(cat "$T/err")"; fi
printf 'q\t1\ta\t0.9\nq\t2\ta\t0.8\n' >"$T/bad.tsv"
expect_fail "duplicate id" 1 "line 2: id 'a' appears twice for query 'q'" "$T/o" slem-eval --qrels "$T/one.qrels" -o "$T/o" "$T/bad.tsv"
printf '0\t1\t5000\t0.9\n' >"$T/bad.tsv"
# shellcheck disable=SC2086
expect_fail "unknown database id" 1 "line 1: '5000' is not a database id" "$T/o" slem-eval $LABELS -o "$T/o" "$T/bad.tsv"
# npy rankings have rows, not lines: the query's row, the result's row and column, from 0
# as the npy reader's own messages (they said "line R + 1")
printf '1\n' >"$T/q1.labels"
printf '1\n1\n0\n' >"$T/db3.labels"
npy_pair "$T/n2" 2 2 '0 1 1 2' '.5 .25 .5 .25'
expect_fail "npy: a query not in the labels" 1 "n2.I.npy: row 1: query '1' is not in the ground truth" "$T/o" slem-eval --query-labels "$T/q1.labels" --db-labels "$T/db3.labels" -o "$T/o" "$T/n2.npy"
npy_pair "$T/n7" 1 2 '0 7' '.5 .25'
expect_fail "npy: an id not in the labels" 1 "n7.I.npy: row 0, column 1: '7' is not a database id of the labels" "$T/o" slem-eval --query-labels "$T/q1.labels" --db-labels "$T/db3.labels" -o "$T/o" "$T/n7.npy"
printf '0 0\n' >"$T/n.easy"
printf '0 1\n' >"$T/n.hard"
expect_fail "npy: --protocol, a query not in the ground truth" 1 "n2.I.npy: row 1: query '1' of the ranking is not in the ground truth" "$T/o" slem-eval --protocol medium --easy "$T/n.easy" --hard "$T/n.hard" -o "$T/o" "$T/n2.npy"
printf '0\t1\t0\t0.5\n1\t1\t1\t0.5\n' >"$T/n2.tsv"
expect_fail "tsv: --protocol, a query not in the ground truth" 1 "n2.tsv: line 2: query '1' of the ranking is not in the ground truth" "$T/o" slem-eval --protocol medium --easy "$T/n.easy" --hard "$T/n.hard" -o "$T/o" "$T/n2.tsv"
printf 'q 0 a\n' >"$T/bad.qrels"
expect_fail "short qrels line" 1 "bad.qrels: line 1: 3 fields, expected 4" "$T/o" slem-eval --qrels "$T/bad.qrels" -o "$T/o" "$T/r2.tsv"
printf '{"query":"q","results":[{"id":"a"}]}\n' >"$T/bad.jsonl"
expect_fail "jsonl without score" 1 "bad.jsonl: line 1: result 1 needs" "$T/o" slem-eval --qrels "$T/one.qrels" -o "$T/o" "$T/bad.jsonl"
: >"$T/empty.tsv"
expect_fail "empty ranking" 1 "empty.tsv: no rankings" "$T/o" slem-eval --qrels "$T/one.qrels" -o "$T/o" "$T/empty.tsv"
expect_fail "no ground truth" 2 "give the ground truth" - slem-eval "$T/r2.tsv"
expect_fail "half the labels" 2 "go together" - slem-eval --query-labels "$D/queries.labels" "$T/r2.tsv"
expect_fail "bad ap" 2 "neither trec nor oxford" - slem-eval --ap map --qrels "$T/one.qrels" "$T/r2.tsv"

# ---- tools/slem-tune and tools/plot-pr ----
check "slem-tune" "$TOP/tools/slem-tune" -g "0.1 1000" -o "$T/best.slem" -n "$D/negatives.fvecs" \
  -q "$D/validation.fvecs" -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
# the table: cosine baseline, one row per value, the best marked; it is the larger mAP
awk '$1 == "cosine" { c = 1 } $1 == "0.1" { a = $3 } $1 == "1000" { b = $3; star = ($4 == "*") }
     END { exit !(c && a < b && star) }' "$T/out" && ok || bad "slem-tune table: $(cat "$T/out")"
slem-negstats --info "$T/best.slem" | grep -q '"lambda_rel":.*1000' && ok || bad "slem-tune -o kept another cache"
expect_fail "slem-tune usage" 2 "give -n NEGATIVES" - "$TOP/tools/slem-tune" -q x
# the family's axes: every variant at every lambda, the best kept with what it needs
check "slem-tune axes" "$TOP/tools/slem-tune" -g "0.1 1000" --depth 2 --alpha "-0.5" --pca 8 -o "$T/best2.slem" \
  -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" --query-labels "$D/validation.labels" \
  --db-labels "$D/database.labels"
awk 'NR > 2 { n[$1]++ } /  \*$/ { star++; b = $4 } NR > 2 && $4 > m { m = $4 }
     END { exit !(n["slem"] == 2 && n["depth=2"] == 2 && n["alpha=-0.5"] == 2 && n["pca=8"] == 2 &&
                  star == 1 && b == m) }' "$T/out" && ok || bad "slem-tune axes table: $(cat "$T/out")"
kind=$(awk '/  \*$/ { print $1 }' "$T/out")
case $kind in
  pca=8) slem-negstats --info "$T/best2.slem" | grep -q '"kind":.*"pca"' ;;
  depth=2) slem-negstats --info "$T/best2.slem" | grep -q '"depth":.*2' ;;
  alpha=*) slem-negstats --info "$T/best2.slem" | grep -q '"evals"' && grep -q "slem-encode --alpha" "$T/err" ;;
  *) slem-negstats --info "$T/best2.slem" | grep -q '"kind":.*"linear"' ;;
esac && ok || bad "slem-tune axes: the cache kept is not the $kind one"
expect_fail "slem-tune --depth 0" 2 "whole numbers from 1" - "$TOP/tools/slem-tune" --depth 00 -n x -q x -d x --qrels "$D/queries.labels"
expect_fail "slem-tune -g glob" 2 "non-negative numbers ('\*')" - "$TOP/tools/slem-tune" -g "*" -n x -q x -d x --qrels "$D/queries.labels"
expect_fail "slem-tune --alpha text" 2 "numbers" - "$TOP/tools/slem-tune" --alpha '1;true' -n x -q x -d x --qrels "$D/queries.labels"
expect_fail "slem-tune --factor linear" 2 "give -K" - "$TOP/tools/slem-tune" --factor kpca -n x -q x -d x --qrels "$D/queries.labels"
expect_fail "slem-tune --pca with -K" 2 "not with -K" - "$TOP/tools/slem-tune" -K rbf --pca 8 -n x -q x -d x --qrels "$D/queries.labels"
# shellcheck disable=SC2086
slem-eval $LABELS --curve "$T/a.pr" "$T/rank.tsv" >/dev/null
expect_fail "plot-pr bad curve" 1 "reference.txt: line 1: not recall, precision" "$T/pr.png" "$TOP/tools/plot-pr" "$T/pr.png" "$E/reference.txt"
check "plot-pr" "$TOP/tools/plot-pr" -t test "$T/pr.png" "$T/a.pr=SLEM" "$T/a.pr"
[ "$(head -c 4 "$T/pr.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] && [ "$(wc -c <"$T/pr.png")" -gt 10000 ] && ok || bad "plot-pr wrote no PNG"

finish cli-eval
