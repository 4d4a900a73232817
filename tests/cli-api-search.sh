#!/bin/sh
# The C API's search and evaluation (slem.h: slem_search, slem_search_kernel, slem_evaluate,
# slem_evaluate_file; issue 45) against the tools, through build/tests/api_search_driver,
# which reads the fvecs files into arrays itself: D and I the very payloads of
# `slem-match -F npy`'s OUT.D.npy and OUT.I.npy (inner product, cosine, float64 input, k
# beyond the database, threads 1 and 2, 10 000 queries, kernel SLEM's exact similarity),
# and the measures the values `slem-eval --json` prints (labels and qrels, an array and a
# ranking file). Run from the top of the tree after `make build/tests/api_search_driver`.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
DRV=$TOP/build/tests/api_search_driver
[ -x "$DRV" ] || { bad "no $DRV (make build/tests/api_search_driver)"; finish cli-api-search; exit 1; }

# payload FILE.npy: its bytes after the npy header (version 1: 10 + HEADER_LEN)
payload() {
  tail -c +$((11 + $(od -An -tu2 -j8 -N2 "$1"))) "$1"
}

# same_as_match NAME OUT: the driver's OUT.D and OUT.I are the payloads of slem-match's
# $T/m.D.npy and $T/m.I.npy
same_as_match() {
  if payload "$T/m.I.npy" | cmp -s - "$2.I" && payload "$T/m.D.npy" | cmp -s - "$2.D"; then ok
  else bad "$1: D and I differ from slem-match -F npy's"; fi
}

# ---- search on the demo digits: the bytes of slem-match -F npy ----
for k in 1 10 100; do
  check "match k $k" slem-match -k $k -F npy -o "$T/m" -d "$D/database.fvecs" "$D/queries.fvecs"
  for t in 1 2; do
    check "search k $k -t $t" "$DRV" search -t $t $k "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
    same_as_match "search k $k -t $t" "$T/a"
  done
done
# float64 arrays: the same rows (the fvecs values are float32, so exactly the same)
check "search float64" "$DRV" search -f64 100 "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
same_as_match "search float64" "$T/a"
# cosine (SLEM_SEARCH_NORMALIZE) = slem-match -n
check "match -n" slem-match -n -k 20 -F npy -o "$T/m" -d "$D/database.fvecs" "$D/queries.fvecs"
for t in 1 2; do
  check "search normalize -t $t" "$DRV" search -n -t $t 20 "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
  same_as_match "search normalize -t $t" "$T/a"
done
# k beyond the database (1000 rows): the rest of each row is I -1, D -FLT_MAX, as slem-match
# pads its npy ranking and faiss.IndexFlatIP its D and I
check "match k 1200" slem-match -k 1200 -F npy -o "$T/m" -d "$D/database.fvecs" "$D/queries.fvecs"
check "search k 1200" "$DRV" search -t 2 1200 "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
same_as_match "search k 1200" "$T/a"
# the padding itself: the last 200 columns of every row, by value
od -An -v -t d8 -w8 "$T/a.I" | awk 'NR % 1200 == 0 || NR % 1200 > 1000 { if ($1 != -1) bad++ }
  NR % 1200 >= 1 && NR % 1200 <= 1000 { if ($1 < 0) bad++ } END { exit bad > 0 }' && ok ||
  bad "k 1200: I is not 1000 rows then 200 times -1"
[ "$(od -An -v -t x4 -w4 "$T/a.D" | awk 'NR % 1200 == 0 || NR % 1200 > 1000' | sort -u)" = " ff7fffff" ] &&
  ok || bad "k 1200: D's padding is not -FLT_MAX"

# ---- 10 000 queries: beyond the query block (2 048) and the tiles, threads 1 and 2 ----
check "search 10000 queries" "$DRV" search -t 1 -r 10000 -w "$T/q10k.fvecs" 10 "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
check "match 10000 queries" slem-match -t 2 -k 10 -F npy -o "$T/m" -d "$D/database.fvecs" "$T/q10k.fvecs"
same_as_match "10000 queries -t 1" "$T/a"
check "search 10000 queries -t 2" "$DRV" search -t 2 -r 10000 10 "$D/queries.fvecs" "$D/database.fvecs" "$T/b"
same_as_match "10000 queries -t 2" "$T/b"

# ---- kernel SLEM's exact similarity: slem-match -c CACHE ----
check "kernel cache" slem-negstats -q --kernel rbf:g=1 --rank 64 --lambda-rel 100 -o "$T/rbf.slem" "$D/negatives.fvecs"
check "match -c" slem-match -c "$T/rbf.slem" -k 50 -F npy -o "$T/m" -d "$D/database.fvecs" "$D/queries.fvecs"
for t in 1 2; do
  check "search_kernel -t $t" "$DRV" search -c "$T/rbf.slem" -t $t 50 "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
  same_as_match "search_kernel -t $t" "$T/a"
done
# chi2, a kernel of histograms: the same bytes, and a negative value refused before the
# search, named by its row and column
check "chi2 cache" slem-negstats -q --kernel chi2 --rank 32 --lambda-rel 100 -o "$T/chi2.slem" "$D/negatives.fvecs"
check "match -c chi2" slem-match -c "$T/chi2.slem" -k 20 -F npy -o "$T/m" -d "$D/database.fvecs" "$D/queries.fvecs"
check "search_kernel chi2" "$DRV" search -c "$T/chi2.slem" -t 2 20 "$D/queries.fvecs" "$D/database.fvecs" "$T/a"
same_as_match "search_kernel chi2" "$T/a"
cp "$D/queries.fvecs" "$T/neg.fvecs"
printf '\000\000\200\277' | dd of="$T/neg.fvecs" bs=1 seek=$((3 * 260 + 4 + 5 * 4)) conv=notrunc 2>/dev/null
expect_fail "search_kernel chi2 of a negative value" 1 "queries: row 3, column 5: -1 is negative; the chi2 kernel needs histograms" "$T/x.D" \
  "$DRV" search -c "$T/chi2.slem" 5 "$T/neg.fvecs" "$D/database.fvecs" "$T/x"
expect_fail "search_kernel normalize" 1 "SLEM_SEARCH_NORMALIZE does not go with a kernel cache" "$T/x.D" \
  "$DRV" search -n -c "$T/chi2.slem" 5 "$D/queries.fvecs" "$D/database.fvecs" "$T/x"
# a linear cache is refused by name
check "linear cache" slem-negstats -q -o "$T/lin.slem" "$D/negatives.fvecs"
expect_fail "search_kernel of a linear cache" 1 "a cache of kind linear: the exact similarity takes a kernel cache" "$T/x.D" \
  "$DRV" search -c "$T/lin.slem" 5 "$D/queries.fvecs" "$D/database.fvecs" "$T/x"

# ---- evaluate: the values slem-eval --json prints ----
# json_value KEY FILE: the number slem-eval --json printed for KEY
json_value() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\([-0-9.e+]*\),*\$/\1/p" "$2" | head -1; }
# same_values NAME DRIVER_OUT JSON "MEASURE=KEY ...": every measure's value is the key's, to
# the 15 significant digits that slem-eval --json prints (cJSON's %.15g)
same_values() {
  for pair in $4; do
    v=$(awk -F '\t' -v m="${pair%%=*}" '$1 == m { print $2 }' "$2")
    j=$(json_value "${pair#*=}" "$3")
    if [ -n "$v" ] && [ -n "$j" ] && awk -v a="$v" -v b="$j" 'BEGIN { exit !(sprintf("%.15g", a) == sprintf("%.15g", b)) }'; then ok
    else bad "$1: ${pair%%=*} is '$v', slem-eval printed '$j' for ${pair#*=}"; fi
  done
}
LABELS="--query-labels $D/queries.labels --db-labels $D/database.labels"
MEAS="map P_1 P_5 P_10 recall_100 recall_10 ndcg_cut.10 recip_rank Rprec bpref P.20"
KEYS10="map=map P_1=p@1 P_5=p@5 P_10=p@10 recall_10=r@10"
KEYS="map=map P_1=p@1 P_5=p@5 P_10=p@10 recall_100=r@100 ndcg_cut.10=ndcg_cut_10 recip_rank=recip_rank Rprec=Rprec bpref=bpref P.20=P_20"
check "match for eval" slem-match -k 150 -F npy -o "$T/r" -d "$D/database.fvecs" "$D/queries.fvecs"
# shellcheck disable=SC2086
check "slem-eval labels" slem-eval $LABELS --json -M ndcg_cut.10 -M recip_rank -M Rprec -M bpref -M P.20 -o "$T/e.json" "$T/r.I.npy"
# shellcheck disable=SC2086
check "slem-eval labels -k 10" slem-eval $LABELS --json -k 10 -o "$T/e10.json" "$T/r.I.npy"
# shellcheck disable=SC2086
check "evaluate labels" "$DRV" eval -q "$D/queries.labels" -d "$D/database.labels" -i "$T/r.I.npy" $MEAS
cp "$T/out" "$T/v"
same_values "evaluate labels" "$T/v" "$T/e.json" "$KEYS"
same_values "evaluate labels recall_10" "$T/v" "$T/e10.json" "$KEYS10"
# qrels whose ids are the rows: made here from the labels (graded 1), the same numbers
awk 'NR == FNR { db[NR - 1] = $1; n = NR; next } { for (d = 0; d < n; d++) if (db[d] == $1) print FNR - 1, 0, d, 1 }' \
  "$D/database.labels" "$D/queries.labels" >"$T/rows.qrels"
check "slem-eval qrels" slem-eval --qrels "$T/rows.qrels" --json -M ndcg_cut.10 -M recip_rank -M Rprec -M bpref -M P.20 -o "$T/q.json" "$T/r.I.npy"
# shellcheck disable=SC2086
check "evaluate qrels" "$DRV" eval -Q "$T/rows.qrels" -i "$T/r.I.npy" $MEAS
same_values "evaluate qrels" "$T/out" "$T/q.json" "$KEYS"
# graded qrels and a TREC run of row ids (testdata/trec): a ranking file
R=$TOP/testdata/trec
check "slem-eval graded" slem-eval --qrels "$R/digits.qrels" --json -M ndcg_cut.10 -M recip_rank -M Rprec -M bpref -M P.20 -o "$T/g.json" "$R/digits.run"
# shellcheck disable=SC2086
check "evaluate_file graded" "$DRV" evalfile -Q "$R/digits.qrels" "$R/digits.run" $MEAS
same_values "evaluate_file graded" "$T/out" "$T/g.json" "$KEYS"
# the npy ranking as a file, with labels
# shellcheck disable=SC2086
check "evaluate_file labels" "$DRV" evalfile -q "$D/queries.labels" -d "$D/database.labels" "$T/r.I.npy" $MEAS
same_values "evaluate_file labels" "$T/out" "$T/e.json" "$KEYS"

# ---- refusals: a status, the message, nothing written ----
expect_fail "k 0" 1 "k 0: ask for at least one result" "$T/x.D" "$DRV" search 0 "$D/queries.fvecs" "$D/database.fvecs" "$T/x"
expect_fail "dimensions differ" 1 "database: 12 columns, but the queries' dimension is 64" "$T/x.D" "$DRV" search 5 "$D/queries.fvecs" "$TOP/testdata/golden/db.fvecs" "$T/x"
expect_fail "unknown measure" 1 "unknown measure 'mAP'" - "$DRV" eval -Q "$T/rows.qrels" -i "$T/r.I.npy" map mAP
expect_fail "row out of range" 1 "is not a row of the database (0 to 99, or -1 for none)" - \
  "$DRV" eval -q "$D/queries.labels" -d "$TOP/testdata/digits/validation.labels" -i "$T/r.I.npy" map

finish cli-api-search
