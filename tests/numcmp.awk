# Compares an actual output with its expected text, numbers by value: the golden comparison
# of tests/man-examples.sh (and of any test that compares printed floats with a golden).
# Usage: awk -v rtol=1e-6 -f tests/numcmp.awk EXPECTED ACTUAL; exit status 0 when they agree,
# 1 otherwise, with the first line that differs on stdout.
#
# Each line is cut into the numbers it holds and the text around them, wherever the numbers
# stand: alone, in JSON (`0.85197638578813117,`), in `key=value`, in brackets or after a
# colon. The text must be the same character for character, white space apart (runs of
# blanks and tabs count as one separator; leading and trailing ones are ignored). A number
# written as an integer on both sides (counts, ranks, ids, sizes) must be the same integer.
# Any other pair of numbers must agree to a relative rtol (default 1e-6) or an absolute
# atol (default 0, for values printed near zero): floats that went through BLAS are the
# same bits only for one kernel on one machine, and the last digits of a %.17g value differ
# between OpenBLAS's kernels (Haswell, SkylakeX, Zen, Prescott, ...), which sum in other
# orders. Measured on the man pages' and the demo's examples under six kernels: doubles
# printed with %.17g differ by up to 1e-15 relative (variance_kept), float32 scores printed
# with %.9g by an ulp (8e-8 relative); 1e-6 is more than ten times the largest difference
# seen and still catches a value wrong in its 6th significant digit. A test that needs
# another bound passes -v rtol= (or -v atol= for values printed near zero).
# The sign is part of the number (`-0.5`), so `a-1` reads as "a" and -1; both sides read
# the same way. nan and inf (any case, signed) must match as words.

function canon(s, nums,    n, t, pre) {
  n = 0; t = ""
  gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s)
  while (match(s, /-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?/)) {
    pre = substr(s, 1, RSTART - 1)
    nums[++n] = substr(s, RSTART, RLENGTH)
    t = t pre "\001"
    s = substr(s, RSTART + RLENGTH)
  }
  nums[0] = n
  return t s
}
function isint(s) { return s ~ /^-?[0-9]+$/ }
function agree(x, y,    d, m) {
  if (x == y) return 1
  if (isint(x) && isint(y)) return x + 0 == y + 0
  d = x - y; if (d < 0) d = -d
  m = x + 0; if (m < 0) m = -m
  return d <= atol || d <= rtol * m
}
function differ(why) { printf "line %d: %s\n  expected: %s\n  got:      %s\n", FNR, why, want[FNR], $0; bad = 1; exit 1 }
BEGIN {
  if (rtol == "") rtol = 1e-6; if (atol == "") atol = 0; bad = 0; ne = 0; no = 0
  while ((r = (getline line < ARGV[1])) > 0) want[++ne] = line
  if (r < 0) { printf "cannot read %s\n", ARGV[1]; bad = 1; exit 1 }
  close(ARGV[1]); ARGV[1] = ""
}
{
  no = FNR
  if (FNR > ne) differ("more lines than expected")
  ta = canon(want[FNR], a); tb = canon($0, b)
  if (ta != tb) differ("text differs")
  if (a[0] != b[0]) differ("number count differs")
  for (k = 1; k <= a[0]; k++)
    if (!agree(a[k], b[k])) differ("number " k " differs: " a[k] " against " b[k])
}
END {
  if (bad) exit 1
  if (no != ne) { printf "%d lines, expected %d\n", no, ne; exit 1 }
  exit 0
}
