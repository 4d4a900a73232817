#!/bin/sh
# tools/slem-parallel on this host with GNU parallel (-S :): sharded rankings equal to the
# single-process ones byte for byte, a failed task stopped and resumed. Run from the top of
# the tree; skipped when GNU parallel is not installed.
. "$(dirname "$0")/testlib.sh"
if [ -n "${SLEM_SKIP_ENGINES:-}" ]; then
  echo "parallel: skipped (SLEM_SKIP_ENGINES is set: the engines ran in the first pass)"
  exit 0
fi
if ! command -v parallel >/dev/null 2>&1; then
  echo "parallel: GNU parallel is not installed: skipped"
  exit 0
fi
SCALE=$TOP/tools/slem-parallel
SCALE_ARGS="-S : -j 2"
. "$TOP/tests/scale-common.sh"
. "$TOP/tests/scale-arith.sh"
finish parallel
