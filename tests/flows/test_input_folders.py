"""Every input folder is protected: no writer — `labels export --out`, `review export OUT`, a review
session's file (`labels judge`, `labels import`, the app's "write elsewhere") — writes onto an input
or inside an input folder: a run file, a folder of runs, a BEIR folder given as the labels (its
corpus.jsonl, queries.jsonl and every qrels file, the split read or not), the manifest, the
amendments folder (for exports). Each by name, through a link (a link at the name, or a folder that
is a link into the input) and by device/inode (a hard link; a bind mount of the folder). Exit 2
naming the path and the input; nothing created; every input byte-identical."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.inputs.manifest import from_manifest
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

from conftest import ROOT

QUERIES = ["q1", "q2", "q3"]
DOCS = ["d1", "d2", "d3", "d4"]
AMEND = "beir.test.amendments"  # the BEIR split's default amendments folder, beside the BEIR folder


def evaluation(root: Path) -> Path:
    """A manifest (k = 2) reading run A from a TREC file, run B from a folder of Parquet parts and
    the labels from a BEIR folder (split test, with a dev split beside it); one judgement already
    in the amendments folder; links and hard links to each kind of input beside them."""
    ev = root / "ev"
    beir = ev / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": f"ask {q}"}) + "\n" for q in QUERIES)
    )
    docs = [{"_id": d, "title": f"t {d}", "text": f"text {d}"} for d in DOCS]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    head = "query-id\tcorpus-id\tscore\n"
    (beir / "qrels" / "test.tsv").write_text(head + "q1\td1\t1\nq2\td2\t1\nq3\td3\t1\n")
    (beir / "qrels" / "dev.tsv").write_text(head + "q1\td4\t1\n")
    (ev / "a.run").write_text(
        "".join(f"{q} Q0 d{i + 1} 1 2.0 a\n{q} Q0 d4 2 1.0 a\n" for i, q in enumerate(QUERIES))
    )
    (ev / "b_parts").mkdir()
    for i, q in enumerate(QUERIES):
        part = pa.table({"query_id": [q], "retrieved": [["d4", f"d{i + 1}"]], "scores": [[2.0, 1.0]]})
        pq.write_table(part, ev / "b_parts" / f"part-{i}.parquet")
    (ev / "triage.toml").write_text(
        'k = 2\n[labels]\npath = "beir"\n[arms.a]\npath = "a.run"\n[arms.b]\npath = "b_parts"\n'
    )
    assert main(["labels", "judge", str(ev), "--query", "q1", "--chunk", "d2", "--grade", "1"]) == 0
    return ev


LINKS = [  # (link, what it names, relative to the evaluation's folder)
    ("to-beir", "beir"),
    ("to-qrels", "beir/qrels"),
    ("to-parts", "b_parts"),
    ("to-amend", AMEND),
    ("link-to-corpus", "beir/corpus.jsonl"),
]
HARD = [  # (hard link, the file it is)
    ("hard-corpus", "beir/corpus.jsonl"),
    ("hard-queries", "beir/queries.jsonl"),
    ("hard-qrels", "beir/qrels/test.tsv"),
    ("hard-dev", "beir/qrels/dev.tsv"),
    ("hard-run", "a.run"),
    ("hard-part", "b_parts/part-0.parquet"),
    ("hard-manifest", "triage.toml"),
]


def aliases(ev: Path) -> None:
    """Beside the inputs: a link to each kind (a folder, a file), a hard link to each file."""
    for link, to in LINKS:
        (ev / link).symlink_to(to)
    for hard, of in HARD:
        os.link(ev / of, ev / hard)
    (session,) = (ev / AMEND).glob("*.jsonl")
    os.link(session, ev / "hard-session")


def tree(root: Path) -> dict[str, object]:
    """Every name under `root` (links not followed) with its kind and its bytes or link target."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder, name)
            mode = os.lstat(p).st_mode
            body = p.read_bytes() if stat.S_ISREG(mode) else os.readlink(p) if stat.S_ISLNK(mode) else None
            out[str(p.relative_to(root))] = (stat.S_IFMT(mode), body)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return evaluation(tmp_path_factory.mktemp("inputs"))


@pytest.fixture
def ev(built: Path, tmp_path: Path) -> Path:
    """A fresh copy of the evaluation, with its aliases."""
    copy = Path(shutil.copytree(built, tmp_path / "ev"))
    aliases(copy)
    return copy


# (target, the input a message names) — the target by name, through a link, by inode
TARGETS = [
    ("a.run", "a.run"),  # a run file
    ("b_parts/part-0.parquet", "b_parts/part-0.parquet"),  # a file of a folder of runs
    ("b_parts/new.parquet", "b_parts"),  # a new name in it
    ("beir/corpus.jsonl", "beir/corpus.jsonl"),
    ("beir/queries.jsonl", "beir/queries.jsonl"),
    ("beir/qrels/test.tsv", "beir/qrels/test.tsv"),  # the split read
    ("beir/qrels/dev.tsv", "beir"),  # a split not read: still inside the BEIR folder
    ("beir/new.parquet", "beir"),
    ("beir/qrels/new.qrels", "beir"),
    ("beir/not-yet/new.parquet", "beir"),  # under a folder that does not exist
    ("beir/corpus.jsonl.meta.json", "beir"),
    ("triage.toml", "triage.toml"),  # the manifest
    (f"{AMEND}/new.parquet", AMEND),  # the amendments folder
    ("to-beir/new.parquet", "beir"),  # a folder that is a link into an input folder
    ("to-qrels/test.tsv", "beir/qrels/test.tsv"),
    ("to-qrels/dev.tsv", "beir"),
    ("to-parts/new.parquet", "b_parts"),
    ("to-amend/new.parquet", AMEND),
    ("link-to-corpus", "beir/corpus.jsonl"),  # a link at the name
    ("hard-corpus", "beir/corpus.jsonl"),  # the same file by another name
    ("hard-queries", "beir/queries.jsonl"),
    ("hard-qrels", "beir/qrels/test.tsv"),
    ("hard-dev", "beir/qrels/dev.tsv"),
    ("hard-run", "a.run"),
    ("hard-part", "b_parts/part-0.parquet"),
    ("hard-manifest", "triage.toml"),
    ("hard-session", AMEND),
]


def argv(writer: str, ev: Path, target: Path, form: str) -> list[str]:
    evaluation = (
        [str(ev)]
        if form == "manifest"
        else [str(ev / "a.run"), str(ev / "b_parts"), "--labels", str(ev / "beir"), "--k", "2"]
    )
    if writer == "labels export":
        return ["labels", "export", *evaluation, "--out", str(target)]
    return ["review", "export", str(target), *evaluation, "--force"]


def refused(ev: Path, capsys: pytest.CaptureFixture[str], args: list[str], target: Path, named: str) -> str:
    """Run `args`: exit 2, the message names `target` and the input `named`, nothing changed."""
    before = tree(ev.parent)
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err, err
    assert str(target) in err and ("never" in err or "refusing" in err), err
    assert str(ev / named) in err or os.path.realpath(ev / named) in err, err
    assert tree(ev.parent) == before  # nothing written, nothing created, no input changed
    return err


@pytest.mark.parametrize("writer", ["labels export", "review export"])
@pytest.mark.parametrize(("target", "named"), TARGETS, ids=[t for t, _ in TARGETS])
def test_no_export_lands_on_or_inside_an_input(
    ev: Path, capsys, writer: str, target: str, named: str
) -> None:
    refused(ev, capsys, argv(writer, ev, ev / target, "manifest"), ev / target, named)


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["labels export", "review export"])
@pytest.mark.parametrize(
    ("target", "named"), [t for t in TARGETS if "beir" in t[1]], ids=[t for t, n in TARGETS if "beir" in n]
)
def test_the_beir_folder_on_the_command_line_is_protected_too(
    ev: Path, capsys, writer: str, target: str, named: str
) -> None:
    refused(ev, capsys, argv(writer, ev, ev / target, "command line"), ev / target, named)


def test_an_export_beside_the_inputs_is_written(ev: Path, capsys) -> None:
    """The manifest's folder itself is no input: the next label file goes beside the inputs."""
    assert main(["labels", "export", str(ev), "--out", str(ev / "v2.qrels")]) == 0
    assert (ev / "v2.qrels").is_file() and (ev / "v2.qrels.meta.json").is_file()
    assert main(["review", "export", str(ev / "review.md"), str(ev)]) == 0


# -- a review session's file --------------------------------------------------------------------

FOLDERS = [  # an amendments folder named in the manifest, and the input it is inside
    ("beir/notes", "beir"),
    ("beir/qrels/test.amendments", "beir"),  # where a file's labels would keep theirs
    ("b_parts/notes", "b_parts"),
    ("to-beir/notes", "beir"),
    ("to-qrels/notes", "beir"),
    ("to-parts/notes", "b_parts"),
]


@pytest.mark.parametrize("verb", ["judge", "import"])
@pytest.mark.parametrize(("folder", "named"), FOLDERS, ids=[f for f, _ in FOLDERS])
def test_no_session_file_is_written_inside_an_input(
    ev: Path, capsys, verb: str, folder: str, named: str
) -> None:
    manifest = ev / "triage.toml"
    manifest.write_text(
        manifest.read_text().replace('path = "beir"\n', f'path = "beir"\namendments = "{folder}"\n')
    )
    (ev / "more.qrels").write_text("q2 0 d1 1\n")
    what = (
        ["--query", "q1", "--chunk", "d3", "--grade", "1"]
        if verb == "judge"
        else ["--from", str(ev / "more.qrels")]
    )
    before = tree(ev.parent)
    rc = main(["labels", verb, str(ev), *what])
    err = capsys.readouterr().err
    assert rc == 2 and "NOT SAVED" in err and "Traceback" not in err, err
    assert str(ev / folder) in err and os.path.realpath(ev / named) in err and "never written" in err
    assert tree(ev.parent) == before  # not even the folder


def test_the_default_amendments_of_a_beir_split_are_beside_the_folder(ev: Path, capsys) -> None:
    spec = from_manifest(ev)
    assert spec.amendments == ev / AMEND and spec.beir == ev / "beir"
    cli = main(
        ["labels", "log", str(ev / "a.run"), str(ev / "b_parts"), "--labels", str(ev / "beir"), "--k", "2"]
    )
    assert cli == 0 and "1 amendment" in capsys.readouterr().out  # the same folder from the command line
    manifest = ev / "triage.toml"
    manifest.write_text(manifest.read_text().replace('path = "beir"\n', 'path = "beir"\nsplit = "dev"\n'))
    assert from_manifest(ev).amendments == ev / "beir.dev.amendments"  # one folder per split


def test_writing_elsewhere_refuses_an_input_folder(ev: Path) -> None:
    """The app's "write elsewhere" (decisions the amendments folder refused) goes through the same
    writer: into an input folder it is refused (OSError, said in the app), nothing created."""
    (ev / AMEND).rename(ev / "moved")
    (ev / AMEND).write_text("not a folder")  # the amendments folder refuses the decision
    session = Session(open_snapshot(from_manifest(ev), corpus_check=False), reviewer="ana")
    assert not session.add("q2", "d3", 1).saved and session.unsaved == 1
    before = tree(ev.parent)
    for inside in ("beir/rescue", "to-parts/rescue", "b_parts"):
        with pytest.raises(OSError, match="is inside .*never written"):
            session.write_elsewhere(ev / inside)
    assert tree(ev.parent) == before and session.unsaved == 1
    assert session.write_elsewhere(ev / "rescue").parent == ev / "rescue"


# -- the same folder or file by a bind mount ------------------------------------------------------


def _can_mount() -> bool:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare -m (a private mount namespace)")
@pytest.mark.parametrize(
    ("source", "mounted", "target", "named"),
    [
        ("beir", "bound", "bound/new.parquet", "beir"),  # a bind mount of the BEIR folder
        ("beir/qrels", "bound", "bound/dev.tsv", "beir"),  # of a folder inside it
        ("beir/qrels", "bound", "bound/new.qrels", "beir/qrels"),
        ("b_parts", "bound", "bound/new.parquet", "b_parts"),
        ("beir/corpus.jsonl", "bound-file", "bound-file", "beir/corpus.jsonl"),  # of one file
        (".", "bound", "bound/a.run.meta.json", "bound/a.run.meta.json"),  # a sidecar name, by its folder
    ],
)
@pytest.mark.parametrize("writer", ["labels export", "review export"])
def test_a_bind_mount_is_the_same_input(
    ev: Path, writer: str, source: str, mounted: str, target: str, named: str
) -> None:
    """In a private mount namespace (gone with the process): the bind mount has the input's device
    and inode, and another path."""
    (ev / mounted).mkdir() if (ev / source).is_dir() else (ev / mounted).touch()
    before = tree(ev.parent)
    args = argv(writer, ev, ev / target, "manifest")
    script = f'mount --bind "$1" "$2" && shift 2 && exec "{sys.executable}" -m triage "$@"'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(ev / source), str(ev / mounted), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert str(ev / target) in done.stderr and "never" in done.stderr, done.stderr
    assert str(ev / named) in done.stderr or os.path.realpath(ev / named) in done.stderr, done.stderr
    assert tree(ev.parent) == before
