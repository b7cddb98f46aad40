"""The report's JSON Schema (`triage report --json-schema`): made from the typed model, strict
enough to catch a renamed or retyped key, and met by every report (every other test's reports
are checked too, by report_schema_check.py through conftest.py)."""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys
import typing
from pathlib import Path

import jsonschema
import pytest
import report_schema_check as rsc

from triage.cli.main import main
from triage.report import model
from triage.report.arms import ByArm
from triage.report.rows import Rows
from triage.report.schema import _Schemas, json_schema
from triage.report.sections.metrics import AtK
from triage.report.sections.queries import QueryTable

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "sample_runs" / "runs"


def report_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    before = rsc.checked[0]
    rc = main(["report", *args, "--format", "json"])
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    assert rsc.checked[0] == before + 1  # the central check saw it
    return json.loads(out)


def test_json_schema_prints_the_schema_without_any_input(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no manifest here, and none is read
    assert main(["report", "--json-schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json_schema()
    jsonschema.Draft202012Validator.check_schema(printed)


def test_python_m_triage_prints_it_too(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "triage", "report", "--json-schema", "no-such-file.toml"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json_schema()


def reachable() -> dict[str, type]:
    """Every dataclass the report holds, found from `Report`'s annotations (not from the schema)."""
    found: dict[str, type] = {}

    def visit(t: object) -> None:
        for a in typing.get_args(t):
            visit(a)
        origin = typing.get_origin(t)
        if origin is not None:
            visit(origin)
        if isinstance(t, type) and issubclass(t, Rows | QueryTable):
            visit(t.row_type)
        if isinstance(t, type) and dataclasses.is_dataclass(t) and t is not ByArm:
            if t.__name__ not in found:
                found[t.__name__] = t
                for hint in typing.get_type_hints(t).values():
                    visit(hint)

    visit(model.Report)
    return found


def test_every_field_of_every_model_class_is_in_the_schema_and_nothing_else() -> None:
    schema = json_schema()
    classes = reachable()
    assert set(schema["$defs"]) == set(classes) - {"Report"}
    for name, cls in classes.items():
        obj = schema if name == "Report" else schema["$defs"][name]
        written = [f.name for f in dataclasses.fields(cls) if f.metadata.get("json", True)]
        assert list(obj["properties"]) == (["schema"] if cls is model.Report else []) + written, name
        omitted = {f.name for f in dataclasses.fields(cls) if f.metadata.get("omit_empty")}
        assert obj["required"] == [p for p in obj["properties"] if p not in omitted]
        if getattr(cls, "extra_keys", None) is None:
            assert obj["additionalProperties"] is False
        else:  # keys beyond the fields (the named measures' per-query columns): a pattern, typed
            assert obj["propertyNames"]["anyOf"] == [{"enum": written}, {"pattern": cls.extra_keys}]
            assert obj["additionalProperties"] == _Schemas({}).of(cls.extra_type)
    assert "notices" not in schema["properties"]  # never in the JSON


def test_a_field_added_to_the_model_is_in_the_schema() -> None:
    """The schema follows the model: a class with one more field gets one more key."""
    wider = dataclasses.make_dataclass(
        "AtK", [("new_measure", float | None)], bases=(AtK,), frozen=True, namespace={}
    )
    wider.__module__ = AtK.__module__
    made = _Schemas({}).closed(wider)
    assert list(made["properties"])[-1] == "new_measure"
    assert made["properties"]["new_measure"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert made != _Schemas({}).closed(AtK)


# -- the reports -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        [],  # the bundled sample
        ["--k", "1,5,10", "--tenants-by", "lower"],  # several cut-offs: k_cells, at_k
        ["--gate", str(ROOT / "sample_runs" / "FLOORS.toml"), "--label-state", "frozen"],
        ["--tuned-docs", str(ROOT / "sample_runs" / "README.md")],
    ],
    ids=["sample", "cutoffs", "gate", "tuned-docs"],
)
def test_the_sample_reports_meet_the_schema(capsys, args: list[str]) -> None:
    doc = report_json(capsys, *args)
    assert rsc.problems(doc) == []


def test_a_report_with_errors_and_warnings_meets_the_schema(capsys) -> None:
    doc = report_json(
        capsys,
        str(RUNS / "plain.parquet"),
        str(RUNS / "headers_k10.parquet"),
        "--labels",
        str(ROOT / "sample_runs" / "labels.parquet"),
    )
    levels = {c["level"] for c in doc["checks"]}
    assert {"error", "ok"} <= levels
    assert rsc.problems(doc) == []


def test_the_api_dict_meets_the_schema(sample: Path) -> None:
    import triage

    before = rsc.checked[0]
    doc = triage.open(sample).report().to_json()
    assert rsc.checked[0] == before + 1 and rsc.problems(doc) == []


# -- strict enough -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_doc() -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "triage", "report", "--format", "json"],
        capture_output=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def changed(doc: dict, path: tuple[str | int, ...], how: str) -> dict:
    doc = copy.deepcopy(doc)
    *up, last = path
    at = doc
    for p in up:
        at = at[p]
    if how == "rename":
        at[f"{last}_renamed"] = at.pop(last)
    elif how == "drop":
        del at[last]
    elif how == "add":
        at["surprise"] = 1
    else:  # retype: a number as text, text as a number
        at[last] = str(at[last]) if not isinstance(at[last], str) else 1
    return doc


@pytest.mark.parametrize(
    "path, how",
    [
        (("n_scored",), "rename"),
        (("n_scored",), "retype"),
        (("arms", "a", "hit_rate"), "retype"),
        (("arms", "b", "hit_rate"), "rename"),
        (("paired", "mcnemar_p"), "drop"),
        (("labels", "state"), "retype"),
        (("flips", 0, "direction"), "retype"),
        (("flips", 0, "hints"), "retype"),
        (("ranks", "histogram", "n"), "add"),
        (("checks", 0, "level"), "retype"),
        (("arms", "a"), "add"),
        (("schema",), "retype"),
    ],
)
def test_a_renamed_retyped_dropped_or_added_key_is_refused(sample_doc: dict, path: tuple, how: str) -> None:
    assert rsc.problems(sample_doc) == []
    assert rsc.problems(changed(sample_doc, path, how)), (path, how)


def test_the_open_maps_take_any_key(sample_doc: dict) -> None:
    """Per slice key, per reviewer, an arm's metadata and a check's facts are open maps."""
    doc = copy.deepcopy(sample_doc)
    some_slice = next(iter(doc["slices"]))
    doc["slices"]["a_new_slice_key"] = doc["slices"][some_slice]
    doc["arms"]["a"]["meta"]["anything"] = "goes"
    doc["checks"][0]["facts"]["new_fact"] = [1, {"x": None}]
    assert rsc.problems(doc) == []
    doc["slices"]["a_new_slice_key"] = [{"value": "x"}]  # but each value is still typed
    assert rsc.problems(doc)
