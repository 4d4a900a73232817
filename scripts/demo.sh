#!/bin/sh
# make demo: the whole pipeline on the digits shipped in testdata/digits (scikit-learn's
# bundled copy of the UCI handwritten digits, 8x8 pixels, values 0..16): choose lambda on
# validation queries, encode, rank the test queries, and compare the mAP with plain cosine.
# The page goes to demo-report.html, or to SLEM_DEMO_REPORT (tests/demo.sh).
set -eu
TOP=$(pwd)
REPORT=${SLEM_DEMO_REPORT:-$TOP/demo-report.html}
BIN=$TOP/bin
D=$TOP/testdata/digits
W=$(mktemp -d "${TMPDIR:-/tmp}/slem-demo.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
PATH=$BIN:$PATH
# the labels' options as functions: the tree's path is never split or globbed
labels() { "$@" --query-labels "$D/queries.labels" --db-labels "$D/database.labels"; }

echo "== slem demo on the digits: 597 negatives, 1000 database images, 100 validation"
echo "   and 100 test queries, d = 64"
echo
echo "1. lambda by validation mAP (tools/slem-tune):"
"$TOP/tools/slem-tune" -g "0.01 0.1 1 10 100 1000" -o "$W/neg.slem" -n "$D/negatives.fvecs" \
  -q "$D/validation.fvecs" -d "$D/database.fvecs" \
  --query-labels "$D/validation.labels" --db-labels "$D/database.labels" 2>/dev/null | sed 's/^/   /'
lambda=$(slem-negstats --info "$W/neg.slem" | sed -n 's/.*"lambda_rel":[[:space:]]*\([^,]*\),*/\1/p')
echo
echo "2. the pipeline with the best, --lambda-rel $lambda:"
echo "   \$ slem-encode -c neg.slem -o db.fvecs database.fvecs"
slem-encode -q -c "$W/neg.slem" -o "$W/db.fvecs" "$D/database.fvecs"
echo "   \$ slem-encode -c neg.slem queries.fvecs | slem-match -d db.fvecs -k 1000 --query-ids ... --db-ids ..."
slem-encode -q -c "$W/neg.slem" "$D/queries.fvecs" |
  slem-match -d "$W/db.fvecs" -k 1000 --query-ids "$D/queries.ids" --db-ids "$D/database.ids" \
    -o "$W/slem.tsv"
slem-match --normalize -d "$D/database.fvecs" -k 1000 --query-ids "$D/queries.ids" \
  --db-ids "$D/database.ids" -o "$W/cosine.tsv" "$D/queries.fvecs"

# labels by id, to show whether each result is the query's digit
paste "$D/queries.ids" "$D/queries.labels" >"$W/labels"
paste "$D/database.ids" "$D/database.labels" >>"$W/labels"
echo
echo "   top 5 of the first 3 queries (query, rank, id, score, digit found / digit asked):"
awk -F '\t' 'NR == FNR { lab[$1] = $2; next }
  $2 <= 5 && ++q <= 15 { printf "   %s\t%s\t%s\t%s\t%s/%s%s\n", $1, $2, $3, $4, lab[$3], lab[$1], lab[$3] == lab[$1] ? "" : "  (wrong digit)" }' \
  "$W/labels" "$W/slem.tsv"
echo
echo "3. slem-eval on the 100 test queries:"
printf '   %-22s %-9s %-9s %s\n' ranking "mAP" "P@10" "mAP (oxford)"
for run in slem cosine; do
  labels slem-eval --query-ids "$D/queries.ids" --db-ids "$D/database.ids" -o "$W/$run.eval" "$W/$run.tsv"
  ox=$(labels slem-eval --ap oxford --query-ids "$D/queries.ids" --db-ids "$D/database.ids" "$W/$run.tsv" |
    awk -F '\t' '$1 == "mAP" { print $2 }')
  name="SLEM, lambda_rel $lambda"
  [ "$run" = cosine ] && name="cosine on raw pixels"
  awk -F '\t' -v name="$name" -v ox="$ox" '{ v[$1] = $2 } END { printf "   %-22s %-9s %-9s %s\n", name, v["mAP"], v["P@10"], ox }' "$W/$run.eval"
done

echo
echo "4. kernel SLEM beside it: RBF, rank 256, gamma and lambda chosen on the validation queries:"
"$TOP/tools/slem-tune" -K "rbf:g=1 rbf:g=4" -g "100 1000" -r 256 -o "$W/rbf.slem" \
  -n "$D/negatives.fvecs" -q "$D/validation.fvecs" -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels" 2>/dev/null |
  sed 's/^/   /'
kspec=$(slem-negstats --info "$W/rbf.slem" | sed -n 's/.*"kernel":[[:space:]]*"\([^"]*\)".*/\1/p')
echo "   \$ slem-match -c rbf.slem -k 1000 -d database.fvecs queries.fvecs   (exact similarity)"
slem-match -c "$W/rbf.slem" -k 1000 -d "$D/database.fvecs" -o "$W/kexact.tsv" "$D/queries.fvecs"
slem-encode -q -c "$W/rbf.slem" -o "$W/kdb.fvecs" "$D/database.fvecs"
slem-encode -q -c "$W/rbf.slem" "$D/queries.fvecs" | slem-match -k 1000 -d "$W/kdb.fvecs" -o "$W/kexplicit.tsv"
echo
echo "   on the 100 test queries ($kspec):"
printf '   %-34s %s\n' ranking mAP
for run in kexact kexplicit; do
  name="kernel SLEM, exact similarity"
  [ "$run" = kexplicit ] && name="kernel SLEM, explicit descriptors"
  printf '   %-34s %s\n' "$name" "$(labels slem-eval "$W/$run.tsv" | awk -F '\t' '$1 == "mAP" { print $2 }')"
done

echo
echo "5. the page: slem-report, cosine against SLEM, with the digits' pictures"
sh "$TOP/scripts/demo-report.sh" "$REPORT" "$W/cosine.tsv" "$W/slem.tsv" "SLEM, lambda_rel $lambda"
echo "   wrote $REPORT: open it in a browser"
