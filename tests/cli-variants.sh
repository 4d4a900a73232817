#!/bin/sh
# CLI tests of the authors' smaller variants (issue 29): each against a float64 numpy
# translation of their MATLAB (scripts/gen-authors-variants.py, goldens in testdata/authors/:
# rankings exactly, float32 scores to 1e-6), byte-identical for -t 1 / -t 2 and when
# sharded, and its refusals. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
A=$TOP/testdata/authors
# golden GOLDEN RANKING: same lines, same query, rank and row, scores within 1e-6
golden() {
  [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ] && paste "$1" "$2" | awk -F'\t' '
    { if ($1 != $5 || $2 != $6 || $3 != $7) bad++; e = $4 - $8; if (e < 0) e = -e; if (e > m) m = e }
    END { exit !(NR > 0 && bad == 0 && m <= 1e-6) }'
}
# sharded NAME RANKING CMD...: CMD --shard 0/2 and 1/2 (outputs a.tsv, b.tsv), merged, equal RANKING
sharded() {
  name=$1 want=$2; shift 2
  "$@" --shard 0/2 -o "$T/sa.tsv" 2>"$T/err" && "$@" --shard 1/2 -o "$T/sb.tsv" 2>>"$T/err" &&
    slem-merge -k 10 -o "$T/s.tsv" "$T/sa.tsv" "$T/sb.tsv" 2>>"$T/err" && cmp -s "$want" "$T/s.tsv" && ok ||
    bad "$name: two merged shards rank otherwise: $(head -c 300 "$T/err")"
}

# ---- 1. the authors' hellinger (incomplete_chol.m): sqrt|x.y|, kernel hellinger-dot ----
check "hellinger-dot cache" slem-negstats -q --kernel hellinger-dot --factor kpca --rank 12 --lambda 1 -o "$T/hd.slem" "$D/negatives.fvecs"
slem-negstats --info "$T/hd.slem" | grep -q '"kernel":.*"hellinger-dot"' && ok || bad "--info does not name hellinger-dot"
check "hellinger-dot match" slem-match -c "$T/hd.slem" -k 10 -d "$D/database.fvecs" -o "$T/hd1.tsv" "$D/queries.fvecs"
golden "$A/hellinger-dot-kpca12.tsv" "$T/hd1.tsv" && ok || bad "hellinger-dot differs from scripts/gen-authors-variants.py"
slem-match -t 1 --query-block 7 --tile-rows 33 -c "$T/hd.slem" -k 10 -d "$D/database.fvecs" -o "$T/hd2.tsv" "$D/queries.fvecs"
cmp -s "$T/hd1.tsv" "$T/hd2.tsv" && ok || bad "hellinger-dot ranking changes with -t 1 and blocks"
slem-match -t 2 -c "$T/hd.slem" -k 10 -d "$D/database.fvecs" -o "$T/hd3.tsv" "$D/queries.fvecs"
cmp -s "$T/hd1.tsv" "$T/hd3.tsv" && ok || bad "hellinger-dot ranking changes with -t 2"
sharded "hellinger-dot match" "$T/hd1.tsv" slem-match -c "$T/hd.slem" -k 10 -d "$D/database.fvecs" "$D/queries.fvecs"
# slem's hellinger is another kernel (sum sqrt(x_i y_i))
slem-negstats -q --kernel hellinger --factor kpca --rank 12 --lambda 1 -o "$T/h.slem" "$D/negatives.fvecs"
slem-match -c "$T/h.slem" -k 10 -d "$D/database.fvecs" -o "$T/h.tsv" "$D/queries.fvecs"
! cmp -s "$T/h.tsv" "$T/hd1.tsv" && ok || bad "hellinger and hellinger-dot rank alike"
# the incomplete Cholesky (the authors' factor) stops where K stops being positive
check "hellinger-dot icd" slem-negstats -q --kernel hellinger-dot --rank 64 --lambda-rel 100 -o "$T/hdi.slem" "$D/negatives.fvecs"
r=$(slem-negstats --info "$T/hdi.slem" | sed -n 's/.*"r":[^0-9]*\([0-9]*\).*/\1/p')
[ -n "$r" ] && [ "$r" -gt 4 ] && [ "$r" -lt 64 ] && ok || bad "hellinger-dot icd rank $r: K is not positive semidefinite, expected 4 < r < 64"
slem-encode -q -t 1 -c "$T/hdi.slem" -o "$T/hde1.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/hdi.slem" --shard 0/2 -o "$T/hde2a.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/hdi.slem" --shard 1/2 -o "$T/hde2b.fvecs" "$D/database.fvecs"
cat "$T/hde2a.fvecs" "$T/hde2b.fvecs" | cmp -s - "$T/hde1.fvecs" && ok || bad "hellinger-dot explicit descriptors change with -t and shards"
printf '1 -2 3\n' >"$T/neg.txt"
expect_fail "hellinger-dot, negative value" 1 "record 1: value 2 is negative" "$T/o.slem" \
  slem-negstats -q --kernel hellinger-dot -f text -o "$T/o.slem" "$T/neg.txt"
expect_fail "hellinger-dot, a parameter" 2 "hellinger-dot takes no parameter 'gamma'" "$T/o.slem" \
  slem-negstats -q --kernel hellinger-dot:gamma=2 -o "$T/o.slem" "$D/negatives.fvecs"

# ---- 2. basic_encoder.m: no bias, uncentred, from a plain linear cache (slem-encode --basic) ----
check "linear cache" slem-negstats -q --lambda 1 -o "$T/lin.slem" "$D/negatives.fvecs"
check "basic db" slem-encode -q -c "$T/lin.slem" --basic --theta 2 -o "$T/bdb.fvecs" "$D/database.fvecs"
check "basic queries" slem-encode -q -c "$T/lin.slem" --basic --theta 2 -o "$T/bq.fvecs" "$D/queries.fvecs"
check "basic match" slem-match -k 10 -d "$T/bdb.fvecs" -o "$T/b1.tsv" "$T/bq.fvecs"
golden "$A/basic-theta2.tsv" "$T/b1.tsv" && ok || bad "--basic differs from scripts/gen-authors-variants.py"
slem-encode -q -t 1 -b 256 -c "$T/lin.slem" --basic --theta 2 -o "$T/bdb1.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/lin.slem" --basic --theta 2 --shard 0/2 -o "$T/bdb2a.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/lin.slem" --basic --theta 2 --shard 1/2 -o "$T/bdb2b.fvecs" "$D/database.fvecs"
cmp -s "$T/bdb.fvecs" "$T/bdb1.fvecs" && cat "$T/bdb2a.fvecs" "$T/bdb2b.fvecs" | cmp -s - "$T/bdb.fvecs" && ok ||
  bad "--basic descriptors change with -t 1 / -t 2, the block or shards"
sharded "basic match" "$T/b1.tsv" slem-match -k 10 -d "$T/bdb.fvecs" "$T/bq.fvecs"
# p = A^-1 mu and c = 1 + mu.p are made once per encoder: on one BLAS thread, else OpenBLAS's
# threaded dsymv sums in another order and, where x0 - mu cancels (a mean far from 0), the
# descriptors of -t 2 differed from those of -t 1 (85 bytes here), and at -t 2 and up those
# of slem-encode's two lanes (the second encoder made with the BLAS on one thread) from
# each other. 500 negatives and 1000 positives of d 64 around a mean of 50 000 to 150 000.
awk -v T="$T" 'BEGIN { srand(7); d = 64
  for (j = 0; j < d; j++) o[j] = 50000 + 100000 * rand()
  for (i = 0; i < 1500; i++) { s = ""
    for (j = 0; j < d; j++) s = s (j ? " " : "") sprintf("%.9g", o[j] + rand() + rand() + rand() - 1.5)
    print s > (T (i < 500 ? "/offneg.txt" : "/offin.txt")) } }'
check "negstats far mean" slem-negstats -q -t 1 -o "$T/off.slem" "$T/offneg.txt"
check "basic far mean -t 1" slem-encode -q -t 1 --basic -c "$T/off.slem" -o "$T/off1.fvecs" "$T/offin.txt"
for tb in "2" "3" "2 -b 256"; do
  # shellcheck disable=SC2086
  check "basic far mean -t $tb" slem-encode -q -t $tb --basic -c "$T/off.slem" -o "$T/offt.fvecs" "$T/offin.txt"
  cmp -s "$T/off1.fvecs" "$T/offt.fvecs" && ok || bad "--basic, a mean far from 0: -t $tb gives other descriptors than -t 1"
done
slem-encode -q -c "$T/lin.slem" --basic -o "$T/bq1.fvecs" "$D/queries.fvecs"
slem-encode -q -c "$T/lin.slem" -o "$T/q.fvecs" "$D/queries.fvecs"
! cmp -s "$T/bq1.fvecs" "$T/bq.fvecs" && ! cmp -s "$T/bq1.fvecs" "$T/q.fvecs" && ok ||
  bad "--basic does not depend on theta, or equals SLEM's descriptors"
# basic descriptors in a container are not compared with plain ones of the same cache
slem-encode -q -c "$T/lin.slem" --basic -o "$T/bdb.slem" "$D/database.fvecs"
slem-encode -q -c "$T/lin.slem" -o "$T/q.slem" "$D/queries.fvecs"
expect_fail "basic db, plain queries" 1 "cannot be compared" "$T/o.tsv" slem-match -d "$T/bdb.slem" -o "$T/o.tsv" "$T/q.slem"
slem-negstats -q --kernel rbf:g=1 --rank 8 -o "$T/k.slem" "$D/negatives.fvecs"
slem-negstats -q --depth 2 -o "$T/rec.slem" "$D/negatives.fvecs"
slem-negstats -q --pca 8 -o "$T/pca.slem" "$D/negatives.fvecs"
slem-negstats -q --partial -o "$T/part.slem" "$D/negatives.fvecs"
slem-negstats -q --eigen -o "$T/eig.slem" "$D/negatives.fvecs"
for c in k rec pca part; do
  expect_fail "--basic with the $c cache" 2 "--basic needs a full linear cache" "$T/o.fvecs" \
    slem-encode -q -c "$T/$c.slem" --basic -o "$T/o.fvecs" "$D/queries.fvecs"
done
expect_fail "--basic --classifier" 2 "not with --classifier" "$T/o.fvecs" slem-encode -q -c "$T/lin.slem" --basic --classifier -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "--basic --alpha" 2 "not with --alpha" "$T/o.fvecs" slem-encode -q -c "$T/eig.slem" --basic --alpha -0.5 -o "$T/o.fvecs" "$D/queries.fvecs"
check "--basic with an eigen cache" slem-encode -q -c "$T/eig.slem" --basic -o "$T/eb.fvecs" "$D/queries.fvecs"
expect_fail "--basic, wrong dimension" 1 "dimension" "$T/o.fvecs" slem-encode -q -c "$T/lin.slem" --basic -o "$T/o.fvecs" "$G/pos.fvecs"
expect_fail "--basic, --theta 0" 2 "--theta: must be positive" "$T/o.fvecs" slem-encode -q -c "$T/lin.slem" --basic --theta 0 -o "$T/o.fvecs" "$D/queries.fvecs"
# a theta near DBL_MAX is theta's limit, not an overflow (was: zero rows, NaN); so is the
# classifier's (was: omega = 0 and nu = 1 on rows with theta q beyond DBL_MAX, NaN)
slem-encode -q -c "$T/lin.slem" --basic --theta 1e30 -F text -o "$T/bt30.txt" "$D/queries.fvecs"
slem-encode -q -c "$T/lin.slem" --basic --theta 1.7e308 -F text -o "$T/btmax.txt" "$D/queries.fvecs"
awk -v rtol=1e-6 -v atol=1e-7 -f "$TOP/tests/numcmp.awk" "$T/bt30.txt" "$T/btmax.txt" >/dev/null && ok ||
  bad "--basic --theta 1.7e308 is not the limit of large thetas: $(head -c 200 "$T/btmax.txt")"
slem-encode -q -c "$T/lin.slem" --classifier --theta 1e300 -F text -o "$T/ct300.txt" "$D/queries.fvecs"
for t in 1e306 1.7e308; do
  slem-encode -q -c "$T/lin.slem" --classifier --theta $t -F text -o "$T/ctmax.txt" "$D/queries.fvecs"
  awk -v rtol=1e-6 -v atol=1e-7 -f "$TOP/tests/numcmp.awk" "$T/ct300.txt" "$T/ctmax.txt" >/dev/null && ok ||
    bad "--classifier --theta $t is not the limit of large thetas: $(head -c 200 "$T/ctmax.txt")"
done

# ---- 3. SLEM_whitening.m's mixed covariance: slem-negstats --eigen --mixed POSITIVES ----
check "mixed cache" slem-negstats -q --eigen --mixed "$D/database.fvecs" --lambda 1 -o "$T/mix.slem" "$D/negatives.fvecs"
slem-negstats --info "$T/mix.slem" >"$T/info"
grep -q '"n":.*1597' "$T/info" && grep -q '"inputs":.*negatives.fvecs.*database.fvecs' "$T/info" && ok ||
  bad "--info of a mixed cache: $(head -c 300 "$T/info")"
check "mixed db" slem-encode -q -c "$T/mix.slem" --alpha -0.5 -o "$T/mdb.fvecs" "$D/database.fvecs"
check "mixed queries" slem-encode -q -c "$T/mix.slem" --alpha -0.5 -o "$T/mq.fvecs" "$D/queries.fvecs"
check "mixed match" slem-match -k 10 -d "$T/mdb.fvecs" -o "$T/m1.tsv" "$T/mq.fvecs"
golden "$A/mixed-alpha-0.5.tsv" "$T/m1.tsv" && ok || bad "--mixed differs from scripts/gen-authors-variants.py"
slem-negstats -q -t 1 --eigen --mixed "$D/database.fvecs" --lambda 1 -o "$T/mix1.slem" "$D/negatives.fvecs"
slem-negstats -q -t 2 --eigen --mixed "$D/database.fvecs" --lambda 1 -o "$T/mix2.slem" "$D/negatives.fvecs"
slem-encode -q -t 1 -c "$T/mix1.slem" --alpha -0.5 -o "$T/mdb1.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/mix2.slem" --alpha -0.5 --shard 0/2 -o "$T/mdb2a.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/mix2.slem" --alpha -0.5 --shard 1/2 -o "$T/mdb2b.fvecs" "$D/database.fvecs"
cmp -s "$T/mdb.fvecs" "$T/mdb1.fvecs" && cat "$T/mdb2a.fvecs" "$T/mdb2b.fvecs" | cmp -s - "$T/mdb.fvecs" && ok ||
  bad "--mixed descriptors change with -t 1 / -t 2 or shards"
sharded "mixed match" "$T/m1.tsv" slem-match -k 10 -d "$T/mdb.fvecs" "$T/mq.fvecs"
# the cache works everywhere: its A^-1 is (Sigma_mixed + lambda I)^-1, its mu the positives'
slem-encode -q -c "$T/mix.slem" -F text "$D/queries.fvecs" >"$T/ma.txt"
slem-encode -q -c "$T/mix.slem" --alpha -1 -F text "$D/queries.fvecs" >"$T/mb.txt"
awk -v rtol=1e-5 -v atol=1e-6 -f "$TOP/tests/numcmp.awk" "$T/ma.txt" "$T/mb.txt" >/dev/null && ok ||
  bad "a mixed cache's A^-1 (x - mu) differs from its --alpha -1"
# --basic and --classifier assume the negatives' own mu and 1/n Sigma: a mixed cache is refused
# (it said nothing and wrote descriptors of no formula); its header says what it holds
grep -q '"covariance":.*"mixed"' "$T/info" && ok || bad "--info of a mixed cache lacks its covariance"
! slem-negstats --info "$T/eig.slem" | grep -q '"covariance"' && ok || bad "an eigen cache names a covariance"
expect_fail "--basic with a mixed cache" 2 "mix.slem holds the mixed covariance" "$T/o.fvecs" \
  slem-encode -q -c "$T/mix.slem" --basic -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "--classifier with a mixed cache" 2 "mix.slem holds the mixed covariance" "$T/o.fvecs" \
  slem-encode -q -c "$T/mix.slem" --classifier -o "$T/o.fvecs" "$D/queries.fvecs"
# -f is the negatives' format, --positives-format the positives' (was: -f read both)
od -An -v -f -w260 "$D/negatives.fvecs" | awk '{ for (i = 2; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "\n") }' >"$T/neg.text"
slem-negstats -q -f text --eigen --mixed "$D/database.fvecs" --lambda 1 -o "$T/mixt.slem" - <"$T/neg.text" &&
  slem-encode -q -c "$T/mixt.slem" --alpha -0.5 -F text "$D/queries.fvecs" >"$T/mt.txt" &&
  slem-encode -q -c "$T/mix.slem" --alpha -0.5 -F text "$D/queries.fvecs" >"$T/mf.txt" &&
  awk -v rtol=1e-6 -v atol=1e-7 -f "$TOP/tests/numcmp.awk" "$T/mf.txt" "$T/mt.txt" >/dev/null && ok ||
  bad "--mixed with -f text negatives and fvecs positives: $(head -c 300 "$T/err")"
cp "$D/database.fvecs" "$T/pos.noext"
check "--positives-format" slem-negstats -q --eigen --positives-format fvecs --mixed "$T/pos.noext" --lambda 1 -o "$T/mixp.slem" "$D/negatives.fvecs"
expect_fail "--positives-format alone" 2 "goes with --mixed or --adaptive-theta" "$T/o.slem" \
  slem-negstats -q --positives-format text -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed without --eigen" 2 "add --eigen" "$T/o.slem" slem-negstats -q --mixed "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed --pca" 2 "give --eigen or --pca" "$T/o.slem" slem-negstats -q --eigen --pca 4 --mixed "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed --partial" 2 "not with --partial" "$T/o.slem" slem-negstats -q --eigen --partial --mixed "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed --kernel" 2 "not with --kernel" "$T/o.slem" slem-negstats -q --eigen --kernel rbf --mixed "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed --depth" 2 "--depth" "$T/o.slem" slem-negstats -q --eigen --depth 2 --mixed "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed from stdin" 2 "not from stdin" "$T/o.slem" slem-negstats -q --eigen --mixed - -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed, a partial cache" 1 "not partial caches" "$T/o.slem" slem-negstats -q --eigen --mixed "$D/database.fvecs" -o "$T/o.slem" "$T/part.slem"
expect_fail "--mixed, positives of another dimension" 1 "dimension 12" "$T/o.slem" slem-negstats -q --eigen --mixed "$G/pos.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--mixed, no positives file" 1 "nothere.fvecs" "$T/o.slem" slem-negstats -q --eigen --mixed "$T/nothere.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"

: >"$T/empty.fvecs"
# ---- 4. new_full_encoder.m's [nu; beta] stages and adaptive theta_n: --depth K --adaptive-theta ----
# (settings whose top 10 hold no float32 near-tie: scores there are near 1)
for kt in "2 4" "3 2"; do
  set -- $kt
  check "nubeta cache, depth $1" slem-negstats -q --depth "$1" --adaptive-theta "$D/database.fvecs" --theta "$2" --lambda 1 -o "$T/nb$1.slem" "$D/negatives.fvecs"
  check "nubeta db, depth $1" slem-encode -q -c "$T/nb$1.slem" -o "$T/nbdb$1.fvecs" "$D/database.fvecs"
  check "nubeta queries, depth $1" slem-encode -q -c "$T/nb$1.slem" -o "$T/nbq$1.fvecs" "$D/queries.fvecs"
  [ "$(wc -c <"$T/nbq$1.fvecs")" = $((100 * (4 + 4 * (64 + $1)))) ] && ok || bad "nubeta depth $1: rows are not d + K wide"
  check "nubeta match, depth $1" slem-match -k 10 -d "$T/nbdb$1.fvecs" -o "$T/nb$1.tsv" "$T/nbq$1.fvecs"
  golden "$A/nubeta-depth$1-theta$2.tsv" "$T/nb$1.tsv" && ok || bad "nubeta depth $1 differs from scripts/gen-authors-variants.py"
done
slem-negstats --info "$T/nb2.slem" >"$T/info"
grep -q '"kind":.*"recursive-nubeta"' "$T/info" && grep -q '"theta_n":' "$T/info" && grep -q '"theta":.*4' "$T/info" &&
  grep -q '"inputs":.*negatives.fvecs.*database.fvecs' "$T/info" && ok || bad "--info of a nubeta cache: $(head -c 400 "$T/info")"
slem-negstats -q -t 1 --depth 3 --adaptive-theta "$D/database.fvecs" --theta 2 --lambda 1 -o "$T/nbt1.slem" "$D/negatives.fvecs"
slem-negstats -q -t 2 --depth 3 --adaptive-theta "$D/database.fvecs" --theta 2 --lambda 1 -o "$T/nbt2.slem" "$D/negatives.fvecs"
slem-encode -q -t 1 -c "$T/nbt1.slem" -o "$T/nbdb1.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/nbt2.slem" --shard 0/2 -o "$T/nbdb2a.fvecs" "$D/database.fvecs"
slem-encode -q -t 2 -c "$T/nbt2.slem" --shard 1/2 -o "$T/nbdb2b.fvecs" "$D/database.fvecs"
cmp -s "$T/nbdb3.fvecs" "$T/nbdb1.fvecs" && cat "$T/nbdb2a.fvecs" "$T/nbdb2b.fvecs" | cmp -s - "$T/nbdb3.fvecs" && ok ||
  bad "nubeta descriptors change with -t 1 / -t 2 or shards"
sharded "nubeta match" "$T/nb3.tsv" slem-match -k 10 -d "$T/nbdb3.fvecs" "$T/nbq3.fvecs"
# blocks that are multiples of 256 give the same cache (the stages encode chunks of 256 rows)
SOURCE_DATE_EPOCH=1 slem-negstats -q -b 512 --depth 3 --adaptive-theta "$D/database.fvecs" --theta 2 --lambda 1 -o "$T/nbb1.slem" "$D/negatives.fvecs"
SOURCE_DATE_EPOCH=1 slem-negstats -q -b 256 --depth 3 --adaptive-theta "$D/database.fvecs" --theta 2 --lambda 1 -o "$T/nbb2.slem" "$D/negatives.fvecs"
cmp -s "$T/nbb1.slem" "$T/nbb2.slem" && ok || bad "nubeta caches differ between -b 512 and -b 256"
# negatives in a descriptor container (they were taken for a partial cache)
slem-encode -q -c "$T/lin.slem" -o "$T/ld.slem" "$D/negatives.fvecs"
slem-encode -q -c "$T/lin.slem" -o "$T/ld.fvecs" "$D/negatives.fvecs"
check "nubeta from a descriptor container" slem-negstats -q --depth 2 --adaptive-theta "$D/database.fvecs" --lambda 1 -o "$T/nbc.slem" "$T/ld.slem"
slem-negstats -q --depth 2 --adaptive-theta "$D/database.fvecs" --lambda 1 -o "$T/nbf.slem" "$T/ld.fvecs"
slem-encode -q -c "$T/nbc.slem" -o "$T/nbc.fvecs" "$D/queries.fvecs" && slem-encode -q -c "$T/nbf.slem" -o "$T/nbf.fvecs" "$D/queries.fvecs" &&
  cmp -s "$T/nbc.fvecs" "$T/nbf.fvecs" && ok || bad "nubeta: a descriptor container and its fvecs make other caches"
# a huge lambda (A^-1 ~ I / lambda) is its limit, not zero rows (the squares of the norm
# underflowed: every descriptor and the next stage's negatives were 0)
slem-negstats -q --depth 2 --adaptive-theta "$D/database.fvecs" --lambda 1e100 -o "$T/nbl1.slem" "$D/negatives.fvecs"
slem-negstats -q --depth 2 --adaptive-theta "$D/database.fvecs" --lambda 1e300 -o "$T/nbl2.slem" "$D/negatives.fvecs"
slem-encode -q -c "$T/nbl1.slem" -F text -o "$T/nbl1.txt" "$D/queries.fvecs"
slem-encode -q -c "$T/nbl2.slem" -F text -o "$T/nbl2.txt" "$D/queries.fvecs"
awk -v rtol=1e-6 -v atol=1e-7 -f "$TOP/tests/numcmp.awk" "$T/nbl1.txt" "$T/nbl2.txt" >/dev/null &&
  [ "$(awk '$2 != 0' "$T/nbl2.txt" | wc -l)" = 100 ] && ok || bad "nubeta with --lambda 1e300: $(head -c 200 "$T/nbl2.txt")"
check "nubeta, lambda-rel" slem-negstats -q --depth 2 --adaptive-theta "$D/database.fvecs" -r 10 -o "$T/nbr.slem" "$D/negatives.fvecs"
slem-negstats --info "$T/nbr.slem" | grep -q '"lambda_rel":.*10' && ok || bad "nubeta with --lambda-rel does not record it"
# a plain recursive cache is unchanged (the nubeta stages are another kind)
slem-negstats -q --depth 2 -r 10 -o "$T/rec2.slem" "$D/negatives.fvecs"
slem-negstats --info "$T/rec2.slem" | grep -q '"kind":.*"recursive"' && ok || bad "--depth alone no longer makes a recursive cache"
expect_fail "--adaptive-theta without --depth" 2 "give --depth K >= 2" "$T/o.slem" slem-negstats -q --adaptive-theta "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "negstats --theta alone" 2 "--theta goes with --adaptive-theta" "$T/o.slem" slem-negstats -q --depth 2 --theta 2 -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--adaptive-theta from stdin" 2 "not from stdin" "$T/o.slem" slem-negstats -q --depth 2 --adaptive-theta - -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--adaptive-theta --kernel" 2 "not with --kernel" "$T/o.slem" slem-negstats -q --depth 2 --kernel rbf --adaptive-theta "$D/database.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--adaptive-theta, positives of another dimension" 1 "dimension 12" "$T/o.slem" slem-negstats -q --depth 2 --adaptive-theta "$G/pos.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "--adaptive-theta, no positives" 1 "empty.fvecs: no vectors" "$T/o.slem" slem-negstats -q --depth 2 --adaptive-theta "$T/empty.fvecs" -o "$T/o.slem" "$D/negatives.fvecs"
expect_fail "nubeta --classifier" 2 "no --classifier" "$T/o.fvecs" slem-encode -q -c "$T/nb2.slem" --classifier -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "nubeta --basic" 2 "--basic needs a full linear cache" "$T/o.fvecs" slem-encode -q -c "$T/nb2.slem" --basic -o "$T/o.fvecs" "$D/queries.fvecs"
expect_fail "nubeta, wrong dimension" 1 "dimension" "$T/o.fvecs" slem-encode -q -c "$T/nb2.slem" -o "$T/o.fvecs" "$G/pos.fvecs"

finish cli-variants
