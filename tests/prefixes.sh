#!/bin/sh
# Names follow files (docs/layout.md, "Prefixes"): every global that an object of libslem.a
# defines is slem_P or slem_P_..., where P is the object's file name, its family's prefix
# (one file per variant behind an ops table), or an object type the file defines, as listed
# in the table below. A global outside its object's list fails, named with its object.
TOP=$(cd "$(dirname "$0")/.." && pwd)
A=$TOP/lib/libslem.a
if ! command -v nm >/dev/null 2>&1 || [ ! -f "$A" ]; then echo "prefixes: skipped (no nm or no lib/libslem.a)"; exit 0; fi
# object (a shell pattern): prefixes besides its own name
TABLE='
enc_*: enc variant
kind_*: kind cache fit variant
var_*: variant
api_search: search
api_eval: evaluate
krec: fit variant
nubeta: fit variant
recursive: fit variant
whiten: fit variant
cachekinds: cache
encopts: encoder
fmt_*: vfmt
fmt_mem: vecreader vecarrays
api_util: api version
api_cache: load save cache
api_fit: fit
api_encode: encode
kern_*: kern
rank_*: rank
scorer_*: scorer
kernel_stats: kernel_stats fit
io: in out
measures: judged measure
phases: now
rankfmt: rankline
rankings: rankformat
revisitop: revisit
slem_linear: encode encoder
strmap: arena keyset
vecfmt: float half vfmt
vecreader: vecreaders
vecs: block dtype format vfmt
'
nm -A -g --defined-only "$A" | awk -v table="$TABLE" '
BEGIN { n = split(table, T, "\n"); for (i = 1; i <= n; i++) if (T[i] != "") { split(T[i], kv, ": "); key[++k] = kv[1]; val[k] = kv[2] } }
function glob(p) { gsub(/\*/, ".*", p); return "^" p "$" }
NF >= 3 {
  f = $1; sub(/:[^:]*$/, "", f); sub(/.*:/, "", f); sub(/\.o$/, "", f); s = $NF
  allowed = f
  for (i = 1; i <= k; i++) if (f ~ glob(key[i])) allowed = allowed " " val[i]
  m = split(allowed, P, " "); good = 0
  for (i = 1; i <= m; i++) if (s == "slem_" P[i] || index(s, "slem_" P[i] "_") == 1) good = 1
  total++
  if (!good) { print "FAIL: prefixes: " f ".o defines " s ", not slem_{" allowed "}_"; bad++ }
}
END { if (bad) exit 1; print "prefixes: " total " globals of libslem.a, each with its object'"'"'s prefix" }'
