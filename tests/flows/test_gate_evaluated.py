"""A gate that evaluated nothing fails (exit 1, naming why, in every format); `gate.noise` and
`gate.mde` claim no margin and no MDE they did not compute; a floor or max_drop no value of the
measure can reach is a bad gate file (exit 2, naming the file, the table and the measure's range)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.gate.apply import read_gate
from triage.core.gate.propose import toml_key
from triage.core.measures.names import FAMILIES, Cut

from conftest import write_evaluation

N = 40
FLOORS = "[floors]\noverall = 0.5\n"
DROP = "[measures.RR]\nmax_drop = 0.05\n"  # B − A holds whenever both arms score the same
BOTH = FLOORS + '[measures."nDCG@10"]\nfloor = 0.5\nmax_drop = 0.05\n'


def write(folder: Path, *, grade: int = 1, labelled: str = "q", a: str = "q", b: str = "q") -> Path:
    """N queries; every run lists each query's gold id first. `labelled`, `a`, `b`: the prefix of
    the query ids the labels judge and each run answers (another prefix: other queries)."""
    rows = {
        arm: [{"query_id": f"{p}{i}", "retrieved": [f"g{i}", "x"]} for i in range(N)]
        for arm, p in (("a", a), ("b", b))
    }
    labels = [{"query_id": f"{labelled}{i}", "chunk_id": f"g{i}", "relevance": grade} for i in range(N)]
    queries = [{"query_id": f"q{i}", "text": f"question {i}", "tenant": "t"} for i in range(N)]
    return write_evaluation(folder, rows["a"], rows["b"], labels, queries)


def gate(folder: Path, text: str) -> Path:
    path = folder / "gate.toml"
    path.write_text(text, "utf-8")
    return path


def reports(capsys, manifest: Path, gate_file: Path) -> tuple[dict, dict[str, str]]:
    """The JSON report and the text, Markdown and HTML ones, each checked to exit as the JSON's
    gate says (1 when it fails)."""
    code = main(["report", str(manifest), "--gate", str(gate_file), "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code == (0 if d["gate"]["holds"] else 1)
    out = {}
    for form in ("text", "markdown", "html"):
        assert main(["report", str(manifest), "--gate", str(gate_file), "--format", form]) == code
        out[form] = capsys.readouterr().out
    return d, out


CAUSES = {
    "every label has grade 0": (
        {"grade": 0},
        f"no query was scored (none of the {N} labels has grade ≥ 1)",
    ),
    "the labels are for other queries": (
        {"labelled": "z"},
        f"neither run answers any of the {N} scored queries (z0, z1, z2, z3, z4, … (+35))",
    ),
    "B answers other queries": (
        {"b": "y"},
        f"B (b) answers none of the {N} scored queries (q0, q1, q2, q3, q4, … (+35))",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("cause", list(CAUSES))
@pytest.mark.parametrize("limits", [FLOORS, DROP, BOTH], ids=["floors", "max_drop", "both"])
def test_a_gate_that_evaluated_nothing_fails_naming_why(
    tmp_path: Path, capsys, cause: str, limits: str
) -> None:
    kwargs, why = CAUSES[cause]
    d, out = reports(capsys, write(tmp_path, **kwargs), gate(tmp_path, limits))
    g = d["gate"]
    assert not g["holds"] and not g["evaluated"] and g["nothing_evaluated"] == why
    said = f"{why} — nothing evaluated, so the gate fails"
    assert said in " ".join(out["text"].split())  # the terminal wraps long lines
    assert f"**Gate**: {said}." in out["markdown"] and said in out["html"]
    for c in d["checks"]:
        if c["code"] == "gate.noise":
            assert "no margin computed" in c["message"] and "at least" not in c["message"]
        if c["code"] == "gate.mde":
            assert "no minimum detectable effect computed" in c["message"]


def test_labels_of_grade_0_alone_fail_a_gate_of_one_max_drop(tmp_path: Path, capsys) -> None:
    """The fast case of the above: a max_drop alone held on nothing before."""
    assert (
        main(
            ["report", str(write(tmp_path, grade=0)), "--gate", str(gate(tmp_path, DROP)), "--format", "json"]
        )
        == 1
    )
    g = json.loads(capsys.readouterr().out)["gate"]
    assert g["evaluated"] is False and g["nothing_evaluated"].startswith("no query was scored")
    assert not g["holds"] and g["measures"][0]["n"] == 0 and g["measures"][0]["drop_holds"]  # held on nothing


def test_a_gate_of_floors_on_empty_slices_only_evaluated_nothing(tmp_path: Path, capsys) -> None:
    manifest = write(tmp_path)  # no selectivity: every band is empty
    path = gate(tmp_path, '[floors]\n"selectivity:<0.1%" = 0.5\n"selectivity:1–10%" = 0.5\n')
    assert main(["report", str(manifest), "--gate", str(path), "--format", "json"]) == 1
    g = json.loads(capsys.readouterr().out)["gate"]
    assert (
        g["nothing_evaluated"]
        == "no floor's slice holds a scored query (selectivity:<0.1%, selectivity:1–10%)"
    )
    # beside a floor that has queries, an empty band still holds with n 0 (docs/gate.md)
    path = gate(tmp_path, '[floors]\noverall = 0.5\n"selectivity:<0.1%" = 0.5\n')
    assert main(["report", str(manifest), "--gate", str(path), "--format", "json"]) == 0
    g = json.loads(capsys.readouterr().out)["gate"]
    assert g["evaluated"] and g["holds"] and g["nothing_evaluated"] is None


def test_the_same_gate_on_scored_queries_evaluates_them(tmp_path: Path, capsys) -> None:
    d, out = reports(capsys, write(tmp_path), gate(tmp_path, BOTH))
    g = d["gate"]
    assert g["holds"] and g["evaluated"] and g["nothing_evaluated"] is None
    assert "nothing evaluated" not in out["text"] + out["markdown"] + out["html"]


def test_no_margin_is_claimed_where_the_standard_error_is_0(tmp_path: Path, capsys) -> None:
    """B hits every query: SE √(p(1−p)/n) is 0 and no distance in standard errors is computed."""
    manifest = write(tmp_path)
    assert (
        main(["report", str(manifest), "--gate", str(gate(tmp_path, DROP + FLOORS)), "--format", "json"]) == 0
    )
    d = json.loads(capsys.readouterr().out)
    (noise,) = [c for c in d["checks"] if c["code"] == "gate.noise"]
    assert noise["level"] == "ok" and noise["facts"] == {"not_computed": ["overall"]}
    assert (
        noise["message"]
        == f"no margin computed: no floor has a standard error (overall: B's rate 1 at n {N}, SE 0)"
    )
    assert d["gate"]["floors"][0]["distance_se"] is None
    (mde,) = [c for c in d["checks"] if c["code"] == "gate.mde"]
    assert mde["message"] == f"no minimum detectable effect computed (RR: all differences zero, n {N})"
    assert mde["facts"] == {"not_computed": ["RR"]}


def test_a_margin_is_claimed_only_for_the_floors_it_was_computed_for(tmp_path: Path, capsys) -> None:
    rows_a, rows_b, labels, queries = [], [], [], []
    for i in range(60):  # tenant "perfect": B hits all 30; "half": B hits 15 of 30
        tenant = "perfect" if i < 30 else "half"
        hit = tenant == "perfect" or i % 2 == 0
        rows_a.append({"query_id": f"q{i}", "retrieved": [f"g{i}"]})
        rows_b.append({"query_id": f"q{i}", "retrieved": [f"g{i}"] if hit else ["x"]})
        labels.append({"query_id": f"q{i}", "chunk_id": f"g{i}", "relevance": 1})
        queries.append({"query_id": f"q{i}", "text": "t", "tenant": tenant})
    manifest = write_evaluation(tmp_path, rows_a, rows_b, labels, queries)
    path = gate(tmp_path, '[floors]\n"tenant:*" = 0.1\n')  # half: 0.5 is 4.4 SE above 0.1
    assert main(["report", str(manifest), "--gate", str(path), "--format", "json"]) == 0
    (noise,) = [c for c in json.loads(capsys.readouterr().out)["checks"] if c["code"] == "gate.noise"]
    assert noise["message"] == (
        "every floor is at least 2 standard errors from B's hit rate, but for 1 floor with no standard "
        "error, no margin computed (tenant:perfect: B's rate 1 at n 30, SE 0)"
    )
    assert noise["facts"] == {"not_computed": ["tenant:perfect"]}


def some_name(family: str) -> str:
    return family + ("@5" if FAMILIES[family].cut is Cut.REQUIRED else "")


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize(
    ("limit", "says"),
    [
        ("floor = 1.01", "floor = 1.01 is out of reach: {m} lies in [0, 1]"),
        ("floor = -0.01", "floor = -0.01 is out of reach: {m} lies in [0, 1]"),
        ("floor = 2", "floor = 2 is out of reach: {m} lies in [0, 1]"),
        ("floor = 1e400", "floor = inf must be a number"),
        ("floor = nan", "floor = nan must be a number"),
        ("floor = 100000000000000000000000000000", "floor = 100000000000000000000000000000 is out of reach"),
        ("floor = 0x" + "f" * 5000, "floor = <an integer of about 6,020 digits> is out of reach"),
        ("max_drop = 1.5", "max_drop = 1.5 is out of reach: {m} lies in [0, 1], so B − A ≥ −1"),
        ("max_drop = -0.5", "max_drop = -0.5 must not be negative"),
        ("max_drop = -inf", "max_drop = -inf must be a number"),
    ],
    ids=lambda v: v[:24],
)
def test_a_limit_out_of_the_measures_reach_is_a_bad_gate_file(
    tmp_path: Path, family: str, limit: str, says: str
) -> None:
    name = some_name(family)
    path = gate(tmp_path, f'[measures."{name}"]\n{limit}\n')
    with pytest.raises(InputError) as e:
        read_gate(path)
    message = str(e.value)
    assert message.startswith(f"{path}: [measures.{toml_key(name)}]: ") and says.format(m=name) in message


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_ends_of_a_measures_reach_are_limits_it_takes(tmp_path: Path, family: str) -> None:
    name = some_name(family)
    for text in ("floor = 0\nmax_drop = 1", "floor = 1\nmax_drop = 0", "floor = 1.0\nmax_drop = 1.0"):
        limit = read_gate(gate(tmp_path, f'[measures."{name}"]\n{text}\n')).measures[name]
        assert (limit.floor, limit.max_drop) in ((0.0, 1.0), (1.0, 0.0), (1.0, 1.0))


@pytest.mark.parametrize(
    "value", ["2", "-0.5", "1.0000001", "1e400", "-inf", "nan", "100000000000000000000", "true"]
)
def test_a_hit_rate_floor_out_of_0_1_exits_2_naming_the_file(tmp_path: Path, capsys, value: str) -> None:
    path = gate(tmp_path, f'[floors]\n"tenant:*" = {value}\n')
    assert main(["report", "--gate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{path}: [floors]: floor 'tenant:*' = " in err
        and "must be a number between 0 and 1 (a hit rate)" in err
    )
    assert "Traceback" not in err


def test_a_wildcard_floor_on_a_column_the_evaluation_lacks_is_refused(tmp_path: Path, capsys) -> None:
    """`"tenant:*" = 0.9` with no tenant column names no slice: exit 2, as `"tenant:acme"` is, never
    a gate that holds on 0 of 0 floors."""
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\n", "utf-8")
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n", "utf-8")
    gate = tmp_path / "g.toml"
    gate.write_text('[floors]\n"tenant:*" = 0.9\n', "utf-8")
    run = str(tmp_path / "a.run")
    assert main(["report", run, run, "--labels", str(tmp_path / "q.qrels"), "--gate", str(gate)]) == 2
    err = capsys.readouterr().err
    assert "g.toml" in err and "'tenant:*' names no slice" in err and "no such column" in err
