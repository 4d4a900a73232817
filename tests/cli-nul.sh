#!/bin/sh
# shellcheck disable=SC2086 # $LABELS holds two options and their files, split on purpose
# A NUL byte inside a line of any line-oriented input is an error naming the file and the
# line (it used to cut the line short silently): text vectors, ids (slem-match, slem-esvm,
# slem-encode, slem-expand), database lists, calibrations, labels and groups, qrels
# (slem-eval's and trec_eval's readers), junk lists, the revisited protocol's ground truth,
# slem-report's query lists, and rankings as slem-eval, slem-merge, slem-expand and
# slem-report read them; each from a file and from a pipe, with exit status 1 and no
# output left. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
ES=$TOP/testdata/esvm
# nul SRC DST: DST is SRC with a NUL byte and a last field after line 3 ("1 2 3 4" becomes
# "1 2 3 4<NUL> 7"): read as a C string, the line lost its end silently
nul() {
  { head -n 2 "$1"; sed -n 3p "$1" | tr -d '\n'; printf '\000 7\n'; tail -n +4 "$1"; } >"$2"
}
# col FILE: the column of that NUL (the bytes before it, plus one)
col() { head -n 3 "$1" | tail -n 1 | tr '\000' '\n' | head -n 1 | wc -c | tr -d ' '; }
# both NAME FILE OUT CMD...: CMD with FILE (a path holding a NUL in line 3) fails naming
# it; then again with FILE fed through a pipe, read as /dev/stdin ("<stdin>" for "-")
both() {
  b_name=$1 b_file=$2 b_out=$3; shift 3
  c=$(col "$b_file")
  expect_fail "$b_name, file" 1 "$b_file: line 3: a NUL byte (column $c): not a text line" "$b_out" "$@"
  args=""
  for a in "$@"; do
    if [ "$a" = "$b_file" ]; then a=/dev/stdin; fi
    args="$args '$a'"
  done
  expect_fail "$b_name, pipe" 1 "/dev/stdin: line 3: a NUL byte (column $c): not a text line" "$b_out" \
    sh -c "cat '$b_file' | $args"
}

# a small synthetic set: database row j has label j % 10, query q label q % 10
awk -v T="$T" 'BEGIN {
  for (j = 0; j < 20; j++) { print j % 10 > (T "/db.labels"); print "d" j > (T "/db.ids")
    printf "%d %d %d %d\n", j % 10, 1, j % 3, 2 > (T "/db.txt") }
  for (q = 0; q < 6; q++) {
    L = q % 10; print L > (T "/q.labels"); print "q" q > (T "/q.ids")
    printf "%d %d %d %d\n", L, 1, q % 3, 2 > (T "/q.txt")
    print q, L + 10 > (T "/easy"); print q, L > (T "/hard"); print q, (L + 1) % 10 > (T "/junk")
    print q " 0 " L " 1" > (T "/qrels"); print q " 0 " (L + 10) " 1" > (T "/qrels")
    for (r = 1; r <= 4; r++) {
      id = r <= 2 ? L + 10 * (r - 1) : L + 1 + 10 * (r - 3); s = (128 - r) / 128
      printf "%d\t%d\t%d\t%.9g\n", q, r, id, s > (T "/rank.tsv")
      printf "%d Q0 %d %d %.9g run\n", q, id, r, s > (T "/rank.trec")
    }
  }
}'
slem-match -k 4 --json-lines -d "$T/db.txt" "$T/q.txt" >"$T/rank.jsonl" 2>/dev/null ||
  slem-match -k 4 -F jsonl -d "$T/db.txt" -o "$T/rank.jsonl" "$T/q.txt"
LABELS="--query-labels $T/q.labels --db-labels $T/db.labels"
# the clean inputs work, so that each failure below is the NUL's
# shellcheck disable=SC2086
check "clean eval" slem-eval $LABELS --junk "$T/junk" "$T/rank.tsv"
check "clean trec-compat" slem-eval --trec-compat --qrels "$T/qrels" "$T/rank.trec"
check "clean protocol" slem-eval --protocol medium --easy "$T/easy" --hard "$T/hard" "$T/rank.jsonl"
check "clean match" slem-match -k 2 --query-ids "$T/q.ids" --db-ids "$T/db.ids" -d "$T/db.txt" "$T/q.txt"
for f in db.labels q.labels db.ids q.ids db.txt q.txt easy hard junk qrels rank.tsv rank.trec rank.jsonl; do
  nul "$T/$f" "$T/nul.$f"
done

# ---- vectors as text, ids, lists, calibrations ----
both "text queries" "$T/nul.q.txt" "$T/o.tsv" slem-match -k 2 -f text -d "$T/db.txt" -o "$T/o.tsv" "$T/nul.q.txt"
expect_fail "text queries, stdin" 1 "<stdin>: line 3: a NUL byte (column" "$T/o.tsv" \
  sh -c "cat '$T/nul.q.txt' | slem-match -k 2 -f text -d '$T/db.txt' -o '$T/o.tsv'"
both "text database" "$T/nul.db.txt" "$T/o.tsv" slem-match -k 2 -f text -d "$T/nul.db.txt" -o "$T/o.tsv" "$T/q.txt"
both "query ids" "$T/nul.q.ids" "$T/o.tsv" slem-match -k 2 --query-ids "$T/nul.q.ids" -d "$T/db.txt" -o "$T/o.tsv" "$T/q.txt"
both "database ids" "$T/nul.db.ids" "$T/o.tsv" slem-match -k 2 --db-ids "$T/nul.db.ids" -d "$T/db.txt" -o "$T/o.tsv" "$T/q.txt"
printf '%s\n' "$T/db.txt" "$T/db.txt" "$T/db.txt" >"$T/list"
nul "$T/list" "$T/nul.list"
both "database list" "$T/nul.list" "$T/o.tsv" slem-match -k 2 -D "$T/nul.list" -o "$T/o.tsv" "$T/q.txt"
nul "$ES/calib-digits20.txt" "$T/nul.cal"
both "calibration" "$T/nul.cal" "$T/o.tsv" slem-match --calibration "$T/nul.cal" -k 5 -d "$D/database.fvecs" \
  -o "$T/o.tsv" "$ES/clf-digits20.fvecs"
nul "$ES/digits-q20.labels" "$T/nul.elabels"
both "exemplar labels" "$T/nul.elabels" "$T/o.txt" slem-calibrate -q -c "$ES/clf-digits20.fvecs" \
  --exemplar-labels "$T/nul.elabels" --positives "$D/validation.fvecs" \
  --positive-labels "$D/validation.labels" -o "$T/o.txt"

nul "$T/q.labels" "$T/nul.groups"
both "esvm ids" "$T/nul.q.ids" "$T/o.txt" slem-esvm -q --ids "$T/nul.q.ids" -n "$T/db.txt" -F text -o "$T/o.txt" "$T/q.txt"
slem-negstats -q -o "$T/neg.slem" "$T/db.txt"
both "encode ids" "$T/nul.q.ids" "$T/o.slem" slem-encode -q -c "$T/neg.slem" --ids "$T/nul.q.ids" -o "$T/o.slem" "$T/q.txt"
both "encode groups" "$T/nul.groups" "$T/o.txt" slem-encode -q -c "$T/neg.slem" --groups "$T/nul.groups" -F text -o "$T/o.txt" "$T/q.txt"

# ---- ground truth ----
both "query labels" "$T/nul.q.labels" "$T/o.txt" slem-eval --query-labels "$T/nul.q.labels" --db-labels "$T/db.labels" -o "$T/o.txt" "$T/rank.tsv"
both "database labels" "$T/nul.db.labels" "$T/o.txt" slem-eval --query-labels "$T/q.labels" --db-labels "$T/nul.db.labels" -o "$T/o.txt" "$T/rank.tsv"
both "junk" "$T/nul.junk" "$T/o.txt" slem-eval --query-labels "$T/q.labels" --db-labels "$T/db.labels" --junk "$T/nul.junk" -o "$T/o.txt" "$T/rank.tsv"
both "qrels" "$T/nul.qrels" "$T/o.txt" slem-eval --qrels "$T/nul.qrels" -o "$T/o.txt" "$T/rank.trec"
both "qrels, trec-compat" "$T/nul.qrels" "$T/o.txt" slem-eval --trec-compat --qrels "$T/nul.qrels" -o "$T/o.txt" "$T/rank.trec"
both "easy" "$T/nul.easy" "$T/o.txt" slem-eval --protocol medium --easy "$T/nul.easy" --hard "$T/hard" -o "$T/o.txt" "$T/rank.tsv"
both "hard" "$T/nul.hard" "$T/o.txt" slem-eval --protocol hard --easy "$T/easy" --hard "$T/nul.hard" -o "$T/o.txt" "$T/rank.tsv"

# ---- rankings, as each tool reads them ----
for f in tsv trec jsonl; do
  both "eval $f" "$T/nul.rank.$f" "$T/o.txt" slem-eval $LABELS -o "$T/o.txt" "$T/nul.rank.$f"
  expect_fail "eval $f, stdin" 1 "<stdin>: line 3: a NUL byte (column" "$T/o.txt" \
    sh -c "cat '$T/nul.rank.$f' | slem-eval $LABELS -o '$T/o.txt'"
  both "trec-compat $f" "$T/nul.rank.$f" "$T/o.txt" slem-eval --trec-compat --qrels "$T/qrels" -o "$T/o.txt" "$T/nul.rank.$f"
  both "protocol $f" "$T/nul.rank.$f" "$T/o.txt" slem-eval --protocol easy --easy "$T/easy" --hard "$T/hard" -o "$T/o.txt" "$T/nul.rank.$f"
  both "merge $f" "$T/nul.rank.$f" "$T/o.$f" slem-merge -k 2 -o "$T/o.$f" "$T/nul.rank.$f"
  both "report $f" "$T/nul.rank.$f" "$T/o.html" slem-report $LABELS -o "$T/o.html" "$T/nul.rank.$f"
  both "expand $f" "$T/nul.rank.$f" "$T/o.txt" slem-expand -d "$T/db.txt" -n 1 -F text -o "$T/o.txt" -r "$T/nul.rank.$f" "$T/q.txt"
done
# the queries a report shows, the ids that expand names rows by
printf '0\n1\n2\n' >"$T/shown"
nul "$T/shown" "$T/nul.shown"
both "report queries" "$T/nul.shown" "$T/o.html" slem-report $LABELS --queries "$T/nul.shown" -o "$T/o.html" "$T/rank.tsv"
both "expand query ids" "$T/nul.q.ids" "$T/o.txt" slem-expand -d "$T/db.txt" -n 1 -F text -o "$T/o.txt" \
  --query-ids "$T/nul.q.ids" -r "$T/rank.tsv" "$T/q.txt"
both "expand database ids" "$T/nul.db.ids" "$T/o.txt" slem-expand -d "$T/db.txt" -n 1 -F text -o "$T/o.txt" \
  --db-ids "$T/nul.db.ids" -r "$T/rank.tsv" "$T/q.txt"
expect_fail "report, stdin" 1 "<stdin>: line 3: a NUL byte (column" "$T/o.html" \
  sh -c "cat '$T/nul.rank.tsv' | slem-report $LABELS -o '$T/o.html' -"

# an existing output is left as it was
echo keep >"$T/keep"
expect_fail "existing output kept" 1 "nul.rank.tsv: line 3: a NUL byte" - slem-eval $LABELS -o "$T/keep" "$T/nul.rank.tsv"
[ "$(cat "$T/keep")" = keep ] && ok || bad "an existing output was changed"

finish cli-nul
