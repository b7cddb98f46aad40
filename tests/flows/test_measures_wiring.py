"""Measures by name through the report, the CLI, the manifest and the API: each arm's mean in the
JSON equals ir_measures' on the same files (the queries the run lacks counting 0), per-query
columns, the default k, the depth check, and trec_eval's order for TREC runs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import ir_measures
import numpy as np
import pytest

import triage
from triage.cli.main import main
from triage.core.errors import InputError

from conftest import write_parquet

NAMES = ["nDCG@10", "AP", "R@100", "P(rel=2)@5", "RR@10", "Bpref", "Judged@10", "Rprec", "Success@1"]


def evaluation(folder: Path, seed: int = 3, run_k: str | None = "10") -> tuple[Path, dict, dict[str, dict]]:
    """Runs with strictly decreasing scores (one order for every tool), graded labels with 0s, a
    query B lacks and one only judged not relevant; the manifest, the qrels and both runs."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(200)]
    labels, qrels, runs = [], {}, {"a": {}, "b": {}}
    for i in range(60):
        q = f"q{i:02d}"
        judged = rng.sample(docs, rng.randint(1, 8))
        grades = [0] * len(judged) if i == 7 else [rng.choice([0, 1, 1, 2, 3]) for _ in judged]
        qrels[q] = dict(zip(judged, grades, strict=True))
        labels += [{"query_id": q, "chunk_id": d, "relevance": g} for d, g in qrels[q].items()]
        for arm in ("a", "b"):
            if arm == "b" and i == 11:
                continue
            ids = list(dict.fromkeys(rng.sample(judged + rng.sample(docs, 30), rng.choice([3, 12, 30]))))
            runs[arm][q] = {d: float(len(ids) - r) for r, d in enumerate(ids)}
    meta = {"k": run_k} if run_k else None
    for arm, lists in runs.items():
        rows = [{"query_id": q, "retrieved": list(v), "scores": list(v.values())} for q, v in lists.items()]
        write_parquet(folder / f"{arm}.parquet", rows, meta)
    write_parquet(folder / "labels.parquet", labels)
    lines = ["[labels]", 'path = "labels.parquet"']
    for arm in ("a", "b"):
        lines += [f"[arms.{arm}]", f'name = "{arm}"', f'path = "{arm}.parquet"']
    (folder / "triage.toml").write_text("\n".join(lines) + "\n", "utf-8")
    return folder / "triage.toml", qrels, runs


def expected_mean(name: str, qrels: dict, run: dict) -> float:
    """ir_measures per query over the scored queries (a grade ≥ 1), 0 for those the run lacks."""
    measure = ir_measures.parse_measure(name)
    scored = [q for q, ds in qrels.items() if max(ds.values()) >= 1]
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    return sum(got.get(q, 0.0) for q in scored) / len(scored)


def test_each_arms_means_in_the_json_equal_ir_measures(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    toml, qrels, runs = evaluation(tmp_path)
    spelled = "ndcg_cut_10,map,recall@100,P(rel=2)@5,mrr@10,bpref,Judged@10,r-precision,success_1"
    assert main(["report", str(toml), "--measures", spelled, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for arm in ("a", "b"):
        means = report["arms"][arm]["measures"]
        assert list(means) == NAMES  # canonical names, in the order asked
        for name in NAMES:
            assert means[name] == pytest.approx(expected_mean(name, qrels, runs[arm]), abs=1e-9), (arm, name)
    assert report["arms"]["a"]["ndcg"] is not None  # the four metrics keep their keys


def test_without_measures_the_json_has_no_measures_key(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    toml, _, _ = evaluation(tmp_path)
    assert main(["report", str(toml), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "measures" not in report["arms"]["a"] and report["k"] == 10


def test_an_unknown_name_exits_2_naming_the_close_ones(capsys: pytest.CaptureFixture) -> None:
    assert main(["report", "--measures", "nDCG@10,ndgc@10"]) == 2
    err = capsys.readouterr().err
    assert "--measures" in err and "'ndgc@10'" in err and "ndcg@k" in err


def test_the_manifests_measures_and_no_k_anywhere_judge_at_10_and_say_so(tmp_path: Path) -> None:
    toml, qrels, runs = evaluation(tmp_path, run_k=None)
    toml.write_text('measures = ["AP@5", "nDCG@50"]\n' + toml.read_text("utf-8"), "utf-8")
    report = triage.open(toml).report().to_json()
    assert report["k"] == 10
    codes = {c["code"]: c for c in report["checks"]}  # type: ignore[union-attr]
    assert "k.default" in codes and "k=10" in codes["k.default"]["message"]
    assert codes["measures.depth"]["facts"] == {"measure": "nDCG@50", "cutoff": 50, "depth": 30}
    means = report["arms"]["b"]["measures"]  # type: ignore[index]
    assert means["AP@5"] == pytest.approx(expected_mean("AP@5", qrels, runs["b"]), abs=1e-9)
    toml.write_text(toml.read_text("utf-8").split("\n", 1)[1], "utf-8")  # the measures line removed
    plain = triage.open(toml).report().to_json()  # without measures too: k = 10, and said
    assert plain["k"] == 10
    said = [c["message"] for c in plain["checks"] if c["code"] == "k.default"]  # type: ignore[union-attr,index]
    assert said and "k=10" in said[0] and "named measures" not in said[0]


def test_the_first_command_on_two_trec_runs_and_qrels_judges_at_10_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`triage report A B --labels Q`, nothing else: k = 10 in the title, the JSON and a check."""
    _, qrels, runs = evaluation(tmp_path, run_k=None)
    for arm, lists in runs.items():
        lines = [
            f"{q} Q0 {d} {r} {s} {arm}" for q, v in lists.items() for r, (d, s) in enumerate(v.items(), 1)
        ]
        (tmp_path / f"{arm}.run").write_text("\n".join(lines) + "\n", "utf-8")
    lines = [f"{q} 0 {d} {g}" for q, ds in qrels.items() for d, g in ds.items()]
    (tmp_path / "q.qrels").write_text("\n".join(lines) + "\n", "utf-8")
    argv = ["report", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--labels", str(tmp_path / "q.qrels")]
    assert main(argv) == 0
    assert "at k = 10 (the default: no k given)" in capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    codes = [c["code"] for c in report["checks"]]
    assert report["k"] == 10 and "k.default" in codes and "k.unrecorded" not in codes  # said once
    assert main([*argv, "--k", "5", "--format", "json"]) == 0  # a k named: no default, no warning
    named = json.loads(capsys.readouterr().out)
    assert named["k"] == 5 and "k.default" not in [c["code"] for c in named["checks"]]


def test_the_api_gives_per_query_columns_and_refuses_unknown_names(tmp_path: Path) -> None:
    toml, qrels, runs = evaluation(tmp_path)
    table = triage.open(toml, measures=["nDCG@10", "map_cut_5"]).queries()
    ids = table.column("query_id").to_pylist()
    got = dict(zip(ids, table.column("AP@5_b").to_pylist(), strict=True))
    reference = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.AP @ 5], qrels, runs["b"])}
    assert got["q07"] is None  # judged, nothing relevant: unlabelled
    assert got["q11"] == 0.0  # B lacks it
    for q, value in reference.items():
        if max(qrels[q].values()) >= 1:
            assert got[q] == pytest.approx(value, abs=1e-9)
        else:
            assert got[q] is None
    with pytest.raises(InputError, match="close"):
        triage.open(toml, measures="nDGC@10")


def test_a_trec_run_is_read_in_trec_evals_order_unless_told_otherwise(tmp_path: Path) -> None:
    # tied scores; the file's ranks put the relevant d1 first, trec_eval puts d2 (greater id) first
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 5.0 x\nq1 Q0 d2 2 5.0 x\n", "utf-8")
    (tmp_path / "b.run").write_text("q1 Q0 d1 1 6.0 y\nq1 Q0 d2 2 5.0 y\n", "utf-8")
    (tmp_path / "labels.qrels").write_text("q1 0 d1 1\n", "utf-8")
    args = {"a": tmp_path / "a.run", "b": tmp_path / "b.run", "labels": tmp_path / "labels.qrels", "k": 2}
    trec = triage.open(**args, measures="RR").report().to_json()["arms"]  # type: ignore[arg-type]
    given = triage.open(**args, measures="RR", order="as_given").report().to_json()["arms"]  # type: ignore[arg-type]
    assert trec["a"]["measures"]["RR"] == 0.5 and given["a"]["measures"]["RR"] == 1.0  # type: ignore[index]
    assert trec["b"]["measures"]["RR"] == 1.0  # no tie: one order
    assert trec["a"]["mrr"] == 1.0  # the four metrics read the stored order


@pytest.mark.parametrize("seed", [3, 4, 5])
@pytest.mark.parametrize("k", [1, 5, 10, 40])
def test_each_metric_equals_the_family_sharing_its_kernel(tmp_path: Path, seed: int, k: int) -> None:
    """One kernel each: on runs read in their stored order (no id twice), the four metrics at k
    are, query for query and to the bit, Success@k, RR@k and nDCG@k over every judgement at rel 1
    (a label graded 0 gains nothing, and a query with no gold is not scored); recall@k is not
    R@k, which divides by every relevant id, not min(k, |gold|)."""
    toml, qrels, _ = evaluation(tmp_path, seed)
    ev = triage.open(toml, measures=[f"Success@{k}", f"RR@{k}", f"nDCG@{k}", f"R@{k}"], k=k).ev
    scored = ev.scored
    assert scored.sum() == sum(max(ds.values()) >= 1 for ds in qrels.values()) > 0
    for arm in ev.arms:
        named, at_k = ev.named(arm), arm.judged
        assert (named[f"Success@{k}"][scored] == at_k.hit[scored]).all()
        assert (named[f"RR@{k}"][scored] == at_k.mrr[scored]).all()
        assert (named[f"nDCG@{k}"][scored] == at_k.ndcg[scored]).all()
        big = np.array([sum(g >= 1 for g in ds.values()) for ds in qrels.values()])[scored]
        recall, r = at_k.recall[scored], named[f"R@{k}"][scored]
        assert (recall[big <= k] == r[big <= k]).all()  # min(k, |gold|) is |gold|: alike
        beyond = (big > k) & (r > 0)  # more gold than k, some found: recall divides by k, R by |gold|
        assert (recall[beyond] > r[beyond]).all() and (k >= big.max() or beyond.any())


def test_a_manifests_unknown_measure_is_refused_as_the_manifest_is_read(tmp_path: Path) -> None:
    """Names are parsed where they enter: reading the manifest refuses an unknown one, naming the
    file and the close names, and the spec holds the parsed measures."""
    from triage.core.inputs.manifest import from_manifest

    toml, _, _ = evaluation(tmp_path)
    body = toml.read_text("utf-8")
    toml.write_text('measures = ["ndcg_cut_10", "map"]\n' + body, "utf-8")
    assert [str(m) for m in from_manifest(toml).measures] == ["nDCG@10", "AP"]
    toml.write_text('measures = ["nDGC@10"]\n' + body, "utf-8")
    with pytest.raises(InputError) as e:
        from_manifest(toml)
    assert (
        e.value.path == str(toml)
        and "unknown measure 'nDGC@10'" in e.value.problem
        and "close" in e.value.problem
    )
