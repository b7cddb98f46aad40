"""TREC files as trec_eval reads them (its `get_trec_results.c`, `get_qrels.c`): `#` comment
lines, text after a run line's sixth field, negative grades, blank lines, ids holding `#`. Each
generated file is measured by triage and by pytrec_eval (trec_eval itself) on the same lists,
built here without triage's reader. With `TRIAGE_TREC_EVAL_TEST` naming trec_eval's own `test/`
folder, its files give its expected output (`out.test*`); they are not in this repository."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
import pytrec_eval

import triage
from triage.cli.main import main
from triage.core.errors import InputError

# trec_eval's name → triage's, for the measures both compute
NAMES = {"map": "AP", "Rprec": "Rprec", "bpref": "Bpref", "recip_rank": "RR", "ndcg": "nDCG"}
NAMES |= {f"P_{k}": f"P@{k}" for k in (5, 10, 30, 100)} | {f"recall_{k}": f"R@{k}" for k in (5, 10, 100)}
NAMES |= {f"ndcg_cut_{k}": f"nDCG@{k}" for k in (5, 10, 100)}


def written(folder: Path, seed: int) -> tuple[Path, Path, dict, dict]:
    """A run and qrels in trec_eval's loosest form, and the same lists as dicts for pytrec_eval."""
    rng = random.Random(seed)
    docs = [f"doc_{i}#{i % 7}_x" for i in range(300)]  # '#' inside an id is no comment
    run_lines, qrels_lines = ["# a run made for this test", ""], ["# qrels: -1 pooled, -2 junk"]
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for i in range(40):
        q = f"q{i}"
        judged = rng.sample(docs, 15)
        qrels[q] = {d: rng.choice([-2, -1, 0, 0, 1, 2]) for d in judged}
        if i == 3:
            qrels[q][judged[0]] = 1  # at least one query with gold
        for d, g in qrels[q].items():
            qrels_lines.append(f"{q} 0 {d} {g}")
            if rng.random() < 0.05:
                qrels_lines.append("#   judged twice? no: a comment")
        listed = rng.sample(judged, 8) + rng.sample(docs, 40)
        listed = list(dict.fromkeys(listed))
        run[q] = {}
        for r, d in enumerate(listed, 1):
            score = round(100.0 - r + rng.random() * 0.5, 6)
            run[q][d] = score
            tail = rng.choice(["", "", " trailing words, ignored", "\textra\tfields 7 8"])
            sep = rng.choice([" ", "\t", "  "])
            run_lines.append(sep.join([q, "Q0", d, str(r), str(score), "tagged"]) + tail)
            if rng.random() < 0.02:
                run_lines += ["", "   # indented comment"]
    (folder / "run.txt").write_text("\n".join(run_lines) + "\n", "utf-8")
    (folder / "qrels.txt").write_text("\n".join(qrels_lines) + "\n", "utf-8")
    return folder / "run.txt", folder / "qrels.txt", run, qrels


@pytest.mark.parametrize("seed", [1, 2])
def test_loose_trec_files_give_trec_evals_numbers(tmp_path: Path, seed: int) -> None:
    run_path, qrels_path, run, qrels = written(tmp_path, seed)
    got = (
        triage.open(a=run_path, b=run_path, labels=qrels_path, measures=list(NAMES.values()))
        .report()
        .to_json()
    )
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(NAMES)).evaluate(run)
    scored = [q for q, ds in qrels.items() if max(ds.values()) >= 1]  # triage's mean: docs/measures.md
    assert got["n_scored"] == len(scored)
    means = got["arms"]["a"]["measures"]  # type: ignore[index]
    for te, ours in NAMES.items():
        expected = sum(per_query[q][te] for q in scored) / len(scored)
        assert means[ours] == pytest.approx(expected, abs=1e-12), (te, ours)


def test_negative_grades_are_judged_not_relevant(tmp_path: Path) -> None:
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq1 Q0 d3 3 1 a\n", "utf-8")
    (tmp_path / "b.run").write_text("q1 Q0 d3 1 3 b\nq1 Q0 d1 2 2 b\nq1 Q0 d2 3 1 b\n", "utf-8")
    (tmp_path / "q.qrels").write_text("q1 0 d1 -1\nq1 0 d2 -2\nq1 0 d3 1\n", "utf-8")
    report = triage.open(
        a=tmp_path / "a.run", b=tmp_path / "b.run", labels=tmp_path / "q.qrels", k=3
    ).report()
    out = report.to_json()
    assert out["arms"]["a"]["mrr"] == pytest.approx(1 / 3) and out["arms"]["b"]["mrr"] == 1.0  # type: ignore[index]
    assert out["arms"]["a"]["unjudged_in_top_k"] == 0  # type: ignore[index]  # judged: not relevant


def test_a_run_line_with_text_after_its_tag_is_detected_and_read(tmp_path: Path, capsys) -> None:
    run = tmp_path / "r.res"
    run.write_text(
        "q1\tQ0\td1\t1\t2.5\tSTANDARD more junk at the end\nq1\tQ0\td2\t2\t1.5\tSTANDARD\n", "utf-8"
    )
    (tmp_path / "q.qrels").write_text("# comment first\nq1 0 d2 1\n", "utf-8")
    assert main(["report", str(run), str(run), "--labels", str(tmp_path / "q.qrels"), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# triage report: ")  # md is Markdown


def test_a_bad_line_is_still_named_after_comments(tmp_path: Path) -> None:
    """Comment lines keep their numbers: the line at fault is named as the editor shows it."""
    run, qrels = tmp_path / "r.run", tmp_path / "r.qrels"
    run.write_text("# one\n# two\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2 two 1.0 t\n", "utf-8")
    qrels.write_text("q1 0 d1 1\n", "utf-8")
    with pytest.raises(InputError, match="line 4"):
        triage.open(a=run, b=run, labels=qrels, k=1)


# -- trec_eval's own test/ folder, when there is one -------------------------------------------

TEST_DIR = os.environ.get("TRIAGE_TREC_EVAL_TEST")


def expected(path: Path) -> dict[str, float]:
    rows = (line.split() for line in path.read_text("utf-8").splitlines())
    return {m: float(v) for m, q, v in rows if q == "all" and (m in NAMES or m == "num_q")}


@pytest.mark.skipif(not TEST_DIR, reason="TRIAGE_TREC_EVAL_TEST names no trec_eval test/ folder")
@pytest.mark.parametrize(
    ("run", "qrels", "out", "rel"),
    [
        ("results.test", "qrels.test", "out.test.a", 1),
        ("results.test", "qrels.test.with-comments", "out.test.a", 1),
        ("results.trunc", "qrels.test", "out.test.aqc", 1),  # text after the sixth field
        ("results.test", "qrels.rel_level", "out.test.aql", 2),  # grades -1 to 4, -l2
        ("results.comment.test", "qrels.comment.test", "out.comment.test", 1),  # comments, '#' in ids
    ],
)
def test_trec_evals_own_test_files(run: str, qrels: str, out: str, rel: int, capsys) -> None:
    folder = Path(str(TEST_DIR))
    want = expected(folder / out)

    def ours(name: str) -> str:
        if rel == 1:
            return name
        family, _, k = name.partition("@")
        return f"{family}(rel={rel})" + (f"@{k}" if k else "")

    names = {te: ours(n) for te, n in NAMES.items() if rel == 1 or n.startswith(("AP", "P@", "R@", "Bpref"))}
    argv = ["report", str(folder / run), str(folder / run), "--labels", str(folder / qrels)]
    assert main([*argv, "--measures", ",".join(names.values()), "--format", "json"]) in (0, 1)
    got = json.loads(capsys.readouterr().out)
    # trec_eval averages a query judged only not relevant in as 0; triage leaves it out of the mean
    # (docs/measures.md): triage's mean × n_scored / trec_eval's num_q is trec_eval's.
    scale = got["n_scored"] / want["num_q"]
    compared = 0
    for te, name in names.items():
        if te in want:
            assert round(got["arms"]["a"]["measures"][name] * scale, 4) == pytest.approx(
                want[te], abs=1e-9
            ), te
            compared += 1
    assert compared >= 9


def test_a_randomisation_p_at_its_floor_prints_as_the_bound_it_is(tmp_path: Path, capsys) -> None:
    """B puts every query's one relevant id higher, by a different amount: no round of random sign
    flips reaches the observed sum, so p = 1/(rounds + 1), printed `< 1/100` and explained."""
    rng = random.Random(5)
    for arm in ("a", "b"):
        lines = []
        for q in range(40):
            docs = [f"d{q}_{i}" for i in range(20)]
            docs.insert(rng.randint(0, 3) if arm == "b" else rng.randint(8, 19), f"g{q}")
            lines += [f"q{q} Q0 {d} {r} {30 - r} {arm}" for r, d in enumerate(docs, 1)]
        (tmp_path / f"{arm}.run").write_text("\n".join(lines) + "\n", "utf-8")
    (tmp_path / "q.qrels").write_text("".join(f"q{q} 0 g{q} 1\n" for q in range(40)), "utf-8")
    argv = ["report", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--labels", str(tmp_path / "q.qrels")]
    argv += ["--measures", "nDCG@10", "--tests", "randomization", "--rounds", "99"]
    assert main([*argv, "--format", "json"]) == 0
    p = json.loads(capsys.readouterr().out)["compare"]["nDCG@10"]["p"]["randomization"]
    assert p == pytest.approx(1 / 100)  # the JSON keeps the number
    for fmt in ("text", "markdown", "html"):
        assert main([*argv, "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "1/100" in out and "not one of 99 rounds" in out, fmt


def test_a_pair_labelled_twice_at_any_grades_is_said(tmp_path: Path) -> None:
    """Judged 0 and 1 (or −1 and 1): the highest grade is kept, and `labels.duplicates` says so."""
    (tmp_path / "r.run").write_text("1 Q0 D26 1 1.0 r\n", "utf-8")
    (tmp_path / "q.qrels").write_text("1 0 D26 0\n1 0 D26 1\n2 0 D1 1\n2 0 D9 -1\n2 0 D9 1\n", "utf-8")
    r = triage.open(a=tmp_path / "r.run", b=tmp_path / "r.run", labels=tmp_path / "q.qrels", k=1).report()
    found = [c for c in r.to_json()["checks"] if c["code"] == "labels.duplicates"]  # type: ignore[union-attr,index]
    assert found and found[0]["facts"] == {"count": 2} and r.arms.a.hit_rate == 0.5
