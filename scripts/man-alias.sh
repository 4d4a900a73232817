#!/bin/sh
# man-alias.sh PAGE TITLE: PAGE under another title, for a tool documented by another's
# page (slem-sbatch by slem-parallel's). `man -l` renders the result on its own, which a
# ".so" link does not allow. Written to stdout; `make man/slem-sbatch.1` uses it and
# tests/man-examples.sh checks that the committed page is what it makes now.
set -eu
page=$1 title=$2
printf '.\\" Generated from %s by scripts/man-alias.sh (make %s); edit that page.\n' \
  "$(basename "$page")" "man/$(echo "$title" | tr 'A-Z' 'a-z').1"
sed "1s/^\.TH [^ ]* /.TH $title /" "$page"
