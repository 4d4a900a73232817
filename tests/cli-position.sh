#!/bin/sh
# A descriptor is a function of its vector, the cache and the BLAS core alone
# (docs/guarantees.md, "Position-free descriptors"): the same bytes for a row alone in a
# file, at every offset of a file (every place in the BLAS micro-kernels' periods of 4, 6,
# 8, 12, 16 and 24 rows), repeated, inside a file of 12 000 rows (past the blocks and
# chunks), through a pipe, in any shard, for any -b and -t. For every encoder: linear
# (float32 and double), --alpha, --pca, --depth, --adaptive-theta, --basic, --classifier,
# the kernel's explicit descriptors (ICD and KPCA, coupled or not), its --coordinates and
# --classifier, kernel --depth, a histogram kernel; on d 64 (the digits) and d 37 (so that
# the last columns of the products are a partial tile). make check-cores runs it under
# every OpenBLAS core.
. tests/testlib.sh
D=$TOP/testdata/digits

# d 37 data: correlated rows from awk, made fvecs by encoding them (any vectors will do)
awk -v T="$T" 'BEGIN { srand(5); d = 37
  for (i = 0; i < 1700; i++) { s = ""; a = rand(); b = rand()
    for (j = 0; j < d; j++) s = s (j ? " " : "") sprintf("%.6f", 3 * a * (j % 5) + b * j / d + rand())
    print s > (T (i < 900 ? "/n37.txt" : "/x37.txt")) } }'
slem-negstats -q -o "$T/l37.slem" "$T/n37.txt" &&
  slem-encode -q --precision double -c "$T/l37.slem" -o "$T/N37.fvecs" "$T/n37.txt" &&
  slem-encode -q --precision double -c "$T/l37.slem" -o "$T/X37.fvecs" "$T/x37.txt" ||
  bad "making the d 37 data"
cp "$D/negatives.fvecs" "$T/N64.fvecs"
cat "$D/database.fvecs" "$D/queries.fvecs" "$D/validation.fvecs" >"$T/X64.fvecs"

# rec FILE ROWS: the bytes of one record of FILE, which holds ROWS records
rec() { echo $(($(wc -c <"$1") / $2)); }
# rows FILE RECBYTES FIRST COUNT: records FIRST .. FIRST + COUNT - 1 of FILE on stdout
rows() { dd if="$1" bs="$2" skip="$3" count="$4" 2>/dev/null; }

# position NAME DIM NEGSTATS-OPTIONS -- ENCODE-OPTIONS
position() {
  name=$1 dim=$2; shift 2
  nopts=
  while [ "$1" != -- ]; do nopts="$nopts $1"; shift; done
  shift
  X=$T/X$dim.fvecs C=$T/c.slem F=$T/full.fvecs
  n=$(($(wc -c <"$X") / (4 + 4 * dim)))
  ir=$((4 + 4 * dim))
  # shellcheck disable=SC2086
  if ! slem-negstats -q $nopts -o "$C" "$T/N$dim.fvecs" 2>"$T/err"; then
    bad "$name: slem-negstats$nopts: $(head -c 300 "$T/err")"; return
  fi
  if ! slem-encode -q "$@" -c "$C" -o "$F" "$X" 2>"$T/err"; then
    bad "$name: slem-encode $*: $(head -c 300 "$T/err")"; return
  fi
  or=$(rec "$F" "$n")
  # a row alone
  for r in 0 13 $((n / 2)) $((n - 1)); do
    rows "$X" "$ir" "$r" 1 >"$T/one.fvecs"
    slem-encode -q "$@" -c "$C" -o "$T/o.fvecs" "$T/one.fvecs"
    rows "$F" "$or" "$r" 1 | cmp -s - "$T/o.fvecs" && ok ||
      { bad "$name: row $r alone differs from the same row inside the file"; return; }
  done
  # files of their own starting at rows 100 + o: each row at other offsets of the
  # micro-kernels' periods than in the whole file
  for o in 1 2 3 5 7 11; do
    rows "$X" "$ir" $((100 + o)) 40 >"$T/w.fvecs"
    slem-encode -q "$@" -c "$C" -o "$T/o.fvecs" "$T/w.fvecs"
    rows "$F" "$or" $((100 + o)) 40 | cmp -s - "$T/o.fvecs" && ok ||
      { bad "$name: rows $((100 + o)).. in a file of their own differ from the same rows inside the file"; return; }
  done
  # one row repeated 100 times, at every offset 0 to 99 of a block: 100 equal descriptors
  rows "$X" "$ir" 7 1 >"$T/one.fvecs"
  : >"$T/rep.fvecs"
  i=0; while [ $i -lt 100 ]; do cat "$T/one.fvecs" >>"$T/rep.fvecs"; i=$((i + 1)); done
  slem-encode -q "$@" -c "$C" -o "$T/o.fvecs" "$T/rep.fvecs"
  rows "$F" "$or" 7 1 >"$T/want1"
  : >"$T/want"
  i=0; while [ $i -lt 100 ]; do cat "$T/want1" >>"$T/want"; i=$((i + 1)); done
  cmp -s "$T/want" "$T/o.fvecs" && ok || bad "$name: one row repeated 100 times gives other descriptors"
  # blocks, threads, a pipe, shards
  for bt in "-b 1 -t 1" "-b 7 -t 2" "-b 100 -t 2" "-t 2"; do
    # shellcheck disable=SC2086
    slem-encode -q $bt "$@" -c "$C" -o "$T/o.fvecs" "$X"
    cmp -s "$F" "$T/o.fvecs" && ok || bad "$name: $bt gives other descriptors"
  done
  cat "$X" | slem-encode -q -b 64 -F fvecs "$@" -c "$C" - >"$T/o.fvecs"
  cmp -s "$F" "$T/o.fvecs" && ok || bad "$name: a pipe gives other descriptors"
  : >"$T/sh.fvecs"
  for s in 0 1 2 3 4 5 6; do
    slem-encode -q --shard $s/7 "$@" -c "$C" -o "$T/o.fvecs" "$X" && cat "$T/o.fvecs" >>"$T/sh.fvecs"
  done
  cmp -s "$F" "$T/sh.fvecs" && ok || bad "$name: 7 shards concatenated differ from one run"
  # inside a file of 10 times the rows (past every block and chunk)
  : >"$T/big.fvecs"; : >"$T/want"
  i=0; while [ $i -lt 10 ]; do cat "$X" >>"$T/big.fvecs"; cat "$F" >>"$T/want"; i=$((i + 1)); done
  slem-encode -q "$@" -c "$C" -o "$T/o.fvecs" "$T/big.fvecs"
  cmp -s "$T/want" "$T/o.fvecs" && ok || bad "$name: rows inside a file of $((10 * n)) rows differ"
}

for dim in 64 37; do
  position "linear d $dim" $dim --
  position "linear double d $dim" $dim -- --precision double
  position "classifier d $dim" $dim -- --classifier --theta 2
  position "basic d $dim" $dim -- --basic
  position "alpha d $dim" $dim --eigen -- --alpha -0.5
  position "pca d $dim" $dim --pca 20 -- --alpha -0.5
  position "depth 2 d $dim" $dim --depth 2 --
  position "adaptive theta d $dim" $dim --depth 2 --adaptive-theta "$T/X$dim.fvecs" --
  position "kernel icd d $dim" $dim --kernel rbf:g=1 --rank 40 --
  position "kernel kpca d $dim" $dim --kernel rbf:g=1 --rank 40 --factor kpca --
  position "kernel coordinates d $dim" $dim --kernel rbf:g=1 --rank 40 -- --coordinates
  position "kernel classifier d $dim" $dim --kernel poly:gamma=0.01,c=1,p=2 --rank 30 -- --classifier
  position "kernel coupled d $dim" $dim --kernel rbf:g=1 --rank 30 --couple -- --couple
  position "kernel depth 2 d $dim" $dim --kernel rbf:g=1 --rank 30 --depth 2 --
done
# a histogram kernel on the digits' pixels (not negative)
position "kernel chi2" 64 --kernel chi2 --rank 40 --
position "kernel intersection kpca" 64 --kernel intersection --rank 40 --factor kpca --
finish cli-position
