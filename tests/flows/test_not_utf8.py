"""Bytes that are not UTF-8 (docs/cli.md "Bytes that are not UTF-8"). On POSIX Python hands a
file name, an argument or an environment variable holding such a byte over as a lone surrogate
(`surrogateescape`: b"\\xff" is "\\udcff"). A path holding one is read; text a record would store
holding one (--note, --reviewer, TRIAGE_REVIEWER, --query, --chunk) is exit 2 naming where it came
from, before any file is read or made; every message shows the byte as `\\xff`, whatever the
locale and PYTHONIOENCODING.

The quick tests call `main` in-process with the strings Python would make of such bytes (capsys's
streams are strict UTF-8: a raw surrogate printed fails the test); the slow one runs the command
over argv and environment given as bytes, under each locale and output encoding."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.errors import InputError
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.corpus_cache import cache_dir
from triage.core.inputs.frozen import sha256_file
from triage.core.inputs.shapes import Role, read_input
from triage.core.text.sanitize import bytes_shown, not_utf8, visible
from triage.labels.jsontext import NotJSON
from triage.labels.records import ADD
from triage.labels.writer import Writer

FF = os.fsdecode(b"\xff")  # "\udcff": what Python makes of the byte 0xff in a name or argument
SHOWN = "\\xff"  # how every message spells it
Q, CHUNK = "q001", "borealis/handbook-2024#007"  # a pair the sample knows


def tree(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*")}


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The bundled sample in a folder whose name holds the byte 0xff."""
    out = tmp_path / f"sample{FF}"
    shutil.copytree(bundled("sample_runs"), out)
    return out


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def trec_run(parquet: Path, out: Path) -> Path:
    """The Parquet run as a TREC run file at `out`."""
    lines = [
        f"{r['query_id']} Q0 {d} {i + 1} {s} x\n"
        for r in pq.read_table(parquet.open("rb")).to_pylist()  # Arrow takes no such name
        for i, (d, s) in enumerate(zip(r["retrieved"], r["scores"], strict=True))
    ]
    out.write_text("".join(lines), "utf-8")
    return out


# -- the one spelling ----------------------------------------------------------------------------


@pytest.mark.parametrize("byte", range(0x80, 0x100))
def test_each_byte_that_is_not_utf8_is_shown_as_its_escape(byte: int) -> None:
    text = os.fsdecode(b"q1" + bytes([byte]) + b".run")
    assert bytes_shown(text) == f"q1\\x{byte:02x}.run"
    assert visible(text) == f"q1\\x{byte:02x}.run"
    assert not_utf8(text) == f"holds a byte that is not UTF-8 (\\x{byte:02x} at position 3)"


def test_a_lone_surrogate_that_is_no_byte_is_a_token() -> None:
    assert bytes_shown("a\ud800b") == "a<U+D800>b"
    assert not_utf8("ab\udc00") == "holds a lone surrogate (not Unicode) (<U+DC00> at position 3)"
    assert not_utf8("é ok") is None  # UTF-8 text (not ASCII) is storable


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=20))
def test_what_is_shown_is_always_utf8_and_refused_exactly_when_it_cannot_be(text: str) -> None:
    visible(text).encode("utf-8")  # never raises: every message can be printed and stored
    bytes_shown(text).encode("utf-8")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        assert not_utf8(text) is not None
    else:
        assert not_utf8(text) is None
        assert bytes_shown(text) == text


# -- text a record would store: refused before anything is read or made ---------------------------


def judge(copy: Path, *extra: str) -> list[str]:
    return ["labels", "judge", str(copy), "--query", Q, "--chunk", CHUNK, "--grade", "1", *extra]


def imported(copy: Path, *extra: str) -> list[str]:
    return ["labels", "import", str(copy), "--from", str(copy / "labels.parquet"), *extra]


STORED = {  # argv (given the copy) -> the option named; the byte at position 3 of each
    "judge --note": (lambda c: judge(c, "--note", f"ok{FF}"), "--note"),
    "judge --reviewer": (lambda c: judge(c, "--reviewer", f"an{FF}a"), "--reviewer"),
    "judge --query": (lambda c: judge(c, "--query", f"q0{FF}1"), "--query"),
    "judge --chunk": (lambda c: judge(c, "--chunk", f"bo{FF}"), "--chunk"),
    "import --note": (lambda c: imported(c, "--note", f"ok{FF}"), "--note"),
    "import --reviewer": (lambda c: imported(c, "--reviewer", f"an{FF}"), "--reviewer"),
    "app --reviewer": (lambda c: ["--reviewer", f"an{FF}", str(c)], "--reviewer"),
}


@pytest.mark.parametrize("case", list(STORED))
def test_a_stored_text_holding_a_byte_is_exit_2_naming_its_option(
    case: str, copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, option = STORED[case]
    before = tree(copy.parent)
    rc, out, err = run(capsys, *argv(copy))
    assert rc == 2
    assert err.startswith(f"triage: error: {option}: holds a byte that is not UTF-8 ({SHOWN} at position 3)")
    assert "nothing was written" in err and out == ""
    assert tree(copy.parent) == before  # no amendments folder, no empty session file


@pytest.mark.parametrize("verb", ["judge", "import", "app"])
def test_triage_reviewer_holding_a_byte_is_exit_2_naming_it(
    verb: str, copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIAGE_REVIEWER", f"an{FF}")
    argv = {"judge": judge(copy), "import": imported(copy), "app": [str(copy)]}[verb]
    before = tree(copy.parent)
    rc, _, err = run(capsys, *argv)
    assert rc == 2
    assert err.startswith(f"triage: error: TRIAGE_REVIEWER: holds a byte that is not UTF-8 ({SHOWN} at")
    assert tree(copy.parent) == before
    # --reviewer, given, is the name: TRIAGE_REVIEWER is then not used, nor refused
    assert run(capsys, *judge(copy, "--reviewer", "ana"))[0] == 0


def test_a_writer_refuses_text_json_cannot_hold_before_making_any_file(copy: Path) -> None:
    folder = copy / "labels.amendments"
    frozen = copy / "labels.parquet"
    writer = Writer(folder, frozen, sha256_file(frozen), "ana", "ana@host.s1.jsonl")
    with pytest.raises(NotJSON):
        writer.append(writer.new_record(ADD, Q, CHUNK, 1, note=f"n{FF}"))
    assert not folder.exists()


# -- paths holding the byte: read, and named as they are -------------------------------------------


def test_a_missing_file_named_with_a_byte_is_named_with_it_shown(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = str(copy / "labels.parquet")
    rc, out, err = run(
        capsys, "report", f"gone{FF}.run", str(copy / "runs/plain.parquet"), "--labels", labels
    )
    assert (rc, out) == (2, "")
    assert err == f"triage: error: gone{SHOWN}.run: file does not exist\n"
    rc, _, err = run(capsys, "report", str(copy / f"none{FF}.toml"))
    assert rc == 2 and f"none{SHOWN}.toml" in err


def test_a_trec_file_named_with_a_byte_is_read_and_named_in_its_error(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = trec_run(copy / "runs/plain.parquet", copy / f"plain{FF}.run")
    bad = copy / f"bad{FF}.run"
    bad.write_text("q001 Q0 x 1 zz run\n", "utf-8")
    rc, _, err = run(capsys, "report", str(bad), str(a), "--labels", str(copy / "labels.parquet"), "--k", "5")
    assert rc == 2
    assert err == f"triage: error: {bytes_shown(str(bad))}: line 1: rank '1' / score 'zz' are not numbers\n"
    assert f"bad{SHOWN}.run" in err


def test_inputs_named_with_a_byte_are_read_in_every_form(tmp_path: Path) -> None:
    """One file, gzip-compressed, a folder of parts, a glob: each read as under a plain name."""
    import gzip

    src = bundled("sample_runs") / "runs" / "plain.parquet"
    whole = read_input(src, Role.RUN).table
    folder = tmp_path / f"parts{FF}"
    folder.mkdir()
    table = pq.read_table(src)
    for i, part in enumerate((table.slice(0, 80), table.slice(80))):
        pq.write_table(part, tmp_path / "part.parquet")
        os.rename(tmp_path / "part.parquet", folder / f"part-{i}{FF}.parquet")
    shutil.copy(src, tmp_path / f"one{FF}.parquet")
    trec = trec_run(src, tmp_path / f"run{FF}.run")
    gz = tmp_path / f"run{FF}.run.gz"
    gz.write_bytes(gzip.compress(trec.read_bytes()))
    for path in (tmp_path / f"one{FF}.parquet", folder, folder / "part-*.parquet"):
        assert read_input(path, Role.RUN).table.column("query_id").equals(whole.column("query_id"))
    assert read_input(gz, Role.RUN).table.equals(read_input(trec, Role.RUN).table)
    for data, problem in ((b"PAR1 no footer", "cannot read Parquet"), (b"text", "not a Parquet file")):
        (folder / f"part-9{FF}.parquet").write_bytes(data)
        with pytest.raises(InputError) as refused:
            read_input(folder, Role.RUN)
        assert visible(refused.value.message).startswith(
            f"{bytes_shown(str(folder))}/part-9{SHOWN}.parquet: {problem}"
        )


def test_a_corpus_and_its_cache_under_names_holding_a_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / f"cache{FF}"))
    corpus = tmp_path / f"chunks{FF}.parquet"
    shutil.copy(bundled("sample_runs") / "chunks.parquet", corpus)
    built = open_corpus(corpus, small=0)  # built, then opened again from the cache
    assert [p.name.startswith("corpus-") for p in cache_dir().iterdir()] == [True]
    again = open_corpus(corpus, small=0)
    assert built.notice is None and again.notice is None  # the cache was used, both times
    assert again.table.equals(built.table)
    assert again.table.num_rows == pq.read_metadata(corpus.open("rb")).num_rows


@pytest.mark.slow
def test_the_report_reads_files_named_with_a_byte_and_names_them_as_shown(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, labels = (copy / f"{n}{FF}.parquet" for n in ("a", "b", "labels"))
    for src, dst in ((copy / "runs/plain.parquet", a), (copy / "runs/headers.parquet", b)):
        shutil.copy(src, dst)
    shutil.copy(copy / "labels.parquet", labels)
    rc, out, err = run(capsys, "report", str(a), str(b), "--labels", str(labels), "--format", "json")
    assert rc == 0, err
    got = json.loads(out)
    assert got["arms"]["a"]["name"] == f"a{SHOWN}"  # an arm named by its file
    assert got["labels"]["path"] == bytes_shown(str(labels))
    for fmt in ("text", "markdown", "html"):
        rc, out, _ = run(capsys, "report", str(copy), "--format", fmt)
        assert rc == 0 and FF not in out
    # a qrels file named with the byte: read, and each record says where it came from, as shown
    qrels = copy / f"more{FF}.qrels"
    qrels.write_text(f"{Q} 0 {CHUNK} 1\n", "utf-8")
    rc, out, err = run(capsys, "labels", "import", str(copy), "--from", str(qrels), "--reviewer", "ana")
    assert rc == 0, err
    assert f"from {bytes_shown(str(qrels))}" in out
    (record,) = [json.loads(line) for f in (copy / "labels.amendments").glob("*.jsonl") for line in f.open()]
    assert record["evidence"]["file"] == f"more{SHOWN}.qrels"
    rc, out, _ = run(capsys, "labels", "log", str(copy))
    assert rc == 0 and f"imported from more{SHOWN}.qrels" in out


# -- the command itself, over bytes, under each locale and output encoding --------------------------

ENVS = {
    "default": {},
    "C locale": {"LC_ALL": "C", "LANG": "C"},
    "C locale, no UTF-8 mode": {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"},
    "ascii": {"PYTHONIOENCODING": "ascii"},
    "utf-8 strict": {"PYTHONIOENCODING": "utf-8:strict"},
}


def command(argv: list[bytes], env: dict[str, str], **more: bytes) -> subprocess.CompletedProcess[bytes]:
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO", "PYTHONUTF8"))
    }
    full: dict[str | bytes, str | bytes] = {**base, **env, **more}
    return subprocess.run(
        [sys.executable, "-m", "triage", *argv],
        capture_output=True,
        env=full,  # type: ignore[arg-type]  # bytes values: the environment as the system holds it
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.parametrize("env", list(ENVS))
def test_the_command_over_bytes_reads_paths_and_refuses_stored_text(env: str, tmp_path: Path) -> None:
    copy = tmp_path / f"s{FF}"
    shutil.copytree(bundled("sample_runs"), copy)
    raw = os.fsencode(copy)
    runs = [raw + b"/runs/plain.parquet", raw + b"/runs/headers.parquet"]
    a = raw + b"/a\xff.parquet"
    shutil.copy(runs[0], a)
    done = command(
        [b"report", a, runs[1], b"--labels", raw + b"/labels.parquet", b"--format", b"json"], ENVS[env]
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["arms"]["a"]["name"] == "a\\xff"
    done = command([b"report", raw], ENVS[env])  # the text report, through the locale's encoding
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    done = command([b"report", raw + b"/gone\xff.run", a, b"--labels", raw + b"/labels.parquet"], ENVS[env])
    assert done.returncode == 2
    assert done.stderr.endswith(b"gone\\xff.run: file does not exist\n")
    before = tree(tmp_path)
    pair = [b"--query", b"q001", b"--chunk", CHUNK.encode(), b"--grade", b"1"]
    refused: list[tuple[list[bytes], dict[str, bytes], bytes]] = [
        ([b"labels", b"judge", raw, *pair, b"--note", b"n\xc3\xa9\xff"], {}, b"--note"),
        ([b"labels", b"judge", raw, *pair, b"--reviewer", b"an\xff"], {}, b"--reviewer"),
        ([b"labels", b"judge", raw, b"--query", b"q\xff", *pair[2:]], {}, b"--query"),
        ([b"labels", b"judge", raw, *pair], {"TRIAGE_REVIEWER": b"an\xff"}, b"TRIAGE_REVIEWER"),
        ([b"labels", b"import", raw, b"--from", a, b"--note", b"\xff"], {}, b"--note"),
        ([b"--reviewer", b"an\xff", raw], {}, b"--reviewer"),
    ]
    for argv, more, option in refused:
        done = command(argv, ENVS[env], **more)
        assert done.returncode == 2, (argv, done.stderr)
        # (without UTF-8 mode in the C locale, é's two bytes are not UTF-8 to Python either)
        assert done.stderr.startswith(b"triage: error: " + option + b": holds a byte that is not UTF-8 (\\x")
        assert b"Traceback" not in done.stderr and done.stdout == b""
    assert tree(tmp_path) == before
