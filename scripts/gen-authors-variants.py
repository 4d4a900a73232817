#!/usr/bin/python3
"""Float64 references of the authors' smaller SLEM variants, written from their MATLAB
(rafarez/SLEM), for the golden files of testdata/authors/ (tests/cli-variants.sh):

hellinger-dot: the 'hellinger' kernel of src/incomplete_chol.m, k(x, y) = |x.y|^(1/2)
(not slem's `hellinger`, sum_i sqrt(x_i y_i)), in kernel SLEM's exact similarity without
coupling, on the kernel PCA factor of src/slem_similarity.m (B = U_r D_r^1/2, the r largest
eigenpairs of the uncentred K; v = D_r^-1/2 U_r^T k(negatives, x)): z = G^-1 (v - mu_B),
u^2 = max(k(x, x) - |v|^2, 0), N = sqrt(z.z + u^2 / lambda^2), score
[z.z' + (k(x, x') - v.v') / lambda^2] / (N N'); what `slem-match -c CACHE` ranks with a
cache of `slem-negstats --kernel hellinger-dot --factor kpca --rank R --lambda L`.

basic: src/basic_encoder.m (no bias, uncentred): w = (S0 + lambda I + theta x0 x0^T)^-1
(theta x0 - mu), S0 = (1/n) X X^T the negatives' uncentred second moment, normalised (its
w_normalized); the score of a query and a database row is the inner product of their w,
as its simi = Wposi' * Wposi: what `slem-match -d DB.fvecs` ranks with both encoded by
`slem-encode -c CACHE --basic --theta THETA` of `slem-negstats --lambda L`.

mixed: src/SLEM_whitening.m with `mixed`: A = cov([Xposi Xnega]') + lambda I (MATLAB's cov:
centred on the union's mean, divided by N - 1), [U, D] = svd(A), Xwh = D^alpha U'
(x - mean(Xposi)), scored by the cosine (its simi ./ (NN NN')); the positives are the
database: what `slem-match -d DB.fvecs` ranks with both encoded by `slem-encode -c CACHE
--alpha ALPHA` of `slem-negstats --eigen --mixed DATABASE --lambda L`.

Scores are printed with %.9g (slem-match's float32), rankings as slem-match's tsv (query
and row counted from 0, ties to the lower row).

usage: gen-authors-variants.py hellinger-dot NEGATIVES QUERIES DATABASE RANK LAMBDA K > golden.tsv
       gen-authors-variants.py basic NEGATIVES QUERIES DATABASE THETA LAMBDA K > golden.tsv
       gen-authors-variants.py mixed NEGATIVES QUERIES DATABASE ALPHA LAMBDA K > golden.tsv
"""

import sys

import numpy as np

from vecfiles import read_fvecs


def hellinger_dot(a, b):
    """incomplete_chol.m, 'hellinger': |a_i . b_j|^(1/2), a(m, d), b(p, d)."""
    return np.sqrt(np.abs(a @ b.T))


def kernel_exact(neg, q, db, r, lam):
    """The exact (uncoupled) kernel SLEM similarity of q and db on the kernel PCA factor."""
    n = neg.shape[0]
    ev, u_ = np.linalg.eigh(hellinger_dot(neg, neg))
    ev, u_ = ev[-r:][::-1], u_[:, -r:][:, ::-1]
    b = u_ * np.sqrt(ev)                                        # B = U_r sqrt(D_r), n x r
    mu = b.mean(0)
    g = b.T @ b / n - np.outer(mu, mu) + lam * np.eye(r)

    def encode(x):
        v = (u_.T @ hellinger_dot(neg, x)) / np.sqrt(ev)[:, None]   # r x m
        kxx = np.sqrt(np.abs((x * x).sum(1)))
        u2 = np.maximum(kxx - (v * v).sum(0), 0)
        z = np.linalg.solve(g, v - mu[:, None])
        return v, z, np.sqrt((z * z).sum(0) + u2 / lam / lam)

    vq, zq, nq = encode(q)
    vd, zd, nd = encode(db)
    simi = zq.T @ zd + (hellinger_dot(q, db) - vq.T @ vd) / lam / lam
    return simi / np.outer(nq, nd)


def basic(neg, x, theta, lam):
    """Wposi (m, p) of basic_encoder.m for the rows of x, normalised."""
    n, p = neg.shape
    mu = neg.mean(0)
    a = neg.T @ neg / n + lam * np.eye(p)
    w = np.empty_like(x)
    for i, x0 in enumerate(x):
        w[i] = np.linalg.solve(a + theta * np.outer(x0, x0), theta * x0 - mu)
    return w / np.linalg.norm(w, axis=1)[:, None]


def whitening_mixed(neg, pos, x, alpha, lam):
    """Xwh of SLEM_whitening.m (mixed) for the rows of x, normalised, rows (m, p)."""
    both = np.vstack([pos, neg])
    a = np.cov(both.T) + lam * np.eye(neg.shape[1])
    u_, dd, _ = np.linalg.svd(a)
    xwh = (dd[:, None] ** alpha) * (u_.T @ (x - pos.mean(0)).T)
    return (xwh / np.linalg.norm(xwh, axis=0)).T


def main():
    mode, negp, qp, dbp, par, lam, k = sys.argv[1:8]
    lam, k = float(lam), int(k)
    neg, q, db = read_fvecs(negp), read_fvecs(qp), read_fvecs(dbp)
    if mode == "hellinger-dot":
        simi = kernel_exact(neg, q, db, int(par), lam)
    elif mode == "basic":
        simi = basic(neg, q, float(par), lam) @ basic(neg, db, float(par), lam).T
    elif mode == "mixed":
        simi = (whitening_mixed(neg, db, q, float(par), lam) @
                whitening_mixed(neg, db, db, float(par), lam).T)
    else:
        sys.exit("gen-authors-variants.py: hellinger-dot, basic or mixed, not " + mode)
    out = sys.stdout
    for i in range(q.shape[0]):
        order = np.lexsort((np.arange(db.shape[0]), -simi[i]))[:k]
        for rank, j in enumerate(order, 1):
            out.write("%d\t%d\t%d\t%.9g\n" % (i, rank, j, np.float32(simi[i, j])))


if __name__ == "__main__":
    main()
