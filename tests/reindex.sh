#!/bin/sh
# The nightly re-indexing of tools/slem-reindex for six simulated nights: new segments,
# an empty night, cron firing twice, kill -9 at varying moments (the whole run, or the
# script alone while a tool goes on), a rebuild with new negatives under kills, a full
# disk (a small tmpfs when it can be mounted, else ENOSPC injected by tests/faultshim.c).
# After every run the ranking must be byte for byte the one a fresh single run over all
# the segments gives, or the previous night's: never a mix, a cut one or nothing; the
# current generation must be searchable; the raw vectors of every segment kept; and after
# each completed night no temporary file left. First, the stale temporaries of killed
# writers. Run from the top of the tree after make (about 30 s).
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
RX=$TOP/tools/slem-reindex
Q=$D/queries.fvecs
rec=$(( 4 + 4 * $(od -An -tu4 -N4 "$D/database.fvecs" | tr -d ' ') ))

# ---- stale temporaries: a killed writer's is removed by the next writer, a live one's not
check "cache" slem-negstats -q -o "$T/neg.slem" "$D/negatives.fvecs"
# a writer fed through a FIFO, killed after its first block while more input may come
mkfifo "$T/fifo"
slem-encode -q -c "$T/neg.slem" -o "$T/x.slem" "$T/fifo" &
pid=$!
exec 7>"$T/fifo"
cat "$D/database.fvecs" "$D/database.fvecs" >&7
i=0
while [ $i -lt 200 ] && ! ls -a "$T" | grep -q '^\.x\.slem\.tmp\.'; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
exec 7>&-
[ "$(ls -a "$T" | grep -c '^\.x\.slem\.tmp\.')" = 1 ] && ok || bad "the killed writer left no temporary file: $(ls -a "$T")"
: >"$T/.x.slem.tmp.LIVE01"
# a live writer: a process that holds the lock on its temporary file
(exec 7<"$T/.x.slem.tmp.LIVE01"; flock 7; exec sleep 30) >/dev/null 2>&1 &
holder=$!
i=0
while [ $i -lt 200 ] && flock -n "$T/.x.slem.tmp.LIVE01" true; do sleep 0.1; i=$((i + 1)); done
check "the next writer" slem-encode -q -c "$T/neg.slem" -o "$T/x.slem" "$Q"
[ "$(ls -a "$T" | grep '^\.x\.slem\.tmp\.')" = .x.slem.tmp.LIVE01 ] && ok ||
  bad "stale temporaries: $(ls -a "$T" | grep '\.tmp\.' | tr '\n' ' ')"
kill $holder
wait $holder 2>/dev/null
check "a writer after the holder died" slem-encode -q -c "$T/neg.slem" -o "$T/x.slem" "$Q"
ls -a "$T" | grep -q '\.tmp\.' && bad "the dead holder's temporary file stayed" || ok
rm -f "$T/x.slem" "$T/neg.slem"

# ---- the nights ----
# the segments: rows of the digits database, one night empty
seg() { # seg NAME FIRST COUNT
  tail -c +$(($2 * rec + 1)) "$D/database.fvecs" | head -c $(($3 * rec)) >"$T/in/$1.fvecs"
}
mkdir "$T/in" "$T/refs"
seg n1 0 200; seg n2 200 150; : >"$T/in/n3.fvecs"; seg n4 350 250; seg n5 600 150; seg n6 750 250
head -c $((rec * 400)) "$D/negatives.fvecs" >"$T/neg2.fvecs" # the rebuilt negatives
cp "$D/negatives.fvecs" "$T/neg.fvecs"
# ref I NEGATIVES: what one fresh run gives over the segments of nights 1..I
ref() { # ref I NEGATIVES [LAMBDA-REL]
  n=$1
  w=$T/refs/w.$n
  mkdir "$w"
  slem-negstats -q -r "${3:-1}" -o "$w/neg.slem" "$2" || return 1
  set --
  j=1
  while [ $j -le $n ]; do
    slem-encode -q -c "$w/neg.slem" -o "$w/$j.slem" "$T/in/n$j.fvecs" || return 1
    set -- "$@" -d "$w/$j.slem"
    j=$((j + 1))
  done
  slem-encode -q -c "$w/neg.slem" -o "$w/q.slem" "$Q" &&
    slem-match -q -k 10 -o "$T/refs/$n" "$@" "$w/q.slem"
}
for i in 1 2 3 4; do ref $i "$T/neg.fvecs" || bad "reference $i"; done
ref 5 "$T/neg2.fvecs" || bad "reference 5"
ref 6 "$T/neg.fvecs" || bad "reference 6"
: >"$T/in/n7.fvecs" # no night 7 segment: an empty one ranks the same
ref 7 "$T/neg.fvecs" 10 || bad "reference 7"
cmp -s "$T/neg.fvecs" "$T/neg2.fvecs" && bad "the rebuilt negatives are the same: the test cannot tell"

# the index: on a small tmpfs when this user can mount one (the full-disk night), else in $T
X=$T/x
mkdir "$X"
mounted=0
if mount -t tmpfs -o size=8m tmpfs "$X" 2>/dev/null; then
  mounted=1
  trap 'umount "$X" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
fi
R=$X/ranking.tsv
night() { # night I [OPTION]...: one run of night I, its status in $st
  i=$1; shift
  "$RX" -k 10 -q "$Q" -o "$R" -s "2026-11-2$i" "$@" "$X/idx" "$T/in/n$i.fvecs" >"$T/out" 2>"$T/err"
  st=$?
}
# state I: the ranking is night I's or night I-1's, whole; the current generation answers
# a reader with one of them too; the raw vectors of nights 1..I-1 are there
state() {
  w=$1
  p=$(($1 - 1))
  cmp -s "$R" "$T/refs/$w" || { [ $p -ge 1 ] && cmp -s "$R" "$T/refs/$p"; } ||
    { bad "night $w: the ranking is neither night $w's nor night $p's ($(wc -c <"$R" 2>&1) bytes)"; return; }
  G=$(readlink -f "$X/idx/current")
  set --
  for s in "$G"/seg/*.slem; do set -- "$@" -d "$s"; done
  slem-encode -q -c "$G/neg.slem" "$Q" | slem-match -q -k 10 "$@" - >"$T/reader" 2>"$T/rerr" ||
    { bad "night $w: a reader of the current generation failed: $(head -c 300 "$T/rerr")"; return; }
  cmp -s "$T/reader" "$T/refs/$w" || { [ $p -ge 1 ] && cmp -s "$T/reader" "$T/refs/$p"; } ||
    { bad "night $w: a reader of the current generation gets another ranking"; return; }
  j=1
  while [ $j -le $p ]; do
    cmp -s "$X/idx/raw/2026-11-2$j.fvecs" "$T/in/n$j.fvecs" || { bad "night $w: raw vectors of night $j lost"; return; }
    j=$((j + 1))
  done
  ok
}
# done I: night I complete: its ranking, and no temporary file anywhere
done_night() {
  cmp -s "$R" "$T/refs/$1" && ok || bad "night $1: not the fresh run's ranking: $(head -c 300 "$T/err")"
  left=$(find "$X" -name '.*.tmp.*' -o -name tmp | head -3)
  [ -z "$left" ] && ok || bad "night $1: temporaries left: $left"
}
# kills I OPTION...: runs night I and kills it at each command, then after varying delays
# (see below)
kills() {
  i=$1; shift
  # at each command the script runs that writes (the Nth: a tool, cp, mv, ln, rm, sync,
  # mkdir), from the state the night began in: a tool killed at once or 10 ms after it
  # started, another command just after it did its work. The copy of the script in
  # $K/tools finds the wrapped tools in $K/bin, and the wrapped commands first on PATH
  rm -rf "$T/snap"
  mkdir "$T/snap"
  cp -a "$X/idx" "$T/snap/idx"
  cp -p "$R" "$T/snap/ranking"
  at=1
  while [ $at -le 60 ]; do
    for delay in 0 0.01; do
      rm -rf "$X/idx"
      cp -a "$T/snap/idx" "$X/idx"
      cp -p "$T/snap/ranking" "$R"
      echo 0 >"$K/count"
      PATH="$K/path:$PATH" KILL_AT=$at KILL_DELAY=$delay setsid "$K/tools/slem-reindex" -w 30 \
        -k 10 -q "$Q" -o "$R" -s "2026-11-2$i" "$@" "$X/idx" "$T/in/n$i.fvecs" >/dev/null 2>&1
      state $i
      # then the next run, which must finish the night
      "$RX" -w 30 -k 10 -q "$Q" -o "$R" -s "2026-11-2$i" "$@" "$X/idx" "$T/in/n$i.fvecs" >/dev/null 2>"$T/err" ||
        bad "night $i: the run after a kill at command $at: $(cat "$T/err")"
      done_night $i
    done
    [ "$(cat "$K/count")" -ge $at ] || break # the run ended before its Nth command
    at=$((at + 1))
  done
  [ $at -gt 10 ] && ok || bad "night $i: only $at commands to kill the run at"
  # then kills after varying delays, one after the other from where the last left: the
  # whole run (its process group) or, every third time, the script alone while its tool
  # goes on
  for delay in 0.01 0.03 0.05 0.08 0.12 0.17 0.25 0.35; do
    setsid "$RX" -w 30 -k 10 -q "$Q" -o "$R" -s "2026-11-2$i" "$@" "$X/idx" "$T/in/n$i.fvecs" >/dev/null 2>&1 &
    pid=$!
    sleep $delay
    nkill=$((${nkill:-0} + 1))
    if [ $((nkill % 3)) = 0 ]; then kill -9 $pid 2>/dev/null; else kill -9 -- -$pid 2>/dev/null; fi
    wait $pid 2>/dev/null
    # a tool of a run whose script alone was killed holds the lock until it ends
    flock -w 30 "$X/idx/lock" true
    state $i
  done
}
# the wrappers: the KILL_AT-th call of any of them kills its run (its process group)
K=$T/kit
mkdir "$K" "$K/bin" "$K/path" "$K/tools"
cp "$RX" "$K/tools/slem-reindex"
for t in slem-negstats slem-encode slem-match; do
  cat >"$K/bin/$t" <<EOS
#!/bin/sh
n=\$((\$(cat "$K/count") + 1))
echo \$n >"$K/count"
if [ "\$n" = "\${KILL_AT:-0}" ]; then
  "$BIN/$t" "\$@" &
  sleep "\$KILL_DELAY"
  kill -9 0
fi
exec "$BIN/$t" "\$@"
EOS
  chmod +x "$K/bin/$t"
done
for t in cp mv ln rm sync mkdir; do
  real=$(command -v $t)
  cat >"$K/path/$t" <<EOS
#!/bin/sh
n=\$((\$(cat "$K/count") + 1))
echo \$n >"$K/count"
"$real" "\$@" || exit
[ "\$n" = "\${KILL_AT:-0}" ] && kill -9 0
exit 0
EOS
  chmod +x "$K/path/$t"
done

# night 1: the first
night 1 -n "$T/neg.fvecs"
[ "$st" = 0 ] && ok || bad "night 1: status $st: $(cat "$T/err")"
done_night 1
# the night in one line on stderr: the segment and its rows, the generation, rebuilt or
# not, the ranking, the seconds (a night said nothing)
[ "$(wc -l <"$T/err")" = 1 ] &&
  grep -q "^slem-reindex: $X/idx: segment 2026-11-21 added (200 rows); generation gen.1 made; ranking of 1 segment (200 rows) written to $R; [0-9]*\.[0-9] s$" "$T/err" &&
  ok || bad "night 1's line: $(cat "$T/err")"
# night 2: cron fires twice, 0.05 s apart: the second waits (or finds the lock and exits
# 75 without -w); the ranking is the night's, never a mix
"$RX" -k 10 -q "$Q" -o "$R" -s 2026-11-22 -n "$T/neg.fvecs" "$X/idx" "$T/in/n2.fvecs" 2>"$T/err1" &
a=$!
sleep 0.05
"$RX" -k 10 -q "$Q" -o "$R" -s 2026-11-22 -n "$T/neg.fvecs" "$X/idx" "$T/in/n2.fvecs" 2>"$T/err2"
sb=$?
wait $a
sa=$?
# (on a busy machine the second may take the lock first: then the first exits 75)
case $sa$sb in
  00) ok ;;
  075) grep -q "another run" "$T/err2" && ok || bad "cron twice: no message: $(cat "$T/err2")" ;;
  750) grep -q "another run" "$T/err1" && ok || bad "cron twice: no message: $(cat "$T/err1")" ;;
  *) bad "cron twice: statuses $sa and $sb: $(cat "$T/err1" "$T/err2")" ;;
esac
done_night 2
"$RX" -w 30 -k 10 -q "$Q" -o "$R" -s 2026-11-22 -n "$T/neg.fvecs" "$X/idx" "$T/in/n2.fvecs" 2>"$T/err1" &
a=$!
sleep 0.03
"$RX" -w 30 -k 10 -q "$Q" -o "$R" -s 2026-11-22 -n "$T/neg.fvecs" "$X/idx" "$T/in/n2.fvecs" 2>"$T/err2"
sb=$?
wait $a
sa=$?
[ "$sa" = 0 ] && [ "$sb" = 0 ] && ok || bad "cron twice with -w: statuses $sa and $sb: $(cat "$T/err1" "$T/err2")"
done_night 2
grep -q "segment 2026-11-22 kept by an earlier run (150 rows); generation gen.1 not rebuilt" "$T/err1" "$T/err2" && ok ||
  bad "cron twice with -w: the second run's line: $(cat "$T/err1" "$T/err2")"
# the same night under another name (cron firing twice a second apart with -w, a retry:
# the default names differ) is skipped with a message and status 0: its vectors became a
# second segment, and every later ranking held each of them twice
for s in -s=2026-11-22b none; do
  if [ "$s" = none ]; then set --; else set -- -s "${s#-s=}"; fi
  "$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" "$@" "$X/idx" "$T/in/n2.fvecs" 2>"$T/err"
  st=$?
  [ $st = 0 ] && grep -q "n2.fvecs not added: it is segment 2026-11-22 already (--force adds it); generation gen.1 not rebuilt; ranking of 2 segments (350 rows)" "$T/err" &&
    [ "$(ls "$X/idx/raw")" = "$(printf '2026-11-21.fvecs\n2026-11-22.fvecs')" ] && ok ||
    bad "the same night again ($s): status $st: $(cat "$T/err"; ls "$X/idx/raw")"
  done_night 2
done
# night 3: no new images: an empty segment, a success
night 3 -n "$T/neg.fvecs"
[ "$st" = 0 ] && ok || bad "night 3 (empty): status $st: $(cat "$T/err")"
done_night 3
# --status INDEX: the generation, the BLAS core, the negatives' checksum, the segments and
# their rows, the ranking's time; --dry-run: what a run would do. Neither touches anything
snap() { find "$X/idx" "$R" -exec stat -c '%n %s %Y %i' {} + | sort; }
snap >"$T/before"
core=$(slem-negstats --version | sed -n 's/^BLAS core: \([A-Za-z0-9]*\).*/\1/p')
"$RX" --status "$X/idx" >"$T/out" 2>"$T/err"
st=$?
{ printf 'index: %s\ngeneration: gen.1\nBLAS core: %s\n' "$X/idx" "$core"
  cksum <"$T/neg.fvecs" | awk '{ print "negatives: cksum " $1 ", " $2 " bytes; -r 1" }'
  printf 'segments: 3 (350 rows)\n  2026-11-21: 200 rows\n  2026-11-22: 150 rows\n  2026-11-23: 0 rows\n'; } >"$T/want"
[ $st = 0 ] && head -n 8 "$T/out" | cmp -s - "$T/want" &&
  sed -n 9p "$T/out" | grep -q "^ranking: 20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z, 3 segments (350 rows) of gen.1, to $R\$" &&
  [ "$(wc -l <"$T/out")" = 9 ] && ok || bad "--status: status $st: $(cat "$T/out" "$T/err")"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" -s 2026-11-24 --dry-run "$X/idx" "$T/in/n4.fvecs" >"$T/out" 2>"$T/err"
st=$?
[ $st = 0 ] && grep -q "^  add segment 2026-11-24 from .*n4.fvecs (kept as $X/idx/raw/2026-11-24.fvecs once it encodes)$" "$T/out" &&
  grep -q "^  keep generation gen.1 " "$T/out" && grep -q "^  write the ranking of 4 segments to $R (-k 10, tsv)$" "$T/out" && ok ||
  bad "--dry-run of night 4: status $st: $(cat "$T/out" "$T/err")"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg2.fvecs" --dry-run "$X/idx" "$T/in/n2.fvecs" >"$T/out" 2>"$T/err"
st=$?
[ $st = 0 ] && grep -q "^  add no segment: .*n2.fvecs is segment 2026-11-22 already (--force adds it)$" "$T/out" &&
  grep -q "^  make generation gen.2 (the negatives changed)" "$T/out" && ok ||
  bad "--dry-run with new negatives: status $st: $(cat "$T/out" "$T/err")"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" -s 2026-11-21 --dry-run "$X/idx" "$T/in/n4.fvecs" >"$T/out" 2>"$T/err"
[ $? = 1 ] && grep -q "segment 2026-11-21 exists already" "$T/err" && ok || bad "--dry-run of a name taken: $(cat "$T/out" "$T/err")"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" --dry-run "$T/dry-idx" "$T/in/n4.fvecs" >"$T/out" 2>"$T/err" &&
  grep -q "^  make the index $T/dry-idx$" "$T/out" && [ ! -e "$T/dry-idx" ] && ok || bad "--dry-run of a new index: $(cat "$T/out" "$T/err")"
snap | cmp -s - "$T/before" && ok || bad "--status or --dry-run changed the index: $(snap | diff "$T/before" -)"
"$RX" --status "$T/in" >"$T/out" 2>"$T/err"
[ $? = 1 ] && grep -q "is not an index" "$T/err" && ok || bad "--status of a directory that is not an index: $(cat "$T/err")"
"$RX" --status -k 3 "$X/idx" >"$T/out" 2>"$T/err"
[ $? = 2 ] && ok || bad "--status with an option of a run: $(cat "$T/err")"
# night 4: killed again and again, then a run to the end
kills 4 -n "$T/neg.fvecs"
night 4 -w 30 -n "$T/neg.fvecs"
[ "$st" = 0 ] && ok || bad "night 4: status $st: $(cat "$T/err")"
done_night 4
# night 5: the negatives changed: a rebuild, killed again and again, then to the end
kills 5 -n "$T/neg2.fvecs"
night 5 -w 30 -n "$T/neg2.fvecs"
[ "$st" = 0 ] && ok || bad "night 5: status $st: $(cat "$T/err")"
done_night 5
[ "$(readlink "$X/idx/previous")" != "$(readlink "$X/idx/current")" ] &&
  [ "$(ls -d "$X/idx"/gen.* | wc -l)" = 2 ] && ok || bad "night 5: generations: $(ls "$X/idx")"
# night 6: the negatives back (another rebuild), on a full disk: fails, or is done; the
# ranking whole either way; then done with room again
if [ $mounted = 1 ]; then
  for free in 4096 65536 200000 400000 700000 1200000; do
    avail=$(df -B1 --output=avail "$X" | tail -n 1)
    head -c $((avail - free)) /dev/zero >"$X/fill" 2>/dev/null
    night 6 -n "$T/neg.fvecs"
    rm -f "$X/fill"
    statuses="${statuses:-}$st"
    { [ "$st" = 0 ] || { [ "$st" = 1 ] && grep -q "No space left on device" "$T/err"; }; } && ok ||
      bad "full disk ($free bytes free): status $st: $(cat "$T/err")"
    state 6
  done
else
  make -s build/tests/faultshim.so >/dev/null 2>&1 || bad "faultshim"
  for n in 1 2 3 5 8 13; do
    LD_PRELOAD=$TOP/build/tests/faultshim.so FAULT_WRITE=$n night 6 -n "$T/neg.fvecs"
    statuses="${statuses:-}$st"
    [ "$st" = 0 ] || [ "$st" = 1 ] && ok || bad "ENOSPC at write $n: status $st: $(cat "$T/err")"
    state 6
  done
fi
case $statuses in *1*) ok ;; *) bad "no run failed for lack of room: statuses $statuses" ;; esac
night 6 -n "$T/neg.fvecs"
[ "$st" = 0 ] && ok || bad "night 6: status $st: $(cat "$T/err")"
done_night 6
gen6=$(readlink "$X/idx/current")
# another lambda (-r) is a rebuild too; a night with no new vectors (none given) a success
"$RX" -r 10 -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" "$X/idx" 2>"$T/err"
[ $? = 0 ] && cmp -s "$R" "$T/refs/7" && ok || bad "a rebuild for -r 10: $(cat "$T/err")"
[ "$(readlink "$X/idx/current")" != "$gen6" ] && [ "$(ls "$X/idx/raw" | wc -l)" = 6 ] && ok ||
  bad "a rebuild for -r 10: $(ls "$X/idx" "$X/idx/raw")"
# usage errors exit 2 and touch nothing
for args in "-k 0" "-F csv" "-w soon" "--bogus x" "--bogus"; do
  # shellcheck disable=SC2086 # the options split on purpose
  "$RX" $args -n "$T/neg.fvecs" -q "$Q" -o "$T/u.tsv" "$T/uidx" "$T/in/n1.fvecs" 2>"$T/err"
  [ $? = 2 ] && [ ! -e "$T/uidx" ] && [ ! -e "$T/u.tsv" ] && ok || bad "usage error $args: $(cat "$T/err")"
done
"$RX" -q "$Q" -o "$T/u.tsv" "$T/uidx" 2>"$T/err"
[ $? = 2 ] && grep -q "no negatives" "$T/err" && [ ! -e "$T/uidx" ] && ok || bad "no -n: $(cat "$T/err")"
# an unknown option is named as such (alone, --bogus said "needs a value"; after INDEX it
# was taken for the new vectors, status 1), and an empty -s is refused (it was taken
# silently for the default name)
for where in first last; do
  if [ $where = first ]; then set -- --bogus "$T/uidx"; else set -- "$T/uidx" --bogus; fi
  "$RX" -n "$T/neg.fvecs" -q "$Q" -o "$T/u.tsv" "$@" 2>"$T/err"
  [ $? = 2 ] && grep -q "unknown option '--bogus'" "$T/err" && [ ! -e "$T/uidx" ] && ok || bad "--bogus $where: $(cat "$T/err")"
done
"$RX" --bogus 2>"$T/err"
[ $? = 2 ] && grep -q "unknown option '--bogus'" "$T/err" && ok || bad "--bogus alone: $(cat "$T/err")"
"$RX" -n "$T/neg.fvecs" -q "$Q" -o "$T/u.tsv" -s '' "$T/uidx" "$T/in/n1.fvecs" 2>"$T/err"
[ $? = 2 ] && grep -q "^slem-reindex: -s '': a segment name is" "$T/err" && [ ! -e "$T/uidx" ] && [ ! -e "$T/u.tsv" ] && ok ||
  bad "-s '': $(cat "$T/err")"
# a name that is not a plain name is a usage error too
"$RX" -n "$T/neg.fvecs" -q "$Q" -o "$R" -s '../x' "$X/idx" "$T/in/n1.fvecs" 2>"$T/err"
[ $? = 2 ] && grep -q "a segment name is" "$T/err" && ok || bad "a bad segment name: $(cat "$T/err")"
# the same name with other vectors: refused, nothing changed
"$RX" -n "$T/neg.fvecs" -q "$Q" -o "$R" -s 2026-11-21 "$X/idx" "$T/in/n2.fvecs" 2>"$T/err"
[ $? = 1 ] && grep -q "segment 2026-11-21 exists already" "$T/err" && cmp -s "$R" "$T/refs/7" && ok ||
  bad "a segment name taken: $(cat "$T/err")"
# a bad night's file (another dimension; ids of another count) is refused before it is kept:
# the index stays as it was, and the next good night goes on
printf '\002\000\000\000\000\000\200\077\000\000\000\100' >"$T/d2.fvecs"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" -r 10 -s bad "$X/idx" "$T/d2.fvecs" 2>"$T/err"
# (its copy in INDEX/tmp was left there, while the message said nothing was kept)
[ $? = 1 ] && grep -q "dimension 2, but the cache" "$T/err" &&
  grep -q "d2.fvecs (read from its copy .*, now removed) cannot be a segment: nothing kept" "$T/err" &&
  [ ! -e "$X/idx/raw/bad.fvecs" ] && [ ! -e "$X/idx/tmp" ] && cmp -s "$R" "$T/refs/7" && ok ||
  bad "a file of another dimension: $(cat "$T/err"; ls "$X/idx/raw" "$X/idx/tmp")"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" -r 10 "$X/idx" 2>"$T/err" && cmp -s "$R" "$T/refs/7" &&
  [ -z "$(find "$X" -name '.*.tmp.*' -o -name tmp -o -name stage)" ] && ok || bad "the night after a bad file: $(cat "$T/err")"
# ids: each night's ids kept beside its vectors and carried by its segment; an empty night
# without ids gets an empty list; the queries named by -Q
I=$T/idi
sed -n '1,200p' "$D/database.ids" >"$T/a.ids"
sed -n '201,350p' "$D/database.ids" >"$T/c.ids"
"$RX" -k 10 -q "$Q" -Q "$D/queries.ids" -o "$T/ri.tsv" -n "$T/neg.fvecs" -s a -i "$T/a.ids" "$I" "$T/in/n1.fvecs" 2>"$T/err" &&
  "$RX" -k 10 -q "$Q" -Q "$D/queries.ids" -o "$T/ri.tsv" -n "$T/neg.fvecs" -s b "$I" "$T/in/n3.fvecs" 2>>"$T/err" &&
  "$RX" -k 10 -q "$Q" -Q "$D/queries.ids" -o "$T/ri.tsv" -n "$T/neg.fvecs" -s c -i "$T/c.ids" "$I" "$T/in/n2.fvecs" 2>>"$T/err" &&
  ok || bad "nights with ids: $(cat "$T/err")"
w=$T/refs/ids
mkdir "$w"
: >"$T/empty.ids"
slem-negstats -q -o "$w/neg.slem" "$T/neg.fvecs" &&
  slem-encode -q -c "$w/neg.slem" --ids "$T/a.ids" -o "$w/a.slem" "$T/in/n1.fvecs" &&
  slem-encode -q -c "$w/neg.slem" --ids "$T/empty.ids" -o "$w/b.slem" "$T/in/n3.fvecs" &&
  slem-encode -q -c "$w/neg.slem" --ids "$T/c.ids" -o "$w/c.slem" "$T/in/n2.fvecs" &&
  slem-encode -q -c "$w/neg.slem" --ids "$D/queries.ids" -o "$w/q.slem" "$Q" &&
  slem-match -q -k 10 -d "$w/a.slem" -d "$w/b.slem" -d "$w/c.slem" -o "$w/ref.tsv" "$w/q.slem" || bad "the ids reference"
cmp -s "$T/ri.tsv" "$w/ref.tsv" && head -n 1 "$T/ri.tsv" | grep -q '^digit[0-9]*	1	digit' && ok ||
  bad "ranking with ids: $(head -n 2 "$T/ri.tsv")"
"$RX" -k 10 -q "$Q" -o "$T/ri.tsv" -n "$T/neg.fvecs" -s d "$I" "$T/in/n4.fvecs" 2>"$T/err"
[ $? = 1 ] && grep -q "carry ids: give the ids" "$T/err" && [ ! -e "$I/raw/d.fvecs" ] && ok || bad "a night without ids: $(cat "$T/err")"
"$RX" -k 10 -q "$Q" -o "$T/ri.tsv" -n "$T/neg.fvecs" -s d -i "$T/c.ids" "$I" "$T/in/n4.fvecs" 2>"$T/err"
[ $? = 1 ] && grep -q "150 ids for the 250 vectors" "$T/err" && [ ! -e "$I/raw/d.fvecs" ] && [ ! -e "$I/ids/d.ids" ] &&
  [ ! -e "$I/tmp" ] && cmp -s "$T/ri.tsv" "$w/ref.tsv" && ok || bad "ids of another count: $(cat "$T/err"; ls "$I/tmp")"
"$RX" -k 10 -q "$Q" -o "$R" -n "$T/neg.fvecs" -r 10 -s d -i "$T/c.ids" "$X/idx" "$T/in/n2.fvecs" 2>"$T/err"
[ $? = 1 ] && grep -q "segments without ids" "$T/err" && ok || bad "ids for an index without: $(cat "$T/err")"
# names with spaces, quotes, $( ), back quotes and * are arguments, never shell text
H="$T/h \$(touch pwned) *'\"x"
mkdir "$H"
cp "$T/neg.fvecs" "$H/n '\$(id)'.fvecs"
cp "$T/in/n1.fvecs" "$H/new *.fvecs"
(cd "$H" && "$RX" -k 10 -q "$Q" -o "rank \$x.tsv" -n "n '\$(id)'.fvecs" "idx \`x\`" "new *.fvecs") 2>"$T/err"
[ $? = 0 ] && cmp -s "$H/rank \$x.tsv" "$T/refs/1" && [ ! -e pwned ] && [ ! -e "$H/pwned" ] && ok ||
  bad "hostile names: $(cat "$T/err")"
# a directory that is not an index (it holds things, no lock file) is refused, untouched:
# the run would remove its tmp and gen.N
mkdir -p "$T/proj/tmp" "$T/proj/gen.7"
echo notes >"$T/proj/tmp/notes.txt"
echo data >"$T/proj/gen.7/data"
"$RX" -k 10 -s n1 -q "$Q" -o "$T/proj.tsv" -n "$T/neg.fvecs" "$T/proj" "$T/in/n1.fvecs" 2>"$T/err"
[ $? = 1 ] && grep -q "proj is not an index (it holds gen.7 and no lock file)" "$T/err" &&
  [ -f "$T/proj/tmp/notes.txt" ] && [ -f "$T/proj/gen.7/data" ] && [ ! -e "$T/proj/lock" ] &&
  [ ! -e "$T/proj.tsv" ] && ok || bad "a directory that is not an index: $(cat "$T/err"; ls -R "$T/proj")"
# an empty directory, or one holding only lost+found, is a new index
mkdir -p "$T/proj2/lost+found"
"$RX" -k 10 -s n1 -q "$Q" -o "$T/proj2.tsv" -n "$T/neg.fvecs" "$T/proj2" "$T/in/n1.fvecs" 2>"$T/err" &&
  cmp -s "$T/proj2.tsv" "$T/refs/1" && [ -d "$T/proj2/lost+found" ] && ok || bad "an empty directory as an index: $(cat "$T/err")"
# a night under another BLAS core (another node, an OpenBLAS upgrade): every segment is
# re-encoded under it, and the ranking is that of a fresh run under that core alone, not a
# mix of two cores' descriptors (whose last bits can differ through the cache)
if grep -m1 '^flags' /proc/cpuinfo | grep -w avx2 | grep -qw fma; then
  for c in Haswell Prescott; do
    OPENBLAS_CORETYPE=$c "$RX" -k 10 -s n1 -q "$Q" -o "$T/core-$c.tsv" -n "$T/neg.fvecs" "$T/core-$c" "$T/in/n1.fvecs" 2>"$T/err" &&
      OPENBLAS_CORETYPE=$c "$RX" -k 10 -s n2 -q "$Q" -o "$T/core-$c.tsv" -n "$T/neg.fvecs" "$T/core-$c" "$T/in/n2.fvecs" 2>"$T/err" &&
      ok || bad "two nights under $c: $(cat "$T/err")"
  done
  # (since issue 43 the encoders' products are the same on every core, and at this size
  # the two cores' caches too: their rankings may agree; what is checked is that the mixed
  # index says it re-encodes and ranks as a fresh run under one core)
  OPENBLAS_CORETYPE=Haswell "$RX" -k 10 -s n1 -q "$Q" -o "$T/core-mix.tsv" -n "$T/neg.fvecs" "$T/core-mix" "$T/in/n1.fvecs" 2>"$T/err" &&
    OPENBLAS_CORETYPE=Prescott "$RX" -k 10 -s n2 -q "$Q" -o "$T/core-mix.tsv" -n "$T/neg.fvecs" "$T/core-mix" "$T/in/n2.fvecs" 2>"$T/err" &&
    grep -q "the BLAS core is Prescott, the index's Haswell: re-encoding every segment" "$T/err" &&
    cmp -s "$T/core-mix.tsv" "$T/core-Prescott.tsv" && ok ||
    bad "a night under another core: not the ranking of one core: $(cat "$T/err")"
else
  echo "reindex: skipped the night under another core: this CPU lacks AVX2 or FMA (Haswell's kernels)"
fi
# a ranking named as one of the index's files or in its directories: refused (status 2),
# the index as it was and searchable. Once -o INDEX/raw/x.fvecs made the ranking a segment
# (every later night failed at step encode), -o INDEX/lock replaced the lock file (the lock
# of a running run on the old one then kept no one out), -o INDEX/tmp/r.tsv was removed
# with tmp at the end of a run that said it succeeded
"$RX" -k 10 -s n1 -q "$Q" -o "$T/own.tsv" -n "$T/neg.fvecs" "$T/own" "$T/in/n1.fvecs" 2>"$T/err" ||
  bad "an index for -o: $(cat "$T/err")"
lock0=$(ls -i "$T/own/lock")
for o in lock raw/x.fvecs tmp/r.tsv ids/r.tsv current/seg/r.tsv gen.1/r.tsv gen.9 previous; do
  "$RX" -k 10 -q "$Q" -o "$T/own/$o" -n "$T/neg.fvecs" "$T/own" 2>"$T/err"
  st=$?
  [ $st = 2 ] && grep -q "index's own directories\|a file of the index" "$T/err" && ok ||
    bad "-o INDEX/$o: status $st: $(cat "$T/err")"
done
[ "$(ls -i "$T/own/lock")" = "$lock0" ] && [ "$(ls "$T/own/raw")" = n1.fvecs ] && [ ! -e "$T/own/gen.9" ] && ok ||
  bad "-o in the index: the index changed: $(ls -R "$T/own")"
"$RX" -k 10 -q "$Q" -o "$T/own/r.tsv" -n "$T/neg.fvecs" "$T/own" 2>"$T/err" && cmp -s "$T/own/r.tsv" "$T/own.tsv" && ok ||
  bad "-o INDEX/r.tsv (a name of the user's in the index): $(cat "$T/err")"
# -o through a symbolic link: slem-match replaces the file the link leads to, so a link to
# INDEX/lock or into INDEX/raw is refused as those names are (the link to a raw segment once
# had the ranking written over the segment's kept vectors); and an index whose name ends in
# a newline: -o 'INDEX<newline>/lock' went through, $(dirname) dropping the newline
raw0=$(cksum <"$T/own/raw/n1.fvecs")
for o in raw/n1.fvecs lock current ids/x.ids; do
  rm -f "$T/link.tsv"
  ln -s "$T/own/$o" "$T/link.tsv"
  "$RX" -k 10 -q "$Q" -o "$T/link.tsv" -n "$T/neg.fvecs" "$T/own" 2>"$T/err"
  st=$?
  [ $st = 2 ] && grep -q "index's own directories\|a file of the index" "$T/err" && ok ||
    bad "-o a link to INDEX/$o: status $st: $(cat "$T/err")"
done
rm -f "$T/link.tsv"
[ "$(cksum <"$T/own/raw/n1.fvecs")" = "$raw0" ] && [ "$(ls -i "$T/own/lock")" = "$lock0" ] &&
  [ ! -s "$T/own/lock" ] && [ "$(ls "$T/own/ids")" = "" ] && ok ||
  bad "-o a link into the index: the index changed: $(ls -lR "$T/own")"
NL="$T/nl
"
"$RX" -k 10 -s n1 -q "$Q" -o "$T/nl.tsv" -n "$T/neg.fvecs" "$NL" "$T/in/n1.fvecs" 2>"$T/err" ||
  bad "an index named with a newline: $(cat "$T/err")"
"$RX" -k 10 -q "$Q" -o "$NL/lock" -n "$T/neg.fvecs" "$NL" 2>"$T/err"
st=$?
[ $st = 2 ] && grep -q "a file of the index" "$T/err" && [ ! -s "$NL/lock" ] && ok ||
  bad "-o INDEX<newline>/lock: status $st, lock of $(wc -c <"$NL/lock") bytes: $(cat "$T/err")"
# a rebuild removes the older generations it made, never a gen.N of someone else's (a folder
# without negatives.cksum, a file): they were removed with rm -rf
mkdir "$T/own/gen.77"
echo data >"$T/own/gen.77/data"
echo file >"$T/own/gen.78"
for i in 1 2; do
  "$RX" --rebuild -k 10 -q "$Q" -o "$T/own/r.tsv" -n "$T/neg.fvecs" "$T/own" 2>"$T/err" ||
    bad "rebuild $i beside a gen.N of the user's: $(cat "$T/err")"
done
[ -f "$T/own/gen.77/data" ] && [ -f "$T/own/gen.78" ] && [ ! -e "$T/own/gen.1" ] &&
  [ "$(readlink "$T/own/current")" = gen.80 ] && [ "$(readlink "$T/own/previous")" = gen.79 ] &&
  cmp -s "$T/own/r.tsv" "$T/own.tsv" && ok || bad "a rebuild beside a gen.N of the user's: $(ls -l "$T/own")"
# a step that fails by a signal (cp killed by SIGXFSZ under ulimit -f) is status 1, as the
# man page says, not the tool's 128 + n (it was 153)
cp "$T/own.tsv" "$T/uf.tsv"
(ulimit -f 8; exec "$RX" -k 10 -s n1 -q "$Q" -o "$T/uf.tsv" -n "$T/neg.fvecs" "$T/uf" "$T/in/n1.fvecs") 2>"$T/err"
st=$?
[ $st = 1 ] && grep -q "step stage failed" "$T/err" && cmp -s "$T/uf.tsv" "$T/own.tsv" && [ ! -e "$T/uf/raw/n1.fvecs" ] &&
  ok || bad "a step killed by SIGXFSZ: status $st: $(cat "$T/err")"
# the ranking step fails (a full disk: ENOSPC injected by tests/faultshim.c into slem-match
# alone) after the night's segment was kept: the message says so (it said "the ranking and
# the index are as they were" while readers saw the segment), --status says the ranking
# lags, and the next run, a retry under another default name, writes the ranking without
# adding the night twice
make -s build/tests/faultshim.so >/dev/null 2>&1 || bad "faultshim"
F=$T/fullkit
mkdir -p "$F/bin" "$F/tools"
cp "$RX" "$F/tools/slem-reindex"
ln -s "$BIN/slem-negstats" "$F/bin/slem-negstats"
ln -s "$BIN/slem-encode" "$F/bin/slem-encode"
printf '#!/bin/sh\nLD_PRELOAD="%s" FAULT_WRITE=1 exec "%s" "$@"\n' "$TOP/build/tests/faultshim.so" "$BIN/slem-match" >"$F/bin/slem-match"
chmod +x "$F/bin/slem-match"
"$RX" -k 10 -q "$Q" -o "$T/rf.tsv" -n "$T/neg.fvecs" -s a "$T/rf" "$T/in/n1.fvecs" 2>"$T/err" || bad "the night before the full disk: $(cat "$T/err")"
"$F/tools/slem-reindex" -k 10 -q "$Q" -o "$T/rf.tsv" -n "$T/neg.fvecs" -s b "$T/rf" "$T/in/n2.fvecs" 2>"$T/err"
st=$?
[ $st = 1 ] && grep -q "No space left on device" "$T/err" &&
  grep -q "step rank failed; segment b is in $T/rf now (readers of $T/rf/current see it), but $T/rf.tsv is as it was: run again (the next run writes the ranking)" "$T/err" &&
  ! grep -q "as they were" "$T/err" && cmp -s "$T/rf.tsv" "$T/refs/1" && [ ! -e "$T/rf/tmp" ] && ok ||
  bad "a full disk at the ranking: status $st: $(cat "$T/err")"
"$RX" --status "$T/rf" >"$T/out" 2>&1 && grep -q "^ranking: .*1 segment (200 rows) of gen.1" "$T/out" &&
  grep -q "^ranking: behind the index (a run failed after changing it): the next run writes it$" "$T/out" && ok ||
  bad "--status after a failed ranking: $(cat "$T/out")"
"$RX" -k 10 -q "$Q" -o "$T/rf.tsv" -n "$T/neg.fvecs" "$T/rf" "$T/in/n2.fvecs" 2>"$T/err" &&
  grep -q "n2.fvecs not added: it is segment b already" "$T/err" && cmp -s "$T/rf.tsv" "$T/refs/2" &&
  [ "$(ls "$T/rf/raw")" = "$(printf 'a.fvecs\nb.fvecs')" ] && ok || bad "the run after a failed ranking: $(cat "$T/err")"
"$RX" --status "$T/rf" >"$T/out" 2>&1 && grep -q "^ranking: .*2 segments (350 rows) of gen.1" "$T/out" &&
  ! grep -q "behind" "$T/out" && ok || bad "--status after the ranking was written: $(cat "$T/out")"
# cron firing twice a second apart with -w, default names: one segment, the second run
# skips the night; --force adds it all the same (the ranking then holds each row twice)
"$RX" -w 30 -k 10 -q "$Q" -o "$T/cr.tsv" -n "$T/neg.fvecs" "$T/cr" "$T/in/n1.fvecs" 2>"$T/err1" &
a=$!
sleep 1.1
"$RX" -w 30 -k 10 -q "$Q" -o "$T/cr.tsv" -n "$T/neg.fvecs" "$T/cr" "$T/in/n1.fvecs" 2>"$T/err2"
sb=$?
wait $a
sa=$?
[ $sa = 0 ] && [ $sb = 0 ] && [ "$(ls "$T/cr/raw" | wc -l)" = 1 ] && cmp -s "$T/cr.tsv" "$T/refs/1" &&
  grep -q "not added: it is segment" "$T/err2" && ok ||
  bad "cron twice a second apart: statuses $sa $sb: $(cat "$T/err1" "$T/err2"; ls "$T/cr/raw")"
"$RX" --force -s zz -k 10 -q "$Q" -o "$T/cr.tsv" -n "$T/neg.fvecs" "$T/cr" "$T/in/n1.fvecs" 2>"$T/err" &&
  [ "$(ls "$T/cr/raw" | wc -l)" = 2 ] && grep -q "segment zz added (200 rows)" "$T/err" && ! cmp -s "$T/cr.tsv" "$T/refs/1" && ok ||
  bad "--force: $(cat "$T/err"; ls "$T/cr/raw")"
# a name that another one starts with, up to a '.': segment y is not segment y.1 (y.1's raw
# vectors, y.1.fvecs, were taken for y's: "segment y exists already")
"$RX" -s y.1 -k 10 -q "$Q" -o "$T/cr.tsv" -n "$T/neg.fvecs" "$T/cr" "$T/in/n2.fvecs" 2>"$T/err" &&
  "$RX" -s y -k 10 -q "$Q" -o "$T/cr.tsv" -n "$T/neg.fvecs" "$T/cr" "$T/in/n4.fvecs" 2>"$T/err" &&
  [ -f "$T/cr/raw/y.fvecs" ] && [ -f "$T/cr/raw/y.1.fvecs" ] && ok || bad "segments y.1 and y: $(cat "$T/err")"
# an index that cannot be written: status 1 and a message naming it (the shell's own
# "cannot create INDEX/lock", status 2, said it). A read-only file system where one can be
# mounted, a directory without write permission for another user than root; always a path
# under a file
U=$T/ro
mkdir "$U"
rodone=0
if mount -t tmpfs -o size=4m tmpfs "$U" 2>/dev/null; then
  cp -a "$T/rf" "$U/idx"
  if mount -o remount,ro "$U" 2>/dev/null; then rodone=1; fi
elif [ "$(id -u)" != 0 ]; then
  cp -a "$T/rf" "$U/idx"
  chmod a-w "$U/idx" "$U"
  rodone=1
fi
if [ $rodone = 1 ]; then
  for i in "$U/idx" "$U/new"; do
    "$RX" -k 10 -q "$Q" -o "$T/u.tsv" -n "$T/neg.fvecs" "$i" "$T/in/n4.fvecs" 2>"$T/err"
    st=$?
    [ $st = 1 ] && grep -q "^slem-reindex: cannot write the index $i: " "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] &&
      [ ! -e "$T/u.tsv" ] && ok || bad "an index that cannot be written ($i): status $st: $(cat "$T/err")"
    "$RX" --dry-run -k 10 -q "$Q" -o "$T/u.tsv" -n "$T/neg.fvecs" "$i" "$T/in/n4.fvecs" >"$T/out" 2>"$T/err"
    st=$?
    [ $st = 1 ] && grep -q "^slem-reindex: cannot write the index $i: " "$T/err" && [ ! -s "$T/out" ] && ok ||
      bad "--dry-run of an index that cannot be written ($i): status $st: $(cat "$T/out" "$T/err")"
  done
else
  echo "reindex: skipped the read-only index: no tmpfs mount, and run as root"
fi
umount "$U" 2>/dev/null
chmod -R u+w "$U" 2>/dev/null
: >"$T/afile"
"$RX" -k 10 -q "$Q" -o "$T/u.tsv" -n "$T/neg.fvecs" "$T/afile/idx" "$T/in/n4.fvecs" 2>"$T/err"
st=$?
[ $st = 1 ] && grep -q "^slem-reindex: cannot write the index $T/afile/idx: Not a directory$" "$T/err" &&
  [ "$(wc -l <"$T/err")" = 1 ] && ok || bad "an index under a file: status $st: $(cat "$T/err")"
finish reindex
