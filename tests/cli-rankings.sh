#!/bin/sh
# CLI tests of the ranking formats as one family: every tool that reads rankings (slem-eval,
# slem-merge, slem-expand, slem-report) reads every format slem-match and slem-merge write,
# npy pairs given by any of their names included, on 10 000 queries (past every batch and
# progress step); merges of npy shards byte for byte the whole search; the pipes that a
# format allows, and the message where it does not. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
X=$TOP/testdata/expand
same() { # same NAME A B: files A and B are identical
  if cmp -s "$2" "$3"; then ok; else bad "$1: $(cmp "$2" "$3" 2>&1 | head -1)"; fi
}

# 10 000 queries: the digits' 100, a hundred times over, and their labels
i=0
while [ $i -lt 100 ]; do cat "$D/queries.fvecs"; i=$((i + 1)); done >"$T/q.fvecs"
i=0
while [ $i -lt 100 ]; do cat "$D/queries.labels"; i=$((i + 1)); done >"$T/q.labels"
LABELS="--query-labels $T/q.labels --db-labels $D/database.labels"
DB=$D/database.fvecs

# ---- slem-match writes, slem-eval reads: the same numbers from every format and name ----
for f in tsv trec jsonl npy; do
  check "match $f" slem-match -q -t 2 -k 20 -F $f -d "$DB" -o "$T/all.$f" "$T/q.fvecs"
done
[ -s "$T/all.I.npy" ] && [ -s "$T/all.D.npy" ] && ok || bad "npy: no I/D pair"

# ---- slem-match's threads change no byte: the selection's units, taken by the threads from
# one counter, and the writer thread, which writes a block while the next one is scored;
# 10 000 distinct queries (past the block of 2 048), -t 1, 2, 3 and 5, blocks of 1 000, a
# shard of each format ----
awk 'BEGIN { srand(31); for (i = 0; i < 10000; i++) { s = ""
  for (j = 0; j < 64; j++) s = s sprintf("%s%.5f", j ? " " : "", 16 * rand()); print s } }' >"$T/qd.txt"
outs() { if [ "$1" = npy ]; then echo "$2.I.npy $2.D.npy"; else echo "$2.$1"; fi; }
for f in tsv jsonl npy; do
  for sh in "" "--shard 1/3"; do
    # shellcheck disable=SC2086
    slem-match -q -t 1 -k 10 -F $f $sh -d "$DB" -o "$T/t1.$f" "$T/qd.txt" 2>"$T/err" || bad "match -t 1 $f $sh: $(cat "$T/err")"
    for o in "-t 2" "-t 3" "-t 5" "-t 3 --query-block 1000" "-t 5 --query-block 999 --tile-rows 300"; do
      # shellcheck disable=SC2086
      slem-match -q $o -k 10 -F $f $sh -d "$DB" -o "$T/tn.$f" "$T/qd.txt" 2>"$T/err" || bad "match $o $f $sh: $(cat "$T/err")"
      set -- $(outs $f "$T/tn")
      for a in $(outs $f "$T/t1"); do same "threads $f $sh $o: $a" "$a" "$1"; shift; done
    done
  done
done
[ "$(wc -l <"$T/t1.tsv")" = 100000 ] && ok || bad "threads: $(wc -l <"$T/t1.tsv") lines, not 100000"
# a write that fails on the writer thread, blocks later (a full device, a closed pipe): a
# clean end, exit status 1 with the reason, or the pipe's signal, never a hang
expect_fail "match to a full device, in blocks" 1 "/dev/full: write: No space left on device" - \
  slem-match -q -t 2 -k 10 --query-block 500 -d "$DB" -o /dev/full "$T/qd.txt"
# the first error in the serial order wins: block 0's write (k 100: its 2 MB fill the 1 MiB
# buffer) fails before block 1's query 1 500 scores beyond float32, though the writer
# thread may report it after; the overflow alone is named when the writes succeed
awk 'NR == 1500 { s = ""; for (j = 1; j <= NF; j++) s = s (j > 1 ? " " : "") ($j * 1e36); print s; next }
  { print }' "$T/qd.txt" >"$T/qbig.txt"
for t in 1 2 5; do
  expect_fail "-t $t: a write error before a later block's overflow" 1 "/dev/full: write: No space left on device" - \
    slem-match -q -t $t -k 100 --query-block 1000 -d "$DB" -o /dev/full "$T/qbig.txt"
  expect_fail "-t $t: the overflow of a later block" 1 "qbig.txt: query 1500, .* is beyond float32" "$T/big.tsv" \
    slem-match -q -t $t -k 100 --query-block 1000 -d "$DB" -o "$T/big.tsv" "$T/qbig.txt"
done
{ slem-match -q -t 2 -k 10 --query-block 500 -d "$DB" "$T/qd.txt" 2>"$T/err"; echo $? >"$T/st"; } |
  head -c 1000 >/dev/null
case $(cat "$T/st") in 1 | 141) ok ;; *) bad "match into a closed pipe: status $(cat "$T/st"): $(cat "$T/err")" ;; esac
# shellcheck disable=SC2086
check "eval tsv" slem-eval $LABELS --per-query -o "$T/eval.tsv" "$T/all.tsv"
[ "$(grep -c . "$T/eval.tsv")" -gt 10000 ] && ok || bad "eval tsv: not every query"
for n in all.trec all.jsonl all.npy all.I.npy all.D.npy all; do
  # shellcheck disable=SC2086
  check "eval $n" slem-eval $LABELS --per-query -o "$T/eval.$n" "$T/$n"
  same "eval $n = eval tsv" "$T/eval.$n" "$T/eval.tsv"
done
# a TREC run written with tabs (six fields): recognised as TREC, from a file or stdin (it
# was taken for tsv: "line 1: 6 fields, expected 4 (...separated by tabs)")
tr ' ' '\t' <"$T/all.trec" >"$T/tabs.trec"
# shellcheck disable=SC2086
check "eval a TREC run with tabs" slem-eval $LABELS --per-query -o "$T/eval.tabs" "$T/tabs.trec"
same "eval a TREC run with tabs = eval tsv" "$T/eval.tabs" "$T/eval.tsv"
# shellcheck disable=SC2086
check "eval a TREC run with tabs from stdin" sh -c 'slem-eval "$@" <"$0"' "$T/tabs.trec" $LABELS --per-query -o "$T/eval.tabs2"
same "eval a TREC run with tabs from stdin = eval tsv" "$T/eval.tabs2" "$T/eval.tsv"
# shellcheck disable=SC2086
check "eval -f npy" slem-eval -f npy $LABELS --per-query -o "$T/eval.f" "$T/all.D.npy"
same "eval -f npy" "$T/eval.f" "$T/eval.tsv"
# pipes: the text formats through stdin; npy refused with the reason
for f in tsv trec jsonl; do
  # shellcheck disable=SC2086
  slem-eval $LABELS --per-query <"$T/all.$f" >"$T/eval.pipe.$f" 2>"$T/err" && ok || bad "eval $f from stdin: $(cat "$T/err")"
  same "eval $f from stdin" "$T/eval.pipe.$f" "$T/eval.tsv"
done
# shellcheck disable=SC2086
expect_fail "eval npy from stdin" 1 "npy rankings are read from their two files" - slem-eval $LABELS - <"$T/all.I.npy"
# shellcheck disable=SC2086
expect_fail "eval -f npy from stdin" 1 "cannot come from stdin or a pipe" - slem-eval -f npy $LABELS - <"$T/all.I.npy"
cp "$T/all.I.npy" "$T/lone.I.npy"
# shellcheck disable=SC2086
expect_fail "eval npy without its D" 1 "lone.D.npy: .*npy rankings are a pair" - slem-eval $LABELS "$T/lone.I.npy"
head -c 1000 "$T/all.D.npy" >"$T/cut.D.npy"; cp "$T/all.I.npy" "$T/cut.I.npy"
# shellcheck disable=SC2086
expect_fail "eval npy cut short" 1 "cut.D.npy: 10000 x 20 values of 4 bytes, but the file holds" - slem-eval $LABELS "$T/cut.npy"
# a pair of no column holds no byte for its rows: 10^15 of them were read one by one until
# memory ran out (eval and merge); refused at the header, as the writers never make one
for x in I:i8 D:f4; do
  printf '\223NUMPY\001\000\166\000%-117s\n' \
    "{'descr': '<${x#*:}', 'fortran_order': False, 'shape': (1000000000000000, 0), }" >"$T/k0.${x%:*}.npy"
done
printf '0 0 1 1\n' >"$T/k0.qrels"
expect_fail "eval npy of no column" 1 "k0.I.npy: npy rankings need at least one column" - timeout 10 slem-eval --qrels "$T/k0.qrels" "$T/k0.npy"
expect_fail "merge npy of no column" 1 "k0.I.npy: npy rankings need at least one column" "$T/k0.out.tsv" timeout 10 slem-merge -o "$T/k0.out.tsv" "$T/k0.npy" "$T/k0.npy"
# an id twice in a query's row: npy rankings have no lines, the message names the row and
# column (it said "line 2" for row 1)
for x in I:i8 D:f4; do
  printf '\223NUMPY\001\000\166\000%-117s\n' \
    "{'descr': '<${x#*:}', 'fortran_order': False, 'shape': (2, 2), }" >"$T/dup.${x%:*}.npy"
done
printf '\003\0\0\0\0\0\0\0\005\0\0\0\0\0\0\0\004\0\0\0\0\0\0\0\004\0\0\0\0\0\0\0' >>"$T/dup.I.npy"
printf '\0\0\0\077\0\0\200\076\0\0\0\077\0\0\200\076' >>"$T/dup.D.npy"
printf '0 0 3 1\n1 0 4 1\n' >"$T/dup.qrels"
expect_fail "eval npy: an id twice in a row" 1 "dup.I.npy: row 1, column 1: id '4' appears twice for query '1'" - slem-eval --qrels "$T/dup.qrels" "$T/dup.npy"
expect_fail "merge npy: an id twice in a row" 1 "dup.I.npy: row 1, column 1: id '4' appears twice for query '1'" "$T/dup.out.tsv" slem-merge -k 2 -o "$T/dup.out.tsv" "$T/dup.npy"

# ---- slem-merge: npy shards, by any name, into every format; every format into npy ----
for s in 0 1 2; do
  check "shard $s npy" slem-match -q -t 2 -k 20 -F npy --shard $s/3 -d "$DB" -o "$T/s$s.npy" "$T/q.fvecs"
  check "shard $s tsv" slem-match -q -t 2 -k 20 -F tsv --shard $s/3 -d "$DB" -o "$T/s$s.tsv" "$T/q.fvecs"
  check "shard $s jsonl" slem-match -q -t 2 -k 20 -F jsonl --shard $s/3 -d "$DB" -o "$T/s$s.jsonl" "$T/q.fvecs"
done
check "merge npy shards" slem-merge -q -k 20 -o "$T/m.npy" "$T/s0.I.npy" "$T/s1.D.npy" "$T/s2"
same "merge npy = whole (I)" "$T/m.I.npy" "$T/all.I.npy"
same "merge npy = whole (D)" "$T/m.D.npy" "$T/all.D.npy"
check "merge npy shards, npy by default" slem-merge -q -k 20 -o "$T/m2" -F npy "$T/s0.npy" "$T/s1.npy" "$T/s2.npy"
same "merge npy -F npy (I)" "$T/m2.I.npy" "$T/all.I.npy"
for f in tsv trec jsonl; do
  check "merge npy shards -> $f" slem-merge -q -k 20 -F $f -o "$T/mn.$f" "$T/s0" "$T/s1" "$T/s2"
done
same "merge npy shards -> tsv = whole tsv" "$T/mn.tsv" "$T/all.tsv"
same "merge npy shards -> trec = whole trec" "$T/mn.trec" "$T/all.trec"
check "merge npy shards -> tsv on stdout" slem-merge -q -k 20 -F tsv "$T/s0" "$T/s1" "$T/s2"
same "merge npy shards -> stdout" "$T/out" "$T/all.tsv"
check "merge tsv shards -> npy" slem-merge -q -k 20 -o "$T/mt.npy" "$T/s0.tsv" "$T/s1.tsv" "$T/s2.tsv"
same "merge tsv -> npy = whole (I)" "$T/mt.I.npy" "$T/all.I.npy"
same "merge tsv -> npy = whole (D)" "$T/mt.D.npy" "$T/all.D.npy"
check "merge jsonl shards -> npy" slem-merge -q -k 20 -F npy -o "$T/mj" "$T/s0.jsonl" "$T/s1.jsonl" "$T/s2.jsonl"
same "merge jsonl -> npy = whole (D)" "$T/mj.D.npy" "$T/all.D.npy"
check "merge mixed npy and tsv shards" slem-merge -q -k 20 -F tsv -o "$T/mx.tsv" "$T/s0.I.npy" "$T/s1.tsv" "$T/s2.D.npy"
same "merge mixed = whole" "$T/mx.tsv" "$T/all.tsv"
check "merge tsv shards through a pipe" sh -c "cat '$T/s1.tsv' | slem-merge -q -k 20 '$T/s0.tsv' - '$T/s2.tsv' >'$T/mp.tsv'"
same "merge through a pipe" "$T/mp.tsv" "$T/all.tsv"
expect_fail "merge npy to stdout" 1 "npy rankings are two files" - slem-merge -q -k 20 "$T/s0.npy" "$T/s1.npy" "$T/s2.npy"
# -F npy to stdout is the options' fault: a usage error before any shard is read
expect_fail "merge -F npy to stdout" 2 "npy rankings are two files (NAME.I.npy and NAME.D.npy)" - slem-merge -q -k 20 -F npy -o - "$T/s0.tsv" "$T/s1.tsv" "$T/s2.tsv"
expect_fail "merge an npy shard from stdin" 1 "npy rankings are read from their two files" "$T/no.tsv" \
  sh -c "slem-merge -q -k 20 -o '$T/no.tsv' '$T/s0.npy' - '$T/s2.npy' <'$T/s1.I.npy'"
expect_fail "merge npy shards with a larger -k" 1 "" "$T/no.npy" slem-merge -q -k 30 -o "$T/no.npy" "$T/s0" "$T/s1" "$T/s2"
expect_fail "merge npy: a shard twice" 1 "" "$T/no.npy" slem-merge -q -k 20 -o "$T/no.npy" "$T/s0" "$T/s0" "$T/s2"
expect_fail "merge npy over its shard" 2 "is also an input" - slem-merge -q -k 20 -o "$T/s0.npy" "$T/s0.I.npy" "$T/s1" "$T/s2"
slem-match -q -t 2 -k 20 -F npy -d "$DB" -o "$T/few.npy" "$D/queries.fvecs"
expect_fail "merge npy shards of other queries" 1 "" "$T/no.npy" slem-merge -q -k 20 -o "$T/no.npy" "$T/few" "$T/s1" "$T/s2"

# ---- slem-expand: the same vectors from every format ----
slem-match -q -k 10 -F tsv -d "$X/db.fvecs" -o "$T/x.tsv" "$X/q.fvecs"
check "expand tsv" slem-expand -d "$X/db.fvecs" -n 2 -r "$T/x.tsv" -o "$T/x.tsv.fvecs" "$X/q.fvecs"
for f in trec jsonl npy; do
  slem-match -q -k 10 -F $f -d "$X/db.fvecs" -o "$T/x.$f" "$X/q.fvecs"
done
for n in x.trec x.jsonl x.npy x.I.npy x.D.npy x; do
  check "expand $n" slem-expand -d "$X/db.fvecs" -n 2 -r "$T/$n" -o "$T/$n.fvecs" "$X/q.fvecs"
  same "expand $n = tsv" "$T/$n.fvecs" "$T/x.tsv.fvecs"
done
check "expand --ranking-format npy" slem-expand -d "$X/db.fvecs" -n 2 --ranking-format npy -r "$T/x.D.npy" -o "$T/xf.fvecs" "$X/q.fvecs"
same "expand --ranking-format npy" "$T/xf.fvecs" "$T/x.tsv.fvecs"
expect_fail "expand npy from stdin" 1 "npy rankings are read from their two files" "$T/no.fvecs" \
  sh -c "slem-expand -d '$X/db.fvecs' -n 2 -r - -o '$T/no.fvecs' '$X/q.fvecs' <'$T/x.I.npy'"

# ---- slem-report: the same page from every format ----
# the pages differ only in the ranking file they name
for n in all.tsv all.trec all.jsonl all.npy all.I.npy all; do
  # shellcheck disable=SC2086
  check "report $n" slem-report $LABELS --queries 3 --top 5 --extremes 0 -o "$T/r.$n.html" run="$T/$n"
  sed 's/<span class="src"[^>]*>[^<]*<\/span>//g' "$T/r.$n.html" >"$T/r.$n.txt"
done
for n in all.trec all.jsonl all.npy all.I.npy all; do
  same "report $n = tsv" "$T/r.$n.txt" "$T/r.all.tsv.txt"
done

finish cli-rankings
