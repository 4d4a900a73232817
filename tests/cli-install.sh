#!/bin/sh
# make install and make uninstall into a staging root: the tools, slem-tune and slem-plot-pr
# with their man pages, the installed scripts finding the installed tools, and nothing left
# behind by uninstall. Run from the top of the tree after make.
. "$(dirname "$0")/testlib.sh"
R="$T/root"
make -s install DESTDIR="$R" PREFIX=/usr >"$T/log" 2>&1 || bad "make install: $(tail -3 "$T/log")"
for f in slem-negstats slem-encode slem-match slem-eval slem-tune slem-plot-pr slem-reindex slem-parallel slem-sbatch; do
  if [ -x "$R/usr/bin/$f" ]; then ok; else bad "$f not installed"; fi
  if [ -f "$R/usr/share/man/man1/$f.1" ]; then ok; else bad "man page of $f not installed"; fi
done
# the scripts' --help prints the usage and nothing else; usage errors exit 2
ver=$(slem-match --version | sed -n '1s/^[^ ]* //p')
for s in slem-tune slem-plot-pr slem-reindex slem-parallel slem-sbatch; do
  PATH="$R/usr/bin:/usr/bin:/bin" "$R/usr/bin/$s" --help >"$T/out" 2>"$T/err"
  st=$?
  if [ "$st" = 0 ] && grep -q "^Usage: $s " "$T/out" && ! grep -q -E '^(set |[a-z_]+=|case |if |for )' "$T/out" && [ ! -s "$T/err" ]; then ok
  else bad "$s --help (status $st): $(head -5 "$T/out")"; fi
  PATH="$R/usr/bin:/usr/bin:/bin" "$R/usr/bin/$s" --no-such-option >/dev/null 2>"$T/err"
  st=$?
  if [ "$st" = 2 ]; then ok; else bad "$s with a bad option: status $st"; fi
  # the version of the installed tools, under the installed name
  PATH="/usr/bin:/bin" "$R/usr/bin/$s" --version >"$T/out" 2>"$T/err"
  st=$?
  if [ "$st" = 0 ] && [ "$(head -1 "$T/out")" = "$s $ver" ] && [ ! -s "$T/err" ]; then ok
  else bad "installed $s --version (status $st): $(head -1 "$T/out") $(head -1 "$T/err")"; fi
done
# the installed slem-parallel and slem-sbatch find their engines' drivers (libexec/slem/engines):
# each is chosen by its name, and --help shows every engine's options
for s in slem-parallel:parallel slem-sbatch:slurm; do
  [ -f "$R/usr/libexec/slem/engines/${s#*:}.sh" ] && ok || bad "the driver of ${s#*:} not installed"
done
PATH="/usr/bin:/bin" "$R/usr/bin/slem-sbatch" --help >"$T/out" 2>"$T/err"
grep -q '^GNU parallel (slem-parallel):' "$T/out" && grep -q '^  --wait ' "$T/out" && ok ||
  bad "installed slem-sbatch --help lacks an engine's options: $(cat "$T/err")"
PATH="/usr/bin:/bin" "$R/usr/bin/slem-parallel" --partiton p x >/dev/null 2>"$T/err"
PATH="/usr/bin:/bin" "$R/usr/bin/slem-sbatch" --partiton p x >/dev/null 2>>"$T/err"
[ "$(cat "$T/err")" = "slem-parallel: unknown argument '--partiton' (see --help)
slem-sbatch: unknown argument '--partiton'; did you mean '--partition'? (see --help)" ] && ok ||
  bad "installed slem-parallel and slem-sbatch, each its own engine's options: $(cat "$T/err")"
# the installed slem-tune runs the installed tools (bin/ of the tree is not on PATH)
D=$TOP/testdata/digits
(cd "$T" && PATH="$R/usr/bin:/usr/bin:/bin" slem-tune -g "1000" -n "$D/negatives.fvecs" -q "$D/validation.fvecs" \
  -d "$D/database.fvecs" --query-labels "$D/validation.labels" --db-labels "$D/database.labels" >"$T/out" 2>"$T/err") ||
  bad "installed slem-tune: $(cat "$T/err")"
grep -q '^1000 .*\*$' "$T/out" && ok || bad "installed slem-tune printed: $(cat "$T/out")"
# slem-trec_eval: slem-eval under trec_eval's name and command line, as trec_eval prints
TD=$TOP/testdata/trec
"$R/usr/bin/slem-trec_eval" -c "$TD/edge.qrels" "$TD/edge.run" >"$T/out" 2>"$T/err" &&
  cmp -s "$T/out" "$TD/expected.te-edge-official.txt" && ok || bad "installed slem-trec_eval: $(head -3 "$T/err")"
"$R/usr/bin/slem-trec_eval" -q -c -m all_trec "$TD/edge.qrels" "$TD/edge.run" >"$T/out" 2>"$T/err" &&
  cmp -s "$T/out" "$TD/expected.te-edge-alltrec-cq.txt" && ok || bad "installed slem-trec_eval -q -m all_trec: $(head -3 "$T/err")"
# its own man page, and its --help under its own name
[ -f "$R/usr/share/man/man1/slem-trec_eval.1" ] && grep -q '^\.TH SLEM-TREC_EVAL 1' "$R/usr/share/man/man1/slem-trec_eval.1" &&
  ok || bad "man page of slem-trec_eval not installed"
"$R/usr/bin/slem-trec_eval" --help >"$T/out" 2>"$T/err" && grep -q '^Usage: slem-trec_eval ' "$T/out" &&
  grep -q 'slem-trec_eval(1)' "$T/out" && ok || bad "installed slem-trec_eval --help: $(head -2 "$T/out")"
make -s uninstall DESTDIR="$R" PREFIX=/usr >"$T/log" 2>&1 || bad "make uninstall: $(tail -3 "$T/log")"
left=$(find "$R" ! -type d | wc -l)
if [ "$left" = 0 ]; then ok; else bad "uninstall left $left files: $(find "$R" -type f | head -3)"; fi
[ ! -e "$R/usr/libexec/slem" ] && ok || bad "uninstall left $R/usr/libexec/slem"
finish cli-install
