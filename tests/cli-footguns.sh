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
  if grep -q "refusing to write binary fvecs vectors to a terminal" "$T/tty" && grep -q "status=1" "$T/tty"; then ok
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
# one message for an unknown option, naming it
for tool in slem-negstats slem-encode slem-match slem-eval; do
  $tool --no-such-option >/dev/null 2>"$T/err"
  st=$?
  if [ "$st" = 2 ] && [ "$(grep -c . "$T/err")" = 2 ] && grep -q "no-such-option" "$T/err"; then ok
  else bad "$tool --no-such-option: status $st: $(cat "$T/err")"; fi
done
finish cli-footguns
