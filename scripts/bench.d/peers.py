#!/usr/bin/python3
"""The peers slem is measured against: what a user would otherwise write with numpy and
scipy (same OpenBLAS), and FAISS IndexFlatIP. Each stage is one process, as slem's are.

  peers.py negstats NEG.npy OUT.npz LAMBDA_REL     streamed dsyrk, cho_factor, inverse
  peers.py encode-chol CACHE.npz POS.npy OUT.npy   cho_solve per block
  peers.py encode-inv CACHE.npz POS.npy OUT.npy    stored-inverse GEMM per block
  peers.py match-numpy DB.npy Q.npy K OUT.npy      float32 GEMM + argpartition, in tiles
  peers.py match-faiss DB.npy Q.npy K OUT.npy      faiss.IndexFlatIP
"""
import sys

import numpy as np

BLOCK = 4096


def negstats(neg_path, out_path, lambda_rel):
    from scipy.linalg import cho_factor
    x = np.load(neg_path, mmap_mode="r")
    n, d = x.shape
    mean = np.zeros(d)
    scatter = np.zeros((d, d))
    count = 0
    for i in range(0, n, BLOCK):  # streamed, centred per block, merged pairwise (Chan)
        b = np.asarray(x[i:i + BLOCK], dtype=np.float64)
        m = b.mean(axis=0)
        c = b - m
        scatter += c.T @ c  # numpy calls dsyrk for A.T @ A
        delta = m - mean
        scatter += np.outer(delta, delta) * (count * len(b) / (count + len(b)))
        mean += delta * len(b) / (count + len(b))
        count += len(b)
    sigma = scatter / n
    lam = float(lambda_rel) * np.trace(sigma) / d
    a = sigma + lam * np.eye(d)
    c, low = cho_factor(a, lower=True)
    ainv = np.linalg.inv(a)
    np.savez(out_path, mu=mean, chol=c, ainv=ainv)


def encode(cache_path, pos_path, out_path, use_inverse):
    from scipy.linalg import cho_solve
    cache = np.load(cache_path)
    mu, chol, ainv = cache["mu"], cache["chol"], cache["ainv"]
    x = np.load(pos_path, mmap_mode="r")
    out = np.empty(x.shape, dtype=np.float32)
    for i in range(0, x.shape[0], BLOCK):
        delta = np.asarray(x[i:i + BLOCK], dtype=np.float64) - mu
        y = delta @ ainv if use_inverse else cho_solve((chol, True), delta.T).T
        y /= np.linalg.norm(y, axis=1, keepdims=True)
        out[i:i + BLOCK] = y
    np.save(out_path, out)


def match_numpy(db_path, q_path, k, out_path):
    db = np.load(db_path, mmap_mode="r")
    q = np.load(q_path)
    k = int(k)
    best_s = np.full((q.shape[0], k), -np.inf, dtype=np.float32)
    best_i = np.zeros((q.shape[0], k), dtype=np.int64)
    tile = 16384
    for j in range(0, db.shape[0], tile):
        s = q @ np.asarray(db[j:j + tile]).T
        kk = min(k, s.shape[1])
        part = np.argpartition(-s, kk - 1, axis=1)[:, :kk]
        cand_s = np.concatenate([best_s, np.take_along_axis(s, part, axis=1)], axis=1)
        cand_i = np.concatenate([best_i, part + j], axis=1)
        top = np.argpartition(-cand_s, k - 1, axis=1)[:, :k]
        best_s = np.take_along_axis(cand_s, top, axis=1)
        best_i = np.take_along_axis(cand_i, top, axis=1)
    order = np.argsort(-best_s, axis=1, kind="stable")
    np.save(out_path, np.take_along_axis(best_i, order, axis=1))


def match_faiss(db_path, q_path, k, out_path):
    import faiss
    db = np.load(db_path)
    q = np.load(q_path)
    index = faiss.IndexFlatIP(db.shape[1])
    index.add(db)
    _, ids = index.search(q, int(k))
    np.save(out_path, ids)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "negstats":
        negstats(*args)
    elif cmd == "encode-chol":
        encode(*args, use_inverse=False)
    elif cmd == "encode-inv":
        encode(*args, use_inverse=True)
    elif cmd == "match-numpy":
        match_numpy(*args)
    elif cmd == "match-faiss":
        match_faiss(*args)
    else:
        sys.exit(f"peers.py: unknown stage {cmd}")


if __name__ == "__main__":
    main()
