"""Every report JSON the test suite produces is checked against the report's schema.

`install` (an autouse fixture in conftest.py) wraps `model.write_json` (what `triage report
--format json` and `model.dumps_report` write) and `Report.to_json` (the API's dict): each document they
produce is validated against `triage report --json-schema` before the test sees it.
"""

from __future__ import annotations

import io
import json
from functools import cache
from typing import BinaryIO

import jsonschema
import pytest

from triage.report import model
from triage.report.schema import json_schema

checked = [0]  # documents validated so far (tests/flows/test_report_schema.py reads it)


@cache
def validator() -> jsonschema.Draft202012Validator:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(doc: object) -> list[str]:
    """What in `doc` the schema refuses: one line per error, with its JSON path."""
    return [f"{e.json_path}: {e.message[:300]}" for e in validator().iter_errors(doc)]


def check(doc: object) -> None:
    found = problems(doc)
    assert not found, "the report JSON does not meet its schema:\n" + "\n".join(found[:20])
    checked[0] += 1


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    write_json, to_json = model.write_json, model.Report.to_json

    def checked_write_json(report: model.Report, out: BinaryIO) -> None:
        sink = io.BytesIO()
        write_json(report, sink)
        check(json.loads(sink.getvalue()))
        out.write(sink.getvalue())

    def checked_to_json(report: model.Report) -> dict[str, object]:
        doc = to_json(report)
        check(doc)
        return doc

    monkeypatch.setattr(model, "write_json", checked_write_json)
    monkeypatch.setattr(model.Report, "to_json", checked_to_json)
