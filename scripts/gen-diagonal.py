#!/usr/bin/python3
"""Generate the references of diagonal SLEM in testdata/family/ (run once; the outputs are
committed). Needs Debian's python3-numpy: run it as /usr/bin/python3 scripts/gen-diagonal.py
from the top of the tree. `make check` needs no Python.

Written from the definition, not from slem's code: over the negatives X (n, d), mu the mean
and s_k = (1/n) sum_i (x_ik - mu_k)^2 the variance of coordinate k (divided by n, as slem's
Sigma); A = diag(s) + lambda I; the descriptor of x is A^-1 (x - mu) / |A^-1 (x - mu)|.

  diagonal-rel1.txt   the digits' queries (testdata/digits/queries.fvecs) against the
                      digits' negatives, lambda = 1 * trace(Sigma) / d (--lambda-rel 1, the
                      default), one row per query, %.17g
  diagonal-l0.5.txt   the same with lambda = 0.5 (--lambda 0.5)
  diagonal-lambda.txt the lambda of each, as the cache's JSON header records it
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vecfiles import read_fvecs  # noqa: E402

neg = read_fvecs("testdata/digits/negatives.fvecs")
qry = read_fvecs("testdata/digits/queries.fvecs")
mu = neg.mean(axis=0)
s = ((neg - mu) ** 2).mean(axis=0)
d = neg.shape[1]
out = "testdata/family"
lambdas = {}
for name, lam in (("rel1", s.sum() / d), ("l0.5", 0.5)):
    y = (qry - mu) / (s + lam)
    nrm = np.linalg.norm(y, axis=1, keepdims=True)
    y = np.where(nrm > 0, y / np.where(nrm > 0, nrm, 1), 0)
    np.savetxt(f"{out}/diagonal-{name}.txt", y, fmt="%.17g")
    lambdas[name] = lam
with open(f"{out}/diagonal-lambda.txt", "w") as f:
    for name, lam in lambdas.items():
        f.write(f"{name} {lam:.17g}\n")
