#!/bin/sh
# --shard I/N in slem-negstats --partial and slem-encode: the same cut of rows as slem-match's,
# partial statistics that merge into those of all the rows, and encoded shards that
# concatenate, byte for byte, into the encoding of the whole input. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
# The statistics tree (leaves of 32 rows: 22 leaves of the 697 negatives): the partial
# caches of N shards, merged in any order, give the very cache of one run over all the rows
# (the same payload fingerprint), hence the same descriptors byte for byte.
# --info pretty-prints with a tab after the colon; a cache without one fails every comparison
fp() { slem-negstats --info "$1" | sed -n 's/.*"fingerprint":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' | grep . || echo "no fingerprint: $1"; }
check "whole cache" slem-negstats -q --leaf-rows 32 -o "$T/whole.slem" "$D/negatives.fvecs" "$D/validation.fvecs"
slem-encode -q -c "$T/whole.slem" -F text -o "$T/whole.txt" "$D/queries.fvecs" || bad "encode whole"
check "whole cache read in other blocks" slem-negstats -q --leaf-rows 32 -b 5 -t 1 -o "$T/whole5.slem" "$D/negatives.fvecs" "$D/validation.fvecs"
[ "$(fp "$T/whole5.slem")" = "$(fp "$T/whole.slem")" ] && ok || bad "the read block or the threads change the cache"
# several leaves computed at once (one per thread below 4, two from 4 on, the last batch
# short): the same cache
# for every thread count, and --stats says where the time went, as "key value" pairs
for t in 1 2 3 5; do
  slem-negstats -q --stats --leaf-rows 32 -t $t -o "$T/whole-t$t.slem" "$D/negatives.fvecs" \
    "$D/validation.fvecs" 2>"$T/stats-t$t" || bad "negstats -t $t"
  [ "$(fp "$T/whole-t$t.slem")" = "$(fp "$T/whole.slem")" ] && ok || bad "-t $t changes the cache"
  grep -Eq "^slem-negstats: stats: wall [0-9.]+ threads $t block 32 units $([ $t -lt 4 ] && echo $t || echo $((2 * t)))\$" "$T/stats-t$t" &&
    grep -Eq '^slem-negstats: stats: read [0-9.]+ wait-read [0-9.]+ convert [0-9.]+ compute [0-9.]+ merge [0-9.]+ factor [0-9.]+ write [0-9.]+ wait-write [0-9.]+$' "$T/stats-t$t" &&
    ok || bad "negstats --stats -t $t: $(cat "$T/stats-t$t")"
  slem-negstats -q --leaf-rows 32 -t $t --partial --shard 1/3 -o "$T/p13-t$t.slem" \
    "$D/negatives.fvecs" "$D/validation.fvecs" || bad "negstats --shard 1/3 -t $t"
  [ "$(fp "$T/p13-t$t.slem")" = "$(fp "$T/p13-t1.slem")" ] && ok || bad "-t $t changes a partial cache"
done
# the other caches' --stats say where their time went too: the reading, the arithmetic, the
# factorisation (a kernel's statistics, each stage's A^-1) and the writing, each above 0
for o in "--kernel rbf --rank 16" "--kernel rbf --rank 16 --depth 2" "--depth 2" \
  "--depth 2 --adaptive-theta $D/validation.fvecs"; do
  # shellcheck disable=SC2086
  slem-negstats -q --stats $o -o "$T/other.slem" "$D/negatives.fvecs" 2>"$T/stats-o" || bad "negstats $o"
  awk '$2 == "stats:" && $3 == "read" { ok = $4 > 0 && $10 > 0 && $14 > 0 && $16 > 0 }
    END { exit !ok }' "$T/stats-o" && ok || bad "negstats --stats $o: a phase is 0: $(tail -1 "$T/stats-o")"
done
# encode: the default block (four 256-row chunks per thread) and the writing thread leave
# the descriptors as they are for every thread count and block (8 x 697 rows: several
# blocks of every size), and --stats parses
for i in 1 2 3 4 5 6 7 8; do cat "$D/negatives.fvecs"; done >"$T/many.fvecs"
slem-encode -q -t 1 -b 1024 -c "$T/whole.slem" -o "$T/many-ref.fvecs" "$T/many.fvecs" || bad "encode many"
for t in 1 2 3 5; do
  for b in "" "-b 256" "-b 4096"; do
    # shellcheck disable=SC2086
    slem-encode -q -t $t $b -c "$T/whole.slem" -o "$T/many-t.fvecs" "$T/many.fvecs" || bad "encode -t $t $b"
    cmp -s "$T/many-t.fvecs" "$T/many-ref.fvecs" && ok || bad "encode -t $t $b: other descriptors"
  done
  slem-encode -q --stats -t $t -c "$T/whole.slem" -o "$T/many-t.fvecs" "$T/many.fvecs" 2>"$T/estats" || bad "encode --stats"
  grep -Eq "^slem-encode: stats: wall [0-9.]+ threads $t block $([ $t -le 1 ] && echo 1024 || echo $((1024 * t))) units [0-9]+\$" "$T/estats" &&
    grep -Eq '^slem-encode: stats: read [0-9.]+ wait-read [0-9.]+ convert [0-9.]+ compute [0-9.]+ merge [0-9.]+ factor [0-9.]+ write [0-9.]+ wait-write [0-9.]+$' "$T/estats" &&
    ok || bad "encode --stats -t $t: $(cat "$T/estats")"
done
for n in 1 3 7 30; do
  parts=
  rparts=
  i=0
  while [ $i -lt $n ]; do
    slem-negstats -q --leaf-rows 32 --partial --shard $i/$n -o "$T/p$i.slem" "$D/negatives.fvecs" "$D/validation.fvecs" || bad "negstats shard $i/$n"
    parts="$parts $T/p$i.slem"
    rparts="$T/p$i.slem $rparts"
    i=$((i + 1))
  done
  # shellcheck disable=SC2086
  check "merge of $n shards" slem-negstats -q -o "$T/merged$n.slem" $parts
  slem-negstats --info "$T/merged$n.slem" | grep -q '"n":.*697,' && ok || bad "merged n"
  [ "$(fp "$T/merged$n.slem")" = "$(fp "$T/whole.slem")" ] && ok || bad "$n merged shards: another cache than the whole run's"
  # shellcheck disable=SC2086
  check "merge of $n shards in reverse order" slem-negstats -q -o "$T/rmerged$n.slem" $rparts
  [ "$(fp "$T/rmerged$n.slem")" = "$(fp "$T/whole.slem")" ] && ok || bad "$n shards merged in reverse: another cache"
  slem-encode -q -c "$T/merged$n.slem" -F text -o "$T/merged$n.txt" "$D/queries.fvecs" || bad "encode merged"
  if cmp -s "$T/merged$n.txt" "$T/whole.txt"; then ok; else bad "$n merged shards give other descriptors"; fi
done
# every row in exactly one shard: the shard sizes add up (30 shards of 22 leaves: some empty)
total=0
empty=0
i=0
while [ $i -lt 30 ]; do
  m=$(slem-negstats --info "$T/p$i.slem" | sed -n 's/^[[:space:]]*"n":[^0-9]*\([0-9]*\).*/\1/p')
  total=$((total + m))
  [ "$m" = 0 ] && empty=$((empty + 1))
  i=$((i + 1))
done
[ "$total" = 697 ] && ok || bad "the 30 shards hold $total rows, not 697"
[ "$empty" = 8 ] && ok || bad "$empty empty shards of 30, not 8"
# merges in two steps (shards 0-3 on one host, 4-6 on another) give the same cache
for i in 0 1 2 3 4 5 6; do
  slem-negstats -q --leaf-rows 32 --partial --shard $i/7 -o "$T/s$i.slem" "$D/negatives.fvecs" "$D/validation.fvecs" || bad "shard $i/7"
done
check "merge of shards 0-3 into a partial cache" slem-negstats -q --partial -o "$T/s03.slem" "$T/s2.slem" "$T/s0.slem" "$T/s3.slem" "$T/s1.slem"
check "merge of shards 4-6 into a partial cache" slem-negstats -q --partial -o "$T/s46.slem" "$T/s4.slem" "$T/s5.slem" "$T/s6.slem"
check "merge of the two" slem-negstats -q -o "$T/two.slem" "$T/s46.slem" "$T/s03.slem"
[ "$(fp "$T/two.slem")" = "$(fp "$T/whole.slem")" ] && ok || bad "a merge in two steps gives another cache"
# a missing or repeated shard is refused, naming the caches and the leaves
expect_fail "a shard missing" 1 "s4.slem (shard 4/7) holds leaves 12..14 of 22, but $T/s2.slem (shard 2/7) ends before leaf 9: the partial cache of leaves 9..11 (a shard) is missing" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/s0.slem" "$T/s1.slem" "$T/s2.slem" "$T/s4.slem" "$T/s5.slem" "$T/s6.slem"
expect_fail "the last shard missing" 1 "missing" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/s0.slem" "$T/s1.slem" "$T/s2.slem" "$T/s3.slem" "$T/s4.slem" "$T/s5.slem"
expect_fail "a shard twice" 1 "given twice" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/s0.slem" "$T/s1.slem" "$T/s1.slem" "$T/s2.slem" "$T/s3.slem" "$T/s4.slem" "$T/s5.slem" "$T/s6.slem"
slem-negstats -q --leaf-rows 64 --partial --shard 6/7 -o "$T/l6.slem" "$D/negatives.fvecs" "$D/validation.fvecs" || bad "shard of leaves of 64"
expect_fail "shards of another leaf size" 1 "missing" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/s0.slem" "$T/s1.slem" "$T/s2.slem" "$T/s3.slem" "$T/s4.slem" "$T/s5.slem" "$T/l6.slem"
# a shard of another run over negatives of the same shape (the same rows, leaves and grid)
# is not a shard of this one: the files in another order, or one record changed, were
# merged into a cache of neither run, status 0
slem-negstats -q --leaf-rows 32 --partial --shard 3/7 -o "$T/o3.slem" "$D/validation.fvecs" "$D/negatives.fvecs" || bad "shard of the files in another order"
expect_fail "a shard of the files in another order" 1 "$T/s2.slem (shard 2/7) ends before leaf 9: the partial cache of leaves 9..11 (a shard) is missing, which $T/o3.slem (shard 3/7) holds, but of other negatives" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/s0.slem" "$T/s1.slem" "$T/s2.slem" "$T/o3.slem" "$T/s4.slem" "$T/s5.slem" "$T/s6.slem"
cp "$D/negatives.fvecs" "$T/neg1.fvecs"
printf '\000\000\200\077' | dd of="$T/neg1.fvecs" bs=1 seek=8 conv=notrunc 2>/dev/null
slem-negstats -q --leaf-rows 32 --partial --shard 0/7 -o "$T/e0.slem" "$T/neg1.fvecs" "$D/validation.fvecs" || bad "shard of other negatives"
expect_fail "a shard of other negatives" 1 "$T/e0.slem and the partial caches with it hold leaves 0..2 of 22: the shards of the other leaves are missing, which $T/s1.slem (shard 1/7) holds, but of other negatives" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/e0.slem" "$T/s1.slem" "$T/s2.slem" "$T/s3.slem" "$T/s4.slem" "$T/s5.slem" "$T/s6.slem"
expect_fail "a shard of other negatives, in two steps" 1 "of other negatives" "$T/x.slem" slem-negstats -o "$T/x.slem" "$T/e0.slem" "$T/s1.slem" "$T/s2.slem" "$T/s3.slem" "$T/s46.slem"
check "the shard of other negatives with its own run" slem-negstats -q --partial -o "$T/e06.slem" "$T/e0.slem"
slem-negstats -q --leaf-rows 32 -o "$T/e.slem" "$T/neg1.fvecs" "$D/validation.fvecs" || bad "whole cache of other negatives"
for i in 1 2 3 4 5 6; do
  slem-negstats -q --leaf-rows 32 --partial --shard $i/7 -o "$T/e$i.slem" "$T/neg1.fvecs" "$D/validation.fvecs" || bad "shard $i/7 of other negatives"
done
check "the shards of other negatives merged" slem-negstats -q -o "$T/e-merged.slem" "$T/e3.slem" "$T/e0.slem" "$T/e1.slem" "$T/e2.slem" "$T/e4.slem" "$T/e5.slem" "$T/e6.slem"
[ "$(fp "$T/e-merged.slem")" = "$(fp "$T/e.slem")" ] && ok || bad "the shards of other negatives merge into another cache"
# the shards of two sets given together still merge as the union of the sets
check "the shards of two sets" slem-negstats -q --partial -o "$T/both.slem" "$T/s0.slem" "$T/e0.slem" "$T/s1.slem" "$T/e1.slem" "$T/s2.slem" "$T/e2.slem" "$T/s3.slem" "$T/e3.slem" "$T/s4.slem" "$T/e4.slem" "$T/s5.slem" "$T/e5.slem" "$T/s6.slem" "$T/e6.slem"
# two whole sets of negatives, each a partial cache, merge as the union (in order)
check "partial of the negatives" slem-negstats -q --partial -o "$T/neg.slem" "$D/negatives.fvecs"
check "partial of the validation" slem-negstats -q --partial -o "$T/val.slem" "$D/validation.fvecs"
check "merge of two sets" slem-negstats -q -o "$T/sets.slem" "$T/neg.slem" "$T/val.slem"
slem-negstats --info "$T/sets.slem" | grep -q '"n":.*697,' && ok || bad "two sets: n"
slem-encode -q -c "$T/sets.slem" -F text -o "$T/sets.txt" "$D/queries.fvecs" || bad "encode sets"
# the union of two sets is the statistics of all the rows to rounding (not the same tree)
paste "$T/sets.txt" "$T/whole.txt" | awk '{h = NF / 2; for (i = 1; i <= h; i++) { e = $i - $(i + h); if (e < 0) e = -e; if (e > 1e-6) bad = 1 } } END { exit bad }' && ok || bad "two sets: other descriptors"

# encoded shards concatenate into the whole, linear (float32 and double) and kernel
check "kernel cache" slem-negstats -q -K rbf:g=1 --rank 32 -o "$T/k.slem" "$D/negatives.fvecs"
for cache in whole k; do
  for n in 3 7; do
    for prec in auto double; do
      [ "$cache" = k ] && [ "$prec" = double ] && continue
      rm -f "$T"/e*.fvecs
      i=0
      while [ $i -lt $n ]; do
        slem-encode -q -c "$T/$cache.slem" --precision $prec --shard $i/$n -b 64 -F fvecs -o "$T/e$i.fvecs" "$D/database.fvecs" || bad "encode shard"
        i=$((i + 1))
      done
      slem-encode -q -c "$T/$cache.slem" --precision $prec -b 64 -F fvecs -o "$T/all.fvecs" "$D/database.fvecs"
      # shellcheck disable=SC2046
      if cat $(i=0; while [ $i -lt $n ]; do echo "$T/e$i.fvecs"; i=$((i + 1)); done) | cmp -s - "$T/all.fvecs"; then ok
      else bad "$cache cache, $prec, $n shards: the concatenation differs from the whole"; fi
    done
  done
done
# more shards than rows: empty shards, and still the whole
head -c $((5 * 260)) "$D/queries.fvecs" >"$T/five.fvecs"
slem-encode -q -c "$T/whole.slem" -F fvecs -o "$T/five.all.fvecs" "$T/five.fvecs"
: >"$T/five.cat"
i=0
while [ $i -lt 7 ]; do
  slem-encode -q -c "$T/whole.slem" --shard $i/7 -F fvecs -o "$T/f$i.fvecs" "$T/five.fvecs" || bad "encode shard $i/7 of 5 rows"
  cat "$T/f$i.fvecs" >>"$T/five.cat"
  i=$((i + 1))
done
cmp -s "$T/five.cat" "$T/five.all.fvecs" && ok || bad "7 shards of 5 rows"
# a shard with no row is a partial cache of n = 0; the 7 shards of 5 rows merge into the
# cache of the 5 rows
parts=
i=0
while [ $i -lt 7 ]; do
  slem-negstats -q --partial --shard $i/7 -o "$T/five$i.slem" "$T/five.fvecs" || bad "shard $i/7 of 5 rows"
  parts="$parts $T/five$i.slem"
  i=$((i + 1))
done
slem-negstats --info "$T/five0.slem" | grep -q '^[[:space:]]*"n":[^0-9]*0,' && ok || bad "empty shard n"
# shellcheck disable=SC2086
check "merge with empty shards" slem-negstats -q -o "$T/five.m.slem" $parts
check "the 5 rows at once" slem-negstats -q -o "$T/five.w.slem" "$T/five.fvecs"
[ "$(fp "$T/five.m.slem")" = "$(fp "$T/five.w.slem")" ] && ok || bad "7 shards of 5 rows: another cache"
expect_fail "shard with --skip-nonfinite" 1 "skip-nonfinite" "$T/x.slem" slem-negstats --partial --skip-nonfinite --shard 0/2 -o "$T/x.slem" "$D/negatives.fvecs"
printf '1 nan\n2 inf\n3 4\n5 6\n' >"$T/nan.txt"
slem-encode -q -c "$T/whole.slem" -F text -o /dev/null "$D/queries.fvecs"
# a shard reads only its rows (a seek to them): a bad record before them is never read, and
# the shard is still the same cut of the clean file's rows
cp "$D/database.fvecs" "$T/dirty.fvecs"
printf '\377\377\300\177' | dd of="$T/dirty.fvecs" bs=1 seek=8 conv=notrunc 2>/dev/null # NaN in record 1
expect_fail "the dirty record is bad" 1 "record 1: value 2 is NaN" "$T/x.fvecs" slem-encode -c "$T/whole.slem" -o "$T/x.fvecs" "$T/dirty.fvecs"
slem-encode -q -c "$T/whole.slem" --shard 1/2 -b 64 -o "$T/clean1.fvecs" "$D/database.fvecs"
check "encode shard after a bad record" slem-encode -q -c "$T/whole.slem" --shard 1/2 -b 64 -o "$T/dirty1.fvecs" "$T/dirty.fvecs"
cmp -s "$T/dirty1.fvecs" "$T/clean1.fvecs" && ok || bad "encode shard after a bad record: other descriptors"
slem-match -q -n -k 5 --shard 1/2 -d "$D/database.fvecs" -o "$T/clean1.tsv" "$D/queries.fvecs"
check "match shard after a bad record" slem-match -q -n -k 5 --shard 1/2 -d "$T/dirty.fvecs" -o "$T/dirty1.tsv" "$D/queries.fvecs"
cmp -s "$T/dirty1.tsv" "$T/clean1.tsv" && ok || bad "match shard after a bad record: another ranking"
slem-negstats -q --leaf-rows 32 --partial --shard 1/2 -o "$T/clean1.slem" "$D/database.fvecs"
check "negstats shard after a bad record" slem-negstats -q --leaf-rows 32 --partial --shard 1/2 -o "$T/dirty1.slem" "$T/dirty.fvecs"
[ "$(fp "$T/dirty1.slem")" = "$(fp "$T/clean1.slem")" ] && ok || bad "negstats shard after a bad record: other statistics"
# nor a bad record after them, whatever the block read: 1 000 rows in 32 leaves of 32, shard
# 0/2 is rows 0-511, and a NaN in row 512 (record 513) was read by a block that went past
# them (the default 4 096 rows, -b 100, or -t 16's 4 MiB pieces) and refused the shard
cp "$D/database.fvecs" "$T/dirty.fvecs"
printf '\377\377\300\177' | dd of="$T/dirty.fvecs" bs=1 seek=$((512 * 260 + 8)) conv=notrunc 2>/dev/null
expect_fail "the dirty record after a shard is bad" 1 "record 513: value 2 is NaN" "$T/x.slem" slem-negstats --leaf-rows 32 --partial --shard 1/2 -o "$T/x.slem" "$T/dirty.fvecs"
slem-negstats -q --leaf-rows 32 --partial --shard 0/2 -o "$T/clean0.slem" "$D/database.fvecs"
for o in "-t 1" "-t 1 -b 100" "-t 1 -b 5" "-t 16"; do
  # shellcheck disable=SC2086
  check "negstats shard before a bad record ($o)" slem-negstats -q --leaf-rows 32 $o --partial --shard 0/2 -o "$T/dirty0.slem" "$T/dirty.fvecs"
  [ "$(fp "$T/dirty0.slem")" = "$(fp "$T/clean0.slem")" ] && ok || bad "negstats shard before a bad record ($o): other statistics"
done
# encode's shards too: the rows of their first and last blocks outside the shard are not read
# (rows of zeros stand for them in the GEMM calls), so a NaN in record 513 (shard
# 1/2) or 461 (shard 0/2) refuses neither the other shard nor changes its descriptors, with
# the default blocks (1 024 or 2 048 rows: they took both in), -b 64 or -b 100
cp "$D/database.fvecs" "$T/dirty461.fvecs"
printf '\377\377\300\177' | dd of="$T/dirty461.fvecs" bs=1 seek=$((460 * 260 + 8)) conv=notrunc 2>/dev/null
for o in "-t 1" "-t 2" "-t 1 -b 64" "-t 2 -b 100"; do
  # shellcheck disable=SC2086
  slem-encode -q $o -c "$T/whole.slem" --shard 0/2 -o "$T/eclean0.fvecs" "$D/database.fvecs"
  # shellcheck disable=SC2086
  check "encode shard 0/2 before a bad record ($o)" slem-encode -q $o -c "$T/whole.slem" --shard 0/2 -o "$T/edirty0.fvecs" "$T/dirty.fvecs"
  cmp -s "$T/edirty0.fvecs" "$T/eclean0.fvecs" && ok || bad "encode shard 0/2 before a bad record ($o): other descriptors"
  # shellcheck disable=SC2086
  slem-encode -q $o -c "$T/whole.slem" --shard 1/2 -o "$T/eclean1.fvecs" "$D/database.fvecs"
  # shellcheck disable=SC2086
  check "encode shard 1/2 after a bad record ($o)" slem-encode -q $o -c "$T/whole.slem" --shard 1/2 -o "$T/edirty1.fvecs" "$T/dirty461.fvecs"
  cmp -s "$T/edirty1.fvecs" "$T/eclean1.fvecs" && ok || bad "encode shard 1/2 after a bad record ($o): other descriptors"
done
expect_fail "encode: the shard of the bad record" 1 "dirty.fvecs: record 513: value 2 is NaN" "$T/x.fvecs" slem-encode -c "$T/whole.slem" --shard 1/2 -o "$T/x.fvecs" "$T/dirty.fvecs"
expect_fail "encode: the shard of the bad record before" 1 "dirty461.fvecs: record 461: value 2 is NaN" "$T/x.fvecs" slem-encode -c "$T/whole.slem" --shard 0/2 -b 64 -o "$T/x.fvecs" "$T/dirty461.fvecs"
# the same for Fortran-order npy, whose reader reads a column's rows by offset: a shard
# moves to its first row without reading those before (it read every row from the first,
# and a NaN in row 200 (record 201, column 3) of 300 refused shard 0/2): shard 0/2 of the
# dirty file is that of the C-order twin, at -t 1 and 2, default blocks and -b 64, and its
# negstats partial too; shard 1/2 names the record; shard 1/2 of the clean file is the twin's
F=$TOP/testdata/formats
cp "$F/big_fortran.npy" "$T/fdirty.npy"
printf '\000\000\300\177' | dd of="$T/fdirty.npy" bs=1 seek=$((128 + (2 * 300 + 200) * 4)) conv=notrunc 2>/dev/null
slem-negstats -q -o "$T/big.slem" "$F/big_c.npy"
for o in "-t 1" "-t 2" "-t 1 -b 64" "-t 2 -b 64"; do
  # shellcheck disable=SC2086
  slem-encode -q $o -c "$T/big.slem" --shard 0/2 -o "$T/fc0.fvecs" "$F/big_c.npy"
  # shellcheck disable=SC2086
  check "encode Fortran npy shard 0/2 before a bad record ($o)" slem-encode -q $o -c "$T/big.slem" --shard 0/2 -o "$T/ff0.fvecs" "$T/fdirty.npy"
  cmp -s "$T/ff0.fvecs" "$T/fc0.fvecs" && ok || bad "encode Fortran npy shard 0/2 ($o): not the C-order twin's descriptors"
done
slem-encode -q -c "$T/big.slem" --shard 1/2 -o "$T/fc1.fvecs" "$F/big_c.npy"
check "encode Fortran npy shard 1/2" slem-encode -q -c "$T/big.slem" --shard 1/2 -o "$T/ff1.fvecs" "$F/big_fortran.npy"
cmp -s "$T/ff1.fvecs" "$T/fc1.fvecs" && ok || bad "encode Fortran npy shard 1/2: not the C-order twin's descriptors"
expect_fail "encode: the Fortran npy shard of the bad record" 1 "fdirty.npy: record 201: value 3 is NaN" "$T/x.fvecs" \
  slem-encode -c "$T/big.slem" --shard 1/2 -o "$T/x.fvecs" "$T/fdirty.npy"
slem-negstats -q --leaf-rows 32 --partial --shard 0/2 -o "$T/fnc0.slem" "$F/big_c.npy"
check "negstats Fortran npy shard 0/2 before a bad record" slem-negstats -q --leaf-rows 32 --partial --shard 0/2 -o "$T/fnf0.slem" "$T/fdirty.npy"
[ "$(fp "$T/fnf0.slem")" = "$(fp "$T/fnc0.slem")" ] && ok || bad "negstats Fortran npy shard 0/2: other statistics than the C-order twin's"
# the rows that stand for those outside the shard are zeros, which every encoder takes, not
# copies of the shard's rows: a row an encoder refuses (a negative value for a kernel of
# histograms; digits' values are 0 to 16) is named at its own record, not at a copy's place
slem-negstats -q -K chi2 --rank 8 -o "$T/chi2.slem" "$D/negatives.fvecs"
cp "$D/database.fvecs" "$T/hneg.fvecs"
printf '\000\000\200\277' | dd of="$T/hneg.fvecs" bs=1 seek=$((500 * 260 + 4)) conv=notrunc 2>/dev/null # -1
expect_fail "encode shard: a refused row named at its record" 1 "hneg.fvecs: record 501: value 1 is negative" "$T/x.fvecs" \
  slem-encode -c "$T/chi2.slem" --shard 1/2 -b 64 -o "$T/x.fvecs" "$T/hneg.fvecs"
check "encode shard 0/2 of the chi2 cache" slem-encode -q -c "$T/chi2.slem" --shard 0/2 -o "$T/x.fvecs" "$T/hneg.fvecs"
rm -f "$T/x.fvecs"
# the zero descriptors' warning counts the shard's rows only: negatives symmetric around 0
# (mean exactly 0), so that the rows of zeros standing for those outside the shard in its
# first and last blocks came out as zero descriptors and were counted (shard 0/2 of 10 rows
# with 2 zero rows, one per shard, warned of 6: its own and the 5 rows of 1/2). The linear,
# basic and whitening encoders, default blocks and -b 4
printf '1 2\n-1 -2\n3 -1\n-3 1\n2 2\n-2 -2\n' >"$T/sym.txt"
slem-negstats -q --eigen -o "$T/sym.slem" "$T/sym.txt" || bad "negstats of symmetric negatives"
one='\002\000\000\000\000\000\200\077\000\000\000\100' # [1, 2]
zero='\002\000\000\000\000\000\000\000\000\000\000\000' # [0, 0]: the negatives' mean
for r in 0 1 2 3 4 5 6 7 8 9; do
  # shellcheck disable=SC2059 # the record's bytes, as octal escapes of the format
  case $r in 2 | 7) printf "$zero" ;; *) printf "$one" ;; esac
done >"$T/zeros2.fvecs"
for e in "" "--basic" "--alpha -0.5"; do
  # shellcheck disable=SC2086
  slem-encode -c "$T/sym.slem" $e -o "$T/z.fvecs" "$T/zeros2.fvecs" 2>"$T/err"
  grep -q "warning: 2 input vectors equal the negatives' mean" "$T/err" && ok || bad "zeros of the whole input ($e): $(cat "$T/err")"
  for o in "" "-b 4"; do
    for s in 0/2 1/2; do
      # shellcheck disable=SC2086
      slem-encode -c "$T/sym.slem" $e $o --shard $s -o "$T/z.fvecs" "$T/zeros2.fvecs" 2>"$T/err"
      grep -q "warning: 1 input vectors equal the negatives' mean" "$T/err" && ok || bad "zeros of shard $s ($e $o): $(cat "$T/err")"
    done
  done
done
# a recursive cache counts a row at each stage where it is zero (both here: mu_2 is 0 too);
# its shards' counts add up to the whole input's all the same
slem-negstats -q --depth 2 -o "$T/symr.slem" "$T/sym.txt" || bad "recursive negstats of symmetric negatives"
nz() { sed -n "s/.*warning: \([0-9]*\) input vectors equal the negatives' mean.*/\1/p" "$1"; }
slem-encode -c "$T/symr.slem" -o "$T/z.fvecs" "$T/zeros2.fvecs" 2>"$T/err"; zw=$(nz "$T/err")
slem-encode -c "$T/symr.slem" -b 4 --shard 0/2 -o "$T/z.fvecs" "$T/zeros2.fvecs" 2>"$T/err"; z0=$(nz "$T/err")
slem-encode -c "$T/symr.slem" -b 4 --shard 1/2 -o "$T/z.fvecs" "$T/zeros2.fvecs" 2>"$T/err"; z1=$(nz "$T/err")
[ -n "$zw" ] && [ "$zw" -gt 0 ] && [ "$((z0 + z1))" = "$zw" ] && ok || bad "recursive zeros: shards $z0 + $z1, whole $zw"
# errors
expect_fail "shard without partial" 2 "add --partial" "$T/x.slem" slem-negstats --shard 0/2 -o "$T/x.slem" "$D/negatives.fvecs"
expect_fail "bad shard" 2 "--shard" "$T/x.slem" slem-negstats --partial --shard 2/2 -o "$T/x.slem" "$D/negatives.fvecs"
expect_fail "encode bad shard" 2 "--shard" "$T/x.fvecs" slem-encode -c "$T/whole.slem" --shard 1 -o "$T/x.fvecs" "$D/queries.fvecs"
printf '1 2\n3 4\n' >"$T/t.txt"
expect_fail "shard of text" 1 "t.txt: the number of vectors is not known" "$T/x.slem" slem-negstats --partial --shard 0/2 -o "$T/x.slem" "$T/t.txt"
expect_fail "encode shard of a pipe" 1 "cannot be cut into shards" "$T/x.fvecs" sh -c "cat '$D/queries.fvecs' | slem-encode -c '$T/whole.slem' -f fvecs --shard 0/2 -o '$T/x.fvecs' -"
expect_fail "shard of partial caches" 1 "cuts vector files, not partial caches" "$T/x.slem" slem-negstats --partial --shard 0/2 -o "$T/x.slem" "$T/p0.slem"
finish cli-shard
