#!/usr/bin/python3
"""Reference p-value of slem-report's paired randomisation test, by scipy.

Usage: permtest-ref.py A.txt B.txt [N_RESAMPLES [SEED]]
A.txt and B.txt are `slem-eval --per-query` outputs of two runs on one ground truth; the
test pairs the AP of the queries evaluated in both ("ok" or "missing"), statistic the
mean of B - A, two-sided, as scipy.stats.permutation_test(permutation_type="samples")
computes it: exactly over all 2^n sign flips when 2^n <= N_RESAMPLES (default 10000),
else from N_RESAMPLES random ones (SEED, default 1). Prints the p-value with 17 digits.
testdata/eval/permtest.txt holds its answers for tests/cli-report.sh; remake them with
`sh scripts/gen-permtest.sh >testdata/eval/permtest.txt`.
"""
import sys

import numpy as np
from scipy import stats


def per_query(path):
    ap = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) >= 9 and fields[8].strip() in ("ok", "missing"):
                ap[fields[0]] = float(fields[1])
    return ap


def main():
    a, b = per_query(sys.argv[1]), per_query(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    keys = [k for k in a if k in b]
    x = np.array([a[k] for k in keys])
    y = np.array([b[k] for k in keys])
    res = stats.permutation_test((y, x), lambda u, v, axis: np.mean(u - v, axis=axis),
                                 permutation_type="samples", alternative="two-sided",
                                 n_resamples=n, random_state=seed)
    print("%.17g" % res.pvalue)


if __name__ == "__main__":
    main()
