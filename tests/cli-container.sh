#!/bin/sh
# Descriptors that know their cache: slem-encode's container (.slem, kind "descriptors", the
# default on stdout), the same rankings as the fvecs path, and slem-match's refusals: two
# caches, descriptors against plain vectors, a corrupt or truncated container. Then the
# nightly re-indexing recipe of docs/reindexing.md. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
fp() { slem-negstats --info "$1" | sed -n 's/.*"fingerprint":[^"]*"\([0-9a-f]*\)".*/\1/p'; }
check "cache" slem-negstats -q -r 1000 -o "$T/neg.slem" "$D/negatives.fvecs"
check "another cache" slem-negstats -q -r 10 -o "$T/neg2.slem" "$D/negatives.fvecs"
F1=$(fp "$T/neg.slem") F2=$(fp "$T/neg2.slem")
[ ${#F1} = 16 ] && [ ${#F2} = 16 ] && [ "$F1" != "$F2" ] && ok || bad "fingerprints: '$F1' '$F2'"

# the container, and the fvecs path for comparison
check "db container" slem-encode -q -c "$T/neg.slem" -o "$T/db.slem" "$D/database.fvecs"
head -c 2000 "$T/db.slem" | grep -q "\"cache_fingerprint\":\"$F1\"" && ok || bad "the container does not name its cache"
check "db fvecs" slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/db.fvecs" "$D/database.fvecs"
check "q fvecs" slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/q.fvecs" "$D/queries.fvecs"
check "fvecs ranking" slem-match -d "$T/db.fvecs" -o "$T/ref.tsv" "$T/q.fvecs"
slem-encode -q -c "$T/neg.slem" "$D/queries.fvecs" | slem-match -d "$T/db.slem" -o "$T/pipe.tsv" - ||
  bad "the container through a pipe"
cmp -s "$T/pipe.tsv" "$T/ref.tsv" && ok || bad "container ranking differs from the fvecs one"
check "q container" slem-encode -q -c "$T/neg.slem" -o "$T/q.slem" "$D/queries.fvecs"
check "containers from files" slem-match -d "$T/db.slem" -o "$T/files.tsv" "$T/q.slem"
cmp -s "$T/files.tsv" "$T/ref.tsv" && ok || bad "container files: another ranking"
# descriptors in fvecs (other programs') beside a container: accepted, they are descriptors
check "container against fvecs descriptors" slem-match -d "$T/db.fvecs" -o "$T/mixed.tsv" "$T/q.slem"
cmp -s "$T/mixed.tsv" "$T/ref.tsv" && ok || bad "container against fvecs descriptors: another ranking"

# the mismatched-cache pipeline: refused, naming both fingerprints, nothing written
slem-encode -q -c "$T/neg2.slem" "$D/queries.fvecs" >"$T/q2.slem"
expect_fail "two caches" 1 "$F2.*$F1\|$F1.*$F2" "$T/none.tsv" slem-match -d "$T/db.slem" -o "$T/none.tsv" "$T/q2.slem"
grep -q "re-encode" "$T/err" && ok || bad "the refusal does not say to re-encode: $(cat "$T/err")"
check "two caches with --no-check" slem-match --no-check -d "$T/db.slem" -o "$T/y.tsv" "$T/q2.slem"
# raw vectors against descriptors: refused either way round
expect_fail "raw queries" 1 "record 1 has norm .* plain vectors" "$T/none.tsv" slem-match -d "$T/db.slem" -o "$T/none.tsv" "$D/queries.fvecs"
expect_fail "raw database" 1 "database.fvecs: record 1 has norm" "$T/none.tsv" slem-match -d "$D/database.fvecs" -o "$T/none.tsv" "$T/q.slem"
check "raw with --no-check" slem-match --no-check -d "$T/db.slem" -o "$T/y.tsv" "$D/queries.fvecs"
# a kernel similarity ranks base features, not descriptors
check "kernel cache" slem-negstats -q -K rbf:g=1 --rank 16 -o "$T/k.slem" "$D/negatives.fvecs"
expect_fail "descriptors to a kernel match" 1 "base features" "$T/none.tsv" slem-match -c "$T/k.slem" -d "$D/database.fvecs" -o "$T/none.tsv" "$T/q.slem"
# a cache given as vectors, a corrupt and a truncated container
expect_fail "cache as vectors" 1 "a slem cache of kind 'linear', not descriptors" "$T/none.tsv" slem-match -d "$T/neg.slem" -o "$T/none.tsv" "$T/q.slem"
# ... and descriptors given as the cache (-c swapped with the database): said as such, not
# "byte 32768, in the padding ...: corrupt", which took the block table for damage
expect_fail "descriptors as the cache of slem-encode" 1 "db.slem: descriptors (slem-encode's output), not a cache" "$T/none.fvecs" slem-encode -c "$T/db.slem" -o "$T/none.fvecs" "$D/queries.fvecs"
expect_fail "descriptors as the cache of slem-match" 1 "db.slem: descriptors (slem-encode's output), not a cache" "$T/none.tsv" slem-match -c "$T/db.slem" -d "$D/database.fvecs" -o "$T/none.tsv" "$D/queries.fvecs"
expect_fail "descriptors to --info" 1 "db.slem: descriptors (slem-encode's output), not a cache" - slem-negstats --info "$T/db.slem"
cp "$T/db.slem" "$T/bad.slem"
printf 'x' | dd of="$T/bad.slem" bs=1 seek=70000 conv=notrunc 2>/dev/null
expect_fail "corrupt rows" 1 "bad.slem: checksum mismatch in the rows" "$T/none.tsv" slem-match -d "$T/bad.slem" -o "$T/none.tsv" "$T/q.slem"
head -c 80000 "$T/db.slem" >"$T/short.slem"
expect_fail "truncated" 1 "short.slem: size disagrees with its header" "$T/none.tsv" slem-match -d "$T/short.slem" -o "$T/none.tsv" "$T/q.slem"
cp "$T/db.slem" "$T/badjson.slem"
printf 'X' | dd of="$T/badjson.slem" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_fail "corrupt header" 1 "badjson.slem: checksum mismatch in the JSON header" "$T/none.tsv" slem-match -d "$T/badjson.slem" -o "$T/none.tsv" "$T/q.slem"
# a cache's padding between its JSON header and its payload, which no checksum covers: a
# flipped byte there was taken; it is said, with its offset (the caches of testdata/, of
# every slem so far, hold a newline then zeros there and still read; partial.slem is of a
# format older than its leaves, refused before and after)
po=$(od -An -tu8 -j32 -N8 "$T/neg.slem" | tr -d ' ')
cp "$T/neg.slem" "$T/badpad.slem"
printf '\001' | dd of="$T/badpad.slem" bs=1 seek=$((po - 1)) conv=notrunc 2>/dev/null
expect_fail "a cache's padding" 1 "badpad.slem: byte $((po - 1)), in the padding between the JSON header and the payload, is 0x01" \
  "$T/padnone.fvecs" slem-encode -q -c "$T/badpad.slem" -o "$T/padnone.fvecs" "$D/queries.fvecs"
for f in "$TOP"/testdata/fuzz/cache/linear.slem "$TOP"/testdata/fuzz/cache/kernel.slem "$TOP"/testdata/fuzz/cache/krec.slem; do
  slem-negstats --info "$f" >/dev/null 2>"$T/err" && ok || bad "$f no longer reads: $(cat "$T/err")"
done

# nightly re-indexing: a segment per night, matched over all segments; after a rebuild of
# the cache, yesterday's segments are refused until re-encoded
head -c $((600 * 260)) "$D/database.fvecs" >"$T/night1.fvecs"
tail -c $((400 * 260)) "$D/database.fvecs" >"$T/night2.fvecs"
check "segment 1" slem-encode -q -c "$T/neg.slem" -o "$T/seg1.slem" "$T/night1.fvecs"
check "segment 2" slem-encode -q -c "$T/neg.slem" -o "$T/seg2.slem" "$T/night2.fvecs"
check "all segments" slem-match -d "$T/seg1.slem" -d "$T/seg2.slem" -o "$T/segs.tsv" "$T/q.slem"
# the segments are one database: the ranking of the same descriptors in one fvecs file
slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/n1.fvecs" "$T/night1.fvecs"
slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/n2.fvecs" "$T/night2.fvecs"
cat "$T/n1.fvecs" "$T/n2.fvecs" >"$T/n12.fvecs"
slem-match -d "$T/n12.fvecs" -o "$T/n12.tsv" "$T/q.slem"
cmp -s "$T/segs.tsv" "$T/n12.tsv" && ok || bad "two segments: not the ranking of their concatenation"
check "rebuilt cache" slem-negstats -q -r 100 -o "$T/neg.slem" "$D/negatives.fvecs"
slem-encode -q -c "$T/neg.slem" -o "$T/q3.slem" "$D/queries.fvecs"
expect_fail "old segments" 1 "re-encode" "$T/none.tsv" slem-match -d "$T/seg1.slem" -d "$T/seg2.slem" -o "$T/none.tsv" "$T/q3.slem"
check "re-encoded segment 1" slem-encode -q -c "$T/neg.slem" -o "$T/seg1.slem" "$T/night1.fvecs"
expect_fail "one old segment" 1 "re-encode" "$T/none.tsv" slem-match -d "$T/seg1.slem" -d "$T/seg2.slem" -o "$T/none.tsv" "$T/q3.slem"
check "re-encoded segment 2" slem-encode -q -c "$T/neg.slem" -o "$T/seg2.slem" "$T/night2.fvecs"
check "all re-encoded" slem-match -d "$T/seg1.slem" -d "$T/seg2.slem" -o "$T/y.tsv" "$T/q3.slem"
# shards of a container database merge into the whole
for i in 0 1 2; do slem-encode -q -c "$T/neg.slem" --shard $i/3 -o "$T/s$i.slem" "$D/database.fvecs" || bad "shard $i"; done
check "whole database" slem-encode -q -c "$T/neg.slem" -o "$T/db3.slem" "$D/database.fvecs"
check "whole" slem-match -d "$T/db3.slem" -o "$T/w.tsv" "$T/q3.slem"
check "shard segments" slem-match -d "$T/s0.slem" -d "$T/s1.slem" -d "$T/s2.slem" -o "$T/s.tsv" "$T/q3.slem"
cmp -s "$T/s.tsv" "$T/w.tsv" && ok || bad "shard segments: another ranking"
head -c 2000 "$T/s1.slem" | grep -q '"shard":{"index":1,"count":3,"first_row":333,"encoding":"precision auto"}' && ok || bad "the shard is not recorded"
# shards must be given all, in order, each once: out of order, one missing, one twice or
# shards of two encodes are refused, naming the file and the shard expected
expect_fail "shards out of order" 1 "s1.slem: shard 1/3, where shard 0/3 was expected" "$T/none.tsv" slem-match -d "$T/s1.slem" -d "$T/s0.slem" -d "$T/s2.slem" -o "$T/none.tsv" "$T/q3.slem"
expect_fail "shards swapped" 1 "s2.slem: shard 2/3, where shard 1/3 was expected after .*s0.slem" "$T/none.tsv" slem-match -d "$T/s0.slem" -d "$T/s2.slem" -d "$T/s1.slem" -o "$T/none.tsv" "$T/q3.slem"
expect_fail "a shard missing" 1 "s2.slem: shard 2/3, where shard 1/3 was expected after .*s0.slem" "$T/none.tsv" slem-match -d "$T/s0.slem" -d "$T/s2.slem" -o "$T/none.tsv" "$T/q3.slem"
expect_fail "the last shard missing" 1 "s1.slem: shard 1/3 is the last file, but shard 2/3 was expected after it" "$T/none.tsv" slem-match -d "$T/s0.slem" -d "$T/s1.slem" -o "$T/none.tsv" "$T/q3.slem"
expect_fail "a shard twice" 1 "s0.slem: shard 0/3 again, where shard 1/3 was expected after .*s0.slem" "$T/none.tsv" slem-match -d "$T/s0.slem" -d "$T/s0.slem" -o "$T/none.tsv" "$T/q3.slem"
expect_fail "a plain file inside the shards" 1 "db3.slem: not a shard, where shard 1/3 was expected after .*s0.slem" "$T/none.tsv" slem-match -d "$T/s0.slem" -d "$T/db3.slem" -d "$T/s1.slem" -d "$T/s2.slem" -o "$T/none.tsv" "$T/q3.slem"
check "shard 1/2" slem-encode -q -c "$T/neg.slem" --shard 1/2 -o "$T/h1.slem" "$D/database.fvecs"
expect_fail "shards of two encodes" 1 "h1.slem: shard 1/2 of an input of 1000 rows, where shard 1/3" "$T/none.tsv" slem-match -d "$T/s0.slem" -d "$T/h1.slem" -o "$T/none.tsv" "$T/q3.slem"
# the options that change the bits besides the cache: a shard of another --precision or
# another --theta of classifiers is one of another encode
check "shard 1/3 in double" slem-encode -q -c "$T/neg.slem" --precision double --shard 1/3 -o "$T/sd1.slem" "$D/database.fvecs"
expect_fail "shards of two precisions" 1 "sd1.slem: shard 1/3 encoded with precision double, but .*s0.slem (shard 0/3) with precision auto: shards of two encodes" "$T/none.tsv" \
  slem-match -d "$T/s0.slem" -d "$T/sd1.slem" -d "$T/s2.slem" -o "$T/none.tsv" "$T/q3.slem"
for i in 0 1 2; do slem-encode -q -c "$T/neg.slem" --classifier --shard $i/3 -o "$T/c$i.slem" "$D/database.fvecs" || bad "classifier shard $i"; done
check "classifier shard 1/3, theta 2" slem-encode -q -c "$T/neg.slem" --classifier --theta 2 --shard 1/3 -o "$T/ct1.slem" "$D/database.fvecs"
check "classifier queries" slem-encode -q -c "$T/neg.slem" --classifier -o "$T/qc.slem" "$D/queries.fvecs"
check "classifier shards of one encode" slem-match -q -d "$T/c0.slem" -d "$T/c1.slem" -d "$T/c2.slem" -o "$T/c.tsv" "$T/qc.slem"
expect_fail "classifier shards of two thetas" 1 "ct1.slem: shard 1/3 encoded with precision auto; theta 2, but .*c0.slem (shard 0/3) with precision auto; theta 1" "$T/none.tsv" \
  slem-match -d "$T/c0.slem" -d "$T/ct1.slem" -d "$T/c2.slem" -o "$T/none.tsv" "$T/qc.slem"
# whole runs of shards before or after other files stay a database (rows in the given order)
check "a file, then the shards" slem-match -d "$T/db3.slem" -d "$T/s0.slem" -d "$T/s1.slem" -d "$T/s2.slem" -o "$T/two.tsv" "$T/q3.slem"
check "the same as files" slem-match -d "$T/db3.slem" -d "$T/db3.slem" -o "$T/two2.tsv" "$T/q3.slem"
cmp -s "$T/two.tsv" "$T/two2.tsv" && ok || bad "a file then the shards: another ranking"
# ids travel in the container: the ranking names rows as the ids files would
check "db with ids" slem-encode -q -c "$T/neg.slem" --ids "$D/database.ids" -o "$T/dbi.slem" "$D/database.fvecs"
check "q with ids" slem-encode -q -c "$T/neg.slem" --ids "$D/queries.ids" -o "$T/qi.slem" "$D/queries.fvecs"
check "ids from containers" slem-match -d "$T/dbi.slem" -o "$T/ids1.tsv" "$T/qi.slem"
check "ids from files" slem-match --query-ids "$D/queries.ids" --db-ids "$D/database.ids" -d "$T/db3.slem" -o "$T/ids2.tsv" "$T/q3.slem"
cmp -s "$T/ids1.tsv" "$T/ids2.tsv" && grep -q "^digit" "$T/ids1.tsv" && ok || bad "ids from containers differ from ids files"
for i in 0 1 2; do slem-encode -q -c "$T/neg.slem" --shard $i/3 --ids "$D/database.ids" -o "$T/si$i.slem" "$D/database.fvecs" || bad "shard $i with ids"; done
check "shards with ids" slem-match -d "$T/si0.slem" -d "$T/si1.slem" -d "$T/si2.slem" -o "$T/ids3.tsv" "$T/qi.slem"
cmp -s "$T/ids3.tsv" "$T/ids1.tsv" && ok || bad "shards with ids: another ranking"
expect_fail "ids of another count" 1 "1000 ids for the 100 vectors" "$T/none.slem" slem-encode -c "$T/neg.slem" --ids "$D/database.ids" -o "$T/none.slem" "$D/queries.fvecs"
expect_fail "ids without a container" 2 "ids travel in the container" "$T/none.fvecs" slem-encode -c "$T/neg.slem" --ids "$D/queries.ids" -o "$T/none.fvecs" "$D/queries.fvecs"

# ---- an empty segment is a valid segment (a night with no new images) ----
: >"$T/empty.fvecs"
check "queries" slem-encode -q -c "$T/neg.slem" -o "$T/qe.slem" "$D/queries.fvecs"
check "database" slem-encode -q -c "$T/neg.slem" -o "$T/dbe.slem" "$D/database.fvecs"
check "ranking" slem-match -d "$T/dbe.slem" -o "$T/refe.tsv" "$T/qe.slem"
check "empty fvecs" slem-encode -q -c "$T/neg.slem" -o "$T/e1.slem" "$T/empty.fvecs"
cfp() { head -c 4000 "$1" | tr -d '\000' | sed -n 's/.*"cache_fingerprint":"\([0-9a-f]*\)".*/\1/p'; }
[ -n "$(cfp "$T/qe.slem")" ] && [ "$(cfp "$T/e1.slem")" = "$(cfp "$T/qe.slem")" ] && head -c 2000 "$T/e1.slem" | grep -q '"n":0[,}]' &&
  ok || bad "empty container: no fingerprint or n 0: $(head -c 600 "$T/e1.slem" | tr -d '\0')"
slem-encode -q -c "$T/neg.slem" -o "$T/e2.slem" - </dev/null && ok || bad "empty pipe"
printf '# no vector tonight\n\n' >"$T/empty.txt"
check "text with no vector" slem-encode -q -c "$T/neg.slem" -o "$T/e3.slem" "$T/empty.txt"
npy0() { # npy0 D: an npy v1 header of shape (0, D), float32
  h="{'descr': '<f4', 'fortran_order': False, 'shape': (0, $1), }"
  printf '\223NUMPY\001\000\166\000%s' "$h"
  n=$((10 + ${#h})); while [ $n -lt 127 ]; do printf ' '; n=$((n + 1)); done; printf '\n'
}
d=$(od -An -tu4 -N4 "$D/queries.fvecs" | tr -d ' ')
npy0 "$d" >"$T/empty.npy"
check "npy of 0 rows" slem-encode -q -c "$T/neg.slem" -o "$T/e4.slem" "$T/empty.npy"
printf '\000\000\000\000' >"$T/empty.fbin"; printf "$(printf '\\%03o' "$d")\000\000\000" >>"$T/empty.fbin"
check "fbin of 0 rows" slem-encode -q -c "$T/neg.slem" -o "$T/e5.slem" "$T/empty.fbin"
npy0 7 >"$T/empty7.npy"
expect_fail "npy of 0 rows of another dimension" 1 "empty7.npy: dimension 7, but the cache" "$T/e6.slem" slem-encode -c "$T/neg.slem" -o "$T/e6.slem" "$T/empty7.npy"
check "empty fvecs out" slem-encode -q -c "$T/neg.slem" -o "$T/e.fvecs" "$T/empty.fvecs"
[ -f "$T/e.fvecs" ] && [ ! -s "$T/e.fvecs" ] && ok || bad "an empty input encoded to fvecs is not an empty file"
# among the database's segments an empty one changes nothing
check "empty segments among others" slem-match -d "$T/e1.slem" -d "$T/dbe.slem" -d "$T/e4.slem" -o "$T/withempty.tsv" "$T/qe.slem"
cmp -s "$T/withempty.tsv" "$T/refe.tsv" && ok || bad "empty segments changed the ranking"
# a database of empty segments only: every query with no result (nothing in tsv, an empty
# list in jsonl), status 0 and a warning
check "all-empty database" slem-match -d "$T/e1.slem" -d "$T/e2.slem" -o "$T/none.tsv" "$T/qe.slem"
[ -f "$T/none.tsv" ] && [ ! -s "$T/none.tsv" ] && grep -q "the database holds no vectors" "$T/err" && ok ||
  bad "all-empty database: $(head -c 300 "$T/err")"
check "all-empty database, jsonl" slem-match -F jsonl -d "$T/e1.slem" -o "$T/none.jsonl" "$T/qe.slem"
[ "$(grep -c '"results":\[\]' "$T/none.jsonl")" = 100 ] && ok || bad "all-empty jsonl: $(head -c 200 "$T/none.jsonl")"
check "eval of an all-empty ranking" slem-eval --query-labels "$D/queries.labels" --db-labels "$D/database.labels" "$T/none.jsonl"
grep -q '^mAP	0.000000' "$T/out" && grep -q '^missing	100' "$T/out" && ok || bad "eval of an all-empty ranking: $(cat "$T/out")"
check "merge of all-empty rankings" slem-merge -o "$T/merged.jsonl" "$T/none.jsonl"
cmp -s "$T/merged.jsonl" "$T/none.jsonl" && ok || bad "merge of all-empty rankings: another file"
# a tsv ranking with no line stays refused by slem-eval and slem-merge: it names no query
expect_fail "eval of an empty tsv" 1 "none.tsv: no rankings (empty file)" "$T/o" slem-eval --query-labels "$D/queries.labels" --db-labels "$D/database.labels" -o "$T/o" "$T/none.tsv"
# an empty segment with ids: an empty ids file goes with it, and the ids of the other
# segments still name the rows
: >"$T/empty.ids"
check "empty input with empty ids" slem-encode -q -c "$T/neg.slem" --ids "$T/empty.ids" -o "$T/ei.slem" "$T/empty.fvecs"
check "db with ids" slem-encode -q -c "$T/neg.slem" --ids "$D/database.ids" -o "$T/dbi.slem" "$D/database.fvecs"
check "ids ranking" slem-match -d "$T/dbi.slem" -o "$T/idsref.tsv" "$T/qe.slem"
check "empty segment with ids first" slem-match -d "$T/ei.slem" -d "$T/dbi.slem" -o "$T/idsempty.tsv" "$T/qe.slem"
cmp -s "$T/idsempty.tsv" "$T/idsref.tsv" && ok || bad "an empty segment with ids: the rows lost their ids: $(head -2 "$T/idsempty.tsv")"
expect_fail "empty ids for vectors" 1 "empty.ids: 0 ids for the 100 vectors" "$T/none.slem" slem-encode -c "$T/neg.slem" --ids "$T/empty.ids" -o "$T/none.slem" "$D/queries.fvecs"
# what still refuses no vectors: negatives, queries
expect_fail "empty negatives" 1 "empty.fvecs: no vectors (empty file)" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/empty.fvecs"
expect_fail "empty plain database file" 1 "empty.fvecs: no vectors (empty file)" "$T/o" slem-match -d "$T/empty.fvecs" -o "$T/o" "$T/qe.slem"
finish cli-container
