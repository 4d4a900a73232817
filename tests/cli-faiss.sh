#!/bin/sh
# CLI tests of rankings as FAISS users have them (issue 43): FAISS's own I and D, saved with
# np.save under their own names (x_I.npy, x_D.npy), int32 I and float64 D, and FAISS's
# shards, which list exactly tied scores in an order of their own, merged by slem-merge
# with the ties put by the lower row. testdata/faiss comes from scripts/gen-faiss.py
# (python3-faiss's IndexFlatIP; the merge computed by numpy). Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
F=$TOP/testdata/faiss
DG=$TOP/testdata/digits

# ---- FAISS's shards, ties in FAISS's order, merged as numpy merges them ----
# under slem's names first, so that only the ties are new to the merge
for s in 0 1 2; do cp "$F/shard${s}_I.npy" "$T/s$s.I.npy"; cp "$F/shard${s}_D.npy" "$T/s$s.D.npy"; done
check "merge FAISS's shards" slem-merge -k 10 -o "$T/m.tsv" "$T/s0.npy" "$T/s1.npy" "$T/s2.npy"
cmp -s "$T/m.tsv" "$F/merged.tsv" && ok || bad "FAISS's shards merged otherwise than numpy: $(diff "$T/m.tsv" "$F/merged.tsv" | head -4)"
# to an npy pair, the ties by the lower row there too (read back: it is slem's order now)
check "merge FAISS's shards to npy" slem-merge -k 10 -o "$T/mn.npy" "$T/s0.npy" "$T/s1.npy" "$T/s2.npy"
check "read the merged pair" slem-merge -k 10 -o "$T/mn.tsv" "$T/mn.I.npy"
cmp -s "$T/mn.tsv" "$F/merged.tsv" && ok || bad "npy output of FAISS's shards"

# ---- the files under their own names: x_I.npy names x_D.npy, and either names both ----
check "merge by FAISS's names" slem-merge -k 10 -o "$T/m2.tsv" "$F/shard0_I.npy" "$F/shard1_D.npy" "$F/shard2_I.npy"
cmp -s "$T/m2.tsv" "$F/merged.tsv" && ok || bad "shards given as x_I.npy / x_D.npy"
# int32 I and float64 D (numpy's astype) read as the int64 / float32 pair, under slem's
# names and under their own
cp "$F/shard1w_I.npy" "$T/w.I.npy"; cp "$F/shard1w_D.npy" "$T/w.D.npy"
check "int32 I, float64 D as w.npy" slem-merge -k 10 -o "$T/m5.tsv" "$T/s0.npy" "$T/w.npy" "$T/s2.npy"
cmp -s "$T/m5.tsv" "$F/merged.tsv" && ok || bad "int32 I and float64 D read otherwise (w.npy)"
check "int32 I, float64 D" slem-merge -k 10 -o "$T/m3.tsv" "$F/shard0_I.npy" "$F/shard1w_I.npy" "$F/shard2_I.npy"
cmp -s "$T/m3.tsv" "$F/merged.tsv" && ok || bad "int32 I and float64 D read otherwise"
# a pair named I.npy and D.npy in a folder of its own
mkdir "$T/dir"
cp "$F/shard1w_I.npy" "$T/dir/I.npy"; cp "$F/shard1w_D.npy" "$T/dir/D.npy"
check "I.npy and D.npy" slem-merge -k 10 -o "$T/m4.tsv" "$F/shard0_I.npy" "$T/dir/D.npy" "$F/shard2_D.npy"
cmp -s "$T/m4.tsv" "$F/merged.tsv" && ok || bad "a pair named I.npy, D.npy"
# slem-eval reads FAISS's own files: the whole search's ranking against itself
check "eval FAISS's whole search" slem-eval --neighbors "$F/whole_I.npy" -k 10 "$F/whole_I.npy"
grep -qx 'R@10	1.000000' "$T/out" && ok || bad "eval of whole_I.npy: $(cat "$T/out")"

# ---- the output's name: -o rk.I.npy writes rk.I.npy and rk.D.npy, -o x_D.npy x_I.npy too ----
check "match -o rk.I.npy" slem-match -q -k 5 -d "$DG/database.fvecs" -o "$T/rk.I.npy" "$DG/queries.fvecs"
[ -s "$T/rk.I.npy" ] && [ -s "$T/rk.D.npy" ] && [ ! -e "$T/rk.I.I.npy" ] && [ ! -e "$T/rk.I.D.npy" ] && ok ||
  bad "-o rk.I.npy wrote: $(cd "$T" && ls rk*)"
check "match -o rk.npy" slem-match -q -k 5 -d "$DG/database.fvecs" -o "$T/rk2.npy" "$DG/queries.fvecs"
cmp -s "$T/rk.I.npy" "$T/rk2.I.npy" && cmp -s "$T/rk.D.npy" "$T/rk2.D.npy" && ok || bad "-o rk.I.npy wrote another pair than -o rk.npy"
check "match -o x_D.npy" slem-match -q -k 5 -d "$DG/database.fvecs" -o "$T/x_D.npy" "$DG/queries.fvecs"
cmp -s "$T/rk.I.npy" "$T/x_I.npy" && cmp -s "$T/rk.D.npy" "$T/x_D.npy" && [ ! -e "$T/x_D.I.npy" ] && ok ||
  bad "-o x_D.npy wrote: $(cd "$T" && ls x*)"
check "merge -o y_I.npy" slem-merge -k 10 -o "$T/y_I.npy" "$T/s0.npy" "$T/s1.npy" "$T/s2.npy"
cmp -s "$T/y_I.npy" "$T/mn.I.npy" && cmp -s "$T/y_D.npy" "$T/mn.D.npy" && [ ! -e "$T/y_I.I.npy" ] && ok ||
  bad "merge -o y_I.npy wrote: $(cd "$T" && ls y*)"
# a pair's D missing is named as before
cp "$F/shard0_I.npy" "$T/lone_I.npy"
expect_fail "x_I.npy without x_D.npy" 1 "lone_D.npy: .*npy rankings are a pair" "$T/o.tsv" slem-merge -k 10 -o "$T/o.tsv" "$T/lone_I.npy"

# ---- what the merge still refuses: a list not best first, a row twice among ties ----
cd "$T" || exit 1
npy_pair up 1 2 '1 2' '.25 .5'
expect_fail "scores going up" 1 "up.I.npy: row 0, column 1: query '0' lists row 2 ('2', score 0.5) after row 1 (score 0.25): not best first" "$T/o" slem-merge -k 2 -o "$T/o" up.npy
npy_pair tw 1 3 '7 5 7' '.5 .5 .5'
expect_fail "a row twice among ties" 1 "tw.I.npy: row 0, column 2: id '7' appears twice" "$T/o" slem-merge -k 3 -o "$T/o" tw.npy
# FAISS's L2 search (IndexFlatL2: distances, smallest first) is no similarity: refused,
# naming it, whether the distances go up or its padding is +FLT_MAX
expect_fail "FAISS's L2 shard" 1 "l2_I.npy: row 0, column 1: .*not best first.*FAISS's IndexFlatL2" "$T/o" slem-merge -k 10 -o "$T/o" "$F/l2_I.npy"
expect_fail "FAISS's L2 padding" 1 "l2pad_I.npy: row 0, column 5: padding (I -1) with D +FLT_MAX, as FAISS pads L2 distances" "$T/o" slem-merge -k 10 -o "$T/o" "$F/l2pad_I.npy"
# ties of a text shard in another order than the lower row: put by the lower row
npy_pair ta 1 3 '7 5 3' '.5 .5 .25'
printf '0\t1\t6\t0.5\n0\t2\t4\t0.5\n0\t3\t8\t0.25\n' >"$T/tb.tsv"
check "ties of npy and tsv shards" slem-merge -k 5 -o "$T/t.tsv" ta.npy tb.tsv
printf '0\t1\t4\t0.5\n0\t2\t5\t0.5\n0\t3\t6\t0.5\n0\t4\t7\t0.5\n0\t5\t3\t0.25\n' | cmp -s - "$T/t.tsv" && ok || bad "ties merged: $(cat "$T/t.tsv")"
cd "$TOP" || exit 1

finish cli-faiss
