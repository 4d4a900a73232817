#!/bin/sh
# lib/ is one folder per layer, lowest first, in the Makefile's LIB_DIRS (docs/layout.md).
# A file may include headers of its own folder or of a lower one, never of a higher one,
# and no header may reach itself through its includes. Fails naming each offending include.
# The same order holds at link level (nm of lib/libslem.a, when built): every symbol that an
# object of lib/X/ leaves undefined and another object of libslem.a defines must be defined
# in lib/X/ or a lower folder; fails naming the object, the symbol and both layers (an
# include check alone misses a symbol declared by hand, as an X-macro table does).
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
st=$?

# the same order between the objects of libslem.a (each member is the object of the one
# file of lib/ with its name)
A=lib/libslem.a
if ! command -v nm >/dev/null 2>&1 || [ ! -f "$A" ]; then
  echo "layers: symbols skipped (no nm or no $A: run make)"; exit $st
fi
nm -A -g "$A" | awk -v layers="$LAYERS" -v srcs="$(ls lib/*/*.c)" '
BEGIN { n = split(layers, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i
  m = split(srcs, S, "\n"); for (i = 1; i <= m; i++) { split(S[i], p, "/"); o = p[3]; sub(/\.c$/, ".o", o); dir[o] = p[2] } }
{ f = $1; sub(/:[^:]*$/, "", f); sub(/.*:/, "", f); t = $(NF - 1); s = $NF
  objs[f] = 1
  if (t == "U" || t == "w") { u++; uo[u] = f; us[u] = s } else def[s] = def[s] " " f }
END {
  bad = 0
  for (f in objs) if (!(f in dir)) { print "FAIL: layers: " f " of libslem.a is the object of no lib/*/*.c (an old archive? run make)"; bad++ }
  for (i = 1; i <= u; i++) {
    f = uo[i]; s = us[i]
    if (!(s in def) || !(f in dir)) continue
    k = split(def[s], D, " "); low = 0; hi = ""
    for (j = 1; j <= k; j++) if (rank[dir[D[j]]] <= rank[dir[f]]) low = 1; else hi = D[j]
    if (!low) { print "FAIL: layers: " dir[f] "/" f " uses " s ", defined in " dir[hi] "/" hi ", a higher layer"; bad++ }
    checked++
  }
  if (bad) exit 1
  print "layers: " checked " references between the objects of libslem.a, none upward"
}' || st=1
exit $st
