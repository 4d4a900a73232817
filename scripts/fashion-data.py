#!/usr/bin/python3
"""fashion-data.py: a retrieval data set from Debian's dataset-fashion-mnist, in the layout
of testdata/digits (negatives.fvecs; database, validation and queries .fvecs with .labels).

Usage: /usr/bin/python3 scripts/fashion-data.py [DIR]   (default /tmp/slem-fashion)

Features: each 28 x 28 image averaged over 2 x 2 blocks (14 x 14 = 196 values), scaled to
[0, 1]. The database is the 10 000 test images; from the 60 000 training images, a fixed
permutation (seed 2026) gives 5 000 negatives, then 500 validation queries, then 500 test
queries, disjoint. Relevant: the same class (10 classes). Needs the package
dataset-fashion-mnist (apt-get install dataset-fashion-mnist) and python3-numpy.
"""
import gzip
import os
import sys

import numpy as np
from vecfiles import write_fvecs

SRC = "/usr/share/datasets/fashion-mnist"


def idx(name):
    with gzip.open(os.path.join(SRC, name), "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def features(images):
    x = images.astype(np.float64).reshape(-1, 14, 2, 14, 2).mean(axis=(2, 4)) / 255.0
    return x.reshape(len(images), 196).astype(np.float32)


def write_labels(path, y):
    with open(path, "w") as f:
        f.writelines(f"{v}\n" for v in y)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/slem-fashion"
    os.makedirs(out, exist_ok=True)
    xtr, ytr = features(idx("train-images-idx3-ubyte.gz")), idx("train-labels-idx1-ubyte.gz")
    xte, yte = features(idx("t10k-images-idx3-ubyte.gz")), idx("t10k-labels-idx1-ubyte.gz")
    perm = np.random.default_rng(2026).permutation(len(xtr))
    neg, val, qry = perm[:5000], perm[5000:5500], perm[5500:6000]
    write_fvecs(os.path.join(out, "negatives.fvecs"), xtr[neg])
    write_fvecs(os.path.join(out, "database.fvecs"), xte)
    write_labels(os.path.join(out, "database.labels"), yte)
    write_fvecs(os.path.join(out, "validation.fvecs"), xtr[val])
    write_labels(os.path.join(out, "validation.labels"), ytr[val])
    write_fvecs(os.path.join(out, "queries.fvecs"), xtr[qry])
    write_labels(os.path.join(out, "queries.labels"), ytr[qry])
    print(f"fashion-data: {out}: 5000 negatives, 10000 database, 500 validation and 500 test "
          f"queries, d 196")


if __name__ == "__main__":
    main()
