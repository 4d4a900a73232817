#!/bin/sh
# Kernel SLEM of two builds, byte for byte: scripts/same-as-kernels.sh BIN_BEFORE BIN_AFTER
# (each a directory holding slem-negstats, slem-encode and slem-match). On the demo data,
# every kernel (and rbf and exp with gamma= and g=), the factors icd, kpca and full, the
# coupled variant, a kernel-recursive cache of depth 2, at -t 1 and -t 2: the caches, the
# descriptors, the projections, the rankings of slem-match -c (the exact similarity) and
# the refusals' messages and statuses must be the same bytes. A developer's check for a
# refactor (not run by make check): prints each difference, exits 1 on any.
# Run from the top of the tree.
set -u
if [ $# -ne 2 ]; then echo "usage: $0 BIN_BEFORE BIN_AFTER" >&2; exit 2; fi
B1=$(cd "$1" && pwd) || exit 2
B2=$(cd "$2" && pwd) || exit 2
D=$(pwd)/testdata/digits
T=$(mktemp -d "${TMPDIR:-/tmp}/same-as-kernels.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
export SOURCE_DATE_EPOCH=1 LC_ALL=C
n=0
bad=0

# run TAG TOOL ARGS...: the tool of each build, in its own directory (outputs named alike);
# its status and stderr kept beside the outputs. ARGS name outputs as o/NAME.
run() {
  tag=$1 tool=$2
  shift 2
  for b in 1 2; do
    eval "bin=\$B$b"
    mkdir -p "$T/$b/o"
    (cd "$T/$b" && "$bin/$tool" "$@" >"o/$tag.stdout" 2>"o/$tag.stderr"; echo $? >"o/$tag.status")
  done
}

K="linear poly poly:gamma=0.5,c=2,p=3 rbf rbf:g=0.5 rbf:gamma=0.02 exp exp:g=2 exp:gamma=0.1
quad quad:gamma=0.3 chi2 intersection intersection:gamma=0.5 hellinger hellinger-dot"
for t in 1 2; do
  for k in $K; do
    for f in icd kpca full; do
      c=$(echo "$k-$f-$t" | tr ':=,' '_..')
      rk="--rank 32"
      [ "$f" = full ] && rk=""
      # shellcheck disable=SC2086
      run "$c" slem-negstats -q -t "$t" --kernel "$k" --factor "$f" $rk --lambda-rel 10 \
        -o "o/$c.slem" "$D/negatives.fvecs"
      [ -f "$T/1/o/$c.slem" ] || continue
      run "$c.enc" slem-encode -q -t "$t" -c "o/$c.slem" -o "o/$c.enc.fvecs" "$D/queries.fvecs"
      run "$c.match" slem-match -t "$t" -c "o/$c.slem" -k 20 -d "$D/database.fvecs" \
        -o "o/$c.tsv" "$D/queries.fvecs"
      if [ "$f" != full ]; then
        run "$c.cpl" slem-negstats -q -t "$t" --kernel "$k" --factor "$f" --couple --rank 32 \
          --lambda-rel 10 -o "o/$c.cpl.slem" "$D/negatives.fvecs"
        run "$c.cpl.proj" slem-encode -q -t "$t" -c "o/$c.cpl.slem" --couple --projections \
          -o "o/$c.cpl.proj.slem" "$D/database.fvecs"
        run "$c.cpl.match" slem-match -t "$t" -c "o/$c.cpl.slem" --couple -k 20 \
          -d "o/$c.cpl.proj.slem" -o "o/$c.cpl.tsv" "$D/queries.fvecs"
      fi
    done
  done
  for k in rbf exp:g=2 poly linear; do
    c=$(echo "krec-$k-$t" | tr ':=,' '_..')
    run "$c" slem-negstats -q -t "$t" --kernel "$k" --rank 32 --lambda-rel 1 --depth 2 \
      -o "o/$c.slem" "$D/negatives.fvecs"
    run "$c.enc" slem-encode -q -t "$t" -c "o/$c.slem" -o "o/$c.enc.fvecs" "$D/queries.fvecs"
  done
done
# refusals: the messages and statuses
for k in sigmoid linear:gamma=1 rbf:gamma=-1 rbf:gamma=1,g=1 rbf:g=1,g=2 poly:p=2.5 poly:c=-1 \
  poly:x quad:gamma=-0.5 quad:g=1 intersection:gamma=0 exp:g=x chi2:gamma=1; do
  c=$(echo "bad-$k" | tr ':=,' '_..')
  run "$c" slem-negstats -q --kernel "$k" --rank 8 -o "o/$c.slem" "$D/negatives.fvecs"
done
printf -- '-1 2 3\n1 2 3\n' >"$T/neg.txt"
for k in chi2 intersection hellinger hellinger-dot; do
  run "neg-$k" slem-negstats -q --kernel "$k" --rank 2 -o "o/neg-$k.slem" "$T/neg.txt"
  run "krecneg-$k" slem-negstats -q --kernel "$k" --rank 2 --depth 2 -o "o/krecneg-$k.slem" \
    "$D/negatives.fvecs"
done

for f in "$T"/1/o/*; do
  g=$T/2/o/${f##*/}
  n=$((n + 1))
  if [ ! -f "$g" ]; then echo "DIFF: ${f##*/} only before"; bad=$((bad + 1)); continue; fi
  cmp -s "$f" "$g" || { echo "DIFF: ${f##*/}"; bad=$((bad + 1)); }
done
for g in "$T"/2/o/*; do
  [ -f "$T/1/o/${g##*/}" ] || { echo "DIFF: ${g##*/} only after"; bad=$((bad + 1)); }
done
# every run but the refusals succeeds (else a mistake here would compare two refusals)
failed=0
for f in "$T"/1/o/*.status; do
  case ${f##*/} in bad-* | neg-* | krecneg-*) continue ;; esac
  [ "$(cat "$f")" = 0 ] || { echo "FAILED before: ${f##*/}"; failed=$((failed + 1)); }
done
echo "same-as-kernels: $n files compared, $bad differ, $failed runs failed"
[ "$bad" = 0 ] && [ "$failed" = 0 ]
