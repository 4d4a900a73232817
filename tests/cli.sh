#!/bin/sh
# CLI tests of the slem tools: the pipeline against the numpy/scikit-learn golden files
# in testdata/golden, every output format, stdin and stdout, ids, and the bad inputs with
# their message, exit status and (absent) output file. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"

# ---- help, version, usage errors ----
for tool in slem-negstats slem-encode slem-match slem-eval; do
  check "$tool --help" $tool --help
  grep -q "^Usage: $tool" "$T/out" || bad "$tool --help prints no usage"
  check "$tool --version" $tool --version
  grep -q "^$tool [0-9]" "$T/out" && grep -q "^BLAS: .*openblas" "$T/out" || bad "$tool --version: $(cat "$T/out")"
  expect_fail "$tool bad option" 2 "Try '$tool --help'" - $tool --no-such-option
  # the binary needs libopenblas itself, so its cblas_* calls and GSL's bind there first
  if ldd "$BIN/$tool" | grep -q openblas; then ok; else bad "$tool does not link OpenBLAS"; fi
done
expect_fail "negstats without -o" 2 "give -o CACHE" - slem-negstats "$G/neg.fvecs"
expect_fail "negstats without inputs" 2 "no negatives" - slem-negstats -o "$T/x.slem"
expect_fail "negstats both lambdas" 2 "not both" "$T/x.slem" slem-negstats -o "$T/x.slem" -l 1 -r 1 "$G/neg.fvecs"
expect_fail "negstats bad lambda" 2 "not a finite number" "$T/x.slem" slem-negstats -o "$T/x.slem" -l abc "$G/neg.fvecs"
expect_fail "encode without cache" 2 "give -c CACHE" - slem-encode "$G/pos.fvecs"
expect_fail "encode theta without classifier" 2 "goes with --classifier" - slem-encode -c x --theta 2
expect_fail "match without database" 2 "give -d DATABASE" - slem-match "$G/pos.fvecs"
expect_fail "match bad k" 2 "-k: '0'" - slem-match -d x -k 0
expect_fail "match bad format" 2 "unknown format 'xml'" - slem-match -d x -F xml

# ---- the pipeline against the scikit-learn reference ----
check "negstats" slem-negstats -q --lambda 0.05 -o "$T/neg.slem" "$G/neg.fvecs"
check "negstats --info" slem-negstats --info "$T/neg.slem"
grep -q '"kind":.*"linear"' "$T/out" && grep -q '"lambda":.*0.05' "$T/out" || bad "--info: $(cat "$T/out")"
check "encode db" slem-encode -c "$T/neg.slem" -o "$T/db.fvecs" "$G/db.fvecs"
check "encode pos" slem-encode -c "$T/neg.slem" -o "$T/pos.fvecs" "$G/pos.fvecs"
check "match" slem-match -d "$T/db.fvecs" -k 10 -o "$T/rank.tsv" "$T/pos.fvecs"
# ids exactly; scores (inner products of float32 descriptors, the product with A^-1 in
# float32 when --precision auto chooses it) to 5e-6
if compare_ranking "$T/rank.tsv" "$G/ranking.tsv" 5e-6 >"$T/diff"; then ok; else bad "ranking differs from the reference: $(cat "$T/diff")"; fi
slem-encode -c "$T/neg.slem" --precision double "$G/pos.fvecs" | slem-match -d "$T/db.fvecs" -k 10 >"$T/rank.double.tsv"
if compare_ranking "$T/rank.double.tsv" "$G/ranking.tsv" 1e-6 >"$T/diff"; then ok; else bad "double-precision ranking: $(cat "$T/diff")"; fi
# both precisions against the reference descriptors: 1 - cos <= 1e-6, via text output
for prec in single double; do
  slem-encode -c "$T/neg.slem" --precision $prec -F text "$G/pos.fvecs" >"$T/desc.$prec"
  od -An -v -tf8 -w96 -j128 "$G/desc_pos.npy" | paste -d ' ' "$T/desc.$prec" - |
    awk '{ d = NF / 2; ab = aa = bb = 0; for (i = 1; i <= d; i++) { ab += $i * $(i + d); aa += $i * $i; bb += $(i + d) * $(i + d) }
           c = 1 - ab / sqrt(aa * bb); if (c > 1e-6 || NF != 24) { print NR, c, NF; exit 1 } }' >"$T/diff" &&
    ok || bad "--precision $prec: 1 - cos against the reference: $(cat "$T/diff")"
done

# the same through pipes: stdin to stdout, no seeking
cat "$G/pos.fvecs" | slem-encode -c "$T/neg.slem" | slem-match -d "$T/db.fvecs" -k 10 >"$T/rank2.tsv" 2>"$T/err"
if cmp -s "$T/rank.tsv" "$T/rank2.tsv"; then ok; else bad "pipeline through stdin differs: $(cat "$T/err")"; fi

# every descriptor format gives the same ranking; text is exact for float32 with %.9g
for f in npy text; do
  check "encode -F $f" slem-encode -c "$T/neg.slem" -F $f -o "$T/pos.$f" "$G/pos.fvecs"
  check "match $f queries" slem-match -d "$T/db.fvecs" -k 10 -o "$T/rank.$f.tsv" "$T/pos.$f"
  if cmp -s "$T/rank.tsv" "$T/rank.$f.tsv"; then ok; else bad "ranking from $f descriptors differs"; fi
done
# npy through a pipe: the count is known from the input file
slem-encode -c "$T/neg.slem" -F npy "$G/pos.fvecs" >"$T/pipe.npy" && cmp -s "$T/pipe.npy" "$T/pos.npy" && ok || bad "npy to stdout differs"
expect_fail "npy to a pipe without a count" 1 "needs the vector count" - sh -c "cat '$G/pos.fvecs' | slem-encode -c '$T/neg.slem' -F npy"
# text input from stdin
slem-encode -c "$T/neg.slem" -F text "$G/pos.fvecs" | slem-match -d "$T/db.fvecs" -k 10 >"$T/rank3.tsv" 2>"$T/err" &&
  cmp -s "$T/rank.tsv" "$T/rank3.tsv" && ok || bad "text through stdin: $(cat "$T/err")"

# descriptors are unit vectors: text output, each row's squared norm is 1
awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i * $i; if (s < 0.999999 || s > 1.000001) { print NR, s; exit 1 } }' "$T/pos.text" && ok || bad "descriptors are not unit length"

# classifier: d + 1 values per row
check "classifier" slem-encode -c "$T/neg.slem" --classifier --theta 10 -F text -o "$T/clf.txt" "$G/pos.fvecs"
[ "$(awk '{ print NF }' "$T/clf.txt" | sort -u)" = 13 ] && ok || bad "classifier rows do not have d + 1 = 13 values"

# ---- output formats of slem-match ----
check "trec" slem-match -d "$T/db.fvecs" -k 10 -F trec --tag run1 -o "$T/rank.trec" "$T/pos.fvecs"
awk 'NF != 6 || $2 != "Q0" || $6 != "run1" { exit 1 }' "$T/rank.trec" && [ "$(wc -l <"$T/rank.trec")" = 200 ] && ok || bad "trec format"
awk '{ print $1 "\t" $4 "\t" $3 "\t" $5 }' "$T/rank.trec" | cmp -s - "$T/rank.tsv" && ok || bad "trec and tsv disagree"
check "jsonl" slem-match -d "$T/db.fvecs" -k 3 -F jsonl -o "$T/rank.jsonl" "$T/pos.fvecs"
[ "$(wc -l <"$T/rank.jsonl")" = 20 ] && head -1 "$T/rank.jsonl" | grep -q '^{"query":"0","results":\[{"rank":1,"id":"[0-9]*","row":[0-9]*,"score":0\.[0-9]*},' && ok || bad "jsonl format: $(head -1 "$T/rank.jsonl")"

# ids
seq 0 19 | sed 's/^/q/' >"$T/q.ids"
seq 0 199 | sed 's/^/d/' >"$T/db.ids"
check "ids" slem-match -d "$T/db.fvecs" -k 10 --query-ids "$T/q.ids" --db-ids "$T/db.ids" -o "$T/rank.ids.tsv" "$T/pos.fvecs"
sed 's/^\([0-9]*\)\t\([0-9]*\)\t\([0-9]*\)/q\1\td\3\t\2/' "$T/rank.tsv" | awk -F '\t' '{ print $1 "\t" $3 "\t" $2 "\t" $4 }' | cmp -s - "$T/rank.ids.tsv" && ok || bad "ids not applied"
head -5 "$T/db.ids" >"$T/short.ids"
expect_fail "too few db ids" 1 "short.ids: 5 ids, but the database has more rows" "$T/r.tsv" slem-match -d "$T/db.fvecs" --db-ids "$T/short.ids" -o "$T/r.tsv" "$T/pos.fvecs"
expect_fail "too many query ids" 1 "db.ids: 200 ids for 20 queries" "$T/r.tsv" slem-match -d "$T/db.fvecs" --query-ids "$T/db.ids" -o "$T/r.tsv" "$T/pos.fvecs"

# exclude-self: the database as queries never finds itself
check "exclude-self" slem-match -d "$T/db.fvecs" -k 5 --exclude-self -o "$T/self.tsv" "$T/db.fvecs"
awk -F '\t' '$1 == $3 { exit 1 }' "$T/self.tsv" && [ "$(wc -l <"$T/self.tsv")" = 1000 ] && ok || bad "--exclude-self"
check "self" slem-match -d "$T/db.fvecs" -k 1 -o "$T/self1.tsv" "$T/db.fvecs"
awk -F '\t' '$1 != $3 { exit 1 }' "$T/self1.tsv" && ok || bad "a descriptor's best match is itself"
# --normalize on raw vectors: the best match of a raw vector scaled by 3 is itself, score 1
awk 'BEGIN { }' /dev/null
check "normalize" slem-match -d "$G/db.fvecs" -k 1 --normalize -o "$T/norm.tsv" "$G/db.fvecs"
awk -F '\t' '$1 != $3 || $4 < 0.9999995 { exit 1 }' "$T/norm.tsv" && ok || bad "--normalize"

# ---- partial caches merge to the same cache as one pass ----
head -c $((150 * 52)) "$G/neg.fvecs" >"$T/neg.a.fvecs"
tail -c +$((150 * 52 + 1)) "$G/neg.fvecs" >"$T/neg.b.fvecs"
check "partial a" slem-negstats -q --partial -o "$T/a.slem" "$T/neg.a.fvecs"
check "partial b" slem-negstats -q --partial -o "$T/b.slem" "$T/neg.b.fvecs"
check "merge" slem-negstats -q --lambda 0.05 -o "$T/ab.slem" "$T/a.slem" "$T/b.slem"
slem-encode -c "$T/ab.slem" "$G/pos.fvecs" | slem-match -d "$T/db.fvecs" -k 10 >"$T/rank.ab.tsv" &&
  compare_ranking "$T/rank.ab.tsv" "$T/rank.tsv" 2e-7 >/dev/null && ok || bad "merged shards give another ranking"
expect_fail "encode with a partial cache" 1 "partial cache" "$T/x.fvecs" slem-encode -c "$T/a.slem" -o "$T/x.fvecs" "$G/pos.fvecs"
check "lambda-rel" slem-negstats -q --lambda-rel 0.1 -o "$T/rel.slem" "$G/neg.fvecs"

# ---- bad inputs: message naming file and record, status 1, no output ----
: >"$T/empty.fvecs"
head -c 100 "$G/neg.fvecs" >"$T/trunc.fvecs"
printf '1 2 3\n4 5\n' >"$T/mixed.txt"
printf '1 2 3\n4 nan 6\n' >"$T/nan.txt"
printf '1 2 3 4 5 6 7 8 9 10 11 12\n1 inf 3 4 5 6 7 8 9 10 11 12\n' >"$T/inf.txt"
expect_fail "empty negatives" 1 "empty.fvecs: no vectors (empty file)" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/empty.fvecs"
expect_fail "truncated negatives" 1 "trunc.fvecs: size 100 is not a multiple of the record size 52" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/trunc.fvecs"
expect_fail "truncated on stdin" 1 "<stdin>: record 2: truncated" "$T/o.slem" sh -c "cat '$T/trunc.fvecs' | slem-negstats -o '$T/o.slem' -"
expect_fail "mixed dimensions" 1 "mixed.txt: line 2: 2 values, expected 3" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/mixed.txt"
expect_fail "NaN" 1 "nan.txt: line 2: value 2 is not finite" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/nan.txt"
expect_fail "Inf" 1 "inf.txt: line 2: value 2 is not finite" "$T/o.fvecs" slem-encode -c "$T/neg.slem" -o "$T/o.fvecs" "$T/inf.txt"
expect_fail "missing file" 1 "no-such.fvecs: No such file or directory" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/no-such.fvecs"
expect_fail "directory as input" 1 "is a directory" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T"
expect_fail "unwritable output" 1 "no-dir/o.slem" - slem-negstats -o "$T/no-dir/o.slem" "$G/neg.fvecs"
expect_fail "dimension vs cache" 1 "mixed.txt: dimension 3, but the cache .*neg.slem has dimension 12" "$T/o.fvecs" slem-encode -c "$T/neg.slem" -o "$T/o.fvecs" "$T/mixed.txt"
expect_fail "negative files disagree" 1 "mixed.txt: dimension 3, but the negatives before it have 12" "$T/o.slem" slem-negstats -o "$T/o.slem" "$G/neg.fvecs" "$T/mixed.txt"
expect_fail "queries vs database" 1 "dimension 3 but .*db.fvecs has dimension 12" "$T/o.tsv" slem-match -d "$T/db.fvecs" -o "$T/o.tsv" "$T/mixed.txt"
# a bad record late in a file: the partial output is removed
{ cat "$G/pos.fvecs"; printf '\014\000\000\000'; head -c 48 /dev/zero; } >"$T/late.fvecs"
printf '\013\000\000\000' | dd of="$T/late.fvecs" bs=1 seek=$((20 * 52)) conv=notrunc 2>/dev/null
expect_fail "bad record 21" 1 "late.fvecs: record 21: dimension 11, expected 12" "$T/o.fvecs" slem-encode -c "$T/neg.slem" -o "$T/o.fvecs" "$T/late.fvecs"
# a failed run leaves an existing output as it was
echo previous >"$T/keep.fvecs"
slem-encode -c "$T/neg.slem" -o "$T/keep.fvecs" "$T/late.fvecs" 2>/dev/null
[ "$(cat "$T/keep.fvecs")" = previous ] && ok || bad "a failed run replaced an existing output"

# caches: corrupted checksum, other version, other byte order, truncated, not a cache
cp "$T/neg.slem" "$T/c.slem"
printf 'X' | dd of="$T/c.slem" bs=1 seek=$(($(wc -c <"$T/c.slem") - 5)) conv=notrunc 2>/dev/null
expect_fail "corrupt cache" 1 "c.slem: checksum mismatch in the payload" "$T/o.fvecs" slem-encode -c "$T/c.slem" -o "$T/o.fvecs" "$G/pos.fvecs"
cp "$T/neg.slem" "$T/c.slem"
printf '\002' | dd of="$T/c.slem" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_fail "cache version" 1 "cache format version 2; this slem reads version 1" "$T/o.fvecs" slem-encode -c "$T/c.slem" -o "$T/o.fvecs" "$G/pos.fvecs"
cp "$T/neg.slem" "$T/c.slem"
printf '\001\002\003\004' | dd of="$T/c.slem" bs=1 seek=12 conv=notrunc 2>/dev/null
expect_fail "cache byte order" 1 "other byte order" "$T/o.fvecs" slem-encode -c "$T/c.slem" -o "$T/o.fvecs" "$G/pos.fvecs"
head -c 1000 "$T/neg.slem" >"$T/c.slem"
expect_fail "truncated cache" 1 "c.slem: header offsets disagree with the file size" "$T/o.fvecs" slem-encode -c "$T/c.slem" -o "$T/o.fvecs" "$G/pos.fvecs"
expect_fail "not a cache" 1 "neg.fvecs: not a slem cache" "$T/o.fvecs" slem-encode -c "$G/neg.fvecs" -o "$T/o.fvecs" "$G/pos.fvecs"
expect_fail "missing cache" 1 "nope.slem: No such file" "$T/o.fvecs" slem-encode -c "$T/nope.slem" -o "$T/o.fvecs" "$G/pos.fvecs"

# numerical: rank-deficient negatives without lambda
awk '{ print $1, $2, 7 }' "$T/pos.text" >"$T/const.txt"
expect_fail "singular" 1 "not positive definite.*lambda_rel 1e-3" "$T/o.slem" slem-negstats -o "$T/o.slem" --lambda 0 "$T/const.txt"
printf '1 2\n' >"$T/one.txt"
expect_fail "single negative, relative lambda" 1 "not positive definite" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/one.txt"
check "single negative, absolute lambda" slem-negstats -q --lambda 1 -o "$T/one.slem" "$T/one.txt"

# ---- numerical edge cases ----
# d = 1: every descriptor is +1 or -1
printf '1\n2\n4\n8\n' >"$T/d1.txt"
check "d = 1 negstats" slem-negstats -q -o "$T/d1.slem" "$T/d1.txt"
slem-encode -c "$T/d1.slem" -F text "$T/d1.txt" | tr '\n' ' ' | grep -q '^-1 -1 1 1 $' && ok || bad "d = 1 descriptors"
# scale invariance: with lambda relative to the variance, data times 1e30 or 1e-30 give
# the same descriptors (in float32 or double arithmetic)
od -An -v -tf4 -w52 "$G/neg.fvecs" | awk '{ for (i = 2; i <= NF; i++) printf "%s%s", (i > 2 ? " " : ""), $i; print "" }' >"$T/neg.txt"
od -An -v -tf4 -w52 "$G/pos.fvecs" | awk '{ for (i = 2; i <= NF; i++) printf "%s%s", (i > 2 ? " " : ""), $i; print "" }' >"$T/pos.txt"
slem-negstats -q -r 0.01 -o "$T/s1.slem" "$T/neg.txt"
slem-encode -q -c "$T/s1.slem" -F text "$T/pos.txt" >"$T/s1.desc"
for scale in 1e30 1e-30; do
  for f in neg pos; do awk -v s=$scale '{ for (i = 1; i <= NF; i++) printf "%s%.9g", (i > 1 ? " " : ""), $i * s; print "" }' "$T/$f.txt" >"$T/$f.$scale.txt"; done
  slem-negstats -q -r 0.01 -o "$T/s.slem" "$T/neg.$scale.txt" || bad "negstats at scale $scale"
  for prec in single double; do
    slem-encode -q -c "$T/s.slem" --precision $prec -F text "$T/pos.$scale.txt" | paste -d ' ' - "$T/s1.desc" |
      awk '{ d = NF / 2; ab = aa = bb = 0; for (i = 1; i <= d; i++) { ab += $i * $(i + d); aa += $i * $i; bb += $(i + d) * $(i + d) }
             if (aa == 0 || 1 - ab / sqrt(aa * bb) > 1e-6) exit 1 }' && ok || bad "scale $scale, $prec: descriptors differ"
  done
done
# NaN and Inf: an error naming the record, or skipped and counted
printf '1 2\n3 nan\n5 7\ninf 1\n2 2\n' >"$T/nf.txt"
expect_fail "NaN in negatives" 1 "nf.txt: line 2: value 2 is not finite" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/nf.txt"
check "skip-nonfinite" slem-negstats --skip-nonfinite -o "$T/nf.slem" "$T/nf.txt"
grep -q "skipped 2 records with NaN or Inf" "$T/err" && slem-negstats --info "$T/nf.slem" | grep -q '"n":.*3,' && ok || bad "--skip-nonfinite: $(cat "$T/err")"
{ cat "$G/pos.fvecs"; printf '\014\000\000\000'; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do printf '\000\000\300\177'; done; } >"$T/nan.fvecs"
expect_fail "NaN in fvecs" 1 "nan.fvecs: record 21: value 1 is NaN" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/nan.fvecs"
check "skip-nonfinite fvecs" slem-negstats -q --skip-nonfinite -o "$T/nan.slem" "$T/nan.fvecs"
slem-negstats --info "$T/nan.slem" | grep -q '"n":.*20,' && ok || bad "--skip-nonfinite on fvecs"
# a duplicated dimension without lambda: refused with a suggested lambda
awk '{ $2 = $1; print }' "$T/neg.txt" >"$T/dup.txt"
expect_fail "duplicated dimension" 1 "lambda_rel 1e-3" "$T/o.slem" slem-negstats -o "$T/o.slem" --lambda 0 "$T/dup.txt"
# a line of 65 MiB with no newline: refused, memory bounded
head -c 68000000 /dev/zero | tr '\000' '1' >"$T/long.txt"
expect_fail "line over 64 MiB" 1 "long.txt: a line is longer than 64 MiB" "$T/o.slem" slem-negstats -o "$T/o.slem" "$T/long.txt"
rm -f "$T/long.txt"

# writing into a closed pipe ends quietly (SIGPIPE, as any filter)
slem-match -d "$T/db.fvecs" -k 100 "$T/db.fvecs" 2>"$T/err" | head -1 >/dev/null
[ ! -s "$T/err" ] && ok || bad "closed pipe printed: $(cat "$T/err")"

finish cli
