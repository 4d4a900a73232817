#!/bin/sh
# make demo: the whole pipeline on the digits shipped in testdata/digits (scikit-learn's
# bundled copy of the UCI handwritten digits, 8x8 pixels, values 0..16).
set -eu
BIN=$(pwd)/bin
D=$(pwd)/testdata/digits
W=$(mktemp -d "${TMPDIR:-/tmp}/slem-demo.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
LAMBDA_REL=${LAMBDA_REL:-100}

echo "== slem demo: 697 negatives, 1000 database images, 100 queries, d = 64"
echo "\$ slem-negstats --lambda-rel $LAMBDA_REL -o neg.slem negatives.fvecs"
"$BIN/slem-negstats" -q --lambda-rel "$LAMBDA_REL" -o "$W/neg.slem" "$D/negatives.fvecs"
echo "\$ slem-encode -c neg.slem -o db.fvecs database.fvecs"
"$BIN/slem-encode" -q -c "$W/neg.slem" -o "$W/db.fvecs" "$D/database.fvecs"
echo "\$ slem-encode -c neg.slem queries.fvecs | slem-match -d db.fvecs -k 10 --query-ids ... --db-ids ..."
"$BIN/slem-encode" -q -c "$W/neg.slem" "$D/queries.fvecs" |
  "$BIN/slem-match" -d "$W/db.fvecs" -k 10 --query-ids "$D/queries.ids" --db-ids "$D/database.ids" \
    -o "$W/slem.tsv"
"$BIN/slem-match" --normalize -d "$D/database.fvecs" -k 10 --query-ids "$D/queries.ids" \
  --db-ids "$D/database.ids" -o "$W/cosine.tsv" "$D/queries.fvecs"

# labels by id, to show whether each result is the query's digit
paste "$D/queries.ids" "$D/queries.labels" >"$W/labels"
paste "$D/database.ids" "$D/database.labels" >>"$W/labels"
echo
echo "Top 5 of the first 3 queries (query, rank, id, score, digit of the result / of the query):"
awk -F '\t' 'NR == FNR { lab[$1] = $2; next }
  $2 <= 5 && ++q <= 15 { printf "%s\t%s\t%s\t%s\t%s/%s%s\n", $1, $2, $3, $4, lab[$3], lab[$1], lab[$3] == lab[$1] ? "" : "  (wrong digit)" }' \
  "$W/labels" "$W/slem.tsv"
echo
for run in slem cosine; do
  awk -F '\t' -v run="$run" 'NR == FNR { lab[$1] = $2; next }
    { n++; if (lab[$3] == lab[$1]) hit++ }
    END { printf "precision@10 of %-6s over %d queries: %.4f\n", run, n / 10, hit / n }' "$W/labels" "$W/$run.tsv"
done
