#!/bin/sh
# Hostile environments a cron job meets: closed standard descriptors, a file-size limit,
# a cache rewritten in place. Each run is bounded by timeout(1), so a hang fails the test.
# Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
check "negstats" slem-negstats -q -o "$T/neg.slem" "$D/negatives.fvecs"
check "encode" slem-encode -q -c "$T/neg.slem" -o "$T/q.fvecs" "$D/queries.fvecs"
check "encode db" slem-encode -q -c "$T/neg.slem" -o "$T/db.fvecs" "$D/database.fvecs"
check "match" slem-match -q -k 5 -d "$T/db.fvecs" -o "$T/ref.tsv" "$T/q.fvecs"

# Class 3: fd 0, 1 or 2 closed at start. Without the reopen on /dev/null, the first file
# opened takes fd 0/1/2 (the database read as queries, the output written over by messages).
for fds in "0<&-" "1>&-" "2>&-" "0<&- 1>&- 2>&-"; do
  rm -f "$T/closed.tsv"
  eval "timeout 60 slem-match -q -k 5 -d \"\$T/db.fvecs\" -o \"\$T/closed.tsv\" \"\$T/q.fvecs\" $fds"
  st=$?
  if [ "$st" = 0 ] && cmp -s "$T/closed.tsv" "$T/ref.tsv"; then ok; else bad "match with $fds: status $st"; fi
done
rm -f "$T/closed.slem"
timeout 60 slem-negstats -q -o "$T/closed.slem" "$D/negatives.fvecs" 0<&- 1>&- 2>&-
st=$?
# (the cache records the time it was made: compared through what it encodes)
if [ "$st" = 0 ] && slem-encode -q -c "$T/closed.slem" -o "$T/closed.fvecs" "$D/queries.fvecs" &&
  cmp -s "$T/closed.fvecs" "$T/q.fvecs"; then ok; else bad "negstats with 0-2 closed: status $st"; fi
# a failure with stderr closed still ends with status 1 (the message goes to /dev/null)
timeout 60 slem-match -q -k 5 -d "$T/no-such.fvecs" -o "$T/x.tsv" "$T/q.fvecs" 2>&-
st=$?
[ "$st" = 1 ] && [ ! -e "$T/x.tsv" ] && ok || bad "failing match with stderr closed: status $st"

# Class 2: a file-size limit (ulimit -f, 512-byte blocks in sh): EFBIG, a message, status 1,
# no output and no temporary file, never SIGXFSZ (status 153)
mkdir "$T/lim"
expect_fail "negstats past ulimit -f" 1 "lim/neg.slem" "$T/lim/neg.slem" \
  timeout 60 sh -c 'ulimit -f 8; exec slem-negstats -q -o "$1" "$2"' sh "$T/lim/neg.slem" "$D/negatives.fvecs"
expect_fail "encode past ulimit -f" 1 "lim/db.fvecs" "$T/lim/db.fvecs" \
  timeout 60 sh -c 'ulimit -f 2; exec slem-encode -q -c "$1" -o "$2" "$3"' sh "$T/neg.slem" "$T/lim/db.fvecs" "$D/database.fvecs"
# an existing output stays as it was
cp "$T/ref.tsv" "$T/lim/keep.tsv"
timeout 60 sh -c 'ulimit -f 1; exec slem-match -q -k 5 -d "$1" -o "$2" "$3"' sh "$T/db.fvecs" "$T/lim/keep.tsv" "$T/q.fvecs" 2>"$T/err"
st=$?
if [ "$st" = 1 ] && cmp -s "$T/lim/keep.tsv" "$T/ref.tsv" && ! ls -a "$T/lim" | grep -q '\.tmp\.'; then ok
else bad "match past ulimit -f: status $st: $(head -c 300 "$T/err")"; fi

# Class 1: the cache is read into private memory, checked, and never touched again, so a
# cache truncated in place afterwards cannot kill a reader with SIGBUS; a cache truncated
# before it is read is refused with a message naming it.
cp "$T/neg.slem" "$T/cut.slem"
size=$(wc -c <"$T/cut.slem")
truncate -s $((size / 2)) "$T/cut.slem"
expect_fail "cache truncated in place" 1 "cut.slem" "$T/x.fvecs" \
  timeout 60 slem-encode -q -c "$T/cut.slem" -o "$T/x.fvecs" "$D/queries.fvecs"
# a reader running while another process cps a new cache over it in place, over and over:
# every run ends in status 0 with the right output or status 1 with a message, never a signal
cp "$T/neg.slem" "$T/live.slem"
( i=0; while [ $i -lt 200 ]; do truncate -s 100 "$T/live.slem"; cp "$T/neg.slem" "$T/live.slem"; i=$((i + 1)); done ) &
writer=$!
sig=0 runs=0
while kill -0 "$writer" 2>/dev/null && [ $runs -lt 20 ]; do
  timeout 60 slem-encode -q -c "$T/live.slem" -o "$T/live.fvecs" "$D/queries.fvecs" 2>"$T/err"
  st=$?
  runs=$((runs + 1))
  if [ "$st" -gt 1 ]; then sig=$st; break; fi
  if [ "$st" = 0 ] && ! cmp -s "$T/live.fvecs" "$T/q.fvecs"; then sig=wrong; break; fi
  if [ "$st" = 1 ] && ! grep -q "live.slem" "$T/err"; then sig="no name: $(head -c 200 "$T/err")"; break; fi
done
wait "$writer"
[ "$sig" = 0 ] && ok || bad "cache rewritten in place under a reader: $sig"

finish cli-hostile
