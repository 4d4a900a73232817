#!/bin/sh
# CLI tests of the kernel recursive SLEM (slem-negstats --kernel SPEC --depth K, var_krec.h):
# rbf with icd and kpca at depths 2 and 3 against the float64 reference written from the
# authors' quick_full_encoder.m (scripts/gen-authors-krec.py, testdata/authors/krec-*.tsv);
# depth 1 is today's kernel cache and stage 1 of a deeper cache its stage, byte for byte;
# threads and shards change no byte; the refusals; a damaged cache is refused, naming it.
# Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
A=$TOP/testdata/authors

# ---- the goldens: rankings exactly, scores (float32, %.9g) to 1e-6 relative (an absolute
# 1e-9 for the scores of depth 3 icd, ~1e-5, where the float32 descriptors' rounding is
# 1e-6 of them) ----
for f in icd kpca; do
  for k in 2 3; do
    check "negstats $f --depth $k" slem-negstats -q -K rbf:g=1 --factor $f --rank 64 --lambda-rel 1 \
      --depth $k -o "$T/$f$k.slem" "$D/negatives.fvecs"
    check "encode $f depth $k" slem-encode -q -c "$T/$f$k.slem" -o "$T/db-$f$k.fvecs" "$D/database.fvecs"
    slem-encode -q -c "$T/$f$k.slem" "$D/queries.fvecs" | slem-match -k 10 -d "$T/db-$f$k.fvecs" >"$T/m-$f$k.tsv"
    awk -v rtol=1e-6 -v atol=1e-9 -f "$TOP/tests/numcmp.awk" "$A/krec-rbf-$f-depth$k.tsv" "$T/m-$f$k.tsv" >"$T/diff" &&
      [ "$(wc -l <"$T/m-$f$k.tsv")" = 1000 ] && ok ||
      bad "rbf $f depth $k differs from scripts/gen-authors-krec.py: $(cat "$T/diff")"
  done
done
slem-negstats --info "$T/icd3.slem" >"$T/info"
grep -q '"kind":.*"kernel-recursive"' "$T/info" && grep -q '"depth":.*3' "$T/info" &&
  [ "$(grep -c '"gamma_median_sq_distance"' "$T/info")" = 3 ] &&
  [ "$(grep -c '"kernel":.*"rbf:gamma=' "$T/info")" = 3 ] && ok || bad "--info of a depth 3 cache: $(head -c 600 "$T/info")"
# a relative gamma is resolved on each stage's inputs: three different gammas
[ "$(grep '"kernel":' "$T/info" | sort -u | wc -l)" = 3 ] && ok || bad "one gamma for every stage"
[ "$(wc -c <"$T/db-icd3.fvecs")" = $((1000 * (4 + 4 * 64))) ] && ok || bad "descriptors are not r = 64 wide"

# ---- depth 1 is today's kernel cache; stage 1 of a deeper cache is its stage ----
slem-negstats -q -K rbf:g=1 --rank 64 --lambda-rel 1 -o "$T/k.slem" "$D/negatives.fvecs"
SOURCE_DATE_EPOCH=1 slem-negstats -q -K rbf:g=1 --rank 64 --lambda-rel 1 -o "$T/k0.slem" "$D/negatives.fvecs"
SOURCE_DATE_EPOCH=1 slem-negstats -q -K rbf:g=1 --rank 64 --lambda-rel 1 --depth 1 -o "$T/k1.slem" "$D/negatives.fvecs"
cmp -s "$T/k0.slem" "$T/k1.slem" && ok || bad "--depth 1 is not today's kernel cache"
slem-encode -q -c "$T/k.slem" -F txt -o "$T/k.txt" "$D/queries.fvecs"
for f in icd kpca; do
  slem-negstats -q -K rbf:g=1 --factor $f --rank 64 --lambda-rel 1 -o "$T/k$f.slem" "$D/negatives.fvecs"
  slem-negstats --info "$T/k$f.slem" | sed -n '/"kernel":/,/"factor":/p' | tr -d ' \t,' >"$T/s1"
  slem-negstats --info "$T/${f}2.slem" | sed -n '/"kernel":/,/"factor":/p' | sed -n '1,/"factor":/p' | tr -d ' \t,' >"$T/s2"
  cmp -s "$T/s1" "$T/s2" && ok || bad "stage 1 of a $f depth 2 cache is not the kernel cache: $(diff "$T/s1" "$T/s2" | head -5)"
done
# the sections of stage 1, number for number (every section of the kernel cache, .1 appended)
sec() { slem-negstats --info "$1" | awk '/"name":/ { gsub(/[",]/, "", $2); n = $2 }
  /"offset":/ { gsub(/,/, "", $2); o = $2 }
  /"shape":/ { s = $0; gsub(/[^0-9,]/, "", s); k = split(s, v, ","); b = 8; for (i = 1; i <= k; i++) if (v[i] != "") b *= v[i]; print n, o, b }'; }
sec "$T/kicd.slem" >"$T/sk"
sec "$T/icd2.slem" >"$T/s2"
bytes_same=1
while read -r name off len; do
  off2=$(awk -v n="$name.1" '$1 == n { print $2 }' "$T/s2")
  [ -n "$off2" ] && cmp -s -n "$len" -i "$off:$off2" "$T/kicd.slem" "$T/icd2.slem" || bytes_same=0
done <"$T/sk"
[ "$bytes_same" = 1 ] && [ "$(wc -l <"$T/sk")" = 4 ] && ok || bad "stage 1's sections differ from the kernel cache's"

# ---- threads, blocks and shards change no byte ----
for f in icd kpca; do
  SOURCE_DATE_EPOCH=1 slem-negstats -q -t 1 -K rbf:g=1 --factor $f --rank 64 --depth 3 -o "$T/t1.slem" "$D/negatives.fvecs"
  SOURCE_DATE_EPOCH=1 slem-negstats -q -t 2 -K rbf:g=1 --factor $f --rank 64 --depth 3 -o "$T/t2.slem" "$D/negatives.fvecs"
  cmp -s "$T/t1.slem" "$T/t2.slem" && ok || bad "$f: the cache changes with the threads"
  slem-encode -q -t 1 -c "$T/t1.slem" -o "$T/e1.fvecs" "$D/database.fvecs"
  slem-encode -q -t 2 --block 7 -c "$T/t1.slem" -o "$T/e2.fvecs" "$D/database.fvecs"
  cmp -s "$T/e1.fvecs" "$T/e2.fvecs" && ok || bad "$f: the descriptors change with threads and blocks"
  slem-encode -q -t 2 -c "$T/t1.slem" --shard 0/3 -o "$T/s0.fvecs" "$D/database.fvecs"
  slem-encode -q -t 2 -c "$T/t1.slem" --shard 1/3 -o "$T/s1.fvecs" "$D/database.fvecs"
  slem-encode -q -t 1 -c "$T/t1.slem" --shard 2/3 -o "$T/s2.fvecs" "$D/database.fvecs"
  cat "$T/s0.fvecs" "$T/s1.fvecs" "$T/s2.fvecs" | cmp -s - "$T/e1.fvecs" && ok || bad "$f: sharded encode differs"
  slem-encode -q -t 1 -c "$T/t1.slem" -o "$T/q1.fvecs" "$D/queries.fvecs"
  slem-match -q -t 1 -k 20 -d "$T/e1.fvecs" -o "$T/r1.tsv" "$T/q1.fvecs"
  slem-match -q -t 2 -k 20 -d "$T/s0.fvecs" -d "$T/s1.fvecs" -d "$T/s2.fvecs" -o "$T/r2.tsv" "$T/q1.fvecs"
  cmp -s "$T/r1.tsv" "$T/r2.tsv" && ok || bad "$f: rankings change with threads and database shards"
done

# ---- refusals ----
N=$D/negatives.fvecs
expect_fail "--couple with --depth" 2 "couple" "$T/o.slem" slem-negstats -q -K rbf:g=1 --couple --depth 2 -o "$T/o.slem" "$N"
expect_fail "--partial with --depth" 2 "partial" "$T/o.slem" slem-negstats -q -K rbf:g=1 --partial --depth 2 -o "$T/o.slem" "$N"
expect_fail "--shard with --depth" 2 "shard" "$T/o.slem" slem-negstats -q -K rbf:g=1 --shard 0/2 --depth 2 -o "$T/o.slem" "$N"
expect_fail "--eigen with --depth" 2 "eigen" "$T/o.slem" slem-negstats -q --eigen --depth 2 -o "$T/o.slem" "$N"
for o in --classifier --coordinates --projections --couple "--alpha 0.5"; do
  # shellcheck disable=SC2086
  expect_fail "encode $o" 2 "(no ${o% *})" "$T/o.slem" slem-encode -q -c "$T/icd2.slem" $o -o "$T/o.slem" "$D/queries.fvecs"
done
expect_fail "match -c" 1 "icd2.slem: -c takes a kernel cache of depth 1" "$T/o.tsv" \
  slem-match -c "$T/icd2.slem" -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"
# an absolute lambda and stdin are fine: the kernel path reads the negatives once
check "--lambda with --depth" slem-negstats -q -K rbf:g=1 --rank 16 --lambda 0.01 --depth 2 -o "$T/l.slem" - <"$N"
[ "$(slem-negstats --info "$T/l.slem" | grep -c '"lambda":[[:space:]]*0.01,')" = 2 ] && ok || bad "--lambda is not every stage's"
# a histogram kernel cannot take stage 2's signed descriptors: a usage error before any work
# (it failed after stage 1 with "value 1 is negative")
for k in chi2 intersection intersection:gamma=0.5 hellinger hellinger-dot; do
  expect_fail "$k at depth 2" 2 "--depth 2 is not for the ${k%%:*} kernel: it needs histograms" "$T/o.slem" \
    slem-negstats -q -K "$k" --rank 16 --depth 2 -o "$T/o.slem" "$N"
done

# descriptors in a container are vectors like any others (they were taken for a partial
# cache: "a kernel cache is built from vectors, not from partial caches")
slem-encode -q -c "$T/k.slem" -o "$T/kd.slem" "$D/database.fvecs"
slem-encode -q -c "$T/k.slem" -o "$T/kd.fvecs" "$D/database.fvecs"
check "kernel depth 2 from a descriptor container" slem-negstats -q -K rbf:g=1 --rank 8 --depth 2 -o "$T/kdc.slem" "$T/kd.slem"
slem-negstats -q -K rbf:g=1 --rank 8 --depth 2 -o "$T/kdf.slem" "$T/kd.fvecs"
slem-encode -q -c "$T/kdc.slem" -o "$T/kdc.fvecs" "$D/queries.fvecs" && slem-encode -q -c "$T/kdf.slem" -o "$T/kdf.fvecs" "$D/queries.fvecs" &&
  cmp -s "$T/kdc.fvecs" "$T/kdf.fvecs" && ok || bad "a descriptor container and its fvecs make other caches"
expect_fail "a cache as negatives at depth 2" 1 "icd2.slem: a slem cache cannot make a recursive cache" "$T/o.slem" \
  slem-negstats -q --depth 2 -o "$T/o.slem" "$T/icd2.slem"

# a lambda whose square leaves double made a cache of zero descriptors (the norms underflow)
expect_fail "kernel --lambda 1e300" 1 "lambda = 1e+300 puts it beyond double" "$T/o.slem" \
  slem-negstats -q -K rbf:g=1 --rank 8 --lambda 1e300 -o "$T/o.slem" "$N"
expect_fail "kernel depth 2 --lambda-rel 1e300" 1 "stage 1 of 2: kernel SLEM divides by lambda^2" "$T/o.slem" \
  slem-negstats -q -K rbf:g=1 --rank 8 --depth 2 -r 1e300 -o "$T/o.slem" "$N"

# ---- damaged caches are refused, naming the file ----
cp "$T/icd2.slem" "$T/c.slem"
printf 'X' | dd of="$T/c.slem" bs=1 seek=$(($(wc -c <"$T/c.slem") - 100)) conv=notrunc 2>/dev/null
expect_fail "corrupt kernel-recursive cache" 1 "c.slem: checksum mismatch in the payload" "$T/o.fvecs" \
  slem-encode -c "$T/c.slem" -o "$T/o.fvecs" "$D/queries.fvecs"
head -c 5000 "$T/icd2.slem" >"$T/c.slem"
expect_fail "truncated kernel-recursive cache" 1 "c.slem: header offsets disagree with the file size" "$T/o.fvecs" \
  slem-encode -c "$T/c.slem" -o "$T/o.fvecs" "$D/queries.fvecs"

finish cli-krec
