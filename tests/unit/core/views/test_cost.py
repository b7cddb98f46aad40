"""The cost row (core/views/cost.py) and answer accuracy (core/views/answers.py), on evaluations written here
with each cause present and absent, and on the bundled sample."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from triage.cli.main import main
from triage.core.checks.model import Level
from triage.core.errors import InputError
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.manifest import from_manifest
from triage.core.text.words import token_estimate, token_estimates
from triage.core.views.answers import answers
from triage.core.views.cost import check_cost, cost, grouped_percentiles
from triage.report.build import build
from triage.workspace.detail import build_detail
from triage.workspace.snapshot import open_snapshot

from conftest import manifest, write_parquet

N = 60
K = 3


def write_eval(
    folder: Path,
    meta_a: dict[str, str] | None = None,
    meta_b: dict[str, str] | None = None,
    latency: bool = True,
    answer_a: list[bool | None] | None = None,
    answer_b: list[bool | None] | None = None,
    seed: int = 5,
) -> Path:
    """N queries over 40 chunks whose headers hold 0..9 words; q{i} has gold c{i % 40}. Arm A hits
    every even query, B every query but those divisible by 5. Tenants t0..t2 by i % 3; latency
    skewed per tenant so the median of the tenants' medians differs from the median."""
    rng = np.random.default_rng(seed)
    chunks = [
        {"chunk_id": f"c{j}", "header": " ".join(["word"] * (j % 10)) or None, "text": f"body {j}"}
        for j in range(40)
    ]
    write_parquet(folder / "chunks.parquet", chunks)
    lat_a = np.round(rng.gamma(2.0, 10.0, N) * (1 + np.arange(N) % 3 * 3), 2)
    lat_b = np.round(lat_a * rng.uniform(0.8, 1.5, N), 2)

    def rows(hit: list[bool], lat: np.ndarray, answer: list[bool | None] | None) -> list[dict]:
        out = []
        for i in range(N):
            gold = f"c{i % 40}"
            others = [f"c{(i + d) % 40}" for d in range(1, 6)]
            ids = [gold, *others[: K - 1]] if hit[i] else others
            row: dict = {"query_id": f"q{i}", "retrieved": ids, "tenant": f"t{i % 3}"}
            if latency:
                row["latency_ms"] = None if i == 7 else float(lat[i])
            if answer is not None:
                row["answer_correct"] = answer[i]
            out.append(row)
        return out

    hit_a = [i % 2 == 0 for i in range(N)]
    hit_b = [i % 5 != 0 for i in range(N)]
    write_parquet(folder / "a.parquet", rows(hit_a, lat_a, answer_a), {"name": "plain", **(meta_a or {})})
    write_parquet(folder / "b.parquet", rows(hit_b, lat_b, answer_b), {"name": "headers", **(meta_b or {})})
    write_parquet(
        folder / "labels.parquet", [{"query_id": f"q{i}", "chunk_id": f"c{i % 40}"} for i in range(N)]
    )
    return manifest(folder, "a.parquet", "b.parquet", "labels.parquet", k=K, corpus="chunks.parquet")


def _open(path: Path):
    snapshot = open_snapshot(from_manifest(path))
    return snapshot, open_corpus(snapshot.spec.corpus)


def test_token_estimates_equal_the_one_text_estimate() -> None:
    texts = [
        "",
        "  ",
        "a b",
        " a  b ",
        "a\u00a0b",
        "a\u2003b c",
        "a\x1cb",
        "a\x0bb",
        "x\n\ny",
        None,
        "A > B > C",
    ]
    got = token_estimates(pa.array(texts, pa.string())).tolist()
    assert got == [token_estimate(t) for t in texts]


def test_grouped_percentiles_equal_numpy_per_group() -> None:
    rng = np.random.default_rng(1)
    values = rng.gamma(2.0, 10.0, 5000)
    values[rng.random(5000) < 0.1] = np.nan
    groups = rng.integers(-1, 7, 5000)
    groups[groups == 4] = 5  # group 4 empty
    got, n = grouped_percentiles(values, groups, 7, (50.0, 95.0, 0.0, 100.0))
    for g in range(7):
        mine = values[(groups == g) & ~np.isnan(values)]
        assert n[g] == len(mine)
        if len(mine) == 0:
            assert np.isnan(got[:, g]).all()
        else:
            assert np.allclose(got[:, g], np.percentile(mine, [50, 95, 0, 100]), rtol=1e-12, atol=0)


def test_latency_per_arm_and_per_slice_against_numpy_on_the_filtered_set(tmp_path: Path) -> None:
    snapshot, corpus = _open(write_eval(tmp_path))
    ev = snapshot.ev
    c = cost(ev, corpus)
    table = ev.a.run.table
    lat = np.array([np.nan if x is None else x for x in table.column("latency_ms").to_pylist()])
    known = lat[~np.isnan(lat)]
    assert c.a.latency_n == N - 1
    assert c.a.latency_p50.value == pytest.approx(np.percentile(known, 50), rel=1e-12)
    assert c.a.latency_p95.value == pytest.approx(np.percentile(known, 95), rel=1e-12)
    tenants = table.column("tenant").to_pylist()
    rows = {s.value: s for s in c.slices if s.key == "tenant"}
    medians = []
    for t in ("t0", "t1", "t2"):
        mine = lat[[x == t for x in tenants]]
        mine = mine[~np.isnan(mine)]
        assert rows[t].n_a == len(mine)
        assert rows[t].p50_a == pytest.approx(np.percentile(mine, 50), rel=1e-12)
        assert rows[t].p95_a == pytest.approx(np.percentile(mine, 95), rel=1e-12)
        medians.append(np.percentile(mine, 50))
    # the arm's median is its own, not one rebuilt from the slices' medians
    assert abs(np.median(medians) - c.a.latency_p50.value) > 1.0


def test_no_latency_column_leaves_latency_unknown_and_says_so(tmp_path: Path) -> None:
    snapshot, corpus = _open(write_eval(tmp_path, latency=False))
    c = cost(snapshot.ev, corpus)
    assert c.a.latency_p50.value is None and c.a.latency_p50.source == "no latency_ms column"
    assert c.slices == ()


def _top_k_mean(ev, arm, corpus) -> float:
    ids = [c for qid in ev.query_ids.to_pylist() for c in arm.retrieved(ev.query_index(qid))[: ev.k]]
    got = corpus.get(ids)
    return float(np.mean([token_estimate(got[c].header) for c in ids]))


def test_header_tax_follows_header_mode(tmp_path: Path) -> None:
    path = write_eval(tmp_path, {"header_mode": "none"}, {"header_mode": "prepend"})
    snapshot, corpus = _open(path)
    ev = snapshot.ev
    c = cost(ev, corpus)
    assert c.a.header_tokens.value == 0 and c.a.header_tax.value == 0
    want = _top_k_mean(ev, ev.b, corpus)
    assert c.b.heading_tokens.value == pytest.approx(want)
    assert c.b.header_tokens.value == pytest.approx(want)
    assert c.b.header_tax.value == pytest.approx(K * want)
    assert c.a.heading_tokens.value == pytest.approx(
        _top_k_mean(ev, ev.a, corpus)
    )  # what a prepend would cost
    # unrecorded header_mode: whether a header is paid is unknown, and the source says why
    unknown = cost(_open(write_eval(tmp_path / "u"))[0].ev, corpus)
    assert unknown.b.header_tax.value is None and "unrecorded" in unknown.b.header_tokens.source
    # no corpus: heading paths unknown
    assert cost(ev, None).b.heading_tokens.value is None


def _checks(path: Path, code: str):
    snapshot, corpus = _open(path)
    return [c for c in check_cost(snapshot.ev, cost(snapshot.ev, corpus)) if c.code == code]


def test_unequal_chunk_counts_are_an_error_naming_both(tmp_path: Path) -> None:
    bad = _checks(write_eval(tmp_path / "bad", {"n_chunks": "40"}, {"n_chunks": "52"}), "cost.chunk_count")
    assert [c.level for c in bad] == [Level.ERROR]
    assert "40" in bad[0].message and "52" in bad[0].message and "metadata n_chunks" in bad[0].message
    # one arm records it, the other falls back on the corpus's 40 rows: equal
    ok = _checks(write_eval(tmp_path / "ok", {"n_chunks": "40"}), "cost.chunk_count")
    assert [c.level for c in ok] == [Level.OK]
    # neither records it and the corpus differs from one: an error from the corpus count
    bad_corpus = _checks(write_eval(tmp_path / "c", {}, {"n_chunks": "41"}), "cost.chunk_count")
    assert [c.level for c in bad_corpus] == [Level.ERROR] and "corpus rows" in bad_corpus[0].message


def _closure_meta(gap: float) -> tuple[dict[str, str], dict[str, str]]:
    a = {"header_mode": "none", "embed_input_tokens_mean": "20.0"}
    b = {"header_mode": "prepend", "embed_input_tokens_mean": f"{20.0 + gap}"}
    return a, b


def test_the_closure_check_warns_when_the_gap_is_not_the_header(tmp_path: Path) -> None:
    # corpus headers: j % 10 words, mean over 40 chunks of ⌈w × 4/3⌉ = (0+2+3+4+6+7+8+10+11+12)/10 = 6.3
    mean = np.mean([token_estimate(" ".join(["w"] * (j % 10))) for j in range(40)])
    assert mean == pytest.approx(6.3)
    ok = _checks(write_eval(tmp_path / "ok", *_closure_meta(6.0)), "cost.closure")
    assert [c.level for c in ok] == [Level.OK]
    bad = _checks(write_eval(tmp_path / "bad", *_closure_meta(30.0)), "cost.closure")
    assert [c.level for c in bad] == [Level.WARNING]
    assert "+30.0" in bad[0].message and "+6.3" in bad[0].message
    assert bad[0].facts["expected"] == pytest.approx(6.3)
    # no header added by either arm: the gap should be 0
    a, b = _closure_meta(6.0)
    b["header_mode"] = "none"
    assert [c.level for c in _checks(write_eval(tmp_path / "none", a, b), "cost.closure")] == [Level.WARNING]
    # not recorded by one arm: no check at all
    assert _checks(write_eval(tmp_path / "one", {"embed_input_tokens_mean": "20"}), "cost.closure") == []


def test_answer_cells_and_paired_accuracy(tmp_path: Path) -> None:
    ans_a = [i % 3 != 0 for i in range(N)]
    ans_b: list[bool | None] = [i % 4 != 0 for i in range(N)]
    ans_b[1] = None
    snapshot, _ = _open(write_eval(tmp_path, answer_a=ans_a, answer_b=ans_b))
    ev = snapshot.ev
    x = answers(ev)
    assert x is not None and x.a is not None and x.b is not None
    hit_a = [i % 2 == 0 for i in range(N)]
    assert x.a.working == sum(h and r for h, r in zip(hit_a, ans_a, strict=True))
    assert x.a.lucky == sum(not h and r for h, r in zip(hit_a, ans_a, strict=True))
    assert x.a.assembly == sum(h and not r for h, r in zip(hit_a, ans_a, strict=True))
    assert x.a.retrieval == sum(not h and not r for h, r in zip(hit_a, ans_a, strict=True))
    assert x.a.n == N and x.b.n == N - 1
    both = [i for i in range(N) if ans_b[i] is not None]
    p = x.paired
    assert p.n == N - 1
    assert p.accuracy_a == pytest.approx(np.mean([ans_a[i] for i in both]))
    assert p.accuracy_b == pytest.approx(np.mean([ans_b[i] for i in both]))
    assert p.a_correct_b_wrong == sum(ans_a[i] and not ans_b[i] for i in both)
    assert p.wilson_a[0] < p.accuracy_a < p.wilson_a[1]
    assert p.hit_rate_a == pytest.approx(np.mean([hit_a[i] for i in both]))
    report = build(snapshot)
    assert report.answers is not None and report.answers.cells.a is not None
    # absent: no section
    plain, _ = _open(write_eval(tmp_path / "none"))
    assert answers(plain.ev) is None and build(plain).answers is None


def test_answer_correct_is_read_from_booleans_or_0_1_and_refused_otherwise(tmp_path: Path) -> None:
    path = write_eval(tmp_path, answer_a=[i % 2 == 0 for i in range(N)])
    b = tmp_path / "b.parquet"
    rows = [{"query_id": f"q{i}", "retrieved": [f"c{i % 40}"], "answer_correct": i % 2} for i in range(N)]
    write_parquet(b, rows, {"name": "headers"})
    snapshot = open_snapshot(from_manifest(path))
    assert snapshot.ev.b.aligned("answer_correct").to_pylist()[:3] == [False, True, False]
    rows[3]["answer_correct"] = 2
    write_parquet(b, rows, {"name": "headers"})
    with pytest.raises(InputError, match="answer_correct"):
        open_snapshot(from_manifest(path))
    write_parquet(b, [{**r, "answer_correct": "yes"} for r in rows], {"name": "headers"})
    with pytest.raises(InputError, match="answer_correct"):
        open_snapshot(from_manifest(path))


def test_the_detail_shows_each_arms_answer(tmp_path: Path) -> None:
    ans_b: list[bool | None] = [True] * N
    ans_b[4] = None
    snapshot, corpus = _open(write_eval(tmp_path, answer_b=ans_b))
    d = build_detail(snapshot, snapshot.ev.query_index("q4"), corpus)
    assert not d.a.graded and d.b.graded and d.b.answer_correct is None
    d = build_detail(snapshot, snapshot.ev.query_index("q5"), corpus)
    assert d.b.answer_correct is True


@pytest.mark.slow
def test_the_sample_cost_section_and_answers_in_every_format(sample: Path, capsys) -> None:
    assert main(["report", str(sample), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    arms = out["cost"]["arms"]
    for side in ("a", "b"):
        assert arms[side]["latency_p50_ms"]["value"] > 0 and arms[side]["latency_p95_ms"]["value"] > 0
        assert arms[side]["latency_p50_ms"]["source"].startswith("column latency_ms")
        assert arms[side]["n_chunks"] == {"value": 725, "source": "metadata n_chunks"}
    assert arms["a"]["header_tax"]["value"] == 0
    assert arms["b"]["header_tax"]["value"] == pytest.approx(5 * arms["b"]["header_tokens"]["value"])
    assert arms["b"]["header_tax"]["value"] > 50
    codes = {c["code"]: c["level"] for c in out["checks"]}
    assert codes["cost.chunk_count"] == "ok" and codes["cost.closure"] == "ok"
    cells = out["answers"]["cells"]
    assert sum(cells["a"][x] for x in ("working", "lucky", "assembly", "retrieval")) == cells["a"]["n"] == 200
    assert out["answers"]["n"] == 198 and not math.isnan(out["answers"]["accuracy"]["b"])
    assert main(["report", str(sample)]) == 0
    text = capsys.readouterr().out
    assert "What the change cost" in text and "latency p95 ms" in text and "header tax" in text
    assert "assembly problem" in text and "Latency by slice" in text
    assert main(["report", str(sample), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "## What the change cost" in md and "## Evidence × answer" in md and "cost.closure" in md


def test_token_estimates_on_random_text_slices_and_chunks() -> None:
    import random

    r = random.Random(1)
    alphabet = ["a", "b", " ", "  ", "\t", "\n", "\x1c", "é", "\u00a0", "\u3000", "\x85", "\x0b"]
    texts = ["".join(r.choice(alphabet) for _ in range(r.randint(0, 12))) for _ in range(3000)] + [None]
    arr = pa.array(texts, pa.string())
    want = [token_estimate(t) for t in texts]
    assert token_estimates(arr.slice(3)).tolist() == want[3:]
    assert token_estimates(pa.chunked_array([arr.slice(0, 100), arr.slice(100)])).tolist() == want
