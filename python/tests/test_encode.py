"""Cache.encode against slem-encode's float32 rows, byte for byte, for every variant, and
the linear descriptor against numpy in float64."""

import numpy as np
import pytest

import slem
from conftest import DIGITS, cli_args, read_fvecs, tool

# (slem-negstats options, slem-encode options, values per row)
CASES = [
    ({}, {}, 64),
    ({"eigen": True}, {"alpha": -0.5}, 64),
    ({}, {"basic": True}, 64),
    ({}, {"classifier": True, "theta": 2.0}, 65),
    ({"pca": 16}, {}, 16),
    ({"depth": 2}, {}, 64),
    ({"kernel": "rbf", "rank": 64}, {}, 64),
    ({"kernel": "rbf", "rank": 64}, {"coordinates": True}, 64),
    ({"diagonal": True}, {}, 64),
]


def ident(case):
    fit, enc, _ = case
    return "+".join([",".join(fit) or "linear"] + list(enc))


@pytest.fixture(scope="module")
def caches(tmp_path_factory):
    """slem-negstats' cache of each CASES fit, by its options' CLI text."""
    out = {}
    d = tmp_path_factory.mktemp("caches")
    for fit, _, _ in CASES:
        key = " ".join(cli_args(fit))
        if key not in out:
            path = d / ("c%d.slem" % len(out))
            tool("slem-negstats", "-q", *cli_args(fit), "-o", path, DIGITS / "negatives.fvecs")
            out[key] = path
    return out


@pytest.mark.parametrize("case", CASES, ids=ident)
def test_encode_is_slem_encode(tmp_path, digits, caches, case):
    fit, enc, dim = case
    path = caches[" ".join(cli_args(fit))]
    tool("slem-encode", "-c", path, *cli_args(enc), "-o", tmp_path / "q.fvecs",
         DIGITS / "queries.fvecs")
    ref = read_fvecs(tmp_path / "q.fvecs")
    got = slem.load(path).encode(digits["queries"], **enc)
    assert got.dtype == np.float32 and got.shape == (100, dim) == ref.shape
    assert got.tobytes() == ref.tobytes()


def test_encode_threads_dtypes_and_rows_agree(digits, tool_cache):
    c = slem.load(tool_cache)
    x = digits["database"]
    one = c.encode(x, threads=1)
    assert c.encode(x, threads=2).tobytes() == one.tobytes()
    assert c.encode(x.astype(np.float64), threads=2).tobytes() == one.tobytes()
    assert c.encode(x.astype(">f4")).tobytes() == one.tobytes()
    # position-free: a row alone, or a slice, is the same bytes as inside the whole
    assert c.encode(x[17:18]).tobytes() == one[17:18].tobytes()
    assert c.encode(x[::3]).tobytes() == one[::3].tobytes()
    assert c.encode(x[:0]).shape == (0, 64)
    assert c.encode(x[:0], classifier=True).shape == (0, 65)


def test_encode_linear_against_numpy(digits, tool_cache):
    neg = digits["negatives"].astype(np.float64)
    mu = neg.mean(axis=0)
    sigma = (neg - mu).T @ (neg - mu) / neg.shape[0]
    a = sigma + np.trace(sigma) / neg.shape[1] * np.eye(neg.shape[1])
    ref = (digits["queries"].astype(np.float64) - mu) @ np.linalg.inv(a)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    got = slem.load(tool_cache).encode(digits["queries"])
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(got.astype(np.float64), axis=1), 1, atol=1e-6)


def test_float32_input_is_not_copied(digits):
    x = np.ascontiguousarray(digits["queries"])
    a, s = slem._matrix(x, "x")
    assert a is x and s.data == x.ctypes.data
    b, _ = slem._matrix(x.astype(np.float64), "x")
    assert b.dtype == np.float64     # converted by the library, not here
