# Many topics, for the goldens of slem-eval's default mode beyond its batch sizes (a progress
# report every 256 queries, tables grown from 256): 3000 topics, judged by 12 lines each
# (grades -1 to 3, the first one relevant: no topic without a relevant document), every 11th
# topic missing from the run, 25 results a topic with scores 100 - rank (no ties, so that
# trec_eval's order is the rank order), about 16 of them unjudged, and a topic the qrels lack.
# Made again by each user rather than kept: scripts/gen-trec-eval.sh and tests/cli-trec.sh run
#   awk -v what=qrels -f many.awk >many.qrels;  awk -v what=run -f many.awk >many-ranked.run
BEGIN {
  if (what != "qrels" && what != "run") { print "many.awk: -v what=qrels or what=run" >"/dev/stderr"; exit 2 }
  for (t = 1; t <= 3000; t++) {
    if (what == "qrels")
      for (j = 1; j <= 12; j++) {
        h = (t * 7919 + j * 104729) % 1000
        print "t" t, 0, "d" (t * 13 + j * 17) % 40, (j == 1 ? 1 + h % 3 : h % 5 - 1)
      }
    else if (t % 11)
      for (i = 1; i <= 25; i++) print "t" t, "Q0", "d" (i * 7 + t) % 40, i, 100 - i, "many"
  }
  if (what == "run") print "x1 Q0 d1 1 1 many"
}
