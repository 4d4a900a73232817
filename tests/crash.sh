#!/bin/sh
# Killed runs and concurrent cron runs lose nothing:
# - SIGTERM, SIGINT and SIGHUP in the middle of a run remove the temporary output, and the
#   target is left as it was;
# - SIGKILL at random moments (nothing can clean up) leaves the target either as it was or
#   complete: the new file only ever appears by rename;
# - while slem-negstats rewrites a cache again and again, slem-encode processes reading it
#   each see one whole version: their outputs equal a run against one version or the other.
# Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"

# a larger input: the golden positives repeated, about 2 MB
i=0
while [ $i -lt 2000 ]; do cat "$G/pos.fvecs"; i=$((i + 1)); done >"$T/big.fvecs"
slem-negstats -q --lambda 0.05 -o "$T/v1.slem" "$G/neg.fvecs"
slem-negstats -q --lambda 0.5 -o "$T/v2.slem" "$G/neg.fvecs"
slem-encode -q -c "$T/v1.slem" -o "$T/ref1.fvecs" "$T/big.fvecs"
slem-encode -q -c "$T/v2.slem" -o "$T/ref2.fvecs" "$T/big.fvecs"
cmp -s "$T/ref1.fvecs" "$T/ref2.fvecs" && bad "the two cache versions encode alike: the test could not tell them apart"

# ---- catchable signals: the temporary file goes, the target stays as it was ----
for sig in TERM INT HUP; do
  cp "$T/ref1.fvecs" "$T/target.fvecs"
  # the input arrives slowly, so the tool is still running when the signal comes
  { cat "$T/big.fvecs"; sleep 3; } | slem-encode -q -c "$T/v2.slem" -o "$T/target.fvecs" - &
  pid=$!
  sleep 0.5
  # $! is the last command of the pipeline: slem-encode
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  st=$?
  if [ "$st" -gt 128 ] && cmp -s "$T/target.fvecs" "$T/ref1.fvecs" && ! ls -a "$T" | grep -q '\.target\.fvecs\.tmp\.'; then ok
  else bad "SIG$sig: status $st, target changed or temporary file left: $(ls -a "$T" | grep tmp)"; fi
done

# ---- SIGKILL at random moments: the target is the old file or the whole new one ----
# The input comes in two halves 0.3 s apart, so that a kill finds the tool reading,
# computing, or with half its output written to the temporary file.
kills=0
for n in $(seq 1 20); do
  cp "$T/ref1.fvecs" "$T/target.fvecs"
  delay=$(awk -v s="$n" 'BEGIN { srand(s); printf "%.3f", rand() * 0.4 }')
  { cat "$T/big.fvecs"; sleep 0.3; } | slem-encode -q -c "$T/v2.slem" -o "$T/target.fvecs" - &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
  wait "$pid" 2>/dev/null
  # the slow pipe sends big.fvecs once: a complete run wrote ref2
  if cmp -s "$T/target.fvecs" "$T/ref1.fvecs" || cmp -s "$T/target.fvecs" "$T/ref2.fvecs"; then ok
  else bad "SIGKILL after ${delay}s: the target is neither the old nor the new file"; fi
  rm -f "$T"/.target.fvecs.tmp.*
done
# the same for a cache being rebuilt
cp "$T/v1.slem" "$T/target.slem"
for n in $(seq 1 10); do
  delay=$(awk -v s="$n" 'BEGIN { srand(s + 100); printf "%.3f", rand() * 0.4 }')
  { cat "$T/big.fvecs"; sleep 0.3; } | slem-negstats -q --lambda 0.5 -o "$T/target.slem" - &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
  wait "$pid" 2>/dev/null
  # whole means readable: every check and checksum passes
  if slem-negstats --info "$T/target.slem" >/dev/null 2>&1; then ok; else bad "SIGKILL left a broken cache"; fi
  rm -f "$T"/.target.slem.tmp.*
done
echo "crash: $kills processes killed with SIGKILL"

# ---- concurrent cron runs: a cache rewritten while encoders read it ----
cp "$T/v1.slem" "$T/shared.slem"
(
  n=0
  while [ ! -e "$T/stop" ]; do
    n=$((n + 1))
    if [ $((n % 2)) = 0 ]; then l=0.05; else l=0.5; fi
    slem-negstats -q --lambda $l -o "$T/shared.slem" "$G/neg.fvecs" || echo "writer failed" >>"$T/writer.err"
  done
  echo "$n" >"$T/rewrites"
) &
writer=$!
for r in $(seq 1 30); do
  pids=""
  for j in 1 2 3; do
    slem-encode -q -c "$T/shared.slem" -o "$T/read.$r.$j.fvecs" "$T/big.fvecs" 2>>"$T/reader.err" &
    pids="$pids $!"
  done
  # shellcheck disable=SC2086
  wait $pids
done
touch "$T/stop"
wait "$writer"
[ ! -s "$T/writer.err" ] && [ ! -s "$T/reader.err" ] && ok || bad "concurrent runs failed: $(cat "$T/writer.err" "$T/reader.err" 2>/dev/null | head -3)"
n1=0 n2=0 nbad=0
for f in "$T"/read.*.fvecs; do
  if cmp -s "$f" "$T/ref1.fvecs"; then n1=$((n1 + 1)); elif cmp -s "$f" "$T/ref2.fvecs"; then n2=$((n2 + 1)); else nbad=$((nbad + 1)); fi
done
[ "$nbad" = 0 ] && [ $((n1 + n2)) = 90 ] && ok || bad "concurrent readers: $nbad of 90 outputs match neither version"
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && ok || bad "concurrent readers saw only one version ($n1, $n2): the test did not interleave"
echo "crash: 90 concurrent encodes ($n1 against one version, $n2 against the other) while the cache was rewritten $(cat "$T/rewrites") times"

finish crash
