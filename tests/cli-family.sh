#!/bin/sh
# CLI tests of the SLEM family variants against numpy references (testdata/family,
# scripts/gen-family.py): several positives per exemplar (slem-encode --groups), and the
# usage errors of invalid combinations. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
F=$TOP/testdata/family
D=$TOP/testdata/digits

# max_cos_gap A B: the largest 1 - cos over the rows of two text files of equal width
max_cos_gap() {
  paste -d ' ' "$1" "$2" | awk '{
    n = NF / 2; ab = aa = bb = 0
    for (j = 1; j <= n; j++) { a = $j; b = $(n + j); ab += a * b; aa += a * a; bb += b * b }
    g = 1 - ab / sqrt(aa * bb); if (g > m) m = g } END { if (NR) printf "%.3g\n", m }'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
same_rows() { [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ] && [ "$(wc -l <"$1")" -gt 0 ]; }

# ---- several positives per exemplar ----
check "negstats" slem-negstats -q -l 0.05 -o "$T/neg.slem" "$F/neg.fvecs"
check "groups" slem-encode -q -c "$T/neg.slem" --groups "$F/pos.groups" -F text -o "$T/g.txt" "$F/pos.fvecs"
g=$(max_cos_gap "$T/g.txt" "$F/groups.txt")
same_rows "$T/g.txt" "$F/groups.txt" && le "$g" 1e-6 && ok || bad "groups: 1 - cos to numpy $g"
# from stdin, with a block smaller than the input and than the number of groups
slem-encode -q -b 2 -c "$T/neg.slem" --groups "$F/pos.groups" -F text - <"$F/pos.fvecs" >"$T/g2.txt"
cmp -s "$T/g.txt" "$T/g2.txt" && ok || bad "groups from stdin in blocks of 2 differ"
# one group per row is plain encoding
awk '{ print "r" NR }' "$F/pos.groups" >"$T/each.groups"
slem-encode -q -c "$T/neg.slem" --groups "$T/each.groups" -o "$T/each.fvecs" "$F/pos.fvecs"
slem-encode -q -c "$T/neg.slem" -o "$T/plain.fvecs" "$F/pos.fvecs"
cmp -s "$T/each.fvecs" "$T/plain.fvecs" && ok || bad "one row per group differs from plain encoding"
# classifiers: d + 1 values per group
slem-encode -q -c "$T/neg.slem" --groups "$F/pos.groups" --classifier --theta 2 -F text -o "$T/c.txt" "$F/pos.fvecs"
awk 'NF != 7 { exit 1 } END { exit NR != 9 }' "$T/c.txt" && ok || bad "classifier rows: $(head -2 "$T/c.txt")"

# ---- errors ----
head -n 5 "$F/pos.groups" >"$T/short.groups"
expect_fail "groups file too short" 1 "names only 5 rows" "$T/o.fvecs" \
  slem-encode -q -c "$T/neg.slem" --groups "$T/short.groups" -o "$T/o.fvecs" "$F/pos.fvecs"
{ cat "$F/pos.groups"; echo extra; } >"$T/long.groups"
expect_fail "groups file too long" 1 "names 26 rows" "$T/o.fvecs" \
  slem-encode -q -c "$T/neg.slem" --groups "$T/long.groups" -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "groups file missing" 1 "nonexistent.groups" "$T/o.fvecs" \
  slem-encode -q -c "$T/neg.slem" --groups "$T/nonexistent.groups" -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "groups with a shard" 2 "not with --shard" "$T/o.fvecs" \
  slem-encode -q -c "$T/neg.slem" --groups "$F/pos.groups" --shard 0/2 -o "$T/o.fvecs" "$F/pos.fvecs"
check "kernel cache" slem-negstats -q -K rbf --rank 8 -o "$T/k.slem" "$F/neg.fvecs"
expect_fail "groups with a kernel cache" 2 "needs a linear cache" "$T/o.fvecs" \
  slem-encode -q -c "$T/k.slem" --groups "$F/pos.groups" -o "$T/o.fvecs" "$F/pos.fvecs"

# ---- the whitening family ----
check "negstats --eigen" slem-negstats -q -l 0.05 --eigen -o "$T/eig.slem" "$F/neg.fvecs"
# the linear cache's own descriptors are unchanged by the extra sections
slem-encode -q -c "$T/eig.slem" -o "$T/eig-plain.fvecs" "$F/pos.fvecs"
cmp -s "$T/eig-plain.fvecs" "$T/plain.fvecs" && ok || bad "--eigen changed the plain descriptors"
i=0
for a in -1 -0.5 0 0.3; do
  i=$((i + 1))
  slem-encode -q -c "$T/eig.slem" --alpha "$a" -F text -o "$T/w$i.txt" "$F/pos.fvecs"
done
slem-encode -q -c "$T/eig.slem" --alpha -1 -F text --precision double -o "$T/am1.txt" "$F/pos.fvecs"
slem-encode -q -c "$T/neg.slem" -F text --precision double -o "$T/slem.txt" "$F/pos.fvecs"
g=$(max_cos_gap "$T/am1.txt" "$T/slem.txt")
le "${g:-0}" 1e-9 && ok || bad "--alpha -1 is not SLEM: 1 - cos $g"
# alpha 0 is centring: x - mu, normalised
slem-encode -q -c "$T/eig.slem" --alpha 0 -F text -o "$T/a0.txt" "$F/pos.fvecs"
g=$(max_cos_gap "$T/w3.txt" "$T/a0.txt")
le "${g:-0}" 1e-12 && ok || bad "--alpha 0 differs between runs"
g=$(max_cos_gap "$T/w1.txt" "$F/whiten-m1.txt")
le "${g:-0}" 1e-6 && ok || bad "--alpha -1: 1 - cos to numpy $g"
g=$(max_cos_gap "$T/w2.txt" "$F/whiten-m05.txt")
le "${g:-0}" 1e-6 && ok || bad "--alpha -0.5: 1 - cos to numpy $g"
g=$(max_cos_gap "$T/w4.txt" "$F/whiten-p03.txt")
le "${g:-0}" 1e-6 && ok || bad "--alpha 0.3: 1 - cos to numpy $g"

# ---- PCA-reduced SLEM ----
check "negstats --pca" slem-negstats -q -r 0.5 --pca 3 -o "$T/pca.slem" "$F/neg.fvecs"
slem-encode -q -c "$T/pca.slem" -F text -o "$T/pca.txt" "$F/pos.fvecs"
g=$(max_cos_gap "$T/pca.txt" "$F/pca-r3.txt")
same_rows "$T/pca.txt" "$F/pca-r3.txt" && le "${g:-0}" 1e-6 && ok || bad "--pca 3: 1 - cos to numpy $g"
awk 'NF != 3 { exit 1 }' "$T/pca.txt" && ok || bad "--pca 3 rows are not 3 values wide"
kept=$(slem-negstats --info "$T/pca.slem" | awk -F'[:,]' '/variance_kept/ { gsub(/[ \t]/, "", $2); print $2 }')
awk -v a="$kept" -v b="$(cat "$F/pca-r3.kept")" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-12 && d > -1e-12) }' &&
  ok || bad "variance_kept $kept, numpy $(cat "$F/pca-r3.kept")"

# ---- recursive SLEM ----
for k in 2 3; do
  check "negstats --depth $k" slem-negstats -q --depth "$k" -r 0.5 -o "$T/rec$k.slem" "$F/neg.fvecs"
  slem-encode -q -c "$T/rec$k.slem" -F text -o "$T/rec$k.txt" "$F/pos.fvecs"
  g=$(max_cos_gap "$T/rec$k.txt" "$F/rec-d$k.txt")
  same_rows "$T/rec$k.txt" "$F/rec-d$k.txt" && le "${g:-0}" 1e-6 && ok || bad "--depth $k: 1 - cos to numpy $g"
done
slem-negstats --info "$T/rec3.slem" | grep -q '"depth":[[:space:]]*3' && ok || bad "--info shows no depth 3"
slem-negstats -q --depth 1 -r 0.5 -o "$T/rec1.slem" "$F/neg.fvecs"
slem-negstats -q -r 0.5 -o "$T/lin05.slem" "$F/neg.fvecs"
slem-encode -q -c "$T/rec1.slem" -o "$T/rec1.fvecs" "$F/pos.fvecs"
slem-encode -q -c "$T/lin05.slem" -o "$T/lin05.fvecs" "$F/pos.fvecs"
cmp -s "$T/rec1.fvecs" "$T/lin05.fvecs" && ok || bad "--depth 1 differs from the default"
# groups through a recursive cache: one row per group
slem-encode -q -c "$T/rec2.slem" --groups "$F/pos.groups" -F text -o "$T/recg.txt" "$F/pos.fvecs"
[ "$(wc -l <"$T/recg.txt")" = 9 ] && ok || bad "groups through a recursive cache"
expect_fail "--depth 0" 2 "depth" "$T/o.slem" slem-negstats -q --depth 0 -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--depth with --partial" 2 "does not merge shards" "$T/o.slem" \
  slem-negstats -q --depth 2 --partial -o "$T/o.slem" "$F/neg.fvecs"
slem-negstats -q --partial -o "$T/part.slem" "$F/neg.fvecs"
expect_fail "--depth with a partial cache" 1 "needs the negatives themselves" "$T/o.slem" \
  slem-negstats -q --depth 2 -o "$T/o.slem" "$T/part.slem"
expect_fail "--depth with --lambda" 2 "not an absolute --lambda" "$T/o.slem" \
  slem-negstats -q --depth 2 -l 1 -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--depth from stdin" 2 "not from stdin" "$T/o.slem" \
  slem-negstats -q --depth 2 -o "$T/o.slem" - <"$F/neg.fvecs"
expect_fail "--depth with --eigen" 2 "linear or kernel SLEM" "$T/o.slem" \
  slem-negstats -q --depth 2 --eigen -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--classifier with a recursive cache" 2 "unit descriptors only" "$T/o.fvecs" \
  slem-encode -q -c "$T/rec2.slem" --classifier -o "$T/o.fvecs" "$F/pos.fvecs"

# ---- invalid combinations ----
expect_fail "--alpha with a kernel cache" 2 "kernel cache" "$T/o.fvecs" \
  slem-encode -q -c "$T/k.slem" --alpha -0.5 -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "--alpha without --eigen" 2 "slem-negstats --eigen" "$T/o.fvecs" \
  slem-encode -q -c "$T/neg.slem" --alpha -0.5 -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "--alpha with --classifier" 2 "drop --classifier" "$T/o.fvecs" \
  slem-encode -q -c "$T/eig.slem" --alpha -1 --classifier -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "--alpha not a number" 2 "alpha" "$T/o.fvecs" \
  slem-encode -q -c "$T/eig.slem" --alpha x -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "--classifier with a pca cache" 2 "PCA-reduced" "$T/o.fvecs" \
  slem-encode -q -c "$T/pca.slem" --classifier -o "$T/o.fvecs" "$F/pos.fvecs"
expect_fail "--pca beyond d" 2 "more than the dimension 6" "$T/o.slem" \
  slem-negstats -q --pca 7 -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--pca 0" 2 "pca" "$T/o.slem" slem-negstats -q --pca 0 -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--pca with --kernel" 2 "linear caches" "$T/o.slem" \
  slem-negstats -q --pca 3 -K rbf -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--eigen with --partial" 2 "linear caches" "$T/o.slem" \
  slem-negstats -q --eigen --partial -o "$T/o.slem" "$F/neg.fvecs"
expect_fail "--eigen with --pca" 2 "not both" "$T/o.slem" \
  slem-negstats -q --eigen --pca 2 -o "$T/o.slem" "$F/neg.fvecs"
# a pca cache is refused where a full one is needed
expect_fail "pca cache in slem-match -c" 1 "kernel cache" - \
  slem-match -c "$T/pca.slem" -d "$F/pos.fvecs" "$F/pos.fvecs"

# ---- diagonal SLEM (--diagonal, lib/encode/var_diagonal.c; scripts/gen-diagonal.py) ----
# max_abs_gap A B: the largest entry difference of two text files of equal shape
max_abs_gap() {
  paste -d ' ' "$1" "$2" | awk '{ n = NF / 2
    for (j = 1; j <= n; j++) { e = $j - $(n + j); if (e < 0) e = -e; if (e > m) m = e } }
    END { if (NR) printf "%.3g\n", m }'
}
for v in rel1:-r:1 l0.5:-l:0.5; do
  vn=${v%%:*} opt=$(echo "$v" | cut -d: -f2) val=${v##*:}
  check "diagonal $vn" slem-negstats -q --diagonal "$opt" "$val" -o "$T/dg-$vn.slem" "$D/negatives.fvecs"
  slem-encode -q -c "$T/dg-$vn.slem" -F text -o "$T/dg-$vn.txt" "$D/queries.fvecs"
  g=$(max_abs_gap "$T/dg-$vn.txt" "$F/diagonal-$vn.txt")
  same_rows "$T/dg-$vn.txt" "$F/diagonal-$vn.txt" && le "$g" 1e-6 && ok ||
    bad "diagonal $vn: largest gap to numpy $g"
  # the lambda the cache records is numpy's
  l=$(slem-negstats --info "$T/dg-$vn.slem" | sed -n 's/^[[:space:]]*"lambda":[[:space:]]*\([^,]*\),*$/\1/p')
  w=$(awk -v n="$vn" '$1 == n { print $2 }' "$F/diagonal-lambda.txt")
  awk -v a="$l" -v b="$w" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-12 * b) }' && ok ||
    bad "diagonal $vn: lambda $l, numpy's $w"
done
# the same bytes at -t 1 and -t 2, for a row alone, from a pipe, and from merged shards (one
# provenance time for both caches, SOURCE_DATE_EPOCH, so that runs a second apart compare)
SOURCE_DATE_EPOCH=1700000000 slem-negstats -q -t 1 --diagonal -o "$T/dg1.slem" "$D/negatives.fvecs"
SOURCE_DATE_EPOCH=1700000000 slem-negstats -q -t 2 --diagonal -o "$T/dg2.slem" "$D/negatives.fvecs"
cmp -s "$T/dg1.slem" "$T/dg2.slem" && ok || bad "diagonal: caches of -t 1 and -t 2 differ"
slem-encode -q -t 1 -c "$T/dg1.slem" -o "$T/dq1.fvecs" "$D/queries.fvecs"
slem-encode -q -t 2 -b 7 -c "$T/dg1.slem" -o "$T/dq2.fvecs" "$D/queries.fvecs"
cmp -s "$T/dq1.fvecs" "$T/dq2.fvecs" && ok || bad "diagonal: descriptors of -t 1 and -t 2 -b 7 differ"
head -c 780 "$D/queries.fvecs" | tail -c 260 >"$T/q3.fvecs"  # the third query alone
slem-encode -q -c "$T/dg1.slem" -o "$T/dq3.fvecs" "$T/q3.fvecs"
head -c 780 "$T/dq1.fvecs" | tail -c 260 | cmp -s - "$T/dq3.fvecs" && ok ||
  bad "diagonal: a row alone differs from its place in the file"
slem-encode -q -c "$T/dg1.slem" -F fvecs -o - - <"$D/queries.fvecs" >"$T/dqp.fvecs"
cmp -s "$T/dq1.fvecs" "$T/dqp.fvecs" && ok || bad "diagonal: through pipes the descriptors differ"
for i in 0 1 2; do
  slem-negstats -q --partial --shard "$i/3" -o "$T/dp$i.slem" "$D/negatives.fvecs"
done
slem-negstats -q --diagonal -o "$T/dgm.slem" "$T/dp2.slem" "$T/dp0.slem" "$T/dp1.slem"
fp() { slem-negstats --info "$1" | grep '"fingerprint"'; }
[ -n "$(fp "$T/dg1.slem")" ] && [ "$(fp "$T/dg1.slem")" = "$(fp "$T/dgm.slem")" ] && ok ||
  bad "diagonal: the merged shards' cache holds other numbers than one pass"
slem-negstats --help | grep -q -- '--diagonal' && ok || bad "diagonal: --help lacks --diagonal"
expect_fail "--diagonal with --kernel" 2 "makes a cache of its own" "$T/o.slem" \
  slem-negstats -q --diagonal -K rbf -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--diagonal with --eigen" 2 "makes a cache of its own" "$T/o.slem" \
  slem-negstats -q --eigen --diagonal -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--diagonal, lambda 0 and a constant pixel" 1 "coordinate 1 of the negatives has variance 0" \
  "$T/o.slem" slem-negstats -q --diagonal -l 0 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--classifier with a diagonal cache" 2 "diagonal cache" "$T/o.fvecs" \
  slem-encode -q -c "$T/dg1.slem" --classifier -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "--alpha with a diagonal cache" 2 "diagonal cache" "$T/o.fvecs" \
  slem-encode -q -c "$T/dg1.slem" --alpha -1 -o "$T/o.fvecs" "$D/queries.fvecs"

finish cli-family
