#!/bin/sh
# family-table.sh: mAP of the SLEM family's variants on the demo digits, each at the
# lambda_rel chosen on the validation queries, reported on the test queries (the two sets
# of queries are disjoint; both are ranked against the same database). Run from the top of
# the tree after `make`; prints a Markdown table. Usage: sh scripts/family-table.sh
set -eu
D=testdata/digits
B=bin
W=$(mktemp -d "${TMPDIR:-/tmp}/family-table.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
grid="0.01 0.1 1 10 100 1000 10000 100000"
map() { # map QUERIES.fvecs QLABELS DB.fvecs: mAP (trec) of the cosine ranking (rows normalised)
  $B/slem-match -q --normalize -k 1000 -d "$3" -o "$W/rank.tsv" "$1"
  $B/slem-eval -q --query-labels "$2" --db-labels "$D/database.labels" "$W/rank.tsv" |
    awk -F '\t' '$1 == "mAP" { print $2 }'
}
cache() { # cache VARIANT LAMBDA_REL OUT
  case $1 in
    slem) $B/slem-negstats -q -r "$2" -o "$3" "$D/negatives.fvecs" ;;
    depth:*) $B/slem-negstats -q -r "$2" --depth "${1#depth:}" -o "$3" "$D/negatives.fvecs" ;;
    alpha:*) $B/slem-negstats -q -r "$2" --eigen -o "$3" "$D/negatives.fvecs" ;;
    pca:*) $B/slem-negstats -q -r "$2" --pca "${1#pca:}" -o "$3" "$D/negatives.fvecs" ;;
  esac
}
encode() { # encode VARIANT CACHE IN OUT
  case $1 in
    alpha:*) $B/slem-encode -q -c "$2" --alpha "${1#alpha:}" -F fvecs -o "$4" "$3" ;;
    *) $B/slem-encode -q -c "$2" -F fvecs -o "$4" "$3" ;;
  esac
}
echo "| variant | lambda_rel (validation) | validation mAP | test mAP |"
echo "|---|---|---|---|"
v=$(map "$D/validation.fvecs" "$D/validation.labels" "$D/database.fvecs")
t=$(map "$D/queries.fvecs" "$D/queries.labels" "$D/database.fvecs")
echo "| cosine | - | $v | $t |"
for var in slem depth:2 depth:3 alpha:-0.5 alpha:0 alpha:-0.75 pca:8 pca:16 pca:32; do
  best=-1 bestr=""
  for r in $grid; do
    cache "$var" "$r" "$W/c.slem" 2>/dev/null || continue
    encode "$var" "$W/c.slem" "$D/database.fvecs" "$W/db.fvecs"
    encode "$var" "$W/c.slem" "$D/validation.fvecs" "$W/v.fvecs"
    m=$(map "$W/v.fvecs" "$D/validation.labels" "$W/db.fvecs")
    if awk -v a="$m" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$m bestr=$r; fi
  done
  cache "$var" "$bestr" "$W/c.slem"
  encode "$var" "$W/c.slem" "$D/database.fvecs" "$W/db.fvecs"
  encode "$var" "$W/c.slem" "$D/queries.fvecs" "$W/q.fvecs"
  t=$(map "$W/q.fvecs" "$D/queries.labels" "$W/db.fvecs")
  echo "| $var | $bestr | $best | $t |"
done
