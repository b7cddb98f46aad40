"""The code says each thing once and plainly: its comments cite only what the repository holds
(the docs' pages and their sections, its own files), and no function branches past the complexity bound that
pyproject.toml sets for ruff's C901 (`[tool.ruff.lint.mccabe]`)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

# Documents the repository does not hold, as a comment would cite them. Their names are spelled in
# two halves here, so that this file is not itself a place that names them.
ABSENT = ("DESI" + "GN", "FIND" + "INGS")
CITATION = re.compile(
    rf"\b{ABSENT[0]}\b|\b{ABSENT[1]}\b|\bSTYLE(\.md\b|\s*§)|(?i:\bissues? #?[0-9]|\bthe issue's\b)"
)
SCANNED = ("triage", "tests", "sample_runs", "docs")
SUFFIXES = {".py", ".md", ".toml", ".tcss"}


def citations(text: str) -> list[tuple[int, str]]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]


def test_the_pattern_finds_the_citations_it_is_for() -> None:
    cited = [
        f"({ABSENT[0]} §4)",
        f"see {ABSENT[1]}",
        f"{ABSENT[0]}.md section 3",
        "(issue 12, item 5)",
        "Issues 4 and 5",
        "issue #9",
        "STYLE.md",
        "STYLE §2",
        "The issue's bar",
    ]
    assert [bool(citations(c)) for c in cited] == [True] * len(cited)
    plain = [
        "STYLE = {'error': 'red'}",
        "STYLE[level]",
        "{STYLE}",
        "no issues found",
        "reissued",
        'README "The numbers"',
        "the issuer",
        "by design",
    ]
    assert [bool(citations(c)) for c in plain] == [False] * len(plain)


def test_comments_cite_only_what_the_repository_holds() -> None:
    files = [ROOT / "README.md"]
    files += [f for d in SCANNED for f in sorted((ROOT / d).rglob("*")) if f.suffix in SUFFIXES]
    found = [
        f"{f.relative_to(ROOT)}:{n}: {line}"
        for f in files
        if ".venv" not in f.parts and f != Path(__file__).resolve()
        for n, line in citations(f.read_text(encoding="utf-8"))
    ]
    assert len(files) > 50
    assert found == [], "cite a docs page's section by its heading, or state the fact:\n" + "\n".join(found)


# A cited section: docs/PAGE.md "Heading" (the heading may wrap onto the next line of a comment).
SECTION = re.compile(r"docs/([\w-]+\.md),? ([\"'])([^\"']{1,80})\2")


def sections(page: Path) -> set[str]:
    """A page's headings and the bold run-in titles its paragraphs open with (**Rank movements**)."""
    text = page.read_text(encoding="utf-8")
    heads = {m.group(1) for m in re.finditer(r"^#+ (.+?)\s*$", text, re.M)}
    heads |= {m.group(1).rstrip(".") for m in re.finditer(r"\*\*([^*\n]+)\*\*", text)}
    return {" ".join(h.replace("`", "").split()) for h in heads}


def _python_files() -> list[Path]:
    """The package's and the tests' Python files, this one (whose examples cite nothing) aside."""
    here = Path(__file__).resolve()
    return [
        f
        for d in ("triage", "tests")
        for f in sorted((ROOT / d).rglob("*.py"))
        if ".venv" not in f.parts and f != here
    ]


def test_every_cited_section_is_on_the_page_it_names() -> None:
    """`docs/measures.md "Paired tests per measure"` in a comment names a page that exists and a
    heading (or bold run-in title) on it: a renamed section breaks this test, not the reader."""
    cited, missing = 0, []
    for f in _python_files():
        for m in SECTION.finditer(f.read_text(encoding="utf-8")):
            page, heading = ROOT / "docs" / m.group(1), " ".join(m.group(3).replace("#", " ").split())
            cited += 1
            if not page.is_file() or heading not in sections(page):
                missing.append(f"{f.relative_to(ROOT)}: docs/{m.group(1)} {heading!r}")
    assert cited > 30
    assert missing == [], "cited sections not found:\n" + "\n".join(missing)


def test_no_function_is_more_complex_than_the_bound() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901", "triage"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_bound_is_the_one_pyproject_sets() -> None:
    """The gate above reads its bound from pyproject.toml: a function one branch past it is found."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bound = int(re.search(r"\[tool\.ruff\.lint\.mccabe\]\s*max-complexity\s*=\s*(\d+)", text).group(1))
    assert bound == 15 and '"C90"' in text
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(bound))
    source = f"def f(x):\n{branches}    return -1\n"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--select",
            "C901",
            "--stdin-filename",
            "triage/probe.py",
            "-",
        ],
        cwd=ROOT,
        input=source,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1 and f"too complex ({bound + 1} > {bound})" in out.stdout, out.stdout


def _definitions() -> dict[str, list[str]]:
    """Each class (private ones too) and public function the package defines at a module's top level,
    and where: an import (a re-export) is not a definition."""
    where: dict[str, list[str]] = {}
    for f in sorted((ROOT / "triage").rglob("*.py")):
        for node in ast.parse(f.read_text(encoding="utf-8")).body:
            named = isinstance(node, ast.ClassDef) or (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_")
            )
            if named:
                where.setdefault(node.name, []).append(f"{f.relative_to(ROOT)}:{node.lineno}")
    return where


def test_each_class_and_public_function_name_is_defined_once() -> None:
    where = _definitions()
    assert len(where) > 300 and "Comparison" in where  # the walk read the package
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert twice == {}, "a name means one thing in the package: rename one of them (an alias is no rename)"


def test_the_name_check_finds_a_name_defined_twice(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for room in ("a", "b"):
        (tmp_path / "triage" / room).mkdir(parents=True)
        (tmp_path / "triage" / room / "m.py").write_text(
            "class Row:\n    pass\n\n\ndef cutoffs():\n    pass\n"
        )
    reexport = "from triage.a.m import Row, cutoffs\n\n\ndef _private():\n    pass\n"
    (tmp_path / "triage" / "c.py").write_text(reexport)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _definitions() == {
        "Row": ["triage/a/m.py:1", "triage/b/m.py:1"],
        "cutoffs": ["triage/a/m.py:5", "triage/b/m.py:5"],
    }


# A return type written as a comment after a signature (`def f(x):  # -> Spec`), not as an annotation.
TYPE_COMMENT = re.compile(r"^\s*(async\s+)?def .*\):\s*#\s*(\(.*\)\s*)?->")


def test_return_types_are_annotations_not_comments() -> None:
    for typed in ("def f(a):  # -> Spec", "def g(s, a):  # (Spec, ...) -> Spec"):
        assert TYPE_COMMENT.match(typed)
    assert not TYPE_COMMENT.match("def f(a) -> Spec:  # the spec")
    found = [
        f"{f.relative_to(ROOT)}:{n}: {line.strip()}"
        for f in sorted((ROOT / "triage").rglob("*.py"))
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if TYPE_COMMENT.match(line)
    ]
    assert found == [], "annotate the return type (a TYPE_CHECKING import if it is heavy):\n" + "\n".join(
        found
    )
