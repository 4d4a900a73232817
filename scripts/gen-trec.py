#!/usr/bin/python3
"""Golden files for `slem-eval --trec-compat`: test runs and qrels with exact ties, unjudged
documents, graded relevance, queries of the run missing from the qrels and qrels topics
missing from the run, and the measures trec_eval 10.0 prints for them, computed here from
trec_eval's documented definitions (a transcription in Python of what its measures mean,
not of its code):

- per topic the run is re-sorted by score (a double) descending, equal scores by docno in
  DEcreasing strcmp order; the rank column is ignored;
- topics are those of the qrels, in strcmp order; run topics without qrels are ignored;
  with -c a qrels topic missing from the run counts with an empty ranking and the averages
  divide by the number of qrels topics;
- a document is relevant when its qrels value is >= the relevance level (-l, default 1);
- map: sum over relevant retrieved of (relevant so far / rank), over num_rel; gm_map:
  exp(mean(log(max(ap, 1e-5)))); Rprec: relevant in the first num_rel / num_rel;
  recip_rank: 1 / rank of the first relevant; P_k: relevant in the first k / k;
  iprec_at_recall_x: the largest precision at any rank at or after the one where
  lround(x * num_rel) relevant documents have been retrieved (0 past num_rel_ret);
  ndcg: gains are the qrels values, dcg = sum gain / log2(rank + 1) over the ranking, over
  the same sum for the qrels' values sorted decreasing;
- lines "%-22s\\t%s\\t%6.4f" (counts "%-22s\\t%s\\t%d"), per topic with -q, then "all".

Usage: /usr/bin/python3 scripts/gen-trec.py   (writes testdata/trec/)
"""
import math
import os

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(TOP, "testdata", "trec")

IPREC = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
P_DEFAULT = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
ORDER = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
         "iprec_at_recall", "P", "ndcg"]


def cmp_key_desc_docno(doc):
    # sort ascending on this key gives docno in decreasing byte order
    return tuple(-b for b in doc.encode()) + (1,)


def read_run(path):
    run = {}
    for line in open(path):
        f = line.split()
        if not f:
            continue
        run.setdefault(f[0], []).append((f[2], float(f[4])))
    return run


def read_qrels(path):
    qrels = {}
    for line in open(path):
        f = line.split()
        if not f:
            continue
        qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    return qrels


def ranked_rels(results, judged):
    # sim descending, then docno descending (strcmp(p2, p1))
    order = sorted(results, key=lambda t: (-t[1], cmp_key_desc_docno(t[0])))
    return [judged.get(doc, -1) for doc, _ in order]


def measures(rels, judged, level, cut_p, cut_i):
    num_ret = len(rels)
    num_rel = sum(1 for v in judged.values() if v >= level)
    relev = [r >= level for r in rels]
    num_rel_ret = sum(relev)
    m = {"num_q": 1, "num_ret": num_ret, "num_rel": num_rel, "num_rel_ret": num_rel_ret}
    so_far, s = 0, 0.0
    for i, r in enumerate(relev):
        if r:
            so_far += 1
            s += so_far / (i + 1)
    ap = s / num_rel if so_far else 0.0
    m["map"] = ap
    m["gm_map"] = math.log(max(ap, 1e-5))
    look = min(num_ret, num_rel)
    m["Rprec"] = sum(relev[:look]) / num_rel if look else 0.0
    first = next((i for i, r in enumerate(relev) if r), None)
    m["recip_rank"] = 1.0 / (first + 1) if first is not None else 0.0
    # interpolated precision: for a cutoff of c relevant documents, the largest precision at
    # the ranks from the c-th relevant one on (at rank 0 of relevant, from the first rank)
    prec_after = []
    best = 0.0
    precs = [sum(relev[:i + 1]) / (i + 1) for i in range(num_ret)]
    suffix_max = [0.0] * (num_ret + 1)
    for i in range(num_ret - 1, -1, -1):
        best = max(best, precs[i])
        suffix_max[i] = best
    rel_ranks = [i for i, r in enumerate(relev) if r]
    for x in cut_i:
        c = int(math.floor(x * num_rel + 0.5))  # lround for non-negative values
        if c > num_rel_ret:
            prec_after.append(0.0)
        elif c == 0:
            prec_after.append(suffix_max[0] if num_ret else 0.0)
        else:
            prec_after.append(suffix_max[rel_ranks[c - 1]])
    m["iprec_at_recall"] = prec_after
    m["P"] = [sum(relev[:k]) / k for k in cut_p]
    gains = sorted((v for v in judged.values() if v > 0), reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rels) if r > 0)
    m["ndcg"] = dcg / idcg if idcg > 0 else 0.0
    return m


def names(meas, cut_p, cut_i):
    if meas == "iprec_at_recall":
        return [f"iprec_at_recall_{x:.2f}" for x in cut_i]
    if meas == "P":
        return [f"P_{k}" for k in cut_p]
    return [meas]


def line(name, qid, value, count):
    return f"{name:<22}\t{qid}\t{value}\n" if count else f"{name:<22}\t{qid}\t{value:6.4f}\n"


def evaluate(run, qrels, requested, level=1, complete=False, per_query=False,
             cut_p=P_DEFAULT, cut_i=IPREC):
    out = []
    acc, nq = None, 0
    for qid in sorted(qrels, key=lambda q: q.encode()):
        if qid not in run and not complete:
            continue  # trec_eval 10.0 stops with an error here; slem skips and warns
        m = measures(ranked_rels(run.get(qid, []), qrels[qid]), qrels[qid], level, cut_p, cut_i)
        nq += 1
        if acc is None:
            acc = {k: (list(v) if isinstance(v, list) else v) for k, v in m.items()}
        else:
            for k, v in m.items():
                acc[k] = [a + b for a, b in zip(acc[k], v)] if isinstance(v, list) else acc[k] + v
        if per_query:
            for meas in ORDER:
                if meas not in requested or meas in ("num_q", "gm_map"):
                    continue
                vals = m[meas] if isinstance(m[meas], list) else [m[meas]]
                for n, v in zip(names(meas, cut_p, cut_i), vals):
                    out.append(line(n, qid, v, meas.startswith("num")))
    denom = len(qrels) if complete else nq
    for meas in ORDER:
        if meas not in requested:
            continue
        vals = acc[meas] if isinstance(acc[meas], list) else [acc[meas]]
        for n, v in zip(names(meas, cut_p, cut_i), vals):
            if meas == "num_q":
                v = denom
            elif meas == "gm_map":
                v = math.exp((v + (denom - nq) * math.log(1e-5)) / denom)
            elif not meas.startswith("num"):
                v = v / denom
            out.append(line(n, "all", v, meas.startswith("num")))
    return "".join(out)


EDGE_RUN = """\
q1 Q0 d1 1 0.5 edge
q1 Q0 d3 2 0.5 edge
q1 Q0 d7 3 0.5 edge
q1 Q0 d2 4 0.25 edge
q1 Q0 d4 5 0.75 edge
q10 Q0 a 9 0.1 edge
q10 Q0 b 8 0.2 edge
q10 Q0 c 7 0.3 edge
q10 Q0 d 6 0.30000000000000004 edge
q2 Q0 x1 1 3 edge
q2 Q0 x2 2 2 edge
q2 Q0 x3 3 2 edge
q2 Q0 x10 4 2 edge
q2 Q0 x4 5 -1e-3 edge
q3 Q0 d1 1 0.9 edge
q3 Q0 d2 2 0.8 edge
q5 Q0 z1 1 0.9 edge
q5 Q0 z2 2 0.8 edge
"""
EDGE_QRELS = """\
q1 0 d1 1
q1 0 d3 2
q1 0 d9 1
q1 0 d2 0
q1 0 d4 0
q10 0 a 1
q10 0 d 2
q10 0 c 0
q2 0 x10 1
q2 0 x2 1
q2 0 x4 2
q2 0 x5 1
q4 0 y1 1
q4 0 y2 2
q5 0 z1 0
q5 0 z2 0
"""
REQ = ORDER  # every supported measure


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "edge.run"), "w") as f:
        f.write(EDGE_RUN)
    with open(os.path.join(OUT, "edge.qrels"), "w") as f:
        f.write(EDGE_QRELS)
    # the demo data: SLEM's top 100 of the digits as a TREC run, qrels from the labels
    qlab = open(os.path.join(TOP, "testdata", "digits", "queries.labels")).read().split()
    dlab = open(os.path.join(TOP, "testdata", "digits", "database.labels")).read().split()
    rng = np.random.default_rng(11)
    with open(os.path.join(OUT, "digits.qrels"), "w") as f:
        for q, ql in enumerate(qlab):
            for j, dl in enumerate(dlab):
                if dl == ql:
                    f.write(f"{q} 0 {j} {1 + int(rng.integers(0, 2))}\n")  # graded 1 or 2
                elif rng.random() < 0.05:
                    f.write(f"{q} 0 {j} 0\n")
    with open(os.path.join(TOP, "testdata", "eval", "slem-top100.tsv")) as src, \
            open(os.path.join(OUT, "digits.run"), "w") as f:
        for ln in src:
            q, r, d, s = ln.split("\t")
            if int(q) % 10 == 3:
                continue  # topics of the qrels missing from the run
            f.write(f"{q} Q0 {d} {r} {s.strip()} slem\n")
        f.write("extra Q0 5 1 0.5 slem\n")  # a run topic without qrels: ignored
    cases = {
        "edge": dict(),
        "edge-q": dict(per_query=True),
        "edge-c": dict(complete=True),
        "edge-cq": dict(complete=True, per_query=True),
        "edge-l2": dict(level=2, per_query=True),
        "digits": dict(),
        "digits-cq": dict(complete=True, per_query=True),
    }
    for name, kw in cases.items():
        base = name.split("-")[0]
        run = read_run(os.path.join(OUT, f"{base}.run"))
        qrels = read_qrels(os.path.join(OUT, f"{base}.qrels"))
        with open(os.path.join(OUT, f"expected.{name}.txt"), "w") as f:
            f.write(evaluate(run, qrels, REQ, **kw))


if __name__ == "__main__":
    main()
