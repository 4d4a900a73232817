# shellcheck shell=sh
# Shared by tests/parallel.sh and tests/slurm.sh, sourced after scale-common.sh (SCALE,
# SCALE_ARGS, D, odd, sharded, fp): one BLAS core for every task. Two OPENBLAS_CORETYPE
# values that this CPU runs stand for two node generations: a run started on a host under
# one core gives the single run's cache and ranking under that core byte for byte, each
# task's output recording it; --blas-core pins another; a task whose OpenBLAS runs another
# core than the pinned one fails, and no ranking is written.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
A="" B=""
if has avx512f && has avx512vl && has avx512bw && has avx512dq && has avx512cd; then A=Haswell B=SkylakeX
elif has avx2 && has fma; then A=Haswell B=Sandybridge
elif has avx; then A=Sandybridge B=Nehalem; fi
saved_core=${OPENBLAS_CORETYPE-}
# single_on CORE OUT: the single-process pipeline under CORE, its cache in $T/s.CORE.slem
single_on() {
  OPENBLAS_CORETYPE=$1 slem-negstats -q --leaf-rows 32 -o "$T/s.$1.slem" "$D/negatives.fvecs" "$D/validation.fvecs" &&
    OPENBLAS_CORETYPE=$1 slem-encode -q -c "$T/s.$1.slem" -o "$T/s.db.fvecs" "$D/database.fvecs" &&
    OPENBLAS_CORETYPE=$1 slem-encode -q -c "$T/s.$1.slem" -o "$T/s.q.fvecs" "$D/queries.fvecs" &&
    OPENBLAS_CORETYPE=$1 slem-match -q -k 20 -d "$T/s.db.fvecs" -o "$2" "$T/s.q.fvecs"
}
# records WORKDIR CORE N: every task's output names CORE
records() {
  for f in "$1"/part/p.*.slem "$1"/db/d.*.slem "$1/queries.slem" "$1/cache.slem"; do
    grep -a -q "\"blas_core\":\"$2\"" "$f" ||
      { bad "pinned to $2: $f records $(grep -a -o '"blas_core":"[^"]*"' "$f")"; return; }
  done
  for f in "$1"/match/r.*.jsonl; do
    head -n 1 "$f" | grep -q "\"arithmetic\":\"$2 (.*\"descriptors_arithmetic\":\"$2 (" ||
      { bad "pinned to $2: $f: $(head -n 1 "$f")"; return; }
  done
  [ "$(find "$1/part" -name 'p.*.slem' | wc -l)" = "$3" ] && ok || bad "pinned to $2: not $3 partial caches"
}
if [ -z "$A" ]; then
  echo "note: this CPU runs no two OpenBLAS vector cores: the pinning tests are skipped"
else
  single_on "$A" "$T/lin.$A.tsv" || bad "single-process pipeline on $A"
  single_on "$B" "$T/lin.$B.tsv" || bad "single-process pipeline on $B"
  [ "$(fp "$T/s.$A.slem")" != "$(fp "$T/s.$B.slem")" ] && ok || echo "note: $A and $B gave the same cache"
  # started on a host under B: every task on B, the very cache and ranking of one run on B
  export OPENBLAS_CORETYPE="$B"
  rm -rf "$T/pw"
  if sharded "started on $B" 3 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$T/pw" --keep; then
    cmp -s "$T/r.tsv" "$T/lin.$B.tsv" && ok || bad "started on $B: not the ranking of one run on $B"
    [ "$(fp "$T/pw/cache.slem")" = "$(fp "$T/s.$B.slem")" ] && ok || bad "started on $B: not the cache of one run on $B"
    grep -q "every task runs the BLAS core $B" "$T/err" && ok || bad "started on $B: the pin is not said: $(cat "$T/err")"
    records "$T/pw" "$B" 3
  fi
  # started there, pinned to A: every task on A (the variable reaches each task)
  rm -rf "$T/pw"
  if sharded "pinned to $A" 3 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$T/pw" --keep --blas-core "$A"; then
    cmp -s "$T/r.tsv" "$T/lin.$A.tsv" && ok || bad "pinned to $A: not the ranking of one run on $A"
    [ "$(fp "$T/pw/cache.slem")" = "$(fp "$T/s.$A.slem")" ] && ok || bad "pinned to $A: not the cache of one run on $A"
    records "$T/pw" "$A" 3
  fi
  rm -rf "$T/pw"
  # a core the tasks' OpenBLAS does not run (it falls back on its own choice): every task
  # refuses, naming the pin; no ranking
  rm -f "$T/r.tsv"
  # shellcheck disable=SC2086
  "$SCALE" $SCALE_ARGS -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r.tsv" \
    -k 20 --blas-core Bogus >"$T/out" 2>"$T/err"
  st=$?
  [ "$st" = 1 ] && ok || bad "a task on another core than the pinned one: status $st: $(tail -c 400 "$T/err")"
  [ -e "$T/r.tsv" ] && bad "a task on another core: a ranking was written" || ok
  grep -q "pinned to the BLAS core Bogus (SLEM_BLAS_PIN), but OpenBLAS runs" "$T/err" && ok ||
    bad "a task on another core: the message does not say so: $(cat "$T/err")"
  rm -rf "$T"/.slem-work*
fi
# the default pin is what OpenBLAS runs on the starting host, OPENBLAS_CORETYPE unset
unset OPENBLAS_CORETYPE
here=$(slem-negstats --version | sed -n 's/^BLAS core: \([A-Za-z0-9]*\).*/\1/p')
rm -rf "$T/pw"
if sharded "started with no OPENBLAS_CORETYPE" 2 "$D/database.fvecs" "$T/r.tsv" --leaf-rows 32 --workdir "$T/pw" --keep; then
  records "$T/pw" "$here" 2
  grep -q "every task runs the BLAS core $here" "$T/err" && ok || bad "no OPENBLAS_CORETYPE: the pin is not said: $(cat "$T/err")"
fi
rm -rf "$T/pw"
[ -z "$saved_core" ] || export OPENBLAS_CORETYPE="$saved_core"
expect_fail "--blas-core with a space" 2 "blas-core" "$T/r3.tsv" "$SCALE" -N 2 -n "$odd" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/r3.tsv" --blas-core "Has well"
