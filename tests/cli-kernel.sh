#!/bin/sh
# CLI tests of kernel SLEM: the demo data against an independent numpy implementation of
# the same formulas (testdata/golden/kernel-rbf256.txt), the linear kernel against linear
# SLEM, every kernel end to end, and the errors. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
LABELS="--query-labels $D/queries.labels --db-labels $D/database.labels"
ref() { awk -F '\t' -v k="$1" '$1 == k { print $2 }' "$G/kernel-rbf256.txt"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

# ---- RBF at rank 256 on the demo data, end to end ----
check "kernel negstats" slem-negstats -q --kernel rbf:g=1 --rank 256 --lambda-rel 100 -o "$T/rbf.slem" "$D/negatives.fvecs"
slem-negstats --info "$T/rbf.slem" >"$T/info"
grep -q '"kind":.*"kernel"' "$T/info" && grep -q '"r":.*256' "$T/info" && grep -q '"residual_trace"' "$T/info" &&
  grep -q '"gamma_median_sq_distance"' "$T/info" && ok || bad "--info of a kernel cache: $(cat "$T/info")"
g=$(sed -n 's/.*"kernel":.*"rbf:gamma=\([^"]*\)".*/\1/p' "$T/info")
near "$g" "$(ref gamma)" 1e-15 && ok || bad "gamma $g, reference $(ref gamma)"
check "exact match" slem-match -c "$T/rbf.slem" -k 1000 -d "$D/database.fvecs" -o "$T/exact.tsv" "$D/queries.fvecs"
# shellcheck disable=SC2086
m=$(slem-eval $LABELS "$T/exact.tsv" | awk -F '\t' '$1 == "mAP" { print $2 }')
near "$m" "$(ref map_exact)" 1e-4 && ok || bad "exact-similarity mAP $m, numpy $(ref map_exact)"
check "explicit db" slem-encode -c "$T/rbf.slem" -o "$T/kdb.fvecs" "$D/database.fvecs"
[ "$(wc -c <"$T/kdb.fvecs")" = $((1000 * (4 + 4 * 256))) ] && ok || bad "explicit descriptors are not r = 256 wide"
slem-encode -c "$T/rbf.slem" "$D/queries.fvecs" | slem-match -k 1000 -d "$T/kdb.fvecs" >"$T/explicit.tsv"
# shellcheck disable=SC2086
m=$(slem-eval $LABELS "$T/explicit.tsv" | awk -F '\t' '$1 == "mAP" { print $2 }')
near "$m" "$(ref map_explicit)" 1e-4 && ok || bad "explicit-descriptor mAP $m, numpy $(ref map_explicit)"
# explicit descriptors have norm <= 1
slem-encode -c "$T/rbf.slem" -F text "$D/queries.fvecs" |
  awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i * $i; if (s > 1.000001) exit 1 }' && ok || bad "explicit norm > 1"

# ---- the linear kernel equals linear SLEM (the golden problem, d = 12) ----
check "linear cache" slem-negstats -q --lambda 0.05 -o "$T/lin.slem" "$G/neg.fvecs"
check "linear-kernel cache" slem-negstats -q --kernel linear --rank 12 --lambda 0.05 -o "$T/klin.slem" "$G/neg.fvecs"
slem-encode -c "$T/lin.slem" --precision double -o "$T/db.fvecs" "$G/db.fvecs"
slem-encode -c "$T/lin.slem" --precision double "$G/pos.fvecs" | slem-match -k 20 -d "$T/db.fvecs" >"$T/lin.tsv"
check "linear-kernel match" slem-match -c "$T/klin.slem" -k 20 -d "$G/db.fvecs" -o "$T/klin.tsv" "$G/pos.fvecs"
compare_ranking "$T/klin.tsv" "$T/lin.tsv" 1e-6 >"$T/diff" && ok || bad "linear kernel differs from linear SLEM: $(cat "$T/diff")"

# ---- every kernel runs end to end on the (non-negative) digits ----
for k in linear poly:gamma=0.001,c=1,p=2 rbf:gamma=0.0005 chi2 intersection hellinger; do
  if slem-negstats -q --kernel "$k" --rank 64 --lambda-rel 100 -o "$T/k.slem" "$D/negatives.fvecs" 2>"$T/err" &&
     slem-match -c "$T/k.slem" -k 10 -d "$D/database.fvecs" -o "$T/k.tsv" "$D/queries.fvecs" 2>>"$T/err" &&
     [ "$(wc -l <"$T/k.tsv")" = 1000 ]; then ok; else bad "kernel $k: $(cat "$T/err")"; fi
done

# ---- slem-tune over kernels ----
check "slem-tune -K" "$TOP/tools/slem-tune" -K "rbf:g=1 linear" -g "10 1000" -r 32 -o "$T/best.slem" \
  -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
[ "$(grep -c '^rbf:g=1 \|^linear ' "$T/out")" = 4 ] && [ "$(grep -c '  \*$' "$T/out")" = 1 ] && ok ||
  bad "slem-tune -K table: $(cat "$T/out")"
best=$(awk '/  \*$/ { print $4 }' "$T/out")
max=$(awk 'NR > 2 { if ($4 > m) m = $4 } END { print m }' "$T/out")
[ "$best" = "$max" ] && slem-negstats --info "$T/best.slem" | grep -q '"r":.*32' && ok || bad "slem-tune -K best $best, max $max"
check "slem-tune --factor --couple" "$TOP/tools/slem-tune" -K "rbf:g=1" --factor "icd kpca" --couple -g "10 1000" -r 32 \
  -o "$T/best.slem" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
[ "$(grep -c '^rbf:g=1,icd ' "$T/out")" = 2 ] && [ "$(grep -c '^rbf:g=1,kpca,couple ' "$T/out")" = 2 ] &&
  [ "$(awk 'NR > 2' "$T/out" | wc -l)" = 8 ] && [ "$(grep -c '  \*$' "$T/out")" = 1 ] && ok ||
  bad "slem-tune --factor table: $(cat "$T/out")"
f=$(awk '/  \*$/ { split($1, a, ","); print a[2] }' "$T/out")
slem-negstats --info "$T/best.slem" | grep -q "\"factor\":.*\"$f\"" && ok || bad "slem-tune --factor kept another cache than $f"

# ---- the authors' variants: factors, coupling, exp and quad (formulas: check_kernel.c) ----
for f in icd kpca full; do
  if [ $f = full ]; then rk=""; else rk="--rank 48"; fi
  # shellcheck disable=SC2086
  check "factor $f" slem-negstats -q --kernel exp:g=1 --factor $f $rk --couple --lambda-rel 10 -o "$T/f.$f.slem" "$D/negatives.fvecs"
  slem-negstats --info "$T/f.$f.slem" >"$T/info"
  grep -q "\"factor\":.*\"$f\"" "$T/info" && grep -q '"couple":.*true' "$T/info" &&
    grep -q '"kernel":.*"exp:gamma=' "$T/info" && ok || bad "--info of a $f cache: $(head -c 400 "$T/info")"
  check "coupled match $f" slem-match -c "$T/f.$f.slem" --couple -k 50 -d "$D/database.fvecs" -o "$T/c1.tsv" "$D/queries.fvecs"
  check "plain match $f" slem-match -c "$T/f.$f.slem" -k 50 -d "$D/database.fvecs" -o "$T/c0.tsv" "$D/queries.fvecs"
  # the coupled ranking depends neither on the threads nor on how queries and rows are cut
  check "coupled match $f, cut" slem-match -t 1 --query-block 7 --tile-rows 33 -c "$T/f.$f.slem" --couple -k 50 -d "$D/database.fvecs" -o "$T/c2.tsv" "$D/queries.fvecs"
  cmp -s "$T/c1.tsv" "$T/c2.tsv" && ok || bad "$f: the coupled ranking changes with threads and blocks"
  # the projections of the tiles kept for the next blocks of queries (all, some, none of
  # them: budgets of 4 MB, 1 MB, 0) are those the tile would get again
  for m in 4000000 1000000 0; do
    SLEM_MATCH_MEMORY=$m slem-match --query-block 7 --tile-rows 33 -c "$T/f.$f.slem" --couple -k 50 -d "$D/database.fvecs" -o "$T/c3.tsv" "$D/queries.fvecs"
    cmp -s "$T/c1.tsv" "$T/c3.tsv" && ok || bad "$f: another coupled ranking with SLEM_MATCH_MEMORY=$m"
  done
  if [ $f = full ]; then
    # every negative in the span: nothing to couple
    compare_ranking "$T/c1.tsv" "$T/c0.tsv" 1e-6 >"$T/diff" && ok || bad "full: coupling changed the ranking: $(head -3 "$T/diff")"
  else
    cmp -s "$T/c1.tsv" "$T/c0.tsv" && bad "$f: coupling changed nothing" || ok
  fi
  # the database projected once (slem-encode --projections): the same rankings, byte for
  # byte, whatever the threads and the cuts
  check "projections $f" slem-encode -q -c "$T/f.$f.slem" --couple --projections -o "$T/p1.slem" "$D/database.fvecs"
  check "plain projections $f" slem-encode -q -c "$T/f.$f.slem" --projections -o "$T/p0.slem" "$D/database.fvecs"
  check "coupled match of projections $f" slem-match -c "$T/f.$f.slem" --couple -k 50 -d "$T/p1.slem" -o "$T/c4.tsv" "$D/queries.fvecs"
  cmp -s "$T/c1.tsv" "$T/c4.tsv" && ok || bad "$f: the coupled ranking of the projections differs"
  check "plain match of projections $f" slem-match -c "$T/f.$f.slem" -k 50 -d "$T/p0.slem" -o "$T/c5.tsv" "$D/queries.fvecs"
  cmp -s "$T/c0.tsv" "$T/c5.tsv" && ok || bad "$f: the ranking of the projections differs"
  SLEM_MATCH_MEMORY=0 slem-match -t 1 --query-block 7 --tile-rows 33 -c "$T/f.$f.slem" --couple -k 50 -d "$T/p1.slem" -o "$T/c6.tsv" "$D/queries.fvecs"
  cmp -s "$T/c1.tsv" "$T/c6.tsv" && ok || bad "$f: the coupled ranking of the projections changes with threads and blocks"
  check "coupled encode $f" slem-encode -c "$T/f.$f.slem" --couple -o "$T/e1.slem" "$D/database.fvecs"
  check "plain encode $f" slem-encode -c "$T/f.$f.slem" -o "$T/e0.slem" "$D/database.fvecs"
done
# a kernel cache does not depend on the thread count (the same payload)
for f in icd kpca; do
  slem-negstats -q -t 1 --kernel rbf:g=1 --factor $f --rank 48 -o "$T/kp1.slem" "$D/negatives.fvecs"
  slem-negstats -q -t 2 --kernel rbf:g=1 --factor $f --rank 48 -o "$T/kp2.slem" "$D/negatives.fvecs"
  fp1=$(slem-negstats --info "$T/kp1.slem" | grep fingerprint) fp2=$(slem-negstats --info "$T/kp2.slem" | grep fingerprint)
  [ -n "$fp1" ] && [ "$fp1" = "$fp2" ] && ok || bad "$f factor differs with the thread count: $fp1 / $fp2"
done
# the Cholesky shares chunks of 2048 rows among the threads: 4791 negatives (the digits,
# three times over) make three, and the cache is the same for 1, 2 and 3 threads
for i in 1 2 3; do cat "$D/database.fvecs" "$D/negatives.fvecs"; done >"$T/big.fvecs"
for t in 1 2 3; do
  slem-negstats -q -t $t --kernel rbf:g=1 --rank 48 -o "$T/big$t.slem" "$T/big.fvecs"
done
fp1=$(slem-negstats --info "$T/big1.slem" | grep fingerprint)
for t in 2 3; do
  fp=$(slem-negstats --info "$T/big$t.slem" | grep fingerprint)
  [ -n "$fp1" ] && [ "$fp1" = "$fp" ] && ok || bad "icd over 3 chunks differs with -t $t: $fp1 / $fp"
done
# ---- projections: shards, files, pipes and what is refused ----
check "projections rbf" slem-encode -q -c "$T/rbf.slem" --projections -o "$T/p.slem" "$D/database.fvecs"
grep -a -q '"rows":"kernel-projections"' "$T/p.slem" && grep -a -q '"dtype":"<f8"' "$T/p.slem" &&
  grep -a -q '"kernel_projections":{"d":64,"r":256,"couple":false}' "$T/p.slem" && ok ||
  bad "the projections' header lacks their kind, dtype or layout"
n=$(($(wc -c <"$D/database.fvecs") / (4 + 4 * 64)))
[ "$(wc -c <"$T/p.slem")" = $((65536 + n * (64 + 2 * 256 + 1) * 8)) ] && ok ||
  bad "projections of $n rows: $(wc -c <"$T/p.slem") bytes"
check "match of projections" slem-match -c "$T/rbf.slem" -k 1000 -d "$T/p.slem" -o "$T/pexact.tsv" "$D/queries.fvecs"
cmp -s "$T/exact.tsv" "$T/pexact.tsv" && ok || bad "the exact ranking of the projections differs from that of the features"
slem-encode -q -c "$T/rbf.slem" --projections --shard 0/2 -o "$T/ps0.slem" "$D/database.fvecs"
slem-encode -q -c "$T/rbf.slem" --projections --shard 1/2 -o "$T/ps1.slem" "$D/database.fvecs"
check "match of two projected shards" slem-match -c "$T/rbf.slem" -k 1000 -d "$T/ps0.slem" -d "$T/ps1.slem" -o "$T/pexact2.tsv" "$D/queries.fvecs"
cmp -s "$T/exact.tsv" "$T/pexact2.tsv" && ok || bad "the projections of two shards rank otherwise"
slem-encode -q -c "$T/rbf.slem" --projections <"$D/database.fvecs" | slem-match -c "$T/rbf.slem" -k 1000 -d - "$D/queries.fvecs" >"$T/pexact3.tsv"
cmp -s "$T/exact.tsv" "$T/pexact3.tsv" && ok || bad "the projections through a pipe rank otherwise"
expect_fail "projections of another cache" 1 "kernel projections of the cache" "$T/o.tsv" slem-match -c "$T/f.icd.slem" -d "$T/p.slem" -o "$T/o.tsv" "$D/queries.fvecs"
expect_fail "projections without the coupling" 1 "and --couple is given" "$T/o.tsv" slem-match -c "$T/f.full.slem" --couple -d "$T/p0.slem" -o "$T/o.tsv" "$D/queries.fvecs"
expect_fail "projections and features" 1 "kernel projections and base features in one database" "$T/o.tsv" slem-match -c "$T/rbf.slem" -d "$T/p.slem" -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"
expect_fail "projections as queries" 1 "not as its queries" "$T/o.tsv" slem-match -c "$T/rbf.slem" -d "$D/database.fvecs" -o "$T/o.tsv" "$T/p.slem"
expect_fail "projections without -c" 1 "give their cache with -c CACHE" "$T/o.tsv" slem-match -d "$T/p.slem" -o "$T/o.tsv" "$D/queries.fvecs"
expect_fail "projections read as vectors" 1 "which only slem-match -c CACHE reads" "$T/o.slem" slem-negstats -f slem -o "$T/o.slem" "$T/p.slem"
expect_fail "projections to fvecs" 2 "written to a container" "$T/o.fvecs" slem-encode -c "$T/rbf.slem" --projections -o "$T/o.fvecs" "$D/database.fvecs"
expect_fail "projections of a linear cache" 2 "need a kernel cache" "$T/o.slem" slem-encode -c "$T/lin.slem" --projections -o "$T/o.slem" "$D/database.fvecs"
cp "$T/p.slem" "$T/pc.slem"
printf 'X' | dd of="$T/pc.slem" bs=1 seek=70000 conv=notrunc 2>/dev/null
expect_fail "corrupt projections" 1 "checksum mismatch in the rows" "$T/o.tsv" slem-match -c "$T/rbf.slem" -d "$T/pc.slem" -o "$T/o.tsv" "$D/queries.fvecs"
# an existing output stays as it was when the projections are refused
cp "$T/exact.tsv" "$T/keep.tsv"
slem-match -c "$T/f.icd.slem" -d "$T/p.slem" -o "$T/keep.tsv" "$D/queries.fvecs" 2>/dev/null
cmp -s "$T/exact.tsv" "$T/keep.tsv" && ok || bad "a refused match changed its existing output"

# coupled and plain descriptors of one cache are not comparable: the containers say so
slem-encode -q -c "$T/f.icd.slem" -o "$T/q0.slem" "$D/queries.fvecs"
expect_fail "coupled db, plain queries" 1 "cannot be compared" "$T/o.tsv" slem-match -d "$T/e1.slem" -o "$T/o.tsv" "$T/q0.slem"
# of one cache, the message names the cache and both couplings (it spoke of an older cache,
# and gave the coupling's fingerprint as the cache's)
fpfull=$(slem-negstats --info "$T/f.full.slem" | sed -n 's/.*"fingerprint":[[:space:]]*"\([0-9a-f]*\)".*/\1/p')
slem-encode -q -c "$T/f.full.slem" -o "$T/q0f.slem" "$D/queries.fvecs"
expect_fail "coupled db, plain queries of its cache" 1 "q0f.slem holds descriptors of the cache $fpfull without --couple, but .*e1.slem holds them coupled by --couple (exact): two couplings of one cache cannot be compared; encode both sides with the same --couple" \
  "$T/o.tsv" slem-match -d "$T/e1.slem" -o "$T/o.tsv" "$T/q0f.slem"
expect_fail "coupled db of another cache" 1 "e1.slem with the cache $fpfull, coupled by --couple (exact): they cannot be compared" \
  "$T/o.tsv" slem-match -d "$T/e1.slem" -o "$T/o.tsv" "$T/q0.slem"
# shards of one cache, one coupled: the message names the cache and both couplings (it gave
# the coupling's fingerprint as a cache's)
slem-encode -q -c "$T/f.full.slem" --shard 0/2 -o "$T/sh0.slem" "$D/database.fvecs"
slem-encode -q -c "$T/f.full.slem" --couple --shard 1/2 -o "$T/sh1c.slem" "$D/database.fvecs"
expect_fail "shards of one cache, one coupled" 1 "sh1c.slem: shard 1/2 made with the cache $fpfull, coupled by --couple (exact), but .*sh0.slem (shard 0/2) with the cache $fpfull, without --couple: shards of two encodes" \
  "$T/o.tsv" slem-match -d "$T/sh0.slem" -d "$T/sh1c.slem" -o "$T/o.tsv" "$T/q0f.slem"
check "quad kernel" slem-negstats -q --kernel quad:gamma=0.5 --rank 32 -o "$T/quad.slem" "$D/negatives.fvecs"
check "quad match" slem-match -c "$T/quad.slem" -k 10 -d "$D/database.fvecs" -o "$T/quad.tsv" "$D/queries.fvecs"
expect_fail "bad factor" 2 "'lu' is not icd, kpca or full" "$T/o.slem" slem-negstats --kernel rbf --factor lu -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "factor without kernel" 2 "--factor is for kernel caches" "$T/o.slem" slem-negstats --factor kpca -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "couple without kernel" 2 "--couple is for kernel caches" "$T/o.slem" slem-negstats --couple -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "full with a rank" 2 "no --rank" "$T/o.slem" slem-negstats --kernel rbf --factor full --rank 10 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "encode --couple, cache without" 2 "made without --couple" "$T/o.fvecs" slem-encode --couple -c "$T/rbf.slem" -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "match --couple, cache without" 2 "made without --couple" "$T/o.tsv" slem-match --couple -c "$T/rbf.slem" -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"
expect_fail "encode --couple, linear cache" 2 "needs a kernel cache" "$T/o.fvecs" slem-encode --couple -c "$T/lin.slem" -o "$T/o.fvecs" "$G/pos.fvecs"
expect_fail "match --couple without -c" 2 "give -c CACHE" "$T/o.tsv" slem-match --couple -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"
expect_fail "quad gamma < 0" 2 "gamma must be positive" "$T/o.slem" slem-negstats --kernel quad:gamma=-1 -o "$T/o.slem" "$D/negatives.fvecs"

# ---- errors ----
expect_fail "unknown kernel" 2 "unknown kernel 'sigmoid'" "$T/o.slem" slem-negstats --kernel sigmoid -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "kernel parameter twice" 2 "kernel 'rbf:g=1,g=2': g twice" "$T/o.slem" slem-negstats --kernel rbf:g=1,g=2 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "intersection gamma twice" 2 "gamma twice" "$T/o.slem" slem-negstats --kernel intersection:gamma=0.5,gamma=2 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "bad kernel parameter" 2 "p must be a whole number" "$T/o.slem" slem-negstats --kernel poly:p=0.5 -o "$T/o.slem" "$D/negatives.fvecs"
printf '1 2\n3 -4\n' >"$T/neg.txt"
expect_fail "negative histogram" 1 "neg.txt: record 2: value 2 is negative" "$T/o.slem" slem-negstats --kernel chi2 -o "$T/o.slem" "$T/neg.txt"
expect_fail "kernel with partial" 2 "does not go with --kernel" "$T/o.slem" slem-negstats --partial --kernel linear -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "kernel lambda 0" 1 "lambda" "$T/o.slem" slem-negstats --kernel rbf:gamma=0.001 --lambda 0 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "coupled classifier on a kernel cache" 1 "--classifier with --couple" "$T/o.fvecs" slem-encode --classifier --couple -c "$T/f.icd.slem" -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "match -c linear cache" 1 "-c takes a kernel cache" "$T/o.tsv" slem-match -c "$T/lin.slem" -d "$G/db.fvecs" -o "$T/o.tsv" "$G/pos.fvecs"
expect_fail "match -c with --normalize" 2 "does not go with a kernel cache" - slem-match -n -c "$T/rbf.slem" -d "$D/database.fvecs" "$D/queries.fvecs"
expect_fail "kernel dimension" 1 "dimension 12, but the cache .*rbf.slem has dimension 64" "$T/o.tsv" slem-match -c "$T/rbf.slem" -d "$G/db.fvecs" -o "$T/o.tsv" "$G/pos.fvecs"
cp "$T/rbf.slem" "$T/c.slem"
printf 'X' | dd of="$T/c.slem" bs=1 seek=$(($(wc -c <"$T/c.slem") - 100)) conv=notrunc 2>/dev/null
expect_fail "corrupt kernel cache" 1 "checksum mismatch in the payload" "$T/o.tsv" slem-match -c "$T/c.slem" -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"

# ---- the authors' coupled score (--couple authors) against scripts/gen-authors.py ----
A="$TOP/testdata/authors"
check "authors cache" slem-negstats -q --kernel rbf:gamma=0.001 --factor kpca --rank 32 --lambda 0.01 --couple -o "$T/au.slem" "$D/negatives.fvecs"
check "match --couple authors" slem-match -c "$T/au.slem" --couple authors -k 10 -d "$D/database.fvecs" -o "$T/au1.tsv" "$D/queries.fvecs"
# rankings exactly, scores (float32, %.9g) to 1e-6 of the float64 reference
paste "$A/rbf-kpca-couple-authors.tsv" "$T/au1.tsv" | awk -F'\t' '
  { if ($1 != $5 || $2 != $6 || $3 != $7) bad++; e = $4 - $8; if (e < 0) e = -e; if (e > m) m = e }
  END { exit !(NR == 1000 && bad == 0 && m <= 1e-6) }' && ok ||
  bad "--couple authors differs from scripts/gen-authors.py"
slem-match -c "$T/au.slem" --couple exact -k 10 -d "$D/database.fvecs" -o "$T/au0.tsv" "$D/queries.fvecs"
slem-match -c "$T/au.slem" --couple -k 10 -d "$D/database.fvecs" -o "$T/au00.tsv" "$D/queries.fvecs"
cmp -s "$T/au0.tsv" "$T/au00.tsv" && ! cmp -s "$T/au0.tsv" "$T/au1.tsv" && ok ||
  bad "--couple exact is not the default, or is the authors' score"
check "match --couple=authors, cut" slem-match -t 1 --query-block 7 --tile-rows 33 -c "$T/au.slem" --couple=authors -k 10 -d "$D/database.fvecs" -o "$T/au2.tsv" "$D/queries.fvecs"
cmp -s "$T/au1.tsv" "$T/au2.tsv" && ok || bad "the authors' coupled ranking changes with threads and blocks"
SLEM_MATCH_MEMORY=0 slem-match -t 2 --query-block 7 --tile-rows 33 -c "$T/au.slem" --couple authors -k 10 -d "$D/database.fvecs" -o "$T/au3.tsv" "$D/queries.fvecs"
cmp -s "$T/au1.tsv" "$T/au3.tsv" && ok || bad "the authors' coupled ranking changes with the tiles kept"
slem-encode -q -c "$T/au.slem" --couple authors --projections --shard 0/2 -o "$T/aps0.slem" "$D/database.fvecs"
slem-encode -q -c "$T/au.slem" --couple authors --projections --shard 1/2 -o "$T/aps1.slem" "$D/database.fvecs"
grep -a -q '"couple":true,"coupling":"authors"' "$T/aps0.slem" && ok || bad "the authors' projections do not say their coupling"
check "authors' projections, two shards" slem-match -t 1 -c "$T/au.slem" --couple authors -k 10 -d "$T/aps0.slem" -d "$T/aps1.slem" -o "$T/au4.tsv" "$D/queries.fvecs"
cmp -s "$T/au1.tsv" "$T/au4.tsv" && ok || bad "the authors' projections of two shards rank otherwise"
slem-encode -q -c "$T/au.slem" --couple authors --projections <"$D/database.fvecs" | slem-match -c "$T/au.slem" --couple authors -k 10 -d - "$D/queries.fvecs" >"$T/au5.tsv"
cmp -s "$T/au1.tsv" "$T/au5.tsv" && ok || bad "the authors' projections through a pipe rank otherwise"
slem-match -c "$T/au.slem" --couple authors --shard 0/2 -k 10 -d "$D/database.fvecs" -o "$T/au6a.tsv" "$D/queries.fvecs" 2>/dev/null &&
  slem-match -c "$T/au.slem" --couple authors --shard 1/2 -k 10 -d "$D/database.fvecs" -o "$T/au6b.tsv" "$D/queries.fvecs" 2>/dev/null &&
  slem-merge -k 10 -o "$T/au6.tsv" "$T/au6a.tsv" "$T/au6b.tsv" 2>/dev/null && cmp -s "$T/au1.tsv" "$T/au6.tsv" && ok ||
  bad "the authors' coupled ranking of two merged shards differs"
expect_fail "authors' projections, exact coupling" 1 "coupled (authors)" "$T/o.tsv" slem-match -c "$T/au.slem" --couple -d "$T/aps0.slem" -d "$T/aps1.slem" -o "$T/o.tsv" "$D/queries.fvecs"
slem-encode -q -c "$T/au.slem" --couple authors -o "$T/aue.slem" "$D/database.fvecs"
slem-encode -q -c "$T/au.slem" --couple -o "$T/auq.slem" "$D/queries.fvecs"
expect_fail "authors' db, exact queries" 1 "auq.slem holds descriptors of the cache [0-9a-f]* coupled by --couple (exact), but .*aue.slem holds them coupled by --couple=authors: two couplings of one cache cannot be compared" \
  "$T/o.tsv" slem-match -d "$T/aue.slem" -o "$T/o.tsv" "$T/auq.slem"
expect_fail "unknown coupling" 2 "unknown coupling 'dense'" "$T/o.tsv" slem-match -c "$T/au.slem" --couple=dense -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"

check "slem-tune --couplings" "$TOP/tools/slem-tune" -K "rbf:g=1" --factor kpca --couplings "exact authors" -g 10 -r 32 \
  -o "$T/best.slem" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
[ "$(grep -c '^rbf:g=1,kpca,couple ' "$T/out")" = 1 ] && [ "$(grep -c '^rbf:g=1,kpca,couple-authors ' "$T/out")" = 1 ] &&
  [ "$(awk 'NR > 2' "$T/out" | wc -l)" = 3 ] && ok || bad "slem-tune --couplings table: $(cat "$T/out")"
check "slem-tune -K --depth" "$TOP/tools/slem-tune" -K "rbf:g=1" --depth "1 2" -g "10 1000" -r 32 \
  -o "$T/best.slem" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
# two plain rows scored both ways, two depth=2 rows by their descriptors alone ("-" exact)
[ "$(awk '$1 == "rbf:g=1" && $4 ~ /^0[.]/ && $5 ~ /^0[.]/' "$T/out" | wc -l)" = 2 ] &&
  [ "$(awk '$1 == "rbf:g=1,depth=2" && $4 == "-" && $5 ~ /^0[.]/' "$T/out" | wc -l)" = 2 ] &&
  ok || bad "slem-tune -K --depth table: $(cat "$T/out")"
# the kept cache is the starred row's: kernel-recursive exactly when a depth=2 row won
if grep -q '^rbf:g=1,depth=2 .*[*]$' "$T/out"; then want=1; else want=0; fi
[ "$(slem-negstats --info "$T/best.slem" | grep -c kernel-recursive)" = "$want" ] && ok ||
  bad "slem-tune -K --depth kept another cache than the starred row's"
expect_fail "slem-tune unknown coupling" 2 "unknown coupling 'dense'" "$T/o.slem" "$TOP/tools/slem-tune" -K "rbf:g=1" --couplings dense \
  -o "$T/o.slem" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels"

# ---- kernel exemplar classifiers (new_full_encoder.m's kernel branch) against scripts/gen-authors.py ----
check "kernel classifiers" slem-encode -q -c "$T/au.slem" --classifier --theta 2 -o "$T/kq.fvecs" "$D/queries.fvecs"
check "kernel coordinates" slem-encode -q -c "$T/au.slem" --coordinates -o "$T/kdb.fvecs" "$D/database.fvecs"
check "affine match of kernel classifiers" slem-match --affine -k 10 -d "$T/kdb.fvecs" -o "$T/kc.tsv" "$T/kq.fvecs"
paste "$A/rbf-kpca-classifier-theta2.tsv" "$T/kc.tsv" | awk -F'\t' '
  { if ($1 != $5 || $2 != $6 || $3 != $7) bad++; e = $4 - $8; if (e < 0) e = -e; if (e > m) m = e }
  END { exit !(NR == 1000 && bad == 0 && m <= 1e-6) }' && ok ||
  bad "kernel classifiers differ from scripts/gen-authors.py"
slem-encode -q -t 1 --block 7 -c "$T/au.slem" --classifier --theta 2 -o "$T/kq1.fvecs" "$D/queries.fvecs"
cmp -s "$T/kq.fvecs" "$T/kq1.fvecs" && ok || bad "kernel classifiers change with threads and blocks"
slem-encode -q -t 2 -c "$T/au.slem" --coordinates --shard 0/2 -o "$T/kdb0.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/au.slem" --coordinates --shard 1/2 -o "$T/kdb1.fvecs" "$D/database.fvecs"
cat "$T/kdb0.fvecs" "$T/kdb1.fvecs" | cmp -s - "$T/kdb.fvecs" && ok || bad "kernel coordinates change with shards"
slem-encode -q -c "$T/au.slem" --coordinates -o "$T/kval.fvecs" "$D/validation.fvecs"
check "calibrated kernel classifiers" slem-calibrate -q -c "$T/kq.fvecs" -e "$D/queries.labels" -p "$T/kval.fvecs" -l "$D/validation.labels" -o "$T/kcal.txt"
check "match of calibrated kernel classifiers" slem-match --calibration "$T/kcal.txt" -k 10 -d "$T/kdb.fvecs" -o "$T/kcr.tsv" "$T/kq.fvecs"
[ "$(wc -l <"$T/kcal.txt")" = 100 ] && [ "$(wc -l <"$T/kcr.tsv")" = 1000 ] && ok || bad "kernel calibration: $(wc -l <"$T/kcal.txt") lines"
expect_fail "coordinates of a linear cache" 2 "--coordinates need a kernel cache" "$T/o.fvecs" slem-encode --coordinates -c "$T/lin.slem" -o "$T/o.fvecs" "$G/pos.fvecs"
expect_fail "coordinates and classifier" 2 "--coordinates go with none of" "$T/o.fvecs" slem-encode --coordinates --classifier -c "$T/au.slem" -o "$T/o.fvecs" "$D/queries.fvecs"

# ---- intersection:gamma=G (kernel_matrix.m's 'inter'): the plain intersection of x^G ----
check "intersection gamma 2" slem-negstats -q --kernel intersection:gamma=2 --rank 32 --lambda-rel 10 -o "$T/ig.slem" "$D/negatives.fvecs"
slem-negstats --info "$T/ig.slem" | grep -q '"kernel":.*"intersection:gamma=2"' && ok || bad "intersection:gamma=2 lost its gamma"
check "intersection of the squares" slem-negstats -q --kernel intersection --rank 32 --lambda-rel 10 -o "$T/i1.slem" "$A/negatives-squared.fvecs"
slem-match -c "$T/ig.slem" -k 10 -d "$D/queries.fvecs" -o "$T/ig.tsv" "$D/queries.fvecs"
slem-match -c "$T/i1.slem" -k 10 -d "$A/queries-squared.fvecs" -o "$T/i1.tsv" "$A/queries-squared.fvecs"
[ -s "$T/ig.tsv" ] && cmp -s "$T/ig.tsv" "$T/i1.tsv" && ok || bad "intersection:gamma=2 is not the intersection of the squares"
expect_fail "intersection gamma 0" 2 "gamma must be positive" "$T/o.slem" slem-negstats --kernel intersection:gamma=0 -o "$T/o.slem" "$D/negatives.fvecs"

finish cli-kernel
