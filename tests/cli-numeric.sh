#!/bin/sh
# Numeric edges: finite inputs whose products overflow float32 or double are refused with a
# message, status 1 and no output, never written as inf or NaN with status 0. Run from the
# top of the tree.
. "$(dirname "$0")/testlib.sh"
# three fvecs records of 4 values 1e30 (0x7149f2ca): finite, but their inner products are
# 4e60, beyond float32
i=0
while [ $i -lt 3 ]; do
  printf '\004\000\000\000\312\362\111\161\312\362\111\161\312\362\111\161\312\362\111\161'
  i=$((i + 1))
done >"$T/big.fvecs"
expect_fail "scores beyond float32" 1 "big.fvecs: query 1, .*big.fvecs record 1: the score 4e+60 is beyond float32" "$T/o.tsv" slem-match -k 2 -d "$T/big.fvecs" -o "$T/o.tsv" "$T/big.fvecs"
expect_fail "scores beyond float32, jsonl" 1 "beyond float32" "$T/o.jsonl" slem-match -k 2 -F jsonl -d "$T/big.fvecs" -o "$T/o.jsonl" "$T/big.fvecs"
expect_fail "scores beyond float32, npy" 1 "beyond float32" "$T/o.npy" slem-match -k 2 -F npy -d "$T/big.fvecs" -o "$T/o.npy" "$T/big.fvecs"
[ -e "$T/o.I.npy" ] || [ -e "$T/o.D.npy" ] && bad "npy: an output left" || ok
# a fast score of -Inf (the products of record 13 sum below -FLT_MAX) among scores below
# the threshold that records 1 and 2 set (4e37, less a slack of about 1e32) is re-scored,
# not skipped, by the scan that reads eight scores at once
i=0
while [ $i -lt 20 ]; do
  case $i in
  0 | 1) printf '\004\000\000\000\153\013\136\135\153\013\136\135\153\013\136\135\153\013\136\135' ;;
  12) printf '\004\000\000\000\043\307\012\337\043\307\012\337\043\307\012\337\043\307\012\337' ;;
  *) printf '\004\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' ;;
  esac
  i=$((i + 1))
done >"$T/neg.fvecs"
printf '\004\000\000\000\043\307\012\137\043\307\012\137\043\307\012\137\043\307\012\137' >"$T/q1.fvecs"
expect_fail "a fast score of -Inf among finite ones" 1 "q1.fvecs: query 1, .*neg.fvecs record 13: the score -4e+38 is beyond float32" "$T/o.tsv" slem-match -k 2 -d "$T/neg.fvecs" -o "$T/o.tsv" "$T/q1.fvecs"
# an existing output stays as it was
echo keep >"$T/kept.tsv"
slem-match -q -k 2 -d "$T/big.fvecs" -o "$T/kept.tsv" "$T/big.fvecs" 2>/dev/null
[ "$(cat "$T/kept.tsv")" = keep ] && ok || bad "a failed match changed the existing output"
# the same vectors normalised are fine: every cosine is 1
check "cosine of big vectors" slem-match -n -k 2 -d "$T/big.fvecs" -o "$T/cos.tsv" "$T/big.fvecs"
awk -F '\t' '$4 != "1" { bad = 1 } END { exit bad || NR != 6 }' "$T/cos.tsv" && ok || bad "cosine of big vectors: $(cat "$T/cos.tsv")"
# text values beyond float32: the products overflow double too
printf '1e300 1\n-1e300 2\n3 4\n' >"$T/huge.txt"
expect_fail "scores beyond double" 1 "the score inf is beyond float32" "$T/o.tsv" slem-match -k 1 -d "$T/huge.txt" -o "$T/o.tsv" "$T/huge.txt"
expect_fail "statistics beyond double" 1 "covariance of the negatives overflows double" "$T/h.slem" slem-negstats -o "$T/h.slem" "$T/huge.txt"
expect_fail "partial statistics beyond double" 1 "section 'node_scatter' would hold an infinity" "$T/h.slem" slem-negstats --partial -o "$T/h.slem" "$T/huge.txt"
finish cli-numeric
