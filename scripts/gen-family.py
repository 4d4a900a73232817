#!/usr/bin/python3
"""Generate the references in testdata/family/ (run once; the outputs are committed).

Needs Debian's python3-numpy and python3-sklearn: run it as /usr/bin/python3
scripts/gen-family.py from the top of the tree. `make check` needs no Python.
Every formula is written here with numpy from its definition (not from slem's code).

groups (several positives per exemplar, slem-encode --groups):
  neg.fvecs        150 negatives, d 6, correlated Gaussian
  pos.fvecs        25 positives; pos.groups names the group of each (9 groups, one of
                   them a single row), in a shuffled order
  groups-desc.npy  per group in order of first appearance, float64:
                   y = (Sigma + lambda I)^-1 (x0 - mu) / |...|, x0 = mean of the group's
                   rows, lambda 0.05
  groups-clf.npy   the classifier (omega, nu) of the same positives, theta 2:
                   omega = 2 theta / (theta delta.A^-1 delta + theta + 1) A^-1 delta,
                   nu = (theta - 1)/(theta + 1) - (theta x0 + mu).omega / (theta + 1)
  groups.txt       groups-desc as text (%.17g), for the CLI test
lda (lambda = 0 is LDA's direction):
  lda-neg.fvecs    class B, 400 Gaussian rows, d 5
  lda-pos.fvecs    class A = class B shifted by a constant vector, so that both classes
                   have exactly the same empirical covariance (LDA's assumption)
  lda-coef.npy     scikit-learn's LinearDiscriminantAnalysis(solver='lsqr').coef_ on
                   A (label 1) against B (label 0), float64
whitening (slem-encode --alpha, slem-negstats --eigen), on neg.fvecs and pos.fvecs:
  whiten.npy       (Sigma + lambda I)^A (x - mu) normalised, lambda 0.05, for A = -1, -0.5,
                   0, 0.3 (25 rows each, in that order), from numpy's eigh;
                   whiten-m1.txt, whiten-m05.txt, whiten-p03.txt: A = -1, -0.5, 0.3 as text
  sk-white.npy     scikit-learn's PCA(whiten=True) of pos (fitted on neg), rows normalised:
                   a rotation of A = -1/2 at lambda 0, so their Gram matrices agree
PCA-reduced SLEM (slem-negstats --pca R):
  pca-r3.npy       (Lambda_3 + lambda I)^-1 U^T (x - mu) normalised, lambda = 0.5 trace(Sigma)/d
                   of the full Sigma, each eigenvector's largest entry made positive
  pca-r3.txt       the same as text; pca-r3.kept: sum of the top 3 eigenvalues / trace
recursive SLEM (slem-negstats --depth K), on neg.fvecs and pos.fvecs, lambda_rel 0.5:
  rec-d2.txt, rec-d3.txt  pos encoded through K = 2, 3 stages: stage s + 1 computes mu,
                   Sigma and lambda = 0.5 trace(Sigma)/d from the negatives encoded
                   (normalised) by stages 1..s; a vector passes through every stage in turn
  rec.npy          the same, K = 1, 2, 3 stacked (25 rows each), float64
The fvecs inputs are float32; every reference is computed from the float32 values.
"""
import os

import numpy as np
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from vecfiles import read_fvecs, write_fvecs

OUT = "testdata/family"


def stats(neg):
    mu = neg.mean(axis=0)
    c = neg - mu
    return mu, c.T @ c / len(neg)


def slem(x0, mu, sigma, lam, theta=None):
    a = sigma + lam * np.eye(len(mu))
    delta = x0 - mu
    y = np.linalg.solve(a, delta)
    if theta is None:
        return y / np.linalg.norm(y)
    omega = 2 * theta / (theta * delta @ y + theta + 1) * y
    nu = (theta - 1) / (theta + 1) - (theta * x0 + mu) @ omega / (theta + 1)
    return np.concatenate([omega, [nu]])


def groups(rng):
    d = 6
    m = rng.normal(size=(d, d)) * np.linspace(0.3, 2.0, d)
    neg = write_fvecs(f"{OUT}/neg.fvecs", rng.normal(size=(150, d)) @ m.T + 0.5)
    neg = neg.astype(np.float64)
    sizes = [3, 1, 4, 2, 5, 2, 3, 3, 2]
    names = [f"g{k}" for k in rng.permutation(len(sizes))]
    labels = [names[k] for k, s in enumerate(sizes) for _ in range(s)]
    labels = [labels[i] for i in rng.permutation(len(labels))]
    pos = write_fvecs(f"{OUT}/pos.fvecs", rng.normal(size=(len(labels), d)) @ m.T + 1.5)
    pos = pos.astype(np.float64)
    with open(f"{OUT}/pos.groups", "w") as f:
        f.write("".join(s + "\n" for s in labels))
    order = list(dict.fromkeys(labels))
    mu, sigma = stats(neg)
    desc, clf = [], []
    for g in order:
        x0 = pos[[i for i, s in enumerate(labels) if s == g]].mean(axis=0)
        desc.append(slem(x0, mu, sigma, 0.05))
        clf.append(slem(x0, mu, sigma, 0.05, theta=2.0))
    np.save(f"{OUT}/groups-desc.npy", np.array(desc))
    np.save(f"{OUT}/groups-clf.npy", np.array(clf))
    with open(f"{OUT}/groups-order.txt", "w") as f:
        f.write("".join(s + "\n" for s in order))
    with open(f"{OUT}/groups.txt", "w") as f:
        for row in desc:
            f.write(" ".join("%.17g" % v for v in row) + "\n")


def lda(rng):
    d = 5
    m = rng.normal(size=(d, d)) * np.linspace(0.5, 1.5, d)
    z = np.round(rng.normal(size=(400, d)) @ m.T * 1024) / 1024  # the shift below is exact
    neg = write_fvecs(f"{OUT}/lda-neg.fvecs", z).astype(np.float64)
    pos = write_fvecs(f"{OUT}/lda-pos.fvecs", z[:400] + np.array([1.0, -0.5, 0.25, 2.0, 0.0]))
    pos = pos.astype(np.float64)
    x = np.vstack([pos, neg])
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    clf = LinearDiscriminantAnalysis(solver="lsqr").fit(x, y)
    np.save(f"{OUT}/lda-coef.npy", clf.coef_.astype(np.float64))


def eig_desc(sigma):
    s, v = np.linalg.eigh(sigma)
    s, v = s[::-1], v[:, ::-1].T.copy()  # rows, largest first
    for k in range(len(s)):
        if v[k, np.argmax(np.abs(v[k]))] < 0:
            v[k] = -v[k]
    return s, v


def unit(y):
    return y / np.linalg.norm(y, axis=1, keepdims=True)


def whitening():
    neg = read_fvecs(f"{OUT}/neg.fvecs")
    pos = read_fvecs(f"{OUT}/pos.fvecs")
    mu, sigma = stats(neg)
    s, v = eig_desc(sigma)
    rows = []
    for a in (-1.0, -0.5, 0.0, 0.3):
        m = v.T @ np.diag((np.maximum(s, 0) + 0.05) ** a) @ v
        rows.append(unit((pos - mu) @ m.T))
    np.save(f"{OUT}/whiten.npy", np.vstack(rows))
    for name, y in zip(("m1", "m05", "0", "p03"), rows):
        if name != "0":
            with open(f"{OUT}/whiten-{name}.txt", "w") as f:
                for row in y:
                    f.write(" ".join("%.17g" % t for t in row) + "\n")
    pca = PCA(whiten=True).fit(neg)
    np.save(f"{OUT}/sk-white.npy", unit(pca.transform(pos)))
    lam = 0.5 * np.trace(sigma) / len(mu)
    y = unit(((pos - mu) @ v[:3].T) / (s[:3] + lam))
    np.save(f"{OUT}/pca-r3.npy", y)
    with open(f"{OUT}/pca-r3.txt", "w") as f:
        for row in y:
            f.write(" ".join("%.17g" % t for t in row) + "\n")
    with open(f"{OUT}/pca-r3.kept", "w") as f:
        f.write("%.17g\n" % (s[:3].sum() / np.trace(sigma)))


def recursive():
    neg = read_fvecs(f"{OUT}/neg.fvecs")
    pos = read_fvecs(f"{OUT}/pos.fvecs")
    d = neg.shape[1]
    stages = []

    def encode(x, upto):
        for mu, a in stages[:upto]:
            y = np.linalg.solve(a, (x - mu).T).T
            x = unit(y)
        return x

    out = []
    for k in range(3):
        z = encode(neg, k)
        mu, sigma = stats(z)
        stages.append((mu, sigma + 0.5 * np.trace(sigma) / d * np.eye(d)))
        y = encode(pos, k + 1)
        out.append(y)
        if k:
            with open(f"{OUT}/rec-d{k + 1}.txt", "w") as f:
                for row in y:
                    f.write(" ".join("%.17g" % t for t in row) + "\n")
    np.save(f"{OUT}/rec.npy", np.vstack(out))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(11)
    groups(rng)
    lda(rng)
    whitening()
    recursive()


if __name__ == "__main__":
    main()
