#!/bin/sh
# Killed runs and concurrent cron runs lose nothing:
# - every signal that ends a process and can be caught (SIGTERM, SIGINT, SIGHUP, SIGUSR1,
#   SIGALRM, ...) in the middle of a run removes the temporary output, and the target is
#   left as it was; one ignored at start stays ignored; one between the renames of
#   slem-eval's summary and curve waits for the second;
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

# ---- every signal that ends a process and can be caught: the temporary file goes, the
# target stays as it was, the status is the signal's (SIGQUIT and SIGXCPU dump no core
# here: ulimit -c 0). The input, a FIFO, is held open until the signal has come; env
# --default-signal undoes the SIGINT and SIGQUIT that sh ignores in a background job ----
ulimit -c 0
mkfifo "$T/fifo"
# slow_encode [ENV-OPTION]: slem-encode in the background ($pid) reading the FIFO, fed
# big.fvecs by $writer, which then holds it open until $T/go exists; returns once the
# temporary output exists
slow_encode() {
  rm -f "$T/go"
  { cat "$T/big.fvecs"; while [ ! -e "$T/go" ]; do sleep 0.05; done; } >"$T/fifo" &
  writer=$!
  env "$1" slem-encode -q -c "$T/v2.slem" -o "$T/target.fvecs" - <"$T/fifo" &
  pid=$!
  n=0
  while ! ls -a "$T" | grep -q '^\.target\.fvecs\.tmp\.' && [ $n -lt 250 ]; do sleep 0.02; n=$((n + 1)); done
}
for sig in HUP INT QUIT TERM PIPE USR1 USR2 ALRM VTALRM PROF XCPU IO PWR RTMIN RTMAX; do
  cp "$T/ref1.fvecs" "$T/target.fvecs"
  slow_encode --default-signal
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  st=$?
  touch "$T/go"
  wait "$writer"
  if [ "$st" -gt 128 ] && [ "$(kill -l $((st - 128)))" = "$sig" ] && cmp -s "$T/target.fvecs" "$T/ref1.fvecs" &&
    ! ls -a "$T" | grep -q '\.target\.fvecs\.tmp\.'; then ok
  else bad "SIG$sig: status $st, target changed or temporary file left: $(ls -a "$T" | grep tmp)"; fi
  rm -f "$T"/.target.fvecs.tmp.*
done
# a signal ignored when the tool starts stays ignored (nohup's SIGHUP): the run completes
cp "$T/ref1.fvecs" "$T/target.fvecs"
slow_encode --ignore-signal=HUP
kill -s HUP "$pid" 2>/dev/null
sleep 0.1
touch "$T/go"
wait "$pid"
st=$?
wait "$writer"
[ "$st" = 0 ] && cmp -s "$T/target.fvecs" "$T/ref2.fvecs" && ok || bad "SIGHUP ignored at start (nohup): status $st"
# slem-eval's summary and curve are one group: a signal between their two renames (raised
# by the fault shim on the return of the first) waits for the second, so that both are new
SHIM=$TOP/build/tests/faultshim.so
slem-match -q -k 20 -d "$G/db.fvecs" -o "$T/r.tsv" "$G/pos.fvecs"
seq 0 19 | awk '{ print $1, 0, $1, 1 }' >"$T/qrels"
slem-eval -q --qrels "$T/qrels" --curve "$T/new.pr" -o "$T/new.txt" "$T/r.tsv"
for sig in TERM USR1; do
  echo old >"$T/sum.txt"
  echo old >"$T/sum.pr"
  n=1
  while [ "$(kill -l $n)" != "$sig" ]; do n=$((n + 1)); done
  env LD_PRELOAD="$SHIM" FAULT_RENAME_SIGNAL=$n \
    slem-eval -q --qrels "$T/qrels" --curve "$T/sum.pr" -o "$T/sum.txt" "$T/r.tsv" 2>"$T/err"
  st=$?
  if [ "$st" = $((128 + n)) ] && cmp -s "$T/sum.txt" "$T/new.txt" && cmp -s "$T/sum.pr" "$T/new.pr" &&
    ! ls -a "$T" | grep -q '\.sum\..*\.tmp\.'; then ok
  else bad "SIG$sig between slem-eval's renames: status $st, summary $(head -c 20 "$T/sum.txt"), curve $(head -c 20 "$T/sum.pr")"; fi
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
