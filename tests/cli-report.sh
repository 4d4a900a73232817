#!/bin/sh
# CLI tests of slem-report: the page's numbers against slem-eval's, pictures from vectors,
# from a folder (linked and embedded) and from ids that are paths, escaping, the query
# list, and bad inputs (message, status, no page, an existing page untouched). Run from
# the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
E=$TOP/testdata/eval
LABELS="--query-labels $D/queries.labels --db-labels $D/database.labels"
hits() { grep -o '<figure class="hit ' "$1" | wc -l | tr -d ' '; }

# ---- the numbers are slem-eval's ----
# shellcheck disable=SC2086
check "two runs" slem-report $LABELS -o "$T/r.html" cosine="$E/cosine-full.tsv" "$E/slem-top100.tsv"
for run in cosine-full slem-top100; do
  for ap in trec oxford; do
    # shellcheck disable=SC2086
    slem-eval $LABELS --ap $ap "$E/$run.tsv" >"$T/eval.$ap"
  done
  name=$run
  [ $run = cosine-full ] && name=cosine
  # the row of the run: its cells' titles hold the values as slem-eval prints them
  row=$(grep "<span class=\"swatch\"[^>]*></span>$name<span class=\"src\"" "$T/r.html" | head -1)
  cells=$(printf '%s\n' "$row" | sed 's/<td class="pvalue"[^>]*>//' | grep -o 'title="[0-9.]*"' | sed 's/title="\(.*\)"/\1/' | tr '\n' ' ')
  want="$(awk -F '\t' '$1 == "mAP" { print $2 }' "$T/eval.trec") $(awk -F '\t' '$1 == "mAP" { print $2 }' "$T/eval.oxford")"
  want="$want $(awk -F '\t' '$1 ~ /^(P@1|P@5|P@10|R@100)$/ { printf "%s ", $2 }' "$T/eval.trec")"
  [ "$(echo $cells)" = "$(echo $want)" ] && ok || bad "$name: table '$cells', slem-eval '$want'"
done
[ "$(hits "$T/r.html")" = 320 ] && ok || bad "two runs: $(hits "$T/r.html") results shown, expected 320"
grep -q '<h2>Queries where the runs differ most' "$T/r.html" && ok || bad "two runs: section title"

# one run, 4 queries, top 5, no extremes; the run named by its file
# shellcheck disable=SC2086
check "one run" slem-report $LABELS --queries 4 --top 5 --extremes 0 -o "$T/one.html" "$E/cosine-full.tsv"
[ "$(hits "$T/one.html")" = 20 ] && ok || bad "one run: $(hits "$T/one.html") results, expected 20"
grep -q '</span>cosine-full<span' "$T/one.html" && ok || bad "one run: not named after its file"
grep -q 'Queries from worst to best' "$T/one.html" && ok || bad "one run: section title"

# the ranking from stdin, the page to stdout
# shellcheck disable=SC2086
check "stdin to stdout" slem-report $LABELS --extremes 0 --queries 2 --top 3 <"$E/cosine-full.tsv"
[ "$(hits "$T/out")" = 6 ] && ok || bad "stdin: $(hits "$T/out") results"

# ---- pictures ----
# rendered vectors: every shown id has a PNG (10 + 12 queries, 320 results)
# shellcheck disable=SC2086
check "vectors" slem-report $LABELS --image-shape 8x8 --pixel-range 0:16 --invert \
  --query-vectors "$D/queries.fvecs" --db-vectors "$D/database.fvecs" -o "$T/v.html" \
  cosine="$E/cosine-full.tsv" SLEM="$E/slem-top100.tsv"
n=$(grep -o '<img src="data:image/png;base64,' "$T/v.html" | wc -l)
[ "$n" = 342 ] && ok || bad "vectors: $n pictures, expected 342"
[ ! -s "$T/err" ] && ok || bad "vectors: unexpected warning: $(cat "$T/err")"
# the same with ids
# shellcheck disable=SC2086
slem-match --normalize -k 20 -d "$D/database.fvecs" --query-ids "$D/queries.ids" \
  --db-ids "$D/database.ids" -o "$T/ids.tsv" "$D/queries.fvecs"
# shellcheck disable=SC2086
check "vectors by id" slem-report $LABELS --query-ids "$D/queries.ids" --db-ids "$D/database.ids" \
  --image-shape 8x8 --query-vectors "$D/queries.fvecs" --db-vectors "$D/database.fvecs" \
  --queries 3 --extremes 0 -o "$T/vid.html" "$T/ids.tsv"
n=$(grep -o '<img src="data:image/png;base64,' "$T/vid.html" | wc -l)
[ "$n" = 33 ] && ok || bad "vectors by id: $n pictures, expected 33"

# a folder of image files, linked relative to the page, or embedded
mkdir -p "$T/imgs" "$T/pages"
printf 'q 0 a 1\nq 0 c 1\n' >"$T/q.qrels"
printf 'q\t1\ta\t0.9\nq\t2\tb\t0.8\nq\t3\tc\t0.7\n' >"$T/run.tsv"
printf 'GIF89a' >"$T/imgs/a.gif"
printf 'PNG' >"$T/imgs/q.PNG"
check "folder" slem-report --qrels "$T/q.qrels" --images "$T/imgs" -o "$T/pages/f.html" "$T/run.tsv"
grep -q '<img src="../imgs/a.gif" alt="a">' "$T/pages/f.html" && ok || bad "folder: no relative link to a.gif"
grep -q '<img src="../imgs/q.PNG" alt="q">' "$T/pages/f.html" && ok || bad "folder: no link to the query's picture"
grep -q '<span class="pic tile">b</span>' "$T/pages/f.html" && ok || bad "folder: b without a picture is not a tile"
grep -q "warning: 2 ids shown have no picture (the first: 'b')" "$T/err" && ok || bad "folder: no warning about b and c: $(cat "$T/err")"
# a page named through a link lands beside the link's file, and its links start there
mkdir -p "$T/pages/deep/er" "$T/links"
ln -s ../pages/deep/er/l.html "$T/links/l.html"
check "folder, the page a link" slem-report --qrels "$T/q.qrels" --images "$T/imgs" -o "$T/links/l.html" "$T/run.tsv"
[ -L "$T/links/l.html" ] && grep -q '<img src="../../../imgs/a.gif" alt="a">' "$T/pages/deep/er/l.html" && ok ||
  bad "folder, the page a link: the links not relative to the page's folder"
check "embedded" slem-report --qrels "$T/q.qrels" --images "$T/imgs" --embed-images -o "$T/pages/e.html" "$T/run.tsv"
grep -q '<img src="data:image/gif;base64,R0lGODlh" alt="a">' "$T/pages/e.html" && ok || bad "embedded: a.gif"
# ids that are paths
printf 'q 0 %s 1\n' "$T/imgs/a.gif" >"$T/p.qrels"
printf 'q\t1\t%s\t0.9\n' "$T/imgs/a.gif" >"$T/p.tsv"
check "ids are paths" slem-report --qrels "$T/p.qrels" -o "$T/pages/p.html" "$T/p.tsv"
grep -q '<img src="../imgs/a.gif"' "$T/pages/p.html" && ok || bad "ids are paths: no link"

# ---- escaping: ids, names and title are text ----
printf '<script>x 0 "a" 1\n' >"$T/x.qrels"
printf '<script>x\t1\t"a"\t0.9\n' >"$T/x.tsv"
check "escaping" slem-report --qrels "$T/x.qrels" --title "<b>T</b>" -o "$T/x.html" "<i>n</i>=$T/x.tsv"
# the page's own two scripts (the per-query table's data and code), no other
[ "$(grep -o '<script[^>]*>' "$T/x.html" | tr '\n' ' ')" = '<script type="application/json" id="pq-data"> <script> ' ] &&
  ok || bad "escaping: a <script> element"
grep -q '&lt;script&gt;x' "$T/x.html" && ok || bad "escaping: the query id is not shown as text"
grep -q 'alt="&quot;a&quot;"\|title="rank 1: &quot;a&quot; (relevant)' "$T/x.html" && ok || bad "escaping: quotes in an attribute"
grep -q '<i>\|<b>T' "$T/x.html" && bad "escaping: markup from a name or the title" || ok

# ---- --queries FILE ----
printf '5\n9\n' >"$T/list"
# shellcheck disable=SC2086
check "query list" slem-report $LABELS --queries "$T/list" --extremes 0 -o "$T/l.html" "$E/cosine-full.tsv"
[ "$(grep -o '<figure class="q"' "$T/l.html" | wc -l)" = 2 ] && ok || bad "query list: not 2 queries"
grep -q '<h2>Chosen queries' "$T/l.html" && ok || bad "query list: section title"

# ---- bad inputs: message, status, no page; an existing page untouched ----
echo keep >"$T/keep.html"
# shellcheck disable=SC2086
expect_fail "no ground truth" 2 "ground truth" "$T/none.html" slem-report -o "$T/none.html" "$E/cosine-full.tsv"
# shellcheck disable=SC2086
expect_fail "shape without vectors" 2 "needs --query-vectors" "$T/none.html" slem-report $LABELS --image-shape 8x8 -o "$T/none.html" "$E/cosine-full.tsv"
# shellcheck disable=SC2086
expect_fail "bad shape" 2 "image shape '8x8x2'" "$T/none.html" slem-report $LABELS --image-shape 8x8x2 --db-vectors "$D/database.fvecs" -o "$T/none.html" "$E/cosine-full.tsv"
# shellcheck disable=SC2086
expect_fail "bad range" 2 "pixel range" "$T/none.html" slem-report $LABELS --image-shape 8x8 --pixel-range 3:1 --db-vectors "$D/database.fvecs" -o "$T/none.html" "$E/cosine-full.tsv"
# shellcheck disable=SC2086
expect_fail "two stdin" 2 "only one ranking can be stdin" "$T/none.html" slem-report $LABELS -o "$T/none.html" - -
# shellcheck disable=SC2086
slem-report $LABELS --image-shape 28x28 --db-vectors "$D/database.fvecs" -o "$T/keep.html" "$E/cosine-full.tsv" 2>"$T/err"
st=$?
[ $st = 1 ] && grep -q "database.fvecs: dimension 64" "$T/err" && [ "$(cat "$T/keep.html")" = keep ] &&
  ! ls -a "$T" | grep -q '\.tmp\.' && ok || bad "dimension mismatch: status $st, $(cat "$T/err")"
printf '5\nnope\n' >"$T/badlist"
# shellcheck disable=SC2086
expect_fail "unknown query in the list" 1 "badlist: line 2: query 'nope'" "$T/none.html" slem-report $LABELS --queries "$T/badlist" -o "$T/none.html" "$E/cosine-full.tsv"
printf 'q\t1\n' >"$T/short.tsv"
# shellcheck disable=SC2086
expect_fail "bad ranking" 1 "short.tsv: line 1" "$T/none.html" slem-report $LABELS -o "$T/none.html" "$T/short.tsv"
# shellcheck disable=SC2086
expect_fail "bad ranking on stdin" 1 "<stdin>: line 1" "$T/none.html" sh -c "slem-report $LABELS -o '$T/none.html' <'$T/short.tsv'"
ls "${TMPDIR:-/tmp}"/slem-report.* >/dev/null 2>&1 && bad "stdin: a temporary copy left behind" || ok
# shellcheck disable=SC2086
expect_fail "page over its input" 2 "" "-" slem-report $LABELS -o "$T/run.tsv" "$T/run.tsv"

# ---- the paired randomisation test against scipy (testdata/eval/permtest.txt) ----
# mix A B N CUT: A's lines of the queries below CUT, B's from CUT to N
mix() {
  awk -F'\t' -v n="$3" -v cut="$4" 'FNR == 1 { f++ } $1 !~ /^[0-9]+$/ { next }
    $1 + 0 < n && ((f == 1 && $1 + 0 < cut) || (f == 2 && $1 + 0 >= cut))' "$1" "$2"
}
grep -v '^#' "$E/permtest.txt" >"$T/permtest"
while read -r case n cut _ _ want; do
  mix "$E/cosine-full.tsv" "$E/slem-top100.tsv" "$n" "$cut" >"$T/pa.tsv"
  mix "$E/slem-top100.tsv" "$E/cosine-full.tsv" "$n" "$cut" >"$T/pb.tsv"
  head -n "$n" "$D/queries.labels" >"$T/pq.labels"
  slem-report --query-labels "$T/pq.labels" --db-labels "$D/database.labels" -o "$T/p.html" \
    "$T/pa.tsv" "$T/pb.tsv" || bad "permtest $case: slem-report failed"
  got=$(sed -n 's/.*class="pvalue" title="\([^"]*\)".*/\1/p' "$T/p.html")
  if [ "$case" = random ]; then tol=0.02; else tol=0.000001; fi
  awk -v g="$got" -v w="$want" -v t="$tol" -v c="$case" 'BEGIN {
    d = g - w; if (d < 0) d = -d; if (c != "random") d /= w
    exit !(g != "" && d <= t) }' && ok || bad "permtest $case: p $got, scipy $want"
done <"$T/permtest"
# the same page twice: the test's seed is fixed
slem-report $LABELS -o "$T/p1.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv" &&
  slem-report $LABELS -o "$T/p2.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv" &&
  cmp -s "$T/p1.html" "$T/p2.html" && ok || bad "two runs of the same page differ"
# scipy's two-sided floor, 2 / (10000 + 1), not 1 / (10000 + 1)
grep -q 'class="pvalue" title="0.00019998">0.0002</td>' "$T/p1.html" && ok || bad "p-value of SLEM against cosine"
# a million flips: the floor 2 / (10^6 + 1) shown as 2e-06, not 0.0000
check "a million flips" slem-report $LABELS --permutations 1000000 -o "$T/pm.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv"
grep -q 'class="pvalue" title="2e-06">2e-06</td>' "$T/pm.html" && ok ||
  bad "p of a million flips: $(grep -o 'class="pvalue"[^/]*' "$T/pm.html")"
check "no test" slem-report $LABELS --permutations 0 -o "$T/p0.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv"
grep -q 'class="pvalue"' "$T/p0.html" && bad "--permutations 0 still shows p" || ok

# ---- exploring: every query in the table's data, labels of wrong results, misses ----
n=$(sed -n '/id="pq-data"/,/<\/script>/p' "$T/p1.html" | grep -c '^\[')
[ "$n" = 100 ] && ok || bad "per-query data: $n rows, expected 100"
grep -q '<figure class="hit wrong"[^>]*>.*<span class="lab">[0-9]</span>' "$T/p1.html" && ok || bad "no label under a wrong result"
grep -q '<div class="missed"><b>missed</b> [0-9]* of [0-9]* relevant: <span class="m">' "$T/p1.html" && ok ||
  bad "no relevant item listed as missed"
n=$(sed -n '/class="plot scatter"/,/<\/svg>/p' "$T/p1.html" | grep -o '<circle ' | wc -l)
[ "$n" = 100 ] && ok || bad "scatter: $n points, expected 100"

# ---- a difference below the table's 4 decimals: one relevant item (id 0) of 1001 at rank
# 1000 in run a, at 1001 in run b, AP 1/1000 and 1/1001; query 1 the same in both ----
tiny_runs() {
  awk 'BEGIN { for (i = 0; i <= 1000; i++) print (i ? 0 : 1) }' >"$T/tiny.db.labels"
  printf '1\n1\n' >"$T/tiny.q.labels"
  awk 'BEGIN { for (q = 0; q < 2; q++) { for (r = 1; r < 1000; r++) print q "\t" r "\t" r "\t" 1 - r / 2000
    print q "\t1000\t0\t0.4"; print q "\t1001\t1000\t0.3" } }' >"$T/tiny.a.tsv"
  awk 'BEGIN { for (q = 0; q < 2; q++) { for (r = 1; r < 1000; r++) print q "\t" r "\t" r "\t" 1 - r / 2000
    print q "\t1000\t" (q ? 0 : 1000) "\t0.4"; print q "\t1001\t" (q ? 1000 : 0) "\t0.3" } }' >"$T/tiny.b.tsv"
}
tiny_runs
check "a tiny difference" slem-report --query-labels "$T/tiny.q.labels" --db-labels "$T/tiny.db.labels" \
  -o "$T/tiny.html" "$T/tiny.a.tsv" "$T/tiny.b.tsv"
sed -n '/id="pq-data"/,/<\/script>/p' "$T/tiny.html" | grep '^\[' | sed 's/}<.*//' | tr -d '[]"' >"$T/tiny.rows"
# query 0: the difference is there to six digits, not 0.0000; query 1: exactly 0
awk -F, '$1 == 0 { d = $5 + 1 / 1000 / 1001; if (d < 0) d = -d; ok0 = $5 != 0 && d <= 1e-11 }
  $1 == 1 { ok1 = $5 == "0" } END { exit !(ok0 && ok1) }' "$T/tiny.rows" && ok ||
  bad "a tiny difference: table data $(tr '\n' ' ' <"$T/tiny.rows")"

# ---- low APs fill the histogram and the scatter: the one relevant item (id 0) at rank
# 15, 30, 60 in run a and 20, 40, 80 in run b, APs 0.067 to 0.0125, all below 0.1 ----
printf '1\n1\n1\n' >"$T/low.q.labels"
for run in a b; do
  awk -v b=$([ $run = b ] && echo 1 || echo 0) 'BEGIN { for (q = 0; q < 3; q++) {
    at = (b ? 20 : 15) * 2 ^ q; id = 1
    for (r = 1; r <= 100; r++) print q "\t" r "\t" (r == at ? 0 : id++) "\t" 1 - r / 200 } }' >"$T/low.$run.tsv"
done
check "low APs" slem-report --query-labels "$T/low.q.labels" --db-labels "$T/tiny.db.labels" \
  -o "$T/low.html" "$T/low.a.tsv" "$T/low.b.tsv"
# six bars of one query each (not two bars of three in the first bin), the points spread
# over 150 of the scatter's 374 pixels (not in its corner: 25 at most), the captions saying so
n=$(sed -n '/class="plot hist"/,/<\/svg>/p' "$T/low.html" | grep -c 'data-count="1"')
[ "$n" = 6 ] && ok || bad "low APs: $n bars of one query, expected 6"
sed -n '/class="plot scatter"/,/<\/svg>/p' "$T/low.html" | grep -o '<circle cx="[0-9.]*"' |
  sed 's/.*cx="//; s/"//' | awk 'NR == 1 { lo = hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
  END { exit !(NR == 3 && hi - lo > 150) }' && ok || bad "low APs: the scatter's points are bunched"
[ "$(grep -c 'from 0 to 0.1, the span of the APs' "$T/low.html")" = 2 ] && ok || bad "low APs: captions"

# ---- --protocol: revisitop's measures, as slem-eval --protocol gives them ----
RV=$TOP/testdata/revisitop
GT="--easy $RV/easy.txt --hard $RV/hard.txt --junk $RV/junk.txt"
for p in easy medium hard; do
  # shellcheck disable=SC2086
  check "--protocol $p" slem-report --protocol $p $GT -o "$T/rv.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv"
  row=1
  for run in cosine-full slem-top100; do
    # shellcheck disable=SC2086
    slem-eval --protocol $p --per-query $GT "$E/$run.tsv" >"$T/rv.eval"
    want=$(awk -F'\t' '$1 == "mAP" || $1 ~ /^mP@/ { printf "%s ", $2 } $1 == "queries" { printf "%s", $2 }' "$T/rv.eval")
    got=$(sed -n '/<table class="summary revisitop">/,/<\/table>/p' "$T/rv.html" | grep '^<tr><td>' | sed -n "${row}p" |
      sed 's/<td title="\([^"]*\)">[^<]*<\/td>/ \1 /g; s/<[^>]*>//g' | awk '{ for (i = 2; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : "" }')
    [ "$got" = "$want" ] && ok || bad "--protocol $p, $run: '$got', slem-eval '$want'"
    # the table's per-query AP (4 digits) is revisitop's (6 digits), for every query it counts
    awk -F'\t' '!/^#/ && $6 == "ok" { print $1, $2 }' "$T/rv.eval" | sort >"$T/rv.want"
    sed -n '/id="pq-data"/,/<\/script>/p' "$T/rv.html" | grep '^\[' | tr -d '[]"' |
      awk -F, -v c=$((row + 2)) '$c != "null" { print $1, $c }' | sort >"$T/rv.got"
    join "$T/rv.want" "$T/rv.got" | awk -v n="$(wc -l <"$T/rv.want")" -v m="$(wc -l <"$T/rv.got")" '
      { d = $2 - $3; if (d < 0) d = -d; if (d > 0.0000501) bad++; k++ }
      END { exit !(bad == 0 && k == n && k == m) }' && ok || bad "--protocol $p, $run: per-query AP differs from slem-eval's"
    row=$((row + 1))
  done
done
# graded qrels give the same page as the three files
{ awk '{ print $1, 0, $2, 2 }' "$RV/easy.txt"; awk '{ print $1, 0, $2, 1 }' "$RV/hard.txt"
  awk '{ print $1, 0, $2, -1 }' "$RV/junk.txt"; } >"$T/graded.qrels"
check "--protocol with graded qrels" slem-report --protocol hard --qrels "$T/graded.qrels" -o "$T/rvq.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv"
# shellcheck disable=SC2086
slem-report --protocol hard $GT -o "$T/rvf.html" "$E/cosine-full.tsv" "$E/slem-top100.tsv"
sed 's/revisitop hard, [^)]*)/X)/' "$T/rvq.html" >"$T/rvq.x"
sed 's/revisitop hard, [^)]*)/X)/' "$T/rvf.html" >"$T/rvf.x"
cmp -s "$T/rvq.x" "$T/rvf.x" && ok || bad "--protocol: graded qrels and files give different pages"
# shellcheck disable=SC2086
expect_fail "--protocol without positives" 2 "needs the positives" "$T/none.html" slem-report --protocol medium -o "$T/none.html" "$E/cosine-full.tsv"
# shellcheck disable=SC2086
expect_fail "--protocol with labels" 2 "takes no labels" "$T/none.html" slem-report --protocol medium $GT $LABELS -o "$T/none.html" "$E/cosine-full.tsv"
expect_fail "--easy without --protocol" 2 "go with --protocol" "$T/none.html" slem-report $LABELS --easy "$RV/easy.txt" -o "$T/none.html" "$E/cosine-full.tsv"
expect_fail "--protocol with trec AP" 2 "revisitop's" "$T/none.html" slem-report --protocol easy $GT --ap trec -o "$T/none.html" "$E/cosine-full.tsv"

# the database's labels and ids are read twice (the ground truth, the page's labels): a
# pipe was empty the second time ("/dev/fd/63: no ids (empty file)"), now refused by name
slem-match -q -k 10 -d "$D/database.fvecs" -o "$T/pipe.tsv" "$D/queries.fvecs"
if command -v bash >/dev/null 2>&1; then
  expect_fail "--db-labels from a pipe" 1 "/dev/fd/[0-9]*: not a regular file" "$T/pipe.html" \
    bash -c 'slem-report -q --query-labels "$1" --db-labels <(cat "$2") -o "$3" "$4"' sh "$D/queries.labels" "$D/database.labels" "$T/pipe.html" "$T/pipe.tsv"
  expect_fail "--db-ids from a pipe" 1 "/dev/fd/[0-9]*: not a regular file" "$T/pipe.html" \
    bash -c 'slem-report -q --query-labels "$1" --db-labels "$2" --db-ids <(seq 0 999) -o "$3" "$4"' sh "$D/queries.labels" "$D/database.labels" "$T/pipe.html" "$T/pipe.tsv"
fi
expect_fail "--db-labels from stdin" 1 "labels are read twice: not from stdin" "$T/pipe.html" \
  sh -c 'slem-report -q --query-labels "$1" --db-labels - -o "$2" "$3" <"$4"' sh "$D/queries.labels" "$T/pipe.html" "$T/pipe.tsv" "$D/database.labels"
check "--query-labels from a pipe" sh -c 'cat "$1" | slem-report -q --query-labels - --db-labels "$2" -o "$3" "$4"' sh "$D/queries.labels" "$D/database.labels" "$T/pipe.html" "$T/pipe.tsv"

# a TMPDIR that does not exist is named as TMPDIR (the message named a random file in it)
expect_fail "TMPDIR missing" 1 "/nonexistent-slem: cannot make a temporary copy of <stdin> there (TMPDIR)" "$T/tmpd.html" \
  sh -c 'TMPDIR=/nonexistent-slem slem-report -q --query-labels "$1" --db-labels "$2" -o "$3" - <"$4"' sh "$D/queries.labels" "$D/database.labels" "$T/tmpd.html" "$T/pipe.tsv"

check "--help" slem-report --help
grep -q -- '--image-shape' "$T/out" && ok || bad "--help lacks --image-shape"
check "--version" slem-report --version
finish cli-report
