"""Bad input raises slem.Error (a ValueError) with a message naming what is wrong, and
writes nothing."""

import os

import numpy as np
import pytest

import slem
from conftest import DIGITS


def raises(match=None):
    return pytest.raises(slem.Error, match=match)


def test_error_is_a_value_error():
    assert issubclass(slem.Error, ValueError)
    with raises() as e:
        slem.search(np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32), 0)
    assert e.value.status == 5


def test_fit_bad_input(digits):
    neg = digits["negatives"]
    with raises("int64|int32"):
        slem.fit(neg.astype(np.int64))
    with raises("shape"):
        slem.fit(neg[0])
    with raises("shape"):
        slem.fit(neg[None])
    bad = neg.copy()
    bad[12, 5] = np.nan
    with raises("row 12"):
        slem.fit(bad)
    with raises("rnk"):
        slem.fit(neg, rnk=4)
    with raises("rank"):
        slem.fit(neg, kernel="rbf", rank=0)
    with raises("eigen"):
        slem.fit(neg, eigen="yes")       # a flag
    with raises("rank"):
        slem.fit(neg, kernel="rbf", rank=True)   # takes a value
    with raises("threads"):
        slem.fit(neg, threads=-1)
    with raises("from 0 to 1024"):       # the library's range, in C and Python alike
        slem.fit(neg, threads=1025)
    with raises("nonexistent"):
        slem.fit(str(DIGITS / "nonexistent.fvecs"))


def test_encode_bad_input(digits, tool_cache):
    c = slem.load(tool_cache)
    q = digits["queries"]
    with raises("63|64"):
        c.encode(q[:, :63])
    bad = q.copy()
    bad[3, 0] = np.inf
    with raises("row 3"):
        c.encode(bad)
    with raises("int"):
        c.encode(q.astype(np.int32))
    with raises("shape"):
        c.encode(q[0])
    with raises("alpha"):
        c.encode(q, alpha=-0.5)          # needs a cache made with eigen
    c.close()
    with raises("closed"):
        c.encode(q)


def test_search_bad_input():
    q = np.ones((3, 4), np.float32)
    db = np.ones((5, 4), np.float32)
    with raises("k"):
        slem.search(q, db, 0)
    with raises("k"):
        slem.search(q, db, -3)
    with raises("dimension|4|5"):
        slem.search(q, np.ones((5, 5), np.float32), 2)
    with raises("int"):
        slem.search(q.astype(np.int64), db, 2)
    with raises("shape"):
        slem.search(q[0], db, 2)
    bad = db.copy()
    bad[4, 1] = np.nan
    with raises("row 4"):
        slem.search(q, bad, 2)
    with raises():
        slem.search(q[:0], db, 2)        # an empty query set
    index = slem.IndexFlatIP(4)
    with raises("dimension 5"):
        index.add(np.ones((2, 5), np.float32))
    with raises("row 1"):
        index.add(bad[3:])
    assert index.ntotal == 0
    with raises("k"):
        index.search(q, 0)


def test_evaluate_bad_input():
    I = np.array([[0, 1], [1, 0]])
    labels = dict(query_labels=[0, 1], db_labels=[0, 1])
    with raises("dtype"):
        slem.evaluate(I.astype(np.float32), **labels)
    with raises("measure|nosuch"):
        slem.evaluate(I, measures=["nosuch"], **labels)
    with raises("2|row"):
        slem.evaluate(np.array([[0, 2]]), query_labels=[0], db_labels=[0, 1])
    with raises("labels"):
        slem.evaluate(I, query_labels=[0, 1, 2], db_labels=[0, 1])
    with raises("qrels"):
        slem.evaluate(I)


def test_corrupt_cache_is_refused_and_nothing_is_written(tmp_path, tool_cache):
    good = tool_cache.read_bytes()
    out = tmp_path / "out.slem"
    out.write_bytes(b"old")
    for name, data in [("flipped.slem", good[:-100] + bytes([good[-100] ^ 1]) + good[-99:]),
                       ("short.slem", good[:len(good) // 2]),
                       ("header.slem", good[:40] + b"\xff" * 8 + good[48:]),
                       ("empty.slem", b"")]:
        bad = tmp_path / name
        bad.write_bytes(data)
        with raises(name) as e:
            slem.load(bad).save(out)
        assert e.value.status in (1, 2)
        assert out.read_bytes() == b"old"
    with raises("missing.slem") as e:
        slem.load(tmp_path / "missing.slem")
    assert e.value.status == 1
    # a save that fails leaves nothing at its path, and an existing file unchanged
    c = slem.load(tool_cache)
    with raises("nodir"):
        c.save(tmp_path / "nodir" / "c.slem")
    assert not (tmp_path / "nodir").exists()
    with raises():
        c.save("-")
    assert not os.path.exists("-")
    (tmp_path / "adir").mkdir()
    with raises("adir"):
        c.save(tmp_path / "adir")
    assert (tmp_path / "adir").is_dir() and not any((tmp_path / "adir").iterdir())
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".slem")) == \
        ["adir"]
