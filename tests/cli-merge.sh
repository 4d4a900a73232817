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
# a jsonl score past FLT_MAX (a double, no text to check) was merged as "inf", status 0: a
# ranking that no reader takes back ("score 'inf' is not a number")
sed '2s/"score":[^,}]*/"score":1e300/' "$T/sjsonl.0" >"$T/huge.jsonl"
expect_fail "jsonl score beyond float32" 1 "huge.jsonl: line 2: score 1e+300 is beyond float32's range" "$T/o" slem-merge -k 50 -o "$T/o" "$T/huge.jsonl" "$T/sjsonl.1" "$T/sjsonl.2"
printf '0\t1\t5\tx\n' >"$T/bad.tsv"
expect_fail "bad line" 1 "bad.tsv: line 1: score 'x' is not a number" "$T/o" slem-merge -o "$T/o" "$T/bad.tsv"
: >"$T/empty.tsv"
expect_fail "empty shard" 1 "empty.tsv: no rankings" "$T/o" slem-merge -o "$T/o" "$T/stsv.0" "$T/empty.tsv"
# tsv has no line for a query without results: a split of 5 rows in 7 (two shards of no
# rows, empty files) or --exclude-self on shards of one row (each lacks its row's query)
# cannot merge in tsv, and the message says to shard in jsonl (it said only "no rankings",
# or that the shards must list the same queries); in jsonl both merge to the one answer
head -c $((5 * 260)) "$D/database.fvecs" >"$T/five.fvecs"
slem-match -q -k 3 -d "$T/five.fvecs" -o "$T/five.tsv" "$D/queries.fvecs"
slem-match -q -k 3 --exclude-self -d "$T/five.fvecs" -o "$T/fivex.tsv" "$T/five.fvecs"
set --
for i in 0 1 2 3 4 5 6; do
  slem-match -q -k 3 --shard $i/7 -d "$T/five.fvecs" -o "$T/f7.$i.tsv" "$D/queries.fvecs" 2>/dev/null
  slem-match -q -k 3 --shard $i/7 -F jsonl -d "$T/five.fvecs" -o "$T/f7.$i.jsonl" "$D/queries.fvecs"
  set -- "$@" "$T/f7.$i.tsv"
done
expect_fail "a tsv shard of no rows" 1 "f7.0.tsv: no rankings (empty file).*write the shards in jsonl" "$T/o" slem-merge -k 3 -o "$T/o" "$@"
slem-merge -k 3 -F tsv "$T"/f7.?.jsonl | cmp -s - "$T/five.tsv" && ok || bad "7 jsonl shards of 5 rows: not the one answer"
set --
for i in 0 1 2 3 4; do
  slem-match -q -k 3 --exclude-self --shard $i/5 -d "$T/five.fvecs" -o "$T/f5.$i.tsv" "$T/five.fvecs" 2>/dev/null
  slem-match -q -k 3 --exclude-self --shard $i/5 -F jsonl -d "$T/five.fvecs" -o "$T/f5.$i.jsonl" "$T/five.fvecs"
  set -- "$@" "$T/f5.$i.tsv"
done
expect_fail "tsv shards lacking a query" 1 "f5.1.tsv: line 1: query '0', but .*f5.0.tsv has '1'.*write the shards in jsonl" "$T/o" slem-merge -k 3 -o "$T/o" "$@"
slem-merge -k 3 -F tsv "$T"/f5.?.jsonl | cmp -s - "$T/fivex.tsv" && ok || bad "--exclude-self, jsonl shards of one row: not the one answer"
# stdin given twice: a usage error (the second '-' was read as an empty shard: 'no rankings')
cat "$T/stsv.0" | slem-merge -k 50 -o "$T/o" - "$T/stsv.1" - >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "only one input can be stdin ('-')" "$T/err" && [ ! -e "$T/o" ] && ok || bad "stdin twice: $(cat "$T/err")"
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
head -n 1 "$T/e3.jsonl" | grep -q '^{"slem_shard":{"index":3,"count":7,"rows":5,"k":3,"database":"[0-9a-f]\{16\}","arithmetic":"[A-Za-z0-9]* ([^"]*)","scoring":"dot"}}$' && ok ||
  bad "the shard line of jsonl: $(head -n 1 "$T/e3.jsonl")"
# tsv and trec stay plain (other programs read them)
slem-match -q -k 3 --shard 4/7 -d "$T/five.fvecs" -o "$T/e4.tsv" "$D/queries.fvecs"
head -n 1 "$T/e4.tsv" | grep -q '^0	1	' && ok || bad "tsv has a shard line: $(head -n 1 "$T/e4.tsv")"
slem-match -q -k 3 --shard 4/7 -F trec -d "$T/five.fvecs" -o "$T/e4.trec" "$D/queries.fvecs"
head -n 1 "$T/e4.trec" | grep -q '^0 Q0 ' && ok || bad "trec has a shard line: $(head -n 1 "$T/e4.trec")"
# slem-eval reads a jsonl shard's ranking as any other
head -n 5 "$D/database.labels" >"$T/five.labels"
check "slem-eval of a shard" slem-eval --query-labels "$D/queries.labels" --db-labels "$T/five.labels" "$T/e4.jsonl"
expect_fail "a missing shard" 1 "shard 4/7 is missing" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
cp "$T/e4.jsonl" "$T/e4again.jsonl"
expect_fail "a shard twice" 1 "e4again.jsonl are both shard 4/7" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e4.jsonl" "$T/e4again.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
# a merge in two levels: a --partial merge of consecutive shards carries the group's lines
# (its span), so that the second level sees a group left out, or one held twice
E="$T/e0.jsonl $T/e1.jsonl $T/e2.jsonl $T/e3.jsonl $T/e4.jsonl $T/e5.jsonl $T/e6.jsonl"
check "group 0-2" slem-merge --partial -k 3 -F jsonl -o "$T/g02.jsonl" "$T/e1.jsonl" "$T/e0.jsonl" "$T/e2.jsonl"
check "group 3-6" slem-merge --partial -k 3 -o "$T/g36.jsonl" "$T/e3.jsonl" "$T/e4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
head -n 1 "$T/g36.jsonl" | grep -q '^{"slem_shard":{"index":3,"span":4,"count":7,"rows":5,"k":3,"database":"[0-9a-f]\{16\}",' && ok ||
  bad "the group's line: $(head -n 1 "$T/g36.jsonl")"
[ "$(tail -n 1 "$T/g36.jsonl")" = "$(tail -n 1 "$T/e3.jsonl")" ] && ok || bad "the group's end line: $(tail -n 1 "$T/g36.jsonl")"
slem-merge --partial -k 3 -F jsonl "$T/e3.jsonl" "$T/e4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl" | cmp -s - "$T/g36.jsonl" && ok ||
  bad "a group: the general merge (stdout) and the fast one (a file) differ"
# shell words of $E on purpose: the names hold no blank
# shellcheck disable=SC2086
slem-merge -k 3 -F jsonl -o "$T/one.jsonl" $E
for f in jsonl tsv; do
  check "two levels, $f" slem-merge -k 3 -F $f -o "$T/two.$f" "$T/g36.jsonl" "$T/g02.jsonl"
done
cmp -s "$T/two.tsv" "$T/em.tsv" && cmp -s "$T/two.jsonl" "$T/one.jsonl" && ok || bad "two levels differ from one"
expect_fail "a group left out" 1 "shard 3/7 is missing" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g02.jsonl"
expect_fail "a shard of a group again" 1 "g36.jsonl and .*e4again.jsonl both hold shard 4/7 (they hold shards 3-6 and 4-4)" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g02.jsonl" "$T/g36.jsonl" "$T/e4again.jsonl"
check "group 0-4" slem-merge --partial -k 3 -F jsonl -o "$T/g04.jsonl" "$T/g02.jsonl" "$T/e3.jsonl" "$T/e4.jsonl"
expect_fail "two groups overlap" 1 "both hold shard 3/7" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g04.jsonl" "$T/g36.jsonl"
check "three levels" slem-merge -k 3 -F tsv -o "$T/three.tsv" "$T/g04.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
cmp -s "$T/three.tsv" "$T/em.tsv" && ok || bad "three levels differ from one"
slem-merge --partial -k 2 -F jsonl -o "$T/g02k2.jsonl" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl"
expect_fail "a group of a smaller k" 1 "g02k2.jsonl: line 1: made with -k 2" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g02k2.jsonl" "$T/g36.jsonl"
# shards that are not consecutive make no group: no lines, refused beside groups
slem-merge --partial -k 3 -F jsonl -o "$T/g13.jsonl" "$T/e1.jsonl" "$T/e3.jsonl"
head -n 1 "$T/g13.jsonl" | grep -q '^{"query"' && ok || bad "shards 1 and 3 made a group: $(head -n 1 "$T/g13.jsonl")"
expect_fail "a merge of shards 1 and 3 beside a group" 1 "g13.jsonl: not the ranking of a shard (no shard line; a --partial merge of shards that are not consecutive writes none), but .*g02.jsonl holds shards 0-2 of 7" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g02.jsonl" "$T/g13.jsonl" "$T/g36.jsonl"
sed '1s/"span":4/"span":5/' "$T/g36.jsonl" >"$T/bigspan.jsonl"
expect_fail "a span past the split" 1 "bigspan.jsonl: line 1: a bad shard line (span 5 from index 3 of 7)" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g02.jsonl" "$T/bigspan.jsonl"
sed '1s/"span":4/"span":2/' "$T/g36.jsonl" >"$T/shortspan.jsonl"
expect_fail "a span short of the group's rows" 1 "shortspan.jsonl: line [0-9]*: row [34] ('[34]') is outside its shards 3-4 of 7, rows 2 to 2" "$T/o" slem-merge --partial -k 3 -o "$T/o" "$T/shortspan.jsonl"
sed '1s/"span":4/"span":0/' "$T/g36.jsonl" >"$T/zerospan.jsonl"
expect_fail "a span of 0" 1 "zerospan.jsonl: line 1: a bad shard line (no whole 'span')" "$T/o" slem-merge -k 3 -o "$T/o" "$T/g02.jsonl" "$T/zerospan.jsonl"
# a group of shards mixed with --allow-mixed-blas lists their descriptors' arithmetics, in
# whatever order they were given: the next level refuses it beside a group of one without
# the flag (as one level refuses the mix), and merges it with the flag
for i in 0 1 2 3 4 5 6; do
  c=Haswell; [ $i = 3 ] && c=SkylakeX
  sed "1s/,\"scoring\"/,\"descriptors_arithmetic\":\"$c (L)\",\"scoring\"/" "$T/e$i.jsonl" >"$T/x$i.jsonl"
done
slem-merge --partial -k 3 -o "$T/x02.jsonl" "$T/x0.jsonl" "$T/x1.jsonl" "$T/x2.jsonl"
check "a mixed group" slem-merge --allow-mixed-blas --partial -k 3 -o "$T/x36.jsonl" "$T/x4.jsonl" "$T/x3.jsonl" "$T/x5.jsonl" "$T/x6.jsonl"
head -n 1 "$T/x36.jsonl" | grep -q '"descriptors_arithmetic":"SkylakeX (L) + Haswell (L)"' && ok ||
  bad "a mixed group's line: $(head -n 1 "$T/x36.jsonl")"
expect_fail "a mixed group without the flag" 1 "x36.jsonl: line 1: descriptors_arithmetic SkylakeX (L) + Haswell (L), but .*x02.jsonl has Haswell (L)" "$T/o" slem-merge -k 3 -o "$T/o" "$T/x02.jsonl" "$T/x36.jsonl"
check "a mixed group with the flag" slem-merge --allow-mixed-blas -k 3 -F tsv -o "$T/xm.tsv" "$T/x36.jsonl" "$T/x02.jsonl"
cmp -s "$T/xm.tsv" "$T/em.tsv" && ok || bad "a mixed group in two levels differs from one"
# two shards that record other arithmetics are refused whatever the order, after a first
# shard that records none too
expect_fail "a mix after a shard that records no arithmetic" 1 "x3.jsonl: line 1: descriptors_arithmetic SkylakeX (L), but .*x1.jsonl has Haswell (L)" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/x1.jsonl" "$T/x2.jsonl" "$T/x3.jsonl" "$T/x4.jsonl" "$T/x5.jsonl" "$T/x6.jsonl"
# The same with descriptors encoded on two BLAS cores for real (Haswell and Prescott stand
# for two node generations: their descriptors differ in the last bits, and with them the
# database and query set fingerprints). Two groups merged with --allow-mixed-blas from one
# mix were merged without the flag at the next level (their lists "A + B" were equal),
# where one level refuses; a group alone too. Under the flag a fingerprint was compared
# with one reference shard's and waived against any other arithmetic, a group's list
# included: a shard of another database beside a group, or among shards in another order,
# passed, and a shard of queries and database of the two cores ("A + B" too) was compared
# with the group's lowest shard and refused. A group records each of its descriptors'
# arithmetics with its fingerprints, compared one by one as one level compares its shards.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
if has avx2 && has fma; then
  on() { c=$1; shift; env -u SLEM_BLAS_PIN -u SLEM_TEST_BLAS_CORE OPENBLAS_CORETYPE="$c" "$@"; }
  slem-negstats -q --leaf-rows 32 -o "$T/bc.slem" "$D/negatives.fvecs" "$D/validation.fvecs"
  # another database of as many rows (row 999 is row 0 again), other queries of the same
  # names (query 99 is query 0)
  { head -c $((999 * REC)) "$D/database.fvecs"; head -c $REC "$D/database.fvecs"; } >"$T/bdb.fvecs"
  { head -c $((99 * REC)) "$D/queries.fvecs"; head -c $REC "$D/queries.fvecs"; } >"$T/bq.fvecs"
  for c in Haswell Prescott Sandybridge; do
    on $c slem-encode -q -c "$T/bc.slem" -o "$T/bd.$c.slem" "$D/database.fvecs"
    on $c slem-encode -q -c "$T/bc.slem" -o "$T/bq.$c.slem" "$D/queries.fvecs"
  done
  on Haswell slem-encode -q -c "$T/bc.slem" -o "$T/bdx.slem" "$T/bdb.fvecs"
  on Prescott slem-encode -q -c "$T/bc.slem" -o "$T/bqx.slem" "$T/bq.fvecs"
  cmp -s "$T/bd.Haswell.slem" "$T/bd.Prescott.slem" && echo "note: Haswell and Prescott encoded the same bits"
  # bshard NAME I DATABASE QUERIES: shard I/4 in NAME.jsonl
  bshard() { slem-match -q -k 5 --shard "$2/4" -F jsonl -d "$3" -o "$T/$1.jsonl" "$4" || bad "shard $1"; }
  bshard h0 0 "$T/bd.Haswell.slem" "$T/bq.Haswell.slem"
  bshard p1 1 "$T/bd.Prescott.slem" "$T/bq.Prescott.slem"
  bshard h2 2 "$T/bd.Haswell.slem" "$T/bq.Haswell.slem"
  bshard p3 3 "$T/bd.Prescott.slem" "$T/bq.Prescott.slem"
  bshard s2 2 "$T/bd.Sandybridge.slem" "$T/bq.Sandybridge.slem"
  bshard s3 3 "$T/bd.Sandybridge.slem" "$T/bq.Sandybridge.slem"
  bshard x3 3 "$T/bdx.slem" "$T/bq.Haswell.slem"           # Haswell's, of another database
  bshard y3 3 "$T/bd.Prescott.slem" "$T/bqx.slem"          # Prescott's, of other queries
  bshard m2 2 "$T/bd.Prescott.slem" "$T/bq.Haswell.slem"   # "Haswell + Prescott"
  expect_fail "two cores: one level" 1 "p1.jsonl: line 1: " "$T/o" slem-merge -k 5 -o "$T/o" "$T/h0.jsonl" "$T/p1.jsonl" "$T/h2.jsonl" "$T/p3.jsonl"
  check "two cores: one level, with the flag" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/b1.tsv" "$T/h0.jsonl" "$T/p1.jsonl" "$T/h2.jsonl" "$T/p3.jsonl"
  check "two cores: group 0-1" slem-merge --allow-mixed-blas --partial -k 5 -o "$T/b01.jsonl" "$T/p1.jsonl" "$T/h0.jsonl"
  check "two cores: group 2-3" slem-merge --allow-mixed-blas --partial -k 5 -o "$T/b23.jsonl" "$T/h2.jsonl" "$T/p3.jsonl"
  head -n 1 "$T/b01.jsonl" | grep -q '"descriptors_databases":"[0-9a-f]\{16\}=Haswell ([^|]*) | [0-9a-f]\{16\}=Prescott ([^|]*)"' && ok ||
    bad "a group of two cores: its first line $(head -n 1 "$T/b01.jsonl")"
  tail -n 1 "$T/b01.jsonl" | grep -q '"descriptors_query_sets":"[0-9a-f]\{16\} [0-9a-f]\{16\}"}}$' && ok ||
    bad "a group of two cores: its end line $(tail -n 1 "$T/b01.jsonl")"
  expect_fail "two groups of one mix" 1 "b01.jsonl: line 1: descriptors_arithmetic Haswell (.*) + Prescott (.*): a group merged with --allow-mixed-blas" "$T/o" slem-merge -k 5 -F tsv -o "$T/o" "$T/b01.jsonl" "$T/b23.jsonl"
  expect_fail "two groups of one mix, the second named" 1 "b23.jsonl: line 1: descriptors_arithmetic Haswell (.*) + Prescott (.*): a group merged with --allow-mixed-blas" - slem-merge -k 5 -F tsv "$T/b23.jsonl" "$T/b01.jsonl"
  [ ! -s "$T/out" ] && ok || bad "two groups of one mix: output on stdout"
  expect_fail "a group of a mix alone" 1 "b01.jsonl: line 1: descriptors_arithmetic .*a group merged with --allow-mixed-blas" "$T/o" slem-merge --partial -k 5 -F tsv -o "$T/o" "$T/b01.jsonl"
  check "two groups of one mix, with the flag" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/b2.tsv" "$T/b23.jsonl" "$T/b01.jsonl"
  same "two groups of one mix: one level's ranking" "$T/b2.tsv" "$T/b1.tsv"
  check "two cores: three levels" slem-merge --allow-mixed-blas --partial -k 5 -o "$T/b02.jsonl" "$T/b01.jsonl" "$T/h2.jsonl"
  expect_fail "two cores: three levels, without the flag" 1 "line 1: descriptors_arithmetic" "$T/o" slem-merge -k 5 -F tsv -o "$T/o" "$T/b02.jsonl" "$T/p3.jsonl"
  check "two cores: three levels, with the flag" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/b3.tsv" "$T/p3.jsonl" "$T/b02.jsonl"
  same "two cores: three levels: one level's ranking" "$T/b3.tsv" "$T/b1.tsv"
  # under the flag, every two shards of one arithmetic agree, whatever their order
  for order in "h0 p1 h2 x3" "p1 h0 h2 x3" "p1 x3 h2 h0"; do
    set --
    for s in $order; do set -- "$@" "$T/$s.jsonl"; done
    expect_fail "another database among two cores ($order)" 1 "line 1: database [0-9a-f]*, but .* has [0-9a-f]* for descriptors of the same arithmetic, Haswell (" "$T/o" slem-merge --allow-mixed-blas -k 5 -o "$T/o" "$@"
  done
  expect_fail "another database beside a group of two cores" 1 "x3.jsonl: line 1: database [0-9a-f]*, but .*b01.jsonl has [0-9a-f]* for descriptors of the same arithmetic, Haswell (" "$T/o" slem-merge --allow-mixed-blas -k 5 -o "$T/o" "$T/b01.jsonl" "$T/h2.jsonl" "$T/x3.jsonl"
  expect_fail "other queries beside a group of two cores" 1 "y3.jsonl: its end line: query_set [0-9a-f]*, but .*b01.jsonl has [0-9a-f]* for descriptors of the same arithmetic, Prescott (" "$T/o" slem-merge --allow-mixed-blas -k 5 -o "$T/o" "$T/b01.jsonl" "$T/h2.jsonl" "$T/y3.jsonl"
  expect_fail "other queries beside a group of two cores, on a pipe" 1 "<stdin>: its end line: query_set [0-9a-f]*, but .*b01.jsonl has [0-9a-f]* for descriptors of the same arithmetic, Prescott (" "$T/o" sh -c 'slem-merge --allow-mixed-blas -k 5 -o "$1" "$2" "$3" - <"$4"' sh "$T/o" "$T/b01.jsonl" "$T/h2.jsonl" "$T/y3.jsonl"
  # a shard of queries and database of the two cores records the list of a group of the
  # two: an arithmetic of its own, waived against both as in one level
  head -n 1 "$T/m2.jsonl" | grep -q '"descriptors_arithmetic":"Haswell ([^"]*) + Prescott ([^"]*)"' && ok ||
    bad "a shard of queries and database of two cores: $(head -n 1 "$T/m2.jsonl")"
  check "queries and database of two cores, one level" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/bm1.tsv" "$T/h0.jsonl" "$T/p1.jsonl" "$T/m2.jsonl" "$T/p3.jsonl"
  check "queries and database of two cores beside a group of them" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/bm2.tsv" "$T/m2.jsonl" "$T/b01.jsonl" "$T/p3.jsonl"
  same "queries and database of two cores beside a group: one level's ranking" "$T/bm2.tsv" "$T/bm1.tsv"
  # a group of two cores beside shards of a third: as one level
  check "a third core, one level" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/bs1.tsv" "$T/s3.jsonl" "$T/h0.jsonl" "$T/p1.jsonl" "$T/s2.jsonl"
  check "a third core beside a group of two" slem-merge --allow-mixed-blas -k 5 -F tsv -o "$T/bs2.tsv" "$T/s3.jsonl" "$T/b01.jsonl" "$T/s2.jsonl"
  same "a third core beside a group of two: one level's ranking" "$T/bs2.tsv" "$T/bs1.tsv"
  expect_fail "a third core beside a group of two, without the flag" 1 "line 1: " "$T/o" slem-merge -k 5 -o "$T/o" "$T/s3.jsonl" "$T/b01.jsonl" "$T/s2.jsonl"
  rm -f "$T/o" # a merge that failed to refuse leaves it: the tests below expect none
else
  echo "cli-merge: this CPU runs no Haswell kernels: shards of two real BLAS cores skipped"
fi
# a tsv shard among jsonl ones cannot be checked: refused
expect_fail "a plain shard among checked ones" 1 "e4.tsv: not the ranking of a shard" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/e4.tsv" "$T/e5.jsonl" "$T/e6.jsonl"
head -c $((6 * 260)) "$D/database.fvecs" >"$T/six.fvecs"
slem-match -k 3 --shard 4/7 -F jsonl -d "$T/six.fvecs" -o "$T/x4.jsonl" "$D/queries.fvecs"
expect_fail "a shard of another database" 1 "x4.jsonl: line 1: rows 6, but .*e0.jsonl has 5: a shard of another database" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/x4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
# each shard's k at least the merge's: a shard of a larger k merges, one of a smaller is refused
slem-match -k 4 --shard 4/7 -F jsonl -d "$T/five.fvecs" -o "$T/k4.jsonl" "$D/queries.fvecs"
check "a shard of a larger k" slem-merge -k 3 -F tsv "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/k4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
same "a shard of a larger k" "$T/out" "$T/e.tsv"
expect_fail "a shard of a smaller k" 1 "e0.jsonl: line 1: made with -k 3, fewer than the merge's -k 4" "$T/o" slem-merge -k 4 -o "$T/o" "$T/e0.jsonl" "$T/e1.jsonl" "$T/e2.jsonl" "$T/e3.jsonl" "$T/k4.jsonl" "$T/e5.jsonl" "$T/e6.jsonl"
slem-match -k 3 --shard 1/2 -F jsonl -d "$T/five.fvecs" -o "$T/n2.jsonl" "$D/queries.fvecs"
expect_fail "a shard of another split" 1 "n2.jsonl: line 1: count 2, but .*e0.jsonl has 7: another split" "$T/o" slem-merge -k 3 -o "$T/o" "$T/e0.jsonl" "$T/n2.jsonl"
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
expect_fail "a shard of another cache" 1 "c2.1.jsonl: line 1: database [0-9a-f]*, but .*c1.0.jsonl has [0-9a-f]*: a shard of another database" "$T/o" slem-merge -k 3 -o "$T/o" "$T/c1.0.jsonl" "$T/c2.1.jsonl"
# ---- the pieces belong together: jsonl shards of slem-match --shard prove it ----
for i in 0 1 2; do
  slem-match -t 1 -k 10 --shard $i/3 -F jsonl -d "$D/database.fvecs" -o "$T/j$i.jsonl" "$D/queries.fvecs"
done
slem-match -t 1 -k 10 -d "$D/database.fvecs" -o "$T/all10.tsv" "$D/queries.fvecs"
check "merge of --shard jsonl" slem-merge -k 10 -F tsv -o "$T/j.tsv" "$T/j0.jsonl" "$T/j1.jsonl" "$T/j2.jsonl"
same "merge of --shard jsonl" "$T/j.tsv" "$T/all10.tsv"
tail -n 1 "$T/j1.jsonl" | grep -q '^{"slem_shard_end":{"queries":100,"query_set":"[0-9a-f]\{16\}"}}$' && ok ||
  bad "the end line of jsonl: $(tail -n 1 "$T/j1.jsonl")"
# the fingerprints are of the vectors, not of how they were read: a shard made with other
# query blocks, tiles and threads merges with the others
slem-match -t 2 --query-block 7 --tile-rows 50 -k 10 --shard 1/3 -F jsonl -d "$D/database.fvecs" -o "$T/j1b.jsonl" "$D/queries.fvecs"
check "shards of other blocks and threads" slem-merge -k 10 -F tsv -o "$T/jb.tsv" "$T/j0.jsonl" "$T/j1b.jsonl" "$T/j2.jsonl"
same "shards of other blocks and threads" "$T/jb.tsv" "$T/all10.tsv"
# shards made with -k 5 merged with -k 10: shards of 6 rows, whose lists of 5 pass for
# "all but the query's own row", were merged into a wrong ranking
head -c $((18 * REC)) "$D/database.fvecs" >"$T/r18.fvecs"
for i in 0 1 2; do
  slem-match -t 1 -k 5 --shard $i/3 -F jsonl -d "$T/r18.fvecs" -o "$T/k5.$i.jsonl" "$D/queries.fvecs"
done
expect_fail "shards of -k 5 merged with -k 10" 1 "k5.0.jsonl: line 1: made with -k 5, fewer than the merge's -k 10" "$T/o" slem-merge -k 10 -o "$T/o" "$T/k5.0.jsonl" "$T/k5.1.jsonl" "$T/k5.2.jsonl"
# plain shards prove what their lists show: a list shorter than -k must hold every row of
# its shard but at most the query's own (--exclude-self); the same shards in tsv are refused
for i in 0 1 2; do
  slem-match -q -t 1 -k 5 --shard $i/3 -d "$T/r18.fvecs" -o "$T/k5.$i.tsv" "$D/queries.fvecs"
done
expect_fail "plain shards of -k 5 merged with -k 10" 1 "k5.[012].tsv: line [0-9]*: query '[0-9]*' has 5 results, fewer than -k 10, of the 6 rows the shard returned, and the row it lacks is not its own" "$T/o5" slem-merge -k 10 -o "$T/o5" "$T/k5.0.tsv" "$T/k5.1.tsv" "$T/k5.2.tsv"
# and a database searched with itself, --exclude-self: its own shard lists all rows but the
# query's own, the others all theirs, and the merge is exact
slem-match -q -t 1 -k 7 --exclude-self -d "$T/r18.fvecs" -o "$T/self7.tsv" "$T/r18.fvecs"
for i in 0 1 2; do
  slem-match -q -t 1 -k 6 --exclude-self --shard $i/3 -d "$T/r18.fvecs" -o "$T/self.$i.tsv" "$T/r18.fvecs"
done
check "plain shards, --exclude-self" slem-merge -k 7 -o "$T/self.tsv" "$T/self.0.tsv" "$T/self.1.tsv" "$T/self.2.tsv"
same "plain shards, --exclude-self" "$T/self.tsv" "$T/self7.tsv"
# a row listed twice for one query (another id, a lower score)
r=$(sed -n '2s/^[^}]*"row":\([0-9]*\).*/\1/p' "$T/j1.jsonl")
sed '2s/]}$/,{"rank":11,"id":"dup","row":'"$r"',"score":-5}]}/' "$T/j1.jsonl" >"$T/dup.jsonl"
expect_fail "a row twice for one query" 1 "dup.jsonl: line 2: row $r twice for query '0' (also .*dup.jsonl, line 2)" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/dup.jsonl" "$T/j2.jsonl"
# without --db-ids a row carries one id in every line of every shard, and an id names one
# row: a line whose id was edited ("999" on a row that other lines name by its number) is
# refused, naming the file and line
r=$(grep -o '"row":[0-9]*' "$T/j1.jsonl" | sort | uniq -c | sort -rn | sed -n '1s/.*"row"://p')
sed '0,/"id":"'"$r"'","row":'"$r"',/s//"id":"999","row":'"$r"',/' "$T/j1.jsonl" >"$T/renamed.jsonl"
expect_fail "an id that is not its row" 1 "renamed.jsonl: line [0-9]*: \(row $r has id '$r', but id '999'\|id '999' names row $r\)" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/renamed.jsonl" "$T/j2.jsonl"
# the same id on two rows (lines of two databases with other ids)
sed '2s/"id":"[0-9]*","row":\([0-9]*\),"score"/"id":"x","row":\1,"score"/; 3s/"id":"[0-9]*","row":\([0-9]*\),"score"/"id":"x","row":\1,"score"/' "$T/j1.jsonl" >"$T/twice.jsonl"
expect_fail "an id on two rows" 1 "twice.jsonl: line 3: id 'x' names row [0-9]*, but row [0-9]* in a line before" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/twice.jsonl" "$T/j2.jsonl"
# a row beyond the database, a row outside its shard's range (rows 0 to 332 of shard 0/3)
sed '2s/"row":[0-9]*/"row":1005/' "$T/j2.jsonl" >"$T/beyond.jsonl"
expect_fail "a row beyond the database" 1 "beyond.jsonl: line 2: row 1005 ('[0-9]*') is beyond the database, of 1000 rows" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/j1.jsonl" "$T/beyond.jsonl"
sed '2s/"row":[0-9]*/"row":998/' "$T/j0.jsonl" >"$T/outside.jsonl"
expect_fail "a row outside its shard" 1 "outside.jsonl: line 2: row 998 ('[0-9]*') is outside its shard 0/3, rows 0 to 332" "$T/o" slem-merge -k 10 -o "$T/o" "$T/outside.jsonl" "$T/j1.jsonl" "$T/j2.jsonl"
# shards of two databases of the same shape, ids and cache: the rows rotated by 500
{ tail -c +$((500 * REC + 1)) "$D/database.fvecs"; head -c $((500 * REC)) "$D/database.fvecs"; } >"$T/rot.fvecs"
slem-match -t 1 -k 10 --shard 1/3 -F jsonl -d "$T/rot.fvecs" -o "$T/rot1.jsonl" "$D/queries.fvecs"
expect_fail "shards of two databases (fvecs)" 1 "rot1.jsonl: line 1: database [0-9a-f]*, but .*j0.jsonl has [0-9a-f]*: a shard of another database" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/rot1.jsonl" "$T/j2.jsonl"
slem-encode -q -c "$T/c1.slem" -o "$T/dA.slem" "$D/database.fvecs"
slem-encode -q -c "$T/c1.slem" -o "$T/dB.slem" "$T/rot.fvecs"
slem-encode -q -c "$T/c1.slem" -o "$T/dA2.slem" "$D/database.fvecs"
slem-match -t 1 -k 10 --shard 0/2 -F jsonl -d "$T/dA.slem" -o "$T/cA0.jsonl" "$T/q1.slem"
slem-match -t 1 -k 10 --shard 1/2 -F jsonl -d "$T/dB.slem" -o "$T/cB1.jsonl" "$T/q1.slem"
slem-match -t 1 -k 10 --shard 1/2 -F jsonl -d "$T/dA2.slem" -o "$T/cA1.jsonl" "$T/q1.slem"
expect_fail "shards of two databases of one cache" 1 "cB1.jsonl: line 1: database [0-9a-f]*, but .*cA0.jsonl has [0-9a-f]*: a shard of another database" "$T/o" slem-merge -k 10 -o "$T/o" "$T/cA0.jsonl" "$T/cB1.jsonl"
check "the same database encoded twice" slem-merge -k 10 -o "$T/cA.jsonl" "$T/cA0.jsonl" "$T/cA1.jsonl"
# a database on stdin is named by its content when it is a file; on a pipe (npy, which can
# be sharded there) it cannot be, and a jsonl shard is refused with nothing written
slem-encode -q -c "$T/c1.slem" -F npy -o "$T/dA.npy" "$D/database.fvecs"
slem-match -t 1 -k 10 --shard 0/2 -F jsonl -d "$T/dA.npy" -o "$T/np0.jsonl" "$T/q1.slem"
check "a database on stdin from a file" sh -c 'slem-match -t 1 -k 10 --shard 0/2 -F jsonl -d - -o "$1" "$2" <"$3"' sh "$T/np0b.jsonl" "$T/q1.slem" "$T/dA.npy"
same "a database on stdin from a file" "$T/np0b.jsonl" "$T/np0.jsonl"
expect_fail "a database on a pipe, jsonl shard" 1 "<stdin>: not a regular file (a pipe?): the database cannot be named by its content" "$T/np0c.jsonl" sh -c 'cat "$3" | slem-match -t 1 -k 10 --shard 0/2 -F jsonl -d - -o "$1" "$2"' sh "$T/np0c.jsonl" "$T/q1.slem" "$T/dA.npy"
# shards of two query sets of the same count and ids: refused before anything is written,
# from the end lines of files; from a pipe at its end
slem-match -t 1 -k 10 --shard 2/3 -F jsonl -d "$D/database.fvecs" -o "$T/v2.jsonl" "$D/validation.fvecs"
expect_fail "shards of two query sets" 1 "v2.jsonl: its end line: query_set [0-9a-f]*, but .*j0.jsonl has [0-9a-f]*: the ranking of other queries" - slem-merge -k 10 "$T/j0.jsonl" "$T/j1.jsonl" "$T/v2.jsonl"
[ ! -s "$T/out" ] && ok || bad "shards of two query sets: output on stdout"
expect_fail "shards of two query sets, on a pipe" 1 "<stdin>: its end line: query_set [0-9a-f]*, but .*j0.jsonl has" "$T/o" sh -c 'slem-merge -k 10 -o "$1" "$2" "$3" - <"$4"' sh "$T/o" "$T/j0.jsonl" "$T/j1.jsonl" "$T/v2.jsonl"
# to stdout, a pipe's end line is checked at its end, after the queries went out (as
# slem-merge(1) says under EXIT STATUS; -o for all or nothing): status 1, the message, and
# whole lines on stdout, here every query; with -o an existing file is left as it was
sed '$s/"query_set":"[0-9a-f]*"/"query_set":"0123456789abcdef"/' "$T/j2.jsonl" >"$T/j2q.jsonl"
expect_fail "a pipe's end line of other queries, to stdout" 1 "<stdin>: its end line: query_set 0123456789abcdef, but .*j0.jsonl has" - sh -c 'slem-merge -k 10 -F tsv "$1" "$2" - <"$3"' sh "$T/j0.jsonl" "$T/j1.jsonl" "$T/j2q.jsonl"
same "a pipe's end line of other queries, to stdout: the queries before it" "$T/out" "$T/j.tsv"
echo keep >"$T/kept2"
sh -c 'slem-merge -k 10 -F tsv -o "$1" "$2" "$3" - <"$4"' sh "$T/kept2" "$T/j0.jsonl" "$T/j1.jsonl" "$T/j2q.jsonl" 2>"$T/err"
st=$?
[ "$st" = 1 ] && [ "$(cat "$T/kept2")" = keep ] && ! ls -a "$T" | grep -q '\.tmp\.' && ok ||
  bad "a pipe's end line of other queries, -o: status $st, $(head -c 100 "$T/kept2")"
# a group so cut on stdout has its first line and no end line: the next level refuses it
sh -c 'slem-merge --partial -k 10 -F jsonl "$1" "$2" - <"$3"' sh "$T/j0.jsonl" "$T/j1.jsonl" "$T/j2q.jsonl" >"$T/gq.jsonl" 2>"$T/err"
st=$?
[ "$st" = 1 ] && head -n 1 "$T/gq.jsonl" | grep -q '^{"slem_shard":{"index":0,"span":3,' &&
  [ "$(wc -l <"$T/gq.jsonl")" = 101 ] && ok || bad "a group cut on stdout: status $st, $(wc -l <"$T/gq.jsonl") lines"
expect_fail "a group cut on stdout, merged" 1 "gq.jsonl: line 101: no shard end line after the last query" "$T/o" slem-merge -k 10 -o "$T/o" "$T/gq.jsonl"
# the end line missing, bad, or followed by a line
head -n -1 "$T/j2.jsonl" >"$T/noend.jsonl"
expect_fail "no end line" 1 "noend.jsonl: line 101: no shard end line after the last query" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/j1.jsonl" "$T/noend.jsonl"
sed '$s/"query_set":"[0-9a-f]*"/"query_set":"xyz"/' "$T/j2.jsonl" >"$T/badend.jsonl"
expect_fail "a bad end line" 1 "badend.jsonl: the last line: a bad shard line (no 'query_set' of 16 hex digits)" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/j1.jsonl" "$T/badend.jsonl"
{ cat "$T/j2.jsonl"; sed -n 2p "$T/j2.jsonl"; } >"$T/after.jsonl"
expect_fail "a line after the end line" 1 "after.jsonl: line 103: a line after the shard's end line" "$T/o" slem-merge -k 10 -o "$T/o" "$T/j0.jsonl" "$T/j1.jsonl" "$T/after.jsonl"
# slem-eval reads a shard's ranking, its two lines skipped
check "slem-eval of a shard's ranking" slem-eval --query-labels "$D/queries.labels" --db-labels "$D/database.labels" "$T/j1.jsonl"
# tsv and trec shards stay plain: slem-match --shard says what cannot be checked
expect_fail "--shard with tsv warns" 0 "slem-merge cannot check" - slem-match -k 3 --shard 1/3 -d "$D/database.fvecs" "$D/queries.fvecs"

# ---- 10 000 queries, beyond the merge's batches: byte for byte, and refused at the end ----
for i in $(seq 100); do cat "$D/queries.fvecs"; done >"$T/q10k.fvecs"
for f in tsv jsonl; do
  slem-match -t 1 -k 10 -F $f -d "$D/database.fvecs" -o "$T/all10k.$f" "$T/q10k.fvecs"
done
for i in 0 1 2; do
  slem-match -t 1 -k 10 --shard $i/3 -F jsonl -d "$D/database.fvecs" -o "$T/t$i.jsonl" "$T/q10k.fvecs"
done
for f in tsv jsonl; do
  check "10 000 queries, $f" slem-merge -k 10 -o "$T/m10k.$f" "$T/t0.jsonl" "$T/t1.jsonl" "$T/t2.jsonl"
  same "10 000 queries, $f" "$T/m10k.$f" "$T/all10k.$f"
done
# the same shards as tsv and as npy pairs (slem-merge --partial of each alone): the fast
# readers (a file output) against the general merge (stdout) and one slem-match, with the
# many ties of the digits broken by the row
for i in 0 1 2; do
  slem-merge --partial -k 10 -F tsv -o "$T/t$i.tsv" "$T/t$i.jsonl"
  slem-merge --partial -k 10 -F npy -o "$T/t$i.npy" "$T/t$i.jsonl"
done
for f in tsv jsonl; do
  check "10 000 queries from tsv, to $f" slem-merge -k 10 -F $f -o "$T/m10k.$f" "$T/t0.tsv" "$T/t1.tsv" "$T/t2.tsv"
  same "10 000 queries from tsv, to $f" "$T/m10k.$f" "$T/all10k.$f"
  slem-merge -k 10 -F $f "$T/t0.tsv" "$T/t1.tsv" "$T/t2.tsv" >"$T/m10kg.$f"
  same "10 000 queries from tsv, to $f, the general merge" "$T/m10kg.$f" "$T/all10k.$f"
  slem-merge -k 10 -F $f "$T/t0.jsonl" "$T/t1.jsonl" "$T/t2.jsonl" >"$T/m10kg.$f"
  same "10 000 queries from jsonl, to $f, the general merge" "$T/m10kg.$f" "$T/all10k.$f"
done
check "10 000 queries from npy" slem-merge -k 10 -o "$T/m10k.npy" "$T/t0.I.npy" "$T/t1.I.npy" "$T/t2.I.npy"
slem-merge -k 10 -F tsv "$T/m10k.npy" >"$T/m10k.npy.tsv"
same "10 000 queries from npy" "$T/m10k.npy.tsv" "$T/all10k.tsv"
check "10 000 queries, k 7 from npy" slem-merge -k 7 -o "$T/m10k7.npy" "$T/t0.I.npy" "$T/t1.I.npy" "$T/t2.I.npy"
slem-merge -k 7 -F tsv "$T/t0.tsv" "$T/t1.tsv" "$T/t2.tsv" >"$T/m10k7.tsv"
slem-merge -k 7 -F tsv "$T/m10k7.npy" >"$T/m10k7.npy.tsv"
same "10 000 queries, k 7 from npy" "$T/m10k7.npy.tsv" "$T/m10k7.tsv"
# npy shards named NAME or NAME.npy (no such file: NAME.I.npy and NAME.D.npy) take the
# fast merge too: the bytes of the .I.npy names; a pair whose D is missing, refused alike
check "10 000 queries from npy named NAME" slem-merge -k 10 -o "$T/m10kn.npy" "$T/t0" "$T/t1" "$T/t2"
check "10 000 queries from npy named NAME.npy" slem-merge -k 10 -o "$T/m10kx.npy" "$T/t0.npy" "$T/t1.npy" "$T/t2.npy"
for x in I D; do
  cmp -s "$T/m10kn.$x.npy" "$T/m10k.$x.npy" && cmp -s "$T/m10kx.$x.npy" "$T/m10k.$x.npy" && ok ||
    bad "npy named NAME or NAME.npy: another $x than from NAME.I.npy"
done
mkdir -p "$T/nod"
cp "$T/t0.I.npy" "$T/t0.D.npy" "$T/t1.I.npy" "$T/t1.D.npy" "$T/t2.I.npy" "$T/nod/"
expect_fail "npy named NAME, a D missing" 1 "t2.D.npy" "$T/m10kd.npy" slem-merge -k 10 -o "$T/m10kd.npy" "$T/nod/t0" "$T/nod/t1" "$T/nod/t2"
[ "$(wc -l <"$T/all10k.tsv")" = 100000 ] && ok || bad "10 000 queries: $(wc -l <"$T/all10k.tsv") lines"
{ head -c $((9999 * REC)) "$T/q10k.fvecs"; head -c $REC "$D/validation.fvecs"; } >"$T/q10kb.fvecs"
slem-match -t 1 -k 10 --shard 2/3 -F jsonl -d "$D/database.fvecs" -o "$T/t2b.jsonl" "$T/q10kb.fvecs"
expect_fail "10 000 queries, the last one another" 1 "t2b.jsonl: its end line: query_set" "$T/o" slem-merge -k 10 -o "$T/o" "$T/t0.jsonl" "$T/t1.jsonl" "$T/t2b.jsonl"
expect_fail "10 000 queries, the last one another, on a pipe" 1 "<stdin>: its end line: query_set" "$T/o" sh -c 'slem-merge -k 10 -o "$1" "$2" "$3" - <"$4"' sh "$T/o" "$T/t0.jsonl" "$T/t1.jsonl" "$T/t2b.jsonl"
# jsonl ids: each one its row's number (slem-match without --db-ids), the fast merge then
# keeps no id per row; ids of their own (--db-ids), kept per row; both kinds in one merge
# (row 238 renamed r238 in one shard), left to the general merge; an id of two rows (row
# 238 named 236, the id of row 236) refused by both merges alike
for i in 0 1 2; do
  slem-match -t 1 -k 10 --shard $i/3 -F jsonl --db-ids "$D/database.ids" -d "$D/database.fvecs" -o "$T/di$i.jsonl" "$D/queries.fvecs"
  slem-match -t 1 -k 10 --shard $i/3 -F jsonl -d "$D/database.fvecs" -o "$T/pi$i.jsonl" "$D/queries.fvecs"
done
slem-match -t 1 -k 10 -F jsonl --db-ids "$D/database.ids" -d "$D/database.fvecs" -o "$T/diall.jsonl" "$D/queries.fvecs"
check "jsonl shards with --db-ids, to a file" slem-merge -k 10 -o "$T/dim.jsonl" "$T/di0.jsonl" "$T/di1.jsonl" "$T/di2.jsonl"
same "jsonl shards with --db-ids" "$T/dim.jsonl" "$T/diall.jsonl"
grep -q '"id":"digit' "$T/dim.jsonl" && ok || bad "jsonl shards with --db-ids: the ids lost"
sed 's/"id":"238","row":238/"id":"r238","row":238/g' "$T/pi0.jsonl" >"$T/pimix.jsonl"
[ "$(grep -c '"id":"r238"' "$T/pimix.jsonl")" -gt 0 ] && ok || bad "jsonl ids of both kinds: row 238 not in shard 0 (the test's data changed)"
check "jsonl ids of both kinds, to a file" slem-merge -k 10 -o "$T/mixf.jsonl" "$T/pimix.jsonl" "$T/pi1.jsonl" "$T/pi2.jsonl"
slem-merge -k 10 "$T/pimix.jsonl" "$T/pi1.jsonl" "$T/pi2.jsonl" >"$T/mixg.jsonl"
same "jsonl ids of both kinds, the general merge" "$T/mixf.jsonl" "$T/mixg.jsonl"
grep -q '"id":"r238","row":238' "$T/mixf.jsonl" && ok || bad "jsonl ids of both kinds: row 238's own id lost"
sed 's/"id":"238","row":238/"id":"236","row":238/g' "$T/pi0.jsonl" >"$T/pidup.jsonl"
expect_fail "jsonl: an id of two rows, to a file" 1 "pidup.jsonl: line [0-9]*: id '236' appears twice" "$T/dupf.jsonl" \
  slem-merge -k 10 -o "$T/dupf.jsonl" "$T/pidup.jsonl" "$T/pi1.jsonl" "$T/pi2.jsonl"
expect_fail "jsonl: an id of two rows, the general merge" 1 "pidup.jsonl: line [0-9]*: id '236' appears twice" - \
  slem-merge -k 10 "$T/pidup.jsonl" "$T/pi1.jsonl" "$T/pi2.jsonl"
# a field of 65 536 bytes or more, in a query after the first (which the general merge's
# code reads before the fast merge tries): the fast merge kept its length in 16 bits and
# took its first bytes for the whole, merging what the general merge refuses (an id
# '236xx...x' as row 236, a score '4377' and 65 536 zeros as 4377)
x64k=$(head -c 65536 /dev/zero | tr '\0' x)
z64k=$(head -c 65536 /dev/zero | tr '\0' 0)
awk -F '\t' -v OFS='\t' -v x="$x64k" 'NR == 2501 { $3 = $3 x } { print }' "$T/stsv.0" >"$T/longid.tsv"
awk -F '\t' -v OFS='\t' -v z="$z64k" 'NR == 2501 { $4 = $4 z } { print }' "$T/stsv.0" >"$T/longsc.tsv"
sed "51s/\"score\":\([-0-9.e+]*\)}/\"score\":\1$z64k}/" "$T/sjsonl.0" >"$T/longsc.jsonl"
cmp -s "$T/longsc.jsonl" "$T/sjsonl.0" && bad "a score of 65 540 bytes: line 51 not changed (the test's data changed)" || ok
rm -f "$T/long.out"
for to in "-o $T/long.out" ""; do
  # (the messages are cut at the length of an error message)
  outf=${to:+$T/long.out}
  expect_fail "tsv: an id of 65 539 bytes${to:+, to a file}" 1 "longid.tsv: line 2501: id '[0-9]*xxxxxxxx" "${outf:--}" \
    slem-merge -k 50 $to "$T/longid.tsv" "$T/stsv.1" "$T/stsv.2"
  expect_fail "tsv: a score of 65 540 bytes${to:+, to a file}" 1 "longsc.tsv: line 2501: score '[0-9]*00000000" "${outf:--}" \
    slem-merge -k 50 $to "$T/longsc.tsv" "$T/stsv.1" "$T/stsv.2"
  expect_fail "jsonl: a score of 65 540 bytes${to:+, to a file}" 1 "longsc.jsonl: line 51: result 1: \"score\" is not a finite number" "${outf:--}" \
    slem-merge -k 50 $to "$T/longsc.jsonl" "$T/sjsonl.1" "$T/sjsonl.2"
  rm -f "$T/long.out"
done
# shards scored by another similarity (their first lines say which): a cosine shard, an
# --exclude-self one, an affine one beside dot-product ones are refused, nothing written
for i in 0 1; do
  slem-match -q -t 1 -k 5 --shard $i/2 -F jsonl -d "$D/database.fvecs" -o "$T/sc$i.jsonl" "$D/queries.fvecs"
done
slem-match -q -t 1 -k 5 --shard 1/2 -F jsonl --normalize -d "$D/database.fvecs" -o "$T/sc1n.jsonl" "$D/queries.fvecs"
slem-match -q -t 1 -k 5 --shard 1/2 -F jsonl --exclude-self -d "$D/database.fvecs" -o "$T/sc1x.jsonl" "$D/queries.fvecs"
check "shards of one similarity" slem-merge -k 5 -o "$T/sc.tsv" "$T/sc0.jsonl" "$T/sc1.jsonl"
head -n 1 "$T/sc1n.jsonl" | grep -q '"scoring":"cosine"}}$' && ok || bad "the shard line of a cosine shard: $(head -n 1 "$T/sc1n.jsonl")"
expect_fail "a cosine shard with a dot-product one" 1 "sc1n.jsonl: line 1: scoring cosine, but .*sc0.jsonl has dot: shards scored by another similarity" "$T/o" slem-merge -k 5 -o "$T/o" "$T/sc0.jsonl" "$T/sc1n.jsonl"
expect_fail "an --exclude-self shard with a plain one" 1 "sc1x.jsonl: line 1: scoring dot exclude-self, but .*sc0.jsonl has dot" "$T/o" slem-merge -k 5 -o "$T/o" "$T/sc0.jsonl" "$T/sc1x.jsonl"
expect_fail "a cosine shard on a pipe" 1 "<stdin>: line 1: scoring cosine" "$T/o" sh -c 'slem-merge -k 5 -o "$1" "$2" - <"$3"' sh "$T/o" "$T/sc0.jsonl" "$T/sc1n.jsonl"
# a shard whose list is not as slem-match writes it (best first, equal scores by the lower
# row, ranked 1, 2, ...): edited or another tool's, refused with the line named
sed -E '5s/("rank":1,[^}]*"score":)[-0-9.e+]+/\1-1000000/' "$T/sc1.jsonl" >"$T/sc1s.jsonl"
expect_fail "a jsonl shard not best first" 1 "sc1s.jsonl: line 5: query '3' lists row .* after row .* (score -1000000): not best first" "$T/o" slem-merge -k 5 -o "$T/o" "$T/sc0.jsonl" "$T/sc1s.jsonl"
sed '5s/"rank":1,/"rank":7,/' "$T/sc1.jsonl" >"$T/sc1r.jsonl"
expect_fail "a jsonl shard with a bad rank" 1 "sc1r.jsonl: line 5: query '3': rank 7, but it is result 1" "$T/o" slem-merge -k 5 -o "$T/o" "$T/sc0.jsonl" "$T/sc1r.jsonl"
awk -F '\t' -v OFS='\t' 'NR == 1 { a = $3; b = $4; getline; print $1, 1, $3, $4; print $1, 2, a, b; next } { print }' "$T/stsv.0" >"$T/swap.tsv"
expect_fail "a tsv shard not best first" 1 "swap.tsv: line 2: query '0' lists row" "$T/o" slem-merge -k 50 -o "$T/o" "$T/swap.tsv" "$T/stsv.1" "$T/stsv.2"

# ---- npy shards have rows, not lines: every message names the row (a query) or the row
# and column (a result), from 0 as the npy reader's own messages; each said "line R + 1" ----
cd "$T" || exit 1
npy_pair na 2 2 '1 2 3 4' '.5 .25 .5 .25'
npy_pair nb 1 2 '5 6' '.5 .25'
npy_pair nc 2 2 '7 8 9 10' '.5 .25 .5 .25'
expect_fail "npy: a shard with itself" 1 "na.I.npy: row 0, column 0: row 1 ('1') is also in na.I.npy: the shards overlap" "$T/o" slem-merge -k 2 -o "$T/o" na.npy na.npy
expect_fail "npy: a query after the first shard ended" 1 "nc.I.npy: row 1: query '1' is not in nb.I.npy, which has ended" "$T/o" slem-merge -k 2 -o "$T/o" nb.npy nc.npy
expect_fail "npy: a shard that ends first" 1 "nb.I.npy: ends before query '1' (nc.I.npy, row 1)" "$T/o" slem-merge -k 2 -o "$T/o" nc.npy nb.npy
printf 'x\t1\t9\t0.5\nx\t2\t10\t0.25\n' >"$T/nx.tsv"
expect_fail "npy: another query than a tsv shard's" 1 "na.I.npy: row 0: query '0', but nx.tsv has 'x' there (line 1)" "$T/o" slem-merge -k 2 -o "$T/o" nx.tsv na.npy
expect_fail "tsv: another query than an npy shard's" 1 "nx.tsv: line 1: query 'x', but na.I.npy has '0' there (row 0)" "$T/o" slem-merge -k 2 -o "$T/o" na.npy nx.tsv
npy_pair nu 1 2 '1 2' '.25 .5'
expect_fail "npy: a row not best first" 1 "nu.I.npy: row 0, column 1: query '0' lists row 2 ('2', score 0.5) after row 1 (score 0.25): not best first" "$T/o" slem-merge -k 2 -o "$T/o" nu.npy
npy_pair ns 2 2 '1 2 3 -1' '.5 .25 .5 pad'
expect_fail "npy: a short row, more rows returned" 1 "ns.I.npy: row 1: query '1' has 1 results, fewer than -k 2, yet the shard returned 3 different rows" "$T/o" slem-merge -k 2 -o "$T/o" ns.npy
npy_pair nt 2 2 '1 2 1 -1' '.5 .25 .5 pad'
expect_fail "npy: a short row that lacks another row than its own" 1 "nt.I.npy: row 1: query '1' has 1 results, fewer than -k 2, of the 2 rows the shard returned" "$T/o" slem-merge -k 2 -o "$T/o" nt.npy
printf 'a\nb\n' >"$T/nab.ids"
expect_fail "npy: a row not in --db-ids" 1 "nb.I.npy: row 0, column 0: id '5' is not in .*nab.ids" "$T/o" slem-merge -k 2 --db-ids "$T/nab.ids" -o "$T/o" nb.npy
printf '5\n6\n' >"$T/n56.ids"
expect_fail "npy: a row that --db-ids puts elsewhere" 1 "nb.I.npy: row 0, column 0: id '5' has row 5, but line 1 of .*n56.ids" "$T/o" slem-merge -k 2 --db-ids "$T/n56.ids" -o "$T/o" nb.npy
printf '{"query":"0","results":[{"rank":1,"id":"7","row":3,"score":1}]}\n' >"$T/n7.jsonl"
npy_pair n7 1 1 '7' '.5'
expect_fail "npy: a row whose number a jsonl shard gave another row" 1 "n7.I.npy: row 0, column 0: id '7' names row 7, but row 3 in a line before" "$T/o" slem-merge -k 1 -o "$T/o" n7.jsonl n7.npy
cd "$TOP" || exit 1
finish cli-merge
