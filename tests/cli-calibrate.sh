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
# without held-out negatives: other digits of the validation set are the only negatives
# shellcheck disable=SC2086
check "no held-out" slem-calibrate $IN -o "$T/val.txt"
[ "$(wc -l <"$T/val.txt")" = 20 ] && ! cmp -s "$T/val.txt" "$T/cal.txt" && ok || bad "validation-only fit"
slem-calibrate --help | grep -q -- "--positive-labels" && ok || bad "--help"
slem-calibrate --version | grep -q "^slem-calibrate " && ok || bad "--version"

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
