#!/usr/bin/python3
"""Generate the references in testdata/esvm/ (run once; the outputs are committed).

Needs Debian's python3-numpy, python3-scipy and python3-sklearn: run it as
/usr/bin/python3 scripts/gen-esvm.py from the top of the tree. `make check` needs no Python.

esvm: exemplar SVMs by scikit-learn's LinearSVC (its own bundled LIBLINEAR, not the Debian
library slem links), one per positive against all negatives, with the same C, class weights
and intercept settings as slem-esvm and a tolerance far tighter than slem's default:
  ref-<case>.npy   w (d values) then b (intercept_), float64, one row per positive;
  ref-<case>.txt   the same as text (%.17g), for the CLI tests.
The cases are listed in esvm/cases.txt: name, C, positive weight, loss, bias.
"""
import os

import numpy as np
from sklearn.svm import LinearSVC

OUT = "testdata/esvm"
DIGITS = "testdata/digits"


def read_fvecs(path):
    raw = np.fromfile(path, dtype="<f4")
    d = raw[:1].view("<i4")[0]
    return raw.reshape(-1, d + 1)[:, 1:].astype(np.float64)


def write_fvecs(path, x):
    x = np.asarray(x, dtype="<f4")
    d = np.full((x.shape[0], 1), x.shape[1], dtype="<i4").view("<f4")
    np.hstack([d, x]).tofile(path)


def exemplar_svm(x0, neg, C, wpos, loss, bias):
    """w and b of LinearSVC on x0 (label 1) against neg (label -1)."""
    X = np.vstack([x0[None, :], neg])
    y = np.concatenate([[1], -np.ones(neg.shape[0], dtype=int)])
    m = LinearSVC(C=C, loss=loss, class_weight={1: wpos, -1: 1.0}, dual=True,
                  fit_intercept=bias > 0, intercept_scaling=bias if bias > 0 else 1.0,
                  tol=1e-10, max_iter=1000000, random_state=0)
    m.fit(X, y)
    b = float(m.intercept_[0]) if bias > 0 else 0.0
    return np.append(m.coef_[0], b)


def esvm():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261122)
    d, n = 32, 300
    mix = rng.standard_normal((d, d)) * np.linspace(0.2, 2.0, d)
    offset = 0.5 * rng.standard_normal(d)
    neg = rng.standard_normal((n, d)) @ mix.T + offset
    pos = rng.standard_normal((12, d)) @ mix.T + offset + 1.5 * rng.standard_normal(d)
    # unit length, as exemplar-SVM features usually are: LIBLINEAR 2.3's dual solvers stop
    # after 1000 passes, which unnormalised vectors with a common offset can reach before
    # a tight tolerance (slem-esvm then loosens it); the digits below are left raw.
    # The float32 files are the inputs: the references start from the same rounded values.
    neg, pos = (a / np.linalg.norm(a, axis=1, keepdims=True) for a in (neg, pos))
    neg, pos = (a.astype("<f4").astype(np.float64) for a in (neg, pos))
    write_fvecs(f"{OUT}/neg.fvecs", neg)
    write_fvecs(f"{OUT}/pos.fvecs", pos)
    cases = [
        ("default", neg, pos, 1.0, 1.0, "hinge", 1.0),
        ("l2", neg, pos, 0.1, 50.0, "squared_hinge", 2.0),
        ("nobias", neg, pos, 0.5, 5.0, "hinge", 0.0),
    ]
    # the demo digits: the first 20 test queries against the 597 negatives
    dneg, dq = read_fvecs(f"{DIGITS}/negatives.fvecs"), read_fvecs(f"{DIGITS}/queries.fvecs")[:20]
    write_fvecs(f"{OUT}/digits-q20.fvecs", dq)
    cases.append(("digits", dneg, dq, 1.0, 1.0, "hinge", 1.0))
    with open(f"{OUT}/cases.txt", "w") as f:
        f.write("# name C pos_weight solver bias\n")
        for name, N, P, C, wpos, loss, bias in cases:
            ref = np.array([exemplar_svm(x, N, C, wpos, loss, bias) for x in P])
            np.save(f"{OUT}/ref-{name}.npy", ref)
            np.savetxt(f"{OUT}/ref-{name}.txt", ref, fmt="%.17g")
            f.write(f"{name} {C:g} {wpos:g} {'l1' if loss == 'hinge' else 'l2'} {bias:g}\n")


if __name__ == "__main__":
    esvm()
