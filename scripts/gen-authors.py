#!/usr/bin/python3
"""Float64 references of the authors' kernel SLEM, written from their MATLAB (rafarez/SLEM,
src/kernel_matrix.m for rbf), for the golden files of testdata/authors/:

couple: the coupled score of src/slem_similarity.m (the branch `if exist('perm', 'var')`).

The factor is the kernel PCA of slem_similarity.m (B = U_r D_r^1/2, the r largest
eigenpairs of K), with the coupling of its incomplete-Cholesky branch written for any
factor (w over all the negatives: on the pivots of an ICD it is 0): what
`slem-match -c CACHE --couple authors` computes with a cache of
`slem-negstats --kernel rbf:gamma=G --factor kpca --rank R --lambda L --couple`.

classifier: the exemplar classifiers of the kernel branch of src/new_full_encoder.m (its
first stage: b_0 = B(1:r,:) \\ k_0, here v = B \\ k_0 of the same kernel PCA factor),
C = 2 / (1 + 1/theta + delta.G^-1 delta), omega = C G^-1 delta, nu = (theta - 1)/(theta + 1)
- omega.(theta v + mu) / (theta + 1), scoring the database rows' v by omega.v + nu: what
`slem-match --affine -d DB.coords QUERIES.clf` ranks with `slem-encode --classifier --theta
THETA` of the queries and `slem-encode --coordinates` of the database.

Scores are printed with %.9g (slem-match's float32), rankings as slem-match's tsv.

squares: the digits' negatives and queries squared (exact in float32: integers up to 16),
so that `intersection:gamma=2` (kernel_matrix.m's 'inter' with its exponent) on the digits
can be checked against the plain intersection on the squares, byte for byte.

usage: gen-authors.py couple NEGATIVES QUERIES DATABASE GAMMA RANK LAMBDA K > golden.tsv
       gen-authors.py classifier NEGATIVES QUERIES DATABASE GAMMA RANK LAMBDA K THETA > golden.tsv
       gen-authors.py squares DIGITS_DIR OUT_DIR
"""

import sys

import numpy as np

from vecfiles import read_fvecs, write_fvecs, write_ranking


def rbf(a, b, gamma):
    """kernel_matrix.m, 'rbf': exp(-gamma |a_i - b_j|^2), a(m, d), b(p, d)."""
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    return np.exp(-gamma * sq)


def factor(neg, x, gamma, r, lam):
    """B (n, r), mu_B, G and v (r, m) of the rows of x."""
    n = neg.shape[0]
    kk = rbf(neg, neg, gamma)
    ev, u_ = np.linalg.eigh(kk)
    b = u_[:, -r:][:, ::-1] * np.sqrt(ev[-r:][::-1])          # B = U_r sqrt(D_r), n x r
    mu = b.mean(0)
    sigma = b.T @ b / n - np.outer(mu, mu)
    g = sigma + lam * np.eye(r)
    k0 = rbf(neg, x, gamma)                                     # n x m
    v = np.linalg.lstsq(b, k0, rcond=None)[0]                   # r x m, v = B \ k_0
    return b, mu, g, v, k0


def encode(neg, x, gamma, r, lam):
    """betahat (r, m), v (r, m) and NN (m) of slem_similarity.m for the rows of x."""
    n = neg.shape[0]
    b, mu, g, v, k0 = factor(neg, x, gamma, r, lam)
    k00d = np.ones(x.shape[0])                                  # rbf: k(x, x) = 1
    u = np.sqrt(k00d - (v * v).sum(0))
    w = (k0 - b @ v) / u
    wbar = w.mean(0)
    a00 = (w * w).sum(0) / n - wbar ** 2 + lam
    a0 = b.T @ w / n - np.outer(mu, wbar)
    ga0 = np.linalg.solve(g, a0)
    gv = np.linalg.solve(g, v - mu[:, None])
    eta = 1 / (a00 - (a0 * ga0).sum(0))
    xi = u - wbar - (a0 * gv).sum(0)
    beta = -(eta * xi) * ga0 + gv                               # betahat, r x m
    nn = np.sqrt((beta * beta).sum(0) + (k00d - (v * v).sum(0)) / lam / lam)
    return beta, v, nn


def classifier(neg, x, gamma, r, lam, theta):
    """omega (r, m) and nu (m) of new_full_encoder.m's kernel branch for the rows of x."""
    _, mu, g, v, _ = factor(neg, x, gamma, r, lam)
    delta = v - mu[:, None]
    gd = np.linalg.solve(g, delta)
    c = 2 / (1 + 1 / theta + (delta * gd).sum(0))
    omega = c * gd
    nu = (theta - 1) / (theta + 1) - (omega * (theta * v + mu[:, None])).sum(0) / (theta + 1)
    return omega, nu


def main():
    if sys.argv[1] == "squares":
        for f in ("negatives", "queries"):
            write_fvecs("%s/%s-squared.fvecs" % (sys.argv[3], f),
                        read_fvecs("%s/%s.fvecs" % (sys.argv[2], f)) ** 2)
        return
    mode, negp, qp, dbp, gamma, r, lam, k = sys.argv[1:9]
    gamma, r, lam, k = float(gamma), int(r), float(lam), int(k)
    neg, q, db = read_fvecs(negp), read_fvecs(qp), read_fvecs(dbp)
    if mode == "couple":
        bq, vq, nq = encode(neg, q, gamma, r, lam)
        bd, vd, nd = encode(neg, db, gamma, r, lam)
        simi = bq.T @ bd + (rbf(q, db, gamma) - vq.T @ vd) / lam / lam
        simi /= np.outer(nq, nd)
    elif mode == "classifier":
        omega, nu = classifier(neg, q, gamma, r, lam, float(sys.argv[9]))
        vd = factor(neg, db, gamma, r, lam)[3]
        simi = omega.T @ vd + nu[:, None]
    else:
        sys.exit("gen-authors.py: couple or classifier, not " + mode)
    write_ranking(sys.stdout, simi, k)


if __name__ == "__main__":
    main()
