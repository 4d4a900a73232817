#!/bin/sh
# The golden comparison of tests/numcmp.awk (used by tests/man-examples.sh): numbers inside
# tokens compared by value, the text around them and integers exactly. Run from the top of
# the tree.
. "$(dirname "$0")/testlib.sh"

# same EXPECTED ACTUAL [awk options]: they must agree
same() {
  printf '%s\n' "$1" >"$T/exp"; printf '%s\n' "$2" >"$T/got"; shift 2
  if awk "$@" -f "$TOP/tests/numcmp.awk" "$T/exp" "$T/got" >"$T/why"; then ok
  else bad "'$(cat "$T/exp")' and '$(cat "$T/got")' should agree: $(cat "$T/why")"; fi
}
# differ EXPECTED ACTUAL [awk options]: they must not, with the reason on stdout
differ() {
  printf '%s\n' "$1" >"$T/exp"; printf '%s\n' "$2" >"$T/got"; shift 2
  if awk "$@" -f "$TOP/tests/numcmp.awk" "$T/exp" "$T/got" >"$T/why"; then
    bad "'$(cat "$T/exp")' and '$(cat "$T/got")' should differ"
  elif [ -s "$T/why" ]; then ok; else bad "no reason printed for '$(cat "$T/got")'"; fi
}

# the case of issue 26: variance_kept on SkylakeX/Cooperlake against the Haswell golden
same '	"variance_kept":	0.85197638578813117,' '	"variance_kept":	0.85197638578813173,'
same '0.85197638578813117' '0.85197638578813173'
same 'lambda=0.05000000000000001 r=16' 'lambda=0.049999999999999996 r=16'
same '[1.5e-3, -2.25E+02]' '[1.5000000001e-3, -2.2500000001E+02]'
same 'mAP	0.680999' 'mAP  0.680999 '
same 'x: 1' 'x: 0.99999999999999989'
same 'q0 1 17 0.93' 'q0 1 17 0.93'
same '0 items' '-0 items'
same '"nan", "inf"' '"nan", "inf"'
# a wrong digit a reader would see, integers, the text, the shape
differ '"variance_kept": 0.851976,' '"variance_kept": 0.851986,'
differ '"r": 16,' '"r": 17,'
differ 'rows 1000000' 'rows 1000001'
differ 'pca16.slem' 'pca17.slem'
differ '"kind": "pca",' '"kind": "pcb",'
differ '0.5,0.25' '0.5;0.25'
differ 'a 1' 'a 1 2'
differ 'a 1' 'a1'
differ 'score 1e-17' 'score -2e-17'
differ '-0.5' '0.5'
differ 'nan' '0.1'
# a tolerance given: atol for values near zero, a tighter rtol
same 'score 1e-17' 'score -2e-17' -v atol=1e-12
differ '0.85197638578813117' '0.85197638578813173' -v rtol=1e-16
# more or fewer lines
printf 'a\nb\n' >"$T/exp2"; printf 'a\n' >"$T/got2"
awk -f tests/numcmp.awk "$T/exp2" "$T/got2" >/dev/null && bad "a missing line passed" || ok
awk -f tests/numcmp.awk "$T/got2" "$T/exp2" >/dev/null && bad "an extra line passed" || ok
: >"$T/empty"
awk -f tests/numcmp.awk "$T/exp2" "$T/empty" >/dev/null && bad "no output passed" || ok
awk -f tests/numcmp.awk "$T/exp2" "$T/exp2" >/dev/null && ok || bad "a file against itself"
finish numcmp
