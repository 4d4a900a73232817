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

calibration: Platt's sigmoid per exemplar, fitted independently of slem's Newton method:
scipy.optimize.minimize (trust-exact, exact gradient and Hessian, then scipy.optimize.root
on its gradient) on the same negative log-likelihood with Platt's targets (N+ + 1)/(N+ + 2) and 1/(N- + 2), checked against
scikit-learn's own sigmoid calibration (CalibratedClassifierCV(method='sigmoid') calls it):
  clf-digits20.fvecs     the LinearSVC classifiers of the digits case, as float32 (w, b)
  digits-q20.labels      their labels (the first 20 test queries' digits)
  calib-digits20.txt     "a b" per exemplar, P = 1 / (1 + exp(-a (s - b))), with the
                         validation digits as positives (same digit) and negatives (other
                         digits) and the 597 digit negatives as held-out negatives

expand (testdata/expand/): query expansion by the formula of dirtorch's expand_descriptors,
normalise(q + sum_{j <= n} s_j^alpha x_j) over the top n by cosine (ties to the lower row),
written with numpy from the definition (not from slem's code):
  q.fvecs, q.ids      50 test digits, L2-normalised; db.fvecs, db.ids: 200 database digits
  aqe-n2.txt          n 2, alpha 0 (AQE) of q against db, %.9g
  aqe-n5-a3.txt       n 5, alpha 3 (alpha-QE)
  dba-n2.txt          n 2, alpha 0 of db against itself, self excluded (DBA)
"""
import os

import numpy as np
from scipy.optimize import minimize, root
from sklearn.calibration import _sigmoid_calibration
from sklearn.svm import LinearSVC
from vecfiles import read_fvecs, write_fvecs

OUT = "testdata/esvm"
DIGITS = "testdata/digits"


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


def platt(pos, neg):
    """(a, b) of 1 / (1 + exp(-a (s - b))) by scipy on Platt's likelihood; z = A s + B."""
    s = np.concatenate([pos, neg])
    t = np.concatenate([np.full(len(pos), (len(pos) + 1.0) / (len(pos) + 2.0)),
                        np.full(len(neg), 1.0 / (len(neg) + 2.0))])

    def f(p):
        z = p[0] * s + p[1]
        return np.sum(np.logaddexp(0, z) - (1 - t) * z)

    def g(p):
        z = p[0] * s + p[1]
        r = 1 / (1 + np.exp(-z)) - (1 - t)  # d/dz
        return np.array([np.sum(r * s), np.sum(r)])

    def h(p):
        z = p[0] * s + p[1]
        w = 1 / (1 + np.exp(-z)) * (1 / (1 + np.exp(z)))
        return np.array([[np.sum(w * s * s), np.sum(w * s)], [np.sum(w * s), np.sum(w)]])

    x0 = np.array([0.0, np.log((len(neg) + 1.0) / (len(pos) + 1.0))])
    res = minimize(f, x0, jac=g, hess=h, method="trust-exact", options={"gtol": 1e-10})
    # trust-exact stalls near 1e-8 in the gradient: solve g = 0 from there (the NLL is
    # strictly convex, so its stationary point is the minimum)
    res = root(g, res.x, jac=h, method="hybr", tol=1e-15)
    # the gradient over the Hessian's smallest eigenvalue bounds the distance to the optimum
    step = np.max(np.abs(g(res.x))) / np.linalg.eigvalsh(h(res.x))[0]
    assert step < 1e-10 * np.max(np.abs(res.x)), res
    A, B = res.x
    # scikit-learn's sigmoid calibration: the same model, fitted by BFGS
    y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    skA, skB = _sigmoid_calibration(s, y)
    assert abs(skA - A) <= 1e-3 * abs(A) and abs(skB - B) <= 1e-3 * (1 + abs(B)), (A, B, skA, skB)
    return -A, -B / A


def calibration():
    ref = np.load(f"{OUT}/ref-digits.npy")
    clf = ref.astype("<f4").astype(np.float64)  # the float32 file is the input
    write_fvecs(f"{OUT}/clf-digits20.fvecs", clf)
    qlab = open(f"{DIGITS}/queries.labels").read().split()[:20]
    with open(f"{OUT}/digits-q20.labels", "w") as f:
        f.write("".join(f"{x}\n" for x in qlab))
    val = read_fvecs(f"{DIGITS}/validation.fvecs")
    vlab = open(f"{DIGITS}/validation.labels").read().split()
    held = read_fvecs(f"{DIGITS}/negatives.fvecs")
    W, b = clf[:, :-1], clf[:, -1]
    sval, sheld = val @ W.T + b, held @ W.T + b
    with open(f"{OUT}/calib-digits20.txt", "w") as f:
        for e in range(len(clf)):
            same = np.array([v == qlab[e] for v in vlab])
            a, bb = platt(sval[same, e], np.concatenate([sval[~same, e], sheld[:, e]]))
            f.write(f"{a:.17g} {bb:.17g}\n")


def expanded(q, db, n, alpha, exclude_self=False):
    sim = q @ db.T
    if exclude_self:
        np.fill_diagonal(sim, -np.inf)
    out = np.empty_like(q)
    for i in range(q.shape[0]):
        order = np.lexsort((np.arange(db.shape[0]), -sim[i]))
        gap = sim[i, order[n - 1]] - sim[i, order[n]]
        assert gap > 2e-6, f"near-tie at rank {n} for vector {i}: choose other data"
        v = q[i] + sum(db[j] * sim[i, j] ** alpha for j in order[:n])
        out[i] = v / np.linalg.norm(v)
    return out


def expand():
    out = "testdata/expand"
    os.makedirs(out, exist_ok=True)
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    q = unit(read_fvecs(f"{DIGITS}/queries.fvecs")[:50]).astype("<f4").astype(np.float64)
    db = unit(read_fvecs(f"{DIGITS}/database.fvecs")[:200]).astype("<f4").astype(np.float64)
    write_fvecs(f"{out}/q.fvecs", q)
    write_fvecs(f"{out}/db.fvecs", db)
    for name, src, k in (("q.ids", "queries.ids", 50), ("db.ids", "database.ids", 200)):
        with open(f"{out}/{name}", "w") as f:
            f.write("".join(open(f"{DIGITS}/{src}").readlines()[:k]))
    np.savetxt(f"{out}/aqe-n2.txt", expanded(q, db, 2, 0), fmt="%.9g")
    np.savetxt(f"{out}/aqe-n5-a3.txt", expanded(q, db, 5, 3), fmt="%.9g")
    np.savetxt(f"{out}/dba-n2.txt", expanded(db, db, 2, 0, exclude_self=True), fmt="%.9g")


if __name__ == "__main__":
    esvm()
    calibration()
    expand()
