"""Per-query agreement with trec_eval (pytrec_eval) at k = 1, 5, 10, to 1e-9.

Independent implementation, same files: the bundled sample and a generated evaluation of 6,000
queries with multi-gold graded labels, ragged depths, relevance-0 rows, unlabelled queries and
queries one arm did not answer.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import pytrec_eval

from triage.core.evaluation import Evaluation
from triage.core.measures.metrics import judge_arm

from conftest import frozen_evaluation, manifest, write_parquet

KS = (1, 5, 10)


def generated(folder: Path, n: int = 6000, seed: int = 11) -> Path:
    rng = random.Random(seed)
    space = [f"doc{d}#{c}" for d in range(3000) for c in range(rng.randint(1, 6))]
    labels, runs = [], {"a": [], "b": []}
    for i in range(n):
        q = f"q{i:05d}"
        gold = rng.sample(space, rng.choice([1, 1, 1, 2, 2, 3, 4, 7, 12]))
        if rng.random() < 0.03:  # judged, but nothing relevant: unlabelled
            labels.append({"query_id": q, "chunk_id": gold[0], "relevance": 0})
        else:
            labels += [{"query_id": q, "chunk_id": c, "relevance": rng.choice([1, 1, 1, 2, 3])} for c in gold]
            if rng.random() < 0.1:
                labels.append({"query_id": q, "chunk_id": rng.choice(space), "relevance": 0})
        for arm, p_gold in (("a", 0.6), ("b", 0.75)):
            if arm == "b" and rng.random() < 0.01:
                continue  # B never answered this query
            depth = rng.choice([3, 8, 10, 15, 20, 20, 20])
            ranked = rng.sample(space, depth)
            for g in gold:
                if rng.random() < p_gold and g not in ranked:
                    ranked[rng.randrange(depth)] = g
            runs[arm].append(
                {"query_id": q, "retrieved": ranked, "scores": [float(depth - r) for r in range(depth)]}
            )
    for arm, rows in runs.items():
        write_parquet(folder / f"{arm}.parquet", rows, {"k": "10"})
    write_parquet(folder / "labels.parquet", labels)
    return manifest(folder, "a.parquet", "b.parquet", "labels.parquet", k=None)


def trec_inputs(ev: Evaluation, run_path: Path) -> tuple[dict, dict]:
    labels = pq.read_table(ev.inputs.frozen.path).to_pylist()
    qrels: dict[str, dict[str, int]] = {}
    for r in labels:
        qrels.setdefault(str(r["query_id"]), {})[str(r["chunk_id"])] = int(r.get("relevance", 1) or 0)
    run: dict[str, list[str]] = {}
    for r in pq.read_table(run_path, columns=["query_id", "retrieved"]).to_pylist():
        run[r["query_id"]] = r["retrieved"]
    return qrels, run


def as_run(lists: dict[str, list[str]], k: int | None = None) -> dict[str, dict[str, float]]:
    """Scores strictly descending by stored rank, so trec_eval keeps the stored order."""
    out = {}
    for q, ids in lists.items():
        ids = ids[:k] if k else ids
        out[q] = {c: float(len(ids) - i) for i, c in enumerate(ids)}
    return out


def agree(ev: Evaluation) -> int:
    """Compare every scored query of both arms at each k; return the number of comparisons."""
    checked = 0
    qids = ev.query_ids.to_pylist()
    scored = ev.scored
    for arm in ev.arms:
        qrels, lists = trec_inputs(ev, arm.run.path)
        full = pytrec_eval.RelevanceEvaluator(
            qrels, {"success.1,5,10", "ndcg_cut.1,5,10", "recall.1,5,10", "num_rel"}
        ).evaluate(as_run(lists))
        for k in KS:
            cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(as_run(lists, k))
            mine = judge_arm(arm.hits, k, ev.gold.sets, None)
            for i, q in enumerate(qids):
                if not scored[i]:
                    continue
                t = full.get(q)
                if t is None:  # trec_eval skips a query the run lacks: all zero
                    assert not mine.hit[i] and mine.mrr[i] == 0 and mine.ndcg[i] == 0 and mine.recall[i] == 0
                    continue
                n_rel = t["num_rel"]
                assert mine.hit[i] == bool(t[f"success_{k}"]), (q, k)
                assert abs(mine.ndcg[i] - t[f"ndcg_cut_{k}"]) <= 1e-9, (q, k)
                assert abs(mine.mrr[i] - cut[q]["recip_rank"]) <= 1e-9, (q, k)
                # trec_eval's recall@k divides by |gold|; ours by min(k, |gold|) (docs/measures.md "The
                # numbers").
                assert abs(mine.recall[i] * min(k, n_rel) / n_rel - t[f"recall_{k}"]) <= 1e-9, (q, k)
                checked += 1
    return checked


def test_sample_agrees_with_trec_eval(sample: Path) -> None:
    ev = frozen_evaluation(sample)
    assert agree(ev) == 2 * len(KS) * int(ev.scored.sum())


@pytest.mark.slow
def test_generated_evaluation_agrees_with_trec_eval(tmp_path: Path) -> None:
    ev = frozen_evaluation(generated(tmp_path))
    assert int(ev.scored.sum()) >= 5000
    assert (~ev.b.present & ev.scored).any() and (~ev.scored).any()  # the awkward cases are there
    assert int(ev.gold.sets.n_gold.max()) > 10 and len(np.unique(ev.gold.sets.grade)) == 3
    assert agree(ev) > 2 * len(KS) * 5000 * 0.98


@pytest.mark.slow
@pytest.mark.parametrize("k", KS)
def test_means_agree_with_trec_eval_means(tmp_path: Path, k: int) -> None:
    ev = frozen_evaluation(generated(tmp_path, n=800, seed=k), k)
    qrels, lists = trec_inputs(ev, ev.b.run.path)
    res = pytrec_eval.RelevanceEvaluator(qrels, {f"success.{k}", f"ndcg_cut.{k}"}).evaluate(as_run(lists))
    scored_ids = set(ev.ids_where(ev.scored))
    hit = sum(res[q][f"success_{k}"] for q in scored_ids if q in res) / len(scored_ids)
    ndcg = sum(res[q][f"ndcg_cut_{k}"] for q in scored_ids if q in res) / len(scored_ids)
    m = ev.means(ev.b)
    assert abs(m.hit_rate - hit) <= 1e-9 and abs(m.ndcg - ndcg) <= 1e-9
