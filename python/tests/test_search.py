"""slem.search and slem.IndexFlatIP against `slem-match -F npy` (the same D and I bytes),
an exact numpy top k (ties by the lower row), and faiss.IndexFlatIP."""

import numpy as np
import pytest

import slem
from conftest import DIGITS, tool, write_fvecs

FLT_MAX = np.finfo(np.float32).max


def match(tmp_path, queries, database, k, *extra):
    """`slem-match -F npy` of two arrays written as fvecs: its (D, I)."""
    write_fvecs(tmp_path / "q.fvecs", queries)
    write_fvecs(tmp_path / "db.fvecs", database)
    tool("slem-match", "-q", "-F", "npy", "-k", k, *extra, "-d", tmp_path / "db.fvecs",
         "-o", tmp_path / "r.npy", tmp_path / "q.fvecs")
    return np.load(tmp_path / "r.D.npy"), np.load(tmp_path / "r.I.npy")


def exact_topk(queries, database, k):
    """The k best rows by the float64 inner product, ties by the lower row, rounded once to
    float32, padded as FAISS pads."""
    s = queries.astype(np.float64) @ database.astype(np.float64).T
    order = np.argsort(-s, axis=1, kind="stable")     # a stable sort: ties by lower row
    kk = min(k, s.shape[1])
    I = np.full((s.shape[0], k), -1, dtype=np.int64)
    D = np.full((s.shape[0], k), -FLT_MAX, dtype=np.float32)
    I[:, :kk] = order[:, :kk]
    D[:, :kk] = np.take_along_axis(s, order[:, :kk], axis=1).astype(np.float32)
    return D, I


def test_search_is_slem_match_and_exact(tmp_path, digits):
    # raw digits are small whole numbers: every inner product is exact, with many ties
    q, db = digits["queries"], digits["database"]
    D, I = slem.search(q, db, 10)
    assert D.dtype == np.float32 and I.dtype == np.int64 and D.shape == I.shape == (100, 10)
    rd, ri = match(tmp_path, q, db, 10)
    assert D.tobytes() == rd.tobytes() and I.tobytes() == ri.tobytes()
    od, oi = exact_topk(q, db, 10)
    assert (I == oi).all() and (D == od).all()


def test_search_normalize_is_slem_match_n(tmp_path, digits):
    q, db = digits["queries"], digits["database"]
    D, I = slem.search(q, db, 20, normalize=True)
    rd, ri = match(tmp_path, q, db, 20, "-n")
    assert D.tobytes() == rd.tobytes() and I.tobytes() == ri.tobytes()
    qn = q.astype(np.float64) / np.linalg.norm(q.astype(np.float64), axis=1, keepdims=True)
    dn = db.astype(np.float64) / np.linalg.norm(db.astype(np.float64), axis=1, keepdims=True)
    s = qn @ dn.T
    np.testing.assert_allclose(D, np.take_along_axis(s, I, axis=1), rtol=0, atol=1e-6)
    assert (D[:, 0] >= s.max(axis=1) - 1e-6).all()


def test_ten_thousand_queries_threads_and_padding(tmp_path):
    rng = np.random.default_rng(45)
    # whole numbers again: the numpy reference is exact, ties included
    q = rng.integers(-3, 4, size=(10000, 16)).astype(np.float32)
    db = rng.integers(-3, 4, size=(700, 16)).astype(np.float32)
    D1, I1 = slem.search(q, db, 25, threads=1)
    D2, I2 = slem.search(q, db, 25, threads=2)
    assert D1.tobytes() == D2.tobytes() and I1.tobytes() == I2.tobytes()
    od, oi = exact_topk(q, db, 25)
    assert (I1 == oi).all() and (D1 == od).all()
    rd, ri = match(tmp_path, q, db, 25)
    assert D1.tobytes() == rd.tobytes() and I1.tobytes() == ri.tobytes()
    # k beyond the database: FAISS's padding, as slem-match -F npy writes it
    D, I = slem.search(q[:50], db[:7], 10, threads=2)
    od, oi = exact_topk(q[:50], db[:7], 10)
    assert (I == oi).all() and (D == od).all()
    assert (I[:, 7:] == -1).all() and (D[:, 7:] == -FLT_MAX).all()
    rd, ri = match(tmp_path, q[:50], db[:7], 10)
    assert D.tobytes() == rd.tobytes() and I.tobytes() == ri.tobytes()


def test_search_float64_is_float32_rounded(digits):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((30, 24))
    db = rng.standard_normal((300, 24))
    D, I = slem.search(q, db, 5)
    D32, I32 = slem.search(q.astype(np.float32), db.astype(np.float32), 5)
    np.testing.assert_allclose(D, D32, rtol=1e-5, atol=1e-5)


def test_index_flat_ip_is_faiss(tmp_path):
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(7)
    xb = rng.standard_normal((2000, 48)).astype(np.float32)
    xq = rng.standard_normal((300, 48)).astype(np.float32)
    ours, theirs = slem.IndexFlatIP(48), faiss.IndexFlatIP(48)
    for index in (ours, theirs):
        index.add(xb[:1200])
        index.add(xb[1200:].astype(np.float64))   # FAISS rounds float64 to float32 too
    assert ours.ntotal == theirs.ntotal == 2000 and ours.d == theirs.d == 48
    D, I = ours.search(xq, 10)
    fd, fi = theirs.search(xq, 10)
    assert D.dtype == fd.dtype and I.dtype == fi.dtype and D.shape == fd.shape
    assert (I == fi).all()           # random data: no ties, which FAISS orders otherwise
    np.testing.assert_allclose(D, fd, rtol=1e-5, atol=1e-5)
    # and the scores are slem.search's exact ones
    sd, si = slem.search(xq, xb, 10)
    assert D.tobytes() == sd.tobytes() and I.tobytes() == si.tobytes()
    # padding: fewer rows than k, and no rows at all
    for index in (ours, theirs):
        index.reset()
    assert ours.ntotal == 0
    pd, pi = ours.search(xq[:4], 5)
    fd, fi = theirs.search(xq[:4], 5)
    assert (pi == fi).all() and (pd == fd).all() and pd.dtype == fd.dtype
    for index in (ours, theirs):
        index.add(xb[:3])
    pd, pi = ours.search(xq[:40], 5)
    fd, fi = theirs.search(xq[:40], 5)
    assert (pi == fi).all() and (pi[:, 3:] == -1).all()
    assert (pd[:, 3:] == -FLT_MAX).all() and (fd[:, 3:] == -FLT_MAX).all()
    np.testing.assert_allclose(pd[:, :3], fd[:, :3], rtol=1e-5, atol=1e-5)
    ed, ei = ours.search(xq[:0], 5)
    assert ed.shape == ei.shape == (0, 5) == theirs.search(xq[:0], 5)[0].shape


def test_kernel_exact_similarity_is_slem_match_c(tmp_path, digits, tool_cache):
    path = tmp_path / "k.slem"
    tool("slem-negstats", "-q", "--kernel", "rbf", "--rank", "64", "-o", path,
         DIGITS / "negatives.fvecs")
    rd, ri = match(tmp_path, digits["queries"], digits["database"], 10, "-c", path)
    D, I = slem.load(path).search(digits["queries"], digits["database"], 10)
    assert D.tobytes() == rd.tobytes() and I.tobytes() == ri.tobytes()
