"""`triage --version`, the cache folder, `fcntl` only where it is used, and zero-width characters
made visible end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from platformdirs import user_cache_dir

from triage import __version__
from triage.cli.main import main
from triage.core.inputs.corpus import cache_dir
from triage.core.text.sanitize import visible

from conftest import ROOT, manifest, write_parquet


def run(code: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


@pytest.mark.slow
def test_version_prints_triage_and_the_version(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"triage {__version__}\n"
    got = run("import sys; from triage.cli.main import main; sys.exit(main())", "--version")
    assert got.returncode == 0 and got.stdout == f"triage {__version__}\n"
    assert __version__ and __version__[0].isdigit()


def test_the_cache_folder_is_the_platform_s_unless_triage_cache_says(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TRIAGE_CACHE", raising=False)
    assert cache_dir() == Path(user_cache_dir("triage", appauthor=False))
    if sys.platform.startswith("linux"):  # platformdirs honours XDG_CACHE_HOME there
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert cache_dir() == tmp_path / "xdg" / "triage"
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" / "triage"


NO_FCNTL = """
import sys
sys.modules["fcntl"] = None  # `import fcntl` now raises ImportError, as where it does not exist
from triage.cli.main import main
code = main(sys.argv[1:])
print("fcntl loaded:", "fcntl" in sys.modules and sys.modules["fcntl"] is not None, file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
def test_report_runs_where_fcntl_cannot_be_imported(tmp_path: Path) -> None:
    env = {"TRIAGE_DATA": str(tmp_path / "data"), "TRIAGE_CACHE": str(tmp_path / "cache")}
    got = run(NO_FCNTL, "report", "--format", "json", env=env)
    assert got.returncode == 0, got.stderr
    assert '"hit_rate"' in got.stdout and "fcntl loaded: False" in got.stderr
    # Every module imports there (the label writer, the session and the app screens too: they
    # import fcntl only when a judgement is written), while `import fcntl` itself fails.
    got = run(IMPORT_ALL, env=env)
    assert got.returncode == 0 and got.stdout.split() == ["[]", "halted"], got.stdout + got.stderr


IMPORT_ALL = """
import importlib, pkgutil, sys
sys.modules["fcntl"] = None
import triage
names = [m.name for m in pkgutil.walk_packages(triage.__path__, "triage.")]
failed = []
for name in names:
    if not name.endswith("__main__"):  # running it opens the app
        try:
            importlib.import_module(name)
        except ImportError:
            failed.append(name)
print(failed)
try:
    import fcntl
except ImportError as e:
    print("halted" if "halted" in str(e) else e)
"""


@pytest.mark.parametrize(
    "ch",
    [
        "\u200b",
        "\u200c",
        "\u200d",
        "\u200e",
        "\u200f",
        "\ufeff",
        "\U000e0000",
        "\U000e0001",
        "\U000e007f",
        "\U000e0080",
    ],
)
def test_zero_width_and_tag_characters_are_tokens(ch: str) -> None:
    assert visible(f"q1{ch}") == f"q1<U+{ord(ch):04X}>"


def test_characters_beside_the_ranges_are_left_alone() -> None:
    # hair space, hyphen, an unassigned code point, the first past plane 14's ignorable block: visible
    for ch in ("\u200a", "\u2010", "\ufefe", "\U000e1000", "é"):
        assert visible(f"q1{ch}") == f"q1{ch}"


def test_a_zero_width_query_id_is_not_shown_as_its_lookalike(tmp_path: Path, capsys) -> None:
    """q1 and q1 + U+200B are two queries; both regress, and the report tells them apart."""
    ids = ["q1", "q1\u200b", "q2\U000e0041"]
    a = [{"query_id": q, "retrieved": [f"g{i}", "x", "y"]} for i, q in enumerate(ids)]
    b = [{"query_id": q, "retrieved": ["x", "y", "z"]} for q in ids]
    labels = [{"query_id": q, "chunk_id": f"g{i}", "relevance": 1} for i, q in enumerate(ids)]
    write_parquet(tmp_path / "a.parquet", a, {"k": "3"})
    write_parquet(tmp_path / "b.parquet", b, {"k": "3"})
    write_parquet(tmp_path / "labels.parquet", labels)
    path = manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=3)
    for fmt, shown in (("text", "q1<U+200B>"), ("markdown", r"q1\<U+200B\>")):  # Markdown escapes <>
        assert main(["report", str(path), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert shown in out and shown.replace("1", "2").replace("200B", "E0041") in out, fmt
        assert "\u200b" not in out and "\U000e0041" not in out


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "start"), [("json", b'{"schema":'), ("text", b"")])
def test_a_reader_that_stops_early_ends_the_report_quietly(tmp_path: Path, fmt: str, start: bytes) -> None:
    # `triage report | head`: the pipe closes under the report; exit 141, no message, no traceback,
    # in every format (rich's console on its own would exit 1).
    # 6,000 flips make a JSON of megabytes, far more than a pipe holds: the report is cut short.
    # The text (20 kB) fits in a pipe, so its reader closes before reading: the first write fails.
    n = 6000
    a = [{"query_id": f"q{i}", "retrieved": ["g" if i % 2 else "x", "y"]} for i in range(n)]
    b = [{"query_id": f"q{i}", "retrieved": ["x" if i % 2 else "g", "y"]} for i in range(n)]
    write_parquet(tmp_path / "a.parquet", a, {"name": "a"})
    write_parquet(tmp_path / "b.parquet", b, {"name": "b"})
    write_parquet(
        tmp_path / "labels.parquet",
        [{"query_id": f"q{i}", "chunk_id": "g", "relevance": 1} for i in range(n)],
    )
    path = manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "triage", "report", str(path), "--format", fmt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(len(start)) == start
    proc.stdout.close()  # the reader stops long before the report ends
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert err == b""


def test_a_count_of_one_takes_the_singular() -> None:
    from triage.core.text.sanitize import counted

    assert counted(1, "record") == "1 record" and counted(0, "record") == "0 records"
    assert counted(1_204, "judgement") == "1,204 judgements"
    assert counted(1, "corpus cache") == "1 corpus cache" and counted(2, "query", "queries") == "2 queries"
