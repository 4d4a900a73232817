#!/bin/sh
# --shard I/N in slem-negstats --partial and slem-encode: the same cut of rows as slem-match's,
# partial statistics that merge into those of all the rows, and encoded shards that
# concatenate, byte for byte, into the encoding of the whole input. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
check "whole cache" slem-negstats -q -o "$T/whole.slem" "$D/negatives.fvecs" "$D/validation.fvecs"
slem-encode -q -c "$T/whole.slem" -F text -o "$T/whole.txt" "$D/queries.fvecs" || bad "encode whole"
for n in 1 3 7; do
  parts=
  i=0
  while [ $i -lt $n ]; do
    slem-negstats -q --partial --shard $i/$n -o "$T/p$i.slem" "$D/negatives.fvecs" "$D/validation.fvecs" || bad "negstats shard $i/$n"
    parts="$parts $T/p$i.slem"
    i=$((i + 1))
  done
  # shellcheck disable=SC2086
  check "merge of $n shards" slem-negstats -q -o "$T/merged$n.slem" $parts
  slem-negstats --info "$T/merged$n.slem" | grep -q '"n":.*697,' && ok || bad "merged n"
  slem-encode -q -c "$T/merged$n.slem" -F text -o "$T/merged$n.txt" "$D/queries.fvecs" || bad "encode merged"
  # the statistics are merged exactly: the descriptors agree to the printed digit
  if cmp -s "$T/merged$n.txt" "$T/whole.txt"; then ok; else bad "$n merged shards give other descriptors"; fi
done
# every row in exactly one shard: the shard sizes add up
total=0
for i in 0 1 2 3 4 5 6; do
  m=$(slem-negstats --info "$T/p$i.slem" | sed -n 's/.*"n":[^0-9]*\([0-9]*\).*/\1/p')
  total=$((total + m))
done
[ "$total" = 697 ] && ok || bad "the 7 shards hold $total rows, not 697"

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
# a shard with no row, or whose rows are all skipped, is a partial cache of n = 0 that merges
check "empty shard" slem-negstats -q --partial --shard 0/7 -o "$T/empty.slem" "$T/five.fvecs"
slem-negstats --info "$T/empty.slem" | grep -q '"n":.*0,' && ok || bad "empty shard n"
check "merge with an empty shard" slem-negstats -q -o "$T/m2.slem" "$T/empty.slem" "$T/p0.slem" "$T/p1.slem" "$T/p2.slem" "$T/p3.slem" "$T/p4.slem" "$T/p5.slem" "$T/p6.slem"
printf '1 nan\n2 inf\n3 4\n5 6\n' >"$T/nan.txt"
slem-encode -q -c "$T/whole.slem" -F text -o /dev/null "$D/queries.fvecs"
# errors
expect_fail "shard without partial" 2 "add --partial" "$T/x.slem" slem-negstats --shard 0/2 -o "$T/x.slem" "$D/negatives.fvecs"
expect_fail "bad shard" 2 "--shard" "$T/x.slem" slem-negstats --partial --shard 2/2 -o "$T/x.slem" "$D/negatives.fvecs"
expect_fail "encode bad shard" 2 "--shard" "$T/x.fvecs" slem-encode -c "$T/whole.slem" --shard 1 -o "$T/x.fvecs" "$D/queries.fvecs"
printf '1 2\n3 4\n' >"$T/t.txt"
expect_fail "shard of text" 1 "t.txt: the number of vectors is not known" "$T/x.slem" slem-negstats --partial --shard 0/2 -o "$T/x.slem" "$T/t.txt"
expect_fail "encode shard of a pipe" 1 "cannot be cut into shards" "$T/x.fvecs" sh -c "cat '$D/queries.fvecs' | slem-encode -c '$T/whole.slem' -f fvecs --shard 0/2 -o '$T/x.fvecs' -"
expect_fail "shard of partial caches" 1 "cuts vector files, not partial caches" "$T/x.slem" slem-negstats --partial --shard 0/2 -o "$T/x.slem" "$T/p0.slem"
finish cli-shard
