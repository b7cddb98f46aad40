"""No command writes where the evaluation reads: every input by name, link and inode, every input's
sidecar name whether or not one exists, the manifest, and anything inside the amendments folder or
an input folder. Exit 2 naming the path, and nothing written (core/files.py, `Spec.forbidden`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from triage.cli.main import main
from triage.core.bundled import bundled

TARGETS = [
    "runs/plain.parquet.meta.json",  # a run's sidecar that does not exist yet
    "labels.parquet.meta.json",
    "queries.parquet.meta.json",
    "chunks.parquet.meta.json",
    "triage.toml",
    "labels.amendments/new.parquet",  # inside the amendments folder
    "labels.amendments/x.qrels",
    "runs/../labels.parquet",
    "chunks.parquet",
    "link-to-labels",
    "hard-link-to-a-run",
]


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def ev(tmp_path: Path) -> Path:
    out = tmp_path / "ev"
    shutil.copytree(bundled("sample_runs"), out)
    (out / "labels.amendments").mkdir()
    (out / "link-to-labels").symlink_to(out / "labels.parquet")
    os.link(out / "runs" / "plain.parquet", out / "hard-link-to-a-run")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("verb", ["labels export", "review export"])
def test_no_export_lands_where_the_evaluation_reads(ev, capsys, verb, target) -> None:
    before = tree(ev)
    argv = (
        ["labels", "export", str(ev / "triage.toml"), "--out", str(ev / target)]
        if verb == "labels export"
        else ["review", "export", str(ev / target), str(ev / "triage.toml"), "--force"]
    )
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and "never" in err and "Traceback" not in err, err
    assert tree(ev) == before  # nothing written, nothing changed
    assert main(["report", "--format", "json", str(ev / "triage.toml")]) == 0  # and still reads


def test_an_export_beside_the_inputs_is_written(ev, capsys) -> None:
    assert (
        main(["labels", "export", str(ev / "triage.toml"), "--out", str(ev / "runs" / "labels-v2.qrels")])
        == 0
    )
    assert (ev / "runs" / "labels-v2.qrels").is_file() and (
        ev / "runs" / "labels-v2.qrels.meta.json"
    ).is_file()
