#!/bin/sh
# slem-eval --trec-compat against the trec_eval 10.0 lines of testdata/trec (made by
# scripts/gen-trec.py from trec_eval's definitions, and equal to trec_eval's own output on
# these files), from TREC, TSV and JSONL rankings alike; slem-eval --protocol against
# revisitop's compute_map definition (testdata/revisitop, scripts/gen-revisitop.py); then the
# usage and data errors. Run from the top of the tree.
. "$(dirname "$0")/testlib.sh"
TD=$TOP/testdata/trec
RV=$TOP/testdata/revisitop
M="-m num_q -m num_ret -m num_rel -m num_rel_ret -m map -m gm_map -m Rprec -m recip_rank -m iprec_at_recall -m P -m ndcg"

# the same runs in the other two formats: tsv "q rank id score", jsonl with ranks
for base in edge digits; do
  awk '{ print $1 "\t" $4 "\t" $3 "\t" $5 }' "$TD/$base.run" >"$T/$base.tsv"
  awk '{ if (NR == 1 || $1 != q) { if (NR > 1) print "]}"; printf "{\"query\":\"%s\",\"results\":[", $1; q = $1; sep = "" }
         printf "%s{\"rank\":%s,\"id\":\"%s\",\"score\":%s}", sep, $4, $3, $5; sep = "," }
       END { print "]}" }' "$TD/$base.run" | sed 's/\]}$/]}/' >"$T/$base.jsonl"
done
golden() { # golden NAME BASE OPTIONS...
  name=$1 base=$2; shift 2
  for fmt in run tsv jsonl; do
    in=$TD/$base.run; [ "$fmt" = run ] || in=$T/$base.$fmt
    slem-eval --trec-compat --quiet "$@" $M --qrels "$TD/$base.qrels" "$in" >"$T/out" 2>"$T/err"
    st=$?
    if [ "$st" = 0 ] && cmp -s "$T/out" "$TD/expected.$name.txt"; then ok
    else bad "trec-compat $name from $fmt (status $st): $(diff "$T/out" "$TD/expected.$name.txt" | head -4) $(head -c 200 "$T/err")"; fi
  done
}
golden edge edge
golden edge-q edge --per-query
golden edge-c edge --complete
golden edge-cq edge --complete --per-query
golden edge-l2 edge --relevance-level 2 --per-query
golden digits digits
golden digits-cq digits --complete --per-query

# trec_eval 10.0's own output (scripts/gen-trec-eval.sh, cases in testdata/trec/te-cases.txt):
# nDCG@k, recall@k and success@k among the others, digit for digit, in its order of output
ln -sf "$(command -v slem-eval)" "$T/slem-trec_eval"
# a case's files are testdata/trec's, or many.awk's 3000 topics, made again here
awk -v what=qrels -f "$TD/many.awk" >"$T/many.qrels"
awk -v what=run -f "$TD/many.awk" >"$T/many-ranked.run"
case_files() { # case_files QRELS RUN: sets q and r to the paths of the case's files
  q=$TD/$1.qrels r=$TD/$2.run
  [ -f "$q" ] || q=$T/$1.qrels
  [ -f "$r" ] || r=$T/$2.run
}
grep -v '^#' "$TD/te-cases.txt" | while read -r name qrels base opts; do
  [ -n "$name" ] || continue
  case_files "$qrels" "$base"
  if slem-eval --trec-compat --quiet $opts --qrels "$q" "$r" >"$T/out" 2>"$T/err" &&
     cmp -s "$T/out" "$TD/expected.$name.txt"; then echo ok; else echo "bad trec_eval $name: $(diff "$T/out" "$TD/expected.$name.txt" | head -4) $(head -c 200 "$T/err")"; fi
  # slem-trec_eval: trec_eval's own command line, QRELS RUN
  if "$T/slem-trec_eval" $opts "$q" "$r" >"$T/out" 2>"$T/err" &&
     cmp -s "$T/out" "$TD/expected.$name.txt"; then echo ok; else echo "bad slem-trec_eval $name: $(diff "$T/out" "$TD/expected.$name.txt" | head -4) $(head -c 200 "$T/err")"; fi
done >"$T/te"
n=$(grep -c '^ok$' "$T/te"); [ "$n" = $((2 * $(grep -c '^te-' "$TD/te-cases.txt"))) ] && [ "$n" -ge 34 ] && ok || bad "trec_eval golden files: $n passed"
grep '^bad' "$T/te" | while read -r line; do echo "FAIL: $line"; done
[ "$(grep -c '^bad' "$T/te")" = 0 ] && ok || bad "trec_eval golden files"

# ---- trec_eval's command line beyond the golden cases ----
# -o: trec_eval's obsolete flag, a no-op that takes no value; in slem-trec_eval never slem's
# -o OUT (which wrote a file named "-q")
mkdir "$T/o" && (cd "$T/o" && "$T/slem-trec_eval" -o -c -q "$TD/edge.qrels" "$TD/edge.run" >"$T/out" 2>"$T/err")
[ $? = 0 ] && cmp -s "$T/out" "$TD/expected.te-edge-official-q.txt" && [ -z "$(ls -A "$T/o")" ] && ok ||
  bad "slem-trec_eval -o -c -q: $(ls -A "$T/o") $(head -c 200 "$T/err")"
check "slem-trec_eval --output" "$T/slem-trec_eval" -c --output "$T/o/te.txt" "$TD/edge.qrels" "$TD/edge.run"
cmp -s "$T/o/te.txt" "$TD/expected.te-edge-official.txt" && [ ! -s "$T/out" ] && ok || bad "slem-trec_eval --output"
# -R qrels and -T trec_results are trec_eval's defaults: accepted
check "slem-trec_eval -R qrels -T trec_results" "$T/slem-trec_eval" -R qrels -T trec_results --Output_old_results_format x -c "$TD/edge.qrels" "$TD/edge.run"
cmp -s "$T/out" "$TD/expected.te-edge-official.txt" && ok || bad "-R qrels -T trec_results: $(head -3 "$T/out")"
# what slem does not do is named, with the reason, from both command lines
for a in "-m rbp:rbp: not supported by slem: trec_eval 10.0's m_rbp.c reads two variables" \
         "-m rbp.p=0.5:rbp.p=0.5: not supported by slem" \
         "-m prefs_simp:prefs_simp: not supported by slem: preference judgements" \
         "-m all_prefs:all_prefs: not supported by slem: preference judgements" \
         "-m prefs:prefs: not supported by slem" \
         "-m map_avgjg:map_avgjg: not supported by slem: judgement groups" \
         "-m qrels_jg:qrels_jg: not supported by slem: judgement groups" \
         "-R prefs:-R prefs: not supported by slem: it reads qrels only" \
         "-T xml:-T xml: not supported by slem: trec_eval 10.0's one results format" \
         "-D 1:-D 1: not supported by slem: trec_eval's debugging output" \
         "-Z zmeans:-Z zmeans: not supported by slem: z-scores" \
         "--Zscore=zmeans:-Z zmeans: not supported by slem"; do
  # shellcheck disable=SC2086 # the option and its value are two words
  expect_fail "slem-trec_eval ${a%%:*}" 2 "${a#*:}" "$T/x" "$T/slem-trec_eval" ${a%%:*} --output "$T/x" "$TD/edge.qrels" "$TD/edge.run"
  # shellcheck disable=SC2086
  expect_fail "--trec-compat ${a%%:*}" 2 "${a#*:}" "$T/x" slem-eval --trec-compat ${a%%:*} -o "$T/x" "$TD/edge.qrels" "$TD/edge.run"
done
# measure parameters: malformed ones named, status 2
for a in "ndcg.1=x:ndcg.1=x: gains are LEVEL=GAIN pairs" "ndcg.a=1:ndcg.a=1: 'a=1' is not a relevance level" \
         "ndcg.1=1,1=2:ndcg.1=1,1=2: a gain for level 1 twice" "ndcg.1:ndcg.1: gains are LEVEL=GAIN pairs" \
         "ndcg_rel.2=1,:ndcg_rel.2=1,: gains are" "G.1=inf:G.1=inf: gains are" "G.1=1e308:GAIN a number from -1e100 to 1e100" \
         "utility.1e101,0,0,0:from -1e100 to 1e100" "set_F.1e200:set_F takes one beta from 0 to 1e100" \
         "utility.1,2,3:utility.1,2,3: utility takes four coefficients" \
         "utility.1,2,3,4,5:utility takes four coefficients" "utility.1,x,0,0:utility takes four" \
         "set_F.-1:set_F.-1: set_F takes one beta" "set_F.1,2:set_F takes one beta" \
         "11pt_avg.0.5,0.2:11pt_avg.0.5,0.2: recall levels from 0 to 1 in increasing order" \
         "11pt_avg.1.5:11pt_avg takes recall levels" "rbp_resid.p=1:rbp_resid takes p=P, the persistence, 0 < P < 1" \
         "rbp_resid.q=0.5:rbp_resid takes p=P" "rbp_resid.0.5:rbp_resid takes p=P" \
         "relstring.64:relstring takes one length, a whole number from 0 to 63" "relstring.2.5:relstring takes one length" "map.1=2:map takes no parameters"; do
  expect_fail "-m ${a%%:*}" 2 "${a#*:}" "$T/x" "$T/slem-trec_eval" -m "${a%%:*}" --output "$T/x" "$TD/edge.qrels" "$TD/edge.run"
done
# a malformed second request is refused even though the first parameters are kept
expect_fail "-m P.5 -m P.x" 2 "P.x: cut-offs are positive" "$T/x" "$T/slem-trec_eval" -m P.5 -m P.x --output "$T/x" "$TD/edge.qrels" "$TD/edge.run"
# slem-eval's own -M: the parameters that need no gain map work; a gain map is refused
check "-M utility.2,-1,0,0" slem-eval -q -M utility.2,-1,0,0 -M set_F.0.5 --qrels "$TD/edge.qrels" "$TD/edge.run"
grep -q 'utility_2,-1,0,0' "$T/out" && grep -q 'set_F_0.5' "$T/out" && ok || bad "-M with parameters: $(head -3 "$T/out")"
expect_fail "-M gain map" 2 "-M ndcg.1=0: a gain map goes with --trec-compat" "$T/x" slem-eval -M ndcg.1=0 --qrels "$TD/edge.qrels" -o "$T/x" "$TD/edge.run"
# --help under either name names the tool that runs
"$T/slem-trec_eval" --help >"$T/out" 2>&1
grep -q '^Usage: slem-trec_eval \[OPTION\]... QRELS RUN' "$T/out" && grep -q 'slem-trec_eval(1)' "$T/out" &&
  ! grep -q 'slem-eval \[OPTION' "$T/out" && ok || bad "slem-trec_eval --help: $(head -2 "$T/out")"
# comment lines in the qrels of slem-eval's own mode too
printf '# judgements\n' | cat - "$TD/edge.qrels" >"$T/c.qrels"
check "qrels comment, default mode" slem-eval -q --qrels "$T/c.qrels" "$TD/edge.run"
slem-eval -q --qrels "$TD/edge.qrels" "$TD/edge.run" >"$T/plain" && cmp -s "$T/out" "$T/plain" && ok || bad "a comment in qrels changed slem-eval's result"

# comment lines in a run read through the rankings reader: stdin, and slem-eval's own mode;
# a tsv query named "#1" is no comment
"$T/slem-trec_eval" -c -q -m official -m ndcg "$TD/comments.qrels" - <"$TD/comments.run" >"$T/out" 2>"$T/err" &&
  cmp -s "$T/out" "$TD/expected.te-comments-cq.txt" && ok || bad "comments from stdin: $(head -c 200 "$T/err")"
check "run comments, default mode" slem-eval -q --qrels "$TD/edge.qrels" "$TD/comments.run"
cmp -s "$T/out" "$T/plain" && ok || bad "comments in a run changed slem-eval's result: $(head -3 "$T/out")"
printf '#1\t1\td1\t0.5\nq1\t1\td1\t0.5\n' >"$T/hash.tsv"
slem-eval --qrels "$TD/edge.qrels" "$T/hash.tsv" >"$T/out" 2>"$T/err"
grep -q '1 queries of the ranking are not in the qrels.*line 1)' "$T/err" && ok || bad "a tsv query '#1': $(head -c 200 "$T/err")"

# slem-eval's default mode, -M: the same table's measures on the ranking in rank order; on
# a run whose scores follow its ranks trec_eval's per-topic values (expected.te-ranked-cq),
# to the 4 decimals both print, for every query slem-eval evaluates; AP equals "map"
check "default mode -M" slem-eval -q --per-query -M map -M Rprec -M recip_rank -M recall.10,50 -M ndcg -M ndcg_cut.5,10,100 -M success.1,5 --qrels "$TD/digits.qrels" "$TD/digits-ranked.run"
if awk -F '\t' 'NR == FNR { if ($2 != "all") { sub(/ +$/, "", $1); want[$2 "|" $1] = $3 } next }
    FNR == 1 { for (i = 10; i <= NF; i++) name[i] = $i; next }
    $9 == "ok" || $9 == "missing" { q++; for (i = 10; i <= NF; i++) { n++; if (!(($1 "|" name[i]) in want) || want[$1 "|" name[i]] != $i) { print $1, name[i], $i, want[$1 "|" name[i]]; bad = 1 } }
      if (sprintf("%.4f", $2) != $10) { print $1, "AP", $2, $10; bad = 1 } }
    END { if (q < 90 || n != q * 11) { print q " queries, " n " values"; bad = 1 } exit bad }' "$TD/expected.te-ranked-cq.txt" "$T/out" >"$T/diff"
then ok; else bad "default mode -M against trec_eval: $(head -3 "$T/diff")"; fi

# the default mode against trec_eval itself on runs without ties (the te-default-* cases):
# every measure -M accepts (the list its refusal of an unknown one gives), every value
# trec_eval printed for it, topic by topic and for "all", from the JSON's full precision to
# the 4 decimals trec_eval prints (within half their last digit; counts exactly). Not in
# the goldens: revisitop_mP (slem's own, against revisitop in cli-eval.sh) and rbp (trec_eval
# 10.0 leaves it undefined)
slem-eval -M nosuch --qrels "$TD/edge.qrels" "$TD/edge.run" 2>"$T/err"
mnames=$(sed -n "s/.*-M: unknown measure 'nosuch' (\(.*\))\$/\1/p" "$T/err" | tr -d ' ' | tr ',' ' ')
margs=
for m in $mnames; do case $m in revisitop_mP|rbp) ;; *) margs="$margs -M $m" ;; esac; done
[ "$(echo "$margs" | wc -w)" -ge 68 ] && ok || bad "-M's list of measures: $(head -c 300 "$T/err")"
ndm=0
for dcase in $(sed -n 's/^\(te-default-[^ ]*\) .*/\1/p' "$TD/te-cases.txt"); do
  # shellcheck disable=SC2046 # the case's words: NAME QRELS RUN OPTIONS
  set -- $(grep "^$dcase " "$TD/te-cases.txt")
  case_files "$2" "$3"
  pq=; case " $* " in *" -q "*) pq=--per-query ;; esac
  ndm=$((ndm + 1))
  # shellcheck disable=SC2086 # margs is the -M list
  check "default mode $dcase" slem-eval -q --json $pq $margs --qrels "$q" "$r"
  if awk -F '\t' -v names="$margs" '
      BEGIN { n = split(names, w, " "); for (i = 2; i <= n; i += 2) { want[w[i]] = 1; left[w[i]] = 1 } }
      NR == FNR { sub(/ +$/, "", $1); te[$2 "|" $1] = $3; next }
      /"per_query":/ { pq = 1 }
      { line = $0; sub(/^[ \t]+/, "", line); sub(/,$/, "", line)
        if (!split(line, kv, ":\t")) next; k = kv[1]; v = kv[2]; gsub(/"/, "", k); gsub(/"/, "", v)
        if (k == "query") { q = v; next }
        got[(pq ? q : "all") "|" k] = v }
      END {
        for (key in te) {
          split(key, p, "|"); m = p[2]
          if (!(m in want)) { b = m; sub(/_[^_]*$/, "", b); if (!(b in want)) continue; m = b }
          delete left[m]; n++
          if (!(key in got)) { print "no value for " key; bad++; continue }
          x = got[key]; y = te[key]; d = x - y; if (d < 0) d = -d
          if (x !~ /^-?[0-9][0-9.e+-]*$/ || (y ~ /\./ ? d > 0.50001e-4 : x != y)) { print key ": " x ", trec_eval " y; bad++ }
        }
        for (m in left) { print m ": not in the golden file"; bad++ }
        if (n < 90) { print n " values"; bad++ }
        exit bad > 0 }' "$TD/expected.$dcase.txt" "$T/out" >"$T/diff"
  then ok; else bad "default mode against trec_eval, $dcase: $(head -5 "$T/diff")"; fi
done
[ "$ndm" -ge 3 ] && ok || bad "$ndm te-default cases"
check "default mode -M json" slem-eval -q --json -M ndcg_cut.10 -M num_rel --qrels "$TD/digits.qrels" "$TD/digits-ranked.run"
grep -q '"ndcg_cut_10":' "$T/out" && grep -q '"num_rel":' "$T/out" && ok || bad "-M in JSON: $(head -c 300 "$T/out")"
expect_fail "-M unknown" 2 "unknown measure 'rbp'" "$T/x" slem-eval -M rbp --qrels "$TD/digits.qrels" -o "$T/x" "$TD/digits-ranked.run"
# -M takes as many measures as --trec-compat's -m (64), and says so beyond
margs=; i=0; while [ $i -lt 64 ]; do i=$((i + 1)); margs="$margs -M P.$i"; done
# shellcheck disable=SC2086 # margs is the -M list
check "-M 64 times" slem-eval -q $margs --qrels "$TD/digits.qrels" "$TD/digits-ranked.run"
[ "$(grep -c '^P_' "$T/out")" = 64 ] && ok || bad "-M 64 times: $(grep -c '^P_' "$T/out") values"
# shellcheck disable=SC2086
expect_fail "-M 65 times" 2 "-M: at most 64 measures (one -M takes several cut-offs" "$T/x" slem-eval -q $margs -M P.65 --qrels "$TD/digits.qrels" -o "$T/x" "$TD/digits-ranked.run"
expect_fail "-M with trec-compat is trec_eval's -M N" 2 "-M: 'ndcg' is not a whole number" "$T/x" slem-eval --trec-compat -M ndcg --qrels "$TD/digits.qrels" -o "$T/x" "$TD/digits-ranked.run"
# -M 0: trec_eval scores an empty ranking for every topic (0 is not "no limit" to it);
# refused with the reason, from both command lines
expect_fail "--trec-compat -M 0" 2 "-M 0 keeps no result of any topic .*leave -M out" "$T/x" slem-eval --trec-compat -M 0 --qrels "$TD/digits.qrels" -o "$T/x" "$TD/digits-ranked.run"
expect_fail "slem-trec_eval -M 0" 2 "-M 0 keeps no result of any topic" "$T/x" "$T/slem-trec_eval" -M 0 --output "$T/x" "$TD/digits.qrels" "$TD/digits-ranked.run"
expect_fail "--trec-compat -M -1" 2 "-M: '-1' is not a whole number from 1" "$T/x" slem-eval --trec-compat -M -1 --qrels "$TD/digits.qrels" -o "$T/x" "$TD/digits-ranked.run"

# without -q: the qrels topic missing from the run is reported, once
slem-eval --trec-compat -m map --qrels "$TD/edge.qrels" "$TD/edge.run" >"$T/out" 2>"$T/err"
if grep -q "1 topics of the qrels are not in the run" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ]; then ok; else bad "missing-topic warning: $(cat "$T/err")"; fi
# the default set is trec_eval's official one, less runid and bpref, in its order
check "default measures" slem-eval --trec-compat --quiet --qrels "$TD/edge.qrels" "$TD/edge.run"
cut -f1 "$T/out" | sed 's/ *$//' | tr '\n' ' ' >"$T/names"
want="runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall_0.00 iprec_at_recall_0.10 iprec_at_recall_0.20 iprec_at_recall_0.30 iprec_at_recall_0.40 iprec_at_recall_0.50 iprec_at_recall_0.60 iprec_at_recall_0.70 iprec_at_recall_0.80 iprec_at_recall_0.90 iprec_at_recall_1.00 P_5 P_10 P_15 P_20 P_30 P_100 P_200 P_500 P_1000 "
[ "$(cat "$T/names")" = "$want" ] && ok || bad "default measures: $(cat "$T/names")"
# cut-offs come out sorted; the output file is written atomically
check "P cut-offs" slem-eval --trec-compat --quiet -m P.10,1 -o "$T/p.txt" --qrels "$TD/edge.qrels" "$TD/edge.run"
[ "$(cut -f1 "$T/p.txt" | tr -d ' ' | tr '\n' ' ')" = "P_1 P_10 " ] && ok || bad "P cut-offs: $(cat "$T/p.txt")"

# errors
expect_fail "trec-compat without qrels" 2 "needs --qrels" "$T/x" slem-eval --trec-compat -o "$T/x" "$TD/edge.run"
expect_fail "trec-compat with labels" 2 "takes neither labels" "$T/x" slem-eval --trec-compat --query-labels a --db-labels b -o "$T/x" "$TD/edge.run"
expect_fail "parameters of a measure without" 2 "map takes no parameters" "$T/x" slem-eval --trec-compat -m map.5 --qrels "$TD/edge.qrels" -o "$T/x" "$TD/edge.run"
expect_fail "recall cut-off twice" 2 "recall.5,5: 5 twice" "$T/x" slem-eval --trec-compat -m recall.5,5 --qrels "$TD/edge.qrels" -o "$T/x" "$TD/edge.run"
expect_fail "ndcg_cut cut-off 0" 2 "positive whole numbers" "$T/x" slem-eval --trec-compat -m ndcg_cut.0 --qrels "$TD/edge.qrels" -o "$T/x" "$TD/edge.run"
expect_fail "unknown measure" 2 "unknown measure 'mapp'" "$T/x" slem-eval --trec-compat -m mapp --qrels "$TD/edge.qrels" -o "$T/x" "$TD/edge.run"
expect_fail "measure without trec-compat" 2 "go with --trec-compat" "$T/x" slem-eval -m map --qrels "$TD/edge.qrels" -o "$T/x" "$TD/edge.run"
printf 'q1 Q0 d1 1 0.5 r\nq1 Q0 d1 2 0.4 r\n' >"$T/dup.run"
expect_fail "document twice" 1 "line 2: an id twice\|line 2: .*twice" "$T/x" slem-eval --trec-compat --qrels "$TD/edge.qrels" -o "$T/x" "$T/dup.run"
printf 'q1 Q0 d1 1 x r\n' >"$T/bad.run"
expect_fail "bad score" 1 "line 1" "$T/x" slem-eval --trec-compat --qrels "$TD/edge.qrels" -o "$T/x" "$T/bad.run"
printf 'zz Q0 d1 1 0.5 r\n' >"$T/other.run"
expect_fail "no topic in common" 1 "no topic has both" "$T/x" slem-eval --trec-compat --qrels "$TD/edge.qrels" -o "$T/x" "$T/other.run"
echo "old" >"$T/keep"
printf 'q1 0 d1 1\nq1 0 d2 x\n' >"$T/bad.qrels"
expect_fail "bad qrels keeps the output" 1 "bad.qrels: line 2: relevance 'x'" - slem-eval --trec-compat --qrels "$T/bad.qrels" -o "$T/keep" "$TD/edge.run"
[ "$(cat "$T/keep")" = old ] && ok || bad "an existing output was changed"

# ---- the revisited protocol ----
# the graded-qrels form of the same ground truth
{ awk '{ print $1, 0, $2, 2 }' "$RV/easy.txt"; awk '{ print $1, 0, $2, 1 }' "$RV/hard.txt"; awk '{ print $1, 0, $2, -1 }' "$RV/junk.txt"; } >"$T/graded.qrels"
for r in cosine-full slem-top100; do
  for p in easy medium hard; do
    check "protocol $p $r" slem-eval --protocol $p --easy "$RV/easy.txt" --hard "$RV/hard.txt" --junk "$RV/junk.txt" "$TOP/testdata/eval/$r.tsv"
    cp "$T/out" "$T/files.out"
    # mAP, mP@k to the printed 6 decimals; the number of queries exactly
    if awk -F '\t' -v r="$r" -v p="$p" 'NR == FNR { if ($1 == r && $2 == p) want[$3] = $4; next }
        $1 == "mAP" || $1 ~ /^mP@/ { n++; d = $2 - want[$1]; if (d < 0) d = -d; if (d > 5e-7) { print $1, $2, want[$1]; bad = 1 } }
        $1 == "queries" { n++; if ($2 != want["queries"]) { print "queries", $2; bad = 1 } }
        END { exit bad || n != 5 }' "$RV/expected.txt" "$T/files.out" >"$T/diff"; then ok; else bad "protocol $p $r: $(cat "$T/diff")"; fi
    check "protocol $p $r, graded qrels" slem-eval --protocol $p --qrels "$T/graded.qrels" "$TOP/testdata/eval/$r.tsv"
    cmp -s "$T/out" "$T/files.out" && ok || bad "graded qrels differ from the three files ($p $r)"
  done
done
# per-query APs in JSON, full precision, against the transcription to 1e-12
check "protocol json" slem-eval --protocol medium --json --per-query --easy "$RV/easy.txt" --hard "$RV/hard.txt" --junk "$RV/junk.txt" "$TOP/testdata/eval/slem-top100.tsv"
tr '{' '\n' <"$T/out" | sed -n 's/^"query":"\([0-9]*\)","ap":\([-0-9.eE+]*\),.*"status":"ok".*/\1 \2/p' >"$T/aps"
if [ "$(wc -l <"$T/aps")" = 100 ] && awk 'NR == FNR { if ($1 == "slem-top100" && $2 == "medium" && $3 ~ /^ap\./) { sub(/^ap\./, "", $3); want[$3] = $4 } next }
    { d = $2 - want[$1]; if (d < 0) d = -d; if (d > 1e-12) { print; bad = 1 } } END { exit bad }' "$RV/expected.txt" "$T/aps" >"$T/diff"
then ok; else bad "per-query AP: $(head -3 "$T/diff") ($(wc -l <"$T/aps") queries)"; fi
expect_fail "protocol without positives" 2 "needs the positives" "$T/x" slem-eval --protocol hard -o "$T/x" "$TOP/testdata/eval/slem-top100.tsv"
expect_fail "unknown protocol" 2 "--protocol: 'extreme'" "$T/x" slem-eval --protocol extreme --easy "$RV/easy.txt" -o "$T/x" "$TOP/testdata/eval/slem-top100.tsv"
printf 'nosuch\t1\t3\t0.5\n' >"$T/other.tsv"
expect_fail "protocol: unknown query" 1 "other.tsv: line 1: query 'nosuch'" "$T/x" slem-eval --protocol easy --easy "$RV/easy.txt" -o "$T/x" "$T/other.tsv"
printf '1 2 3\n' >"$T/bad.txt"
expect_fail "protocol: bad ground truth" 1 "bad.txt: line 1: 3 fields, expected 2" "$T/x" slem-eval --protocol easy --easy "$T/bad.txt" -o "$T/x" "$TOP/testdata/eval/slem-top100.tsv"
finish cli-trec
