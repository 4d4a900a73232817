#!/bin/sh
# lib/ is one folder per layer, lowest first, in the Makefile's LIB_DIRS (docs/layout.md).
# A file may include headers of its own folder or of a lower one, never of a higher one,
# and no header may reach itself through its includes. Fails naming each offending include.
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
LAYERS=$(sed -n 's/^LIB_DIRS *= *//p' Makefile)
[ -n "$LAYERS" ] || { echo "FAIL: layers: no LIB_DIRS in the Makefile"; exit 1; }
for d in $LAYERS; do [ -d "lib/$d" ] || { echo "FAIL: layers: lib/$d missing"; exit 1; }; done
awk -v layers="$LAYERS" '
BEGIN { n = split(layers, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i }
FNR == 1 { split(FILENAME, p, "/"); dir = p[2]; file = p[3]; where[file] = dir }
/^#include "/ { h = $2; gsub(/"/, "", h); sub(/.*\//, "", h); m++; from[m] = file; to[m] = h; line[m] = FILENAME ":" FNR }
END {
  bad = 0
  for (i = 1; i <= m; i++) {
    f = from[i]; h = to[i]
    if (!(h in where)) { print "FAIL: layers: " line[i] ": " h " is in no folder of lib/"; bad++; continue }
    if (rank[where[h]] > rank[where[f]]) {
      print "FAIL: layers: " line[i] ": " where[f] "/" f " includes " where[h] "/" h ", a higher layer"; bad++ }
    if (f ~ /\.h$/) edge[f, ++deg[f]] = h
  }
  # a header that reaches itself through the includes of headers
  for (s in where) if (s ~ /\.h$/) {
    delete seen; top = 0; for (k = 1; k <= deg[s]; k++) st[++top] = edge[s, k]
    while (top > 0) { x = st[top--]; if (x == s) { print "FAIL: layers: circular include through " where[s] "/" s; bad++; break }
      if (x in seen) continue; seen[x] = 1; for (k = 1; k <= deg[x]; k++) st[++top] = edge[x, k] }
  }
  if (bad) exit 1
  print "layers: " m " includes of lib/, none upward or circular"
}' $(for d in $LAYERS; do ls lib/$d/*.[ch]; done)
