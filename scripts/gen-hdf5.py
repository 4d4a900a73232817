#!/usr/bin/python3
"""Generate testdata/hdf5/: an ann-benchmarks-style HDF5 file written by h5py, and the
recall@10 numpy computes for it (outputs are committed; tests/cli-hdf5.sh uses them).

ann.hdf5 holds, as ann-benchmarks lays its files out (its attribute distance 'angular', a
string of variable length as h5py writes a str):
  train      (500, 16) float32, chunked (100 rows) and gzip-compressed: the database
  test       (40, 16) float32: the queries
  neighbors  (40, 100) int32: for each query the database rows by decreasing cosine
             similarity (its true neighbours, nearest first)
  distances  (40, 100) float32: their angular distances, 1 - cosine (not row numbers)
  neighborsf the first 10 columns of neighbors as float32: whole values, but not integers
and beside them, to check the readers' conversions and the refusals:
  train64    train as float64, chunked (37 rows, a chunk that is not a block) and gzip
  neighbors64 the first 10 columns of neighbors as int64 (numpy's default integer)
  test_i8    round(1000 test) as int64, also as test_i8.npy (numpy's default integer)
  vec1       a 1-D dataset, cube a 3-D one, names a string dataset
neighbors.ivecs: the first 10 columns of neighbors as ivecs.
euclid.hdf5: the same train and test with distance 'euclidean' (a fixed-length string, as
  numpy bytes are written), neighbors by increasing L2 distance and their distances.
recall-dot.txt: recall@10 of the raw inner-product top 10 against ann.hdf5's neighbors
  (what a ranking that ignored 'angular' would score: below 1), and train.npy, test.npy,
  the same vectors as npy (no attribute: slem-match ranks them by inner product).
recall.txt: recall@10 of the exact cosine top 10 against neighbors with the last 3 of
  each query's true top 10 swapped for rows 11-13 (so that it is not 1): numpy's value,
  and the ranking (tsv, slem-match's layout) that gives it, ranking.tsv.
The test also checks that the cosine ranking slem-match -n makes itself has recall@10 1.

Run from the top of the tree: /usr/bin/python3 scripts/gen-hdf5.py (Debian's python3-numpy
and python3-h5py). `make check` needs no Python.
"""
import os

import h5py
import numpy as np

OUT = "testdata/hdf5"


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(27)
    train = rng.standard_normal((500, 16)).astype(np.float32)
    test = rng.standard_normal((40, 16)).astype(np.float32)
    tn = train.astype(np.float64) / np.linalg.norm(train.astype(np.float64), axis=1)[:, None]
    qn = test.astype(np.float64) / np.linalg.norm(test.astype(np.float64), axis=1)[:, None]
    sim = qn @ tn.T
    order = np.argsort(-sim, axis=1, kind="stable")
    neighbors = order[:, :100].astype(np.int32)
    test_i8 = np.round(test.astype(np.float64) * 1000).astype(np.int64)
    np.save(os.path.join(OUT, "test_i8.npy"), test_i8)
    np.save(os.path.join(OUT, "train.npy"), train)
    np.save(os.path.join(OUT, "test.npy"), test)
    with h5py.File(os.path.join(OUT, "ann.hdf5"), "w") as f:
        f.create_dataset("train", data=train, chunks=(100, 16), compression="gzip")
        f.create_dataset("test", data=test)
        f.create_dataset("neighbors", data=neighbors)
        f.create_dataset("train64", data=train.astype(np.float64), chunks=(37, 16),
                         compression="gzip")
        f.create_dataset("neighbors64", data=neighbors[:, :10].astype(np.int64))
        f.create_dataset("test_i8", data=test_i8)
        f.create_dataset("vec1", data=np.arange(16, dtype=np.float32))
        f.create_dataset("cube", data=np.zeros((2, 2, 16), dtype=np.float32))
        f.create_dataset("names", data=np.array([b"a", b"b"]))
        f.create_dataset("distances", data=(1 - np.take_along_axis(sim, order[:, :100], 1))
                         .astype(np.float32))
        f.create_dataset("neighborsf", data=neighbors[:, :10].astype(np.float32))
        f.attrs["distance"] = "angular"
    l2 = ((test.astype(np.float64)[:, None, :] - train.astype(np.float64)[None, :, :]) ** 2).sum(2)
    l2order = np.argsort(l2, axis=1, kind="stable")
    with h5py.File(os.path.join(OUT, "euclid.hdf5"), "w") as f:
        f.create_dataset("train", data=train)
        f.create_dataset("test", data=test)
        f.create_dataset("neighbors", data=l2order[:, :100].astype(np.int32))
        f.create_dataset("distances", data=np.sqrt(np.take_along_axis(l2, l2order[:, :100], 1))
                         .astype(np.float32))
        f.attrs["distance"] = np.bytes_(b"euclidean")
    dot = test.astype(np.float64) @ train.astype(np.float64).T
    dtop = np.argsort(-dot, axis=1, kind="stable")[:, :10]
    dhits = [len(set(dtop[q]) & set(neighbors[q, :10])) / 10 for q in range(len(test))]
    with open(os.path.join(OUT, "recall-dot.txt"), "w") as f:
        f.write(f"dot R@10 {np.mean(dhits):.6f}\n")
    head = np.full((neighbors.shape[0], 1), 10, dtype="<i4")
    np.hstack([head, neighbors[:, :10].astype("<i4")]).tofile(os.path.join(OUT, "neighbors.ivecs"))
    # a ranking whose recall@10 is not 1: the true top 7, then rows 11-13 of the order
    ranked = np.hstack([order[:, :7], order[:, 10:13]])
    hits = [len(set(ranked[q, :10]) & set(neighbors[q, :10])) / 10 for q in range(len(test))]
    with open(os.path.join(OUT, "ranking.tsv"), "w") as f:
        for q in range(len(test)):
            for r in range(10):
                f.write(f"{q}\t{r + 1}\t{ranked[q, r]}\t{sim[q, ranked[q, r]]:.9g}\n")
    with open(os.path.join(OUT, "recall.txt"), "w") as f:
        f.write(f"ranking.tsv R@10 {np.mean(hits):.6f}\n")


if __name__ == "__main__":
    main()
