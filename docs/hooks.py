"""mkdocs hook: the pages' generated parts, made at build time from triage itself.

A page holds a marker line where a generated part goes:

- `<!-- generated: json-schema -->`: `triage report --json-schema`, each object's keys as a table,
  then the whole schema (docs/report-schema.md);
- `<!-- generated: cli-help -->`: every verb's `--help` (docs/cli.md);
- `<!-- generated: metrics -->` and `<!-- generated: measures -->`: the tables of triage's four
  metrics and of the measures by name, from the measure registry (triage/core/measures/families/;
  docs/measures.md).
- `<!-- generated: keys -->`: the app's keys and what each screen shows, one sentence each, read from
  the app's bindings and the screens' topics and column declarations, as `?` reads them (docs/keys.md).

The app's pictures are the snapshot tests' own SVGs (tests/app/__snapshots__/test_snapshots/), served
as `snapshots/NAME.svg`: a page shows what the tests check the app draws.

Nothing generated is committed, so no page can drift from the code. tests/house/test_docs.py builds the
site with `mkdocs build --strict` (when mkdocs is installed) and checks each marker is replaced.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parent.parent / "tests" / "app" / "__snapshots__" / "test_snapshots"

MARKER = "<!-- generated: {} -->"


def triage(*args: str) -> str:
    """What the installed `triage` prints (the interpreter running mkdocs has it installed)."""
    out = subprocess.run(
        [sys.executable, "-m", "triage", *args], capture_output=True, text=True, check=True, timeout=120
    )
    return out.stdout


def _type(schema: dict) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type(s) for s in schema[key])
    kind = schema.get("type")
    if kind == "object" and schema.get("properties"):
        inner = ", ".join(f"`{key}`: {_type(value)}" for key, value in schema["properties"].items())
        return "{" + inner + "}"
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema and not schema.get("properties"):
        extra = schema["additionalProperties"]
        return "map of " + (_type(extra) if isinstance(extra, dict) else "any")
    if isinstance(kind, list):
        return " or ".join(f"`{k}`" for k in kind)
    return f"`{kind}`" if kind else "any JSON value"


def _table(title: str, schema: dict) -> list[str]:
    lines = [f"### {title}", ""]
    props = schema.get("properties") or {}
    if not props:
        return [*lines, f"{_type(schema)}", ""]
    lines += ["| key | type |", "| --- | --- |"]
    lines += [f"| `{key}` | {_type(value)} |" for key, value in props.items()]
    return [*lines, ""]


def schema_markdown() -> str:
    text = triage("report", "--json-schema")
    schema = json.loads(text)
    parts = ["## Objects", "", *_table("Report", schema)]
    for name, sub in schema.get("$defs", {}).items():
        parts += _table(name, sub)
    parts += ["## The whole schema", "", "```json", text.rstrip("\n"), "```", ""]
    return "\n".join(parts)


def cli_markdown() -> str:
    verbs = [
        ("triage", ["--help"]),
        ("triage report", ["report", "--help"]),
        ("triage review export", ["review", "export", "--help"]),
        ("triage sample", ["sample", "--help"]),
    ]
    from triage.cli.main import LABEL_ACTIONS

    verbs += [(f"triage labels {name}", ["labels", name, "--help"]) for name, _ in LABEL_ACTIONS]
    verbs += [(f"triage cache {name}", ["cache", name, "--help"]) for name in ("list", "prune")]
    verbs.append(("triage truth", ["truth", "--help"]))
    parts = []
    for title, args in verbs:
        parts += [f"### `{title}`", "", "```text", triage(*args).rstrip("\n"), "```", ""]
    return "\n".join(parts)


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, each `|` within a cell escaped."""
    lines = [head, ["---"] * len(head), *([c.replace("|", "\\|") for c in row] for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def _md(text: str) -> str:
    """A sentence as a Markdown table cell: its pipes and emphasis marks escaped."""
    for ch in "\\|*_":
        text = text.replace(ch, "\\" + ch)
    return text


def _rows(head: tuple[str, str], rows: list[tuple[str, str]]) -> list[str]:
    out = [f"| {head[0]} | {head[1]} |", "| --- | --- |"]
    return [*out, *(f"| `{name}` | {_md(what)} |" for name, what in rows), ""]


def keys_markdown() -> str:
    """The keys that work anywhere, then each screen's keys and what it shows, as `?` says them."""
    from triage.ui.app import TriageApp, every_screen
    from triage.ui.screens.help import anywhere, here, topic_of
    from triage.ui.screens.unsaved import UnsavedScreen

    parts = ["## Anywhere", "", *_rows(("key", "does"), anywhere(TriageApp))]
    for screen in every_screen():
        topic = topic_of(screen)
        parts += [f"## {topic.title}", "", *_rows(("key", "does"), here(screen))]
        parts += [*_rows(("shows", "what it is"), topic.entries())]
    parts += ["## Quitting with decisions the disk refused", ""]
    parts += ["`q` asks first, with these keys:", "", *_rows(("key", "does"), here(UnsavedScreen))]
    return "\n".join(parts)


def metrics_markdown() -> str:
    """triage's four metrics, as the registry declares them (triage/core/measures/families/)."""
    from triage.core.measures.families import METRICS

    rows = [[f"`{m.name}@k`", m.definition, m.trec_eval, m.ir_measures, m.ranx] for m in METRICS.values()]
    return markdown_table(["metric", "definition", "trec_eval", "ir_measures", "ranx"], rows)


def measures_markdown() -> str:
    """The measures by name, as the registry declares them: canonical names, aliases, definition."""
    from triage.core.measures.names import table_rows

    rows = [[f"`{canon}`", aliases or "—", definition] for canon, aliases, definition in table_rows()]
    return markdown_table(["measure", "also read as (ranx, trec_eval)", "definition, per query"], rows)


GENERATORS = {
    "json-schema": schema_markdown,
    "cli-help": cli_markdown,
    "metrics": metrics_markdown,
    "measures": measures_markdown,
    "keys": keys_markdown,
}


def on_files(files, config):
    from mkdocs.structure.files import File  # here: the tables above are made without mkdocs too

    for svg in sorted(SNAPSHOTS.glob("*.svg")):
        files.append(File.generated(config, f"snapshots/{svg.name}", abs_src_path=str(svg)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    for name, make in GENERATORS.items():
        marker = MARKER.format(name)
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
