#!/usr/bin/python3
"""Float64 reference of the kernel recursive SLEM, written from the kernel branch of the
authors' rafarez/SLEM src/quick_full_encoder.m (its `w_null` branch, which it always takes:
"let's cheat... w_null = 1"), for the golden files testdata/authors/krec-*.tsv: what
`slem-negstats --kernel rbf:g=G --factor F --rank R --lambda-rel L --depth K` and
`slem-encode -c` of queries and database compute, ranked by `slem-match` (the inner
product of the descriptors).

Per stage, on that stage's negatives (the raw negatives, then their descriptors):
  - the kernel: kernel_matrix.m's rbf, exp(-gamma |a - b|^2), gamma = G / the median
    squared distance between the negatives (all pairs: slem samples 1000 rows, all of them
    below 1000 negatives), resolved anew at every stage on that stage's inputs;
  - the factor K ~ B B^T: icd, the pivoted incomplete Cholesky with the largest residual
    diagonal as pivot (lowest index on ties), or kpca, B = U_r D_r^1/2 of the top r
    eigenpairs of K (eigenvalues above 1e-10 times the largest);
  - mu = mean row of B, G = B^T B / n - mu mu^T + lambda I, lambda = L trace(Sigma_B) / r;
  - a point x: v its coordinates in the factor's space, u = sqrt(k(x, x) - |v|^2),
    and the MATLAB's descriptor [beta_0; beta_hat] = C [u / lambda; G^-1 (v - mu)],
    normalised (C cancels).

The MATLAB is broken for k > 1: its negatives' branch uses an undefined P (its definition
is commented out), sets `Wnega = beta_kk`, a variable of the other branch and of the wrong
size, and overwrites Wposi (the positives' descriptors) with the negatives' alpha. What it
intends, and what slem computes: the next stage's negatives are this stage's normalised
descriptors of the negatives, and a point is encoded by the stages in turn. Where slem
departs from the letter of the MATLAB (docs/kernel.md, "Kernel recursive SLEM"):
  1. The descriptor is slem's explicit descriptor z / N, N = sqrt(z.z + u^2 / lambda^2)
     (r values): the MATLAB's normalised [beta_0; beta_hat] without its first value
     beta_0 = u / (lambda N), the weight on each point's own direction outside the span,
     which is orthogonal to every other point's (the explicit descriptor of a depth-1
     kernel cache, unchanged: a depth-1 kernel recursive cache is today's kernel cache).
  2. The negatives are encoded as any point is (their v by the pivot extension, their u
     from their own residual), where the MATLAB takes v = B's row and u = 0; v is B's row
     for every negative (kpca and icd alike, up to rounding), u is 0 only for the pivots
     of an icd: the other negatives of an icd, and every negative of kpca below the rank
     of K, keep their residual.
  3. v of an icd is the pivot extension L_P^-1 k(pivots, x), not the MATLAB's
     (B^T B)^-1 B^T k(negatives, x), which overshoots k(x, x) when the factorisation is
     incomplete (docs/kernel.md); for kpca they are equal.

Output: the top K of each query by the inner product of the descriptors (what slem-match
ranks them by: z.z' / (N N'), the exact similarity without its term outside the span), as
slem-match's tsv
(query, rank, database row, score with %.9g of the float32 score; ties by row).

With a last argument `matlab`, the letter of the MATLAB instead (not slem's: for comparison
only, docs/kernel.md): the descriptors [beta_0; beta_hat] normalised (r + 1 values), v of a
point by (B^T B)^-1 B^T k(negatives, x), the negatives at v = B's row and u = 0.

usage: gen-authors-krec.py NEGATIVES QUERIES DATABASE G FACTOR RANK LAMBDA_REL DEPTH K [matlab] > out.tsv
"""

import sys

import numpy as np

from vecfiles import read_fvecs, write_ranking


def sqdist(a, b):
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    return np.maximum(sq, 0)


def rbf(a, b, gamma):
    """kernel_matrix.m, 'rbf': exp(-gamma |a_i - b_j|^2), a(m, d), b(p, d)."""
    return np.exp(-gamma * sqdist(a, b))


def median_gamma(neg, g):
    """G / the median squared distance over the pairs of negatives (slem_kernel_estimate_gamma
    with every row in its sample); the exact differences, as slem sums them."""
    n = neg.shape[0]
    sq = np.concatenate([((neg[i + 1:] - neg[i]) ** 2).sum(1) for i in range(n - 1)])
    return g / np.median(sq)


def icd(neg, gamma, rmax):
    """B (n, r) by pivoted incomplete Cholesky, the pivots' indices."""
    n = neg.shape[0]
    diag = np.ones(n)                   # rbf: k(x, x) = 1
    dmax = diag.max()
    b = np.zeros((n, rmax))
    piv = []
    free = np.ones(n, bool)
    for j in range(rmax):
        res = np.where(free, diag, -np.inf)
        p = int(np.argmax(res))         # the first of the largest
        if not res[p] > 1e-10 * dmax:
            break
        col = rbf(neg, neg[p:p + 1], gamma)[:, 0] - b[:, :j] @ b[p, :j]
        bpp = np.sqrt(diag[p])
        b[:, j] = np.where(free, col / bpp, 0)
        b[p, j] = bpp
        diag = diag - b[:, j] ** 2
        diag[p] = 0
        free[p] = False
        piv.append(p)
    r = len(piv)
    return b[:, :r], np.array(piv)


def stage(neg, g, fac, rmax, lam_rel, matlab=False):
    """This stage's encoder of raw rows x (m, d): slem's explicit descriptors z / N (m, r),
    and the negatives' descriptors. matlab: the letter of the MATLAB instead, the
    normalised [beta_0; beta_hat] (r + 1 values) with v = (B^T B)^-1 B^T k_0, and for the
    negatives v = B's row, u = 0."""
    n = neg.shape[0]
    gamma = median_gamma(neg, g)
    if fac == "icd":
        b, piv = icd(neg, gamma, rmax)
        lp = b[piv]                      # lower triangular: L_P

        def coords(x):
            return np.linalg.solve(lp, rbf(neg[piv], x, gamma))      # r x m
    else:
        kk = rbf(neg, neg, gamma)
        ev, vec = np.linalg.eigh(kk)
        ev, vec = ev[::-1][:rmax], vec[:, ::-1][:, :rmax]
        r = int((ev > 1e-10 * ev[0]).sum())
        ev, vec = ev[:r], vec[:, :r]
        b = vec * np.sqrt(ev)

        def coords(x):
            return (vec / np.sqrt(ev)).T @ rbf(neg, x, gamma)          # D^-1/2 U^T k_0
    r = b.shape[1]
    mu = b.mean(0)
    sigma = b.T @ b / n - np.outer(mu, mu)
    lam = lam_rel * np.trace(sigma) / r
    ginv = np.linalg.inv(sigma + lam * np.eye(r))

    def encode(x):
        v = coords(x)
        u2 = np.maximum(1 - (v * v).sum(0), 0)                       # rbf: k(x, x) = 1
        z = ginv @ (v - mu[:, None])
        # the MATLAB's [beta_0; beta_hat] / M, M its norm: beta_0 = u / lambda dropped
        nn = np.sqrt((z * z).sum(0) + u2 / lam / lam)
        return (z / nn).T

    def encode_matlab(x, v=None):
        if v is None:
            v = np.linalg.solve(b.T @ b, b.T @ rbf(neg, x, gamma))  # (B^T B) \ B^T k_0
            u = np.sqrt(np.maximum(1 - (v * v).sum(0), 0))
        else:
            u = np.zeros(v.shape[1])
        w = np.vstack([u / lam, ginv @ (v - mu[:, None])])
        return (w / np.linalg.norm(w, axis=0)).T
    if matlab:
        return encode_matlab, encode_matlab(None, b.T)
    return encode, encode(neg)


def main():
    negp, qp, dbp, g, fac, rmax, lam_rel, depth, k = sys.argv[1:10]
    g, rmax, lam_rel, depth, k = float(g), int(rmax), float(lam_rel), int(depth), int(k)
    matlab = sys.argv[10:] == ["matlab"]
    neg, q, db = read_fvecs(negp), read_fvecs(qp), read_fvecs(dbp)
    for _ in range(depth):
        enc, neg = stage(neg, g, fac, rmax, lam_rel, matlab)
        q, db = enc(q), enc(db)
    simi = q @ db.T
    write_ranking(sys.stdout, simi, k)


if __name__ == "__main__":
    main()
