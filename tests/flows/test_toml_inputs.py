"""Every TOML file triage reads — a gate file (`report --gate`) and a manifest (`triage.toml`) — is
read or refused with exit 2 naming the file, through their one reader (core/inputs/toml_file.py):
integers of thousands of digits, nesting 10,000 deep, dotted keys of 100,000 parts, NUL bytes,
bytes that are not UTF-8, duplicate keys, NaN and infinities, a file too large, special files, and
values no key takes. Never a traceback, never a wait on a FIFO, never a quadratic blow-up."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import triage
from triage.cli.main import main
from triage.core.errors import InputError
from triage.core.gate.apply import read_gate
from triage.core.gate.propose import Proposal, floors_toml
from triage.core.inputs import readers
from triage.core.inputs.readers import MAX_TOML_BYTES, quoted, read_toml

from conftest import write_evaluation

# name -> (the file's bytes, what the error says): none of these is a TOML document triage reads.
HOSTILE: dict[str, tuple[bytes, str]] = {
    "an integer of 5,000 digits": (
        b"k = 1" + b"0" * 4999 + b"\n",
        "an integer of more than 4,300 digits (line 1)",
    ),
    "an integer of 6,000 digits with underscores": (
        b"x = 1\ny = 1" + b"_000" * 2000,
        "4,300 digits (line 2)",
    ),
    "a negative one in an array": (b"a = [1, -" + b"9" * 4400 + b"]\n", "4,300 digits"),
    "arrays 10,000 deep": (b"a = " + b"[" * 10_000 + b"]" * 10_000 + b"\n", "nested too deeply"),
    "inline tables 10,000 deep": (b"a = " + b"{b = " * 10_000 + b"1" + b"}" * 10_000, "nested too deeply"),
    "arrays of tables 5,000 deep": (b"a = " + b"[{b = " * 5_000 + b"1" + b"}]" * 5_000, "nested too deeply"),
    "a dotted key of 100,000 parts": (b"a." * 100_000 + b"b = 1\n", "the longest has 100,001 parts"),
    "a table header of 100,000 parts": (b"[" + b"a." * 100_000 + b"b]\n", "dotted keys are too long"),
    "an inline table's key of 100,000 parts": (b'x = {"a".' + b'"a" . ' * 100_000 + b"b = 1}\n", "too long"),
    "1,000 keys of 50 parts": (
        b"".join(b"k%d." % j + b"a." * 49 + b"b = 1\n" for j in range(1000)),
        "the longest has 51 parts",
    ),
    "a NUL byte": (b"k = 5\x00\n", "not valid TOML"),
    "a NUL byte in a string": (b'x = "a\x00b"\n', "not valid TOML"),
    "a lone continuation byte": (
        b"a = 1\n# \x80\n",
        "line 2: not valid TOML: not UTF-8 (byte 0x80 at column 3)",
    ),
    "an overlong encoding": (
        b'x = "\xc0\xaf"\n',
        "line 1: not valid TOML: not UTF-8 (byte 0xc0 at column 6)",
    ),
    "an encoded surrogate": (b'x = "\xed\xa0\x80"\n', "not UTF-8 (byte 0xed at column 6)"),
    "a character cut off at the end": (b"x = 1\n#\xe2\x82", "not UTF-8"),
    "UTF-16 with its byte-order mark": ("k = 5\n".encode("utf-16"), "not UTF-8 (byte 0xff at column 1)"),
    "Latin-1": ('x = "café"\n'.encode("latin-1"), "not UTF-8 (byte 0xe9 at column 9)"),
    "a surrogate escape": (b'x = "\\uD800"\n', "not valid TOML"),
    "a key given twice": (b"k = 5\nk = 6\n", "not valid TOML: Cannot overwrite a value"),
    "a table given twice": (b"[labels]\n[labels]\n", "not valid TOML"),
    "a lone carriage return": (b"k = 5\rj = 1\n", "not valid TOML"),
    "an unterminated string": (b'x = "abc\n', "not valid TOML"),
    "an impossible date": (b"k = 1979-02-30\n", "not valid TOML: Invalid date"),
    "more than 4 MiB": (b"# " + b"x" * MAX_TOML_BYTES, "is larger than 4 MiB"),
}


@pytest.fixture
def evaluation(tmp_path: Path) -> Path:
    """A small valid evaluation (its manifest), to put a gate file or a manifest beside."""
    rows = [{"query_id": f"q{i}", "retrieved": [f"g{i}", "x"]} for i in range(4)]
    labels = [{"query_id": f"q{i}", "chunk_id": f"g{i}", "relevance": 1} for i in range(4)]
    return write_evaluation(tmp_path, rows, rows, labels)


def refused(capsys: pytest.CaptureFixture[str], args: list[str], path: Path, says: str) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("triage: error: ") and "Traceback" not in err
    assert str(path) in err and says in err, err[:500]
    assert len(err) < 1000  # a value is quoted cut short
    return err


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_gate_file_exits_2_naming_it(tmp_path: Path, capsys, name: str) -> None:
    data, says = HOSTILE[name]
    gate = tmp_path / "gate.toml"
    gate.write_bytes(data)
    refused(capsys, ["report", "--gate", str(gate)], gate, says)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_manifest_exits_2_naming_it(evaluation: Path, capsys, name: str) -> None:
    data, says = HOSTILE[name]
    evaluation.write_bytes(data)
    refused(capsys, ["report", str(evaluation.parent), "--format", "json"], evaluation, says)
    with pytest.raises(InputError, match="triage.toml"):  # the API reads it the same way
        triage.open(evaluation)


def test_a_byte_order_mark_is_read(evaluation: Path, capsys) -> None:
    evaluation.write_bytes(b"\xef\xbb\xbf" + evaluation.read_bytes())
    gate = evaluation.parent / "gate.toml"
    gate.write_bytes(b"\xef\xbb\xbf[floors]\noverall = 0.5\n")
    assert main(["report", str(evaluation), "--gate", str(gate), "--format", "json"]) == 0


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("k = 0x" + "f" * 5000, "k must be below 2^63, found <an integer of about 6,020 digits>"),
        ("k = 99999999999999999999", "k must be below 2^63, found 99999999999999999999"),
        ("k = [5, 9223372036854775808]", "k must be below 2^63"),
        ("k = nan", "k must be a positive integer, found nan"),
        ("k = -inf", "k must be a positive integer, found -inf"),
        ("k = 1979-05-27", "k must be a positive integer, found datetime.date(1979, 5, 27)"),
        ("k = " + "[" * 200 + "]" * 200, "k must be a positive integer, found [[[[...]]]]"),
        ("rounds = 0o" + "7" * 6000, "rounds must be a whole number from 1 to 100000000, found <an integer"),
        ("measures = [" + "1, " * 100_000 + "]", "measures must be a list of names"),
        ('tests = "' + "x" * 100_000 + '"', "tests: unknown test"),
        ("[holdout]\nrule = 'hash'\nfraction = nan", "[holdout]: fraction must be a number above 0"),
        ("[holdout]\nrule = 'hash'\nfraction = 0x" + "f" * 5000, "found <an integer of about 6,020 digits>"),
        ("[holdout]\ntuned_docs = '" + "t" * 5000 + "'", "[holdout]: tuned_docs 'ttt"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_a_manifest_value_beyond_what_its_key_takes_exits_2(evaluation: Path, capsys, value, says) -> None:
    text = evaluation.read_text("utf-8").replace("k = 5\n", "")
    evaluation.write_text(value + "\n" + text, "utf-8")
    refused(capsys, ["report", str(evaluation.parent)], evaluation, says)


@pytest.mark.parametrize(
    ("given", "instead", "says"),
    [
        ("[arms.a]\n", "[arms.a]\nformat = []\n", "[arms.a]: format [] is not one of"),
        ("[arms.a]\n", "[arms.a]\nformat = {a = 1}\n", "[arms.a]: format {'a': 1} is not one of"),
        ('name = "a"', 'name = ["a"]', "[arms.a]: name must be a string, found ['a']"),
        (
            "[labels]\n",
            "[labels]\namendments = [1]\n",
            "[labels]: amendments must be a string (a folder), found [1]",
        ),
        ("[labels]\n", "[labels]\nsplit = 3\n", "[labels]: split must be a string, found 3"),
    ],
)
def test_a_section_value_of_the_wrong_kind_exits_2(evaluation: Path, capsys, given, instead, says) -> None:
    evaluation.write_text(evaluation.read_text("utf-8").replace(given, instead, 1), "utf-8")
    refused(capsys, ["report", str(evaluation.parent)], evaluation, says)


def test_a_path_too_long_for_the_filesystem_names_the_manifest(evaluation: Path, capsys) -> None:
    text = evaluation.read_text("utf-8").replace('path = "labels.parquet"', f'path = "{"x" * 5000}"')
    evaluation.write_text(text, "utf-8")
    refused(capsys, ["report", str(evaluation.parent)], evaluation, "[labels]: path 'xxx")


def special(kind: str, folder: Path) -> Path:
    path = folder / f"{kind}.toml"
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would wait for a writer forever
    elif kind == "folder":
        path.mkdir()
    elif kind == "device":
        path.symlink_to("/dev/zero")  # read to the end, it never ends
    return path


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("fifo", "is a FIFO (named pipe)"),
        ("folder", "is a folder"),
        ("device", "a device"),
        ("none", "exist"),
    ],
)
def test_a_special_file_as_the_gate_or_the_manifest_exits_2(evaluation: Path, capsys, kind, says) -> None:
    gate = special(kind, evaluation.parent)
    refused(capsys, ["report", str(evaluation), "--gate", str(gate)], gate, says)
    if kind == "none":
        return
    evaluation.unlink()
    os.rename(gate, evaluation)  # the folder's triage.toml is now that special file
    refused(capsys, ["report", str(evaluation.parent)], evaluation, says)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_gate_file_exits_2(tmp_path: Path, capsys) -> None:
    gate = tmp_path / "gate.toml"
    gate.write_text("[floors]\noverall = 0.5\n", "utf-8")
    gate.chmod(0)
    try:
        refused(capsys, ["report", "--gate", str(gate)], gate, "cannot be read: Permission denied")
    finally:
        gate.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_a_fifo_swapped_in_after_the_check_is_not_waited_on(tmp_path: Path, monkeypatch) -> None:
    fifo = tmp_path / "gate.toml"
    os.mkfifo(fifo)
    monkeypatch.setattr(readers, "regular_file", lambda path: None)  # as if it was a file a moment ago
    with pytest.raises(InputError, match="is not a regular file"):
        read_toml(fifo)


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"k = 1\n" + b"#" * (MAX_TOML_BYTES - 7) + b"\n")
    assert read_toml(path) == {"k": 1}


@pytest.mark.slow
def test_triages_own_dotted_keys_and_common_dotted_text_are_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    dotted = "".join(f'arms.a{j}.path = "runs/a.{j}.parquet"\n' for j in range(20_000))
    path.write_text(f'# {"a." * 500_000}\nx = "{"a." * 500_000}"\n' + dotted, "utf-8")
    doc = read_toml(path)
    assert len(doc["arms"]) == 20_000 and doc["x"].count(".") == 500_000


def test_a_value_is_quoted_cut_short() -> None:
    assert quoted(list(range(1000))) == "[0, 1, 2, 3, 4, 5, ...]"
    assert len(quoted("x" * 100_000)) < 80 and len(quoted(10**4000)) < 60
    assert quoted(16**5000) == "<an integer of about 6,020 digits>"  # Python would refuse to print it
    nested: list = []
    for _ in range(300):
        nested = [nested]
    assert quoted(nested) == "[[[[...]]]]"


# TOML-ish fragments, hostile bytes among them, for the property below
PIECES = [b"[", b"]", b"[[", b"{", b"}", b"a", b"b.", b".", b"=", b" = ", b"\n", b'"', b"'", b'"""', b"1"]
PIECES += [b"0x", b"9" * 50, b"nan", b"-inf", b",", b"\x00", b"\xff", b"\xef\xbb\xbf", b"#", b"\r", b"\\u"]
PIECES += [b"1979-05-27T", b"_", b"e", b"+", b"\t", b"\xc3", b"\xa9", b"true"]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300) | st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join))
def test_any_bytes_are_read_as_a_document_or_refused_naming_the_file(tmp_path_factory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("any") / "any.toml"
    path.write_bytes(data)
    try:
        doc = read_toml(path)
    except InputError as e:
        assert e.path == str(path) and e.problem
    else:
        assert isinstance(doc, dict)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=8, unique=True))
def test_suggested_floors_read_back_whatever_the_slice_names(tmp_path_factory, values: list[str]) -> None:
    """`--suggest-floors` writes TOML the one reader takes back, names with dots, quotes and
    control characters included (core/gate/propose.py `toml_key`)."""
    proposals = [Proposal(f"tenant:{v}", 40, 0.9, 0.05, 0.8, 0.75) for v in values]
    path = tmp_path_factory.mktemp("floors") / "FLOORS.toml"
    path.write_text(floors_toml(proposals), "utf-8")
    assert read_gate(path).floors == {f"tenant:{v}": 0.75 for v in values}


def test_tomllib_is_imported_by_the_one_reader_alone() -> None:
    package = Path(triage.__file__).parent
    users = sorted(
        str(p.relative_to(package)) for p in package.rglob("*.py") if "tomllib" in p.read_text("utf-8")
    )
    assert users == ["core/inputs/readers.py"]
