"""slem.fit, merge, load, Cache.save and Cache.info against slem-negstats' caches (the same
fingerprint), and the linear statistics against numpy in float64."""


import numpy as np
import pytest

import slem
from conftest import DIGITS, cache_info, cli_args, tool

NEG = DIGITS / "negatives.fvecs"

# one line per variant of the table, with its own options
VARIANTS = [
    {},
    {"lam": 5.0},
    {"lambda_rel": 0.5},
    {"eigen": True},
    {"pca": 16},
    {"depth": 2},
    {"kernel": "rbf", "rank": 64},
    {"diagonal": True},
    {"partial": True},
]


def negstats(tmp_path, options, name="tool.slem"):
    path = tmp_path / name
    tool("slem-negstats", "-q", *cli_args(options), "-o", path, NEG)
    return cache_info(path)


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: ",".join(o) or "default")
def test_fit_array_is_negstats_cache(tmp_path, digits, options):
    ref = negstats(tmp_path, options)
    cache = slem.fit(digits["negatives"], **options)
    assert cache.fingerprint == ref["fingerprint"]
    assert cache.kind == ref["kind"]
    assert cache.d == 64
    info = cache.info
    assert info["fingerprint"] == ref["fingerprint"]
    assert info["kind"] == ref["kind"] and info["d"] == ref["d"]
    assert info["arithmetic"]["blas_core"] == ref["arithmetic"]["blas_core"] == cache.blas_core
    # the file it saves is one the tool reads, with that fingerprint
    cache.save(tmp_path / "py.slem")
    assert cache_info(tmp_path / "py.slem")["fingerprint"] == ref["fingerprint"]


def test_fit_float64_files_and_threads_agree(tmp_path, digits):
    ref = negstats(tmp_path, {})["fingerprint"]
    neg = digits["negatives"]
    assert slem.fit(neg.astype(np.float64)).fingerprint == ref
    assert slem.fit(str(NEG)).fingerprint == ref
    assert slem.fit(NEG).fingerprint == ref          # a pathlib.Path
    assert slem.fit(np.asfortranarray(neg)).fingerprint == ref
    a, b = slem.fit(neg, threads=1), slem.fit(neg, threads=2)
    a.save(tmp_path / "t1.slem")
    b.save(tmp_path / "t2.slem")
    assert a.fingerprint == b.fingerprint == ref
    # every section the same bytes (the provenance's time may differ by a second)
    names = [s["name"] for s in a.info["sections"]]
    assert names == [s["name"] for s in b.info["sections"]] and "ainv" in names
    for name in names:
        assert section(tmp_path / "t1.slem", a.info, name).tobytes() == \
            section(tmp_path / "t2.slem", b.info, name).tobytes()


def test_partial_caches_merge_exactly(tmp_path, digits):
    neg = digits["negatives"]
    whole = slem.fit(neg, leaf_rows=256)
    parts = [slem.fit(neg, partial=True, leaf_rows=256, shard="%d/2" % i) for i in range(2)]
    assert [p.kind for p in parts] == ["partial", "partial"]
    assert slem.merge(parts).fingerprint == whole.fingerprint
    for i, p in enumerate(parts):
        p.save(tmp_path / ("p%d.slem" % i))
    merged = slem.fit([tmp_path / "p0.slem", tmp_path / "p1.slem"])
    assert merged.fingerprint == whole.fingerprint
    tool("slem-negstats", "-q", "-o", tmp_path / "m.slem", tmp_path / "p0.slem",
         tmp_path / "p1.slem")
    assert cache_info(tmp_path / "m.slem")["fingerprint"] == whole.fingerprint


def test_load_and_save_round_trip(tmp_path, tool_cache):
    ref = cache_info(tool_cache)
    c = slem.load(tool_cache)
    assert c.fingerprint == ref["fingerprint"] and c.kind == "linear" and c.d == 64
    assert c.info["lambda"] == ref["lambda"]
    c.save(tmp_path / "again.slem")
    # loaded, it is saved as the bytes it was loaded as
    assert (tmp_path / "again.slem").read_bytes() == tool_cache.read_bytes()
    assert "fingerprint=" + ref["fingerprint"] in repr(c)


def section(path, info, name):
    s = next(s for s in info["sections"] if s["name"] == name)
    count = int(np.prod(s["shape"]))
    a = np.fromfile(str(path), dtype=s["dtype"], count=count, offset=s["offset"])
    return a.reshape(s["shape"])


def test_linear_statistics_against_numpy(tmp_path, digits):
    x = digits["negatives"].astype(np.float64)
    mu = x.mean(axis=0)
    sigma = (x - mu).T @ (x - mu) / x.shape[0]
    lam = np.trace(sigma) / x.shape[1]
    ainv = np.linalg.inv(sigma + lam * np.eye(x.shape[1]))
    c = slem.fit(digits["negatives"])
    info = c.info
    assert info["lambda"] == pytest.approx(lam, rel=1e-12)
    c.save(tmp_path / "c.slem")
    np.testing.assert_allclose(section(tmp_path / "c.slem", info, "mu"), mu, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(section(tmp_path / "c.slem", info, "ainv"), ainv, rtol=1e-9,
                               atol=1e-12 * np.abs(ainv).max())
    # an absolute lambda is that lambda
    assert slem.fit(digits["negatives"], lam=2.5).info["lambda"] == 2.5
    assert slem.fit(digits["negatives"], lam=0.1).info["lambda"] == 0.1   # its repr, exact


def test_fit_options_come_from_the_table():
    names = [k for k, _, _ in slem.fit_options()]
    helptext = tool("slem-negstats", "--help").stdout.decode()
    for key, metavar, _ in slem.fit_options():
        flag = "--" + ("lambda" if key == "lam" else key.replace("_", "-"))
        assert flag in helptext
    for key in ("lam", "lambda_rel", "kernel", "rank", "depth", "pca", "eigen", "partial"):
        assert key in names
    doc = slem.fit.__doc__
    assert "skip_nonfinite" in doc and "lambda_rel" in doc
