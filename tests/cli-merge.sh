#!/bin/sh
# CLI tests of slem-merge: the digits database cut into three parts by rows, each part
# matched alone with its rows renumbered to the global ones, the rankings merged and
# compared byte for byte with one slem-match over the whole database, in the three
# formats; then every error. The digits are small whole numbers, so inner products are
# exact and many scores tie: the merge must break the ties by the lower global row.
# Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
REC=260  # bytes per fvecs record: 4 + 4 * 64

# part I FIRST N: rows FIRST..FIRST+N-1 of the database, with ids that are the global
# rows (part I.fvecs, I.rows) and with the database's own ids (I.ids)
part() {
  tail -c +$(($2 * REC + 1)) "$D/database.fvecs" | head -c $(($3 * REC)) >"$T/p$1.fvecs"
  seq "$2" $(($2 + $3 - 1)) >"$T/p$1.rows"
  sed -n "$(($2 + 1)),$(($2 + $3))p" "$D/database.ids" >"$T/p$1.ids"
}
part 0 0 333
part 1 333 333
part 2 666 334
# global_rows OFFSET: jsonl's "row" of a part made global (slem-match writes the row in
# the part; --shard I/N will write the global one)
global_rows() {
  awk -v off="$1" '{ out = ""; s = $0
    while (match(s, /"row":[0-9]+/)) {
      out = out substr(s, 1, RSTART - 1) "\"row\":" (substr(s, RSTART + 6, RLENGTH - 6) + off)
      s = substr(s, RSTART + RLENGTH)
    }
    print out s }'
}
# shard NAME K FORMAT IDS [OPTION...]: the three parts matched with -k K into NAME.0..2
shard() {
  name=$1 k=$2 f=$3 ids=$4; shift 4
  for p in 0 1 2; do
    off=$(head -n 1 "$T/p$p.rows")
    slem-match -t 1 -k "$k" -F "$f" --db-ids "$T/p$p.$ids" "$@" -d "$T/p$p.fvecs" "$D/queries.fvecs" |
      global_rows "$off" >"$T/$name.$p"
  done
}
same() { # same NAME A B: files A and B are identical
  if cmp -s "$2" "$3"; then ok; else bad "$1: $(cmp "$2" "$3" 2>&1 | head -1)"; fi
}

# ---- byte for byte the ranking of the whole database ----
for f in tsv trec jsonl; do
  slem-match -t 1 -k 50 -F $f -d "$D/database.fvecs" -o "$T/all.$f" "$D/queries.fvecs"
  shard "s$f" 50 $f rows
  check "merge $f" slem-merge -k 50 -o "$T/m.$f" "$T/s$f.0" "$T/s$f.1" "$T/s$f.2"
  same "merge $f" "$T/m.$f" "$T/all.$f"
  [ -s "$T/all.$f" ] && ok || bad "$f: empty reference"
  # ids from an ids file: tsv and trec need --db-ids, jsonl carries the rows
  slem-match -t 1 -k 50 -F $f --db-ids "$D/database.ids" -d "$D/database.fvecs" -o "$T/allid.$f" "$D/queries.fvecs"
  shard "i$f" 50 $f ids
  check "merge $f with ids" slem-merge -k 50 --db-ids "$D/database.ids" -o "$T/mi.$f" "$T/i$f.0" "$T/i$f.1" "$T/i$f.2"
  same "merge $f with ids" "$T/mi.$f" "$T/allid.$f"
done
check "merge jsonl with ids, no --db-ids" slem-merge -k 50 -o "$T/mi2.jsonl" "$T/ijsonl.0" "$T/ijsonl.1" "$T/ijsonl.2"
same "jsonl rows without --db-ids" "$T/mi2.jsonl" "$T/allid.jsonl"
# the ties: the reference has equal scores in a query, and the merge kept their order
awk -F '\t' '$1 == q && $4 == s { n++ } { q = $1; s = $4 } END { exit n < 100 }' "$T/all.tsv" &&
  ok || bad "the test data has too few ties to test the rule"
# shards in the order 2 0 1, and in mixed formats: the same merge
check "shard order" slem-merge -k 50 -o "$T/m2.tsv" "$T/stsv.2" "$T/stsv.0" "$T/stsv.1"
same "shard order" "$T/m2.tsv" "$T/all.tsv"
check "mixed formats" slem-merge -k 50 -F tsv "$T/strec.1" "$T/stsv.0" "$T/sjsonl.2"
same "mixed formats" "$T/out" "$T/all.tsv"
# the output format follows -f; the default is the first shard's
check "-F jsonl" slem-merge -k 50 -F jsonl "$T/stsv.0" "$T/stsv.1" "$T/stsv.2"
same "-f jsonl" "$T/out" "$T/all.jsonl"
# a smaller K than the shards': the head of the whole ranking
slem-match -t 1 -k 7 -d "$D/database.fvecs" -o "$T/all7.tsv" "$D/queries.fvecs"
check "-k 7" slem-merge -k 7 "$T/stsv.0" "$T/stsv.1" "$T/stsv.2"
same "-k 7" "$T/out" "$T/all7.tsv"
# one shard: itself
slem-match -t 1 -k 20 -F trec -d "$D/database.fvecs" -o "$T/one.trec" "$D/queries.fvecs"
check "one shard" slem-merge -k 20 "$T/one.trec"
same "one shard" "$T/out" "$T/one.trec"
# K beyond the database: every shard lists all its rows, the merge the whole database
head -c $((5 * REC)) "$D/queries.fvecs" >"$T/q5.fvecs"
slem-match -q -t 1 -k 2000 -d "$D/database.fvecs" -o "$T/allk.tsv" "$T/q5.fvecs"
for p in 0 1 2; do slem-match -q -t 1 -k 2000 --db-ids "$T/p$p.rows" -d "$T/p$p.fvecs" -o "$T/k.$p" "$T/q5.fvecs"; done
check "K beyond the database" slem-merge -k 2000 "$T/k.0" "$T/k.1" "$T/k.2"
same "K beyond the database" "$T/out" "$T/allk.tsv"
[ "$(wc -l <"$T/out")" = 5000 ] && ok || bad "K beyond the database: $(wc -l <"$T/out") lines"
# stdin as a shard
check "stdin" sh -c 'slem-merge -k 50 "$1" - "$2" <"$3"' sh "$T/stsv.0" "$T/stsv.2" "$T/stsv.1"
same "stdin" "$T/out" "$T/all.tsv"

# ---- errors: message naming the file, status 1, no output ----
S="$T/stsv.0 $T/stsv.1 $T/stsv.2"
# shellcheck disable=SC2086
expect_fail "missing shard" 1 "nope.tsv" "$T/o" slem-merge -o "$T/o" "$T/stsv.0" "$T/nope.tsv"
head -c -4 "$T/stsv.1" >"$T/cut.tsv"
expect_fail "truncated shard" 1 "cut.tsv: the last line has no newline" "$T/o" slem-merge -k 50 -o "$T/o" "$T/stsv.0" "$T/cut.tsv" "$T/stsv.2"
head -c -1 "$T/strec.2" >"$T/cut.trec"
expect_fail "truncated trec shard" 1 "cut.trec: the last line has no newline" - slem-merge -k 50 "$T/strec.0" "$T/strec.1" "$T/cut.trec"
[ ! -s "$T/out" ] && ok || bad "a truncated shard let output through to stdout"
# on a pipe, the cut is seen at its end
expect_fail "truncated shard on a pipe" 1 "<stdin>: line 5000: the last line has no newline" "$T/o" sh -c 'slem-merge -k 50 -o "$1" "$2" - "$3" <"$4"' sh "$T/o" "$T/stsv.0" "$T/stsv.2" "$T/cut.tsv"
head -n 4000 "$T/stsv.1" >"$T/short.tsv"
expect_fail "shard with fewer queries" 1 "short.tsv: ends before query '80'" "$T/o" slem-merge -k 50 -o "$T/o" "$T/stsv.0" "$T/short.tsv" "$T/stsv.2"
expect_fail "first shard with fewer queries" 1 "stsv.0: line 4001: query '80' is not in .*short.tsv" "$T/o" slem-merge -k 50 -o "$T/o" "$T/short.tsv" "$T/stsv.0" "$T/stsv.2"
# another order: query 1 before query 0
{ grep '^1	' "$T/stsv.2"; grep -v '^1	' "$T/stsv.2"; } >"$T/order.tsv"
expect_fail "another query order" 1 "order.tsv: line 1: query '1', but .*stsv.0 has '0' there (line 1)" "$T/o" slem-merge -k 50 -o "$T/o" "$T/stsv.0" "$T/stsv.1" "$T/order.tsv"
# another query set
sed 's/^7	/seven	/' "$T/stsv.1" >"$T/other.tsv"
expect_fail "another query" 1 "other.tsv: line 351: query 'seven', but" "$T/o" slem-merge -k 50 -o "$T/o" "$T/stsv.0" "$T/other.tsv" "$T/stsv.2"
# a query whose lines are apart, in every shard
for p in 0 1 2; do { cat "$T/stsv.$p"; grep '^0	' "$T/stsv.$p"; } >"$T/again.$p"; done
expect_fail "a query twice" 1 "again.0: line 5001: query '0' appears again" "$T/o" slem-merge -k 50 -o "$T/o" "$T/again.0" "$T/again.1" "$T/again.2"
shard s10 10 tsv rows
expect_fail "K beyond the shards' k" 1 "s10.0: line 1: query '0' has 10 results, fewer than -k 50, yet the shard returned" "$T/o" slem-merge -k 50 -o "$T/o" "$T/s10.0" "$T/s10.1" "$T/s10.2"
expect_fail "a row in two shards" 1 "stsv.0: line 1: row [0-9]* ('[0-9]*') is also in .*stsv.0" "$T/o" slem-merge -k 50 -o "$T/o" "$T/stsv.0" "$T/stsv.0" "$T/stsv.2"
expect_fail "ids without --db-ids" 1 "itsv.0: line 1: id '.*' is not a database row.*--db-ids.*jsonl between shards" "$T/o" slem-merge -k 50 -o "$T/o" "$T/itsv.0" "$T/itsv.1" "$T/itsv.2"
printf 'not-an-id\n' >"$T/few.ids"
expect_fail "id not in --db-ids" 1 "itsv.0: line 1: id '.*' is not in .*few.ids" "$T/o" slem-merge -k 50 --db-ids "$T/few.ids" -o "$T/o" "$T/itsv.0" "$T/itsv.1" "$T/itsv.2"
awk -F '\t' -v OFS='\t' 'NR == 1 { $4 = $4 ".0" } 1' "$T/stsv.0" >"$T/digits.tsv"
expect_fail "score not as slem-match prints it" 1 "digits.tsv: line 1: score '[0-9]*\.0' is not a float32 printed with %.9g" "$T/o" slem-merge -k 50 -o "$T/o" "$T/digits.tsv" "$T/stsv.1" "$T/stsv.2"
printf '0\t1\t5\tx\n' >"$T/bad.tsv"
expect_fail "bad line" 1 "bad.tsv: line 1: score 'x' is not a number" "$T/o" slem-merge -o "$T/o" "$T/bad.tsv"
: >"$T/empty.tsv"
expect_fail "empty shard" 1 "empty.tsv: no rankings" "$T/o" slem-merge -o "$T/o" "$T/stsv.0" "$T/empty.tsv"
# an existing output is left as it was
echo keep >"$T/kept"
slem-merge -k 50 -o "$T/kept" "$T/stsv.0" "$T/short.tsv" 2>/dev/null
[ "$(cat "$T/kept")" = keep ] && ok || bad "a failed merge changed the existing output"
# nothing on stdout when a shard is refused before the first query
expect_fail "no output on stdout" 1 "nope" - slem-merge "$T/stsv.0" "$T/nope"
[ ! -s "$T/out" ] && ok || bad "output on stdout after an error"

# ---- usage ----
expect_fail "no shard" 2 "no shard" - slem-merge -k 5
expect_fail "bad -k" 2 "-k" - slem-merge -k 0 "$T/stsv.0"
expect_fail "bad format" 2 "unknown format 'xml'" - slem-merge -F xml "$T/stsv.0"
expect_fail "output is a shard" 2 "" - slem-merge -o "$T/stsv.0" "$T/stsv.0" "$T/stsv.1"
check "help" slem-merge --help
grep -q "Usage: slem-merge" "$T/out" && ok || bad "--help"
check "version" slem-merge --version
grep -q "slem-merge" "$T/out" && ok || bad "--version: $(cat "$T/out")"

# an empty shard (more shards than rows) names every query with an empty list in jsonl,
# and merges: 7 shards of 5 rows
head -c $((5 * 260)) "$D/database.fvecs" >"$T/five.fvecs"
slem-match -k 3 -d "$T/five.fvecs" -o "$T/e.tsv" "$D/queries.fvecs" || bad "whole run of 5 rows"
for i in 0 1 2 3 4 5 6; do
  slem-match -k 3 --shard $i/7 -F jsonl -d "$T/five.fvecs" -o "$T/e$i.jsonl" "$D/queries.fvecs" || bad "shard $i/7"
done
grep -q '"results":\[\]' "$T/e0.jsonl" && ok || bad "shard 0/7 of 5 rows: no empty list"
check "merge with empty shards" slem-merge -k 3 -F tsv -o "$T/em.tsv" "$T/e6.jsonl" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e4.jsonl" "$T/e5.jsonl"
cmp -s "$T/em.tsv" "$T/e.tsv" && ok || bad "merge with empty shards differs"
# a shard's ranking says which shard of which database it is: a missing shard, a shard
# twice, a shard of another database, size, split or k are refused, naming the files
head -n 1 "$T/e3.jsonl" | grep -q '^{"slem_shard":{"index":3,"count":7,"rows":5,"k":3,"database":"[0-9a-f]\{16\}","arithmetic":"[A-Za-z0-9]* ([^"]*)"}}$' && ok ||
  bad "the shard line of jsonl: $(head -n 1 "$T/e3.jsonl")"
# tsv and trec stay plain (other programs read them)
slem-match -k 3 --shard 4/7 -d "$T/five.fvecs" -o "$T/e4.tsv" "$D/queries.fvecs"
head -n 1 "$T/e4.tsv" | grep -q '^0	1	' && ok || bad "tsv has a shard line: $(head -n 1 "$T/e4.tsv")"
slem-match -k 3 --shard 4/7 -F trec -d "$T/five.fvecs" -o "$T/e4.trec" "$D/queries.fvecs"
head -n 1 "$T/e4.trec" | grep -q '^0 Q0 ' && ok || bad "trec has a shard line: $(head -n 1 "$T/e4.trec")"
# slem-eval reads a jsonl shard's ranking as any other
head -n 5 "$D/database.labels" >"$T/five.labels"
check "slem-eval of a shard" slem-eval --query-labels "$D/queries.labels" --db-labels "$T/five.labels" "$T/e4.jsonl"
expect_fail "a missing shard" 1 "shard 4/7 is missing" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
cp "$T/e4.jsonl" "$T/e4again.jsonl"
expect_fail "a shard twice" 1 "e4again.jsonl are both shard 4/7" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e4.jsonl" "$T/e4again.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
# a tsv shard among jsonl ones cannot be checked: refused
expect_fail "a plain shard among checked ones" 1 "e4.tsv: not the ranking of a shard" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e4.tsv" "$T/e5.jsonl" "$T/e6.jsonl"
head -c $((6 * 260)) "$D/database.fvecs" >"$T/six.fvecs"
slem-match -k 3 --shard 4/7 -F jsonl -d "$T/six.fvecs" -o "$T/x4.jsonl" "$D/queries.fvecs"
expect_fail "a shard of another database" 1 "x4.jsonl: a shard of another database (6 rows" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/x4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
slem-match -k 4 --shard 4/7 -F jsonl -d "$T/five.fvecs" -o "$T/k4.jsonl" "$D/queries.fvecs"
expect_fail "a shard of another k" 1 "k4.jsonl: made with -k 4" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/k4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
slem-match -k 3 --shard 1/2 -F jsonl -d "$T/five.fvecs" -o "$T/n2.jsonl" "$D/queries.fvecs"
expect_fail "a shard of another split" 1 "n2.jsonl: shard 1/2" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/n2.jsonl"
slem-match -k 3 -F jsonl -d "$T/five.fvecs" -o "$T/whole.jsonl" "$D/queries.fvecs"
expect_fail "a whole ranking among shards" 1 "whole.jsonl: not the ranking of a shard" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/whole.jsonl"
# descriptors of another cache make another database
slem-negstats -q -o "$T/c1.slem" "$D/negatives.fvecs"
slem-negstats -q --lambda-rel 10 -o "$T/c2.slem" "$D/negatives.fvecs"
slem-encode -q -c "$T/c1.slem" -o "$T/d1.slem" "$T/five.fvecs"
slem-encode -q -c "$T/c2.slem" -o "$T/d2.slem" "$T/five.fvecs"
slem-encode -q -c "$T/c1.slem" -o "$T/q1.slem" "$D/queries.fvecs"
slem-match -k 3 --shard 0/2 -F jsonl -d "$T/d1.slem" -o "$T/c1.0.jsonl" "$T/q1.slem"
slem-match -k 3 --no-check --shard 1/2 -F jsonl -d "$T/d2.slem" -o "$T/c2.1.jsonl" "$T/q1.slem"
expect_fail "a shard of another cache" 1 "c2.1.jsonl: a shard of another database" "$T/o" slem-merge -k 3 -o "$T/o" "$T/c1.0.jsonl" "$T/c2.1.jsonl"
finish cli-merge
