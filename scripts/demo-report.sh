#!/bin/sh
# The report of make demo: cosine against SLEM on the digits, with the digits' own 8x8
# pictures (values 0..16, drawn dark on white). Used by scripts/demo.sh and by the
# browser test (tests/browser.sh), so that the test looks at the page the demo makes.
# Usage: scripts/demo-report.sh OUT.html COSINE.tsv SLEM.tsv [SLEM-RUN-NAME]
# (rankings by slem-match with --query-ids and --db-ids of testdata/digits)
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OUT.html COSINE.tsv SLEM.tsv [SLEM-RUN-NAME]" >&2; exit 2; }
D=$(cd "$(dirname "$0")/.." && pwd)/testdata/digits
slem-report --title "SLEM against cosine on handwritten digits" \
  --query-labels "$D/queries.labels" --db-labels "$D/database.labels" \
  --query-ids "$D/queries.ids" --db-ids "$D/database.ids" \
  --image-shape 8x8 --pixel-range 0:16 --invert \
  --query-vectors "$D/queries.fvecs" --db-vectors "$D/database.fvecs" \
  -o "$1" "cosine on pixels=$2" "${4:-SLEM}=$3"
