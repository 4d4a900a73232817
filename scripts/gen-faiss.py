#!/usr/bin/python3
"""Generate testdata/faiss/: rankings as FAISS itself writes them (Debian's python3-faiss,
IndexFlatIP), saved with np.save under their own names as FAISS users save them, and the
merge numpy computes from them (outputs are committed; tests/cli-merge.sh uses them).

The vectors are small integers, so that inner products are exact in float32 and many
scores tie exactly; FAISS lists tied results in an order of its own (by descending row in
1.7.3), not by the lower row as slem-match does.

  shardS_I.npy, shardS_D.npy  S = 0, 1, 2: the search (k 10) of the 40 queries in database
                              rows 200 S to 200 S + 199, each shard its own IndexFlatIP,
                              I made global (+ 200 S): int64 and float32, FAISS's layout
  shard1w_I.npy, shard1w_D.npy shard 1 as int32 I and float64 D (numpy's astype)
  whole_I.npy, whole_D.npy    FAISS's search of the whole database (600 rows)
  l2_I.npy, l2_D.npy          an IndexFlatL2 search of shard 0: distances, smallest first
  l2pad_I.npy, l2pad_D.npy    one of the first 5 rows, k 10: padded as FAISS pads L2
                              (I -1, D +FLT_MAX)
  merged.tsv                  the merge of the three shards by numpy: per query, the union
                              of the shards' lists sorted by decreasing score, equal scores
                              by the lower row, the first 10 (slem-match's tsv: query, rank
                              from 1, row, score with %.9g)

Run from the top of the tree: /usr/bin/python3 scripts/gen-faiss.py (Debian's
python3-faiss and python3-numpy). `make check` needs neither.
"""
import os

import faiss
import numpy as np

OUT = "testdata/faiss"
K = 10


def search(db, q):
    index = faiss.IndexFlatIP(db.shape[1])
    index.add(db)
    return index.search(q, K)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(43)
    db = rng.integers(-2, 3, (600, 8)).astype(np.float32)
    q = rng.integers(-2, 3, (40, 8)).astype(np.float32)
    cand = [[] for _ in range(len(q))]
    unordered = 0
    for s in range(3):
        lo = 200 * s
        D, I = search(db[lo:lo + 200], q)
        I = I + lo
        np.save(os.path.join(OUT, f"shard{s}_I.npy"), I)
        np.save(os.path.join(OUT, f"shard{s}_D.npy"), D)
        if s == 1:
            np.save(os.path.join(OUT, "shard1w_I.npy"), I.astype(np.int32))
            np.save(os.path.join(OUT, "shard1w_D.npy"), D.astype(np.float64))
        for i in range(len(q)):
            for j in range(K):
                cand[i].append((-float(D[i, j]), int(I[i, j])))
            unordered += sum(1 for j in range(1, K)
                             if D[i, j] == D[i, j - 1] and I[i, j] < I[i, j - 1])
    # the test means something only if FAISS orders ties otherwise than slem-match
    assert unordered > 0, "FAISS listed every tie by the lower row"
    D, I = search(db, q)
    np.save(os.path.join(OUT, "whole_I.npy"), I)
    np.save(os.path.join(OUT, "whole_D.npy"), D)
    for name, rows in (("l2", 200), ("l2pad", 5)):
        index = faiss.IndexFlatL2(db.shape[1])
        index.add(db[:rows])
        D, I = index.search(q, K)
        np.save(os.path.join(OUT, f"{name}_I.npy"), I)
        np.save(os.path.join(OUT, f"{name}_D.npy"), D)
    assert (I[:, 5:] == -1).all() and (D[:, 5:] == np.finfo(np.float32).max).all()
    with open(os.path.join(OUT, "merged.tsv"), "w") as f:
        for i in range(len(q)):
            for r, (negs, row) in enumerate(sorted(cand[i])[:K]):
                f.write(f"{i}\t{r + 1}\t{row}\t{float(np.float32(-negs)):.9g}\n")


if __name__ == "__main__":
    main()
