#!/bin/sh
# Descriptor containers are verified wherever they are read (issue 26): every block of 1 024
# rows has its CRC-32 in a table before the rows, so that a window (--shard) verifies the
# blocks it touches and a pipe verifies each block before its rows are used; a container of
# the first release (no table) is verified whole before any row is used. Ids are unique
# across all the database files of a run, and text that tsv and jsonl can carry. Each case
# checks the message, the status, and that no output appears (or an existing one is left as
# it was). Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
V1=$TOP/testdata/container/v1.slem
check "cache" slem-negstats -q -r 1000 -o "$T/neg.slem" "$D/negatives.fvecs"
check "queries" slem-encode -q -c "$T/neg.slem" -o "$T/q.slem" "$D/queries.fvecs"
# an existing output, which no failure below may change
printf 'keep\n' >"$T/keep.tsv"
kept() { # kept NAME: keep.tsv is unchanged
  if [ "$(cat "$T/keep.tsv")" = keep ] && ! ls -a "$T" | grep -q '\.tmp\.'; then ok; else bad "$1: the existing output was changed"; fi
}

# 10 000 rows: ten blocks of 1 024 rows, the last one shorter
for i in 0 1 2 3 4 5 6 7 8 9; do cat "$D/database.fvecs"; done >"$T/big.fvecs"
awk '{ for (i = 0; i < 10; i++) print $0 "-" i }' "$D/database.ids" | sort >"$T/big.ids"
check "big container" slem-encode -q -c "$T/neg.slem" -o "$T/big.slem" "$T/big.fvecs"
slem-encode -q -c "$T/neg.slem" "$T/big.fvecs" | cat >"$T/bigpipe.slem" || bad "a container to a pipe"
cmp -s "$T/big.slem" "$T/bigpipe.slem" && ok || bad "the container written to a pipe differs from the file"
head -c 2000 "$T/big.slem" | grep -q '"blocks":{"rows":1024,"count":10,"offset":32768,' && ok ||
  bad "no block table: $(head -c 1000 "$T/big.slem" | tr -d '\000')"
check "big fvecs" slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/big.d.fvecs" "$T/big.fvecs"
check "big with ids" slem-encode -q -c "$T/neg.slem" --ids "$T/big.ids" -o "$T/bigi.slem" "$T/big.fvecs"

# the rankings of the fvecs path, byte for byte: whole, by pipe, in tiles smaller and larger
# than a block, and in seven shards whose edges fall inside blocks
check "fvecs ranking" slem-match -k 20 -d "$T/big.d.fvecs" -o "$T/ref.tsv" "$T/q.slem"
check "container ranking" slem-match -k 20 -d "$T/big.slem" -o "$T/c.tsv" "$T/q.slem"
cmp -s "$T/c.tsv" "$T/ref.tsv" && ok || bad "container: another ranking"
slem-match -k 20 --tile-rows 300 -d - -o "$T/p.tsv" "$T/q.slem" <"$T/big.slem" || bad "database on a pipe"
cmp -s "$T/p.tsv" "$T/ref.tsv" && ok || bad "database on a pipe: another ranking"
slem-match -k 20 --tile-rows 3000 -d "$T/big.slem" -o "$T/p.tsv" - <"$T/q.slem" || bad "queries on a pipe"
cmp -s "$T/p.tsv" "$T/ref.tsv" && ok || bad "queries on a pipe: another ranking"
check "ids ranking" slem-match -k 20 -d "$T/big.d.fvecs" --db-ids "$T/big.ids" -o "$T/refi.tsv" "$T/q.slem"
check "ids from the container" slem-match -k 20 -d "$T/bigi.slem" -o "$T/ci.tsv" "$T/q.slem"
cmp -s "$T/ci.tsv" "$T/refi.tsv" && ok || bad "ids from the container: another ranking"
for s in 0 1 2 3 4 5 6; do
  slem-match -k 20 --shard $s/7 --tile-rows 500 -d "$T/big.d.fvecs" -o "$T/rs$s.tsv" "$T/q.slem" || bad "fvecs shard $s"
  check "shard $s" slem-match -k 20 --shard $s/7 --tile-rows 500 -d "$T/big.slem" -o "$T/s$s.tsv" "$T/q.slem"
  cmp -s "$T/s$s.tsv" "$T/rs$s.tsv" && ok || bad "shard $s: another ranking"
done
slem-match -k 20 --shard 3/7 -d - -o "$T/s.tsv" "$T/q.slem" <"$T/big.slem" || bad "a shard of a pipe"
cmp -s "$T/s.tsv" "$T/rs3.tsv" && ok || bad "a shard of a pipe: another ranking"
# slem-encode reads a window of a container too
check "encode shard of fvecs" slem-encode -q -c "$T/neg.slem" --shard 2/7 -F fvecs -o "$T/e2.fvecs" "$T/big.d.fvecs"
check "encode shard of a container" slem-encode -q -c "$T/neg.slem" --shard 2/7 -F fvecs -o "$T/c2.fvecs" "$T/big.slem"
cmp -s "$T/c2.fvecs" "$T/e2.fvecs" && ok || bad "encoding a shard of a container: other descriptors"

# a byte changed in record 4501, in block 5 (records 4097 to 5120)
cp "$T/big.slem" "$T/bad.slem"
printf 'x' | dd of="$T/bad.slem" bs=1 seek=$((65536 + 4500 * 256 + 10)) conv=notrunc 2>/dev/null
MSG="checksum mismatch in the rows: records 4097 to 5120 (block 5 of 10) are corrupt"
expect_fail "corrupt, whole" 1 "bad.slem: $MSG" "$T/none.tsv" slem-match -d "$T/bad.slem" -o "$T/none.tsv" "$T/q.slem"
# shard 3 holds the record; shard 2 (rows 2857 to 4284) ends inside its block, read whole
expect_fail "corrupt, in the shard" 1 "$MSG" "$T/none.tsv" slem-match --shard 3/7 -d "$T/bad.slem" -o "$T/none.tsv" "$T/q.slem"
expect_fail "corrupt, at the shard's edge" 1 "$MSG" "$T/none.tsv" slem-match --shard 2/7 -d "$T/bad.slem" -o "$T/none.tsv" "$T/q.slem"
check "corrupt elsewhere, shard 0" slem-match -k 20 --shard 0/7 -d "$T/bad.slem" -o "$T/s.tsv" "$T/q.slem"
cmp -s "$T/s.tsv" "$T/rs0.tsv" && ok || bad "shard 0 of the corrupt file: another ranking"
check "corrupt elsewhere, shard 5" slem-match -k 20 --shard 5/7 -d "$T/bad.slem" -o "$T/s.tsv" "$T/q.slem"
cmp -s "$T/s.tsv" "$T/rs5.tsv" && ok || bad "shard 5 of the corrupt file: another ranking"
expect_fail "corrupt, a shard of a pipe" 1 "<stdin>: $MSG" "$T/none.tsv" sh -c 'slem-match --shard 3/7 -d - -o "$1/none.tsv" "$1/q.slem" <"$1/bad.slem"' sh "$T"
expect_fail "corrupt database on a pipe" 1 "<stdin>: $MSG" - sh -c 'slem-match -d - -o "$1/keep.tsv" "$1/q.slem" <"$1/bad.slem"' sh "$T"
kept "corrupt database on a pipe"
expect_fail "corrupt database through cat" 1 "<stdin>: $MSG" - sh -c 'cat "$1/bad.slem" | slem-match -F jsonl -d - -o "$1/keep.tsv" "$1/q.slem"' sh "$T"
kept "corrupt database through cat"
expect_fail "encode a corrupt window" 1 "big2.slem: $MSG" "$T/none.fvecs" sh -c 'cp "$1/bad.slem" "$1/big2.slem"; slem-encode -q -c "$1/neg.slem" --shard 3/7 -o "$1/none.fvecs" "$1/big2.slem"' sh "$T"
expect_fail "encode a corrupt pipe" 1 "<stdin>: $MSG" - sh -c 'slem-encode -q -c "$1/neg.slem" -F fvecs -o "$1/keep.tsv" - <"$1/bad.slem"' sh "$T"
kept "encode a corrupt pipe"
# corrupt queries on a pipe: record 51 of 100, one block
cp "$T/q.slem" "$T/badq.slem"
printf 'x' | dd of="$T/badq.slem" bs=1 seek=$((65536 + 50 * 256 + 3)) conv=notrunc 2>/dev/null
expect_fail "corrupt queries on a pipe" 1 "<stdin>: checksum mismatch in the rows: records 1 to 100 (block 1 of 1)" - sh -c 'cat "$1/badq.slem" | slem-match -d "$1/big.slem" -o "$1/keep.tsv" -' sh "$T"
kept "corrupt queries on a pipe"
expect_fail "corrupt queries from a file" 1 "badq.slem: checksum mismatch in the rows" "$T/none.tsv" slem-match -d "$T/big.slem" -o "$T/none.tsv" "$T/badq.slem"
# the block table, and the ids after the rows, have their own checksums
cp "$T/big.slem" "$T/badt.slem"
printf 'x' | dd of="$T/badt.slem" bs=1 seek=$((32768 + 9)) conv=notrunc 2>/dev/null
expect_fail "corrupt block table" 1 "badt.slem: checksum mismatch in the block table" "$T/none.tsv" slem-match --shard 1/7 -d "$T/badt.slem" -o "$T/none.tsv" "$T/q.slem"
expect_fail "corrupt block table on a pipe" 1 "<stdin>: checksum mismatch in the block table" "$T/none.tsv" sh -c 'slem-match -d - -o "$1/none.tsv" "$1/q.slem" <"$1/badt.slem"' sh "$T"
cp "$T/bigi.slem" "$T/badi.slem"
printf '#' | dd of="$T/badi.slem" bs=1 seek=$(($(wc -c <"$T/bigi.slem") - 5)) conv=notrunc 2>/dev/null
expect_fail "corrupt ids" 1 "badi.slem: checksum mismatch in the ids after the rows" "$T/none.tsv" slem-match --shard 0/7 -d "$T/badi.slem" -o "$T/none.tsv" "$T/q.slem"
expect_fail "corrupt ids on a pipe" 1 "<stdin>: checksum mismatch in the ids after the rows" - sh -c 'slem-match -d - -o "$1/keep.tsv" "$1/q.slem" <"$1/badi.slem"' sh "$T"
kept "corrupt ids on a pipe"

# a container of the first release (no block table: 40 rows of the digits with their ids,
# written by slem-encode before this change) is still read, verified whole first
# Its descriptors were encoded under OpenBLAS's Haswell kernels (cache 60b51c6ac505ab78;
# Zen's give the same): the cache and queries compared with it are made under that core,
# whatever this CPU's default (SkylakeX, Sandybridge, Prescott make another cache, and the
# container would be refused as another cache's); a CPU without AVX2 and FMA skips them.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
if has avx2 && has fma; then
  check "v1's cache" env OPENBLAS_CORETYPE=Haswell slem-negstats -q -r 1000 -o "$T/v1neg.slem" "$D/negatives.fvecs"
  check "v1's queries" env OPENBLAS_CORETYPE=Haswell slem-encode -q -c "$T/v1neg.slem" -o "$T/v1q.slem" "$D/queries.fvecs"
  head -c $((40 * 260)) "$D/database.fvecs" >"$T/r40.fvecs"
  head -40 "$D/database.ids" >"$T/r40.ids"
  # the reference: the container's own 40 rows (at byte 65536, 256 bytes each) as fvecs,
  # so that what is compared is the reading alone (since issue 43 a fresh encode differs
  # from the first release's Haswell sgemm in the last bits)
  : >"$T/r40.d.fvecs"
  i=0
  while [ $i -lt 40 ]; do
    printf '\100\000\000\000' >>"$T/r40.d.fvecs"
    dd if="$V1" bs=256 skip=$((256 + i)) count=1 2>/dev/null >>"$T/r40.d.fvecs"
    i=$((i + 1))
  done
  check "v1 reference" slem-match -k 5 -d "$T/r40.d.fvecs" --db-ids "$T/r40.ids" -o "$T/v1ref.tsv" "$T/v1q.slem"
  check "v1 container" slem-match -k 5 -d "$V1" -o "$T/v1.tsv" "$T/v1q.slem"
  cmp -s "$T/v1.tsv" "$T/v1ref.tsv" && ok || bad "the first release's container: another ranking"
  slem-match -k 5 -d "$T/r40.d.fvecs" -o "$T/v1refp.tsv" "$T/v1q.slem"
  slem-match -k 5 -d - -o "$T/v1p.tsv" "$T/v1q.slem" <"$V1" || bad "v1 on a pipe"
  cmp -s "$T/v1p.tsv" "$T/v1refp.tsv" && ok || bad "the first release's container on a pipe: another ranking"
  slem-match -k 5 --shard 1/3 -d "$T/r40.d.fvecs" --db-ids "$T/r40.ids" -o "$T/v1refs.tsv" "$T/v1q.slem"
  check "v1 shard" slem-match -k 5 --shard 1/3 -d "$V1" -o "$T/v1s.tsv" "$T/v1q.slem"
  cmp -s "$T/v1s.tsv" "$T/v1refs.tsv" && ok || bad "a shard of the first release's container: another ranking"
else
  echo "cli-verify: skipped the first release's container: this CPU lacks AVX2 or FMA, which the Haswell kernels that encoded it need"
fi
# record 18 changed: shard 0/3 (records 1 to 13) does not read it, and is refused all the same
cp "$V1" "$T/v1bad.slem"
printf 'x' | dd of="$T/v1bad.slem" bs=1 seek=$((65536 + 17 * 256)) conv=notrunc 2>/dev/null
expect_fail "v1 corrupt, shard" 1 "v1bad.slem: checksum mismatch in the rows: corrupt" "$T/none.tsv" slem-match --shard 0/3 -d "$T/v1bad.slem" -o "$T/none.tsv" "$T/q.slem"
expect_fail "v1 corrupt, shard of a pipe" 1 "<stdin>: checksum mismatch in the rows: corrupt" - sh -c 'slem-match --shard 0/3 -d - -o "$1/keep.tsv" "$1/q.slem" <"$1/v1bad.slem"' sh "$T"
kept "v1 corrupt, shard of a pipe"
expect_fail "v1 corrupt queries on a pipe" 1 "<stdin>: checksum mismatch in the rows: corrupt" - sh -c 'slem-match --no-check -d "$1/big.slem" -o "$1/keep.tsv" - <"$1/v1bad.slem"' sh "$T"
kept "v1 corrupt queries on a pipe"

# ids: unique across all the database files of a run, named by file and line or record
check "segment 1" slem-encode -q -c "$T/neg.slem" --ids "$T/r40.ids" -o "$T/seg1.slem" "$T/r40.fvecs"
expect_fail "one container twice" 1 "seg1.slem (database file 2): record 1: id 'digit1127' appears twice (.*seg1.slem (database file 1): record 1)" "$T/none.tsv" slem-match -d "$T/seg1.slem" -d "$T/seg1.slem" -o "$T/none.tsv" "$T/q.slem"
sed -n '30,60p' "$D/database.ids" >"$T/r30.ids"
tail -c +$((29 * 260 + 1)) "$D/database.fvecs" | head -c $((31 * 260)) >"$T/r30.fvecs"
check "segment 2" slem-encode -q -c "$T/neg.slem" --ids "$T/r30.ids" -o "$T/seg2.slem" "$T/r30.fvecs"
ID=$(sed -n 30p "$D/database.ids")
expect_fail "overlapping containers" 1 "seg2.slem (database file 2): record 1: id '$ID' appears twice (.*seg1.slem (database file 1): record 30)" "$T/none.tsv" slem-match -d "$T/seg1.slem" -d "$T/seg2.slem" -o "$T/none.tsv" "$T/q.slem"
expect_fail "overlapping ids files" 1 "r30.ids (database file 2): line 1: id '$ID' appears twice (.*r40.ids (database file 1): line 30)" "$T/none.tsv" slem-match -d "$T/r40.d.fvecs" --db-ids "$T/r40.ids" -d "$T/r30.fvecs" --db-ids "$T/r30.ids" --no-check -o "$T/none.tsv" "$T/q.slem"
expect_fail "one ids file twice" 1 "r40.ids (database file 2): line 1: id 'digit1127' appears twice" "$T/none.tsv" slem-match -d "$T/r40.d.fvecs" --db-ids "$T/r40.ids" -d "$T/r40.d.fvecs" --db-ids "$T/r40.ids" -o "$T/none.tsv" "$T/q.slem"
check "disjoint segments" slem-match -d "$T/seg1.slem" -d "$T/bigi.slem" -o "$T/y.tsv" "$T/q.slem"
# control characters that break tsv and jsonl
printf 'a\001b\n' >"$T/ctl.ids"
expect_fail "control character in an id" 1 "ctl.ids: line 1: id contains the control character 0x01" "$T/none.tsv" slem-match -k 1 -d "$T/q.slem" --query-ids "$T/ctl.ids" -o "$T/none.tsv" "$T/q.slem"
printf 'a\033[31m\n' >"$T/esc.ids"
expect_fail "escape in an id" 1 "esc.ids: line 1: id contains the control character 0x1b" "$T/none.slem" slem-encode -c "$T/neg.slem" --ids "$T/esc.ids" -o "$T/none.slem" "$T/r40.fvecs"

# data after a container's end, on a pipe as in a file (the file's size disagrees with its
# header): queries, database, an empty segment as database, and slem-encode's input
{ cat "$T/q.slem"; printf 'junkjunk'; } >"$T/qx.slem"
expect_fail "data after a container (file)" 1 "qx.slem: size disagrees with its header" "$T/none.tsv" slem-match -k 3 -d "$T/q.slem" -o "$T/none.tsv" "$T/qx.slem"
expect_fail "data after a container (pipe, queries)" 1 "<stdin>: record 101: data beyond the 100 vectors" "$T/none.tsv" sh -c 'cat "$1" | slem-match -k 3 -d "$2" -o "$3" -' sh "$T/qx.slem" "$T/q.slem" "$T/none.tsv"
expect_fail "data after a container (pipe, database)" 1 "data beyond the 100 vectors" "$T/none.tsv" sh -c 'cat "$1" | slem-match -k 3 -d - -o "$3" "$2"' sh "$T/qx.slem" "$T/q.slem" "$T/none.tsv"
check "empty segment" slem-encode -q -c "$T/neg.slem" -o "$T/e.slem" /dev/null
{ cat "$T/e.slem"; printf 'x'; } >"$T/ex.slem"
expect_fail "data after an empty container (pipe, database)" 1 "data beyond the 0 vectors of dimension 64 that the header counts" "$T/none.tsv" sh -c 'cat "$1" | slem-match -k 3 -d - -o "$3" "$2"' sh "$T/ex.slem" "$T/q.slem" "$T/none.tsv"
check "empty segment on a pipe, nothing after it" sh -c 'cat "$1" | slem-match -q -k 3 -d - -d "$2" -o "$3" "$2"' sh "$T/e.slem" "$T/q.slem" "$T/ok.tsv"
finish cli-verify
