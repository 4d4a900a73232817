#!/bin/sh
# Writes testdata/eval/permtest.txt: p-values of slem-report's paired randomisation test
# by scipy.stats.permutation_test (scripts/permtest-ref.py, Debian's python3-scipy), for
# the cases of tests/cli-report.sh. Two runs mixed from the digits' rankings: run a is
# cosine-full.tsv on queries below CUT and slem-top100.tsv from CUT on, run b the other way
# round; queries below N only. Needs bin/slem-eval (make). Run from the top of the tree:
#   sh scripts/gen-permtest.sh >testdata/eval/permtest.txt
set -eu
D=testdata/digits
E=testdata/eval
T=$(mktemp -d "${TMPDIR:-/tmp}/slem-permtest.XXXXXX")
trap 'rm -rf "$T"' EXIT
# mix A B N CUT: A's lines of the queries below CUT, B's from CUT to N (as the test does)
mix() {
  awk -F'\t' -v n="$3" -v cut="$4" 'FNR == 1 { f++ } $1 !~ /^[0-9]+$/ { next }
    $1 + 0 < n && ((f == 1 && $1 + 0 < cut) || (f == 2 && $1 + 0 >= cut))' "$1" "$2"
}
cat <<'HEAD'
# p-values of the paired randomisation test by scipy.stats.permutation_test, for
# tests/cli-report.sh (slem-report's p against them). Two runs mixed from the digits'
# rankings: run a is cosine-full.tsv on queries below CUT and slem-top100.tsv from CUT on,
# run b the other way round; queries below N only (labels: the first N lines of
# digits/queries.labels). Made by `sh scripts/gen-permtest.sh >testdata/eval/permtest.txt`:
#   slem-eval --per-query ... a.tsv >a.pq; slem-eval --per-query ... b.tsv >b.pq
#   /usr/bin/python3 scripts/permtest-ref.py a.pq b.pq RESAMPLES SEED
# exact: 2^12 <= 10000, every sign flip (slem-report must agree to its 6 printed digits);
# random: scipy from 10^6 random flips, slem-report from its 10000 (within 0.02, five
# standard deviations of its estimate); floor: SLEM against cosine on every query, a gain
# that no random flip of either reaches, so p is scipy's two-sided floor 2 / (10000 + 1)
# (slem-report must agree to its 6 printed digits).
# case N CUT RESAMPLES SEED p
HEAD
while read -r case n cut resamples seed; do
  mix "$E/cosine-full.tsv" "$E/slem-top100.tsv" "$n" "$cut" >"$T/a.tsv"
  mix "$E/slem-top100.tsv" "$E/cosine-full.tsv" "$n" "$cut" >"$T/b.tsv"
  head -n "$n" "$D/queries.labels" >"$T/q.labels"
  for r in a b; do
    bin/slem-eval --per-query --query-labels "$T/q.labels" --db-labels "$D/database.labels" \
      "$T/$r.tsv" >"$T/$r.pq"
  done
  p=$(/usr/bin/python3 scripts/permtest-ref.py "$T/a.pq" "$T/b.pq" "$resamples" "$seed")
  echo "$case $n $cut $resamples $seed $p"
done <<'CASES'
exact 12 6 10000 1
random 100 50 1000000 7
floor 100 100 10000 1
CASES
