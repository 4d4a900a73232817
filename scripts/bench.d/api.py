#!/usr/bin/python3
"""The library case of scripts/bench (`--cases api`, issue 45): slem's Python package over
libslem.so against numpy and FAISS in one process, in memory, on the same arrays, each call
timed as the median of REPEAT runs after one warm-up run.

  api.py DIR THREADS REPEAT K [TOOLS_PREFIX]

DIR holds a case's neg.npy, enc.npy, q.npy and db.npy (scripts/bench's make_case) and
api.slem (slem-negstats -r 1 of the same negatives). THREADS goes to every slem call
(threads=); numpy's and FAISS's come from OPENBLAS_NUM_THREADS, which scripts/bench sets
to the same count (the same OpenBLAS: libblas.so.3 is OpenBLAS's). With TOOLS_PREFIX, the
outputs of the tools on the same data (TOOLS_PREFIX.fvecs of slem-encode, TOOLS_PREFIX.I.npy
and .D.npy of slem-match -F npy) are compared byte for byte with the package's. Prints one
JSON object on stdout; the slem side is left out ("slem_skipped": why) when the package does
not import (python/ of this tree, after make).
"""
import json
import os
import resource
import statistics
import sys
import time

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLOCK = 4096  # numpy's rows per GEMM, as scripts/bench.d/peers.py


def timed(f, repeat):
    """Median wall seconds of f() over repeat runs after a warm-up, and f()'s last result."""
    out = f()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def one_row(f, calls=2001):
    """Median seconds of one call of f, over calls calls after 100 warm-up calls."""
    for _ in range(100):
        f()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def numpy_stats(neg):
    """mu and A^-1, A = Sigma + lambda I with lambda = trace(Sigma) / d (lambda-rel 1), in
    float64: the numpy user's precomputed inverse (not timed)."""
    x = neg.astype(np.float64)
    mu = x.mean(axis=0)
    c = x - mu
    sigma = c.T @ c / len(x)
    lam = np.trace(sigma) / x.shape[1]
    return mu, np.linalg.inv(sigma + lam * np.eye(x.shape[1]))


def numpy_encode(x, mu, ainv):
    """(x - mu) @ A^-1, each row scaled to unit length, in float64 per block; float32 out."""
    out = np.empty(x.shape, dtype=np.float32)
    for i in range(0, x.shape[0], BLOCK):
        y = (x[i:i + BLOCK].astype(np.float64) - mu) @ ainv
        y /= np.linalg.norm(y, axis=1, keepdims=True)
        out[i:i + BLOCK] = y
    return out


def faiss_search(q, db, k):
    import faiss
    index = faiss.IndexFlatIP(db.shape[1])
    index.add(db)
    return index.search(q, k)


def max_1_minus_cos(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    cos = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return float(np.max(1 - cos))


def overlap(a, b):
    """Mean share of each query's top k that two rankings (I matrices) have in common."""
    return float(np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(a, b)]))


def fingerprint(cache):
    """The cache's fingerprint from Cache.info (a dict, or the JSON text of the header)."""
    info = cache.info() if callable(cache.info) else cache.info
    if isinstance(info, str):
        info = json.loads(info)
    return info.get("fingerprint"), (info.get("arithmetic") or {}).get("blas_core")


def maxrss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    dirpath, threads, repeat, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    tools = sys.argv[5] if len(sys.argv) > 5 else None
    p = lambda f: os.path.join(dirpath, f)  # noqa: E731
    q, db = np.load(p("q.npy")), np.load(p("db.npy"))
    enc, neg = np.load(p("enc.npy")), np.load(p("neg.npy"))
    r = dict(threads=threads, repeat=repeat, n=len(enc), d=enc.shape[1], nq=len(q), ndb=len(db), k=k)
    sys.path.insert(0, os.path.join(TOP, "python"))
    try:
        import slem
    except Exception as e:  # the package is not built (or not there yet): the peers alone
        slem = None
        r["slem_skipped"] = f"import slem: {type(e).__name__}: {e}"
    if slem is not None:
        r["slem_version"] = slem.__version__
        # first of all, so that the high-water mark holds only the inputs: what
        # slem.search needs beyond them (the issue: one block of the database); OpenBLAS's
        # own buffers (the same library as numpy's) made first by a float32 product
        _ = q[:256] @ db[:4096].T
        before = maxrss_mib()
        slem.search(q, db, k, threads=threads)
        r["search_extra_mib"] = maxrss_mib() - before
        r["db_mib"] = db.nbytes / 2**20
        t, (D, I) = timed(lambda: slem.search(q, db, k, threads=threads), repeat)
        r["search_slem_s"] = t
        D1, I1 = slem.search(q, db, k, threads=1)
        r["search_t1_same"] = bool(np.array_equal(D1.view(np.uint32), D.view(np.uint32))
                                   and np.array_equal(I1, I))
        if tools:
            r["search_same_as_tool"] = bool(
                np.array_equal(np.load(tools + ".I.npy"), I)
                and np.array_equal(np.load(tools + ".D.npy").view(np.uint32), D.view(np.uint32)))

        def index_search():
            index = slem.IndexFlatIP(db.shape[1])
            if hasattr(index, "threads"):  # the package's own knob (FAISS has none)
                index.threads = threads
            index.add(db)
            return index.search(q, k)
        t, (Dx, Ix) = timed(index_search, repeat)
        r["index_slem_s"] = t
        r["index_same_as_search"] = bool(np.array_equal(Ix, I) and np.array_equal(Dx, D))

        t0 = time.perf_counter()
        fitted = slem.fit(neg, lambda_rel=1, threads=threads)
        r["fit_slem_s"] = time.perf_counter() - t0
        cache = slem.load(p("api.slem"))
        r["fit_same_fingerprint"] = fingerprint(fitted)[0] == fingerprint(cache)[0]
        r["cache_fingerprint"], r["cache_core"] = fingerprint(cache)
        del fitted
        t, Z = timed(lambda: cache.encode(enc, threads=threads), repeat)
        r["encode_slem_s"] = t
        if tools:
            raw = np.fromfile(tools + ".fvecs", dtype="<f4").reshape(len(enc), -1)[:, 1:]
            r["encode_same_as_tool"] = bool(np.array_equal(raw.view(np.uint32), Z.view(np.uint32)))
        x1 = enc[:1]
        r["one_row_slem_s"] = one_row(lambda: cache.encode(x1, threads=threads))
        r["one_row_slem_t1_s"] = one_row(lambda: cache.encode(x1, threads=1))
    # the peers, on the same arrays
    mu, ainv = numpy_stats(neg)
    t, Y = timed(lambda: numpy_encode(enc, mu, ainv), repeat)
    r["encode_numpy_s"] = t
    x1 = enc[:1]
    r["one_row_numpy_s"] = one_row(lambda: numpy_encode(x1, mu, ainv))
    t, (Df, If) = timed(lambda: faiss_search(q, db, k), repeat)
    r["search_faiss_s"] = t
    if slem is not None:
        r["encode_max_1_minus_cos_numpy"] = max_1_minus_cos(Z, Y)
        r["search_overlap_faiss"] = overlap(I, If)
        r["search_max_abs_diff_faiss"] = float(np.max(np.abs(D.astype(np.float64) - Df)))
    json.dump(r, sys.stdout)
    print()


if __name__ == "__main__":
    main()
