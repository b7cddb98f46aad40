"""Which shape an input file has, and how each is read into the contract's tables (docs/data.md "Input
shapes").

A shape is a container (one Parquet file, a folder or glob of Parquet files, JSON Lines, ranx
JSON, CSV/TSV with a header row, TREC run or qrels text) plus, for runs, a layout: one row per
query (`retrieved` lists) or one row per (query, retrieved id) — the "long" layout, grouped here
into the contract's lists (`long_runs`). The shape is detected (`detect`) unless the manifest names it
(`format = "…"`). `read_input` returns a `Parsed` whose table already uses the contract's names;
each format's own module reads it (`parquet`, `jsonl`, `ranx`, `delimited`, `trec`).
"""

from __future__ import annotations

import glob
import json
from dataclasses import replace
from enum import StrEnum
from pathlib import Path

import pyarrow as pa

from triage.core.errors import InputError
from triage.core.inputs.contract import INTERNAL, LABEL_ALIASES, LONG_ALIASES
from triage.core.inputs.delimited import read_delimited
from triage.core.inputs.jsonl import read_jsonl
from triage.core.inputs.long_runs import group_long
from triage.core.inputs.parquet import read_dataset, read_parquet
from triage.core.inputs.rag import frameworks, json_rows
from triage.core.inputs.ranx import read_ranx
from triage.core.inputs.readers import (
    JSONL_EXT,
    PARQUET_EXT,
    Parsed,
    arrow_source,
    codec,
    detected,
    inner_suffix,
    read_sidecar,
    sniff,
)
from triage.core.inputs.trec import read_trec_qrels, read_trec_run


class Role(StrEnum):
    """What an input file is to the evaluation."""

    RUN = "run"
    LABELS = "labels"
    CORPUS = "corpus"
    QUERIES = "queries"


class Format(StrEnum):
    """The containers triage reads; the values are what `format = "…"` in a manifest names."""

    PARQUET = "parquet"
    PARQUET_DATASET = "parquet-dataset"  # a folder of Parquet files, or a glob naming them
    JSONL = "jsonl"
    RANX = "ranx"  # one JSON object {query_id: {doc_id: score}} (ranx Run / Qrels)
    TSV = "tsv"  # tab-separated, header row first (BEIR qrels/test.tsv)
    CSV = "csv"  # comma-separated, header row first
    TREC = "trec"  # run: `qid Q0 docid rank score [tag]`; labels: `qid 0 docid rel`
    JSON = "json"  # one JSON array of rows, or pandas' to_json() object of columns (`json_rows`)
    LLAMAINDEX_DATASET = "llamaindex-dataset"  # EmbeddingQAFinetuneDataset JSON: labels, queries, corpus


FORMATS = ", ".join(f.value for f in Format)
COMPRESSED_EXT = {".gz", ".zst", ".bz2"}
TREC_EXT = {"", ".txt", ".trec", ".run", ".qrels", ".res", ".tsv"}
GLOB_CHARS = set("*?[")
# Shapes named in the one error for a file triage cannot place.
SHAPES = (
    "a Parquet file; a folder or glob of Parquet files; JSON Lines (.jsonl); ranx JSON "
    "({query_id: {doc_id: score}}, .json); CSV or TSV with a header row (BEIR qrels: "
    "query-id corpus-id score); TREC run (qid Q0 docid rank score [tag]); TREC qrels "
    "(qid 0 docid rel); runs one row per query (retrieved) or one row per (query, id) "
    "with rank or score; a JSON array of rows; LlamaIndex RetrieverEvaluator results, Ragas "
    "EvaluationDataset rows, OpenInference RETRIEVER spans; a LlamaIndex EmbeddingQAFinetuneDataset"
)
# Header names that mark the first line of a text file as a header row.
_HEADER_NAMES = {
    "query_id",
    "chunk_id",
    "_id",
    *LABEL_ALIASES,
    *LONG_ALIASES,
    *frameworks.MARKS,
    *frameworks.RAGAS_01,
}
_TREC_FIELDS = {Role.RUN: (5, 6), Role.LABELS: (4,)}  # a run's tag may be left out
_TREC_RUN_MORE = 7  # a run line's fields from which on trec_eval ignores the rest


def unrecognised(path: Path, what: str) -> InputError:
    return InputError(
        path,
        f"{what}; triage reads: {SHAPES}. Name the format in the manifest (format = one of {FORMATS})",
    )


def is_pattern(path: Path | str) -> bool:
    """A glob (`runs/a/part-*.parquet`): holds a glob character and names no file itself."""
    return bool(GLOB_CHARS & set(str(path))) and not Path(path).exists()


def members(path: Path) -> list[Path]:
    """The files a folder or glob names, sorted by path; [path] for one file. Hidden files and
    names starting with `_` (Spark's `_SUCCESS`, `_metadata`) are skipped in folders."""
    if is_pattern(path):
        return sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
    if path.is_dir():
        return sorted(
            p
            for p in path.rglob("*")
            if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
        )
    return [path]


def _base_ext(path: Path) -> str:
    """The extension that names the content: `.tsv` of `qrels.tsv.gz`."""
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in COMPRESSED_EXT:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _head_text(path: Path, n: int = 1 << 16) -> str | None:
    """The first `n` bytes as text (decompressed by extension), None when they are not UTF-8."""
    try:
        with arrow_source(path) as source, pa.input_stream(source, detected(path)) as f:
            head = f.read(n)
    except (pa.ArrowException, OSError):
        return None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start > len(head) - 4:  # a character cut by the n-byte window
            return head[: e.start].decode("utf-8")
        return None


def _first_line(text: str) -> str:
    """The first line that is neither blank nor a comment (`#` first, as trec_eval reads one)."""
    lines = (line.rstrip("\r") for line in text.split("\n"))
    return next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), "")


def _is_ranx(text: str) -> bool:
    """A JSON document opening `{"id": {` — one object of objects — rather than one object a line;
    in any indentation (`json.dump(run, f, indent=2)`, 4, tabs: whitespace may follow any token)."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return False
    start = len(stripped) - len(stripped[1:].lstrip())  # the first key, past any whitespace
    try:
        key, end = json.JSONDecoder().raw_decode(stripped, start)  # a JSON string
    except ValueError:
        return False
    rest = stripped[end:].lstrip()
    return isinstance(key, str) and rest.startswith(":") and rest[1:].lstrip().startswith("{")


def _json_form(text: str, lines: bool = False) -> Format:
    """JSON text: an array of rows (unless the name says JSON Lines, `lines`); a LlamaIndex dataset;
    pandas' object of columns; ranx JSON (`{"id": {`); else JSON Lines."""
    if text.lstrip().startswith("["):
        return Format.JSONL if lines else Format.JSON
    if lines and _whole_object(_first_line(text)):  # one object a line, as the name says
        return Format.JSONL
    if json_rows.is_dataset(text):
        return Format.LLAMAINDEX_DATASET
    if json_rows.is_columns(text):
        return Format.JSON
    return Format.RANX if _is_ranx(text) else Format.JSONL


def _whole_object(line: str) -> bool:
    """Whether `line` alone is one JSON object (a JSON Lines record, not the start of a document)."""
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def _ranked(line: str) -> bool:
    """Whether a 5-field line reads `qid Q0 docid rank score` (five words of prose do not)."""
    rank, score = line.split()[3:5]
    try:
        int(rank), float(score)
    except ValueError:
        return False
    return True


def detect(path: Path, role: Role) -> Format:
    """The container of `path` (docs/data.md "Input shapes" lists these rules, in this order):
    a folder or a glob → parquet-dataset; Parquet magic bytes or a Parquet extension → parquet;
    `.json`/`.jsonl`/`.ndjson`, or text opening `{` or `[` (`_json_form`): an array → json (not
    for a JSON Lines name), `{"queries": {"…": "` → llamaindex-dataset, `{"<a RAG shape's or the
    contract's column>": {` → json, `{"…": {` → ranx, else jsonl; text whose first
    line names a known column (query_id, query-id, qid, chunk_id, doc_id, …) → tsv when it holds
    a tab, csv otherwise; a run whose first line has 6 fields (or 5 ending in a rank and a score),
    labels whose first line has 4 → trec. Anything else is refused, naming the shapes triage reads."""
    if is_pattern(path) or path.is_dir():
        return Format.PARQUET_DATASET
    head = sniff(path)
    ext = _base_ext(path)
    if head.startswith(b"PAR1") or ext in PARQUET_EXT:
        return Format.PARQUET
    text = _head_text(path)
    if ext in JSONL_EXT:  # undecodable: the JSON Lines reader names the line and the byte
        return Format.JSONL if text is None else _json_form(text, lines=ext != ".json")
    want = _TREC_FIELDS.get(role)
    if text is None:
        if want is not None and ext in TREC_EXT:  # the TREC reader names the line and the byte
            return Format.TREC
        raise unrecognised(path, "not a shape triage reads (neither Parquet nor UTF-8 text)")
    first = _first_line(text)
    fields = first.split("\t") if "\t" in first else first.split(",")
    if {f.strip().strip('"') for f in fields} & _HEADER_NAMES:
        return Format.TSV if "\t" in first else Format.CSV
    if first.lstrip().startswith(("{", "[")):
        return _json_form(text)
    n = len(first.split())
    if want is not None and n in want and (n != 5 or _ranked(first)):
        return Format.TREC
    if role is Role.RUN and n >= _TREC_RUN_MORE and _ranked(first):  # text after the tag
        return Format.TREC
    counts = " or ".join(map(str, want or ()))
    expect = f"; a TREC {'run' if role is Role.RUN else 'qrels'} line has {counts} fields" if want else ""
    if any(c < " " and c != "\t" for c in first):  # not text (/proc/self/environ): never quoted
        raise unrecognised(
            path, f"not a shape triage reads (its first line holds control characters{expect})"
        )
    shown = first[:60] + ("…" if len(first) > 60 else "")
    raise unrecognised(path, f"not a shape triage reads (first line {shown!r}{expect})")


def read_input(path: Path, role: Role, fmt: str | None = None, columns: list[str] | None = None) -> Parsed:
    """Read `path` as `role`, in format `fmt` (a `Format` value) or the detected one; runs in the
    long layout come back grouped one row per query, label columns under the contract's names."""
    path = Path(path)
    try:
        form = Format(fmt) if fmt is not None else detect(path, role)
    except ValueError:
        raise InputError(path, f"unknown format {fmt!r} (formats: {FORMATS})") from None
    if form in (Format.JSON, Format.JSONL, Format.LLAMAINDEX_DATASET):
        held = json_rows.read(path, form, role)  # None: JSON Lines of no RAG shape, read below
        if held is not None:
            return in_layout(_with_sidecar(held), role)
    if form is Format.PARQUET_DATASET:
        files = members(path)
        if not files:
            raise InputError(path, "names no files" if is_pattern(path) else "folder holds no files")
        loaded = _with_sidecar(read_dataset(path, files, columns))
    elif form is Format.RANX:
        loaded = _with_sidecar(read_ranx(path, role is Role.RUN))
    elif form in (Format.TSV, Format.CSV):
        loaded = _with_sidecar(read_delimited(path, "\t" if form is Format.TSV else ","))
    elif form is Format.TREC:
        if role not in _TREC_FIELDS:
            raise InputError(path, f"TREC text holds runs or qrels, not the {role}")
        loaded = read_table(path, trec="run" if role is Role.RUN else "qrels")
    elif form is Format.JSONL:
        loaded = read_table(path) if _base_ext(path) in JSONL_EXT else _with_sidecar(read_jsonl(path))
    elif _base_ext(path) in PARQUET_EXT:
        loaded = read_table(path, columns=columns)
    else:
        loaded = _with_sidecar(read_parquet(path, columns))
    return in_layout(loaded, role)


def in_layout(loaded: Parsed, role: Role) -> Parsed:
    """A file or a table (the Python API's) in the contract's layout: labels' and long runs'
    columns under other tools' names (`contract.LAYOUTS`) renamed, a run one row per (query, id)
    grouped one row per query; a RAG framework's shape converted (`rag.frameworks`)."""
    framework = frameworks.shape_of(loaded.table.column_names) if role in (Role.RUN, Role.LABELS) else None
    if framework is not None:
        return frameworks.convert_table(loaded, framework)
    if role is Role.LABELS:
        return _renamed(loaded, LABEL_ALIASES)
    if role is Role.RUN and "retrieved" not in loaded.table.column_names:
        return group_long(_renamed(loaded, LONG_ALIASES))
    return loaded


def read_table(path: Path, trec: str | None = None, columns: list[str] | None = None) -> Parsed:
    """Read `path` by its extension (sniffing Parquet magic; under `.gz`, `.zst` or `.bz2` the
    extension before it); `trec` ("run" | "qrels") says how a plain-text file is read. A
    `<file>.meta.json` sidecar adds to (and wins over) the metadata."""
    path = Path(path)
    head = sniff(path)
    name = codec(path, head)
    ext = inner_suffix(path) if name is not None else path.suffix.lower()
    if name is not None and ext not in PARQUET_EXT:
        head = _peek(path, name)
    if ext in PARQUET_EXT or head.startswith(b"PAR1"):
        loaded = read_parquet(path, columns)
    elif ext in JSONL_EXT:
        loaded = read_jsonl(path)
    elif trec == "run":
        loaded = read_trec_run(path)
    elif trec == "qrels":
        loaded = read_trec_qrels(path)
    else:
        raise InputError(path, f"unknown format {ext or '(no extension)'!r}; use .parquet or .jsonl")
    sidecar = path.with_name(path.name + ".meta.json")
    if sidecar.exists():
        loaded.meta.update(read_sidecar(sidecar))
    return loaded


def _peek(path: Path, name: str) -> bytes:
    """The first decompressed bytes of `path` (to recognise compressed Parquet)."""
    try:
        with arrow_source(path) as source, pa.input_stream(source, compression=name) as stream:
            return bytes(stream.read(4))
    except (pa.ArrowException, OSError) as e:
        raise InputError(path, f"cannot decompress ({name}; truncated or corrupt?): {e}") from None


def sidecar_of(path: Path) -> Path:
    """`<file>.meta.json` beside a file or folder; for a glob, beside the folder holding its
    matches (`runs/a/part-*.parquet` → `runs/a.meta.json`)."""
    while is_pattern(path) and path.parent != path:
        path = path.parent
    return path.with_name(path.name + ".meta.json")


def _with_sidecar(loaded: Parsed) -> Parsed:
    """A sidecar (`sidecar_of`) adds to (and wins over) the input's metadata."""
    sidecar = sidecar_of(loaded.path)
    if sidecar.exists():
        loaded.meta.update(read_sidecar(sidecar))
    return loaded


def _renamed(loaded: Parsed, aliases: dict[str, str]) -> Parsed:
    """Columns under other tools' names renamed to the contract's, where the contract's is absent;
    two columns that would both become one name are refused (which one is meant is a guess), but
    for a tool's internal number beside the id (`contract.INTERNAL`), dropped."""
    internal = [n for n in loaded.table.column_names if INTERNAL.get(n) in loaded.table.column_names]
    if internal:  # PyTerrier's `docid` beside its `docno`
        loaded = replace(loaded, table=loaded.table.drop_columns(internal))
    names = loaded.table.column_names
    new = [aliases.get(n, n) if aliases.get(n) not in names else n for n in names]
    for target in set(new):
        sources = [n for n, m in zip(names, new, strict=True) if m == target]
        if len(sources) > 1:
            raise InputError(
                loaded.path,
                f"ambiguous columns: {' and '.join(map(repr, sources))} both name {target!r}; keep one",
            )
    if new == names:
        return loaded
    return replace(loaded, table=loaded.table.rename_columns(new))  # keeps how rows are placed
