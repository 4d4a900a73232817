#!/bin/sh
# tests/cores.sh, the driver of make check-cores: a core the CPU lacks the instructions for,
# or that OpenBLAS does not run when asked, is skipped with a message; a suite failing on one
# core fails the run and names the core. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
unset OPENBLAS_CORETYPE
printf '#!/bin/sh\necho "fake: 1 passed, 0 failed"\n' >"$T/pass.sh"
printf '#!/bin/sh\n[ "$OPENBLAS_CORETYPE" = Prescott ] && { echo "FAIL: on $OPENBLAS_CORETYPE"; exit 1; }\necho "fake: 1 passed, 0 failed"\n' >"$T/failp.sh"
cores() { env MANS= CORE_UNIT= "$@" sh tests/cores.sh >"$T/out" 2>&1; }

cores CORETYPES="Haswell Prescott" CORE_TESTS="$T/pass.sh" CORE_JOBS=2
st=$?
if [ "$st" = 0 ] && grep -q "^check-cores: passed on: Haswell Prescott; failed on: none; skipped: none$" "$T/out" &&
  [ "$(grep -c '^fake: 1 passed' "$T/out")" = 2 ]; then ok; else bad "two cores (status $st): $(cat "$T/out")"; fi

# one core's failure fails the whole run, the others still run
cores CORETYPES="Haswell Prescott Zen" CORE_TESTS="$T/failp.sh" CORE_JOBS=2
st=$?
if [ "$st" = 1 ] && grep -q "^FAIL: on Prescott" "$T/out" &&
  grep -q "^check-cores: passed on: Haswell Zen; failed on: Prescott; skipped: none$" "$T/out"; then ok
else bad "a failure on Prescott (status $st): $(cat "$T/out")"; fi

# a CPU without AVX-512: SkylakeX and Cooperlake skipped, with the missing flag named
cores CORETYPES="SkylakeX Cooperlake Haswell" CORE_TESTS="$T/pass.sh" SLEM_TEST_CPU_FLAGS="fpu sse2 pni avx avx2 fma"
st=$?
if [ "$st" = 0 ] && grep -q "^== check-cores: SkylakeX skipped: this CPU lacks avx512f$" "$T/out" &&
  grep -q "^== check-cores: Cooperlake skipped: this CPU lacks avx512f$" "$T/out" &&
  grep -q "^check-cores: passed on: Haswell; failed on: none; skipped: SkylakeX Cooperlake$" "$T/out"; then ok
else bad "a CPU without AVX-512 (status $st): $(cat "$T/out")"; fi

# a name OpenBLAS does not know: it runs another core, and the name is skipped
cores CORETYPES="NoSuchCore" CORE_TESTS="$T/pass.sh"
st=$?
if [ "$st" = 0 ] && grep -q "^== check-cores: NoSuchCore skipped: OpenBLAS runs .* when asked for it$" "$T/out" &&
  ! grep -q "^fake" "$T/out"; then ok; else bad "an unknown core (status $st): $(cat "$T/out")"; fi
# a kernel that dies on this machine although the flags promise it (a fake tree whose
# slem-negstats is killed by SIGILL on SkylakeX): that core fails, named, with the status
mkdir -p "$T/top/bin" "$T/top/tests" "$T/top/testdata/golden"
cp tests/cores.sh "$T/top/tests/"
: >"$T/top/testdata/golden/neg.fvecs"
printf '#!/bin/sh\necho "BLAS core: $OPENBLAS_CORETYPE (OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE from the environment)"\n' >"$T/top/bin/slem-match"
printf '#!/bin/sh\n[ "$OPENBLAS_CORETYPE" = SkylakeX ] && kill -ILL $$\nexit 0\n' >"$T/top/bin/slem-negstats"
chmod +x "$T/top/bin/slem-match" "$T/top/bin/slem-negstats"
(cd "$T/top" && env MANS= CORE_UNIT= CORETYPES="Haswell SkylakeX" CORE_TESTS="$T/pass.sh" \
  SLEM_TEST_CPU_FLAGS="avx avx2 fma avx512f avx512vl avx512bw avx512dq avx512cd" sh tests/cores.sh) >"$T/out" 2>&1
st=$?
if [ "$st" = 1 ] && grep -q "^FAIL: SkylakeX: slem-negstats on testdata/golden/neg.fvecs (status 132)" "$T/out" &&
  grep -q "^check-cores: passed on: Haswell; failed on: SkylakeX; skipped: none$" "$T/out"; then ok
else bad "a kernel killed by SIGILL (status $st): $(cat "$T/out")"; fi
finish cli-cores
