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

finish cli-family
