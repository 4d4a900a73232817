#!/bin/sh
# Injected faults (tests/faultshim.c through LD_PRELOAD): write (ENOSPC), fsync (EIO),
# rename (EIO), read (EIO) and large allocations (ENOMEM) fail, at several points of each
# tool's run. Every run must end with a clear message, exit status 1, and no output file,
# temporary or final. Run from the top of the tree after make build/tests/faultshim.so.
. "$(dirname "$0")/testlib.sh"
SHIM=$TOP/build/tests/faultshim.so
[ -f "$SHIM" ] || { echo "faults: $SHIM is missing"; exit 1; }
D=$TOP/testdata/digits
slem-negstats -q --lambda 0.05 -o "$T/neg.slem" "$G/neg.fvecs"
slem-encode -q -c "$T/neg.slem" -o "$T/db.fvecs" "$G/db.fvecs"
slem-match -o "$T/rank.tsv" -d "$T/db.fvecs" "$G/pos.fvecs"
seq 0 19 | awk '{ print $1, 0, $1, 1 }' >"$T/qrels"
mkdir "$T/out"

clean_out() { rm -f "$T/out"/* "$T/out"/.[!.]*; }

# inject NAME VAR N PATTERN CMD...: the tool under VAR=N fails as it should: status 1,
# PATTERN on stderr, nothing in $T/out. A run that survives its fault (stdio can do
# without a buffer, the RBF block without its norms) must write what it writes without
# one: the file $T/ref.NAME.
injected=0
inject() {
  name=$1 var=$2 n=$3 pat=$4; shift 4
  rm -f "$T/log"
  env LD_PRELOAD="$SHIM" FAULT_LOG="$T/log" FAULT_MALLOC_MIN=4096 "$var=$n" "$@" >"$T/stdout" 2>"$T/err"
  st=$?
  [ -s "$T/log" ] && injected=$((injected + $(wc -l <"$T/log")))
  if [ "$st" = 0 ]; then
    if cmp -s "$T/out/o" "$T/ref.$name" || { [ ! -s "$T/log" ] && [ -e "$T/out/o" ]; }; then ok
    else bad "$name $var=$n: status 0 with a fault, but not the right output"; fi
    clean_out
    return
  fi
  if [ ! -s "$T/log" ]; then bad "$name $var=$n: status $st with no fault injected: $(head -c 200 "$T/err")"; return; fi
  if [ "$st" != 1 ]; then bad "$name $var=$n: status $st, expected 1: $(head -c 300 "$T/err")"; return; fi
  if ! grep -q -- "$pat" "$T/err"; then bad "$name $var=$n: stderr lacks '$pat': $(head -c 300 "$T/err")"; return; fi
  if [ -n "$(ls -A "$T/out")" ]; then bad "$name $var=$n: left $(ls -A "$T/out")"; clean_out; return; fi
  ok
}

export SOURCE_DATE_EPOCH=0 # caches with the same provenance time compare equal
E=$TOP/testdata/esvm
X=$TOP/testdata/expand
slem-match -k 5 -d "$X/db.fvecs" -o "$T/x.tsv" "$X/q.fvecs"
for tool in negstats kernel encode match eval esvm calibrate calmatch expand; do
  case $tool in
    negstats) set -- slem-negstats -q -o "$T/out/o" --format fvecs "$G/neg.fvecs" ;;
    kernel) set -- slem-negstats -q --kernel rbf --rank 16 -o "$T/out/o" --format fvecs "$G/neg.fvecs" ;;
    encode) set -- slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/out/o" "$G/pos.fvecs" ;;
    match) set -- slem-match -d "$T/db.fvecs" -o "$T/out/o" "$G/pos.fvecs" ;;
    eval) set -- slem-eval --qrels "$T/qrels" -o "$T/out/o" "$T/rank.tsv" ;;
    esvm) set -- slem-esvm -q -t 2 -F fvecs -n "$E/neg.fvecs" -o "$T/out/o" "$E/pos.fvecs" ;;
    calibrate) set -- slem-calibrate -c "$E/clf-digits20.fvecs" -e "$E/digits-q20.labels" \
      -p "$D/validation.fvecs" -l "$D/validation.labels" -n "$D/negatives.fvecs" -o "$T/out/o" ;;
    calmatch) set -- slem-match --calibration "$E/calib-digits20.txt" -d "$D/database.fvecs" \
      -o "$T/out/o" "$E/clf-digits20.fvecs" ;;
    expand) set -- slem-expand -F fvecs -d "$X/db.fvecs" -n 2 -r "$T/x.tsv" -o "$T/out/o" "$X/q.fvecs" ;;
  esac
  "$@" && mv "$T/out/o" "$T/ref.$tool" || bad "$tool without faults"
  inject "$tool" FAULT_WRITE 1 "write: No space left on device" "$@"
  inject "$tool" FAULT_FSYNC 1 "fsync: Input/output error" "$@"
  inject "$tool" FAULT_RENAME 1 "rename: Input/output error" "$@"
  for n in 1 2 3; do
    inject "$tool" FAULT_READ $n "read: Input/output error" "$@"
  done
  for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
    inject "$tool" FAULT_MALLOC $n "out of memory" "$@"
  done
done
# slem-match writes on a thread of its own while the next block of queries is scored: a
# write failing in an early, a middle and a late block of 20 (10 000 queries in blocks of
# 500, k 20: five writes of its 1 MiB buffer, the first in the fifth block, the last as
# it closes) ends the run as any write error does
awk 'BEGIN { srand(31); for (i = 0; i < 10000; i++) { s = ""
  for (j = 0; j < 64; j++) s = s sprintf("%s%.5f", j ? " " : "", 16 * rand()); print s } }' >"$T/qd.txt"
set -- slem-match -q -t 2 -k 20 --query-block 500 -d "$D/database.fvecs" -o "$T/out/o" "$T/qd.txt"
"$@" && mv "$T/out/o" "$T/ref.blocks" || bad "match in blocks without faults"
for n in 1 2 3 4 5; do
  inject blocks FAULT_WRITE $n "write: No space left on device" "$@"
done
# a block read in pieces on 3 threads (SLEM_TEST_READ_PIECES=3; from 8 BLAS threads on
# without it): 10 000 records of 64 in blocks of 1 024; the first 4 blocks come from the
# MiB the header's peek buffered (read 4 of the run: one by OpenBLAS, two of the cache
# before it), the fifth's rest in one readv, then three preadv(2) per block (reads 6 to 20);
# a read failing in a piece of the seventh, the eighth and the ninth block (reads 9, 13 and
# 17: each still a preadv if the reads before it were up to 3 more or fewer) ends the run as
# any read error does
for i in 0 1 2 3 4 5 6 7 8 9; do cat "$D/database.fvecs"; done >"$T/big.fvecs"
slem-negstats -q -o "$T/negd.slem" "$D/negatives.fvecs"
set -- env SLEM_TEST_READ_PIECES=3 slem-encode -q -c "$T/negd.slem" -F fvecs -o "$T/out/o" "$T/big.fvecs"
"$@" && mv "$T/out/o" "$T/ref.pieces" || bad "encode in pieces without faults"
for n in 9 13 17; do
  inject pieces FAULT_READ $n "big.fvecs: read: Input/output error" "$@"
  grep -q '^preadv' "$T/log" && ok || bad "pieces FAULT_READ=$n: the fault was not in a preadv: $(cat "$T/log")"
done

# slem-encode at -t 3 runs two blocks at once (lanes); what only the second lane needs (its
# encoder state, a third block of input or of output) failing to allocate leaves one lane:
# status 0 and the bytes of one read (ref.pieces) for at least one of the first 30
# allocations; every other one ends as out of memory does
set -- slem-encode -q -t 3 -b 256 -c "$T/negd.slem" -F fvecs -o "$T/out/o" "$T/big.fvecs"
cp "$T/ref.pieces" "$T/ref.lanes"
fell_back=0 reached=0
for n in $(seq 1 30); do
  inject lanes FAULT_MALLOC $n "out of memory" "$@"
  [ -s "$T/log" ] && reached=$((reached + 1))
  [ -s "$T/log" ] && [ "$st" = 0 ] && fell_back=$((fell_back + 1))
done
if [ "$reached" = 0 ]; then
  # a sanitizer's allocator comes before the shim
  echo "faults: slem-encode's allocations were not reached by the shim; the one-lane fallback not tested here"
else
  [ "$fell_back" -gt 0 ] && ok || bad "encode -t 3: no allocation of the second lane failed into one lane"
fi

# slem-report renders vectors to PNG last: allocations from 1 KiB fail, the first few and
# the last twelve of the run (found by bisection: the smallest FAULT_MALLOC it survives),
# so that some land in libpng's write callback; libpng's longjmp must come back as a
# status ("png: out of memory"), never past the library
set -- env FAULT_MALLOC_MIN=1024 slem-report --queries 1 --extremes 0 --top 2 --qrels "$T/qrels" \
  --image-shape 2x2x3 --query-vectors "$G/pos.fvecs" --db-vectors "$G/db.fvecs" -o "$T/out/o" "$T/rank.tsv"
"$@" && mv "$T/out/o" "$T/ref.report" || bad "report without faults"
inject report FAULT_WRITE 1 "write: No space left on device" "$@"
inject report FAULT_RENAME 1 "rename: Input/output error" "$@"
inject report FAULT_READ 1 "read: Input/output error" "$@"
lo=1 hi=4096 # the run survives FAULT_MALLOC=hi, not lo (unless it allocates nothing)
while [ $((hi - lo)) -gt 1 ]; do
  mid=$(((lo + hi) / 2))
  if env LD_PRELOAD="$SHIM" FAULT_MALLOC=$mid "$@" >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
  clean_out
done
png=0
for n in 1 2 3 4 5 6 $(seq $((hi > 13 ? hi - 12 : 7)) $((hi - 1))); do
  inject report FAULT_MALLOC "$n" "out of memory" "$@"
  grep -q "png: out of memory" "$T/err" && png=$((png + 1))
done
if [ "$hi" -le 2 ]; then
  # no allocation could be made to fail (a sanitizer's allocator comes before the shim)
  echo "faults: slem-report's allocations were not reached by the shim; libpng's path not tested here"
else
  [ "$png" -gt 0 ] && ok || bad "report: no fault reached libpng's write callback ($hi allocations)"
fi
# slem-match -F npy commits its pair together: the D file's fsync failing after the I file
# was written leaves both old files as they were (not a new I beside an old D)
slem-match -k 3 -F npy -d "$T/db.fvecs" -o "$T/pair.npy" "$G/pos.fvecs" || bad "npy pair"
cp "$T/pair.I.npy" "$T/pair.I.old"; cp "$T/pair.D.npy" "$T/pair.D.old"
env LD_PRELOAD="$SHIM" FAULT_FSYNC=2 slem-match -k 4 -F npy -d "$T/db.fvecs" -o "$T/pair.npy" "$G/pos.fvecs" 2>"$T/err"
st=$?
[ "$st" = 1 ] && grep -q "pair.D.npy: fsync: Input/output error" "$T/err" && ok || bad "npy pair, D's fsync failing: status $st: $(head -c 300 "$T/err")"
cmp -s "$T/pair.I.npy" "$T/pair.I.old" && cmp -s "$T/pair.D.npy" "$T/pair.D.old" && ok ||
  bad "npy pair: a failed commit changed the old files (I and D no longer a pair)"
ls -a "$T" | grep -q '\.tmp\.' && bad "npy pair: a temporary file left" || ok
# libhdf5 is loaded when an HDF5 input is opened: missing, the input is refused, naming it
inject hdf5 FAULT_DLOPEN 1 "the HDF5 library cannot be loaded" \
  slem-negstats -q -o "$T/out/o" "$TOP/testdata/hdf5/ann.hdf5:train"
# A regular file whose size says 0 but that holds bytes (/proc's pseudo-files, some FUSE
# file systems; the shim's FAULT_SIZE0 makes stat and fstat say 0) is read as a stream, as a
# pipe is: npy and fbin were refused as truncated, fvecs counted 0 records (--shard gave an
# empty output, status 0), slem-merge took a jsonl shard for an empty file; a cache, read by
# its size, is refused saying why (it was "empty (0 bytes)")
mkdir "$T/z"
for f in fvecs npy fbin text; do
  slem-encode -q -c "$T/neg.slem" -F $f -o "$T/z/q.$f" "$G/pos.fvecs" &&
    slem-match -k 5 -d "$T/db.fvecs" -o "$T/z/ref.$f.tsv" "$T/z/q.$f" || bad "size 0: the $f queries"
  env LD_PRELOAD="$SHIM" FAULT_SIZE0="q.$f" slem-match -k 5 -d "$T/db.fvecs" -o "$T/z/got.$f.tsv" "$T/z/q.$f" 2>"$T/err" &&
    cmp -s "$T/z/ref.$f.tsv" "$T/z/got.$f.tsv" && ok || bad "$f whose size says 0: $(head -c 300 "$T/err")"
done
env LD_PRELOAD="$SHIM" FAULT_SIZE0=q.fvecs slem-encode -q -c "$T/neg.slem" --shard 1/2 -o "$T/z/s.fvecs" "$T/z/q.fvecs" 2>"$T/err"
st=$?
[ "$st" = 1 ] && grep -q "q.fvecs: the number of vectors is not known before reading" "$T/err" && [ ! -e "$T/z/s.fvecs" ] && ok ||
  bad "--shard of an fvecs whose size says 0: status $st: $(head -c 300 "$T/err")"
slem-match -k 5 -F jsonl -d "$T/db.fvecs" -o "$T/z/r.jsonl" "$G/pos.fvecs" && slem-merge -k 3 -o "$T/z/ref.tsv" "$T/z/r.jsonl" || bad "size 0: merge"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=r.jsonl slem-merge -k 3 -o "$T/z/m.tsv" "$T/z/r.jsonl" 2>"$T/err" &&
  cmp -s "$T/z/ref.tsv" "$T/z/m.tsv" && ok || bad "merge of a jsonl shard whose size says 0: $(head -c 300 "$T/err")"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=neg.slem slem-encode -q -c "$T/neg.slem" -o "$T/z/e.fvecs" "$G/pos.fvecs" 2>"$T/err"
st=$?
[ "$st" = 1 ] && grep -q "neg.slem: its size says 0 bytes but it holds some" "$T/err" && [ ! -e "$T/z/e.fvecs" ] && ok ||
  bad "a cache whose size says 0: status $st: $(head -c 300 "$T/err")"
# An npy pair whose sizes say 0 is read as a stream too: it was refused, holding "-N bytes
# after its header"; one cut short or overlong is refused with the message of a file whose
# size is known, nothing written. A text shard's last newline and a jsonl shard's end
# line are checked before anything is written, as in any file: the cut was seen after the
# queries were written to stdout, the end line at the end (the file could not be sought)
slem-match -k 5 -F npy -d "$T/db.fvecs" -o "$T/z/n.npy" "$G/pos.fvecs" &&
  slem-merge -k 3 -F tsv -o "$T/z/nref.tsv" "$T/z/n.npy" &&
  slem-eval --qrels "$T/qrels" "$T/z/n.npy" >"$T/z/eref" || bad "size 0: npy rankings"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=.npy slem-merge -k 3 -F tsv -o "$T/z/nm.tsv" "$T/z/n.npy" 2>"$T/err" &&
  cmp -s "$T/z/nref.tsv" "$T/z/nm.tsv" && ok || bad "merge of an npy pair whose sizes say 0: $(head -c 300 "$T/err")"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=.npy slem-eval --qrels "$T/qrels" "$T/z/n.npy" >"$T/z/e" 2>"$T/err" &&
  cmp -s "$T/z/eref" "$T/z/e" && ok || bad "slem-eval of an npy pair whose sizes say 0: $(head -c 300 "$T/err")"
head -c -4 "$T/z/n.D.npy" >"$T/z/cutd.D.npy" && cp "$T/z/n.I.npy" "$T/z/cutd.I.npy"
head -c -12 "$T/z/n.I.npy" >"$T/z/cuti.I.npy" && cp "$T/z/n.D.npy" "$T/z/cuti.D.npy"
{ cat "$T/z/n.I.npy"; printf 'overlong'; } >"$T/z/longi.I.npy" && cp "$T/z/n.D.npy" "$T/z/longi.D.npy"
{ cat "$T/z/n.I.npy"; printf 'overlong'; } >"$T/z/both.I.npy" && head -c -4 "$T/z/n.D.npy" >"$T/z/both.D.npy"
for c in cutd cuti longi both; do
  for tool in merge eval; do
    case $tool in
    merge) set -- slem-merge -k 3 -F tsv -o "$T/z/o.tsv" "$T/z/$c.npy" ;;
    eval) set -- slem-eval --qrels "$T/qrels" -o "$T/z/o.tsv" "$T/z/$c.npy" ;;
    esac
    "$@" 2>"$T/z/want"
    want=$?
    env LD_PRELOAD="$SHIM" FAULT_SIZE0=.npy "$@" 2>"$T/err"
    st=$?
    [ "$want" = 1 ] && [ "$st" = 1 ] && grep -q "$c.[ID].npy: .* values of .* bytes, but the file holds" "$T/err" &&
      cmp -s "$T/z/want" "$T/err" && [ ! -e "$T/z/o.tsv" ] && ok ||
      bad "slem-$tool of an npy pair ($c) whose sizes say 0: status $st ($want), '$(head -c 300 "$T/err")', not '$(head -c 300 "$T/z/want")'"
  done
done
head -c -1 "$T/rank.tsv" >"$T/z/cut.tsv"
slem-merge -k 3 "$T/z/cut.tsv" >"$T/z/so" 2>"$T/z/want"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=cut.tsv slem-merge -k 3 "$T/z/cut.tsv" >"$T/z/so" 2>"$T/err"
st=$?
[ "$st" = 1 ] && grep -q "cut.tsv: the last line has no newline" "$T/err" && cmp -s "$T/z/want" "$T/err" && [ ! -s "$T/z/so" ] && ok ||
  bad "a cut tsv shard whose size says 0: status $st, $(wc -c <"$T/z/so") bytes on stdout: $(head -c 300 "$T/err")"
for i in 0 1; do slem-match -k 20 --shard $i/2 -F jsonl -d "$T/db.fvecs" -o "$T/z/j$i.jsonl" "$T/db.fvecs"; done
sed '$s/"query_set":"[0-9a-f]*"/"query_set":"0123456789abcdef"/' "$T/z/j1.jsonl" >"$T/z/j1x.jsonl"
[ "$(wc -c <"$T/z/j1x.jsonl")" -gt 8192 ] || bad "size 0: a jsonl shard too short to test the reading of its end"
slem-merge -k 3 "$T/z/j0.jsonl" "$T/z/j1x.jsonl" >"$T/z/so" 2>"$T/z/want"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=j1x.jsonl slem-merge -k 3 "$T/z/j0.jsonl" "$T/z/j1x.jsonl" >"$T/z/so" 2>"$T/err"
st=$?
[ "$st" = 1 ] && grep -q "j1x.jsonl: its end line: query_set 0123456789abcdef" "$T/err" && cmp -s "$T/z/want" "$T/err" && [ ! -s "$T/z/so" ] && ok ||
  bad "a jsonl shard of another query set whose size says 0: status $st, $(wc -c <"$T/z/so") bytes on stdout: $(head -c 300 "$T/err")"
env LD_PRELOAD="$SHIM" FAULT_SIZE0=j1.jsonl slem-merge -k 3 -o "$T/z/jm.tsv" "$T/z/j0.jsonl" "$T/z/j1.jsonl" 2>"$T/err" &&
  slem-merge -k 3 -o "$T/z/jref.tsv" "$T/z/j0.jsonl" "$T/z/j1.jsonl" && cmp -s "$T/z/jm.tsv" "$T/z/jref.tsv" && ok ||
  bad "jsonl shards whose sizes say 0: $(head -c 300 "$T/err")"
ls -a "$T/z" | grep -q '\.tmp\.' && bad "size 0: a temporary file left" || ok
echo "faults: $injected faults injected"
finish faults
