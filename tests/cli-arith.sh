#!/bin/sh
# Results that name their arithmetic (lib/linalg/arith.h): caches, partial caches and descriptor
# containers record the BLAS core that made them; a mix that breaks a byte-for-byte promise
# is refused naming both cores (partial caches merged by slem-negstats, shard rankings
# merged by slem-merge) unless --allow-mixed-blas; a mix that changes only the last bits
# is a warning (status 0). Two OPENBLAS_CORETYPE values that this CPU runs stand for two
# node generations. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
unset SLEM_BLAS_PIN SLEM_TEST_BLAS_CORE

flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
if has avx512f && has avx512vl && has avx512bw && has avx512dq && has avx512cd; then A=Haswell B=SkylakeX
elif has avx2 && has fma; then A=Haswell B=Sandybridge
elif has avx; then A=Sandybridge B=Nehalem
else echo "cli-arith: this CPU runs no two OpenBLAS x86-64 vector cores: skipped"; exit 0; fi
D=$TOP/testdata/digits
NEG="$D/negatives.fvecs $D/validation.fvecs"
onA() { OPENBLAS_CORETYPE=$A "$@"; }
onB() { OPENBLAS_CORETYPE=$B "$@"; }
name() { slem-negstats --info "$1" | sed -n 's/^\t\t"name":\t"\(.*\)",$/\1/p' | head -n 1; }
fp() { slem-negstats --info "$1" | sed -n 's/.*"fingerprint":[[:space:]]*"\([0-9a-f]*\)".*/\1/p'; }

# --info shows the arithmetic: the core, OpenBLAS's version, GSL's, the C library's
# shellcheck disable=SC2086
check "cache on $A" onA slem-negstats -q --leaf-rows 32 -o "$T/a.slem" $NEG
# shellcheck disable=SC2086
check "cache on $B" onB slem-negstats -q --leaf-rows 32 -o "$T/b.slem" $NEG
slem-negstats --info "$T/a.slem" >"$T/info"
grep -q "\"blas_core\":	\"$A\"" "$T/info" && ok || bad "--info: no blas_core $A: $(cat "$T/info")"
case $(name "$T/a.slem") in "$A (OpenBLAS "*", GSL "*) ok ;; *) bad "--info: the name: $(name "$T/a.slem")" ;; esac
grep -q '"lanes":	"\(avx\|sse2\)"' "$T/info" && ok || bad "--info: no lanes"
case $(name "$T/b.slem") in "$B ("*) ok ;; *) bad "the cache made on $B names $(name "$T/b.slem")" ;; esac
# what it stands for: the two cores give two caches here
[ -n "$(fp "$T/a.slem")" ] && ok || bad "no fingerprint in --info"
[ "$(fp "$T/a.slem")" != "$(fp "$T/b.slem")" ] && ok || echo "note: $A and $B gave the same cache on digits"
# the arithmetic is not part of the fingerprint (the payload's)
# shellcheck disable=SC2086
onA slem-negstats -q --leaf-rows 32 -t 1 -o "$T/a1.slem" $NEG
[ "$(fp "$T/a1.slem")" = "$(fp "$T/a.slem")" ] && ok || bad "one thread: another cache"

# partial caches of two cores: refused, naming both, nothing written; accepted with the
# flag, which the cache records
# shellcheck disable=SC2086
check "partial 0/2 on $A" onA slem-negstats -q --leaf-rows 32 --partial --shard 0/2 -o "$T/p0.slem" $NEG
# shellcheck disable=SC2086
check "partial 1/2 on $B" onB slem-negstats -q --leaf-rows 32 --partial --shard 1/2 -o "$T/p1b.slem" $NEG
# shellcheck disable=SC2086
check "partial 1/2 on $A" onA slem-negstats -q --leaf-rows 32 --partial --shard 1/2 -o "$T/p1.slem" $NEG
grep -a -q "\"blas_core\":\"$B\"" "$T/p1b.slem" && ok || bad "a partial cache does not record its core"
expect_fail "partials of two cores" 1 "p1b.slem was made on the BLAS core $B (OpenBLAS" "$T/m.slem" \
  onA slem-negstats -q -o "$T/m.slem" "$T/p0.slem" "$T/p1b.slem"
grep -q "p0.slem on $A (OpenBLAS" "$T/err" && ok || bad "partials of two cores: $A not named: $(cat "$T/err")"
grep -q -- "--allow-mixed-blas" "$T/err" && ok || bad "partials of two cores: no word of the flag"
echo keep >"$T/m.slem"
onA slem-negstats -q -o "$T/m.slem" "$T/p1b.slem" "$T/p0.slem" 2>"$T/err"
[ $? = 1 ] && [ "$(cat "$T/m.slem")" = keep ] && ok || bad "partials of two cores: an existing output changed"
rm -f "$T/m.slem"
check "partials of two cores, allowed" onA slem-negstats -q --allow-mixed-blas -o "$T/m.slem" "$T/p0.slem" "$T/p1b.slem"
grep -a -q "\"mixed\":\"$A (.*) + $B (.*)\"" "$T/m.slem" && ok || bad "the allowed mix is not recorded"
[ "$(fp "$T/m.slem")" != "$(fp "$T/a.slem")" ] && ok || echo "note: the mixed merge gave $A's cache"
# a mix kept partial, merged again at the next level (two-level merges): its own line names
# only the host that merged it, so the mix it records is refused without the flag there too,
# and carried into the output's with it
check "partials of two cores, allowed, kept partial" onA slem-negstats -q --partial --allow-mixed-blas -o "$T/pm.slem" "$T/p0.slem" "$T/p1b.slem"
expect_fail "a mixed partial at the next level" 1 "pm.slem mixes the arithmetics $A (.*) + $B (.*--allow-mixed-blas here too" "$T/m4.slem" \
  onA slem-negstats -q -o "$T/m4.slem" "$T/pm.slem"
check "a mixed partial at the next level, allowed" onA slem-negstats -q --allow-mixed-blas -o "$T/m4.slem" "$T/pm.slem"
grep -a -q "\"mixed\":\"$A (.*) + $B (.*)\"" "$T/m4.slem" && ok || bad "the mix of the level below is not recorded"
[ "$(fp "$T/m4.slem")" = "$(fp "$T/m.slem")" ] && ok || bad "two levels of an allowed mix: not the cache of one level"
# partials of one core merged on another: refused, with the core to merge on
expect_fail "partials of $A merged on $B" 1 "but this merge runs on $B (OpenBLAS.*OPENBLAS_CORETYPE=$A" "$T/m2.slem" \
  onB slem-negstats -q -o "$T/m2.slem" "$T/p0.slem" "$T/p1.slem"
# partials of one core merged on it: the very cache of one run, naming its core
check "partials of $A merged on $A" onA slem-negstats -q -o "$T/m2.slem" "$T/p1.slem" "$T/p0.slem"
[ "$(fp "$T/m2.slem")" = "$(fp "$T/a.slem")" ] && ok || bad "partials of $A: not the cache of one run on $A"
grep -a -q '"mixed"' "$T/m2.slem" && bad "one core recorded as a mix" || ok
# shellcheck disable=SC2086
check "partial of $B, then vectors on $A" onB slem-negstats -q --leaf-rows 32 --partial -o "$T/pb.slem" "$D/validation.fvecs"
expect_fail "vectors on $A with a partial of $B" 1 "made on the BLAS core $B" "$T/m3.slem" \
  onA slem-negstats -q --partial --leaf-rows 32 -o "$T/m3.slem" "$D/negatives.fvecs" "$T/pb.slem"

# descriptors: the container records the core that encoded them; a cache of another core
# is a warning (status 0, descriptors written); -q silences it
check "queries on $A" onA slem-encode -q -c "$T/a.slem" -o "$T/qa.slem" "$D/queries.fvecs"
grep -a -q "\"blas_core\":\"$A\"" "$T/qa.slem" && ok || bad "a container does not record its core"
onB slem-encode -c "$T/a.slem" -o "$T/qb.slem" "$D/queries.fvecs" 2>"$T/err"
if [ $? = 0 ] && [ -s "$T/qb.slem" ]; then ok; else bad "encoding on another core failed: $(cat "$T/err")"; fi
grep -q "warning: .*a.slem was made on the BLAS core $A (.*this encoding runs on $B (" "$T/err" && ok ||
  bad "no warning for a cache of another core: $(cat "$T/err")"
onA slem-encode -c "$T/a.slem" -o "$T/qa2.slem" "$D/queries.fvecs" 2>"$T/err"
[ -s "$T/err" ] && bad "a warning on the cache's own core: $(cat "$T/err")" || ok
onB slem-encode -q -c "$T/a.slem" -o "$T/qb2.slem" "$D/queries.fvecs" 2>"$T/err"
[ -s "$T/err" ] && bad "-q: a warning: $(cat "$T/err")" || ok

# descriptors of one cache encoded on two cores, matched: a warning naming both
check "database on $A" onA slem-encode -q -c "$T/a.slem" -o "$T/da.slem" "$D/database.fvecs"
onA slem-match -k 20 -d "$T/da.slem" -o "$T/r.tsv" "$T/qb.slem" 2>"$T/err"
if [ $? = 0 ] && [ -s "$T/r.tsv" ]; then ok; else bad "match of two cores' descriptors failed: $(cat "$T/err")"; fi
grep -q "warning: .*encoded on the BLAS core $A (.*qb.slem on $B (" "$T/err" && ok ||
  bad "no warning for descriptors of two cores: $(cat "$T/err")"
onA slem-match -k 20 -d "$T/da.slem" -o "$T/r.tsv" "$T/qa.slem" 2>"$T/err"
[ -s "$T/err" ] && bad "a warning for descriptors of one core: $(cat "$T/err")" || ok

# shard rankings: the shard line names the arithmetic of the match and of the descriptors.
# slem-merge refuses shards whose descriptors were encoded on different cores; the match's
# own core does not change its exact scores (shards scored on two cores merge into the
# single run's ranking byte for byte), its libraries are compared
onA slem-match -k 20 -d "$T/da.slem" -o "$T/ra.tsv" "$T/qa.slem"
check "shard 0 on $A" onA slem-match -q -k 20 -d "$T/da.slem" --shard 0/2 -F jsonl -o "$T/s0.jsonl" "$T/qa.slem"
check "shard 1 on $A" onA slem-match -q -k 20 -d "$T/da.slem" --shard 1/2 -F jsonl -o "$T/s1.jsonl" "$T/qa.slem"
check "shard 1 on $B" onB slem-match -q -k 20 -d "$T/da.slem" --shard 1/2 -F jsonl -o "$T/s1b.jsonl" "$T/qa.slem"
check "shard 1 of $B's queries" onA slem-match -q -k 20 -d "$T/da.slem" --shard 1/2 -F jsonl -o "$T/s1q.jsonl" "$T/qb.slem"
head -n 1 "$T/s1b.jsonl" | grep -q "\"arithmetic\":\"$B (OpenBLAS [^\"]*\",\"descriptors_arithmetic\":\"$A (OpenBLAS" && ok ||
  bad "the shard line: $(head -n 1 "$T/s1b.jsonl")"
head -n 1 "$T/s1q.jsonl" | grep -q "\"descriptors_arithmetic\":\"$B (.*) + $A (" && ok ||
  bad "the shard line of two cores' descriptors: $(head -n 1 "$T/s1q.jsonl")"
check "shards of one core" slem-merge -k 20 -F tsv -o "$T/m.tsv" "$T/s1.jsonl" "$T/s0.jsonl"
cmp -s "$T/m.tsv" "$T/ra.tsv" && ok || bad "shards of one core: not the ranking of one run"
check "shards scored on two cores" slem-merge -k 20 -F tsv -o "$T/m.tsv" "$T/s0.jsonl" "$T/s1b.jsonl"
cmp -s "$T/m.tsv" "$T/ra.tsv" && ok || bad "shards scored on two cores: not the ranking of one run"
expect_fail "shards of descriptors of two cores" 1 "s1q.jsonl: line 1: descriptors_arithmetic $B (.*s0.jsonl has $A (.*encoded on other BLAS cores" "$T/m2.tsv" \
  slem-merge -k 20 -F tsv -o "$T/m2.tsv" "$T/s0.jsonl" "$T/s1q.jsonl"
grep -q -- "--allow-mixed-blas" "$T/err" && ok || bad "shards of two cores: no word of the flag"
echo keep >"$T/m2.tsv"
slem-merge -k 20 -F tsv -o "$T/m2.tsv" "$T/s0.jsonl" "$T/s1q.jsonl" 2>/dev/null
[ $? = 1 ] && [ "$(cat "$T/m2.tsv")" = keep ] && ok || bad "shards of two cores: an existing output changed"
rm -f "$T/m2.tsv"
check "shards of descriptors of two cores, allowed" slem-merge --allow-mixed-blas -k 20 -F tsv -o "$T/m2.tsv" "$T/s0.jsonl" "$T/s1q.jsonl"
[ -s "$T/m2.tsv" ] && ok || bad "allowed: no ranking"
# their query sets differ with the queries' bits: allowed too when the shard comes on stdin
# (its end line compared at its end)
if slem-merge --allow-mixed-blas -k 20 -F tsv -o "$T/m3.tsv" "$T/s0.jsonl" - <"$T/s1q.jsonl" 2>"$T/err" &&
  cmp -s "$T/m3.tsv" "$T/m2.tsv"; then ok; else bad "allowed, on a pipe: $(cat "$T/err")"; fi
[ "$(tail -n 1 "$T/s0.jsonl" | cut -d, -f2)" != "$(tail -n 1 "$T/s1q.jsonl" | cut -d, -f2)" ] && ok ||
  echo "note: $A and $B gave the same query set"
# a shard scored with other libraries (its line edited: another C library)
rm -f "$T/m2.tsv"
sed '1s/\("arithmetic":"[^"]*glibc \)[0-9.]*/\10.1/' "$T/s1.jsonl" >"$T/s1l.jsonl"
expect_fail "shards scored with other libraries" 1 "s1l.jsonl: line 1: arithmetic $A (.*glibc 0.1), but .*s0.jsonl has $A (.*scored with other libraries" "$T/m2.tsv" \
  slem-merge -k 20 -F tsv -o "$T/m2.tsv" "$T/s0.jsonl" "$T/s1l.jsonl"
rm -f "$T/m2.tsv"
check "shards with other libraries, allowed" slem-merge --allow-mixed-blas -k 20 -F tsv -o "$T/m2.tsv" "$T/s0.jsonl" "$T/s1l.jsonl"

# a tool pinned to one core (SLEM_BLAS_PIN, as slem-parallel and slem-sbatch set it) stops
# when its OpenBLAS runs another, before any output
# shellcheck disable=SC2086
expect_fail "pinned to $B, running $A" 1 "pinned to the BLAS core $B (SLEM_BLAS_PIN), but OpenBLAS runs $A" "$T/pin.slem" \
  env SLEM_BLAS_PIN=$B OPENBLAS_CORETYPE=$A slem-negstats -q -o "$T/pin.slem" $NEG
check "pinned to its own core" env SLEM_BLAS_PIN=$(echo $A | tr A-Z a-z) OPENBLAS_CORETYPE=$A slem-encode -q -c "$T/a.slem" -o "$T/pin.slem" "$D/queries.fvecs"
finish cli-arith
