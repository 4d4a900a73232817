#!/usr/bin/env python3
"""Exact reference for the linear SLEM classifier of positives of huge magnitude
(testdata/golden/classifier-huge.txt, read by tests/check_numeric.c).

slem-encode --classifier on finite inputs of magnitude 1e160 wrote NaN: q = delta^T A^-1 delta
overflowed double precision (issue 43, section 6). This script computes, in exact rational
arithmetic (Python's fractions, no numpy: the reference owes nothing to floating point), the
closed form of DESIGN.md section 1 for a few negatives and positives of magnitudes 1e3 to
1e300, and prints omega and nu rounded once to float64 (%.17g):

    mu = (1/n) sum x_i,  Sigma = (1/n) sum (x_i - mu)(x_i - mu)^T,  A = Sigma + lambda I
    delta = x0 - mu,  omega = 2 theta / (theta delta^T A^-1 delta + theta + 1) A^-1 delta
    nu = (theta - 1)/(theta + 1) - (theta x0 + mu)^T omega / (theta + 1)

Every input is a float64 (the positives as Python floats, the values C's strtod gives for the
same text), taken exactly. Run: python3 scripts/gen-classifier-huge.py >testdata/golden/classifier-huge.txt

With the argument `basic` it prints instead the authors' basic descriptor (slem-encode --basic,
lib/encode/var_basic.c) of the positives of POS_BASIC for theta 2 (the rows of
testdata/golden/basic-huge.txt, read by tests/cli-numeric.sh, in the order of its input):
    w = (S0 + lambda I + theta x0 x0^T)^-1 (theta x0 - mu), normalised,
S0 = (1/n) sum x_i x_i^T, the negatives' uncentred second moment; the norm is taken in
float64 after the exact w is rounded, then %.9g (slem writes float32).
"""
import math
import sys
from fractions import Fraction as F

NEG = [[1, 2, -1], [0, -3, 2], [4, 1, 1], [-2, 0, 3], [1, 1, 0], [3, -2, -2]]
LAMBDA = 0.5
THETAS = [1e-300, 1e-3, 1.0, 1e3, 1e200]
POS = [[3.0, -1.0, 2.5], [1.5e3, -2.25e3, 7e2],
       [1.5e160, -2.25e160, 7e159], [-3e200, 1e199, 2.5e200], [1.7e300, -1.1e300, 9e299]]


def solve(a, b):
    """x with a x = b, by Gaussian elimination in fractions (a is positive definite)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for k in range(n):
        for i in range(k + 1, n):
            f = m[i][k] / m[k][k]
            for j in range(k, n + 1):
                m[i][j] -= f * m[k][j]
    x = [F(0)] * n
    for i in reversed(range(n)):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


POS_BASIC = [[3.0, -1.0, 2.5], [1.5e160, -2.25e160, 7e159], [-3e200, 1e199, 2.5e200]]


def basic():
    n, d = len(NEG), len(NEG[0])
    neg = [[F(v) for v in row] for row in NEG]
    mu = [sum(row[j] for row in neg) / n for j in range(d)]
    th = F(2)
    for x0f in POS_BASIC:
        x0 = [F(v) for v in x0f]
        m = [[sum(row[i] * row[j] for row in neg) / n + (F(LAMBDA) if i == j else 0) + th * x0[i] * x0[j]
              for j in range(d)] for i in range(d)]
        w = [float(v) for v in solve(m, [th * x0[j] - mu[j] for j in range(d)])]
        nrm = math.sqrt(sum(v * v for v in w))
        print(" ".join("%.9g" % (v / nrm) for v in w))


def main():
    if sys.argv[1:] == ["basic"]:
        basic()
        return
    n, d = len(NEG), len(NEG[0])
    neg = [[F(v) for v in row] for row in NEG]
    mu = [sum(row[j] for row in neg) / n for j in range(d)]
    a = [[sum((row[i] - mu[i]) * (row[j] - mu[j]) for row in neg) / n + (F(LAMBDA) if i == j else 0)
          for j in range(d)] for i in range(d)]
    print("# negatives n d lambda, then their rows; then theta x0 (d) omega (d) nu per line")
    print(n, d, repr(LAMBDA))
    for row in NEG:
        print(" ".join(str(v) for v in row))
    for x0f in POS:
        x0 = [F(v) for v in x0f]
        delta = [x0[j] - mu[j] for j in range(d)]
        y = solve(a, delta)
        q = sum(delta[j] * y[j] for j in range(d))
        for thf in THETAS:
            th = F(thf)
            s = 2 * th / (th * q + th + 1)
            w = [s * v for v in y]
            nu = (th - 1) / (th + 1) - sum((th * x0[j] + mu[j]) * w[j] for j in range(d)) / (th + 1)
            print(" ".join("%.17g" % float(v) for v in [th] + x0 + w + [nu]))


if __name__ == "__main__":
    main()
