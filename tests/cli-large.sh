#!/bin/sh
# Every ranking reader and the tools that read rankings, once far beyond their internal
# batch sizes (a progress callback every 256 queries, blocks of 2048): 10 000 queries of a
# synthetic ranking whose measures are known in closed form. Labels: database row j has
# label j % 10, query q label q % 10; each query has 20 results, and by q % 3
#   0: its 10 relevant rows first (AP 1), 1: relevant at the even ranks (TREC AP 1/2),
#   2: nothing relevant (AP 0).
# So over 10 000 queries (3334, 3333, 3333 of each): TREC mAP 0.50005, P@1 0.3334,
# P@5 0.46672, P@10 0.50005, R@100 0.6667. Scores (128 - rank) / 128 print the same in
# awk and at %.9g from a float. Then slem-merge (two row shards, the whole top 20 known),
# slem-expand (one-hot vectors, the expanded rows known) and slem-calibrate (10 000
# exemplars of 8 kinds, each fitted as when alone), slem-match (blocks of 2048 queries; the
# ranking known), slem-negstats, slem-encode and slem-esvm at the same 10 000. Generated here by
# awk; no Python. Run from the top of the tree.
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
# the ranking from stdin (spooled, read twice)
# shellcheck disable=SC2086
check "report stdin" sh -c "slem-report $LABELS --queries $NQ --top 1 --extremes 0 -o '$T/in.html' - <'$T/rank.jsonl'"
rel=$(grep -o '<figure class="hit rel' "$T/in.html" | wc -l)
[ "$rel" = 3334 ] && ok || bad "report stdin: $rel relevant first results, expected 3334"

# a pipe given by name is read as stdin is (it used to be read twice, the second time empty)
# shellcheck disable=SC2086
check "report /dev/stdin" sh -c "cat '$T/rank.tsv' | slem-report $LABELS --queries $NQ --top 1 --extremes 0 -o '$T/dv.html' /dev/stdin"
rel=$(grep -o '<figure class="hit rel' "$T/dv.html" | wc -l)
[ "$rel" = 3334 ] && grep -q 'title="0.500050"' "$T/dv.html" && ok || bad "report /dev/stdin: $rel relevant first results"

# ---- slem-merge: a database of 100 rows in two shards (rows 0-49, 50-99); query q scores
# row j (7 q + 13 j) mod 100 (over 128: exact), all distinct. Each shard lists its top 20,
# and the merge is the whole database's top 20, byte for byte, in each format ----
awk -v NQ=$NQ -v T="$T" 'BEGIN {
  for (q = 0; q < NQ; q++) {
    n[0] = n[1] = n[2] = 0
    for (v = 99; v >= 0 && (n[0] < 20 || n[1] < 20); v--) {
      j = (77 * (v - 7 * q)) % 100; if (j < 0) j += 100
      s = j < 50 ? 0 : 1
      line = sprintf("%d\t%%d\t%d\t%.9g\n", q, j, v / 128)
      if (n[2] < 20) printf line, ++n[2] > (T "/all20.tsv")
      if (n[s] < 20) printf line, ++n[s] > (T "/s" s ".tsv")
    }
  }
}'
check "merge tsv" slem-merge -k 20 -o "$T/m.tsv" "$T/s0.tsv" "$T/s1.tsv"
cmp -s "$T/m.tsv" "$T/all20.tsv" && ok || bad "merge: not the whole database's top 20"
for f in trec jsonl; do
  check "shard 0 as $f" slem-merge -k 20 -F $f -o "$T/s0.$f" "$T/s0.tsv"
  check "shard 1 as $f" slem-merge -k 20 -F $f -o "$T/s1.$f" "$T/s1.tsv"
  check "merge $f" slem-merge -k 20 -F tsv -o "$T/m.$f.tsv" "$T/s1.$f" "$T/s0.$f"
  cmp -s "$T/m.$f.tsv" "$T/all20.tsv" && ok || bad "merge $f: not the whole database's top 20"
done
n=$(wc -l <"$T/s1.jsonl")
[ "$n" = $NQ ] && ok || bad "jsonl shard: $n lines, expected $NQ"
check "merge pipe" sh -c "cat '$T/s1.tsv' | slem-merge -k 20 -o '$T/mp.tsv' '$T/s0.tsv' /dev/stdin"
cmp -s "$T/mp.tsv" "$T/all20.tsv" && ok || bad "merge from a pipe: not the top 20"

# ---- slem-expand -n 1: queries e_L, database rows e_(j % 10); the first result is e_L
# (query type 0: e_L again) or e_(L+1) (types 1 and 2: (e_L + e_(L+1)) / sqrt 2) ----
awk -v NQ=$NQ -v T="$T" 'BEGIN {
  for (j = 0; j < 100; j++) { s = ""; for (i = 0; i < 10; i++) s = s (i ? " " : "") (i == j % 10); print s > (T "/db.txt") }
  for (q = 0; q < NQ; q++) { s = ""; for (i = 0; i < 10; i++) s = s (i ? " " : "") (i == q % 10); print s > (T "/q.txt") }
}'
check "expand" slem-expand -d "$T/db.txt" -n 1 -F text -o "$T/x.txt" -r "$T/rank.tsv" "$T/q.txt"
awk -v NQ=$NQ '{
  q = NR - 1; L = q % 10; t = q % 3; ok = NF == 10
  for (i = 0; i < 10; i++) {
    w = 0
    if (t == 0 && i == L) w = 1
    if (t != 0 && (i == L || i == (L + 1) % 10)) w = 0.70710678
    if ($(i + 1) - w > 1e-6 || w - $(i + 1) > 1e-6) ok = 0
  }
  if (!ok) { print "row " q ": " $0; bad = 1; exit }
} END { if (!bad && NR != NQ) { print NR " rows"; bad = 1 } exit bad }' "$T/x.txt" >"$T/diff" && ok || bad "expand: $(cat "$T/diff")"
check "expand, ranking from a pipe" sh -c "cat '$T/rank.trec' | slem-expand -d '$T/db.txt' -n 1 -F text -o '$T/xp.txt' -r /dev/stdin '$T/q.txt'"
cmp -s "$T/x.txt" "$T/xp.txt" && ok || bad "expand: the trec ranking from a pipe gives other rows"

# ---- slem-calibrate: 10 000 exemplars of 4 kinds (label e % 4, w the label's direction):
# each one's sigmoid is the one fitted for its kind, whatever the batch it falls in ----
awk -v T="$T" -v NQ=$NQ 'BEGIN {
  pi = atan2(0, -1)
  for (i = 0; i < 80; i++) { l = i % 4; a = l * pi / 2 + (i % 7 - 3) * 0.15
    printf "%.6f %.6f\n", cos(a), sin(a) > (T "/val.txt"); print l > (T "/val.labels") }
  for (e = 0; e < NQ; e++) { l = e % 4
    printf "%.6f %.6f %.3f\n", cos(l * pi / 2), sin(l * pi / 2), (e % 8 < 4 ? 0 : -0.25) > (T "/clf.txt")
    print l > (T "/clf.labels") }
}'
check "calibrate" slem-calibrate -q -f text -c "$T/clf.txt" --exemplar-labels "$T/clf.labels" \
  --positives "$T/val.txt" --positive-labels "$T/val.labels" -o "$T/cal.txt"
head -n 8 "$T/clf.txt" >"$T/clf8.txt"
head -n 8 "$T/clf.labels" >"$T/clf8.labels"
check "calibrate 8" slem-calibrate -q -f text -c "$T/clf8.txt" --exemplar-labels "$T/clf8.labels" \
  --positives "$T/val.txt" --positive-labels "$T/val.labels" -o "$T/cal8.txt"
awk 'NR == FNR { k[NR - 1] = $0; next } $0 != k[(FNR - 1) % 8] { print "line " FNR ": " $0 " not " k[(FNR - 1) % 8]; bad = 1; exit }
  END { if (!bad && FNR != '$NQ') { print FNR " lines"; bad = 1 } exit bad }' "$T/cal8.txt" "$T/cal.txt" >"$T/diff" &&
  ok || bad "calibrate: $(cat "$T/diff")"
sort -u "$T/cal8.txt" | wc -l | grep -q '^ *8$' && ok || bad "calibrate: the 8 kinds do not differ: $(cat "$T/cal8.txt")"

# ---- slem-match (blocks of 2048 queries), slem-negstats and slem-encode at 10 000 ----
# one-hot queries against database rows e_(j % 10), cosine: the 10 rows of the query's
# label score 1, the others 0; equal scores go to the lower row, so the top 12 are
# L, L + 10, ..., L + 90, then the two lowest rows of another label
awk -v NQ=$NQ '{ } END {
  for (q = 0; q < NQ; q++) { L = q % 10
    for (i = 0; i < 10; i++) printf "%d\t%d\t%d\t1\n", q, i + 1, L + 10 * i
    r = 11; for (j = 0; r <= 12; j++) if (j % 10 != L) printf "%d\t%d\t%d\t0\n", q, r++, j
  }
}' </dev/null >"$T/match.want"
check "match" slem-match --normalize -k 12 -d "$T/db.txt" -o "$T/match.tsv" "$T/q.txt"
cmp -s "$T/match.tsv" "$T/match.want" && ok || bad "match: not the ranking known: $(cmp "$T/match.tsv" "$T/match.want")"
check "match, queries from a pipe" sh -c "cat '$T/q.txt' | slem-match --normalize -k 12 -f text -d '$T/db.txt' -o '$T/matchp.tsv'"
cmp -s "$T/matchp.tsv" "$T/match.want" && ok || bad "match from a pipe: not the ranking known"
# negatives: 10 000 rows of a deterministic generator; blocks of 64 or the default, the
# same cache bit for bit, n = 10 000 (one provenance time for both: a slow run, under a
# sanitizer say, ends in another second than the first and stamps another time)
awk -v NQ=$NQ 'BEGIN { x = 12345; for (i = 0; i < NQ; i++) { s = ""
  for (j = 0; j < 10; j++) { x = (x * 1103515245 + 12345) % 2147483648; s = s (j ? " " : "") sprintf("%.6f", x / 2147483648 - 0.5) }
  print s } }' >"$T/neg.txt"
check "negstats" env SOURCE_DATE_EPOCH=1 slem-negstats -q -o "$T/neg.slem" "$T/neg.txt"
check "negstats, blocks of 64" env SOURCE_DATE_EPOCH=1 slem-negstats -q -b 64 -o "$T/neg64.slem" "$T/neg.txt"
cmp -s "$T/neg.slem" "$T/neg64.slem" && ok || bad "negstats: the cache depends on the block size"
slem-negstats --info "$T/neg.slem" | grep -q '"n":[[:space:]]*10000,' && ok || bad "negstats: n is not $NQ: $(slem-negstats --info "$T/neg.slem" | grep '"n"')"
# descriptors of equal queries are equal, whatever block they fall in (blocks of 1024), to
# float32 rounding: not bit for bit, the BLAS kernels treat a block's rows by position
check "encode" slem-encode -q -c "$T/neg.slem" -F text -o "$T/enc.txt" "$T/q.txt"
awk -v NQ=$NQ 'FNR <= 10 { k[FNR - 1] = $0 } {
  split(k[(FNR - 1) % 10], w, " ")
  for (i = 1; i <= NF; i++) if ($i - w[i] > 1e-6 || w[i] - $i > 1e-6) { print "line " FNR ": " $0; bad = 1; exit }
} END { if (!bad && NR != NQ) { print NR " lines"; bad = 1 } exit bad }' "$T/enc.txt" >"$T/diff" && ok || bad "encode: $(cat "$T/diff")"
[ "$(head -n 10 "$T/enc.txt" | sort -u | wc -l)" = 10 ] && ok || bad "encode: not 10 distinct descriptors"
# float32 rows are encoded as float32 (no widening: the deltas formed in place): the same
# descriptors, bit for bit, as the same values read as text (widened to double), over 5 000
# rows (several blocks) at -t 1 and -t 2; od prints each float so that it reads back exactly
DG=$TOP/testdata/digits/database.fvecs
for i in 1 2 3 4 5; do cat "$DG"; done >"$T/dg5.fvecs"
od -An -v -t f4 -w260 "$T/dg5.fvecs" | awk '{ $1 = ""; sub(/^ /, ""); print }' >"$T/dg5.txt"
check "negstats, digits" slem-negstats -q -o "$T/dg.slem" "$DG"
for t in 1 2; do
  check "encode float32 -t $t" slem-encode -q -t $t --precision single -c "$T/dg.slem" -o "$T/dg32.$t.fvecs" "$T/dg5.fvecs"
  check "encode text -t $t" slem-encode -q -t $t --precision single -c "$T/dg.slem" -f text -o "$T/dg64.$t.fvecs" "$T/dg5.txt"
  cmp -s "$T/dg32.$t.fvecs" "$T/dg64.$t.fvecs" && ok || bad "encode -t $t: float32 rows give other descriptors than the same values as text"
done
[ "$(wc -c <"$T/dg32.1.fvecs")" = 1300000 ] && ok || bad "encode: not 5 000 descriptors of 64"
# slem-negstats from 4 threads on computes a batch of leaves while it gathers the next, the
# float32 rows widened by the computing threads: the cache of -t 1, also with float32 and
# text inputs cut inside leaves; a pipe truncated while a batch is being computed ends as
# from a file (status 1, the record named, no output)
fp() { slem-negstats --info "$1" | sed -n 's/.*"fingerprint":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' | grep . || echo "no fingerprint: $1"; }
for t in 1 4; do
  check "negstats -t $t, leaves of 256" slem-negstats -q -t $t --leaf-rows 256 -o "$T/ov$t.slem" "$T/dg5.fvecs"
  check "negstats -t $t, fvecs and text" slem-negstats -q -t $t --leaf-rows 300 -o "$T/ovm$t.slem" "$DG" "$T/dg5.txt" "$DG"
done
[ "$(fp "$T/ov4.slem")" = "$(fp "$T/ov1.slem")" ] && ok || bad "negstats: -t 4 gives another cache than -t 1"
[ "$(fp "$T/ovm4.slem")" = "$(fp "$T/ovm1.slem")" ] && ok || bad "negstats: -t 4 gives another cache than -t 1 (fvecs and text)"
# from 8 BLAS threads on, slem-negstats reads blocks of one 4 MiB piece per reading thread
# (at -t 8: 32 768 rows of 64, each read in 2 pieces on 2 threads): 40 000 records, the
# last block short, give the cache of -t 1
for i in 1 2 3 4 5 6 7 8; do cat "$T/dg5.fvecs"; done >"$T/dg40.fvecs"
for t in 1 8; do
  check "negstats -t $t, 40 000 records" slem-negstats -q -t $t -o "$T/ov40.$t.slem" "$T/dg40.fvecs"
done
[ "$(fp "$T/ov40.8.slem")" = "$(fp "$T/ov40.1.slem")" ] && ok || bad "negstats: -t 8 (blocks read in pieces) gives another cache than -t 1"
# and the first bad record named as at -t 1 when it is read in pieces: in 80 000 records
# (the first block is read whole, from the reader's buffer; at -t 8 the blocks of 32 768
# after it in 2 pieces of 16 384, at -t 16 those of 65 536 in 4), a NaN in record 50 001
# and a dimension of 63 in 60 001 (both in the second piece at -t 8), the dimension in
# 40 001 before the NaN in 50 001 (two pieces), a NaN in 70 001 (the first piece at -t 16)
cat "$T/dg40.fvecs" "$T/dg40.fvecs" >"$T/dg80.fvecs"
spoil() { # spoil FILE RECORD OFFSET BYTES: BYTES (octal escapes) at OFFSET in RECORD (1-based)
  printf "$4" | dd of="$1" bs=1 seek=$((($2 - 1) * 260 + $3)) conv=notrunc 2>/dev/null
}
cp "$T/dg80.fvecs" "$T/dg80a.fvecs"
spoil "$T/dg80a.fvecs" 50001 4 '\000\000\300\177'
spoil "$T/dg80a.fvecs" 60001 0 '\077\000\000\000'
cp "$T/dg80.fvecs" "$T/dg80b.fvecs"
spoil "$T/dg80b.fvecs" 40001 0 '\077\000\000\000'
spoil "$T/dg80b.fvecs" 50001 4 '\000\000\300\177'
cp "$T/dg80.fvecs" "$T/dg80c.fvecs"
spoil "$T/dg80c.fvecs" 70001 4 '\000\000\300\177'
for t in 1 8 16; do
  expect_fail "negstats -t $t, a NaN in record 50 001, a dimension in 60 001" 1 "dg80a.fvecs: record 50001: value 1 is NaN" "$T/ov80.slem" \
    slem-negstats -q -t $t -o "$T/ov80.slem" "$T/dg80a.fvecs"
  expect_fail "negstats -t $t, a dimension in record 40 001, a NaN in 50 001" 1 "dg80b.fvecs: record 40001: dimension 63, expected 64" "$T/ov80.slem" \
    slem-negstats -q -t $t -o "$T/ov80.slem" "$T/dg80b.fvecs"
  expect_fail "negstats -t $t, a NaN in record 70 001" 1 "dg80c.fvecs: record 70001: value 1 is NaN" "$T/ov80.slem" \
    slem-negstats -q -t $t -o "$T/ov80.slem" "$T/dg80c.fvecs"
  check "negstats -t $t, 80 000 records" slem-negstats -q -t $t -o "$T/ov80.$t.slem" "$T/dg80.fvecs"
done
[ "$(fp "$T/ov80.8.slem")" = "$(fp "$T/ov80.1.slem")" ] && ok || bad "negstats: -t 8 gives another cache than -t 1 (80 000 records)"
[ "$(fp "$T/ov80.16.slem")" = "$(fp "$T/ov80.1.slem")" ] && ok || bad "negstats: -t 16 gives another cache than -t 1 (80 000 records)"
expect_fail "negstats -t 4, a pipe truncated in record 4001" 1 "<stdin>: record 4001: truncated (100 of 260 bytes)" "$T/ovbad.slem" \
  sh -c "head -c 1040100 '$T/dg5.fvecs' | slem-negstats -q -t 4 --leaf-rows 256 -o '$T/ovbad.slem' -"
# fvecs read straight into the rows (readv) from a pipe that delivers a record in pieces:
# the bytes before the cut reach the reader first (the rest a moment later), the same rows
check "encode, a pipe cut inside a record" sh -c "{ head -c 1000 '$T/dg5.fvecs'; sleep 0.2; tail -c +1001 '$T/dg5.fvecs'; } | slem-encode -q --precision single -f fvecs -c '$T/dg.slem' -o '$T/dgpipe.fvecs' -"
cmp -s "$T/dgpipe.fvecs" "$T/dg32.1.fvecs" && ok || bad "encode: a pipe cut inside a record gives other descriptors"
# the row loops' AVX2 build and the plain one (SLEM_TEST_LANES=sse) give the same bits
check "encode, plain row loops" env SLEM_TEST_LANES=sse slem-encode -q --precision single -c "$T/dg.slem" -o "$T/dgsse.fvecs" "$T/dg5.fvecs"
cmp -s "$T/dgsse.fvecs" "$T/dg32.1.fvecs" && ok || bad "encode: the plain row loops give other descriptors than the AVX2 ones"
# a block read in pieces on threads of their own (from 8 BLAS threads on; forced here by
# SLEM_TEST_READ_PIECES): 10 000 records of 64 (blocks of 1 024 after the MiB the header's
# peek buffered), each block cut into 3 or 7 pieces read (preadv) and checked on threads:
# the descriptors, the cache and the ranking of one read, byte for byte, from fvecs, from
# npy of f4, f2 and i1 (converted as read), and from stdin redirected from the file at
# record 101; a wrong dimension and a NaN in later blocks are named as one read names them
for i in 1 2; do cat "$T/dg5.fvecs"; done >"$T/dg10.fvecs"
for dt in f4 f2 i1; do
  check "npy $dt input" slem-encode -q -c "$T/dg.slem" -F npy --dtype $dt -o "$T/dg10$dt.npy" "$T/dg10.fvecs"
done
tail -c +$((100 * 260 + 1)) "$T/dg10.fvecs" >"$T/dg10tail.fvecs"
cp "$T/dg10.fvecs" "$T/dgnan.fvecs"
printf '\000\000\300\177' | dd of="$T/dgnan.fvecs" bs=1 seek=$((9499 * 260 + 4 + 2 * 4)) conv=notrunc 2>/dev/null
cp "$T/dgnan.fvecs" "$T/dgdim.fvecs"
printf '\077\000\000\000' | dd of="$T/dgdim.fvecs" bs=1 seek=$((7000 * 260)) conv=notrunc 2>/dev/null
for p in 1 3 7; do
  for f in dg10.fvecs dg10f4.npy dg10f2.npy dg10i1.npy dg10tail.fvecs; do
    check "encode $f, $p pieces" env SLEM_TEST_READ_PIECES=$p slem-encode -q -c "$T/dg.slem" -o "$T/pc$p.$f" "$T/$f"
  done
  check "encode stdin at record 101, $p pieces" sh -c "{ dd bs=260 skip=100 count=0 2>/dev/null
    SLEM_TEST_READ_PIECES=$p slem-encode -q -c '$T/dg.slem' -f fvecs -o '$T/pcin$p.fvecs' -; } <'$T/dg10.fvecs'"
  check "negstats, $p pieces" env SOURCE_DATE_EPOCH=1 SLEM_TEST_READ_PIECES=$p slem-negstats -q -o "$T/pcn$p.slem" "$T/dg10.fvecs"
  check "match, $p pieces" env SLEM_TEST_READ_PIECES=$p slem-match -k 10 -d "$T/dg10f4.npy" -o "$T/pcm$p.tsv" "$T/dg10f2.npy"
  expect_fail "a NaN in record 9500, $p pieces" 1 "dgnan.fvecs: record 9500: value 3 is NaN" "$T/pcbad.fvecs" \
    env SLEM_TEST_READ_PIECES=$p slem-encode -q -c "$T/dg.slem" -o "$T/pcbad.fvecs" "$T/dgnan.fvecs"
  expect_fail "dimension 63 in record 7001, $p pieces" 1 "dgdim.fvecs: record 7001: dimension 63, expected 64" "$T/pcbad.fvecs" \
    env SLEM_TEST_READ_PIECES=$p slem-encode -q -c "$T/dg.slem" -o "$T/pcbad.fvecs" "$T/dgdim.fvecs"
done
for p in 3 7; do
  for f in dg10.fvecs dg10f4.npy dg10f2.npy dg10i1.npy; do
    cmp -s "$T/pc$p.$f" "$T/pc1.$f" && ok || bad "encode $f in $p pieces: other descriptors than in one read"
  done
  cmp -s "$T/pcin$p.fvecs" "$T/pc1.dg10tail.fvecs" && ok || bad "encode from stdin at record 101 in $p pieces: not the descriptors of the file's tail"
  cmp -s "$T/pcn$p.slem" "$T/pcn1.slem" && ok || bad "negstats in $p pieces: another cache"
  cmp -s "$T/pcm$p.tsv" "$T/pcm1.tsv" && ok || bad "match in $p pieces: another ranking"
done
[ "$(wc -l <"$T/pcm1.tsv")" = 100000 ] && ok || bad "match in pieces: not 100 000 results"
# slem-encode from 2 threads on encodes two blocks at once on one pool of threads (lanes,
# encstream.c): the descriptors of -t 1, byte for byte, over the 10 000 records in blocks of
# 256 to 4 864 rows, for the unit descriptors, float64 arithmetic and classifiers, shards
# included (which concatenate to the whole), and to stdout; a NaN in record 9 500 ends the
# run as at -t 1
for how in "" "--precision double" "--classifier"; do
  check "encode -t 1 $how" slem-encode -q -t 1 $how -c "$T/dg.slem" -o "$T/ln1.fvecs" "$T/dg10.fvecs"
  for tb in "2" "3 -b 256" "3 -b 4864" "2 -b 1024"; do
    check "encode -t $tb $how" slem-encode -q -t $tb $how -c "$T/dg.slem" -o "$T/ln.fvecs" "$T/dg10.fvecs"
    cmp -s "$T/ln.fvecs" "$T/ln1.fvecs" && ok || bad "encode -t $tb $how: other descriptors than at -t 1"
  done
  for sh in 0 1 2; do
    check "encode --shard $sh/3 -t 3 -b 512 $how" slem-encode -q -t 3 -b 512 --shard $sh/3 $how -c "$T/dg.slem" -o "$T/lns$sh.fvecs" "$T/dg10.fvecs"
  done
  cat "$T/lns0.fvecs" "$T/lns1.fvecs" "$T/lns2.fvecs" | cmp -s - "$T/ln1.fvecs" && ok || bad "encode shards -t 3 $how: not the whole run's descriptors"
done
check "encode -t 3 to stdout" sh -c "slem-encode -q -t 3 -b 256 --classifier -c '$T/dg.slem' -F fvecs -o - '$T/dg10.fvecs' | cat >'$T/lnpipe.fvecs'"
cmp -s "$T/lnpipe.fvecs" "$T/ln1.fvecs" && ok || bad "encode to a pipe at -t 3: other descriptors than at -t 1"
expect_fail "a NaN in record 9500, -t 3" 1 "dgnan.fvecs: record 9500: value 3 is NaN" "$T/lnbad.fvecs" \
  slem-encode -q -t 3 -b 256 -c "$T/dg.slem" -o "$T/lnbad.fvecs" "$T/dgnan.fvecs"

# slem-esvm, 10 000 exemplars (reads of 256): equal exemplars give equal rows, bit for bit,
# whatever the block, the thread count and the row
head -n 100 "$T/neg.txt" >"$T/neg100.txt"
check "esvm" slem-esvm -q -n "$T/neg100.txt" -F text -o "$T/es.txt" "$T/q.txt"
check "esvm -t 1 -b 64" slem-esvm -q -t 1 -b 64 -n "$T/neg100.txt" -F text -o "$T/es1.txt" "$T/q.txt"
cmp -s "$T/es.txt" "$T/es1.txt" && ok || bad "esvm: the rows depend on the block or the threads"
awk -v NQ=$NQ 'FNR <= 10 { k[FNR - 1] = $0 } $0 != k[(FNR - 1) % 10] { print "line " FNR; bad = 1; exit }
  END { if (!bad && NR != NQ) { print NR " lines"; bad = 1 } exit bad }' "$T/es.txt" >"$T/diff" && ok || bad "esvm: $(cat "$T/diff")"
[ "$(sort -u "$T/es.txt" | wc -l)" = 10 ] && ok || bad "esvm: not 10 distinct rows"

# ---- the progress callbacks (every 256 queries, 64 exemplars) on a terminal: shown, and
# the results the same as without them (script(1) gives the tools a terminal) ----
if command -v script >/dev/null 2>&1; then
  # tty NAME WHAT OUT EXPECTED CMD: CMD on a terminal shows "WHAT" and writes OUT = EXPECTED
  tty() {
    script -qec "$5" /dev/null >"$T/tty.log" 2>&1 </dev/null
    grep -q "$2" "$T/tty.log" && ok || bad "$1: no '$2' progress on a terminal: $(head -c 200 "$T/tty.log")"
    cmp -s "$3" "$4" && ok || bad "$1: another result on a terminal"
  }
  # shellcheck disable=SC2086
  slem-eval $LABELS -o "$T/e.txt" "$T/rank.tsv"
  tty "eval" "queries read" "$T/et.txt" "$T/e.txt" "slem-eval $LABELS -o '$T/et.txt' '$T/rank.tsv'"
  tty "merge" "queries merged" "$T/mt.tsv" "$T/all20.tsv" "slem-merge -k 20 -o '$T/mt.tsv' '$T/s0.tsv' '$T/s1.tsv'"
  tty "expand" "vectors expanded" "$T/xt.txt" "$T/x.txt" \
    "slem-expand -d '$T/db.txt' -n 1 -F text -o '$T/xt.txt' -r '$T/rank.tsv' '$T/q.txt'"
  tty "calibrate" "exemplars" "$T/ct.txt" "$T/cal.txt" "slem-calibrate -f text -c '$T/clf.txt' \
    --exemplar-labels '$T/clf.labels' --positives '$T/val.txt' --positive-labels '$T/val.labels' -o '$T/ct.txt'"
  # shellcheck disable=SC2086
  script -qec "slem-report $LABELS -o '$T/rt.html' '$T/rank.tsv'" /dev/null >"$T/tty.log" 2>&1 </dev/null
  grep -q 'title="0.500050"' "$T/rt.html" && ok || bad "report on a terminal: the table lacks mAP 0.500050"
else
  echo "cli-large: script(1) missing, the progress on a terminal is not tested"
fi

finish cli-large
