"""slem.evaluate against `slem-eval --json` on the same ranking, and against the
definitions computed with numpy."""

import numpy as np
import pytest

import slem
from conftest import DIGITS, tool, write_fvecs

SUMMARY = {"map": "map", "P_1": "p@1", "P_5": "p@5", "P_10": "p@10", "recall_100": "r@100"}


@pytest.fixture(scope="module")
def ranking(tmp_path_factory, digits):
    """slem-match's npy ranking of the digits (cosine, k 100): its path and I."""
    d = tmp_path_factory.mktemp("rank")
    write_fvecs(d / "q.fvecs", digits["queries"])
    tool("slem-match", "-q", "-n", "-k", 100, "-F", "npy", "-d", DIGITS / "database.fvecs",
         "-o", d / "r.npy", d / "q.fvecs")
    return d / "r.npy", np.load(d / "r.I.npy")


def eval_json(*args):
    import json
    return json.loads(tool("slem-eval", "-q", "--json", *args).stdout)


def test_labels_are_slem_eval(ranking, digits):
    path, I = ranking
    ref = eval_json("--query-labels", DIGITS / "queries.labels",
                    "--db-labels", DIGITS / "database.labels", path)
    ql = np.array([int(v) for v in digits["queries_labels"]])
    dl = np.array([int(v) for v in digits["database_labels"]])
    got = slem.evaluate(I, query_labels=ql, db_labels=dl, measures=list(SUMMARY))
    assert list(got) == list(SUMMARY)
    for m, key in SUMMARY.items():
        assert got[m] == pytest.approx(ref[key], rel=1e-12, abs=1e-15), m
    # labels of any type, and the ranking file itself
    got_s = slem.evaluate(I, query_labels=digits["queries_labels"],
                          db_labels=digits["database_labels"], measures=list(SUMMARY))
    assert got_s == got
    assert slem.evaluate(str(path), query_labels=ql, db_labels=dl,
                         measures=list(SUMMARY)) == got
    assert slem.evaluate(I, query_labels=ql, db_labels=dl) == {
        "map": got["map"], "P_10": got["P_10"]}


def test_against_the_definitions(ranking, digits):
    _, I = ranking
    ql = np.array([int(v) for v in digits["queries_labels"]])
    dl = np.array([int(v) for v in digits["database_labels"]])
    rel = dl[I] == ql[:, None]                       # nq x 100
    nrel = (dl[None, :] == ql[:, None]).sum(axis=1)  # every database row is judged
    prec = np.cumsum(rel, axis=1) / np.arange(1, I.shape[1] + 1)
    ap = (prec * rel).sum(axis=1) / nrel
    got = slem.evaluate(I, query_labels=ql, db_labels=dl,
                        measures=["map", "P_5", "P_10", "recall_100"])
    assert got["map"] == pytest.approx(ap.mean(), rel=1e-12)
    assert got["P_5"] == pytest.approx(rel[:, :5].sum(axis=1).mean() / 5, rel=1e-12)
    assert got["P_10"] == pytest.approx(rel[:, :10].sum(axis=1).mean() / 10, rel=1e-12)
    assert got["recall_100"] == pytest.approx((rel.sum(axis=1) / nrel).mean(), rel=1e-12)
    # -1 padding is not a result: the same ranking cut to 5 and padded
    cut = np.full_like(I[:, :8], -1)
    cut[:, :5] = I[:, :5]
    assert slem.evaluate(cut, query_labels=ql, db_labels=dl, measures=["P_10"])["P_10"] == \
        pytest.approx(rel[:, :5].sum(axis=1).mean() / 10, rel=1e-12)


def test_qrels_and_extra_measures_are_slem_eval(tmp_path, ranking, digits):
    path, I = ranking
    ql, dl = digits["queries_labels"], digits["database_labels"]
    lines = ["%d 0 %d 1" % (q, j) for q in range(len(ql)) for j in range(len(dl))
             if ql[q] == dl[j]]
    (tmp_path / "t.qrels").write_text("\n".join(lines) + "\n")
    ref = eval_json("--qrels", tmp_path / "t.qrels", "-M", "ndcg", "-M", "recip_rank", path)
    got = slem.evaluate(I, qrels=tmp_path / "t.qrels",
                        measures=["map", "P_10", "ndcg", "recip_rank"])
    assert got["map"] == pytest.approx(ref["map"], rel=1e-12)
    assert got["P_10"] == pytest.approx(ref["p@10"], rel=1e-12)
    assert got["ndcg"] == pytest.approx(ref["ndcg"], rel=1e-12)
    assert got["recip_rank"] == pytest.approx(ref["recip_rank"], rel=1e-12)
