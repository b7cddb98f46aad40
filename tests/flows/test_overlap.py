"""Query origin and lexical overlap (core/views/origin.py, core/checks/overlap.py): the tokeniser against
`words.words`, the overlap against a plain-Python computation, the per-origin numbers against the
same report on the filtered query set, the `queries.generated_like` threshold chosen from
SciFact-like data, and both checks with their cause present and absent."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from triage.cli.main import main
from triage.core.checks.overlap import GENERATED_LIKE, overlap, spread, tokens
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.manifest import from_manifest
from triage.core.text.words import shared, words

from conftest import frozen_evaluation, manifest, write_parquet

STOPS = "the of in and a to is with for was by that on as".split()


def _vocabulary(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """n concepts, each (the abstract's word, a synonym a paraphrasing writer uses instead)."""
    letters = "bcdfghklmnprstvz"
    vowels = "aeiou"

    def word() -> str:
        return "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))

    return [(word() + "ase", word() + "ine") for _ in range(n)]


def scifact_like(
    folder: Path, seed: int, n: int = 60, generated: float = 0.0, from_headers: bool = False
) -> Path:
    """A SciFact-like evaluation: each document an abstract of six sentences over its topic's
    concepts; each query a claim about it. A real claim (origin "real") names six to nine of the
    topic's concepts, most in a paraphrasing writer's own words (a synonym), some the abstract never
    uses; a generated one (origin "generated", share `generated`) is one of the abstract's
    sentences reframed as a question. `from_headers`: real claims use the heading path's words."""
    rng = random.Random(seed)
    concepts = _vocabulary(rng, 40 * n)
    chunks, queries, labels, run = [], [], [], []
    for i in range(n):
        topic = concepts[40 * i : 40 * i + 40]
        used = topic[:24]  # the abstract's concepts; the rest are the topic's, unsaid
        sentences = []
        for _ in range(6):
            picked = rng.sample(used, rng.randint(6, 9))
            body = []
            for c in picked:
                body += [c[0], rng.choice(STOPS)]
            sentences.append(" ".join(body).capitalize() + ".")
        heading = " > ".join(c[0] for c in topic[30:34])  # section names the abstract never uses
        cid = f"d{i}"
        chunks.append({"chunk_id": cid, "header": f"Study {i} > {heading}", "text": " ".join(sentences)})
        qid = f"q{i:03d}"
        if rng.random() < generated:
            text = "What does the study show about " + sentences[rng.randrange(6)].lower().rstrip(".") + "?"
            origin = "generated"
        elif from_headers:
            text = " ".join(c[0] for c in topic[30:34]) + " " + rng.choice(used)[1]
            origin = "real"
        else:
            picked = rng.sample(used, rng.randint(4, 6)) + rng.sample(topic[24:], rng.randint(2, 3))
            text = " ".join(c[1] if rng.random() < 0.6 else c[0] for c in picked)
            origin = "real"
        queries.append({"query_id": qid, "text": text, "origin": origin})
        labels.append({"query_id": qid, "chunk_id": cid, "relevance": 1})
        hit = rng.random() < (0.9 if origin == "generated" else 0.6)
        others = [f"d{j}" for j in rng.sample(range(n), 6) if j != i][:5]
        run.append({"query_id": qid, "retrieved": ([cid] if hit else []) + others})
    write_parquet(folder / "chunks.parquet", chunks)
    write_parquet(folder / "queries.parquet", queries)
    write_parquet(folder / "labels.parquet", labels)
    write_parquet(folder / "a.parquet", run)
    # B: A's hits at rank 2, and a fifth of A's misses found at rank 1.
    b = [
        dict(r, retrieved=r["retrieved"][1:2] + r["retrieved"][:1] + r["retrieved"][2:])
        if r["retrieved"][0] == f"d{i}"
        else dict(r, retrieved=([f"d{i}"] if rng.random() < 0.2 else []) + r["retrieved"])
        for i, r in enumerate(run)
    ]
    write_parquet(folder / "b.parquet", b)
    return manifest(
        folder, "a.parquet", "b.parquet", "labels.parquet", corpus="chunks.parquet", queries="queries.parquet"
    )


def _overlap(path: Path):
    ev = frozen_evaluation(path)
    return ev, overlap(ev, open_corpus(from_manifest(path).corpus))


def report(capsys, *args: str) -> dict:
    assert main(["report", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


# -- the tokeniser and the overlap ----------------------------------------------------------------


def test_tokens_cut_the_words_words_cuts() -> None:
    rng = random.Random(7)
    alphabet = "ab's'' x_-.ßÉé12 ies ss us is does don't Policies bus'es THE i'm '\u0301ü中文 ٣\t\n"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    texts += ["Parental leave policies: how many weeks?", "the child's 2024 bonuses", None]
    t = tokens(pa.array(texts, pa.string()))
    got: list[set[str]] = [set() for _ in texts]
    for owner, word in zip(t.owner.tolist(), t.word.to_pylist(), strict=True):
        got[owner].add(word)
    assert got == [words(x) for x in texts]
    assert got[-3] == {"parental", "leave", "policy", "week"}


def test_overlap_is_the_share_of_query_words_in_the_closest_gold(tmp_path: Path) -> None:
    chunks = [
        {"chunk_id": "c1", "header": "Leave > Parental leave", "text": "Parents get sixteen weeks."},
        {"chunk_id": "c2", "header": "Benefits", "text": "Parental leave lasts sixteen weeks for parents."},
        {"chunk_id": "c3", "header": "Other", "text": "Nothing here."},
    ]
    queries = [
        {"query_id": "q1", "text": "how many weeks of parental leave"},  # words: week parental leave
        {"query_id": "q2", "text": "the of and"},  # no content word: no overlap
        {"query_id": "q3", "text": "weeks"},  # its gold is absent from the corpus
    ]
    labels = [
        {"query_id": "q1", "chunk_id": "c1", "relevance": 1},
        {"query_id": "q1", "chunk_id": "c2", "relevance": 1},
        {"query_id": "q2", "chunk_id": "c3", "relevance": 1},
        {"query_id": "q3", "chunk_id": "gone", "relevance": 1},
    ]
    run = [{"query_id": q, "retrieved": ["c3"]} for q in ("q1", "q2", "q3")]
    for name, rows in (("chunks", chunks), ("queries", queries), ("labels", labels), ("a", run), ("b", run)):
        write_parquet(tmp_path / f"{name}.parquet", rows)
    path = manifest(
        tmp_path,
        "a.parquet",
        "b.parquet",
        "labels.parquet",
        corpus="chunks.parquet",
        queries="queries.parquet",
    )
    ev, o = _overlap(path)
    # q1: c1's body holds "week" (1/3), c2's all three (1.0): the max; c1's path holds two (2/3).
    assert o.body.tolist()[0] == 1.0 and o.header[0] == pytest.approx(2 / 3)
    assert np.isnan(o.body[1]) and np.isnan(o.body[2]) and o.n_words.tolist() == [3, 0, 1]


@pytest.mark.slow
def test_overlap_agrees_with_plain_python_on_the_sample(sample: Path) -> None:
    ev, o = _overlap(sample)
    corpus = open_corpus(from_manifest(sample).corpus)
    texts = ev.query_column("text").to_pylist()
    for q in range(ev.n):
        qw = words(texts[q])
        golds = corpus.get(c for c, _ in ev.gold_of(q))
        body = max(len(shared(g.text, qw)) / len(qw) for g in golds.values())
        header = max(len(shared(g.header, qw)) / len(qw) for g in golds.values())
        assert (o.body[q], o.header[q]) == pytest.approx((body, header)), q


# -- the threshold, from SciFact-like data ----------------------------------------------------------


@pytest.mark.slow
def test_the_generated_like_threshold_separates_real_from_generated_with_margin(tmp_path: Path) -> None:
    real, generated = [], []
    for seed in range(6):
        for share, into in ((0.0, real), (1.0, generated)):
            folder = tmp_path / f"{seed}-{share}"
            _, o = _overlap(scifact_like(folder, seed, generated=share))
            into.append(spread(o.body).median)
    margin = 0.1
    assert max(real) + margin <= GENERATED_LIKE <= min(generated) - margin, (real, generated)
    # The threshold sits inside the gap the data leaves, not at an edge of [0, 1].
    assert 0.1 < max(real) < min(generated) < 1.0


# -- the checks, cause present and absent ---------------------------------------------------------


def _checks(d: dict, code: str) -> dict[str, str]:
    return {c["facts"].get("group", ""): c["level"] for c in d["checks"] if c["code"] == code}


@pytest.mark.slow
def test_generated_like_fires_for_the_generated_part_only(tmp_path: Path, capsys) -> None:
    d = report(capsys, str(scifact_like(tmp_path, 1, n=120, generated=0.3)))
    assert _checks(d, "queries.generated_like") == {
        "queries": "ok",
        "queries of origin 'real'": "ok",
        "queries of origin 'generated'": "warning",
    }
    warned = next(c for c in d["checks"] if c["code"] == "queries.generated_like" and c["level"] == "warning")
    groups = {g["group"]: g for g in d["overlap"]["groups"]}
    median = groups["origin:generated"]["body"]["median"]
    assert f"median body overlap {median:.2f}" in warned["message"]
    assert (
        f"over {groups['origin:generated']['body']['n']} queries of origin 'generated'" in warned["message"]
    )


def test_generated_like_fires_on_a_wholly_generated_set(tmp_path: Path, capsys) -> None:
    d = report(capsys, str(scifact_like(tmp_path, 2, generated=1.0)))
    assert _checks(d, "queries.generated_like") == {"queries": "warning"}  # one origin: one group


def test_header_vocabulary_present_and_absent(tmp_path: Path, capsys) -> None:
    headers = report(capsys, str(scifact_like(tmp_path / "h", 3, from_headers=True)))
    assert _checks(headers, "queries.header_vocabulary") == {"queries": "warning"}
    c = next(c for c in headers["checks"] if c["code"] == "queries.header_vocabulary")
    n, more = c["facts"]["n"], c["facts"]["header_above_body"]
    assert 2 * more > n and f"for {more} of {n} queries" in c["message"]
    real = report(capsys, str(scifact_like(tmp_path / "r", 3)))
    assert _checks(real, "queries.header_vocabulary") == {"queries": "ok"}


def test_overlap_unavailable_without_a_corpus(tmp_path: Path, capsys) -> None:
    path = scifact_like(tmp_path, 4)
    text = path.read_text().replace('[corpus]\npath = "chunks.parquet"\n', "")
    path.write_text(text)
    d = report(capsys, str(path))
    assert d["overlap"]["available"] is False and "no corpus" in d["overlap"]["reason"]
    assert [c["level"] for c in d["checks"] if c["code"] == "queries.overlap"] == ["ok"]
    assert not _checks(d, "queries.generated_like")
    assert main(["report", str(path)]) == 0
    assert "Lexical overlap unavailable: no corpus" in capsys.readouterr().out


# -- per-origin numbers ---------------------------------------------------------------------------


@pytest.mark.slow
def test_per_origin_numbers_equal_the_report_on_that_origin_alone(tmp_path: Path, capsys) -> None:
    path = scifact_like(tmp_path / "all", 5, n=150, generated=0.3)
    d = report(capsys, str(path))
    rows = {o["origin"]: o for o in d["origins"]}
    assert set(rows) == {"real", "generated"} and sum(o["paired"]["n"] for o in rows.values()) == 150
    queries = pa.parquet.read_table(tmp_path / "all" / "queries.parquet").to_pylist()
    for origin, row in rows.items():
        mine = {q["query_id"] for q in queries if q["origin"] == origin}
        part = tmp_path / origin
        for name in ("chunks", "queries", "labels", "a", "b"):
            table = pa.parquet.read_table(tmp_path / "all" / f"{name}.parquet").to_pylist()
            keep = table if name == "chunks" else [r for r in table if r["query_id"] in mine]
            write_parquet(part / f"{name}.parquet", keep)
        alone = report(capsys, str(manifest(part, "a.parquet", "b.parquet", "labels.parquet")))
        for side in ("a", "b"):
            for metric in ("hit_rate", "recall", "mrr", "ndcg"):
                assert row["arms"][side][metric] == pytest.approx(alone["arms"][side][metric]), (
                    origin,
                    metric,
                )
        for cell in ("both_hit", "both_miss", "a_hit_b_miss", "a_miss_b_hit", "n"):
            assert row["paired"][cell] == alone["paired"][cell]
        assert row["paired"]["a_hit_b_miss"] + row["paired"]["a_miss_b_hit"] == len(alone["flips"])
        assert d["slices"]["origin"] and any(
            s["value"] == origin and s["n"] == row["paired"]["n"] for s in d["slices"]["origin"]
        )
    q = d["origin_quote"]
    assert q["quote"] == "real" and q["real"]["a"] == rows["real"]["arms"]["a"]["hit_rate"]
    assert q["gap"]["b"] == pytest.approx(rows["generated"]["arms"]["b"]["hit_rate"] - q["real"]["b"])
    md = (main(["report", str(path), "--format", "markdown"]), capsys.readouterr().out)[1]
    assert "## By query origin" in md and "**Quote the real figure" in md


def test_no_quote_without_both_real_and_generated(tmp_path: Path, capsys) -> None:
    d = report(capsys, str(scifact_like(tmp_path, 6)))
    assert [o["origin"] for o in d["origins"]] == ["real"] and d["origin_quote"] is None


@pytest.mark.slow
def test_a_gate_floor_on_the_real_queries(tmp_path: Path, capsys) -> None:
    path = scifact_like(tmp_path, 7, n=100, generated=0.3)
    rows = {o["origin"]: o for o in report(capsys, str(path))["origins"]}
    real_b = rows["real"]["arms"]["b"]["hit_rate"]
    floors = tmp_path / "floors.toml"
    floors.write_text(f'[floors]\n"origin:real" = {real_b + 0.01:.4f}\n')
    assert main(["report", str(path), "--gate", str(floors)]) == 1
    capsys.readouterr()
    floors.write_text(f'[floors]\n"origin:real" = {real_b - 0.01:.4f}\n')
    assert main(["report", str(path), "--gate", str(floors)]) == 0
