#!/bin/sh
# CLI tests of the formats of issue 27: HDF5 datasets (FILE.h5:DATASET) and an
# ann-benchmarks file used as it comes (train, test, neighbors; recall@10 against numpy's,
# testdata/hdf5 from scripts/gen-hdf5.py), int64 npy, the npz/.mat/HDF5 refusals, the
# fvecs-or-ivecs pipe, and slem-match's --query-format/--db-format. Run from the top of
# the tree.
. "$(dirname "$0")/testlib.sh"
H=$TOP/testdata/hdf5
A=$H/ann.hdf5

# ---- the ann-benchmarks pipeline on the HDF5 file as it comes ----
check "negstats train" slem-negstats -q -o "$T/c.slem" "$A:train"
check "encode train" slem-encode -q -c "$T/c.slem" -o "$T/db.fvecs" "$A:train"
check "encode test" slem-encode -q -c "$T/c.slem" -o "$T/q.fvecs" "$A:test"
check "match" slem-match -k 10 -d "$T/db.fvecs" -o "$T/r.tsv" "$T/q.fvecs"
check "eval neighbors" slem-eval --neighbors "$A:neighbors" -k 10 -o "$T/e.txt" "$T/r.tsv"
grep -q '^R@10	' "$T/e.txt" && [ "$(grep -c . "$T/r.tsv")" = 400 ] && ok || bad "pipeline: $(cat "$T/e.txt")"
# the float64 copy, chunked and gzip-compressed in 37-row chunks, reads the same values
check "negstats train64" slem-negstats -q -o "$T/c64.slem" "$A:train64"
check "encode train64" slem-encode -q -c "$T/c.slem" -o "$T/db64.fvecs" "$A:train64"
cmp -s "$T/db.fvecs" "$T/db64.fvecs" && ok || bad "train64 encodes otherwise than train"
check "encode train64 with its own cache" slem-encode -q -c "$T/c64.slem" -o "$T/db64b.fvecs" "$A:train"
cmp -s "$T/db.fvecs" "$T/db64b.fvecs" && ok || bad "the cache of train64 differs from train's"
# raw vectors matched from the HDF5 file, both sides (cosine): the true neighbours
check "match -n hdf5" slem-match -n -k 10 -d "$A:train" -o "$T/cos.tsv" "$A:test"
slem-eval --neighbors "$A:neighbors" -k 10 "$T/cos.tsv" | grep -qx 'R@10	1.000000' && ok || bad "cosine recall@10 is not 1"

# ---- the file's attribute 'distance' is followed (issue 43), never ranked past ----
# angular: ranked by cosine without -n, and said; the raw inner product's recall@10 (numpy's,
# recall-dot.txt) is below 1, so a ranking by it fails here
check "match angular without -n" slem-match -k 10 -d "$A:train" -o "$T/ang.tsv" "$A:test"
grep -q "ann.hdf5: distance 'angular' (the file's attribute.*ranked by cosine, as --normalize does" "$T/err" && ok ||
  bad "angular followed in silence: $(cat "$T/err")"
cmp -s "$T/ang.tsv" "$T/cos.tsv" && ok || bad "angular without -n ranks otherwise than -n"
slem-eval --neighbors "$A:neighbors" -k 10 "$T/ang.tsv" | grep -qx 'R@10	1.000000' && ok || bad "angular recall@10 is not 1"
# the same vectors as npy carry no distance: ranked by inner product, numpy's recall below 1
check "match npy copies" slem-match -q -k 10 -d "$H/train.npy" -o "$T/dot.tsv" "$H/test.npy"
want=$(awk '{print $3}' "$H/recall-dot.txt")
got=$(slem-eval --neighbors "$A:neighbors" -k 10 "$T/dot.tsv" | awk '$1 == "R@10" {print $2}')
[ "$got" = "$want" ] && [ "$want" != 1.000000 ] && ok || bad "inner product recall@10: $got, numpy $want"
check "match angular -q" slem-match -q -k 10 -d "$A:train" -o "$T/angq.tsv" "$A:test"
[ ! -s "$T/err" ] && cmp -s "$T/angq.tsv" "$T/cos.tsv" && ok || bad "-q: $(cat "$T/err")"
# the database alone from the file, the queries from fvecs: cosine too (shard lines say so)
slem-match -q -n -k 10 -d "$A:train" -o "$T/cosq.tsv" "$T/q.fvecs" && ok || bad "match -n fvecs queries"
check "angular database, fvecs queries" slem-match -q -k 10 -d "$A:train" -F jsonl --shard 0/1 -o "$T/angdb.jsonl" "$T/q.fvecs"
head -n 1 "$T/angdb.jsonl" | grep -q '"scoring":"cosine"' && ok || bad "the shard line of an angular database: $(head -n 1 "$T/angdb.jsonl")"
# euclidean (a fixed-length string there) is no inner product: refused, naming it
expect_fail "euclidean refused" 1 "euclid.hdf5: distance 'euclidean' (the file's attribute" "$T/euc.tsv" \
  slem-match -k 10 -d "$H/euclid.hdf5:train" -o "$T/euc.tsv" "$H/euclid.hdf5:test"
expect_fail "euclidean refused with -n" 1 "distance 'euclidean'" "$T/euc.tsv" \
  slem-match -n -k 10 -d "$H/euclid.hdf5:train" -o "$T/euc.tsv" "$T/q.fvecs"
expect_fail "euclidean queries refused" 1 "euclid.hdf5: distance 'euclidean'" "$T/euc.tsv" \
  slem-match -k 10 -d "$T/db.fvecs" -o "$T/euc.tsv" "$H/euclid.hdf5:test"
# classifier queries score raw vectors: angular takes -n there
expect_fail "angular with classifiers" 1 "distance 'angular' (the file's attribute): classifier queries" "$T/euc.tsv" \
  slem-match --affine -k 10 -d "$A:train" -o "$T/euc.tsv" "$A:test"
# the distances beside the neighbours are not row numbers, nor is any float file
expect_fail "neighbors from FILE:distances" 1 "ann.hdf5:distances: floating-point values: --neighbors takes the neighbours' row numbers" - \
  slem-eval --neighbors "$A:distances" -k 10 "$H/ranking.tsv"
expect_fail "neighbors from euclid FILE:distances" 1 "euclid.hdf5:distances: floating-point values" - \
  slem-eval --neighbors "$H/euclid.hdf5:distances" -k 1 "$H/ranking.tsv"
expect_fail "neighbors of whole floats" 1 "ann.hdf5:neighborsf: floating-point values" - \
  slem-eval --neighbors "$A:neighborsf" -k 10 "$H/ranking.tsv"
expect_fail "neighbors from fvecs" 1 "q.fvecs: floating-point values" - \
  slem-eval --neighbors "$T/q.fvecs" -k 1 "$H/ranking.tsv"
# threads, small blocks and shards read the HDF5 database as one file does
check "match -t 2, small blocks" slem-match -n -t 2 --query-block 7 --tile-rows 64 -k 10 -d "$A:train" -o "$T/cos2.tsv" "$A:test"
cmp -s "$T/cos.tsv" "$T/cos2.tsv" && ok || bad "threads and blocks change the HDF5 ranking"
check "shard 0/2" slem-match -n -k 10 --shard 0/2 -d "$A:train" -F jsonl -o "$T/sh0.jsonl" "$A:test"
check "shard 1/2" slem-match -n -k 10 --shard 1/2 -d "$A:train" -F jsonl -o "$T/sh1.jsonl" "$A:test"
check "merge shards" slem-merge -k 10 -o "$T/m.tsv" "$T/sh0.jsonl" "$T/sh1.jsonl"
cmp -s "$T/cos.tsv" "$T/m.tsv" && ok || bad "HDF5 shards merged differ"

# ---- recall@10 equal to numpy's, whatever file holds the neighbours ----
want=$(awk '{print $3}' "$H/recall.txt")
for n in "$A:neighbors" "$A:neighbors64" "$H/neighbors.ivecs"; do
  got=$(slem-eval --neighbors "$n" -k 10 "$H/ranking.tsv" | awk '$1 == "R@10" {print $2}')
  [ "$got" = "$want" ] && ok || bad "recall@10 with $n: $got, numpy $want"
done
# rows named by ids files, as the ranking names them
awk 'BEGIN { for (i = 0; i < 40; i++) print "q" i }' >"$T/q.ids"
awk 'BEGIN { for (i = 0; i < 500; i++) print "img" i }' >"$T/db.ids"
check "match with ids" slem-match -n -k 10 --query-ids "$T/q.ids" --db-ids "$T/db.ids" -d "$A:train" -o "$T/cosid.tsv" "$A:test"
slem-eval --neighbors "$A:neighbors" --query-ids "$T/q.ids" --db-ids "$T/db.ids" -k 10 "$T/cosid.tsv" |
  grep -qx 'R@10	1.000000' && ok || bad "recall@10 with ids is not 1"
expect_fail "a neighbour beyond the ids" 1 "record 1: neighbour 1 (326) is not a database row number of the --db-ids" - \
  sh -c "head -3 '$T/db.ids' >'$T/short.ids'; slem-eval --neighbors '$A:neighbors' --db-ids '$T/short.ids' -k 10 '$T/cosid.tsv'"
expect_fail "neighbors --exclude-self" 2 "ground truth alone" - \
  slem-eval --neighbors "$A:neighbors" --exclude-self "$H/ranking.tsv"
expect_fail "neighbours fewer than k" 1 "10 neighbours per query, fewer than the 20" - \
  slem-eval --neighbors "$A:neighbors64" -k 20 "$H/ranking.tsv"
expect_fail "neighbors with qrels" 2 "ground truth alone" - \
  slem-eval --neighbors "$A:neighbors" --qrels "$H/recall.txt" "$H/ranking.tsv"

# ---- HDF5 errors name the file and the dataset ----
expect_fail "missing dataset" 1 "ann.hdf5: no dataset 'nope' (it holds: cube, distances, names, neighbors" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$A:nope"
expect_fail "1-D dataset" 1 "dataset 'vec1' has rank 1" "$T/x.fvecs" slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$A:vec1"
expect_fail "3-D dataset" 1 "dataset 'cube' has rank 3" "$T/x.fvecs" slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$A:cube"
expect_fail "string dataset" 1 "dataset 'names'" "$T/x.fvecs" slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$A:names"
expect_fail "no dataset named" 1 "ann.hdf5: an HDF5 file: give FILE:DATASET" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$A"
cp "$A" "$T/noext"
expect_fail "HDF5 by its magic" 1 "noext: an HDF5 file: give FILE:DATASET" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$T/noext"
expect_fail "HDF5 on a pipe" 1 "HDF5 is read from a file" "$T/x.fvecs" \
  sh -c "cat '$A' | slem-encode -q -c '$T/c.slem' -o '$T/x.fvecs' -"
printf 'not hdf5\n' >"$T/fake.h5"
expect_fail "not an HDF5 file" 1 "fake.h5: not an HDF5 file" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$T/fake.h5:train"
expect_fail "a member of an npy" 1 "npy holds one array, not datasets" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$TOP/testdata/formats/f4.npy:train"
expect_fail "HDF5 output" 1 "reads HDF5 but does not write it" "$T/x.h5" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.h5" "$A:test"
# a path holding ':' that exists as named is that file
cp "$T/q.fvecs" "$T/a:b.fvecs"
check "a path with ':'" slem-match -k 10 -d "$T/db.fvecs" -o "$T/r2.tsv" "$T/a:b.fvecs"
cmp -s "$T/r.tsv" "$T/r2.tsv" && ok || bad "a:b.fvecs"

# ---- int64 npy read (file and pipe), as the same int64 dataset of the HDF5 file ----
check "encode int64 npy" slem-encode -q -c "$T/c.slem" -o "$T/i8a.fvecs" "$H/test_i8.npy"
check "encode int64 npy, pipe" sh -c "cat '$H/test_i8.npy' | slem-encode -q -c '$T/c.slem' -o '$T/i8b.fvecs' -"
check "encode int64 dataset" slem-encode -q -c "$T/c.slem" -o "$T/i8c.fvecs" "$A:test_i8"
cmp -s "$T/i8a.fvecs" "$T/i8b.fvecs" && cmp -s "$T/i8a.fvecs" "$T/i8c.fvecs" && ok || bad "int64 npy"

# ---- npz and .mat named ----
printf 'PK\003\004rest of a zip' >"$T/z.npz"
expect_fail "npz" 1 "z.npz: an npz archive: extract the array with numpy.load" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$T/z.npz"
expect_fail "npz on a pipe" 1 "an npz archive" "$T/x.fvecs" \
  sh -c "cat '$T/z.npz' | slem-encode -q -c '$T/c.slem' -o '$T/x.fvecs' -"
printf 'MATLAB 5.0 MAT-file, Platform: GLNXA64' >"$T/m.mat"
expect_fail ".mat" 1 "m.mat: a MATLAB .mat file" "$T/x.fvecs" \
  slem-encode -q -c "$T/c.slem" -o "$T/x.fvecs" "$T/m.mat"

# ---- fvecs or ivecs: refused from a pipe unless -f says which ----
# neighbors.ivecs: 40 records of 10 int32 row numbers; eye10.fvecs: the identity
awk 'BEGIN { for (i = 0; i < 10; i++) { printf "%s", (i ? "\n" : ""); for (j = 0; j < 10; j++) printf "%s%d", (j ? " " : ""), i == j } print "" }' >"$T/eye.txt"
expect_fail "ivecs through a pipe" 1 "fvecs or ivecs?" "$T/p.tsv" \
  sh -c "cat '$H/neighbors.ivecs' | slem-match -k 2 -d '$T/eye.txt' -o '$T/p.tsv' -"
cp "$H/neighbors.ivecs" "$T/nb"
expect_fail "ivecs with no extension" 1 "nb: fvecs or ivecs?" "$T/p.tsv" \
  slem-match -k 2 -d "$T/eye.txt" -o "$T/p.tsv" "$T/nb"
check "ivecs by extension" slem-match -k 2 -d "$T/eye.txt" -o "$T/p1.tsv" "$H/neighbors.ivecs"
check "ivecs through a pipe with --query-format" sh -c \
  "cat '$H/neighbors.ivecs' | slem-match -k 2 --query-format ivecs -d '$T/eye.txt' -o '$T/p2.tsv' -"
cmp -s "$T/p1.tsv" "$T/p2.tsv" && ok || bad "ivecs by --query-format differs from .ivecs"
# -f applies to both inputs: the text database is then refused; --db-format takes it back
expect_fail "-f ivecs for both" 1 "eye.txt" "$T/p3.tsv" \
  sh -c "cat '$H/neighbors.ivecs' | slem-match -k 2 -f ivecs -d '$T/eye.txt' -o '$T/p3.tsv' -"
check "-f ivecs --db-format text" sh -c \
  "cat '$H/neighbors.ivecs' | slem-match -k 2 -f ivecs --db-format text -d '$T/eye.txt' -o '$T/p3.tsv' -"
cmp -s "$T/p1.tsv" "$T/p3.tsv" && ok || bad "-f ivecs --db-format text differs"
expect_fail "--query-format unknown" 2 "unknown format 'nope'" - slem-match --query-format nope -d "$T/eye.txt" "$T/q.fvecs"
# slem-expand's VECTORS and DATABASE, slem-esvm's INPUT and NEGATIVES: the same split
check "match for expand" slem-match -k 3 -d "$A:train" -o "$T/qr.tsv" "$A:test"
check "expand from HDF5" slem-expand -n 2 -d "$A:train" -r "$T/qr.tsv" -o "$T/ex1.fvecs" "$A:test"
expect_fail "expand -f npy applies to the database too" 1 "npy holds one array, not datasets" "$T/ex2.fvecs" \
  slem-expand -n 2 -f npy -d "$A:train" -r "$T/qr.tsv" -o "$T/ex2.fvecs" "$TOP/testdata/hdf5/test_i8.npy"
check "expand --db-format" slem-expand -n 2 -f npy --db-format hdf5 -d "$A:train" -r "$T/qr.tsv" -o "$T/ex2.fvecs" "$H/test_i8.npy"
expect_fail "esvm --neg-format unknown" 2 "neg-format: unknown format" - slem-esvm --neg-format nope -n "$A:train" "$A:test"
# float data through a pipe is fvecs as before
cat "$T/q.fvecs" | slem-match -k 10 -d "$T/db.fvecs" - | cmp -s - "$T/r.tsv" && ok || bad "fvecs pipe"

finish cli-hdf5
