"""Shared fixtures: the bundled sample, and small evaluations written as real files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.core.bundled import sample_manifest
from triage.core.evaluation import Evaluation, evaluate
from triage.core.inputs.frozen import FrozenLabels, frozen_of, sha256_file
from triage.core.inputs.load import load_inputs
from triage.core.inputs.manifest import from_manifest
from triage.core.inputs.shapes import Role, read_input

ROOT = Path(__file__).resolve().parent.parent  # the repository (tests/ sits at its top)
K = 5


def frozen_labels(path: Path) -> FrozenLabels:
    """A label file read as the evaluation reads its labels (`load._frozen`), alone."""
    return frozen_of(read_input(path, Role.LABELS), sha256_file(path))


def frozen_evaluation(manifest_path: Path, k: int | None = None) -> Evaluation:
    """The core alone: an evaluation's inputs judged on their frozen labels (no label store)."""
    inputs = load_inputs(from_manifest(manifest_path))
    return evaluate(inputs, inputs.frozen.table, k)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The quick loop is `pytest tests/unit`: a run of the unit folder (or of folders inside it)
    leaves out the tests marked slow. Naming a file or a test, any `-m`, and the whole suite keep them
    (docs/development.md "Tests")."""
    unit = ROOT / "tests" / "unit"
    asked = [config.invocation_params.dir / a for a in config.args]
    if config.option.markexpr or not all(a.is_dir() and a.resolve().is_relative_to(unit) for a in asked):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled sample keeps its amendments in the user's data folder: a test's own, here."""
    monkeypatch.setenv("TRIAGE_DATA", str(tmp_path_factory.mktemp("data")))


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a test keeps in the cache folder (corpus caches, the truth cache) is its own, never the
    user's (a test that needs a particular one sets TRIAGE_CACHE itself)."""
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def report_json_meets_its_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report JSON a test produces is validated against its schema (report_schema_check.py)."""
    import report_schema_check

    report_schema_check.install(monkeypatch)


@pytest.fixture(scope="session")
def sample() -> Path:
    return sample_manifest()


def write_parquet(
    path: Path, rows: list[dict], meta: dict[str, str] | None = None, schema: pa.Schema | None = None
) -> Path:
    table = pa.Table.from_pylist(rows, schema=schema)
    if meta:
        table = table.replace_schema_metadata({k.encode(): str(v).encode() for k, v in meta.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def manifest(folder: Path, a: str, b: str, labels: str, k: int | None = K, **extra: str) -> Path:
    lines = [f"k = {k}"] if k else []
    lines += ["[labels]", f'path = "{labels}"']
    for section, path in extra.items():
        lines += [f"[{section}]", f'path = "{path}"']
    lines += ["[arms.a]", 'name = "a"', f'path = "{a}"', "[arms.b]", 'name = "b"', f'path = "{b}"']
    out = folder / "triage.toml"
    out.write_text("\n".join(lines) + "\n", "utf-8")
    return out


def write_evaluation(
    folder: Path,
    rows_a: list[dict],
    rows_b: list[dict],
    labels: list[dict],
    queries: list[dict] | None = None,
    run_k: int = K,
    k: int | None = K,
) -> Path:
    """Runs A and B (metadata k = `run_k`), the labels and, when given, a queries file, as
    Parquet in `folder`, and their manifest (its `k`: `k`)."""
    for arm, rows in (("a", rows_a), ("b", rows_b)):
        write_parquet(folder / f"{arm}.parquet", rows, {"k": str(run_k)})
    write_parquet(folder / "labels.parquet", labels)
    extra = {}
    if queries is not None:
        write_parquet(folder / "queries.parquet", queries)
        extra["queries"] = "queries.parquet"
    return manifest(folder, "a.parquet", "b.parquet", "labels.parquet", k=k, **extra)


RUN_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("retrieved", pa.list_(pa.string())),
        ("scores", pa.list_(pa.float64())),
        ("plan", pa.string()),
    ]
)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """Three queries, hand-checkable: q1 hit in both, q2 hit→miss, q3 miss→hit; q4 unlabelled."""

    def run(lists: dict[str, list[str]], plan: str) -> list[dict]:
        return [
            {
                "query_id": q,
                "retrieved": ids,
                "scores": [float(10 - i) for i in range(len(ids))],
                "plan": plan,
            }
            for q, ids in lists.items()
        ]

    write_parquet(
        tmp_path / "a.parquet",
        run(
            {"q1": ["g1", "x1", "x2"], "q2": ["x3", "g2", "x4"], "q3": ["x5", "x6", "x7"], "q4": ["x8"]},
            "ann",
        ),
        {"k": "2", "name": "plain"},
        RUN_SCHEMA,
    )
    write_parquet(
        tmp_path / "b.parquet",
        run(
            {"q1": ["x1", "g1", "x2"], "q2": ["x3", "x4", "g2"], "q3": ["g3", "x6", "x7"], "q4": ["x8"]},
            "postfilter",
        ),
        {"k": "2", "name": "headers"},
        RUN_SCHEMA,
    )
    write_parquet(
        tmp_path / "labels.parquet",
        [
            {"query_id": "q1", "chunk_id": "g1", "relevance": 1},
            {"query_id": "q2", "chunk_id": "g2", "relevance": 2},
            {"query_id": "q3", "chunk_id": "g3", "relevance": 1},
            {"query_id": "q4", "chunk_id": "x8", "relevance": 0},
        ],
    )
    return manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=None)


# Text inputs plain and compressed (written by Arrow's own compressors).
COMPRESSION_SUFFIX = {"plain": "", "gzip": ".gz", "zstd": ".zst", "bz2": ".bz2"}


def write_compressed(path: Path, data: str | bytes, how: str) -> Path:
    """`data` at `path` plus the suffix of compression `how` ("plain", "gzip", "zstd", "bz2")."""
    raw = data.encode() if isinstance(data, str) else data
    out = path.with_name(path.name + COMPRESSION_SUFFIX[how])
    if how == "plain":
        out.write_bytes(raw)
    else:
        with pa.output_stream(str(out), compression=how) as stream:
            stream.write(raw)
    return out


class TextFiles:
    """Writes text inputs one way: plain, or compressed by one of the codecs triage reads."""

    def __init__(self, how: str) -> None:
        self.how = how

    def write(self, path: Path, data: str | bytes) -> Path:
        return write_compressed(path, data, self.how)


@pytest.fixture(params=list(COMPRESSION_SUFFIX))
def text_files(request: pytest.FixtureRequest) -> TextFiles:
    return TextFiles(request.param)
