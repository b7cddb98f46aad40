"""The docs site (`docs/`, `mkdocs.yml`) is tested as code.

- The Python API page's doctest runs as written.
- Shell blocks: a ```sh block right after a `<!-- run -->` line is *runnable*: each `triage …` line
  in it runs (in-process, through `triage.cli.main.main`) against the bundled sample, in a scratch
  folder holding a copy of it as `sample_runs/`, and must exit 0 or 1 (1 is a documented answer:
  a gate that fails, conflicts found); a `> FILE` or `| …` tail is dropped and standard output
  captured. Every other `triage …` line of a ```sh block in the README or the docs is only parsed
  by triage's own argparse parsers: `[…]` optional parts are dropped and the placeholders below
  given a value of their type, so a renamed or removed flag fails here.
- The figures the pages quote from the sample's judging queue are the queue's.
- `mkdocs build --strict` (when mkdocs is installed: `pip install '.[docs]'`) builds with no
  warning, a broken link included, and the generated pages hold what triage prints.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from triage.cli.main import VERBS, app_parser, main
from triage.core.bundled import bundled

from conftest import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
RUN = "<!-- run -->"


# --- the Python API page -------------------------------------------------------------------------


def python_api_example() -> str:
    """The one doctest block of docs/api.md."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "api.md").read_text("utf-8"), re.S)
    assert len(blocks) == 1 and ">>> " in blocks[0]
    return blocks[0]


def test_the_python_api_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(python_api_example(), {}, "Python API", "docs/api.md", 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=len(test.examples))


@pytest.mark.slow
def test_a_wrong_output_in_the_example_would_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    wrong = python_api_example().replace("(6, 40, 0.79)", "(6, 40, 0.62)")
    test = doctest.DocTestParser().get_doctest(wrong, {}, "wrong", "docs/api.md", 0)
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda _: None)
    assert runner.summarize(verbose=False).failed == 1


# --- shell blocks ----------------------------------------------------------------------------------


def sh_blocks(path: Path) -> list[tuple[bool, str]]:
    """(runnable, body) of each ```sh block of a page."""
    text = path.read_text("utf-8")
    return [
        (m.group(1) is not None, m.group(2))
        for m in re.finditer(r"(<!-- run -->\n)?```sh\n(.*?)\n```", text, re.S)
    ]


def commands(body: str) -> list[list[str]]:
    """The `triage …` lines of a block as argv (without `triage`), comments and redirections dropped."""
    found = []
    for line in body.splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[0] != "triage":
            continue
        cut = next((i for i, w in enumerate(words) if w in (">", "|", "&&")), len(words))
        found.append(words[1:cut])
    return found


# A placeholder's value of its flag's type (the rest are paths or ids, any string parses).
PLACEHOLDERS = {"G": "1", "K": "5", "F": "0.2", "S": "3", "N": "30"}


def parse(argv: list[str]) -> None:
    """Parse argv as `triage.cli.main.main` dispatches it, without running it."""
    if argv and argv[0] in VERBS:
        VERBS[argv[0]][0]().parse_args(argv[1:])
    else:
        app_parser().parse_args(argv)


def shown(argv: list[str]) -> list[str]:
    """A documented command line with its `[…]` parts dropped and its placeholders filled."""
    line = re.sub(r"\s*\[[^\]]*\]", "", shlex.join(argv).replace("'", ""))
    return [PLACEHOLDERS.get(w, w) for w in line.split()]


def every_block() -> list[tuple[str, bool, list[str]]]:
    return [
        (str(page.relative_to(ROOT)), runnable, argv)
        for page in [ROOT / "README.md", *PAGES]
        for runnable, body in sh_blocks(page)
        for argv in commands(body)
    ]


def test_there_are_runnable_blocks_and_parsed_ones() -> None:
    blocks = every_block()
    assert sum(r for _, r, _ in blocks) >= 15 and sum(not r for _, r, _ in blocks) >= 15


@pytest.mark.parametrize(
    ("page", "argv"),
    [(p, a) for p, r, a in every_block() if not r],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_a_documented_command_parses(page: str, argv: list[str], capsys: pytest.CaptureFixture) -> None:
    try:
        parse(shown(argv))
    except SystemExit as e:  # argparse: 2 with a message on a bad flag
        assert e.code == 0, f"{page}: triage {' '.join(argv)}: {capsys.readouterr().err}"


def test_parsing_would_catch_a_wrong_flag(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        parse(shown(["report", "PATH", "--tennants-by", "lower"]))
    assert e.value.code == 2 and "--tennants-by" in capsys.readouterr().err


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(bundled("sample_runs"), tmp_path / "sample_runs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # --version, --help
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("page", "argv"),
    [(p, a) for p, r, a in every_block() if r],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_a_runnable_command_runs_on_the_sample(page: str, argv: list[str], scratch: Path) -> None:
    assert argv and argv[0] in ("report", "labels", "review") or argv == ["--version"], (
        f"{page}: a runnable block runs no app: triage {' '.join(argv)}"
    )
    code, out, err = run(argv)
    assert code in (0, 1), f"{page}: triage {' '.join(argv)} exited {code}: {err}"
    assert out and "error" not in err, f"{page}: triage {' '.join(argv)}: {err}"


def test_the_getting_started_install_is_the_readmes() -> None:
    readme = sh_blocks(ROOT / "README.md")[0][1]
    assert sh_blocks(DOCS / "getting-started.md")[0][1] == readme


# --- figures the pages quote -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_queue_figures_on_the_queue_page_are_the_samples(scratch: Path) -> None:
    from triage.core.inputs.corpus import open_corpus
    from triage.workspace.queue import JudgingQueue
    from triage.workspace.session import open_session

    session = open_session(scratch / "sample_runs", reviewer="docs")
    assert session.snapshot.spec.corpus is not None
    session.corpus = open_corpus(session.snapshot.spec.corpus)
    counts = JudgingQueue(session, session.corpus).counts
    text = re.sub(r"\s+", " ", (DOCS / "queue.md").read_text("utf-8"))
    expected = (
        f"On the bundled sample: {sum(counts.values()):,} candidates — {counts[1]:,} near-duplicate "
        f"(q150's unlabelled 2023 copy, first), {counts[2]:,} where an arm misses, {counts[3]:,} other"
    )
    assert expected in text


# --- the site --------------------------------------------------------------------------------------


def test_every_page_is_in_the_nav_and_every_generated_part_has_its_marker() -> None:
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert [p.name for p in PAGES if f" {p.name}\n" not in config] == []
    assert "<!-- generated: json-schema -->" in (DOCS / "report-schema.md").read_text("utf-8")
    assert "<!-- generated: cli-help -->" in (DOCS / "cli.md").read_text("utf-8")
    measures = (DOCS / "measures.md").read_text("utf-8")
    assert "<!-- generated: metrics -->" in measures and "<!-- generated: measures -->" in measures
    keys = (DOCS / "keys.md").read_text("utf-8")
    assert "<!-- generated: keys -->" in keys and "| key |" not in keys  # no key table kept by hand


def mkdocs() -> list[str]:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs is not installed (pip install '.[docs]'): the site is not built")
    return [sys.executable, "-m", "mkdocs"]


@pytest.mark.slow
def test_the_site_builds_strictly_with_its_generated_pages(tmp_path: Path) -> None:
    site = tmp_path / "site"
    out = subprocess.run(
        [*mkdocs(), "build", "--strict", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # mkdocs-material's notice of its own end of life
    )
    assert out.returncode == 0, out.stderr
    assert "WARNING" not in out.stderr, out.stderr
    schema = (site / "report-schema" / "index.html").read_text("utf-8")
    assert "generated:" not in schema and "https://json-schema.org/draft/2020-12/schema" in schema
    assert "tenants" in schema and "wilson_low_b" in schema
    cli = (site / "cli" / "index.html").read_text("utf-8")
    assert "generated:" not in cli and "--tenants-by" in cli and "--resolves" in cli
    measures = (site / "measures" / "index.html").read_text("utf-8")
    assert (
        "generated:" not in measures
        and "ndcg_cut_k" in measures
        and "<td><code>hit_rate@k</code></td>" in measures
    )
    keys = (site / "keys" / "index.html").read_text("utf-8")
    # each screen's keys and columns, as its bindings and column declarations say them
    assert "generated:" not in keys and "Judging queue" in keys and "open the query's detail" in keys
    assert "The Wilson 95% interval of B's hit rate" in keys and "discard them and quit" in keys
