#!/bin/sh
# Runs the CLI tests with every slem tool under valgrind memcheck: any invalid access,
# use of uninitialised memory or definite leak makes the tool exit 99, which fails the
# test that ran it. Run from the top of the tree: sh tests/valgrind.sh [tests/cli.sh ...]
set -u
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)"; exit 1; }
TOP=$(pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/slem-vg.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
for tool in slem-negstats slem-encode slem-match slem-eval slem-esvm slem-calibrate slem-expand; do
  cat >"$W/$tool" <<WRAP
#!/bin/sh
# one BLAS thread: valgrind runs threads one at a time anyway
OPENBLAS_NUM_THREADS=1 exec valgrind -q --error-exitcode=99 --leak-check=full \\
  --errors-for-leak-kinds=definite --show-leak-kinds=definite "$TOP/bin/$tool" "\$@"
WRAP
  chmod +x "$W/$tool"
done
status=0
for t in ${@:-tests/cli.sh tests/cli-eval.sh tests/cli-kernel.sh tests/cli-formats.sh tests/cli-esvm.sh tests/cli-calibrate.sh tests/cli-expand.sh}; do
  SLEM_WRAP=$W sh "$t" || status=1
done
exit $status
