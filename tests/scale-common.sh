# shellcheck shell=sh
# Shared by tests/parallel.sh and tests/slurm.sh: sourced after testlib.sh, with SCALE
# set to the script under test (tools/slem-parallel or tools/slem-sbatch) and
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
# -K without --explicit: the exact kernel similarity, slem-match -c on the raw vectors
slem-match -q -c "$T/s.slem" -k 20 -d "$D/database.fvecs" -o "$T/kex.tsv" "$D/queries.fvecs" ||
  bad "single-process exact kernel ranking"
# ids: in the explicit descriptors (slem-encode --ids) and given to the exact match
slem-match -q -c "$T/s.slem" -k 20 -d "$D/database.fvecs" --db-ids "$D/database.ids" \
  --query-ids "$D/queries.ids" -o "$T/kexid.tsv" "$D/queries.fvecs" || bad "single-process exact kernel ranking, ids"
single "$T/lin.tsv" "$D/database.fvecs" || bad "single-process pipeline"
slem-encode -q -c "$T/s.slem" --ids "$D/database.ids" -F slem -o "$T/s.db.slem" "$D/database.fvecs" &&
  slem-match -q -k 20 -d "$T/s.db.slem" --query-ids "$D/queries.ids" -o "$T/linid.tsv" "$T/s.q.fvecs" ||
  bad "single-process pipeline, ids"
for n in 1 3 7; do
  if sharded "linear, $n shards" $n "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$T/w" --keep; then
    cmp -s "$T/r.tsv" "$T/lin.tsv" && ok || bad "linear, $n shards: another ranking than one process's"
    # the cache too is the very one (the ranking's float32 scores could hide a difference)
    [ "$(fp "$T/w/cache.slem")" = "$lin_fp" ] && ok || bad "linear, $n shards: another cache"
  fi
  rm -rf "$T/w"
  if sharded "kernel, explicit, $n shards" $n "$D/database.fvecs" "$T/r.tsv" -K rbf:g=1 --rank 32 --explicit; then
    cmp -s "$T/r.tsv" "$T/ker.tsv" && ok || bad "kernel, explicit, $n shards: another ranking than one process's"
  fi
  if sharded "kernel, exact, $n shards" $n "$D/database.fvecs" "$T/r.tsv" -K rbf:g=1 --rank 32 --quiet; then
    cmp -s "$T/r.tsv" "$T/kex.tsv" && ok || bad "kernel, exact, $n shards: another ranking than slem-match -c's"
    [ -s "$T/err" ] && bad "kernel, exact, $n shards: --quiet printed $(head -2 "$T/err")" || ok
  fi
  if sharded "kernel, exact, ids, $n shards" $n "$D/database.fvecs" "$T/r.tsv" -K rbf:g=1 --rank 32 \
    --db-ids "$D/database.ids" --query-ids "$D/queries.ids"; then
    cmp -s "$T/r.tsv" "$T/kexid.tsv" && ok || bad "kernel, exact, ids, $n shards: another ranking than slem-match -c's"
  fi
  if sharded "linear, ids, $n shards" $n "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 \
    --db-ids "$D/database.ids" --query-ids "$D/queries.ids"; then
    cmp -s "$T/r.tsv" "$T/linid.tsv" && ok || bad "linear, ids, $n shards: another ranking than one process's"
  fi
done
if sharded "7 shards of 5 database rows" 7 "$T/five.fvecs" "$T/r.tsv" --leaf-rows 32; then
  cmp -s "$T/r.tsv" "$T/lin5.tsv" && ok || bad "7 shards of 5 rows: another ranking"
fi
# the merge in two levels (past SLEM_SCALE_MERGE_MAX shards; 64 by default): groups of
# about sqrt(N) shards, then the groups, the very bytes of one level; with ids too, and
# with shards of no rows (7 shards of 5 rows); its group rankings removed after success
export SLEM_SCALE_MERGE_MAX=2
if sharded "linear, 7 shards, merged in two levels" 7 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 \
  --workdir "$T/w2"; then
  cmp -s "$T/r.tsv" "$T/lin.tsv" && ok || bad "linear, 7 shards in two levels: another ranking than one process's"
  [ -e "$T/w2" ] && bad "two levels: the work directory (the group rankings) was left" || ok
fi
if sharded "linear, ids, 5 shards, merged in two levels" 5 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 \
  --db-ids "$D/database.ids" --query-ids "$D/queries.ids"; then
  cmp -s "$T/r.tsv" "$T/linid.tsv" && ok || bad "linear, ids, 5 shards in two levels: another ranking"
fi
if sharded "7 shards of 5 rows, merged in two levels" 7 "$T/five.fvecs" "$T/r.tsv" --leaf-rows 32; then
  cmp -s "$T/r.tsv" "$T/lin5.tsv" && ok || bad "7 shards of 5 rows in two levels: another ranking"
fi
unset SLEM_SCALE_MERGE_MAX
# the work directory is removed after success, unless kept
[ -n "$(find "$T" -maxdepth 1 -name '.slem-work*')" ] && bad "a work directory was left beside the ranking" || ok

# A run fails part way in a work directory of the user's (holding their notes, named so
# that a careless script would expand it, split it, read a GNU parallel replacement string
# '{= perl =}' or a Slurm '%' pattern in it): the queries hold a NaN, so their encoding
# fails after the database's shards are encoded. The user then fixes the queries and
# rewrites the database with other rows of the same size and the same date (touch -r):
# the same command resumes, reuses the negatives' steps, encodes the database again (its
# content changed), and writes the ranking of a fresh run on the new database. The user's
# directory and notes survive every run; the ranking may be written inside it.
W="$T/work dir 'q' \"\$(touch $T/pwned)\" {=\$_=\"x\"=} %j %%
newline"
mkdir -p "$W"
echo "the user's notes" >"$W/notes.txt"
P="$T/db now.fvecs" Q="$T/queries now.fvecs"
cp "$D/database.fvecs" "$P"
cp "$D/queries.fvecs" "$Q"
printf '\000\000\300\177' | dd of="$Q" bs=1 seek=$((7 * 260 + 12)) conv=notrunc 2>/dev/null # a NaN in query 8
touch -d '2026-01-02 03:04:05' "$P" "$Q"
# the new database: the same rows, the halves swapped (the same size)
{ tail -c +$((500 * 260 + 1)) "$D/database.fvecs"; head -c $((500 * 260)) "$D/database.fvecs"; } >"$T/dbB.fvecs"
single "$T/linB.tsv" "$T/dbB.fvecs" || bad "single-process pipeline on the new database"
cmp -s "$T/linB.tsv" "$T/lin.tsv" && bad "the new database ranks as the old one: no test"
resumable() { # resumable [OPTION]...: the run of this part, its ranking in the user's directory
  # shellcheck disable=SC2086
  "$SCALE" $SCALE_ARGS -N 3 -n "$odd" -n "$D/validation.fvecs" -q "$Q" -d "$P" -o "$W/r.tsv" -k 20 \
    --leaf-rows 32 --workdir "$W" "$@" >"$T/out" 2>"$T/err"
}
if resumable; then
  bad "a failing task: the script succeeded"
else
  [ $? = 1 ] && ok || bad "a failing task: status not 1"
  grep -qF "step queries, task 0 failed (log: $W/log/queries.0.log)" "$T/err" && ok ||
    bad "a failing task: the message does not name the task and its log: $(cat "$T/err")"
  grep -q "NaN" "$T/err" && ok || bad "a failing task: the log's end is not shown: $(cat "$T/err")"
  grep -q "resume" "$T/err" && ok || bad "a failing task: no word on resuming"
  [ -e "$W/r.tsv" ] && bad "a failing task: a ranking was written" || ok
  [ -n "$(find "$W/match" -type f)" ] && bad "a failing task: the match step ran" || ok
  [ -f "$W/db/d.0.slem" ] && [ -f "$W/db/d.2.slem" ] && ok || bad "a failing task: the database was not encoded before"
fi
[ "$(cat "$W/notes.txt")" = "the user's notes" ] && ok || bad "a failed run: the user's notes are gone"
echo "kept" >>"$W/log/negstats.0.log"
cp "$D/queries.fvecs" "$Q"
cat "$T/dbB.fvecs" >"$P"
touch -d '2026-01-02 03:04:05' "$P" "$Q"
if resumable --keep; then
  cmp -s "$W/r.tsv" "$T/linB.tsv" && ok ||
    bad "the resumed run: not the ranking of a fresh run on the rewritten database$(cmp -s "$W/r.tsv" "$T/lin.tsv" && echo ' (the old one: stale shards)')"
  grep -q resuming "$T/err" && ok || bad "the resumed run does not say it resumes"
  grep -q "step encode: its inputs or options changed" "$T/err" && ok || bad "the resumed run does not say the database changed: $(cat "$T/err")"
  grep -q kept "$W/log/negstats.0.log" && ok || bad "a finished task ran again on resuming"
  [ -e "$W/done/merge.0" ] && ok || bad "--keep: the work directory was not kept"
fi
# the same command once more, everything done: nothing runs, and all that the runs wrote in
# the user's directory goes, by name; the directory, the notes and the ranking stay
if resumable; then
  cmp -s "$W/r.tsv" "$T/linB.tsv" && ok || bad "the run with all done: the ranking changed"
  [ "$(cd "$W" && ls -A | tr '\n' ' ')" = "notes.txt r.tsv " ] && ok ||
    bad "after success the user's work directory holds: $(cd "$W" && ls -A | tr '\n' ' ')"
else
  bad "the run with all done: status $?: $(cat "$T/err")"
fi
[ -d "$W" ] && [ "$(cat "$W/notes.txt")" = "the user's notes" ] && ok || bad "a successful run: the user's notes are gone"
[ -e "$T/pwned" ] && bad "the work directory's name ran as a command" || ok
# a work directory of the user's that holds a name the run would write (and then remove)
# is refused before any work, and left as it was
mkdir -p "$T/busy/log"
echo "mine" >"$T/busy/log/my.log"
expect_fail "a work directory holding 'log'" 1 "already holds 'log'" "$T/r3.tsv" \
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv" --workdir "$T/busy"
[ "$(cd "$T/busy" && find . | sort | tr '\n' ' ')" = ". ./log ./log/my.log " ] && ok ||
  bad "a refused work directory was changed: $(cd "$T/busy" && find . | tr '\n' ' ')"
# a ranking over the run's own files is refused before any work
mkdir -p "$T/wd/log"
expect_fail "-o inside the work directory's log" 2 "which this run writes and removes" - \
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/wd/log/r.tsv" --workdir "$T/wd"
expect_fail "-o over the work directory's params" 2 "a file of the work directory" "$T/wd/params" \
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/wd/params" --workdir "$T/wd"
[ "$(cd "$T/wd" && find . | sort | tr '\n' ' ')" = ". ./log " ] && ok ||
  bad "a refused run wrote in the work directory: $(cd "$T/wd" && find . | tr '\n' ' ')"
# a ranking that is a directory: refused before any work, nothing made beside it or in it
mkdir -p "$T/rankdir"
expect_fail "-o DIR" 1 "rankdir: is a directory" "$T/rankdir/x" \
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/rankdir"
[ -z "$(ls -A "$T/rankdir")" ] && [ -z "$(find "$T" -maxdepth 1 -name '.slem-work*')" ] && ok ||
  bad "-o DIR: files were left: $(ls -A "$T/rankdir") $(find "$T" -maxdepth 1 -name '.slem-work*')"
# a work directory that the run makes is removed after success, and the one of a failed
# run (made by the run) goes once a later run succeeds
if sharded "a new work directory" 2 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$T/new wd"; then
  cmp -s "$T/r.tsv" "$T/lin.tsv" && ok || bad "a new work directory: another ranking"
  [ -e "$T/new wd" ] && bad "a work directory the run made was left: $(ls -A "$T/new wd")" || ok
fi
# a work directory made for another run is refused
resumable --keep || bad "a kept work directory: status $?: $(cat "$T/err")"
expect_fail "another run's work directory" 1 "other inputs or options" "$T/r3.tsv" \
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv" --workdir "$W"
# usage errors
expect_fail "no shards" 2 "-N" "$T/r3.tsv" "$SCALE" -N 0 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv"
expect_fail "no queries" 2 "give -N" "$T/r3.tsv" "$SCALE" -N 2 -n "$odd" -d "$D/database.fvecs" -o "$T/r3.tsv"
expect_fail "unreadable input" 1 "cannot read" "$T/r3.tsv" "$SCALE" -N 2 -n "$T/nothing.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv"
"$SCALE" --help | grep -q "^Usage: ${SCALE##*/} -N" && ok || bad "--help names ${SCALE##*/}"
"$SCALE" --version >"$T/out" 2>&1 && [ "$(head -1 "$T/out")" = "${SCALE##*/} $(slem-match --version | sed -n '1s/^[^ ]* //p')" ] &&
  ok || bad "--version: $(head -1 "$T/out")"
expect_fail "--explicit without -K" 2 "--explicit" "$T/r3.tsv" "$SCALE" --explicit -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv"
