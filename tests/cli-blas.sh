#!/bin/sh
# The BLAS kernels: OpenBLAS falls back to generic kernels on CPUs it does not recognise,
# and the tools then execute themselves once more with OPENBLAS_CORETYPE naming the kernels
# the CPU can run, unless the user set it. SLEM_TEST_BLAS_CORE makes a recognised CPU look
# like one OpenBLAS fell back on. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
unset OPENBLAS_CORETYPE SLEM_BLAS_CORE_WAS

flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
want=
if has avx512f && has avx512vl && has avx512bw && has avx512dq && has avx512cd; then want=SkylakeX
elif has avx2 && has fma; then want=Haswell; fi

# the core OpenBLAS reports is named, and nothing is changed when it is a vector core
check "version names the core" slem-negstats --version
grep -q "^BLAS core: [A-Za-z0-9]" "$T/out" || bad "no BLAS core line: $(cat "$T/out")"

for tool in slem-negstats slem-encode slem-match slem-eval; do
  check "$tool on a generic core" env SLEM_TEST_BLAS_CORE=Prescott $tool --version
  if [ -n "$want" ]; then
    grep -q "^BLAS core: $want (OPENBLAS_CORETYPE=$want set by slem:\$" "$T/out" &&
      grep -q "^  OpenBLAS had chosen Prescott on this CPU)\$" "$T/out" ||
      bad "$tool did not choose $want: $(cat "$T/out")"
    awk 'length($0) > 80 { exit 1 }' "$T/out" || bad "$tool --version: a line wider than 80 columns: $(cat "$T/out")"
  else
    grep -q "^BLAS core: .*(chosen by OpenBLAS)" "$T/out" || bad "$tool changed the core on a CPU without AVX2: $(cat "$T/out")"
  fi
done

# the user's setting wins, even a generic one
check "user's core" env OPENBLAS_CORETYPE=Prescott SLEM_TEST_BLAS_CORE=Prescott slem-match --version
grep -q "^BLAS core: Prescott (OPENBLAS_CORETYPE=Prescott from the environment)" "$T/out" ||
  bad "the user's OPENBLAS_CORETYPE was not kept: $(cat "$T/out")"
[ -z "$want" ] || {
  check "generic core named" env OPENBLAS_CORETYPE=Prescott slem-match --version
  grep -q "^BLAS core: Prescott (OPENBLAS_CORETYPE=Prescott from the environment)" "$T/out" || bad "$(cat "$T/out")"
}

# the second image gets the same arguments and the same stdin, and computes the same as a
# run on the core it sets: the reference is computed on that core, not on OpenBLAS's own
# choice, whose kernels may round otherwise (Haswell and Zen print other last digits here
# than SkylakeX and Cooperlake, Prescott and Sandybridge others again)
check "negstats" slem-negstats -q --lambda 0.05 -o "$T/neg.slem" "$G/neg.fvecs"
if [ -n "$want" ]; then
  OPENBLAS_CORETYPE=$want slem-encode -c "$T/neg.slem" -F text <"$G/pos.fvecs" >"$T/ref.txt" || bad "encode"
else
  slem-encode -c "$T/neg.slem" -F text <"$G/pos.fvecs" >"$T/ref.txt" || bad "encode"
fi
SLEM_TEST_BLAS_CORE=Prescott slem-encode -c "$T/neg.slem" -F text - <"$G/pos.fvecs" >"$T/reexec.txt" 2>"$T/err" ||
  bad "encode after re-execution: $(cat "$T/err")"
if [ -s "$T/ref.txt" ] && cmp -s "$T/ref.txt" "$T/reexec.txt"; then ok; else bad "re-executed encode differs"; fi
# a usage error is still a usage error after the re-execution
SLEM_TEST_BLAS_CORE=Prescott slem-match -k 0 -d x >/dev/null 2>"$T/err"
st=$?
if [ "$st" = 2 ] && grep -q "^slem-match: -k" "$T/err"; then ok; else bad "usage error after re-execution: status $st $(cat "$T/err")"; fi
finish cli-blas
