#!/bin/sh
# family-table.sh: mAP of the SLEM family's variants on a retrieval data set, each at the
# setting chosen on the validation queries (lambda_rel from a grid, and the variant's own
# parameter where it has one), reported on the test queries; the two sets of queries are
# disjoint and both are ranked against the same database (trec AP over the top 1000).
# Run from the top of the tree after `make`; prints a Markdown table.
# Usage: sh scripts/family-table.sh [DIR] [PATTERN]
#   PATTERN (a shell case pattern, default *) keeps only the rows whose label it matches
#   (e.g. '*authors*'), to add rows to a table without running the others again.
#   DIR holds negatives.fvecs, database.fvecs/.labels, validation.fvecs/.labels and
#   queries.fvecs/.labels (default testdata/digits; scripts/fashion-data.py makes another).
# Kernel rows: rbf:g=1 and exp:g=1 (gamma from the median distance), quad with its gamma
# chosen on the validation queries too, rank 256 (at most n); "exact" ranks base features
# by the exact similarity (slem-match -c), "explicit" the explicit descriptors, "coupled"
# with slem-match --couple (exact), "(authors)" with --couple authors, "recursive" the
# explicit descriptors of a kernel recursive cache (--depth 2 or 3); "full" only
# when there are at most 2000 negatives (its rank is the numerical rank of K);
# hellinger-dot (the authors' sqrt|x.y|) needs nonnegative features. The mixed whitening
# (SLEM_whitening.m) and the adaptive theta_n (new_full_encoder.m, depth 2, the MATLAB's
# own) take the database as their positives. "intersection (gamma)" is kernel_matrix.m's
# 'inter' with its exponent chosen; "classifiers" ranks the database's coordinates by each
# query's kernel exemplar classifier (slem-encode --classifier --theta, chosen too; slem-match
# --affine).
set -eu
D=${1:-testdata/digits}
ROWS=${2:-*}
B=bin
W=$(mktemp -d "${TMPDIR:-/tmp}/family-table.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
grid="0.01 0.1 1 10 100 1000 10000 100000"
kgrid="0.1 1 10 100 1000 10000 100000"
nneg=$(($(wc -c <"$D/negatives.fvecs") / (4 + 4 * $(od -An -td4 -N4 "$D/negatives.fvecs"))))
dim=$(od -An -td4 -N4 "$D/negatives.fvecs" | tr -d ' ')
ev() { # ev RANKING QLABELS: mAP (trec)
  $B/slem-eval -q --query-labels "$2" --db-labels "$D/database.labels" "$1" |
    awk -F '\t' '$1 == "mAP" { print $2 }'
}
map() { # map QUERIES.fvecs QLABELS DB.fvecs: mAP of the cosine ranking (rows normalised)
  $B/slem-match -q --normalize -k 1000 -d "$3" -o "$W/rank.tsv" "$1"
  ev "$W/rank.tsv" "$2"
}
cache() { # cache VARIANT PARAM LAMBDA_REL OUT
  case $1 in
    slem|basic) $B/slem-negstats -q -r "$3" -o "$4" "$D/negatives.fvecs" ;;
    depth) $B/slem-negstats -q -r "$3" --depth "$2" -o "$4" "$D/negatives.fvecs" ;;
    nubeta) $B/slem-negstats -q -r "$3" --depth 2 --adaptive-theta "$D/database.fvecs" --theta "$2" \
      -o "$4" "$D/negatives.fvecs" ;;
    alpha) $B/slem-negstats -q -r "$3" --eigen -o "$4" "$D/negatives.fvecs" ;;
    mixed) $B/slem-negstats -q -r "$3" --eigen --mixed "$D/database.fvecs" -o "$4" "$D/negatives.fvecs" ;;
    pca) $B/slem-negstats -q -r "$3" --pca "$2" -o "$4" "$D/negatives.fvecs" ;;
    rbf-*|exp-*|quad-*|hdot-*|inter-*)
      kern=${1%%-*} rest=${1#*-} factor=${rest%%-*}
      case $kern in
        quad) spec="quad:gamma=$2" ;; inter) spec="intersection:gamma=$2" ;;
        hdot) spec=hellinger-dot ;; *) spec="$kern:g=1" ;;
      esac
      set -- "$@" --kernel "$spec" --factor "$factor"
      [ "$factor" = full ] || set -- "$@" --rank 256
      case $rest in *couple*) set -- "$@" --couple ;; *krec*) set -- "$@" --depth "$2" ;; esac
      lam=$3 out=$4
      shift 4
      $B/slem-negstats -q -r "$lam" "$@" -o "$out" "$D/negatives.fvecs" ;;
  esac
}
score() { # score VARIANT PARAM CACHE QUERIES QLABELS: the mAP of the variant
  case $1 in
    *-explicit|*-krec)
      $B/slem-encode -q -c "$3" -F fvecs -o "$W/db.fvecs" "$D/database.fvecs"
      $B/slem-encode -q -c "$3" -F fvecs -o "$W/q.fvecs" "$4"
      map "$W/q.fvecs" "$5" "$W/db.fvecs" ;;
    *-clf) # the queries' kernel exemplar classifiers (theta PARAM) on the database's coordinates
      $B/slem-encode -q -c "$3" --coordinates -F fvecs -o "$W/db.fvecs" "$D/database.fvecs"
      $B/slem-encode -q -c "$3" --classifier --theta "$2" -F fvecs -o "$W/q.fvecs" "$4"
      $B/slem-match -q --affine -k 1000 -d "$W/db.fvecs" -o "$W/rank.tsv" "$W/q.fvecs"
      ev "$W/rank.tsv" "$5" ;;
    rbf-*|exp-*|quad-*|hdot-*|inter-*)
      case $1 in *couple-authors) c=--couple=authors ;; *couple*) c=--couple ;; *) c= ;; esac
      # shellcheck disable=SC2086
      $B/slem-match -q -c "$3" $c -k 1000 -d "$D/database.fvecs" -o "$W/rank.tsv" "$4"
      ev "$W/rank.tsv" "$5" ;;
    basic)
      $B/slem-encode -q -c "$3" --basic --theta "$2" -F fvecs -o "$W/db.fvecs" "$D/database.fvecs"
      $B/slem-encode -q -c "$3" --basic --theta "$2" -F fvecs -o "$W/q.fvecs" "$4"
      map "$W/q.fvecs" "$5" "$W/db.fvecs" ;;
    alpha|mixed)
      $B/slem-encode -q -c "$3" --alpha "$2" -F fvecs -o "$W/db.fvecs" "$D/database.fvecs"
      $B/slem-encode -q -c "$3" --alpha "$2" -F fvecs -o "$W/q.fvecs" "$4"
      map "$W/q.fvecs" "$5" "$W/db.fvecs" ;;
    *)
      $B/slem-encode -q -c "$3" -F fvecs -o "$W/db.fvecs" "$D/database.fvecs"
      $B/slem-encode -q -c "$3" -F fvecs -o "$W/q.fvecs" "$4"
      map "$W/q.fvecs" "$5" "$W/db.fvecs" ;;
  esac
}
row() { # row LABEL VARIANT "PARAMS" "LAMBDAS"
  # shellcheck disable=SC2254
  case $1 in $ROWS) ;; *) return 0 ;; esac
  best=-1 bestr="" bestp=""
  for p in $3; do
    for r in $4; do
      cache "$2" "$p" "$r" "$W/c.slem" 2>/dev/null || continue
      m=$(score "$2" "$p" "$W/c.slem" "$D/validation.fvecs" "$D/validation.labels")
      if awk -v a="$m" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$m bestr=$r bestp=$p; fi
    done
  done
  cache "$2" "$bestp" "$bestr" "$W/c.slem"
  t=$(score "$2" "$bestp" "$W/c.slem" "$D/queries.fvecs" "$D/queries.labels")
  [ "$bestp" = - ] && setting=$bestr || setting="$bestp, $bestr"
  echo "| $1 | $setting | $best | $t |"
}
echo "| variant | setting (validation): parameter, lambda_rel | validation mAP | test mAP |"
echo "|---|---|---|---|"
case cosine in
  $ROWS)
    v=$(map "$D/validation.fvecs" "$D/validation.labels" "$D/database.fvecs")
    t=$(map "$D/queries.fvecs" "$D/queries.labels" "$D/database.fvecs")
    echo "| cosine | - | $v | $t |" ;;
esac
row slem slem - "$grid"
row "recursive (--depth)" depth "2 3" "$grid"
row "basic (--basic, basic_encoder.m)" basic "0.25 1 4 16" "$grid"
row "[nu; beta], adaptive theta_n (--depth 2 --adaptive-theta)" nubeta "0.25 1 4 16" "$grid"
row "whitening (--alpha)" alpha "-0.75 -0.5 -0.25 0" "$grid"
row "whitening, mixed covariance (--mixed)" mixed "-1 -0.75 -0.5 -0.25 0" "$grid"
pcas=""
for p in 8 16 32 64; do [ "$p" -lt "$dim" ] && pcas="$pcas $p"; done
row "PCA-reduced (--pca)" pca "$pcas" "$grid"
row "kernel rbf, icd, exact" rbf-icd - "$kgrid"
row "kernel rbf, icd, explicit" rbf-icd-explicit - "$kgrid"
row "kernel rbf, icd, coupled" rbf-icd-couple - "$kgrid"
row "kernel rbf, icd, coupled (authors)" rbf-icd-couple-authors - "$kgrid"
row "kernel rbf, icd, recursive (--depth)" rbf-icd-krec "2 3" "$kgrid"
row "kernel rbf, kpca, exact" rbf-kpca - "$kgrid"
row "kernel rbf, kpca, coupled" rbf-kpca-couple - "$kgrid"
row "kernel rbf, kpca, coupled (authors)" rbf-kpca-couple-authors - "$kgrid"
[ "$nneg" -le 2000 ] && row "kernel rbf, full, exact" rbf-full - "$kgrid"
row "kernel exp, icd, exact" exp-icd - "$kgrid"
row "kernel quad, icd, exact" quad-icd "0.0001 0.001 0.01 0.1" "$kgrid"
row "kernel hellinger-dot, icd, exact" hdot-icd - "$kgrid"
row "kernel intersection (gamma), icd, exact" inter-icd "0.5 1 2" "$kgrid"
row "kernel rbf, icd, classifiers (--classifier, --affine)" rbf-icd-clf "0.25 1 4" "$kgrid"
