#!/bin/sh
# CLI tests of slem-calibrate (and, further down, slem-match --calibration): the digits
# against an independent scipy fit (testdata/esvm/calib-digits20.txt, scripts/gen-esvm.py),
# pipes, the errors. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
E=$TOP/testdata/esvm
D=$TOP/testdata/digits
IN="-c $E/clf-digits20.fvecs --exemplar-labels $E/digits-q20.labels --positives $D/validation.fvecs --positive-labels $D/validation.labels"

# ---- against scipy: a and b to a relative 1e-8 ----
# shellcheck disable=SC2086
check "calibrate" slem-calibrate $IN --negatives "$D/negatives.fvecs" -o "$T/cal.txt"
[ "$(wc -l <"$T/cal.txt")" = 20 ] && ok || bad "20 sigmoids expected: $(wc -l <"$T/cal.txt")"
worst=$(paste -d ' ' "$T/cal.txt" "$E/calib-digits20.txt" | awk 'NF == 4 {
  ra = ($1 - $3) / $3; rb = ($2 - $4) / $4; if (ra < 0) ra = -ra; if (rb < 0) rb = -rb
  if (ra > m) m = ra; if (rb > m) m = rb; n++ } END { if (n == 20) printf "%.3g\n", m }')
awk -v w="$worst" 'BEGIN { exit !(w != "" && w + 0 <= 1e-8) }' && ok || bad "calibration differs from scipy: $worst"
# %.17g: 17 significant digits
awk '{ for (i = 1; i <= 2; i++) { v = $i; gsub(/[-.]|e.*/, "", v); sub(/^0+/, "", v); if (length(v) > 17) exit 1 } }' "$T/cal.txt" &&
  [ "$(awk '{ print NF }' "$T/cal.txt" | sort -u)" = 2 ] && ok || bad "not two %.17g numbers per line"

# the classifiers through a pipe, the labels as per-exemplar ids: the same fit
# shellcheck disable=SC2086
cat "$E/clf-digits20.fvecs" | slem-calibrate -c - --exemplar-labels "$E/digits-q20.labels" \
  --positives "$D/validation.fvecs" --positive-labels "$D/validation.labels" \
  --negatives "$D/negatives.fvecs" >"$T/pipe.txt" && cmp -s "$T/pipe.txt" "$T/cal.txt" && ok ||
  bad "stdin classifiers differ"
# each file's own format: the classifiers named through a pipe, the rest by extension
cat "$E/clf-digits20.fvecs" | slem-calibrate -c - --classifiers-format fvecs --positives-format fvecs \
  --negatives-format fvecs --exemplar-labels "$E/digits-q20.labels" --positives "$D/validation.fvecs" \
  --positive-labels "$D/validation.labels" --negatives "$D/negatives.fvecs" >"$T/pipe2.txt" &&
  cmp -s "$T/pipe2.txt" "$T/cal.txt" && ok || bad "--classifiers-format fvecs differs"
expect_fail "--negatives-format npy" 1 "negatives.fvecs: not an npy file" - slem-calibrate $IN \
  --negatives "$D/negatives.fvecs" --negatives-format npy
# without held-out negatives: other digits of the validation set are the only negatives
# shellcheck disable=SC2086
check "no held-out" slem-calibrate $IN -o "$T/val.txt"
[ "$(wc -l <"$T/val.txt")" = 20 ] && ! cmp -s "$T/val.txt" "$T/cal.txt" && ok || bad "validation-only fit"
slem-calibrate --help | grep -q -- "--positive-labels" && ok || bad "--help"
slem-calibrate --version | grep -q "^slem-calibrate " && ok || bad "--version"

# ---- slem-match --affine and --calibration: w.x + b, then the query's sigmoid ----
check "match affine" slem-match --affine -k 1000 -d "$D/database.fvecs" -o "$T/affine.tsv" "$E/clf-digits20.fvecs"
check "match calibrated" slem-match --calibration "$E/calib-digits20.txt" -k 5 -d "$D/database.fvecs" \
  -o "$T/calibrated.tsv" "$E/clf-digits20.fvecs"
[ "$(wc -l <"$T/calibrated.tsv")" = 100 ] && ok || bad "20 queries x 5 results expected"
# each calibrated score is the reference sigmoid of the document's affine score (the whole
# affine ranking is there), best first; an exemplar with a < 0 (its class scores lower than
# the others) has its order reversed
awk 'NR == FNR { a[NR - 1] = $1; b[NR - 1] = $2; next }
  FILENAME ~ /affine/ { s[$1 " " $3] = $4; next }
  { key = $1 " " $3; if (!(key in s)) { print "missing: " $0; exit 1 }
    p = 1 / (1 + exp(-a[$1] * (s[key] - b[$1]))); d = p - $4; if (d < 0) d = -d
    if (d > 1e-6 * p + 1e-12) { print "score: " $0 " expected " p; exit 1 }
    if ($2 > 1 && $4 > last) { print "order: " $0; exit 1 } last = $4; n++ }
  END { if (n != 100) exit 1 }' "$E/calib-digits20.txt" "$T/affine.tsv" "$T/calibrated.tsv" >"$T/diff" &&
  ok || bad "calibrated scores: $(cat "$T/diff")"
expect_fail "descriptors as classifier queries" 1 "classifiers of 64 values (w, then b) score vectors of dimension 63" "$T/x.tsv" \
  slem-match --calibration "$E/calib-digits20.txt" -d "$D/database.fvecs" -o "$T/x.tsv" "$D/queries.fvecs"
expect_fail "classifiers without --affine" 1 "are the queries classifiers (w, then b)? They need --affine" "$T/x.tsv" \
  slem-match -d "$D/database.fvecs" -o "$T/x.tsv" "$E/clf-digits20.fvecs"
head -5 "$E/calib-digits20.txt" >"$T/short.txt"
expect_fail "too few sigmoids" 1 "query 6 has no sigmoid: the calibration holds 5" "$T/x.tsv" \
  slem-match --calibration "$T/short.txt" -d "$D/database.fvecs" -o "$T/x.tsv" "$E/clf-digits20.fvecs"
cat "$E/calib-digits20.txt" "$T/short.txt" >"$T/long.txt"
expect_fail "too many sigmoids" 1 "long.txt: 25 sigmoids for 20 queries" "$T/x.tsv" \
  slem-match --calibration "$T/long.txt" -d "$D/database.fvecs" -o "$T/x.tsv" "$E/clf-digits20.fvecs"
expect_fail "calibration with --normalize" 2 "go with neither -c nor --normalize" "$T/x.tsv" \
  slem-match -n --affine -d "$D/database.fvecs" -o "$T/x.tsv" "$E/clf-digits20.fvecs"
printf '1 x\n' >"$T/badcal.txt"
expect_fail "bad calibration file" 1 "badcal.txt: line 1: expected two finite numbers" "$T/x.tsv" \
  slem-match --calibration "$T/badcal.txt" -d "$D/database.fvecs" -o "$T/x.tsv" "$E/clf-digits20.fvecs"

# ---- errors ----
# shellcheck disable=SC2086
expect_fail "descriptors as classifiers" 1 "is it a file of descriptors rather than classifiers" "$T/x.txt" \
  slem-calibrate -c "$D/queries.fvecs" -e "$D/queries.labels" -p "$D/validation.fvecs" -l "$D/validation.labels" -o "$T/x.txt"
expect_fail "label count" 1 "queries.labels: 100 labels, but .*clf-digits20.fvecs has 20 classifiers" "$T/x.txt" \
  slem-calibrate -c "$E/clf-digits20.fvecs" -e "$D/queries.labels" -p "$D/validation.fvecs" -l "$D/validation.labels" -o "$T/x.txt"
sed '$s/.*/none/' "$E/digits-q20.labels" >"$T/lab"
expect_fail "no positive" 1 "exemplar 20 (label none) has no validation positive" "$T/x.txt" \
  slem-calibrate -c "$E/clf-digits20.fvecs" -e "$T/lab" -p "$D/validation.fvecs" -l "$D/validation.labels" -o "$T/x.txt"
expect_fail "negatives dimension" 1 "neg.fvecs: dimension 32, but the positives" "$T/x.txt" \
  slem-calibrate $IN -n "$E/neg.fvecs" -o "$T/x.txt"
expect_fail "missing option" 2 "no validation labels" "$T/x.txt" \
  slem-calibrate -c "$E/clf-digits20.fvecs" -e "$E/digits-q20.labels" -p "$D/validation.fvecs" -o "$T/x.txt"
expect_fail "two stdins" 2 "only one input can be stdin" "$T/x.txt" \
  slem-calibrate -c - -e - -p "$D/validation.fvecs" -l "$D/validation.labels" -o "$T/x.txt"
cp "$T/cal.txt" "$T/keep.txt"
slem-calibrate -c "$D/queries.fvecs" -e "$D/queries.labels" -p "$D/validation.fvecs" -l "$D/validation.labels" -o "$T/keep.txt" 2>/dev/null
[ $? = 1 ] && cmp -s "$T/keep.txt" "$T/cal.txt" && ok || bad "a failed run changed an existing output"

finish cli-calibrate
