#!/bin/sh
# CLI tests of slem-esvm: scikit-learn's LinearSVC references (testdata/esvm, made by
# scripts/gen-esvm.py), byte-identical output for any thread count, pipes and formats,
# the errors. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
E=$TOP/testdata/esvm
D=$TOP/testdata/digits

# max_cos_gap A B D: the largest 1 - cos over rows of the first D values of two text files
max_cos_gap() {
  paste -d ' ' "$1" "$2" | awk -v d="$3" '{
    n = NF / 2; ab = aa = bb = 0
    for (j = 1; j <= d; j++) { a = $j; b = $(n + j); ab += a * b; aa += a * a; bb += b * b }
    g = 1 - ab / sqrt(aa * bb); if (g > m) m = g } END { if (NR) printf "%.3g\n", m }'
}
# max_b_gap A B: the largest difference of the last values of two text files
max_b_gap() {
  paste -d ' ' "$1" "$2" | awk '{ n = NF / 2; g = $n - $NF; if (g < 0) g = -g; if (g > m) m = g }
    END { if (NR) printf "%.3g\n", m }'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }

# ---- against LinearSVC, every case of cases.txt ----
while read -r case_ C W s B; do
  case $case_ in \#*) continue ;; esac
  in=$E/pos.fvecs neg=$E/neg.fvecs d=32
  if [ "$case_" = digits ]; then in=$E/digits-q20.fvecs neg=$D/negatives.fvecs d=64; fi
  check "esvm $case_" slem-esvm -q -C "$C" --pos-weight "$W" --solver "$s" --bias "$B" --classifier \
    -F text -n "$neg" -o "$T/$case_.txt" "$in"
  [ "$(wc -l <"$T/$case_.txt")" = "$(wc -l <"$E/ref-$case_.txt")" ] && ok || bad "$case_: row count"
  g=$(max_cos_gap "$T/$case_.txt" "$E/ref-$case_.txt" "$d")
  le "$g" 1e-4 && ok || bad "$case_: 1 - cos to LinearSVC $g > 1e-4"
  gb=$(max_b_gap "$T/$case_.txt" "$E/ref-$case_.txt")
  le "$gb" 1e-3 && ok || bad "$case_: |b - intercept_| $gb > 1e-3"
done <"$E/cases.txt"

# descriptors: unit rows, the direction of the classifier's w
check "descriptors" slem-esvm -n "$D/negatives.fvecs" -F text -o "$T/desc.txt" "$E/digits-q20.fvecs"
awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i * $i; if (NF != 64 || s < 0.99999 || s > 1.00001) exit 1 }' \
  "$T/desc.txt" && ok || bad "descriptors are not unit rows of 64 values"
g=$(max_cos_gap "$T/desc.txt" "$E/ref-digits.txt" 64)
le "$g" 1e-4 && ok || bad "descriptors: 1 - cos to LinearSVC $g"

# ---- deterministic: the same bytes for 1 and 2 threads, and SLEM_THREADS ----
slem-esvm -q -t 1 -n "$D/negatives.fvecs" -o "$T/t1.fvecs" "$D/queries.fvecs"
slem-esvm -q -t 2 -n "$D/negatives.fvecs" -o "$T/t2.fvecs" "$D/queries.fvecs"
SLEM_THREADS=3 slem-esvm -q -b 7 -n "$D/negatives.fvecs" -o "$T/t3.fvecs" "$D/queries.fvecs"
cmp -s "$T/t1.fvecs" "$T/t2.fvecs" && cmp -s "$T/t1.fvecs" "$T/t3.fvecs" && ok ||
  bad "output depends on the thread count or the block size"
[ "$(wc -c <"$T/t1.fvecs")" = $((100 * (4 + 4 * 64))) ] && ok || bad "100 descriptors of 64 values"

# ---- pipes, formats, quiet stderr, version ----
cat "$D/queries.fvecs" | slem-esvm -q -n "$D/negatives.fvecs" - >"$T/pipe.fvecs" 2>"$T/err"
cmp -s "$T/pipe.fvecs" "$T/t1.fvecs" && [ ! -s "$T/err" ] && ok || bad "stdin to stdout differs"
check "npy out" slem-esvm -q -n "$D/negatives.fvecs" -o "$T/o.npy" "$D/queries.fvecs"
head -c 128 "$T/o.npy" | grep -q "'shape': (100, 64)" && ok || bad "npy shape"
slem-esvm -q --classifier -n "$D/negatives.fvecs" -F npy -o "$T/c.npy" "$E/digits-q20.fvecs"
head -c 128 "$T/c.npy" | grep -q "'shape': (20, 65)" && ok || bad "classifier npy shape (20, 65)"
slem-esvm -q --dtype f2 -n "$D/negatives.fvecs" -o "$T/o16.npy" "$E/digits-q20.fvecs"
head -c 128 "$T/o16.npy" | grep -q "'descr': '<f2'.*'shape': (20, 64)" && ok || bad "--dtype f2"
expect_fail "dtype i1 classifier" 2 "i1 is for unit-norm descriptors" "$T/x.npy" \
  slem-esvm --classifier --dtype i1 -n "$D/negatives.fvecs" -o "$T/x.npy" "$D/queries.fvecs"
slem-esvm -n "$D/negatives.fvecs" -o "$T/o.fvecs" "$D/queries.fvecs" 2>"$T/err"
[ ! -s "$T/err" ] || grep -q "looser tolerance" "$T/err" && ok || bad "unexpected stderr: $(cat "$T/err")"
slem-esvm --version >"$T/v" && grep -q "^LIBLINEAR [0-9]" "$T/v" && grep -q "^BLAS: " "$T/v" &&
  ok || bad "--version does not name LIBLINEAR: $(cat "$T/v")"
slem-esvm --help | grep -q -- "--pos-weight" && ok || bad "--help"

# ---- errors: message, status, no output, an existing output unchanged ----
expect_fail "C 0" 2 "-C: must be positive" "$T/x.fvecs" slem-esvm -C 0 -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "C negative" 2 "-C: must be positive" "$T/x.fvecs" slem-esvm -C -1 -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "pos-weight 0" 2 "--pos-weight: must be positive" "$T/x.fvecs" slem-esvm --pos-weight 0 -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "bad solver" 2 "--solver: 'l3'" "$T/x.fvecs" slem-esvm --solver l3 -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "negative bias" 2 "--bias: must be 0" "$T/x.fvecs" slem-esvm --bias -1 -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "no negatives option" 2 "no negatives: give -n" "$T/x.fvecs" slem-esvm -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "dimension mismatch" 1 "pos.fvecs: dimension 32, but the negatives .*negatives.fvecs have dimension 64" \
  "$T/x.fvecs" slem-esvm -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$E/pos.fvecs"
printf '# no vectors\n' >"$T/none.txt"
expect_fail "empty negatives" 1 "none.txt: no vectors" "$T/x.fvecs" slem-esvm -n "$T/none.txt" -o "$T/x.fvecs" "$D/queries.fvecs"
expect_fail "missing negatives" 1 "nowhere.fvecs" "$T/x.fvecs" slem-esvm -n "$T/nowhere.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
printf '1 2 3\n4 5 nan\n' >"$T/nan.txt"
expect_fail "NaN positive" 1 "nan.txt: line 2" "$T/x.fvecs" slem-esvm -n "$T/nan.txt" -o "$T/x.fvecs" "$T/nan.txt"
expect_fail "ids count" 1 "database.ids: 1000 ids for 100 vectors" "$T/x.fvecs" \
  slem-esvm --ids "$D/database.ids" -n "$D/negatives.fvecs" -o "$T/x.fvecs" "$D/queries.fvecs"
slem-esvm -t 2 --ids "$D/queries.ids" -n "$D/negatives.fvecs" -o "$T/ids.fvecs" "$D/queries.fvecs" 2>"$T/err"
cmp -s "$T/ids.fvecs" "$T/t1.fvecs" && grep -q "looser tolerance .*the first: 'digit[0-9]*')" "$T/err" && ok ||
  bad "--ids: output or warning: $(cat "$T/err")"
cp "$T/t1.fvecs" "$T/keep.fvecs"
slem-esvm -n "$D/negatives.fvecs" -o "$T/keep.fvecs" "$E/pos.fvecs" 2>/dev/null
[ $? = 1 ] && cmp -s "$T/keep.fvecs" "$T/t1.fvecs" && ok || bad "a failed run changed an existing output"

# the per-thread rand() lives in esvm_rand.o, linked into slem-esvm: libslem.a itself
# defines no C library symbol (every global it defines is slem_*), and slem-esvm does
if command -v nm >/dev/null 2>&1 && [ -f "$TOP/lib/libslem.a" ]; then
  foreign=$(nm -g --defined-only "$TOP/lib/libslem.a" |
    awk 'NF == 3 && $3 !~ /^slem_/ { print $3 }')
  [ -z "$foreign" ] && nm "$TOP/bin/slem-esvm" | grep -q " T rand$" && ok ||
    bad "libslem.a defines $foreign; or slem-esvm has no rand()"
fi

finish cli-esvm
