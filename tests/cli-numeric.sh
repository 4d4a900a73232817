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
# text values beyond float32: slem-match reads float32 rows, and 1e300 would be Inf there
printf '1e300 1\n-1e300 2\n3 4\n' >"$T/huge.txt"
expect_fail "values beyond float32" 1 "huge.txt: line 1: value 1 (1e+300) is beyond float32's range" "$T/o.tsv" slem-match -k 1 -d "$T/huge.txt" -o "$T/o.tsv" "$T/huge.txt"
# ... with --normalize too, where the Inf became NaN and every score 0, status 0; from a
# pipe and from float64 npy alike (HDF5 goes through the npy decoder)
printf '1 2 3\n4 5 6\n' >"$T/small.txt"
printf '1e39 1 1\n' >"$T/over.txt"
expect_fail "normalised text query beyond float32" 1 "over.txt: line 1: value 1 (1e+39) is beyond float32's range" "$T/o.tsv" slem-match -n -k 1 -d "$T/small.txt" -o "$T/o.tsv" "$T/over.txt"
expect_fail "normalised text database beyond float32" 1 "over.txt: line 1: value 1 (1e+39) is beyond float32's range" "$T/o.tsv" slem-match -n -k 1 -d "$T/over.txt" -o "$T/o.tsv" "$T/small.txt"
expect_fail "normalised text query beyond float32 on a pipe" 1 "<stdin>: line 1: value 1 (1e+39) is beyond float32's range" "$T/o.tsv" sh -c 'slem-match -n -k 1 -d "$1/small.txt" -o "$1/o.tsv" - <"$1/over.txt"' sh "$T"
# npy float64, (1, 3), values 1e300 (0x7e37e43c8800759c), 1, 1: little- and big-endian
npy_f8() {
  printf '\223NUMPY\001\000\106\000'
  printf "%-69s\\n" "{'descr': '$1f8', 'fortran_order': False, 'shape': (1, 3), }"
}
{ npy_f8 '<'; printf '\234\165\000\210\074\344\067\176\000\000\000\000\000\000\360\077\000\000\000\000\000\000\360\077'; } >"$T/over64.npy"
{ npy_f8 '>'; printf '\077\360\000\000\000\000\000\000\077\360\000\000\000\000\000\000\176\067\344\074\210\000\165\234'; } >"$T/overbe.npy"
expect_fail "normalised float64 npy beyond float32" 1 "over64.npy: record 1: value 1 (1e+300) is beyond float32's range" "$T/o.tsv" slem-match -n -k 1 -d "$T/small.txt" -o "$T/o.tsv" "$T/over64.npy"
expect_fail "normalised big-endian float64 npy beyond float32" 1 "overbe.npy: record 1: value 3 (1e+300) is beyond float32's range" "$T/o.tsv" slem-match -n -k 1 -d "$T/overbe.npy" -o "$T/o.tsv" "$T/small.txt"
# finite positives of magnitude 1e160: delta^T A^-1 delta overflows double. The classifier
# (computed in delta / t, tests/check_numeric.c against an exact reference) has weights
# ~1e-160, below float32's range, that carry its score at the positive: written as zeros it
# would score -1 everywhere, so it is refused naming the record (it was NaN with status 0)
printf '1 2 -1\n0 -3 2\n4 1 1\n-2 0 3\n1 1 0\n3 -2 -2\n' >"$T/neg3.txt"
printf '3 -1 2.5\n1.5e160 -2.25e160 7e159\n' >"$T/huge.txt"
slem-negstats -q --lambda 0.5 -o "$T/neg3.slem" "$T/neg3.txt"
for th in 1 1e-300 1e300; do
  expect_fail "classifier of 1e160, theta $th" 1 "huge.txt: record 2: its classifier is not finite in float32 (value 1): the vector's magnitude is beyond" \
    "$T/o.fvecs" slem-encode -q --classifier --theta "$th" -c "$T/neg3.slem" -o "$T/o.fvecs" "$T/huge.txt"
done
printf 'a\nb\n' >"$T/two.groups"
expect_fail "classifier of a group of 1e160" 1 "huge.txt: record 2: its classifier is not finite in float32" \
  "$T/o.fvecs" slem-encode -q --classifier --groups "$T/two.groups" -c "$T/neg3.slem" -o "$T/o.fvecs" "$T/huge.txt"
printf 'keep\n' >"$T/keep.fvecs"
slem-encode -q --classifier -c "$T/neg3.slem" -o "$T/keep.fvecs" "$T/huge.txt" 2>/dev/null
[ "$(cat "$T/keep.fvecs")" = keep ] && ok || bad "a refused classifier changed the existing output"
# the first record alone is a classifier, and the descriptors of both are finite unit vectors
head -n 1 "$T/huge.txt" >"$T/one.txt"
check "classifier of the first record" slem-encode -q --classifier -c "$T/neg3.slem" -F text -o "$T/c1.txt" "$T/one.txt"
check "descriptors of 1e160" slem-encode -q -c "$T/neg3.slem" -F text -o "$T/d2.txt" "$T/huge.txt"
awk '{ s = 0; for (i = 1; i <= NF; i++) { if ($i !~ /^-?[0-9]/) exit 1; s += $i * $i } if (s < 0.999 || s > 1.001) exit 1 }' "$T/d2.txt" && ok || bad "descriptors of 1e160: $(cat "$T/d2.txt")"
# --basic of 1e160 and 3e200 (x.b overflowed: the descriptor of mu, or zeros, status 0),
# computed in x / T: against the exact rational reference (scripts/gen-classifier-huge.py
# basic), to float32's digits
printf '3 -1 2.5\n1.5e160 -2.25e160 7e159\n-3e200 1e199 2.5e200\n' >"$T/hb.txt"
check "basic descriptors of 1e160" slem-encode -q --basic --theta 2 -c "$T/neg3.slem" -F text -o "$T/hb.out" "$T/hb.txt"
awk -v rtol=1e-6 -f tests/numcmp.awk "$TOP/testdata/golden/basic-huge.txt" "$T/hb.out" >"$T/cmp" && ok ||
  bad "basic descriptors of 1e160 differ from the exact ones: $(cat "$T/cmp")"
# what no encoder can compute in its arithmetic is refused too: a polynomial kernel of 1e160
slem-negstats -q -K poly --rank 3 --lambda 0.5 -o "$T/poly3.slem" "$T/neg3.txt"
expect_fail "poly kernel descriptor of 1e160" 1 "huge.txt: record 2: its descriptor is not finite in float32" \
  "$T/o.fvecs" slem-encode -q -c "$T/poly3.slem" -o "$T/o.fvecs" "$T/huge.txt"
finish cli-numeric
