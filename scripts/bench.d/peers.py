#!/usr/bin/python3
"""The peers slem is measured against: what a user would otherwise write with numpy and
scipy (same OpenBLAS), and FAISS IndexFlatIP. Each stage is one process, as slem's are.

  peers.py negstats NEG.npy OUT.npz LAMBDA_REL     streamed dsyrk, cho_factor, inverse
  peers.py encode-chol CACHE.npz POS.npy OUT.npy   cho_solve per block
  peers.py encode-inv CACHE.npz POS.npy OUT.npy    stored-inverse GEMM per block
  peers.py match-numpy DB.npy Q.npy K OUT.npy      float32 GEMM + argpartition, in tiles
  peers.py match-faiss DB.npy Q.npy K OUT.npy      faiss.IndexFlatIP
  peers.py kneg NEG.npy OUT.npz GAMMA RANK LREL    RBF kernel SLEM: pivoted incomplete
                                                   Cholesky, mu_B, G^-1
  peers.py kenc CACHE.npz POS.npy OUT.npy          explicit descriptors z / N
  peers.py kmatch CACHE.npz DB.npy Q.npy K OUT.npy exact kernel SLEM similarity, top k
The kernel peers implement the formulas of docs/kernel.md directly in numpy.
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


def rbf_rows(a, b, gamma, asq=None, bsq=None):
    """exp(-gamma |a_i - b_j|^2) for the rows of a and b, from one GEMM and the norms."""
    asq = np.einsum("ij,ij->i", a, a) if asq is None else asq
    bsq = np.einsum("ij,ij->i", b, b) if bsq is None else bsq
    return np.exp(-gamma * np.maximum(asq[:, None] + bsq[None, :] - 2 * a @ b.T, 0))


def kneg(neg_path, out_path, gamma, rank, lambda_rel):
    x = np.load(neg_path).astype(np.float64)
    n, _ = x.shape
    gamma, r = float(gamma), int(rank)
    sq = np.einsum("ij,ij->i", x, x)
    diag = np.ones(n)  # k(x, x) = 1 for the RBF kernel
    b = np.zeros((n, r))
    piv = []
    for j in range(r):  # greedy pivot on the largest residual diagonal
        i = int(np.argmax(diag))
        if diag[i] <= 1e-12:
            break
        piv.append(i)
        col = rbf_rows(x, x[i:i + 1], gamma, sq, sq[i:i + 1])[:, 0] - b[:, :j] @ b[i, :j]
        b[:, j] = col / np.sqrt(diag[i])
        diag -= b[:, j] ** 2
    r = len(piv)
    b = b[:, :r]
    mu = b.mean(axis=0)
    g = b.T @ b / n - np.outer(mu, mu)
    lam = float(lambda_rel) * np.trace(g) / r
    ginv = np.linalg.inv(g + lam * np.eye(r))
    np.savez(out_path, pivots=x[piv], lp=b[piv], mu=mu, ginv=ginv, lam=lam, gamma=gamma)


def kproject(cache, x):
    """v, z, u of the rows of x: the pivot extension and G^-1 (v - mu_B)."""
    from scipy.linalg import solve_triangular
    kp = rbf_rows(x, cache["pivots"], float(cache["gamma"]))
    v = solve_triangular(cache["lp"], kp.T, lower=True).T
    z = (v - cache["mu"]) @ cache["ginv"]
    u2 = np.maximum(1 - np.einsum("ij,ij->i", v, v), 0)
    return v, z, u2


def kenc(cache_path, pos_path, out_path):
    cache = np.load(cache_path)
    x = np.load(pos_path, mmap_mode="r")
    lam = float(cache["lam"])
    out = np.empty((x.shape[0], cache["lp"].shape[0]), dtype=np.float32)
    for i in range(0, x.shape[0], BLOCK):
        _, z, u2 = kproject(cache, np.asarray(x[i:i + BLOCK], dtype=np.float64))
        out[i:i + BLOCK] = z / np.sqrt(np.einsum("ij,ij->i", z, z) + u2 / lam**2)[:, None]
    np.save(out_path, out)


def kmatch(cache_path, db_path, q_path, k, out_path):
    cache = np.load(cache_path)
    lam, gamma, k = float(cache["lam"]), float(cache["gamma"]), int(k)
    q = np.load(q_path).astype(np.float64)
    db = np.load(db_path).astype(np.float64)
    vq, zq, uq = kproject(cache, q)
    nq = np.sqrt(np.einsum("ij,ij->i", zq, zq) + uq / lam**2)
    best = []
    for j in range(0, db.shape[0], BLOCK):
        x = db[j:j + BLOCK]
        vd, zd, ud = kproject(cache, x)
        nd = np.sqrt(np.einsum("ij,ij->i", zd, zd) + ud / lam**2)
        s = (zq @ zd.T + (rbf_rows(q, x, gamma) - vq @ vd.T) / lam**2) / nq[:, None] / nd[None, :]
        best.append(s)
    s = np.hstack(best)
    top = np.argpartition(-s, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(s, top, axis=1), axis=1, kind="stable")
    np.save(out_path, np.take_along_axis(top, order, axis=1))


def merge(k, out_base, *shards):
    """slem-merge's peer: the npy pairs (BASE.I.npy, BASE.D.npy) of the shards concatenated,
    each query's best k by higher score, then lower row (np.argpartition, then np.lexsort of
    the kept), written as an npy pair."""
    k = int(k)
    bases = [s[:-6] if s.endswith((".I.npy", ".D.npy")) else s for s in shards]
    I = np.concatenate([np.load(b + ".I.npy") for b in bases], axis=1)
    D = np.concatenate([np.load(b + ".D.npy") for b in bases], axis=1)
    # the k-th best score bounds the top k; ties at it are settled by the row in lexsort
    part = np.argpartition(-D, k - 1, axis=1)
    kth = np.take_along_axis(D, part[:, k - 1:k], axis=1)
    keep = D >= kth
    rows = np.where(keep, I, np.iinfo(np.int64).max)
    order = np.lexsort((rows, np.where(keep, -D, np.inf)), axis=1)[:, :k]
    np.save(out_base + ".I.npy", np.take_along_axis(I, order, axis=1))
    np.save(out_base + ".D.npy", np.take_along_axis(D, order, axis=1))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "merge":
        merge(*args)
        return
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
    elif cmd == "kneg":
        kneg(*args)
    elif cmd == "kenc":
        kenc(*args)
    elif cmd == "kmatch":
        kmatch(*args)
    else:
        sys.exit(f"peers.py: unknown stage {cmd}")


if __name__ == "__main__":
    main()
