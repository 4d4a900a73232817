#!/bin/sh
# CLI tests of slem-match's exact scores: the output must be byte-identical whatever the
# thread count, tile and query-block sizes, the order of the queries, and the split of
# the database into files and shards (shards merged by the ordering rule written here in
# awk, and by slem-merge); duplicate rows score alike, the lower row first.
# The data hold exact duplicates (rows copied to other tiles) and exact ties (the raw
# digits are small integers). Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
REC=260 # bytes of one 64-dimensional fvecs record

# rows FILE FIRST COUNT: records FIRST .. FIRST+COUNT-1 of a 64-dimensional fvecs file
rows() { dd if="$1" bs=$REC skip="$2" count="$3" 2>/dev/null; }
# reverse FILE N: the N records in reverse order
reverse() { i=$(($2 - 1)); while [ $i -ge 0 ]; do rows "$1" $i 1; i=$((i - 1)); done; }
# by_query: a tsv ranking sorted by query id, then rank (stable across runs)
by_query() { sort -t "$(printf '\t')" -k1,1 -k2,2n "$1"; }
# merge K FILES...: the shard rankings (ids are global rows) merged by the ordering rule,
# higher score first and equal scores by lower row, then the top K re-ranked
merge() {
  k=$1; shift
  cat "$@" | sort -t "$(printf '\t')" -k1,1n -k4,4gr -k3,3n |
    awk -F '\t' -v OFS='\t' -v k="$k" '$1 != q { q = $1; r = 0 } ++r <= k { print $1, r, $3, $4 }'
}
same() { # same NAME A B: byte-identical files
  if cmp -s "$2" "$3"; then ok; else bad "$1: $(diff "$2" "$3" | head -4 | tr '\n' ' ')"; fi
}

# ---- descriptors do not depend on the thread count either (single and double precision,
# unit descriptors and classifiers; blocks of 1000 rows cut into fixed chunks) ----
slem-negstats -q --lambda-rel 1000 -o "$T/neg0.slem" "$D/negatives.fvecs"
for mode in "--precision single" "--precision double" "--classifier"; do
  # shellcheck disable=SC2086
  slem-encode -q -t 1 $mode -c "$T/neg0.slem" -o "$T/t1.fvecs" "$D/database.fvecs"
  # shellcheck disable=SC2086
  slem-encode -q -t 2 $mode -c "$T/neg0.slem" -o "$T/t2.fvecs" "$D/database.fvecs"
  same "encode $mode, -t 1 and -t 2" "$T/t1.fvecs" "$T/t2.fvecs"
  # the default block grows with the threads (four 256-row chunks each), and a writing
  # thread writes it: the same bytes at -t 3 and 5, and with blocks of 256 and 4096
  for tb in "-t 3" "-t 5" "-t 3 -b 256" "-t 5 -b 4096"; do
    # shellcheck disable=SC2086
    slem-encode -q $tb $mode -c "$T/neg0.slem" -o "$T/t3.fvecs" "$D/database.fvecs"
    same "encode $mode, -t 1 and $tb" "$T/t1.fvecs" "$T/t3.fvecs"
  done
done

# ---- the data ----
slem-negstats -q --lambda-rel 1000 -o "$T/neg.slem" "$D/negatives.fvecs"
slem-encode -c "$T/neg.slem" -o "$T/enc.fvecs" "$D/database.fvecs"
slem-encode -c "$T/neg.slem" -o "$T/encq.fvecs" "$D/queries.fvecs"
# a database of 1080 rows: 1000 descriptors, then rows 0-39 and 500-539 again
{ cat "$T/enc.fvecs"; rows "$T/enc.fvecs" 0 40; rows "$T/enc.fvecs" 500 40; } >"$T/db.fvecs"
{ cat "$D/database.fvecs"; rows "$D/database.fvecs" 0 40; rows "$D/database.fvecs" 500 40; } >"$T/raw.fvecs"
# 110 queries: 100 queries, then database rows 0-4 and 500-504 (they tie with their copies)
{ cat "$T/encq.fvecs"; rows "$T/enc.fvecs" 0 5; rows "$T/enc.fvecs" 500 5; } >"$T/q.fvecs"
{ cat "$D/queries.fvecs"; rows "$D/database.fvecs" 0 5; rows "$D/database.fvecs" 500 5; } >"$T/rawq.fvecs"
awk 'BEGIN { for (i = 0; i < 110; i++) print "q" i }' >"$T/q.ids"
reverse "$T/q.fvecs" 110 >"$T/qrev.fvecs"
reverse "$T/rawq.fvecs" 110 >"$T/rawqrev.fvecs"
awk 'BEGIN { for (i = 109; i >= 0; i--) print "q" i }' >"$T/qrev.ids"
# the database as three files, cut at rows 400 and 1000 (a copy in each later file)
for x in db raw; do
  rows "$T/$x.fvecs" 0 400 >"$T/${x}0.fvecs"
  rows "$T/$x.fvecs" 400 600 >"$T/${x}1.fvecs"
  rows "$T/$x.fvecs" 1000 80 >"$T/${x}2.fvecs"
done
[ "$(cat "$T/db0.fvecs" "$T/db1.fvecs" "$T/db2.fvecs" | cksum)" = "$(cksum <"$T/db.fvecs")" ] && ok || bad "split"
awk 'BEGIN { for (i = 0; i < 1080; i++) print "d" i }' >"$T/db.ids"
sed -n '1,400p' "$T/db.ids" >"$T/db0.ids"
sed -n '401,1000p' "$T/db.ids" >"$T/db1.ids"
sed -n '1001,1080p' "$T/db.ids" >"$T/db2.ids"

# invariance NAME K DB DB0 DB1 DB2 Q QREV [OPTION]...: every way of cutting the work
invariance() {
  name=$1 k=$2 db=$3 d0=$4 d1=$5 d2=$6 q=$7 qrev=$8; shift 8
  m() { slem-match -k "$k" "$@"; }
  m "$@" -t 1 -d "$db" -o "$T/ref.tsv" "$q" 2>"$T/err" || { bad "$name: $(cat "$T/err")"; return; }
  [ "$(wc -l <"$T/ref.tsv")" = $((110 * k)) ] && ok || bad "$name: $(wc -l <"$T/ref.tsv") lines"
  for t in 2 3 5; do
    m "$@" -t $t -d "$db" -o "$T/o.tsv" "$q" && same "$name -t $t" "$T/ref.tsv" "$T/o.tsv"
  done
  for tr in 7 64 1000; do
    m "$@" -t 2 --tile-rows $tr -d "$db" -o "$T/o.tsv" "$q" && same "$name --tile-rows $tr" "$T/ref.tsv" "$T/o.tsv"
  done
  m "$@" --query-block 3 --tile-rows 50 -d "$db" -o "$T/o.tsv" "$q" && same "$name --query-block 3" "$T/ref.tsv" "$T/o.tsv"
  # reversed queries: compare by query id
  m "$@" --query-ids "$T/q.ids" -d "$db" -o "$T/a.tsv" "$q"
  m "$@" --query-ids "$T/qrev.ids" -d "$db" -o "$T/b.tsv" "$qrev"
  by_query "$T/a.tsv" >"$T/a.sorted"
  by_query "$T/b.tsv" >"$T/b.sorted"
  same "$name reversed queries" "$T/a.sorted" "$T/b.sorted"
  # three files, as -d and as -D; rows continue across files
  m "$@" -d "$d0" -d "$d1" -d "$d2" -o "$T/o.tsv" "$q" && same "$name three files" "$T/ref.tsv" "$T/o.tsv"
  printf '%s\n' "$d0" "$d1" "$d2" >"$T/list"
  m "$@" -D "$T/list" -o "$T/o.tsv" "$q" && same "$name -D list" "$T/ref.tsv" "$T/o.tsv"
  # ids per file equal the ids of the whole
  m "$@" -d "$db" --db-ids "$T/db.ids" -o "$T/a.tsv" "$q"
  m "$@" -d "$d0" --db-ids "$T/db0.ids" -d "$d1" --db-ids "$T/db1.ids" -d "$d2" --db-ids "$T/db2.ids" -o "$T/b.tsv" "$q"
  same "$name ids per file" "$T/a.tsv" "$T/b.tsv"
  # three shards of one file and of three files, merged by the ordering rule
  for i in 0 1 2; do
    m "$@" --shard $i/3 --tile-rows 97 -d "$db" -o "$T/s$i.tsv" "$q"
    m "$@" --shard $i/3 -t 1 -d "$d0" -d "$d1" -d "$d2" -o "$T/f$i.tsv" "$q"
  done
  awk -F '\t' '$3 < 360 || $3 >= 720 { bad = 1 } END { exit bad }' "$T/s1.tsv" && ok || bad "$name: shard 1/3 is not rows 360-719"
  merge "$k" "$T/s0.tsv" "$T/s1.tsv" "$T/s2.tsv" >"$T/o.tsv"
  same "$name three shards" "$T/ref.tsv" "$T/o.tsv"
  merge "$k" "$T/f0.tsv" "$T/f1.tsv" "$T/f2.tsv" >"$T/o.tsv"
  same "$name three shards of three files" "$T/ref.tsv" "$T/o.tsv"
  # and by slem-merge, from tsv and from jsonl shards
  slem-merge -k "$k" "$T/s0.tsv" "$T/s1.tsv" "$T/s2.tsv" >"$T/o.tsv" 2>"$T/err" || bad "$name slem-merge: $(cat "$T/err")"
  same "$name three shards, slem-merge" "$T/ref.tsv" "$T/o.tsv"
  for i in 0 1 2; do m "$@" --shard $i/3 -F jsonl -d "$d0" -d "$d1" -d "$d2" -o "$T/j$i.jsonl" "$q"; done
  slem-merge -k "$k" -F tsv "$T/j0.jsonl" "$T/j1.jsonl" "$T/j2.jsonl" >"$T/o.tsv" 2>"$T/err" || bad "$name slem-merge jsonl: $(cat "$T/err")"
  same "$name three jsonl shards, slem-merge" "$T/ref.tsv" "$T/o.tsv"
  # duplicates: row r < 40 and its copy 1000 + r (500 + r and 1040 + r) score alike and
  # the lower row comes first
  awk -F '\t' '{ s[$1 " " $3] = $4; r[$1 " " $3] = $2 }
    END { for (key in s) { split(key, a, " "); c = -1
            if (a[2] < 40) c = a[2] + 1000; else if (a[2] >= 500 && a[2] < 540) c = a[2] + 540
            if (c >= 0 && ((a[1] " " c) in s)) { n++
              if (s[a[1] " " c] != s[key] || r[a[1] " " c] <= r[key]) { print key; bad = 1 } } }
          if (n < 10) { print "only " n " duplicate pairs"; bad = 1 } exit bad }' "$T/ref.tsv" >"$T/diff" &&
    ok || bad "$name duplicates: $(head -3 "$T/diff")"
}

invariance descriptors 25 "$T/db.fvecs" "$T/db0.fvecs" "$T/db1.fvecs" "$T/db2.fvecs" "$T/q.fvecs" "$T/qrev.fvecs"
invariance cosine 25 "$T/raw.fvecs" "$T/raw0.fvecs" "$T/raw1.fvecs" "$T/raw2.fvecs" "$T/rawq.fvecs" "$T/rawqrev.fvecs" -n
invariance "inner product" 25 "$T/raw.fvecs" "$T/raw0.fvecs" "$T/raw1.fvecs" "$T/raw2.fvecs" "$T/rawq.fvecs" "$T/rawqrev.fvecs"
slem-negstats -q --kernel rbf:g=1 --rank 64 --lambda-rel 100 -o "$T/rbf.slem" "$D/negatives.fvecs"
invariance "rbf kernel" 12 "$T/raw.fvecs" "$T/raw0.fvecs" "$T/raw1.fvecs" "$T/raw2.fvecs" "$T/rawq.fvecs" "$T/rawqrev.fvecs" -c "$T/rbf.slem"
slem-negstats -q --kernel chi2 --rank 48 --lambda-rel 100 -o "$T/chi2.slem" "$D/negatives.fvecs"
invariance "chi2 kernel" 12 "$T/raw.fvecs" "$T/raw0.fvecs" "$T/raw1.fvecs" "$T/raw2.fvecs" "$T/rawq.fvecs" "$T/rawqrev.fvecs" -c "$T/chi2.slem"

# a database row matched with itself: the cosine prints 1, and so does the exact kernel
# similarity; the copy follows the original
slem-match -n -k 2 -d "$T/raw.fvecs" "$T/rawq.fvecs" | awk -F '\t' '$1 >= 100' >"$T/o.tsv"
awk -F '\t' '$4 != "1" { bad = 1 } END { exit bad || NR != 20 }' "$T/o.tsv" && ok || bad "cosine with itself: $(head -2 "$T/o.tsv")"
slem-match -c "$T/rbf.slem" -k 1 -d "$T/raw.fvecs" "$T/rawq.fvecs" | awk -F '\t' '$1 >= 100' >"$T/o.tsv"
awk -F '\t' '$4 != "1" { bad = 1 } END { exit bad || NR != 10 }' "$T/o.tsv" && ok || bad "kernel with itself: $(head -2 "$T/o.tsv")"

# the exact scores: the tile's rounding is gone (the cosine of the digits against numpy
# is checked in tests/check_match.c); --stats counts the re-scored pairs
slem-match --stats -k 10 -d "$T/db.fvecs" "$T/q.fvecs" >/dev/null 2>"$T/err"
grep -q "110 queries x 1080 rows: 118800 pairs scored, [0-9]* re-scored exactly" "$T/err" && ok || bad "--stats: $(cat "$T/err")"
grep -Eq '^slem-match: stats: wall [0-9.]+ threads [0-9]+ block [0-9]+ units [0-9]+$' "$T/err" &&
  grep -Eq '^slem-match: stats: read [0-9.]+ wait-read [0-9.]+ convert [0-9.]+ compute [0-9.]+ merge [0-9.]+ factor [0-9.]+ write [0-9.]+ wait-write [0-9.]+$' "$T/err" &&
  ok || bad "--stats: no phases: $(cat "$T/err")"

# ---- the database read once: the tiles of the first block of queries kept in memory ----
slem-match -n -k 10 -d "$T/db.fvecs" -o "$T/once.ref" "$T/q.fvecs"
check "database kept in memory" slem-match -n -k 10 --query-block 16 --stats -d "$T/db.fvecs" -o "$T/once.tsv" "$T/q.fvecs"
grep -q 'passes over the database, 1 from the files' "$T/err" && ok || bad "kept in memory: $(cat "$T/err")"
cmp -s "$T/once.tsv" "$T/once.ref" && ok || bad "kept in memory: another ranking"
check "database read every pass" env SLEM_MATCH_MEMORY=0 slem-match -n -k 10 --query-block 16 --stats -d "$T/db.fvecs" -o "$T/every.tsv" "$T/q.fvecs"
grep -q ' passes over the database, \([0-9]*\) from the files' "$T/err" && ! grep -q ', 1 from the files' "$T/err" && ok || bad "SLEM_MATCH_MEMORY=0: $(cat "$T/err")"
cmp -s "$T/every.tsv" "$T/once.ref" && ok || bad "read every pass: another ranking"
check "a budget smaller than the database" env SLEM_MATCH_MEMORY=1000 slem-match -n -k 10 --query-block 16 --stats -d "$T/db.fvecs" -o "$T/small.tsv" "$T/q.fvecs"
cmp -s "$T/small.tsv" "$T/once.ref" && ok || bad "a small budget: another ranking"
check "a budget with a unit" env SLEM_MATCH_MEMORY=64K slem-match -n -k 10 --query-block 16 --stats -d "$T/db.fvecs" -o "$T/unit.tsv" "$T/q.fvecs"
cmp -s "$T/unit.tsv" "$T/once.ref" && ok || bad "SLEM_MATCH_MEMORY=64K: another ranking"
# a budget that cannot be read is refused, before anything is written, not taken for another
cp "$T/once.ref" "$T/kept.tsv"
for m in garbage -5 4.5G 99999999999999999999; do
  SLEM_MATCH_MEMORY=$m slem-match -n -k 10 -d "$T/db.fvecs" -o "$T/kept.tsv" "$T/q.fvecs" >/dev/null 2>"$T/err"
  st=$?
  [ $st = 2 ] && grep -q "SLEM_MATCH_MEMORY: '$m' is not a number of bytes" "$T/err" && cmp -s "$T/kept.tsv" "$T/once.ref" &&
    ok || bad "SLEM_MATCH_MEMORY=$m: status $st, $(cat "$T/err")"
done

# ---- shards: edges and errors ----
# an empty shard is valid: every query, no result (jsonl lists them; tsv writes nothing)
check "empty shard" slem-match --shard 0/2000 -F jsonl -d "$T/db.fvecs" -o "$T/e.jsonl" "$T/q.fvecs"
[ "$(grep -c '"results":\[\]' "$T/e.jsonl")" = 110 ] && ok || bad "empty shard jsonl: $(head -2 "$T/e.jsonl")"
check "empty shard tsv" slem-match --shard 2/2000 -d "$T/db.fvecs" -o "$T/e.tsv" "$T/q.fvecs"
[ -f "$T/e.tsv" ] && [ ! -s "$T/e.tsv" ] && ok || bad "empty shard tsv is not an empty file"
# one shard per row: the union is the whole database
for i in 0 1 2 3 4; do slem-match --shard $i/5 -k 3 -d "$T/db0.fvecs" -o "$T/p$i.tsv" "$T/q.fvecs"; done
slem-match -k 3 -d "$T/db0.fvecs" -o "$T/o.tsv" "$T/q.fvecs"
merge 3 "$T/p0.tsv" "$T/p1.tsv" "$T/p2.tsv" "$T/p3.tsv" "$T/p4.tsv" >"$T/m.tsv"
same "five shards" "$T/o.tsv" "$T/m.tsv"
expect_fail "shard I = N" 2 "I must be below N" - slem-match --shard 3/3 -d "$T/db.fvecs" "$T/q.fvecs"
expect_fail "shard N = 0" 2 "N must be between 1" - slem-match --shard 0/0 -d "$T/db.fvecs" "$T/q.fvecs"
expect_fail "shard syntax" 2 "expected I/N" - slem-match --shard 1-3 -d "$T/db.fvecs" "$T/q.fvecs"
expect_fail "shard negative" 2 "expected I/N" - slem-match --shard -1/3 -d "$T/db.fvecs" "$T/q.fvecs"
slem-encode -c "$T/neg.slem" -F text -o "$T/db.txt" "$D/database.fvecs"
expect_fail "shard of text" 1 "db.txt: the number of vectors is not known before reading it" "$T/none.tsv" \
  slem-match --shard 0/2 -d "$T/db0.fvecs" -d "$T/db.txt" -o "$T/none.tsv" "$T/q.fvecs"
cat "$T/db.fvecs" | slem-match --shard 0/2 -d - "$T/q.fvecs" >"$T/o.tsv" 2>"$T/err"
[ $? = 1 ] && grep -q "cannot be cut into shards" "$T/err" && [ ! -s "$T/o.tsv" ] && ok || bad "shard of a pipe: $(cat "$T/err")"
# text and files of unknown count still make one database without a shard
slem-match -k 5 -d "$T/db.txt" -d "$T/db.fvecs" -o "$T/o.tsv" "$T/q.fvecs" && ok || bad "text + fvecs database"
awk -F '\t' '$3 >= 2080 { bad = 1 } END { exit bad }' "$T/o.tsv" && ok || bad "rows beyond 2080"

# ---- errors found before the first result ----
expect_fail "ids per file count" 2 "2 --db-ids for 3 database files" - \
  slem-match -d "$T/db0.fvecs" --db-ids "$T/db0.ids" -d "$T/db1.fvecs" --db-ids "$T/db1.ids" -d "$T/db2.fvecs" "$T/q.fvecs"
expect_fail "ids of the second file" 1 "db0.ids: 400 ids, but the database has more rows (600 vectors in .*db1.fvecs)" "$T/none.tsv" \
  slem-match -d "$T/db0.fvecs" --db-ids "$T/db0.ids" -d "$T/db1.fvecs" --db-ids "$T/db0.ids" -o "$T/none.tsv" "$T/q.fvecs"
expect_fail "dimension of a file" 1 "has dimension 12 but" "$T/none.tsv" \
  slem-match -d "$T/db0.fvecs" -d "$G/db.fvecs" -o "$T/none.tsv" "$T/q.fvecs"
expect_fail "missing listed file" 1 "nothere.fvecs" "$T/none.tsv" sh -c "printf '%s\n' '$T/db0.fvecs' '$T/nothere.fvecs' >'$T/list2'; slem-match -D '$T/list2' -o '$T/none.tsv' '$T/q.fvecs'"
: >"$T/empty.list"
expect_fail "empty list" 1 "no database file listed" "$T/none.tsv" slem-match -D "$T/empty.list" -o "$T/none.tsv" "$T/q.fvecs"
# a database on a pipe that would be read twice: refused before any output, to a pipe too
cat "$T/db.fvecs" | slem-match --query-block 50 -d - "$T/q.fvecs" >"$T/o.tsv" 2>"$T/err"
[ $? = 1 ] && grep -q "110 queries need the database read 3 times" "$T/err" && [ ! -s "$T/o.tsv" ] && ok ||
  bad "pipe, known query count: $(cat "$T/err")"
slem-encode -c "$T/neg.slem" -F text -o "$T/q.txt" "$D/queries.fvecs"
cat "$T/db.fvecs" | slem-match --query-block 50 -d - "$T/q.txt" >"$T/o.tsv" 2>"$T/err"
[ $? = 1 ] && grep -q "more than 50 queries need the database read more than once" "$T/err" && [ ! -s "$T/o.tsv" ] && ok ||
  bad "pipe, unknown query count: $(cat "$T/err")"
cat "$T/db.fvecs" | slem-match --query-block 100 -k 3 -d - "$T/q.txt" >"$T/o.tsv" 2>"$T/err" &&
  [ "$(wc -l <"$T/o.tsv")" = 300 ] && ok || bad "pipe, queries in one block: $(cat "$T/err")"
head -n 99 "$T/q.ids" >"$T/short.qids"
slem-match --query-ids "$T/short.qids" -d "$T/db.fvecs" "$T/q.fvecs" >"$T/o.tsv" 2>"$T/err"
[ $? = 1 ] && grep -q "short.qids: 99 ids for 110 queries" "$T/err" && [ ! -s "$T/o.tsv" ] && ok ||
  bad "query ids count before output: $(cat "$T/err")"
head -n 1079 "$T/db.ids" >"$T/short.ids"
slem-match --db-ids "$T/short.ids" -d "$T/db.fvecs" "$T/q.fvecs" >"$T/o.tsv" 2>"$T/err"
[ $? = 1 ] && grep -q "short.ids: 1079 ids, but the database has more rows (1080 vectors" "$T/err" && [ ! -s "$T/o.tsv" ] && ok ||
  bad "db ids count before output: $(cat "$T/err")"

finish cli-exact
