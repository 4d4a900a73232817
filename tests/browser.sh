#!/bin/sh
# The demo's report in a real browser: headless Chromium loads demo-report.html (made by
# scripts/demo-report.sh from a quick run of the pipeline), must report no console error,
# and its screenshot must show a page (many colours, the relevance frames' green and red,
# the runs' blue). Skipped, not failed, when Chromium is not installed (.ci/run installs
# it; apt-get install chromium). SLEM_KEEP_SCREENSHOT=FILE keeps the screenshot. Run from
# the top of the tree.
. "$(dirname "$0")/testlib.sh"
D=$TOP/testdata/digits
PNGSTAT=$TOP/build/tests/pngstat

# SLEM_CHROMIUM names the browser to use (a path or a command), else the first found
CHROME=""
for c in ${SLEM_CHROMIUM:-chromium chromium-browser google-chrome}; do
  if command -v "$c" >/dev/null 2>&1; then CHROME=$c; break; fi
done
if [ -z "$CHROME" ]; then
  echo "browser: SKIPPED: Chromium is not installed (apt-get install chromium; .ci/run installs it)"
  exit 0
fi

# chrome URL LOGFILE ARGS...: one headless run with a fresh profile, console to LOGFILE
chrome() {
  url=$1 log=$2; shift 2
  rm -rf "$T/profile"
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars \
    --user-data-dir="$T/profile" --enable-logging=stderr --v=0 "$@" "$url" 2>"$log"
}
# console_errors LOGFILE: any console message (the report has no script, so any is an
# error: an exception, a refused or failed load), apart from the probe's own line
console_errors() {
  grep -E 'CONSOLE|Uncaught|Failed to load resource|net::ERR_|Refused to' "$1" | grep -v 'SLEM-PROBE'
}

# the demo's rankings, with a fixed lambda (make demo tunes it)
slem-negstats -q --lambda-rel 1000 -o "$T/neg.slem" "$D/negatives.fvecs"
slem-encode -q -c "$T/neg.slem" -o "$T/db.fvecs" "$D/database.fvecs"
slem-encode -q -c "$T/neg.slem" "$D/queries.fvecs" |
  slem-match -k 100 -d "$T/db.fvecs" --query-ids "$D/queries.ids" --db-ids "$D/database.ids" -o "$T/slem.tsv"
slem-match --normalize -k 100 -d "$D/database.fvecs" --query-ids "$D/queries.ids" \
  --db-ids "$D/database.ids" -o "$T/cosine.tsv" "$D/queries.fvecs"
check "demo report" sh "$TOP/scripts/demo-report.sh" "$T/demo-report.html" "$T/cosine.tsv" "$T/slem.tsv"

# the console check can fail: a page with a script error must be caught
printf '<!DOCTYPE html><title>x</title><script>undefinedFunction();</script>\n' >"$T/bad.html"
chrome "file://$T/bad.html" "$T/bad.log" --dump-dom >/dev/null
if console_errors "$T/bad.log" >/dev/null; then ok; else
  bad "a script error did not reach the console log: $(head -c 400 "$T/bad.log")"
fi

# the DOM Chromium built: every figure, picture and curve of the page
if chrome "file://$T/demo-report.html" "$T/dom.log" --dump-dom >"$T/dom.html"; then ok; else
  bad "chromium --dump-dom failed: $(tail -c 400 "$T/dom.log")"
fi
n=$(grep -o '<figure class="hit ' "$T/dom.html" | wc -l)
[ "$n" = 320 ] && ok || bad "DOM: $n result figures, expected 320"
n=$(grep -o '<img src="data:image/png;base64,' "$T/dom.html" | wc -l)
[ "$n" -ge 320 ] && ok || bad "DOM: $n embedded pictures, expected at least 320"
n=$(grep -o '<path class="pr"' "$T/dom.html" | wc -l)
[ "$n" = 2 ] && ok || bad "DOM: $n curves, expected 2"
if console_errors "$T/dom.log"; then bad "console errors loading the report (above)"; else ok; fi

# every picture decoded: a probe page (the test's, not the report's) frames the report and
# logs how many of its images have a size once loaded
cat >"$T/probe.html" <<'PROBE'
<!DOCTYPE html><title>probe</title>
<iframe id="f" src="demo-report.html" style="width:1400px;height:2000px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument, im = d.images, broken = 0;
  for (var i = 0; i < im.length; i++) if (!im[i].complete || im[i].naturalWidth === 0) broken++;
  console.log("SLEM-PROBE images " + im.length + " broken " + broken + " hits " +
              d.querySelectorAll("figure.hit").length + " svg " + d.querySelectorAll("svg").length);
});
</script>
PROBE
chrome "file://$T/probe.html" "$T/probe.log" --allow-file-access-from-files --dump-dom >/dev/null
probe=$(sed -n 's/.*"SLEM-PROBE \([^"]*\)".*/\1/p' "$T/probe.log")
set -- $probe
if [ "${1:-}" = images ] && [ "$2" -ge 340 ] && [ "$4" = 0 ] && [ "$6" = 320 ] && [ "$8" = 3 ]; then ok; else
  bad "probe: '$probe' (expected at least 340 images, 0 broken, 320 hits, 3 svg)"
fi

# the per-query table, used: a probe page clicks the header of SLEM's AP (descending, then
# ascending), types a filter and turns the page, logging what the table then shows
cat >"$T/table.html" <<'PROBE'
<!DOCTYPE html><title>probe</title>
<iframe id="f" src="demo-report.html" style="width:1400px;height:2000px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var w = this.contentWindow, d = this.contentDocument, out = [];
  var rows = function () { return d.querySelectorAll("#per-query tbody tr"); };
  var col = function (c) {
    return Array.prototype.map.call(rows(), function (tr) { return tr.cells[c].textContent; });
  };
  var sorted = function (v, sgn) {
    for (var i = 1; i < v.length; i++) if (sgn * (parseFloat(v[i]) - parseFloat(v[i - 1])) < 0) return 0;
    return 1;
  };
  var data = JSON.parse(d.getElementById("pq-data").textContent).rows, max = 0, min = 1;
  data.forEach(function (r) { max = Math.max(max, r[3]); min = Math.min(min, r[3]); });
  var th = d.querySelectorAll("#per-query th")[3], info = d.getElementById("pq-info");
  out.push("rows", rows().length);
  th.click();
  out.push("desc", th.getAttribute("aria-sort"), sorted(col(3), -1),
           parseFloat(col(3)[0]) === parseFloat(max.toFixed(4)) ? 1 : 0);
  th.click();
  out.push("asc", th.getAttribute("aria-sort"), sorted(col(3), 1),
           parseFloat(col(3)[0]) === parseFloat(min.toFixed(4)) ? 1 : 0);
  var f = d.getElementById("pq-filter");
  f.value = "14";
  f.dispatchEvent(new w.Event("input", {bubbles: true}));
  var ids = col(0), all = 1;
  ids.forEach(function (s) { if (s.indexOf("14") < 0) all = 0; });
  out.push("filter", ids.length, all, sorted(col(3), 1), info.textContent.replace(/ /g, "_"));
  f.value = "";
  f.dispatchEvent(new w.Event("input", {bubbles: true}));
  d.getElementById("pq-next").click();
  out.push("next", rows().length, info.textContent.replace(/ /g, "_"));
  console.log("SLEM-PROBE " + out.join(" "));
});
</script>
PROBE
chrome "file://$T/table.html" "$T/table.log" --allow-file-access-from-files --dump-dom >/dev/null
probe=$(sed -n 's/.*"SLEM-PROBE \([^"]*\)".*/\1/p' "$T/table.log")
nf=$(grep -c 14 "$D/queries.ids")
[ "$nf" -gt 20 ] && nshow=20 || nshow=$nf
want="rows 20 desc descending 1 1 asc ascending 1 1 filter $nshow 1 1 rows_1\342\200\223${nshow}_of_${nf}_(of_100) next 20 rows_21\342\200\22340_of_100"
[ "$probe" = "$(printf "$want")" ] && ok || bad "table probe: '$probe', expected '$(printf "$want")'"
if console_errors "$T/table.log"; then bad "console errors using the table (above)"; else ok; fi

# a difference below the table's 4 decimals is shown, not 0.0000: one relevant item of 1001
# at rank 1000 in run a and 1001 in run b (AP 1/1000 and 1/1001); query 1 the same in both
awk 'BEGIN { for (i = 0; i <= 1000; i++) print (i ? 0 : 1) }' >"$T/tiny.db.labels"
printf '1\n1\n' >"$T/tiny.q.labels"
for run in a b; do
  awk -v b=$([ $run = b ] && echo 1 || echo 0) 'BEGIN { for (q = 0; q < 2; q++) {
    for (r = 1; r < 1000; r++) print q "\t" r "\t" r "\t" 1 - r / 2000
    s = b && q == 0; print q "\t1000\t" (s ? 1000 : 0) "\t0.4"; print q "\t1001\t" (s ? 0 : 1000) "\t0.3" } }' >"$T/tiny.$run.tsv"
done
slem-report -q --query-labels "$T/tiny.q.labels" --db-labels "$T/tiny.db.labels" -o "$T/tiny.html" \
  "$T/tiny.a.tsv" "$T/tiny.b.tsv" || bad "tiny difference: slem-report failed"
chrome "file://$T/tiny.html" "$T/tiny.log" --dump-dom >"$T/tiny.dom"
cells=$(sed -n '/<table class="pq">/,/<\/table>/p' "$T/tiny.dom" | grep -o '<td[^>]*>[^<]*</td></tr>' | tr '\n' ' ')
[ "$cells" = '<td class="down">-9.99e-7</td></tr> <td>0.0000</td></tr> ' ] && ok ||
  bad "tiny difference: the table's last cells are '$cells'"

# the screenshot: not blank, with the frames and the runs' colours on it
if chrome "file://$T/demo-report.html" "$T/shot.log" --screenshot="$T/shot.png" --window-size=1400,2400 &&
  [ -s "$T/shot.png" ]; then ok; else
  bad "chromium --screenshot failed: $(tail -c 400 "$T/shot.log")"
fi
if console_errors "$T/shot.log"; then bad "console errors in the screenshot run (above)"; else ok; fi
if "$PNGSTAT" "$T/shot.png" '#16a34a' '#dc2626' '#2563eb' '#ea7317' >"$T/stat"; then
  read -r w h colours <"$T/stat"
  [ "$w" = 1400 ] && [ "$h" = 2400 ] && ok || bad "screenshot of $w x $h pixels"
  [ "$colours" -ge 200 ] && ok || bad "screenshot nearly blank: $colours colours"
  for c in '#16a34a' '#dc2626' '#2563eb' '#ea7317'; do
    px=$(awk -v c="$c" '$1 == c { print $2 }' "$T/stat")
    [ "${px:-0}" -ge 300 ] && ok || bad "screenshot: $px pixels of $c (frames or curves missing)"
  done
else
  bad "pngstat could not read the screenshot"
fi
[ -n "${SLEM_KEEP_SCREENSHOT:-}" ] && cp "$T/shot.png" "$SLEM_KEEP_SCREENSHOT"
finish browser
