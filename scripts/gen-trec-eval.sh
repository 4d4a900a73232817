#!/bin/sh
# Golden files for `slem-eval --trec-compat` printed by trec_eval 10.0 itself: builds
# trec_eval from its sources (https://github.com/usnistgov/trec_eval, tag v10.0 or the
# commit "Updating CHANGELOG for version 10.0", f425365) in a temporary directory, then runs
# it on testdata/trec's runs and qrels for every case of testdata/trec/te-cases.txt and
# writes testdata/trec/expected.te-NAME.txt, less the rbp lines (trec_eval 10.0's m_rbp.c
# reads two uninitialised variables: its value is not defined, and slem-eval does not print
# it), testdata/trec/digits-ranked.run, long.{qrels,run}, long-ranked.run and
# comments.{qrels,run} (see below). Not run by make check (it needs trec_eval's sources);
# tests/cli-trec.sh compares slem-eval with the files it wrote: --trec-compat and
# slem-trec_eval with every case, the default mode (-M, the rank order) with the
# te-default-* cases, whose runs have no ties.
# A case's QRELS and RUN are files of testdata/trec, or many.qrels and many-ranked.run,
# which testdata/trec/many.awk makes here and tests/cli-trec.sh makes again (3000 topics).
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
# long: 3 topics of 1500 results, scores with ties, grades 0 to 3, some judged -1 (in the
# pool, unjudged), many not judged; the rank field 0 (t1), a word (t2) or 1..n (t3)
awk 'BEGIN { for (t = 1; t <= 3; t++) for (i = 1; i <= 1500; i++) {
    h = (i * 7919 + t * 104729) % 1000
    if (h < 300) print "t" t, 0, "doc" i, (h % 4 == 0 ? -1 : h % 4 - (h < 60)) } }' >"$TD/long.qrels"
awk 'BEGIN { for (t = 1; t <= 3; t++) for (i = 1; i <= 1500; i++) {
    r = t == 1 ? 0 : t == 2 ? "rank" : i
    print "t" t, "Q0", "doc" ((i * 37 + t) % 1700 + 1), r, int((1500 - i) / (t + 1)) / 8, "long" } }' >"$TD/long.run"
# long-ranked: long.run in the order of its lines, ranks 1..n and scores 2000 - rank (no ties)
awk '{ n[$1]++; $4 = n[$1]; $5 = 2000 - n[$1]; print }' "$TD/long.run" >"$TD/long-ranked.run"
awk -v what=qrels -f "$TD/many.awk" >"$W/many.qrels"
awk -v what=run -f "$TD/many.awk" >"$W/many-ranked.run"
# comments: edge's qrels and run with lines beginning with '#', which trec_eval skips, where
# trec_eval 10.0 takes them (it fails on two comment lines in a row or one last in qrels)
{ echo "# qrels of the edge cases"; sed -n 1,5p "$TD/edge.qrels"; echo "#q1 0 d9 1"
  sed -n '6,$p' "$TD/edge.qrels"; } >"$TD/comments.qrels"
{ echo "# run edge"; sed -n 1,4p "$TD/edge.run"; echo "#q1 Q0 d9 1 9.5 edge"; echo "#"
  sed -n '5,$p' "$TD/edge.run"; echo "# end"; } >"$TD/comments.run"
"$TE" -v 2>&1 | head -1
grep -v '^#' "$TD/te-cases.txt" | while read -r name qrels base opts; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086 # opts is the case's word list
  q=$TD/$qrels.qrels r=$TD/$base.run
  [ -f "$q" ] || q=$W/$qrels.qrels
  [ -f "$r" ] || r=$W/$base.run
  LC_ALL=C "$TE" $opts "$q" "$r" >"$W/out"
  grep -v '^rbp ' "$W/out" >"$TD/expected.$name.txt"
  echo "expected.$name.txt: $(wc -l <"$TD/expected.$name.txt") lines"
done
