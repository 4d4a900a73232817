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

nubeta: the linear branch of src/new_full_encoder.m (omega_normalized): K stages, each
from the negatives Wnega of the stage before (mu, invA = (1/n W W' - mu mu' + lambda I)^-1,
lambda absolute at every stage), the positives' descriptors [nu; beta] normalised with
C = 2 / (theta Delta.invA Delta + theta + 1), and, before the next stage, mean_scores over
the first 100 positives of their descriptor's score on [1; x], theta_n = theta +
((1 + m)^2 / (1 - m)^2) / 2, the negatives' [nu; beta] with theta_n and C_n = 1 / (...)
(the MATLAB's numerator 1); x is the positive's input to the stage (the original positive
at stage 1, as the MATLAB, whose [1; Xposi] has only stage 1's dimension). The positives
are the database, the queries encoded by the same stages: what `slem-match -d DB.fvecs`
ranks with both encoded by `slem-encode -c CACHE` of `slem-negstats --depth K
--adaptive-theta DATABASE --theta THETA --lambda L`; the score is simi = Wposi' * Wposi.

Scores are printed with %.9g (slem-match's float32), rankings as slem-match's tsv (query
and row counted from 0, ties to the lower row).

usage: gen-authors-variants.py hellinger-dot NEGATIVES QUERIES DATABASE RANK LAMBDA K > golden.tsv
       gen-authors-variants.py basic NEGATIVES QUERIES DATABASE THETA LAMBDA K > golden.tsv
       gen-authors-variants.py mixed NEGATIVES QUERIES DATABASE ALPHA LAMBDA K > golden.tsv
       gen-authors-variants.py nubeta NEGATIVES QUERIES DATABASE THETA LAMBDA K DEPTH > golden.tsv
"""

import sys

import numpy as np

from vecfiles import read_fvecs, write_ranking


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


def nubeta_stage(w, mu, inva, theta, c):
    """[nu; beta] of the columns of w (p, m), normalised: (p + 1, m)."""
    delta = w - mu[:, None]
    cc = c / (theta * (delta * (inva @ delta)).sum(0) + theta + 1)
    beta = cc * (inva @ delta)
    nu = (theta - 1) / (theta + 1) - (beta * (theta * w + mu[:, None])).sum(0) / (theta + 1)
    out = np.vstack([nu, beta])
    return out / np.linalg.norm(out, axis=0)


def nubeta(neg, pos, xs, theta, lam, depth):
    """new_full_encoder.m's linear branch: the descriptors of each x in xs (rows)."""
    wnega, wposi = neg.T, pos.T
    ws = [x.T for x in xs]
    n = wnega.shape[1]
    for kk in range(depth):
        p = wnega.shape[0]
        mu = wnega.mean(1)
        inva = np.linalg.inv(wnega @ wnega.T / n - np.outer(mu, mu) + lam * np.eye(p))
        new_posi = nubeta_stage(wposi, mu, inva, theta, 2)
        ws = [nubeta_stage(w, mu, inva, theta, 2) for w in ws]
        if kk < depth - 1:
            first = wposi[:, :100]
            m = (new_posi[:, :100] * np.vstack([np.ones(first.shape[1]), first])).sum(0).mean()
            theta_n = theta + ((1 + m) ** 2) / ((1 - m) ** 2) / 2
            wnega = nubeta_stage(wnega, mu, inva, theta_n, 1)
        wposi = new_posi
    return [w.T for w in ws]


def main():
    mode, negp, qp, dbp, par, lam, k = sys.argv[1:8]
    lam, k = float(lam), int(k)
    neg, q, db = read_fvecs(negp), read_fvecs(qp), read_fvecs(dbp)
    if mode == "hellinger-dot":
        simi = kernel_exact(neg, q, db, int(par), lam)
    elif mode == "basic":
        simi = basic(neg, q, float(par), lam) @ basic(neg, db, float(par), lam).T
    elif mode == "nubeta":
        eq, ed = nubeta(neg, db, [q, db], float(par), lam, int(sys.argv[8]))
        simi = eq @ ed.T
    elif mode == "mixed":
        simi = (whitening_mixed(neg, db, q, float(par), lam) @
                whitening_mixed(neg, db, db, float(par), lam).T)
    else:
        sys.exit("gen-authors-variants.py: hellinger-dot, basic, mixed or nubeta, not " + mode)
    write_ranking(sys.stdout, simi, k)


if __name__ == "__main__":
    main()
