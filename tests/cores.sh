#!/bin/sh
# make check-cores: the suites whose results go through BLAS, once per OpenBLAS kernel.
# OpenBLAS picks its kernels by CPU (Haswell, SkylakeX, Cooperlake, Zen, Sandybridge,
# Prescott, ...), and they round differently: a golden that holds one kernel's last bits
# passes on one machine and fails on the next. Each core of CORETYPES runs the man pages'
# examples (MANS), the CLI scripts of CORE_TESTS and the unit tests of CORE_UNIT with
# OPENBLAS_CORETYPE set to it. A core this CPU or this OpenBLAS cannot run is skipped with a
# message: its instructions missing from /proc/cpuinfo, or OpenBLAS reporting another core
# than the one asked for (a build without DYNAMIC_ARCH, an unknown name).
# Environment (the Makefile sets it): CORETYPES, MANS, CORE_TESTS, CORE_UNIT, and
# CORE_JOBS, how many cores run side by side (default 1).
# Run from the top of the tree.
set -u
TOP=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/slem-cores.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
: "${CORETYPES:=Haswell SkylakeX Cooperlake Zen Prescott Sandybridge}"
: "${MANS:=}" "${CORE_TESTS:=}" "${CORE_UNIT:=}"

# SLEM_TEST_CPU_FLAGS stands for /proc/cpuinfo's flags in tests/cli-cores.sh
if [ -n "${SLEM_TEST_CPU_FLAGS:-}" ]; then flags=" $SLEM_TEST_CPU_FLAGS "
else flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*://') "; fi
# needs CORE: the CPU flags OpenBLAS's kernels for CORE execute (empty: not checked)
needs() {
  case $(echo "$1" | tr '[:upper:]' '[:lower:]') in
    prescott) echo pni ;;
    sandybridge) echo avx ;;
    haswell | zen) echo "avx2 fma" ;;
    skylakex) echo "avx512f avx512vl avx512bw avx512dq avx512cd" ;;
    cooperlake) echo "avx512f avx512vl avx512bw avx512dq avx512cd avx512_bf16" ;;
    *) echo "" ;;
  esac
}
# runnable CORE: why not on stdout, status 1, when this machine cannot run CORE
runnable() {
  if [ "$flags" != "  " ]; then
    for f in $(needs "$1"); do
      case $flags in *" $f "*) ;; *) echo "this CPU lacks $f"; return 1 ;; esac
    done
  fi
  got=$(OPENBLAS_CORETYPE=$1 "$TOP/bin/slem-match" --version 2>&1 | sed -n 's/^BLAS core: \([^ ]*\).*/\1/p')
  if [ -z "$got" ]; then echo "the BLAS reports no OpenBLAS core"; return 1; fi
  if [ "$(echo "$got" | tr '[:upper:]' '[:lower:]')" != "$(echo "$1" | tr '[:upper:]' '[:lower:]')" ]; then
    echo "OpenBLAS runs $got when asked for it"; return 1
  fi
  return 0
}

# one core: its log on stdout; status 0 passed, 1 failed, 2 skipped
run_core() {
  core=$1
  if ! why=$(runnable "$core"); then
    echo "== check-cores: $core skipped: $why"
    return 2
  fi
  echo "== check-cores: OPENBLAS_CORETYPE=$core"
  f=0
  # a tiny computation first: a kernel that cannot run here dies on its first instruction
  OPENBLAS_CORETYPE=$core "$TOP/bin/slem-negstats" -q -o "$T/probe.$core.slem" "$TOP/testdata/golden/neg.fvecs" 2>"$T/err.$core"
  st=$?
  if [ "$st" != 0 ]; then
    echo "FAIL: $core: slem-negstats on testdata/golden/neg.fvecs (status $st): $(head -c 300 "$T/err.$core")"
    return 1
  fi
  if [ -n "$MANS" ]; then OPENBLAS_CORETYPE=$core sh tests/man-examples.sh $MANS || f=$((f + 1)); fi
  for t in $CORE_TESTS; do OPENBLAS_CORETYPE=$core sh "$t" || f=$((f + 1)); done
  for u in $CORE_UNIT; do
    if OPENBLAS_CORETYPE=$core CK_VERBOSITY=minimal "$u" >"$T/unit.$core" 2>&1; then
      echo "$(basename "$u"): $(grep '%' "$T/unit.$core" | tail -n 1)"
    else f=$((f + 1)); echo "FAIL: $u"; cat "$T/unit.$core"; fi
  done
  [ "$f" = 0 ] && echo "== check-cores: $core passed" || echo "== check-cores: $core: $f suites failed"
  [ "$f" = 0 ]
}

# CORE_JOBS cores side by side (each suite's temporary files are its own); the logs are
# printed core by core when all are done
jobs=${CORE_JOBS:-1}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
lane=0
while [ "$lane" -lt "$jobs" ]; do
  (
    i=0
    for core in $CORETYPES; do
      if [ $((i % jobs)) = "$lane" ]; then
        run_core "$core" >"$T/log.$i" 2>&1
        echo $? >"$T/status.$i"
      fi
      i=$((i + 1))
    done
  ) &
  lane=$((lane + 1))
done
wait

ran= skipped= failed=
i=0
for core in $CORETYPES; do
  cat "$T/log.$i" 2>/dev/null
  case $(cat "$T/status.$i" 2>/dev/null) in
    0) ran="$ran $core" ;;
    2) skipped="$skipped $core" ;;
    *) failed="$failed $core" ;;
  esac
  i=$((i + 1))
done
echo "check-cores: passed on:${ran:- none}; failed on:${failed:- none}; skipped:${skipped:- none}"
[ -z "$failed" ]
