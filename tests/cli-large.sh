#!/bin/sh
# Every ranking reader and the tools that read rankings, once far beyond their internal
# batch sizes (a progress callback every 256 queries, blocks of 2048): 10 000 queries of a
# synthetic ranking whose measures are known in closed form. Labels: database row j has
# label j % 10, query q label q % 10; each query has 20 results, and by q % 3
#   0: its 10 relevant rows first (AP 1), 1: relevant at the even ranks (TREC AP 1/2),
#   2: nothing relevant (AP 0).
# So over 10 000 queries (3334, 3333, 3333 of each): TREC mAP 0.50005, P@1 0.3334,
# P@5 0.46672, P@10 0.50005, R@100 0.6667. Scores (128 - rank) / 128 print the same in
# awk and at %.9g from a float. Generated here by awk; no Python. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
NQ=10000
awk -v NQ=$NQ -v T="$T" 'BEGIN {
  for (j = 0; j < 100; j++) print j % 10 > (T "/db.labels")
  for (q = 0; q < NQ; q++) {
    L = q % 10; t = q % 3; ri = 0; ii = 0; j = ""
    print L > (T "/q.labels")
    for (i = 0; i < 10; i++) print q " 0 " (L + 10 * i) " 1" > (T "/qrels")
    for (r = 1; r <= 20; r++) {
      if (t == 0) rel = r <= 10; else if (t == 1) rel = r % 2 == 0; else rel = 0
      if (rel) { id = L + 10 * ri; ri++ } else { id = (L + 1 + ii % 2 + 10 * int(ii / 2)) % 100; ii++ }
      s = (128 - r) / 128
      printf "%d\t%d\t%d\t%.9g\n", q, r, id, s > (T "/rank.tsv")
      printf "%d Q0 %d %d %.9g run\n", q, id, r, s > (T "/rank.trec")
      j = j (r > 1 ? "," : "") sprintf("{\"rank\":%d,\"id\":\"%d\",\"row\":%d,\"score\":%.9g}", r, id, id, s)
    }
    printf "{\"query\":\"%d\",\"results\":[%s]}\n", q, j > (T "/rank.jsonl")
  }
}'
LABELS="--query-labels $T/q.labels --db-labels $T/db.labels"
# measure NAME VALUE FILE: the tab-separated line NAME<TAB>VALUE is in FILE
measure() { awk -F '\t' -v n="$1" -v v="$2" '$1 == n && $2 == v { f = 1 } END { exit !f }' "$3"; }

# ---- slem-eval, every ranking format ----
for f in tsv trec jsonl; do
  # shellcheck disable=SC2086
  check "eval $f" slem-eval $LABELS "$T/rank.$f"
  for m in mAP:0.500050 P@1:0.333400 P@5:0.466720 P@10:0.500050 R@100:0.666700 queries:$NQ; do
    measure "${m%%:*}" "${m#*:}" "$T/out" && ok || bad "eval $f: ${m%%:*} is not ${m#*:}: $(tr '\n' ' ' <"$T/out")"
  done
done
# the ranking from a pipe, per query
# shellcheck disable=SC2086
check "eval pipe --per-query" sh -c "cat '$T/rank.tsv' | slem-eval $LABELS --per-query"
n=$(awk -F '\t' '$1 ~ /^[0-9]+$/' "$T/out" | wc -l)
[ "$n" = $NQ ] && ok || bad "eval --per-query: $n query lines, expected $NQ"
measure mAP 0.500050 "$T/out" && ok || bad "eval pipe: mAP"

# ---- trec_eval's numbers: map 0.50005, Rprec the same, gm_map exp(mean log max(AP, 1e-5)) ----
check "trec-compat" slem-eval --trec-compat --qrels "$T/qrels" "$T/rank.trec"
for m in num_q:$NQ num_ret:200000 num_rel:100000 num_rel_ret:66670 map:0.5000 gm_map:0.0171 Rprec:0.5000; do
  awk -v n="${m%%:*}" -v v="${m#*:}" '{ sub(/[ \t]+$/, "", $1) } $1 == n && $2 == "all" && $3 == v { f = 1 } END { exit !f }' "$T/out" \
    && ok || bad "trec-compat: ${m%%:*} is not ${m#*:}: $(grep "^${m%%:*} " "$T/out")"
done
check "trec-compat per query" slem-eval --trec-compat --per-query -m map --qrels "$T/qrels" "$T/rank.tsv"
n=$(awk '$1 == "map" && $2 != "all"' "$T/out" | wc -l)
[ "$n" = $NQ ] && ok || bad "trec-compat -q: $n per-query lines, expected $NQ"

# ---- the revisited protocol: its AP is the trapezoid; query type 1's is
# (1/10) sum_{j=0..9} (j / (2j + 1) + 1/2) / 2 ----
awk -v NQ=$NQ 'BEGIN { for (q = 0; q < NQ; q++) for (i = 0; i < 10; i++) print q, q % 10 + 10 * i }' >"$T/easy"
: >"$T/hard"
want=$(awk -v NQ=$NQ 'BEGIN { for (j = 0; j < 10; j++) a += (j / (2 * j + 1) + 0.5) / 2 / 10
  printf "%.6f", (3334 + 3333 * a) / NQ }')
check "protocol medium" slem-eval --protocol medium --easy "$T/easy" --hard "$T/hard" "$T/rank.jsonl"
measure mAP "$want" "$T/out" && ok || bad "protocol: mAP is not $want: $(tr '\n' ' ' <"$T/out")"
measure queries $NQ "$T/out" && ok || bad "protocol: queries"

# ---- slem-report: past 256 queries (it crashed there: its evaluation's progress
# callback was never initialised); the table is slem-eval's, every query can be shown ----
# shellcheck disable=SC2086
check "report" slem-report $LABELS -o "$T/r.html" "$T/rank.tsv"
grep -q 'title="0.500050"' "$T/r.html" && ok || bad "report: the table lacks mAP 0.500050"
grep -q "$NQ queries in the ground truth" "$T/r.html" && ok || bad "report: query count"
# every query, top 2: relevant 2 x 3334 + 3333, wrong 3333 + 2 x 3333
# shellcheck disable=SC2086
check "report every query" slem-report $LABELS --queries $NQ --top 2 --extremes 0 -o "$T/all.html" "$T/rank.trec"
rel=$(grep -o '<figure class="hit rel' "$T/all.html" | wc -l)
wrong=$(grep -o '<figure class="hit wrong' "$T/all.html" | wc -l)
[ "$rel $wrong" = "10001 9999" ] && ok || bad "report every query: $rel relevant, $wrong wrong shown"

echo "cli-large: $pass passed, $fail failed"
[ "$fail" = 0 ]
