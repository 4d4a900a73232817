#!/bin/sh
# What a tool refuses so that a slip at the terminal costs nothing: binary output on a
# terminal, a cache on stdin or on a FIFO, an output that is also an input, and one message
# for a bad option. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
check "negstats" slem-negstats -q -o "$T/neg.slem" "$D/negatives.fvecs"

# binary vectors to a terminal: refused (script(1) gives the tool a terminal); text is fine
if command -v script >/dev/null 2>&1; then
  script -qec "slem-encode -c '$T/neg.slem' '$D/queries.fvecs'; echo status=\$?" /dev/null >"$T/tty" 2>&1
  if grep -q "refusing to write binary slem vectors to a terminal" "$T/tty" && grep -q "status=1" "$T/tty"; then ok
  else bad "binary to a terminal: $(head -c 300 "$T/tty")"; fi
  script -qec "slem-encode -c '$T/neg.slem' -F text '$D/queries.fvecs' | head -1; echo status=\$?" /dev/null >"$T/tty" 2>&1
  grep -q "status=0" "$T/tty" && ! grep -q refusing "$T/tty" && ok || bad "text to a terminal: $(head -c 300 "$T/tty")"
else
  echo "cli-footguns: script(1) is missing: the terminal cases are skipped"
fi
# a cache from stdin or a FIFO: a clear refusal at once, no hang
expect_fail "cache from stdin" 1 "cannot be read from stdin" "$T/x.fvecs" slem-encode -c - -o "$T/x.fvecs" "$D/queries.fvecs"
mkfifo "$T/fifo.slem"
expect_fail "cache on a FIFO" 1 "fifo.slem: not a regular file" "$T/x.fvecs" timeout 10 slem-encode -c "$T/fifo.slem" -o "$T/x.fvecs" "$D/queries.fvecs"
# an output that is one of the inputs
cp "$D/queries.fvecs" "$T/q.fvecs"
expect_fail "eval output is its ranking" 2 "is also an input" - slem-eval -o "$T/q.fvecs" --query-labels "$D/queries.labels" --db-labels "$D/database.labels" "$T/q.fvecs"
cmp -s "$T/q.fvecs" "$D/queries.fvecs" && ok || bad "the input was changed"
# slem-eval's summary and --curve named as one new file (or through a link): refused (the
# curve, committed last, replaced the summary, status 0)
slem-match -q -k 10 -d "$D/database.fvecs" -o "$T/ev.tsv" "$D/queries.fvecs"
EVL="--query-labels $D/queries.labels --db-labels $D/database.labels"
# shellcheck disable=SC2086
expect_fail "eval -o X --curve X" 2 "are one file" "$T/one.txt" slem-eval $EVL --curve "$T/one.txt" -o "$T/one.txt" "$T/ev.tsv"
ln -s one.txt "$T/one.link"
# shellcheck disable=SC2086
expect_fail "eval -o LINK --curve X" 2 "are one file" "$T/one.txt" slem-eval $EVL --curve "$T/one.txt" -o "$T/one.link" "$T/ev.tsv"
# shellcheck disable=SC2086
check "eval -o X --curve Y" slem-eval $EVL --curve "$T/curve.txt" -o "$T/sum.txt" "$T/ev.tsv"
grep -q '^mAP' "$T/sum.txt" && grep -q '^# recall' "$T/curve.txt" && ok || bad "eval -o X --curve Y: not both written"
# one message for an unknown option, naming it
for tool in slem-negstats slem-encode slem-match slem-eval; do
  $tool --no-such-option >/dev/null 2>"$T/err"
  st=$?
  if [ "$st" = 2 ] && [ "$(grep -c . "$T/err")" = 2 ] && grep -q "no-such-option" "$T/err"; then ok
  else bad "$tool --no-such-option: status $st: $(cat "$T/err")"; fi
done
# what was wrong with an option, said: a typo's nearest name, an ambiguous abbreviation's
# names, a value given to an option that takes none, a value missing at the end (each was
# "unknown option ..., or it lacks its value", and --quiet=1 "option '-q' needs a value")
for tool in slem-negstats slem-encode slem-match slem-eval slem-merge slem-report slem-esvm slem-calibrate slem-expand; do
  expect_fail "$tool --outptu" 2 "unknown option '--outptu'; did you mean '--output'?" - $tool --outptu x
done
expect_fail "eval typo" 2 "unknown option '--qurey-labels'; did you mean '--query-labels'?" - slem-eval --qurey-labels x
expect_fail "eval far from any" 2 "unknown option '--frobnicate'\$" - slem-eval --frobnicate
expect_fail "eval --quiet=1" 2 "option '--quiet' takes no value ('--quiet=1')" - slem-eval --quiet=1 x
expect_fail "eval --qrels last" 2 "option '--qrels' needs a value" - slem-eval --per-query --qrels
expect_fail "match --db" 2 "option '--db' is ambiguous: --db-ids, --db-format" - slem-match --db x
expect_fail "eval -z in a cluster after a long option" 2 "unknown option '-z'" - slem-eval --per-query -zq x
expect_fail "trec_eval typo" 2 "did you mean '--measure'?" - slem-eval --trec-compat --mesure map
# one scheme of option letters: -f input format, -F output format, -k a count, -K a kernel;
# the previous spellings work for one release, with a warning
check "negstats" slem-negstats -q -o "$T/neg.slem" "$D/negatives.fvecs"
check "encode" slem-encode -q -c "$T/neg.slem" -o "$T/db.fvecs" "$D/database.fvecs"
slem-match -k 3 -F trec -d "$T/db.fvecs" -o "$T/new.trec" "$D/queries.fvecs" 2>"$T/err" && [ ! -s "$T/err" ] && ok || bad "-F trec: $(cat "$T/err")"
slem-match -k 3 -f trec -d "$T/db.fvecs" -o "$T/old.trec" "$D/queries.fvecs" 2>"$T/err"
if cmp -s "$T/new.trec" "$T/old.trec" && grep -q "use -F trec" "$T/err"; then ok; else bad "old -f trec: $(cat "$T/err")"; fi
slem-match -k 3 -f fvecs -d "$T/db.fvecs" -o "$T/f.tsv" "$D/queries.fvecs" 2>"$T/err" && [ ! -s "$T/err" ] && ok || bad "-f fvecs as the input format: $(cat "$T/err")"
# the output format follows the output's name
slem-match -k 3 -d "$T/db.fvecs" -o "$T/by-name.trec" "$D/queries.fvecs" && cmp -s "$T/by-name.trec" "$T/new.trec" && ok || bad "-o x.trec did not write trec"
slem-match -k 3 -d "$T/db.fvecs" -o "$T/by-name.jsonl" "$D/queries.fvecs" && head -c 9 "$T/by-name.jsonl" | grep -q '^{"query"' && ok || bad "-o x.jsonl did not write jsonl"
slem-negstats -q -k rbf:g=1 --rank 16 -o "$T/k1.slem" "$D/negatives.fvecs" 2>"$T/err" && grep -q "use -K" "$T/err" && ok || bad "negstats -k: $(cat "$T/err")"
slem-negstats -q -K rbf:g=1 --rank 16 -o "$T/k2.slem" "$D/negatives.fvecs" 2>"$T/err" && [ ! -s "$T/err" ] && ok || bad "negstats -K: $(cat "$T/err")"
# -k beyond the database is said once
slem-match -k 5000 -d "$T/db.fvecs" -o "$T/big.tsv" "$D/queries.fvecs" 2>"$T/err"
[ "$(grep -c "is more than the 1000 database rows" "$T/err")" = 1 ] && ok || bad "-k beyond the database: $(cat "$T/err")"
slem-match -q -k 5000 -d "$T/db.fvecs" -o "$T/big.tsv" "$D/queries.fvecs" 2>"$T/err"
[ ! -s "$T/err" ] && ok || bad "-q did not silence the warning"
# slem-match refuses to write over one of its inputs, the database files included
cp "$T/db.fvecs" "$T/db2.fvecs"
expect_fail "match output is a database file" 2 "is also an input" - slem-match -d "$T/db.fvecs" -d "$T/db2.fvecs" -o "$T/db2.fvecs" "$D/queries.fvecs"
# an output named as vectors, not a ranking: the vectors there are kept (before, a tsv
# ranking replaced them); -F says the name is meant
cp "$D/queries.fvecs" "$T/keepq.fvecs"
for o in keepq.fvecs x.slem x.fbin x.bvecs; do
  expect_fail "match -o $o" 2 "-o .*$o: the name of a vector file" - slem-match -k 3 -d "$T/db.fvecs" -o "$T/$o" "$D/queries.fvecs"
done
cmp -s "$T/keepq.fvecs" "$D/queries.fvecs" && [ ! -e "$T/x.slem" ] && ok || bad "match -o keepq.fvecs: the vectors replaced"
check "match -F tsv -o x.fvecs" slem-match -k 3 -F tsv -d "$T/db.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
# text names (.txt, .csv: the text format's) may be a ranking's: written as tsv
for o in x.txt x.csv; do
  check "match -o $o" slem-match -q -k 3 -d "$T/db.fvecs" -o "$T/$o" "$D/queries.fvecs"
  cmp -s "$T/$o" "$T/x.fvecs" && ok || bad "match -o $o: not the tsv ranking"
done
# -F wins over the old spelling -f of the output format, before or after it (it won only
# when it named npy)
slem-match -q -k 3 -F jsonl -d "$T/db.fvecs" -o "$T/fj.jsonl" "$D/queries.fvecs"
check "match -F jsonl -f trec" slem-match -q -k 3 -F jsonl -f trec -d "$T/db.fvecs" -o "$T/ff.out" "$D/queries.fvecs"
cmp -s "$T/ff.out" "$T/fj.jsonl" && ok || bad "match -F jsonl -f trec: not jsonl"
# slem-merge likewise
slem-match -q -k 3 -F jsonl -d "$T/db.fvecs" -o "$T/m.jsonl" "$D/queries.fvecs"
expect_fail "merge -o keepq.fvecs" 2 "-o .*keepq.fvecs: the name of a vector file" - slem-merge -k 3 -o "$T/keepq.fvecs" "$T/m.jsonl"
cmp -s "$T/keepq.fvecs" "$D/queries.fvecs" && ok || bad "merge -o keepq.fvecs: the vectors replaced"
check "merge -F tsv -o y.fvecs" slem-merge -k 3 -F tsv -o "$T/y.fvecs" "$T/m.jsonl"
# stdin named twice as a shard: a usage error (the second read nothing: "<stdin>: no
# rankings (empty file)"), in the words of the other tools (cli_refuse_stdin_twice())
expect_fail "merge - -" 2 "only one input can be stdin ('-')" - sh -c 'slem-merge -k 3 - - <"$1"' sh "$T/m.jsonl"
expect_fail "negstats - -" 2 "only one input can be stdin ('-')" "$T/sx.slem" \
  sh -c 'slem-negstats -q -o "$1" - - <"$2"' sh "$T/sx.slem" "$D/negatives.fvecs"
# stdin named by two options of one tool: a usage error (the second read nothing, and the
# message named an empty or a binary <stdin>: "no rankings (empty file)", "no ids", "a NUL
# byte"); the queries are stdin when no query file is given
seq 0 99 >"$T/q100.ids"
for cmd in "slem-eval --qrels - -" "slem-eval --query-labels - --db-labels $D/database.labels -" \
  "slem-report --qrels - -o $T/sx.html -" "slem-encode -c $T/neg.slem --ids - -F slem -o $T/sx.slem -" \
  "slem-match -k 2 -d $T/db.fvecs --query-ids - -f fvecs -" "slem-match -k 2 -d $T/db.fvecs --query-ids - -f fvecs" \
  "slem-match -k 2 -d $T/db.fvecs --db-ids - --query-ids $T/q100.ids -f fvecs" \
  "slem-esvm -n $D/negatives.fvecs --ids - -o $T/sx.fvecs -"; do
  # shellcheck disable=SC2086
  expect_fail "stdin twice: $cmd" 2 "only one input can be stdin" - sh -c "$cmd <'$D/queries.fvecs'"
done
[ ! -e "$T/sx.html" ] && [ ! -e "$T/sx.slem" ] && [ ! -e "$T/sx.fvecs" ] && ok || bad "stdin twice: an output was written"
check "one stdin among the ids" sh -c "slem-match -k 2 -d '$T/db.fvecs' --query-ids - '$D/queries.fvecs' <'$T/q100.ids'"
# an empty output name: a usage error before any work (the work was done, then the rename
# failed: ": rename: No such file or directory")
expect_fail "match -o ''" 2 "an empty output file name" - slem-match -k 2 -d "$T/db.fvecs" -o "" "$D/queries.fvecs"
expect_fail "negstats -o ''" 2 "an empty output file name" - slem-negstats -q -o "" "$D/negatives.fvecs"
expect_fail "eval --curve ''" 2 "an empty output file name" - slem-eval --query-labels "$D/queries.labels" --db-labels "$D/database.labels" --curve "" "$T/ev.tsv"
# the ids files given to slem-encode --ids and slem-merge --db-ids are inputs too (they were
# replaced by the container or the ranking)
printf 'q%s\n' $(seq 1 100) >"$T/q.ids"
cp "$T/q.ids" "$T/q.ids.orig"
expect_fail "encode output is its ids" 2 "is also an input" - slem-encode -c "$T/neg.slem" --ids "$T/q.ids" -F slem -o "$T/q.ids" "$D/queries.fvecs"
cmp -s "$T/q.ids" "$T/q.ids.orig" && ok || bad "encode --ids: the ids file was replaced"
seq 0 999 >"$T/db.ids"
cp "$T/db.ids" "$T/db.ids.orig"
slem-match -q -k 3 -F jsonl -d "$T/db.fvecs" -o "$T/ids.jsonl" "$D/queries.fvecs"
expect_fail "merge output is its db ids" 2 "is also an input" - slem-merge -k 2 --db-ids "$T/db.ids" -o "$T/db.ids" "$T/ids.jsonl"
cmp -s "$T/db.ids" "$T/db.ids.orig" && ok || bad "merge --db-ids: the ids file was replaced"
# slem-encode and slem-negstats refuse to replace their own inputs too
cp "$T/neg.slem" "$T/neg2.slem"
expect_fail "encode output is its cache" 2 "is also an input" - slem-encode -c "$T/neg2.slem" -F fvecs -o "$T/neg2.slem" "$D/queries.fvecs"
cmp -s "$T/neg2.slem" "$T/neg.slem" && ok || bad "the cache was changed"
cp "$D/negatives.fvecs" "$T/n.fvecs"
expect_fail "negstats output is its input" 2 "is also an input" - slem-negstats -o "$T/n.fvecs" "$T/n.fvecs"
cmp -s "$T/n.fvecs" "$D/negatives.fvecs" && ok || bad "the negatives were changed"
# rankings as FAISS's I and D matrices, by -F npy or by the name; never on stdout
check "npy rankings" slem-match -k 4 -d "$T/db.fvecs" -o "$T/faiss.npy" "$D/queries.fvecs"
[ "$(wc -c <"$T/faiss.I.npy")" = $((128 + 100 * 4 * 8)) ] && [ "$(wc -c <"$T/faiss.D.npy")" = $((128 + 100 * 4 * 4)) ] && [ ! -e "$T/faiss.npy" ] && ok || bad "npy rankings: sizes"
slem-match -k 4 -d "$T/db.fvecs" -o "$T/faiss.tsv" "$D/queries.fvecs"
# the first row of I holds the tsv's first four rows, as int64 little-endian
first=$(od -A n -t d8 -j 128 -N 32 "$T/faiss.I.npy" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
[ "$first" = "$(head -4 "$T/faiss.tsv" | cut -f3 | tr '\n' ' ' | sed 's/ $//')" ] && ok || bad "npy I row 0: $first"
# a usage error (it exited 1): -F npy names the format, and npy is two files
expect_fail "npy to stdout" 2 "npy rankings are two files (NAME.I.npy and NAME.D.npy): give -o NAME.npy" - slem-match -k 4 -F npy -d "$T/db.fvecs" "$D/queries.fvecs"
expect_fail "npy to -o -" 2 "npy rankings are two files" - slem-match -k 4 -F npy -o - -d "$T/db.fvecs" "$D/queries.fvecs"
finish cli-footguns
