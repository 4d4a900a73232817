#!/bin/sh
# A tool that reads from stdin because no file was named says so when stdin is a terminal
# (it would otherwise seem to hang), and only then: not for an explicit '-', not for a
# pipe. script(1) gives the tool a terminal; its stdin is at end, so the tool ends at once.
# Skipped without script(1). Run from the top of the tree after make.
. "$(dirname "$0")/testlib.sh"
if ! command -v script >/dev/null 2>&1; then
  echo "cli-tty: script(1) is not installed: skipped"
  exit 0
fi
D=$TOP/testdata/digits
slem-negstats -q -o "$T/c.slem" "$D/negatives.fvecs" || bad "slem-negstats"
slem-match -q -k 3 -d "$D/database.fvecs" -o "$T/r.tsv" "$D/queries.fvecs" || bad "slem-match"
# on_tty NAME COMMAND: runs COMMAND (shell text: names of this test only) on a terminal
on_tty() {
  rm -f "$T/ts"
  (cd "$T" && printf '' | timeout 20 script -qec "$2" "$T/ts" >/dev/null 2>&1)
  tr -d '\r' <"$T/ts" >"$T/tty.$1"
}
hint() { # hint NAME WHAT COMMAND: the hint is printed, once
  on_tty "$1" "$3"
  n=$(grep -c "^${1%% *}: reading $2 from the terminal (give a file, or - to read stdin; Ctrl-D ends)\$" "$T/tty.$1")
  [ "$n" = 1 ] && ok || bad "$1: no hint on a terminal: $(grep -v '^Script ' "$T/tty.$1" | head -3)"
}
nohint() { # nohint NAME COMMAND: no hint
  on_tty "$1" "$2"
  grep -q 'from the terminal' "$T/tty.$1" && bad "$1: a hint: $(grep 'from the terminal' "$T/tty.$1")" || ok
}
B=$TOP/bin
hint "slem-match" queries "$B/slem-match -k 3 -d $D/database.fvecs"
hint "slem-match -q" queries "$B/slem-match -q -k 3 -d $D/database.fvecs"
hint "slem-encode" vectors "$B/slem-encode -c c.slem"
hint "slem-esvm" vectors "$B/slem-esvm -n $D/negatives.fvecs"
hint "slem-eval" "the ranking" "$B/slem-eval --query-labels $D/queries.labels --db-labels $D/database.labels"
hint "slem-expand" "the ranking" "$B/slem-expand -d $D/database.fvecs -n 2 $D/queries.fvecs"
hint "slem-expand -r" vectors "$B/slem-expand -d $D/database.fvecs -n 2 -r r.tsv"
# an explicit '-', a file, a pipe: no hint
nohint "slem-match -" "$B/slem-match -k 3 -d $D/database.fvecs -"
nohint "slem-match FILE" "$B/slem-match -k 3 -d $D/database.fvecs $D/queries.fvecs"
nohint "slem-match <FILE" "$B/slem-match -k 3 -d $D/database.fvecs <$D/queries.fvecs"
nohint "slem-encode |" "cat $D/queries.fvecs | $B/slem-encode -c c.slem -F fvecs"

# ---- progress: one line that fits the terminal, however narrow ----
# progress NAME COLS WANT COMMAND: on a terminal COLS wide, every redraw of the progress
# line (the text between a carriage return and the erase to its end) fits in COLS - 1
# columns (one that reaches the edge wraps, and each redraw then leaves a copy above),
# and one of them holds WANT
progress() {
  rm -f "$T/ts"
  (cd "$T" && printf '' | timeout 20 script -qec "stty cols $2; $4" "$T/ts" >/dev/null 2>&1)
  tr '\r' '\n' <"$T/ts" | sed 's/\x1b\[K//g' | grep "^${1%% *}: [0-9]" >"$T/pl.$2"
  if [ ! -s "$T/pl.$2" ]; then bad "$1, $2 columns: no progress line: $(tr '\r' '\n' <"$T/ts" | head -5)"; return; fi
  long=$(awk -v c="$2" 'length($0) >= c + 0' "$T/pl.$2" | head -1)
  [ -z "$long" ] && ok || bad "$1, $2 columns: a progress line of ${#long} columns: '$long'"
  grep -q -- "$3" "$T/pl.$2" && ok || bad "$1, $2 columns: no '$3' in $(head -2 "$T/pl.$2")"
}
head -c $((512 * 260)) "$D/database.fvecs" >"$T/q512.fvecs"
progress "slem-esvm" 40 "^slem-esvm: 256/512 (50%)" "$B/slem-esvm -n $D/negatives.fvecs -o e40.fvecs q512.fvecs"
progress "slem-esvm" 20 "^slem-esvm: 256/512 " "$B/slem-esvm -n $D/negatives.fvecs -o e20.fvecs q512.fvecs"
progress "slem-esvm" 100 "^slem-esvm: 256 of 512 exemplar SVMs trained (50%)" "$B/slem-esvm -n $D/negatives.fvecs -o e100.fvecs q512.fvecs"
# stopped (Ctrl-Z) and continued (fg): the rate counts the time it ran, not the time it was
# stopped (counted, a stop of 1.5 s made 3000/s of a 1 s run read 700/s, and "m:ss left"
# grow by the stop). 2500 exemplars, stopped 1.5 s after 0.4 s; every rate shown must be
# at least 0.5 x 2500 / (the run's wall time - 1.5 s). A run too fast to show a rate
# (0.5 s) cannot tell: skipped
for i in 1 2 3; do cat "$D/database.fvecs"; done | head -c $((2500 * 260)) >"$T/q2k.fvecs"
rm -f "$T/ts"
t0=$(date +%s.%N)
(cd "$T" && printf '' | timeout 30 script -qec "stty cols 100; sh -c '$B/slem-esvm -n $D/negatives.fvecs -o stop.fvecs q2k.fvecs & p=\$!; sleep 0.4; kill -STOP \$p; sleep 1.5; kill -CONT \$p; wait \$p'" "$T/ts" >/dev/null 2>&1)
t1=$(date +%s.%N)
tr '\r' '\n' <"$T/ts" | sed 's/\x1b\[K//g' | grep '^slem-esvm: [0-9].*/s, ' >"$T/pl.stop"
low=$(awk -v t0="$t0" -v t1="$t1" '{ match($0, /[0-9]+[/]s/); r = substr($0, RSTART, RLENGTH - 2)
  if (r + 0 < 0.5 * 2500 / (t1 - t0 - 1.5)) { print; exit } }' "$T/pl.stop")
if [ ! -s "$T/pl.stop" ]; then echo "cli-tty: stopped and continued: the run showed no rate (too fast to tell): skipped"; ok
elif [ -n "$low" ]; then bad "stopped and continued: the rate counts the stop: '$low' (wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s)"
else ok; fi
# ---- Ctrl-C typed at the terminal: a script ends by SIGINT, as the tools do (it exited 1,
# and a shell loop around it went on to its next run), its temporary directory gone. Each
# is stalled in a command of its own (a FIFO no one writes, or a stand-in that sleeps
# found first on PATH); run.sh, in the foreground, catches SIGINT and says the status ----
S=$TOP/tools
mkdir -p "$T/stall" "$T/tmpd"
mkfifo "$T/stall.fifo"
for c in gnuplot cksum parallel; do printf '#!/bin/sh\nexec sleep 10\n' >"$T/stall/$c"; chmod +x "$T/stall/$c"; done
printf 'trap : INT\nPATH="%s:$PATH" TMPDIR="%s" "$@"\necho "status=$?"\n' "$T/stall" "$T/tmpd" >"$T/run.sh"
ctrl_c() { # ctrl_c NAME COMMAND: COMMAND (words without blanks) on a terminal, Ctrl-C after 0.3 s
  rm -f "$T/ts"
  (cd "$T" && { sleep 0.3; printf '\003'; sleep 0.2; } | timeout 20 script -qec "exec sh $T/run.sh $2" "$T/ts" >/dev/null 2>&1)
  st=$(tr -d '\r' <"$T/ts" | sed -n 's/^.*status=\([0-9]*\)$/\1/p')
  if [ "$st" = 130 ] && [ -z "$(ls -A "$T/tmpd")" ]; then ok
  else bad "$1, Ctrl-C: status '$st', not 130 (killed by SIGINT); left: $(ls -A "$T/tmpd")"; fi
  rm -rf "$T/tmpd"/* "$T/tmpd"/.[!.]* 2>/dev/null
}
ctrl_c slem-tune "$S/slem-tune -n $D/negatives.fvecs -q $D/validation.fvecs -d $D/database.fvecs --query-labels $T/stall.fifo --db-labels $D/database.labels"
printf '0\t1\n1\t0.5\n' >"$T/curve.pr"
ctrl_c slem-plot-pr "$S/plot-pr $T/stall.png $T/curve.pr"
ctrl_c slem-reindex "$S/slem-reindex -n $D/negatives.fvecs -q $D/queries.fvecs -o $T/ri.tsv $T/index"
ctrl_c slem-parallel "$S/slem-parallel -N 2 -n $D/negatives.fvecs -q $D/queries.fvecs -d $D/database.fvecs -o $T/par.tsv"
finish cli-tty
