#!/bin/sh
# CLI tests of the vector formats of the field: the big-ann-benchmarks *bin files in and
# out, npy descriptors as float16 and int8, Fortran-order npy through a pipe, and output
# names whose extension names no format. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
F=$TOP/testdata/formats

check "negstats" slem-negstats -q -r 100 -o "$T/neg.slem" "$D/negatives.fvecs"
check "encode db" slem-encode -q -c "$T/neg.slem" -o "$T/db.fvecs" "$D/database.fvecs"
check "encode queries" slem-encode -q -c "$T/neg.slem" -o "$T/q.fvecs" "$D/queries.fvecs"
check "match" slem-match -k 5 -d "$T/db.fvecs" -o "$T/rank.tsv" "$T/q.fvecs"

# ---- fbin in and out: the same ranking as fvecs, exactly ----
check "encode -o db.fbin" slem-encode -q -c "$T/neg.slem" -o "$T/db.fbin" "$D/database.fvecs"
# 8 header bytes, then 1000 x 64 float32
[ "$(wc -c <"$T/db.fbin")" = $((8 + 1000 * 64 * 4)) ] && ok || bad "db.fbin size $(wc -c <"$T/db.fbin")"
[ "$(od -An -tu4 -N8 "$T/db.fbin" | tr -s ' ')" = " 1000 64" ] && ok || bad "db.fbin header: $(od -An -tu4 -N8 "$T/db.fbin")"
check "match against fbin" slem-match -k 5 -d "$T/db.fbin" -o "$T/rank.fbin.tsv" "$T/q.fvecs"
cmp -s "$T/rank.tsv" "$T/rank.fbin.tsv" && ok || bad "ranking against db.fbin differs"
# to stdout the count comes from the input file; from a pipe it is not known
slem-encode -q -c "$T/neg.slem" -F fbin "$D/database.fvecs" | cmp -s - "$T/db.fbin" && ok || bad "fbin to stdout differs"
expect_fail "fbin to a pipe without a count" 1 "fbin output to a pipe needs the vector count" - \
  sh -c "cat '$D/queries.fvecs' | slem-encode -q -c '$T/neg.slem' -F fbin"

# ---- npy as float16 and int8: a smaller database, nearly the same ranking ----
check "encode --dtype f2" slem-encode -q -c "$T/neg.slem" --dtype f2 -o "$T/db.f2.npy" "$D/database.fvecs"
check "encode --dtype i1" slem-encode -q -c "$T/neg.slem" -F npy --dtype i1 -o "$T/db.i1.npy" "$D/database.fvecs"
[ "$(wc -c <"$T/db.f2.npy")" = $((128 + 1000 * 64 * 2)) ] && ok || bad "db.f2.npy size"
[ "$(wc -c <"$T/db.i1.npy")" = $((128 + 1000 * 64)) ] && ok || bad "db.i1.npy size"
head -c 128 "$T/db.f2.npy" | grep -q "'descr': '<f2'" && ok || bad "db.f2.npy header"
head -c 128 "$T/db.i1.npy" | grep -q "'descr': '|i1'.*} # slem-scale: 1/127" && ok || bad "db.i1.npy header"
# scores within the rounding of the stored values (f2: 2^-11 relative per value; i1:
# 1/254 per value), the top results the same queries
for t in f2:5e-4 i1:1.5e-2; do
  dt=${t%%:*} tol=${t#*:}
  check "match against $dt" slem-match -k 5 -d "$T/db.$dt.npy" -o "$T/rank.$dt.tsv" "$T/q.fvecs"
  paste "$T/rank.tsv" "$T/rank.$dt.tsv" | awk -F '\t' -v tol="$tol" '
    $1 != $5 || $2 != $6 { print "line " NR ": " $0; exit 1 }
    { d = $4 - $8; if (d < 0) d = -d; if (d > max) max = d }
    $2 == 1 && $3 == $7 { same++ }
    END { if (max > tol || same < 95) { print "max score difference " max ", same top-1 " same; exit 1 } }' >"$T/diff" &&
    ok || bad "ranking against $dt descriptors: $(cat "$T/diff")"
done
expect_fail "dtype unknown" 2 "--dtype: 'f8' is not f4, f2 or i1" - slem-encode -c "$T/neg.slem" --dtype f8 "$D/queries.fvecs"
expect_fail "dtype needs npy" 2 "--dtype f2 needs npy output" "$T/x.fvecs" slem-encode -c "$T/neg.slem" --dtype f2 -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "dtype i1 classifier" 2 "not classifiers" "$T/x.npy" slem-encode -c "$T/neg.slem" --classifier --dtype i1 -o "$T/x.npy" "$D/queries.fvecs"

# ---- output names ----
expect_fail "unknown extension" 2 "db.vec: the output's extension names no vector format (.fvecs .bvecs .ivecs .npy .text .txt .csv .tsv .fbin .u8bin .i8bin .ibin .slem)" \
  "$T/db.vec" slem-encode -q -c "$T/neg.slem" -o "$T/db.vec" "$D/queries.fvecs"
expect_fail "no extension" 2 "names no vector format" "$T/descriptors" slem-encode -q -c "$T/neg.slem" -o "$T/descriptors" "$D/queries.fvecs"
check "no extension with -F" slem-encode -q -c "$T/neg.slem" -F fvecs -o "$T/descriptors" "$D/queries.fvecs"
cmp -s "$T/descriptors" "$T/q.fvecs" && ok || bad "-F fvecs to a name without extension differs"
# to stdout slem-encode writes its container (the descriptors and the cache that made them);
# -F fvecs gives fvecs
check "- is the container" sh -c "slem-encode -q -c '$T/neg.slem' -o - '$D/queries.fvecs' >'$T/stdout.bin'"
head -c 5 "$T/stdout.bin" | tail -c 4 | grep -q SLEM && ok || bad "-o - is not the container"
check "- with -F fvecs" sh -c "slem-encode -q -c '$T/neg.slem' -F fvecs -o - '$D/queries.fvecs' >'$T/stdout.bin'"
cmp -s "$T/stdout.bin" "$T/q.fvecs" && ok || bad "-F fvecs -o - is not fvecs"
check "/dev/null" slem-encode -q -c "$T/neg.slem" -o /dev/null "$D/queries.fvecs"
# an existing file under a name that names no format is left as it was
echo keep >"$T/keep.dat"
expect_fail "unknown extension, existing file" 2 "keep.dat: the output's extension" - slem-encode -q -c "$T/neg.slem" -o "$T/keep.dat" "$D/queries.fvecs"
[ "$(cat "$T/keep.dat")" = keep ] && ok || bad "keep.dat was changed"

# ---- Fortran-order npy: from a file and through a pipe, as its C-order twin ----
check "match C order" slem-match -k 3 -d "$F/big_c.npy" -o "$T/big.tsv" "$F/big_c.npy"
check "match Fortran order" slem-match -k 3 -d "$F/big_fortran.npy" -o "$T/bigf.tsv" "$F/big_fortran.npy"
cmp -s "$T/big.tsv" "$T/bigf.tsv" && ok || bad "Fortran-order database ranks differently"
cat "$F/big_fortran.npy" | slem-match -k 3 -d "$F/big_c.npy" >"$T/bigp.tsv" 2>"$T/err" &&
  cmp -s "$T/big.tsv" "$T/bigp.tsv" && ok || bad "Fortran-order queries through a pipe: $(cat "$T/err")"

# ---- bad inputs name the file ----
head -c 100 "$T/db.fbin" >"$T/short.fbin"
expect_fail "truncated fbin" 1 "short.fbin: size 100 bytes, but the header's n = 1000, d = 64 of fbin needs 256008: truncated or corrupt" \
  "$T/o.fvecs" slem-encode -q -c "$T/neg.slem" -o "$T/o.fvecs" "$T/short.fbin"

# ---- rows beyond the header's count: the same message and status from a file and a pipe
# (the fbin's 256 KB pass a pipe's buffer) ----
{ cat "$T/db.fbin"; head -c 256 "$T/db.fbin"; } >"$T/long.fbin"
msg="record 1001: data beyond the 1000 vectors of dimension 64 that the header counts"
expect_fail "fbin beyond its count" 1 "long.fbin: $msg" "$T/o.fvecs" \
  slem-encode -q -c "$T/neg.slem" -o "$T/o.fvecs" "$T/long.fbin"
expect_fail "fbin beyond its count, pipe" 1 "<stdin>: $msg" "$T/o.fvecs" \
  sh -c "cat '$T/long.fbin' | slem-encode -q -c '$T/neg.slem' -f fbin -o '$T/o.fvecs' -"
for o in c fortran; do
  { cat "$F/big_$o.npy"; head -c 24 "$F/big_$o.npy"; } >"$T/long_$o.npy"
  msg="record 301: data beyond the 300 vectors of dimension 6 that the shape counts"
  expect_fail "npy $o beyond its shape" 1 "long_$o.npy: $msg" "$T/l.tsv" \
    slem-match -k 3 -d "$F/big_c.npy" -o "$T/l.tsv" "$T/long_$o.npy"
  expect_fail "npy $o beyond its shape, pipe" 1 "<stdin>: $msg" "$T/l.tsv" \
    sh -c "cat '$T/long_$o.npy' | slem-match -k 3 -d '$F/big_c.npy' -o '$T/l.tsv'"
done

# npy headers of other writers: numpy under Python 2 wrote sizes as longs, (2L, 3L), which
# numpy reads and slem refused ("not a tuple of 1 or 2 sizes"); a structured dtype is
# named as such (it was "no 'descr'"), a file cut inside the 10 bytes after the magic is
# truncated (it was "bad magic")
npyv1() { printf '\223NUMPY\001\000\166\000%-117s\n' "$1"; }
ones() { i=0; while [ $i -lt 6 ]; do printf '\000\000\200\077'; i=$((i + 1)); done; }
{ npyv1 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"; ones; } >"$T/py3.npy"
{ npyv1 "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }"; ones; } >"$T/py2.npy"
[ "$(wc -c <"$T/py2.npy")" = $((128 + 24)) ] && ok || bad "the Python 2 npy test file is $(wc -c <"$T/py2.npy") bytes"
check "npy shape of Python 2" slem-match -k 2 -d "$T/py3.npy" -o "$T/py2.tsv" "$T/py2.npy"
slem-match -k 2 -d "$T/py3.npy" -o "$T/py3.tsv" "$T/py3.npy"
cmp -s "$T/py2.tsv" "$T/py3.tsv" && ok || bad "npy shape of Python 2: another ranking"
{ npyv1 "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }"; ones; } >"$T/rec.npy"
expect_fail "npy of a structured dtype" 1 "rec.npy: npy dtype is a structured (record) type" - slem-match -k 2 -d "$T/py3.npy" "$T/rec.npy"
head -c 8 "$T/py3.npy" >"$T/cut.npy"
expect_fail "npy cut after its version" 1 "cut.npy: npy header truncated" - slem-match -k 2 -d "$T/py3.npy" "$T/cut.npy"
# headers numpy itself refuses, or reads otherwise, were read in a shape of slem's own: a
# 'fortran_order' of Trueish was True, (2 3) was (2, 3), and of a key given twice the first
# was taken where numpy takes the last (here (2, 3): the data fit both)
{ npyv1 "{'descr': '<f4', 'fortran_order': Trueish, 'shape': (2, 3), }"; ones; } >"$T/trueish.npy"
expect_fail "npy fortran_order Trueish" 1 "trueish.npy: npy 'fortran_order' is neither True nor False" - slem-match -k 2 -d "$T/py3.npy" "$T/trueish.npy"
{ npyv1 "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }"; ones; } >"$T/nocomma.npy"
expect_fail "npy shape without a comma" 1 "nocomma.npy: npy shape is not a tuple of 1 or 2 sizes" - slem-match -k 2 -d "$T/py3.npy" "$T/nocomma.npy"
{ npyv1 "{'shape': (3, 2), 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"; ones; } >"$T/twice.npy"
expect_fail "npy key given twice" 1 "twice.npy: npy header gives 'shape' twice: corrupt" - slem-match -k 2 -d "$T/py3.npy" "$T/twice.npy"
{ npyv1 '{"descr": "<f4", "fortran_order": False, "shape": (2, 3), "descr": "<f4"}'; ones; } >"$T/twice2.npy"
expect_fail "npy key given twice, double quotes" 1 "twice2.npy: npy header gives 'descr' twice: corrupt" - slem-match -k 2 -d "$T/py3.npy" "$T/twice2.npy"
{ npyv1 '{"descr": "<f4", "fortran_order": True, "shape": (2, 3)}'; ones; } >"$T/dq.npy"
check "npy header in double quotes" slem-match -k 2 -d "$T/py3.npy" -o "$T/dq.tsv" "$T/dq.npy"

finish cli-formats
