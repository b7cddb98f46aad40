"""The Python API, for notebooks and harnesses: open an evaluation from files, Arrow tables or
DataFrames, and read its report, its per-query table, or the app on it.

    import triage
    ev = triage.open(a=run_a, b=run_b, labels=qrels, k=5)   # or triage.open("folder/triage.toml")
    ev.report().to_json()      # the report `triage report --format json` prints
    ev.queries()               # one row per query, as a pyarrow.Table
    ev.app().run()             # the terminal app on the same evaluation

A table is anything Arrow can take without a copy through Python objects: a `pyarrow.Table`,
`RecordBatch` or `RecordBatchReader`, an object with `__arrow_c_stream__` (polars, DuckDB, pandas
2.2+) or `to_arrow()`, or a pandas DataFrame (read with `pyarrow.Table.from_pandas`, its index left
out). Neither pandas nor polars is a dependency: they are recognised only when already imported.
Tables go through the data contract as files do; an error names the argument ("run a: row 3: …").

This module sits above every layer and nothing imports it but the package root, lazily.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from triage.core.errors import InputError
from triage.core.evaluation import Evaluation
from triage.core.inputs.load import FILES, Tables
from triage.core.inputs.readers import Parsed, from_table
from triage.core.views.per_query import query_table
from triage.core.views.slices import DEFAULT_FLOOR
from triage.labels.state import LabelMode
from triage.report.build import build
from triage.report.model import Report
from triage.workspace.results import report_corpus
from triage.workspace.sampling import sample_query_log
from triage.workspace.snapshot import Snapshot, open_snapshot
from triage.workspace.spec import evaluation_spec, with_measures, with_tests
from triage.workspace.truth import DEFAULT_TOLERANCE, TruthProgress, TruthRun, compute_truth

if TYPE_CHECKING:
    from triage.ui.app import TriageApp

PathLike = str | os.PathLike[str]
# What errors call each input given as a table.
NAMES = {"a": "run a", "b": "run b", "labels": "labels", "queries": "queries", "corpus": "corpus"}


def as_arrow(value: object, name: str) -> pa.Table:
    """`value` as an Arrow table; `name` (the argument) is what an error names."""
    try:
        if isinstance(value, pa.Table):
            return value
        if isinstance(value, pa.RecordBatch):
            return pa.Table.from_batches([value])
        if isinstance(value, pa.RecordBatchReader):
            return value.read_all()
        pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas is imported
        if pandas is not None and isinstance(value, pandas.DataFrame):
            try:
                return pa.Table.from_pandas(value, preserve_index=False)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return _by_column(value)
        if hasattr(value, "__arrow_c_stream__"):
            return pa.table(value)
        to_arrow = getattr(value, "to_arrow", None)
        if callable(to_arrow):
            out = to_arrow()
            if isinstance(out, pa.Table | pa.RecordBatch | pa.RecordBatchReader):
                return as_arrow(out, name)
    except (pa.ArrowException, TypeError, ValueError) as e:
        raise InputError(name, f"cannot be read as an Arrow table: {e}") from None
    raise InputError(
        name,
        f"is a {type(value).__name__}: expected a path, an Arrow table, a DataFrame or an object "
        "with __arrow_c_stream__ or to_arrow()",
    )


def _by_column(frame: Any) -> pa.Table:
    """A pandas DataFrame some column of which holds values of more than one kind: lists of ids
    mixing text and integers as lists of text (ids are strings whatever their type), any other such
    column (a Phoenix spans frame's attributes: text in one row, an object in the next) kept as JSON
    text (null for a missing value); every other column as Arrow reads it."""
    columns = {}
    for name in frame.columns:
        values = frame[name]
        try:
            columns[str(name)] = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            ids = _id_lists(list(values))
            columns[str(name)] = (
                ids if ids is not None else pa.array([_json_text(v) for v in values], pa.string())
            )
    return pa.table(columns)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)  # NaN: pandas' missing value


def _id_lists(values: list[object]) -> pa.Array | None:
    """Lists of ids (text or integers, numpy's too) as lists of text; None unless every value is one."""
    out: list[list[str] | None] = []
    for v in values:
        if _missing(v):
            out.append(None)
            continue
        items = v.tolist() if isinstance(v, np.ndarray) else v
        if not isinstance(items, list | tuple):
            return None
        if not all(isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool)) for x in items):
            return None
        out.append([str(x) for x in items])
    return pa.array(out, pa.list_(pa.string()))


def _json_text(value: object) -> str | None:
    if _missing(value):
        return None
    return json.dumps(
        value, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o), ensure_ascii=False
    )


def _is_path(value: object) -> bool:
    return isinstance(value, str | os.PathLike)


def _parsed(role: str, value: object, meta: Mapping[str, object] | None) -> Parsed:
    parsed = from_table(NAMES[role], as_arrow(value, NAMES[role]))
    if meta:
        return Parsed(parsed.path, parsed.table, {**parsed.meta, **{k: str(v) for k, v in meta.items()}})
    return parsed


def open_evaluation(
    manifest: PathLike | None = None,
    *,
    a: object = None,
    b: object = None,
    labels: object = None,
    queries: object = None,
    corpus: object = None,
    names: tuple[str, str] | None = None,
    k: int | Sequence[int] | None = None,
    meta: Mapping[str, Mapping[str, object]] | None = None,
    amendments: PathLike | None = None,
    label_state: LabelMode | str = LabelMode.AMENDED,
    apply_stale: bool = False,
    measures: str | Sequence[str] | None = None,
    order: str | None = None,
    split: str | None = None,
    tests: str | Sequence[str] | None = None,
    correction: str | None = None,
    rounds: int | None = None,
    seed: int | None = None,
) -> Comparison:
    """One evaluation: a manifest (file or folder), or the inputs `a`, `b`, `labels` (each a path
    or a table) with optional `queries` and `corpus`; neither: the bundled sample. Runs in a RAG
    framework's shape (LlamaIndex, Ragas, OpenInference spans: docs/data.md "RAG evaluations")
    need no `labels`: their expected ids are the labels.

    `names`: the arms' names (default: a file's stem, a table's `name` metadata, else "a", "b").
    `k`: the cut-off, or several (`[1, 5, 10]`: the first decides flips and the paired table; each arm's
    metrics at every one); default: the manifest's, else the runs' metadata k. `meta`: metadata for
    inputs given as tables, by input ("a", "b", "labels"), over the table's own schema metadata
    (a DataFrame has none: give `k` and whatever the checks compare, e.g. `embedding_model`).
    `amendments`: the amendments folder (labels given as a table have none beside them).
    `label_state`: "amended" or "frozen", as `triage report --label-state`.
    `measures`: measures by name, as `triage report --measures` ("nDCG@10,AP" or a list; docs/measures.md
    "Measures by name"): each arm's mean in the report, per query in `queries()`; an unknown name
    raises InputError listing the close ones. `order`: "trec_eval" or "as_given", as `--order`.
    `split`: with `labels` naming a BEIR folder, the split read (default "test"), as `--split`.
    `tests`, `correction`, `rounds`, `seed`: the named measures' paired tests, as `--tests`
    ("t,wilcoxon" or a list), `--correction`, `--rounds` and `--seed` (docs/measures.md "Paired tests per
    measure"; the report's `compare`); a bad value raises InputError naming it."""
    given = {"a": a, "b": b, "labels": labels, "queries": queries, "corpus": corpus}
    named = [r for r, v in given.items() if v is not None]
    _check_arguments(manifest, names, k, meta, amendments, label_state, apply_stale)
    named_measures = _measures(measures, order)
    paired_tests = _tests(tests, correction, rounds, seed)
    meta = meta or {}
    unknown = sorted(set(meta) - {"a", "b", "labels", "queries", "corpus"})
    if unknown:
        raise ValueError(f"meta names no input: {', '.join(unknown)} (inputs: a, b, labels, queries, corpus)")
    for role in meta:
        if _is_path(given[role]):
            raise ValueError(f"meta[{role!r}]: a file's metadata is its own (or its .meta.json sidecar)")
    if split is not None and not isinstance(split, str):
        raise TypeError(f"split must be a string, as 'test', not {type(split).__name__}")
    if manifest is not None or not named:
        if split is not None:
            raise ValueError("split goes with labels given as a BEIR folder (a manifest says [labels] split)")
        if named:
            raise ValueError(f"give a manifest or the inputs, not both (got {', '.join(named)})")
        where = Path(manifest) if manifest is not None else None
        spec = evaluation_spec(where, amendments=Path(amendments) if amendments is not None else None)
        spec = with_tests(with_measures(spec, *named_measures, "measures"), *paired_tests, "arguments")
        return Comparison(open_snapshot(spec, k, LabelMode(label_state), apply_stale))
    missing = [r for r in ("a", "b") if given[r] is None]
    if missing:  # labels None: the runs' expected ids (runs in a RAG framework's shape)
        raise ValueError(f"missing input: {', '.join(missing)} (a and b are required)")
    paths: dict[str, Path | None] = {}
    parsed: dict[str, Parsed] = {}
    for role, value in given.items():
        if value is None or _is_path(value):
            paths[role] = None if value is None else Path(value)  # type: ignore[arg-type]
        else:
            parsed[role] = _parsed(role, value, meta.get(role))
            paths[role] = None if role in ("queries", "corpus") else Path(NAMES[role])
    # an arm given as a table is named by its `name` metadata, else "a" or "b"; a file, by its stem
    arm_names = names or tuple((parsed[r].meta.get("name") or r) if r in parsed else None for r in ("a", "b"))
    run_a, run_b, frozen = paths["a"], paths["b"], paths["labels"]
    assert run_a is not None and run_b is not None
    spec = evaluation_spec(
        None,
        (run_a, run_b),
        frozen,
        paths["corpus"],
        paths["queries"],
        names=(arm_names[0], arm_names[1]),
        k=k,
        amendments=Path(amendments) if amendments is not None else None,
        in_memory={Path(NAMES[r]) for r in parsed},
        split=split,
    )
    spec = with_tests(with_measures(spec, *named_measures, "measures"), *paired_tests, "arguments")
    tables = Tables(**parsed) if parsed else FILES
    return Comparison(open_snapshot(spec, k, LabelMode(label_state), apply_stale, tables=tables))


K_LIMIT = 2**63  # as the CLI's --k: a cut-off is a positive whole number below this


def _measures(measures: object, order: object) -> tuple[str | Sequence[str] | None, str | None]:
    """`measures` and `order` checked for their kind and value (names are parsed with the spec)."""
    if measures is not None and not isinstance(measures, str | list | tuple):
        raise TypeError(f"measures must be a string or a list of names, not {type(measures).__name__}")
    if order is not None and order not in ("trec_eval", "as_given"):
        raise ValueError(f"order must be 'trec_eval' or 'as_given', not {order!r}")
    return measures, order  # type: ignore[return-value]


def _tests(tests: object, correction: object, rounds: object, seed: object) -> tuple[Any, Any, Any, Any]:
    """The paired tests' arguments checked for their kind (their values with the spec's `with_tests`)."""
    if tests is not None and not isinstance(tests, str | list | tuple):
        raise TypeError(f"tests must be a string or a list of test names, not {type(tests).__name__}")
    if correction is not None and not isinstance(correction, str):
        raise TypeError(f"correction must be a string, not {type(correction).__name__}")
    for arg, value in (("rounds", rounds), ("seed", seed)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | np.integer)):
            raise TypeError(f"{arg} must be a whole number, not {type(value).__name__}")
    return tests, correction, None if rounds is None else int(rounds), None if seed is None else int(seed)  # type: ignore[call-overload]


def _check_arguments(
    manifest: object,
    names: object,
    k: object,
    meta: object,
    amendments: object,
    label_state: object,
    apply_stale: object,
) -> None:
    """`open`'s arguments by the CLI's rules: TypeError for a value of the wrong kind, ValueError
    for one out of range, each naming the argument."""
    for arg, value in (("manifest", manifest), ("amendments", amendments)):
        if value is not None and not isinstance(value, str | os.PathLike):
            raise TypeError(f"{arg} must be a path (str or os.PathLike), not {type(value).__name__}")
    _check_names(names)
    _check_k(k)
    _check_meta(meta)
    if not isinstance(label_state, str):
        raise TypeError(f"label_state must be 'amended' or 'frozen', not {type(label_state).__name__}")
    if label_state not in {m.value for m in LabelMode}:
        raise ValueError(f"label_state must be 'amended' or 'frozen', not {label_state!r}")
    if not isinstance(apply_stale, bool):
        raise TypeError(f"apply_stale must be True or False, not {type(apply_stale).__name__}")


def _check_names(names: object) -> None:
    if names is None:
        return
    if not isinstance(names, tuple | list) or len(names) != 2:
        raise TypeError(f"names must be a pair of arm names, as ('plain', 'headers'), not {names!r}")
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise ValueError(f"names must be two non-empty strings, not {names!r}")


def _check_k(k: object) -> None:
    if k is None:
        return
    values: list[Any] = list(k) if isinstance(k, list | tuple) else [k]
    if not values:
        raise ValueError("k must be a positive whole number or a non-empty list of them, not []")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"k must be a whole number or a list of them, not {type(v).__name__} {v!r}")
        if not 1 <= int(v) < K_LIMIT:
            raise ValueError(f"k must be a positive whole number below 2^63, not {int(v)}")
    if len(set(int(v) for v in values)) != len(values):
        raise ValueError(f"k names a cut-off twice: {list(values)}")


def _check_meta(meta: object) -> None:
    if meta is None:
        return
    if not isinstance(meta, Mapping):
        raise TypeError(f"meta must be a mapping of input to its metadata, not {type(meta).__name__}")
    for role, value in meta.items():
        if not isinstance(value, Mapping):
            raise TypeError(f"meta[{role!r}] must be a mapping of metadata keys, not {type(value).__name__}")
        if not all(isinstance(key, str) for key in value):
            raise TypeError(f"meta[{role!r}]'s keys must be strings")


def sample_queries(
    log: PathLike,
    corpus: PathLike,
    out: PathLike,
    per_shape: int = 100,
    control: int | None = None,
    seed: int = 0,
    tenant_column: str | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """`triage sample LOG --corpus C --out Q` from Python (`triage.sample`): the queries worth
    running, written to `out` (Parquet, the queries file `triage.truth` reads) with its allocation
    beside it (`<stem>.allocation.json`); returns that allocation. `control` None: `per_shape`.
    The rule: docs/truth.md "Sampling the queries". A bad input raises InputError naming it."""
    for name, value in (("log", log), ("corpus", corpus), ("out", out)):
        if not _is_path(value):
            raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")
    control = per_shape if control is None else control
    for name, number, low in (("per_shape", per_shape, 1), ("control", control, 0), ("seed", seed, 0)):
        if isinstance(number, bool) or not isinstance(number, int | np.integer):
            raise TypeError(f"{name} must be a whole number, not {type(number).__name__} {number!r}")
        if not low <= int(number) < K_LIMIT:
            raise ValueError(f"{name} must be a whole number from {low} below 2^63, not {int(number)}")
    if tenant_column is not None and not isinstance(tenant_column, str):
        raise TypeError(f"tenant_column must be a column name, not {type(tenant_column).__name__}")
    made = sample_query_log(
        Path(log),
        Path(corpus),
        Path(out),
        int(per_shape),
        int(control),
        int(seed),
        tenant_column,
        bool(force),
    )
    return made.allocation


@dataclass(frozen=True)
class Comparison:
    """An open evaluation: arms A and B judged at one k on one label state (immutable)."""

    snapshot: Snapshot

    @property
    def ev(self) -> Evaluation:
        return self.snapshot.ev

    @property
    def k(self) -> int:
        return self.ev.k

    @property
    def names(self) -> tuple[str, str]:
        return self.ev.a.name, self.ev.b.name

    def report(self, floor: float = DEFAULT_FLOOR, gate: PathLike | None = None) -> Report:
        """The report `triage report` prints (the same typed model; `.to_json()` is its JSON).
        `floor`: the tenants' hit-rate floor, as `--floor`. `gate`: a gate file (FLOORS.toml), as
        `--gate`: its verdicts are the report's `gate` (`.gate.holds`: whether every floor and
        measure limit holds) and its checks join `checks`; a bad file raises InputError naming it."""
        if gate is not None and not _is_path(gate):
            raise TypeError(f"gate must be a path (str or os.PathLike), not {type(gate).__name__}")
        return build(self.snapshot, floor, gate=None if gate is None else Path(gate))

    def queries(self, hints: bool = False) -> pa.Table:
        """One row per query (every query any input names, in first-seen order).

        Columns: query_id, outcome (as the JSON report spells it: "hit->miss", …, "unlabelled"),
        text and tenant (null where unknown); per arm x in a, b: gold_rank_x (1-based, over the
        stored depth; null: no gold stored), depth_x, hit_x, recall_x, mrr_x, ndcg_x (at k; null
        for unlabelled queries, recall also where n_eligible = 0) and plan_x. With `hints`, a
        `hints` column: each flip's cause hints (HintKind values, most specific first; text hints
        only with a corpus, for the first TEXT_FLIPS flips, as in the report), null for queries
        that did not flip. With measures by name, `<name>_a` and `<name>_b` for each (as
        `nDCG@10_a`; null for unlabelled queries). Schema metadata: k and the arms' names."""
        return query_table(self.ev, hints, report_corpus(self.snapshot) if hints else None)

    def app(self, reviewer: str | None = None, floor: float = DEFAULT_FLOOR) -> TriageApp:
        """The terminal app on this evaluation (`.run()` it). Judgements are written to the
        amendments folder; labels given as a table have no file to amend, and the app says so
        when a judgement cannot be saved."""
        from triage.ui.app import TriageApp

        return TriageApp(self.snapshot, reviewer=reviewer, floor=floor)


def truth(
    corpus: PathLike,
    queries: PathLike,
    k: int | Sequence[int],
    out: PathLike,
    metric: str = "cosine",
    tolerance: float = DEFAULT_TOLERANCE,
    engine: str = "local",
    address: str | None = None,
    force: bool = False,
    progress: Callable[[TruthProgress], None] | None = None,
) -> TruthRun:
    """`triage truth`: the exact top-k of every query within the corpus rows its filter admits,
    written to the folder `out` (labels.parquet, queries.parquet, truth.json; docs/truth.md).

    `corpus`: a Parquet file or a folder of them (each a shard); `queries`: Parquet or JSON Lines
    with query_id, embedding and an optional filter; `k`: one depth or several (computed at the
    largest); `metric`: "cosine", "ip" or "l2"; `force`: replace an earlier truth folder at `out`;
    `progress`: called with a `TruthProgress` (rows scanned, rate, seconds left) as the run goes.
    Returns the run (`.out`, `.provenance`: truth.json's content). InputError on a bad input."""
    for name, value in (("corpus", corpus), ("queries", queries), ("out", out)):
        if not _is_path(value):
            raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")
    return compute_truth(
        Path(corpus), Path(queries), k, Path(out), metric, tolerance, engine, address, force, progress
    )
