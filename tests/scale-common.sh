# shellcheck shell=sh
# Shared by tests/parallel.sh and tests/slurm.sh: sourced after testlib.sh, with SCALE
# set to the script under test (scripts/slem-parallel or scripts/slem-sbatch) and
# SCALE_ARGS to its engine options. The sharded pipeline must write, byte for byte, the
# ranking of one process running the same steps over all the rows.
D=$TOP/testdata/digits
head -c $((5 * 260)) "$D/database.fvecs" >"$T/five.fvecs"   # fewer rows than shards
# file names that a careless script would split, glob or expand
odd="$T/neg 'a\" \$(x) *.fvecs"
cp "$D/negatives.fvecs" "$odd"

# single OUT DB KERNEL...: the single-process pipeline
single() {
  o=$1 db=$2
  shift 2
  if [ $# -gt 0 ]; then slem-negstats -q "$@" -o "$T/s.slem" "$D/negatives.fvecs" "$D/validation.fvecs"
  else slem-negstats -q --leaf-rows 32 -o "$T/s.slem" "$D/negatives.fvecs" "$D/validation.fvecs"; fi
  slem-encode -q -c "$T/s.slem" -o "$T/s.db.fvecs" "$db" &&
    slem-encode -q -c "$T/s.slem" -o "$T/s.q.fvecs" "$D/queries.fvecs" &&
    slem-match -q -k 20 -d "$T/s.db.fvecs" -o "$o" "$T/s.q.fvecs"
}

# sharded NAME N DB OUT [OPTION]...: the same through the script
sharded() {
  name=$1 n=$2 db=$3 o=$4
  shift 4
  # shellcheck disable=SC2086
  "$SCALE" $SCALE_ARGS -N "$n" -n "$odd" -n "$D/validation.fvecs" -q "$D/queries.fvecs" \
    -d "$db" -o "$o" -k 20 "$@" >"$T/out" 2>"$T/err" || {
    bad "$name: status $?: $(tail -c 600 "$T/err")"
    return 1
  }
}

# --info pretty-prints with a tab after the colon; a cache without one fails every comparison
fp() { slem-negstats --info "$1" | sed -n 's/.*"fingerprint":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' | grep . || echo "no fingerprint: $1"; }
single "$T/lin.tsv" "$D/database.fvecs" || bad "single-process pipeline"
lin_fp=$(fp "$T/s.slem")
single "$T/lin5.tsv" "$T/five.fvecs" || bad "single-process pipeline of 5 rows"
single "$T/ker.tsv" "$D/database.fvecs" -K rbf:g=1 --rank 32 || bad "single-process kernel pipeline"
for n in 1 3 7; do
  if sharded "linear, $n shards" $n "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$T/w" --keep; then
    cmp -s "$T/r.tsv" "$T/lin.tsv" && ok || bad "linear, $n shards: another ranking than one process's"
    # the cache too is the very one (the ranking's float32 scores could hide a difference)
    [ "$(fp "$T/w/cache.slem")" = "$lin_fp" ] && ok || bad "linear, $n shards: another cache"
  fi
  rm -rf "$T/w"
  if sharded "kernel, $n shards" $n "$D/database.fvecs" "$T/r.tsv" -K rbf:g=1 --rank 32; then
    cmp -s "$T/r.tsv" "$T/ker.tsv" && ok || bad "kernel, $n shards: another ranking than one process's"
  fi
done
if sharded "7 shards of 5 database rows" 7 "$T/five.fvecs" "$T/r.tsv" --leaf-rows 32; then
  cmp -s "$T/r.tsv" "$T/lin5.tsv" && ok || bad "7 shards of 5 rows: another ranking"
fi
# the work directory is removed after success, unless kept
[ -n "$(find "$T" -maxdepth 1 -name '.slem-work*')" ] && bad "a work directory was left beside the ranking" || ok

# a task fails (its output's place is taken by a directory): the steps after it do not
# run, the message names the task and its log, no ranking is written; the same command
# with the same work directory resumes and runs only what did not finish
W="$T/work dir"
mkdir -p "$W/db/d.1.slem"
rm -f "$T/r.tsv"
if "$SCALE" $SCALE_ARGS -N 3 -n "$odd" -n "$D/validation.fvecs" -q "$D/queries.fvecs" \
  -d "$D/database.fvecs" -o "$T/r.tsv" -k 20 --leaf-rows 32 --workdir "$W" >"$T/out" 2>"$T/err"; then
  bad "a failing task: the script succeeded"
else
  [ $? = 1 ] && ok || bad "a failing task: status not 1"
  grep -q "step encode, task 1 failed (log: $W/log/encode.1.log)" "$T/err" && ok ||
    bad "a failing task: the message does not name the task and its log: $(cat "$T/err")"
  grep -q "d.1.slem" "$T/err" && ok || bad "a failing task: the log's end is not shown: $(cat "$T/err")"
  grep -q "resume" "$T/err" && ok || bad "a failing task: no word on resuming"
  [ -e "$T/r.tsv" ] && bad "a failing task: a ranking was written" || ok
  [ -n "$(find "$W/match" -type f)" ] && bad "a failing task: the match step ran" || ok
fi
echo "kept" >>"$W/log/negstats.0.log"
rmdir "$W/db/d.1.slem"
if sharded "the resumed run" 3 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$W" --keep; then
  cmp -s "$T/r.tsv" "$T/lin.tsv" && ok || bad "the resumed run: another ranking"
  grep -q resuming "$T/err" && ok || bad "the resumed run does not say it resumes"
  grep -q kept "$W/log/negstats.0.log" && ok || bad "a finished task ran again on resuming"
  [ -e "$W/done/merge.0" ] && ok || bad "--keep: the work directory was not kept"
fi
# a work directory made for another run is refused
expect_fail "another run's work directory" 1 "other inputs or options" "$T/r3.tsv" \
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv" --workdir "$W"
# usage errors
expect_fail "no shards" 2 "-N" "$T/r3.tsv" "$SCALE" -N 0 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv"
expect_fail "no queries" 2 "give -N" "$T/r3.tsv" "$SCALE" -N 2 -n "$odd" -d "$D/database.fvecs" -o "$T/r3.tsv"
expect_fail "unreadable input" 1 "cannot read" "$T/r3.tsv" "$SCALE" -N 2 -n "$T/nothing.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv"
"$SCALE" --help | grep -q "Usage:" && ok || bad "--help"
