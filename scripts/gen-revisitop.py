#!/usr/bin/python3
"""Golden files for `slem-eval --protocol easy|medium|hard`: the revisited Oxford/Paris
evaluation (Radenovic et al., CVPR 2018), transcribed from the definition of revisitop's
compute_map (its Python evaluate.py), not from its code:

- per query the positives are `easy` (protocol easy), `easy + hard` (medium) or `hard` (hard);
  the junk is `junk + hard` (easy), `junk` (medium) or `junk + easy` (hard);
- pos = 0-based positions of the positives in the ranking, each decreased by the number of
  junk items ranked before it;
- AP = sum over the ranked positives j = 0, 1, ... (in ranking order) at shifted position
  r_j of (p0 + p1) / 2 / npos, with p0 = 1 when r_j = 0 else j / r_j, p1 = (j + 1) / (r_j + 1),
  npos the number of positives of the query (ranked or not);
- mP@k: with pos 1-based, kq = min(max(pos), k), P@k = #(pos <= kq) / kq (0 when no
  positive is ranked, where revisitop has no answer);
- a query with no positive is left out of the means.

Data: the demo digits' full cosine ranking and SLEM's top 100 (testdata/eval); per query the
same-label database items are split at random into easy (2/3) and hard (1/3), and 5 other
items are junk. Writes testdata/revisitop/{easy,hard,junk}.txt ("query item" lines) and
expected.txt ("ranking protocol measure value" lines, %.12f).

Usage: /usr/bin/python3 scripts/gen-revisitop.py
"""
import os

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(TOP, "testdata", "revisitop")
KAPPAS = [1, 5, 10]


def read_ranking(path):
    rank = {}
    for line in open(path):
        q, r, d, _ = line.rstrip("\n").split("\t")
        rank.setdefault(q, []).append((int(r), d))
    return {q: [d for _, d in sorted(v)] for q, v in rank.items()}


def ap_and_p(ranking, ok, junk):
    pos_ok = [i for i, d in enumerate(ranking) if d in ok]
    pos_junk = [i for i, d in enumerate(ranking) if d in junk]
    shifted = [p - sum(1 for j in pos_junk if j < p) for p in pos_ok]
    ap = 0.0
    for j, r in enumerate(shifted):
        p0 = 1.0 if r == 0 else j / r
        p1 = (j + 1) / (r + 1)
        ap += (p0 + p1) / 2 / len(ok)
    prs = []
    one = [p + 1 for p in shifted]
    for k in KAPPAS:
        if not one:
            prs.append(0.0)
            continue
        kq = min(max(one), k)
        prs.append(sum(1 for p in one if p <= kq) / kq)
    return ap, prs


def main():
    os.makedirs(OUT, exist_ok=True)
    qlab = open(os.path.join(TOP, "testdata", "digits", "queries.labels")).read().split()
    dlab = open(os.path.join(TOP, "testdata", "digits", "database.labels")).read().split()
    rng = np.random.default_rng(5)
    easy, hard, junk = {}, {}, {}
    for q, ql in enumerate(qlab):
        same = [j for j, dl in enumerate(dlab) if dl == ql]
        other = [j for j, dl in enumerate(dlab) if dl != ql]
        u = rng.random(len(same))
        if q % 17 == 0:
            u[:] = 0.0  # some queries have no hard positives
        if q % 23 == 0:
            u[:] = 1.0  # and some no easy ones
        easy[str(q)] = {str(j) for j, x in zip(same, u) if x < 2 / 3}
        hard[str(q)] = {str(j) for j, x in zip(same, u) if x >= 2 / 3}
        junk[str(q)] = {str(j) for j in rng.choice(other, 5, replace=False)}
    for name, sets in (("easy", easy), ("hard", hard), ("junk", junk)):
        with open(os.path.join(OUT, f"{name}.txt"), "w") as f:
            for q in sorted(sets, key=int):
                for d in sorted(sets[q], key=int):
                    f.write(f"{q} {d}\n")
    lines = []
    for rname in ("cosine-full", "slem-top100"):
        ranking = read_ranking(os.path.join(TOP, "testdata", "eval", f"{rname}.tsv"))
        for proto in ("easy", "medium", "hard"):
            aps, prs = [], []
            for q in sorted(ranking, key=int):
                if proto == "easy":
                    ok, jk = easy[q], junk[q] | hard[q]
                elif proto == "medium":
                    ok, jk = easy[q] | hard[q], junk[q]
                else:
                    ok, jk = hard[q], junk[q] | easy[q]
                if not ok:
                    continue
                ap, pr = ap_and_p(ranking[q], ok, jk)
                aps.append(ap)
                prs.append(pr)
                lines.append(f"{rname}\t{proto}\tap.{q}\t{ap:.12f}\n")
            lines.append(f"{rname}\t{proto}\tmAP\t{np.mean(aps):.12f}\n")
            for i, k in enumerate(KAPPAS):
                lines.append(f"{rname}\t{proto}\tmP@{k}\t{np.mean([p[i] for p in prs]):.12f}\n")
            lines.append(f"{rname}\t{proto}\tqueries\t{len(aps)}\n")
    with open(os.path.join(OUT, "expected.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
