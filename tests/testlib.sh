# Shared by the CLI test scripts: sourced, not run. Counts passes and failures and
# makes the temporary directory $T, removed at exit.
set -u
TOP=$(pwd)
BIN=$TOP/bin
G=$TOP/testdata/golden
T=$(mktemp -d "${TMPDIR:-/tmp}/slem-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
# SLEM_WRAP: a directory of wrappers (tests/valgrind.sh) found before the tools
PATH=${SLEM_WRAP:+$SLEM_WRAP:}$BIN:$PATH
export LC_ALL=C
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { # check NAME COMMAND...: the command must succeed
  name=$1; shift
  if "$@" >"$T/out" 2>"$T/err"; then ok; else bad "$name (status $?): $(head -c 300 "$T/err")"; fi
}

# expect_fail NAME STATUS PATTERN OUTFILE COMMAND...: the command must exit with STATUS,
# print PATTERN on stderr, and leave neither OUTFILE nor a temporary file beside it.
expect_fail() {
  name=$1 want=$2 pat=$3 outf=$4; shift 4
  "$@" >"$T/out" 2>"$T/err"
  st=$?
  if [ "$st" != "$want" ]; then bad "$name: status $st, expected $want: $(head -c 300 "$T/err")"; return; fi
  if ! grep -q -- "$pat" "$T/err"; then bad "$name: stderr lacks '$pat': $(head -c 300 "$T/err")"; return; fi
  if [ "$outf" != - ] && { [ -e "$outf" ] || ls -a "$(dirname "$outf")" | grep -q '\.tmp\.'; }; then
    bad "$name: left an output file"; return
  fi
  ok
}

# compare_ranking A B TOL: same query, rank and id on every line; scores within TOL
compare_ranking() {
  if [ "$(wc -l <"$1")" != "$(wc -l <"$2")" ]; then echo "line counts differ"; return 1; fi
  paste "$1" "$2" | awk -v tol="$3" -F '\t' '
    $1 != $5 || $2 != $6 || $3 != $7 { print "line " NR ": " $0; bad = 1; exit }
    { d = $4 - $8; if (d < 0) d = -d; if (d > tol) { print "line " NR " score: " $0; bad = 1; exit } }
    END { exit bad }'
}

# npy_pair BASE ROWS COLS 'IDS' 'SCORES': an npy ranking pair BASE.I.npy, BASE.D.npy of ROWS x
# COLS, row after row: IDS whole numbers >= 0, or -1 (the padding); SCORES among 1 .75 .5
# .25 .125, or pad (-FLT_MAX, the padding's)
npy_pair() {
  for x in I:i8 D:f4; do
    printf '\223NUMPY\001\000\166\000%-117s\n' \
      "{'descr': '<${x#*:}', 'fortran_order': False, 'shape': ($2, $3), }" >"$1.${x%:*}.npy"
  done
  # shellcheck disable=SC2059
  printf "$(echo "$4" | awk '{ for (i = 1; i <= NF; i++) { v = $i
    for (b = 0; b < 8; b++) if (v < 0) printf "\\377"; else { printf "\\%03o", v % 256; v = int(v / 256) } } }')" >>"$1.I.npy"
  # shellcheck disable=SC2059
  printf "$(echo "$5" | awk 'BEGIN { b["1"] = "\\0\\0\\200\\077"; b[".75"] = "\\0\\0\\100\\077"
    b[".5"] = "\\0\\0\\0\\077"; b[".25"] = "\\0\\0\\200\\076"; b[".125"] = "\\0\\0\\0\\076"
    b["pad"] = "\\377\\377\\177\\377" } { for (i = 1; i <= NF; i++) printf "%s", b[$i] }')" >>"$1.D.npy"
}

# san_python COMMAND...: runs COMMAND (a Python that loads libslem.so); under make check
# SANITIZE=1 the library is instrumented and Debian's python3 is not, so the sanitizers'
# runtime of $CC is preloaded and leaks are not reported, as make python-test does
san_python() {
  if [ "${SANITIZE:-}" = 1 ]; then
    case ${CC:-cc} in *clang*) rt=libclang_rt.asan-x86_64.so ;; *) rt=libasan.so ;; esac
    env LD_PRELOAD="$(${CC:-cc} -print-file-name=$rt)" ASAN_OPTIONS=detect_leaks=0 "$@"
  else
    "$@"
  fi
}

# finish: prints the counts in the closing line the test runners read, and the status
finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}
