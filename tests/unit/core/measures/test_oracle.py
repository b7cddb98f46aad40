"""Per-query agreement with trec_eval (pytrec_eval) at k = 1, 5, 10, to 1e-9.

Independent implementation, same files: the bundled sample and a generated evaluation of 6,000
queries with multi-gold graded labels, ragged depths, relevance-0 rows, unlabelled queries and
queries one arm did not answer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from triage.core.evaluation import Evaluation
from triage.core.measures.metrics import judge_arm

from conftest import frozen_evaluation
from trec_oracle import as_run, generated, trec_inputs

KS = (1, 5, 10)


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
