"""The shape of the code, as docs/development.md "The shape of the code" draws it: layers, one direction of
imports, no cycles.

core → labels → workspace → report → ui → cli → api, each importing only those below it: the
import-linter contracts in pyproject.toml say so, and this runs them. Lazy imports inside functions
count: an import is an import wherever it is written. The Python API (`triage.api`) is the top:
it may import every layer, and only the package root imports it (lazily, for `triage.open`).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_linter_contracts_hold(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    status = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "0 broken" in out and "Layers: each imports only those below it KEPT" in out
    assert "Core's rooms: each imports only those below it KEPT" in out
    assert "CLI verbs call the workspace, not the label store KEPT" in out


def test_the_thin_cli_contract_names_the_label_store_and_core_internals() -> None:
    """The contract the test above runs cannot be emptied unnoticed: it still forbids the command
    line the label records, their writer and log, and core's readers, ids and measures (the verbs
    reach them through the workspace)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    (thin,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "CLI verbs call the workspace, not the label store"
    ]
    assert thin["type"] == "forbidden" and thin["source_modules"] == ["triage.cli"]
    assert {
        "triage.labels.records",
        "triage.labels.writer",
        "triage.labels.log",
        "triage.core.ids",
        "triage.core.inputs.readers",
        "triage.core.measures",
    } <= set(thin["forbidden_modules"])


def test_the_rich_contract_names_every_report_module_but_the_terminal() -> None:
    """ "Only the terminal report imports Rich" lists the report's modules one by one (a package's
    parent cannot be both source and home of the terminal): a module added to the report is in it."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    (rich,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "Only the terminal report imports Rich"
    ]
    folder = ROOT / "triage" / "report"
    children = {
        f"triage.report.{p.stem}"
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert {"triage.report.model", "triage.report.sections", "triage.report.terminal"} <= children
    assert set(rich["source_modules"]) >= children - {"triage.report.terminal"}
    assert rich["forbidden_modules"] == ["rich"] and "triage.report.terminal" not in rich["source_modules"]


def test_no_cli_module_imports_the_label_store_directly() -> None:
    """What the contract says, read off the import graph (lazy imports included)."""
    graph = grimp.build_graph("triage", cache_dir=None)
    cli = {m for m in graph.modules if m.startswith("triage.cli")}
    assert {"triage.cli.judge_cmd", "triage.cli.labels_cmd", "triage.cli.main"} <= cli
    reached = set().union(*(graph.find_modules_directly_imported_by(m) for m in cli))
    assert "triage.workspace.judgements" in reached and "triage.workspace.store" in reached
    assert not reached & {"triage.labels.records", "triage.labels.writer", "triage.labels.log"}


def cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        on_stack.add(m)
        for n in graph.find_modules_directly_imported_by(m) & modules:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in on_stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                on_stack.discard(n)
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return found


def test_no_two_modules_import_each_other_even_lazily() -> None:
    graph = grimp.build_graph("triage", cache_dir=None)
    modules = {m for m in graph.modules if m != "triage"}
    assert len(modules) > 40  # the whole package was read
    assert cycles(graph, modules) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for m in ("p.a", "p.b", "p.c", "p.d"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.c", imported="p.d")
    assert cycles(graph, {"p.a", "p.b", "p.c", "p.d"}) == [["p.a", "p.b", "p.c"]]


def test_only_the_package_root_imports_the_python_api() -> None:
    graph = grimp.build_graph("triage", cache_dir=None)
    assert graph.find_modules_that_directly_import("triage.api") == {"triage"}
    assert {"triage.report.build", "triage.workspace.snapshot"} <= graph.find_modules_directly_imported_by(
        "triage.api"
    )


def test_no_folder_of_the_package_holds_more_than_15_modules() -> None:
    """A room that grows past 15 modules is split into rooms that say what they hold."""
    package = ROOT / "triage"
    counts = {
        str(folder.relative_to(ROOT)): len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        for folder in [package, *package.rglob("*")]
        if folder.is_dir() and (folder / "__init__.py").is_file()
    }
    assert len(counts) >= 10 and counts["triage/core/inputs"] >= 10  # the walk found the rooms
    assert {room: n for room, n in counts.items() if n > 15} == {}


# The report's builders: `build` and each section's module (its types, builder and cells).
MAPPERS = (
    "triage/report/build.py",
    *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("triage/report/sections/*.py")),
)
# What a section's cells may call of the core: the visible-text helpers (one line, a count in words),
# which spell a figure already computed and compute none.
SPELLING = "triage.core.text.sanitize"


def _run_time_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every `from M import name` in `path` outside `if TYPE_CHECKING:` blocks,
    in functions too."""
    tree = ast.parse(path.read_text("utf-8"))
    hidden = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    return [
        (node.module or "", alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and id(node) not in hidden
        for alias in node.names
    ]


def test_the_reports_builders_map_and_compute_nothing() -> None:
    """report/build.py and the sections' modules (report/sections/) fill the model from what the
    workspace computed (workspace/results.py): from the core, the label store and the workspace they
    take, at run time, types and constants only, no function and no module to call one through;
    the exceptions are `compute`, the workspace's call `build` maps, and the core's visible-text
    helpers the cells spell with."""
    assert len(MAPPERS) >= 12 and "triage/report/sections/tenants.py" in MAPPERS
    seen = 0
    for path in MAPPERS:
        for module, name in _run_time_imports(ROOT / path):
            if (
                not module.startswith(("triage.core", "triage.labels", "triage.workspace"))
                or module == SPELLING
            ):
                continue
            seen += 1
            value = getattr(importlib.import_module(module), name)
            if (module, name) == ("triage.workspace.results", "compute"):
                continue
            assert isinstance(value, type) or not (callable(value) or inspect.ismodule(value)), (
                f"{path} imports {module}.{name}, which computes"
            )
    assert seen >= 3  # the walk found the imports (Outcome, DEFAULT_FLOOR, compute, …)


def test_the_import_finder_sees_past_type_checking_only(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\nfrom a import b\nif TYPE_CHECKING:\n    from c import d\n"
        "def f():\n    from e import g\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source, "utf-8")
    assert _run_time_imports(path) == [("typing", "TYPE_CHECKING"), ("a", "b"), ("e", "g")]
