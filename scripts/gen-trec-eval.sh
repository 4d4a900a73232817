#!/bin/sh
# Golden files for `slem-eval --trec-compat` printed by trec_eval 10.0 itself: builds
# trec_eval from its sources (https://github.com/usnistgov/trec_eval, tag v10.0 or the
# commit "Updating CHANGELOG for version 10.0", f425365) in a temporary directory, then runs
# it on testdata/trec's runs and qrels for every case of testdata/trec/te-cases.txt and
# writes testdata/trec/expected.te-NAME.txt, less the runid and bpref lines (slem-eval
# prints neither), and testdata/trec/digits-ranked.run (see below). Not run by make check (it needs trec_eval's sources); tests/cli-trec.sh
# compares slem-eval with the files it wrote.
#
# Usage: scripts/gen-trec-eval.sh TREC_EVAL_SOURCE_DIR   (run from the top of the tree)
set -eu
SRC=${1:?usage: scripts/gen-trec-eval.sh TREC_EVAL_SOURCE_DIR}
TD=$(pwd)/testdata/trec
[ -f "$TD/te-cases.txt" ] || { echo "run from the top of the slem tree" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gen-trec-eval.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
cp -R "$SRC"/. "$W/src"
(cd "$W/src" && make >/dev/null)
TE=$W/src/trec_eval
# digits.run with the topics of the qrels only and scores 1000 - rank: trec_eval's order is
# then the rank order, which slem-eval's default mode (-M) follows
awk 'NR == FNR { q[$1] = 1; next } ($1 in q) { $5 = 1000 - $4; print }' "$TD/digits.qrels" \
  "$TD/digits.run" >"$TD/digits-ranked.run"
"$TE" -v 2>&1 | head -1
grep -v '^#' "$TD/te-cases.txt" | while read -r name qrels base opts; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086 # opts is the case's word list
  LC_ALL=C "$TE" $opts "$TD/$qrels.qrels" "$TD/$base.run" >"$W/out"
  grep -v '^runid \|^bpref ' "$W/out" >"$TD/expected.$name.txt"
  echo "expected.$name.txt: $(wc -l <"$TD/expected.$name.txt") lines"
done
