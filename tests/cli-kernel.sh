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
check "slem-tune -K" "$TOP/scripts/slem-tune" -K "rbf:g=1 linear" -g "10 1000" -r 32 -o "$T/best.slem" \
  -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels"
[ "$(grep -c '^rbf:g=1 \|^linear ' "$T/out")" = 4 ] && [ "$(grep -c '  \*$' "$T/out")" = 1 ] && ok ||
  bad "slem-tune -K table: $(cat "$T/out")"
best=$(awk '/  \*$/ { print $4 }' "$T/out")
max=$(awk 'NR > 2 { if ($4 > m) m = $4 } END { print m }' "$T/out")
[ "$best" = "$max" ] && slem-negstats --info "$T/best.slem" | grep -q '"r":.*32' && ok || bad "slem-tune -K best $best, max $max"

# ---- errors ----
expect_fail "unknown kernel" 2 "unknown kernel 'sigmoid'" "$T/o.slem" slem-negstats --kernel sigmoid -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "bad kernel parameter" 2 "p must be a whole number" "$T/o.slem" slem-negstats --kernel poly:p=0.5 -o "$T/o.slem" "$D/negatives.fvecs"
printf '1 2\n3 -4\n' >"$T/neg.txt"
expect_fail "negative histogram" 1 "neg.txt: record 2: value 2 is negative" "$T/o.slem" slem-negstats --kernel chi2 -o "$T/o.slem" "$T/neg.txt"
expect_fail "kernel with partial" 2 "does not go with --kernel" "$T/o.slem" slem-negstats --partial --kernel linear -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "kernel lambda 0" 1 "lambda" "$T/o.slem" slem-negstats --kernel rbf:gamma=0.001 --lambda 0 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "classifier on a kernel cache" 1 "--classifier needs a linear cache" "$T/o.fvecs" slem-encode --classifier -c "$T/rbf.slem" -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "match -c linear cache" 1 "-c takes a kernel cache" "$T/o.tsv" slem-match -c "$T/lin.slem" -d "$G/db.fvecs" -o "$T/o.tsv" "$G/pos.fvecs"
expect_fail "match -c with --normalize" 2 "does not go with a kernel cache" - slem-match -n -c "$T/rbf.slem" -d "$D/database.fvecs" "$D/queries.fvecs"
expect_fail "kernel dimension" 1 "dimension 12, but the cache .*rbf.slem has dimension 64" "$T/o.tsv" slem-match -c "$T/rbf.slem" -d "$G/db.fvecs" -o "$T/o.tsv" "$G/pos.fvecs"
cp "$T/rbf.slem" "$T/c.slem"
printf 'X' | dd of="$T/c.slem" bs=1 seek=$(($(wc -c <"$T/c.slem") - 100)) conv=notrunc 2>/dev/null
expect_fail "corrupt kernel cache" 1 "checksum mismatch in the payload" "$T/o.tsv" slem-match -c "$T/c.slem" -d "$D/database.fvecs" -o "$T/o.tsv" "$D/queries.fvecs"

finish cli-kernel
