"""The memory-mapped corpus cache (core/inputs/corpus.py `open_corpus`, corpus_cache.py): the chunks
and ids of the file, built once, a broken or foreign index read past and named."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.core.errors import InputError
from triage.core.ids.codes import fingerprint
from triage.core.ids.index import CorpusIds
from triage.core.inputs import corpus as corpus_mod
from triage.core.inputs import corpus_cache as cache
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.shapes import Role


def write_corpus(path: Path, n: int = 60, row_group: int = 7) -> list[str]:
    """A Parquet corpus of `n` chunks in row groups of `row_group`, ids in no particular order,
    an extra column the corpus does not use, and BEIR's `title` for the header."""
    rng = random.Random(5)
    ids = [f"doc{rng.randrange(10**6):06d}#{i:03d}" for i in range(n)]
    table = pa.table(
        {
            "chunk_id": ids,
            "title": [f"Doc {i} > Section" if i % 5 else None for i in range(n)],
            "text": [f"body of chunk {i} " + "é" * (i % 4) for i in range(n)],
            "doc_id": [f"doc{i // 10}" for i in range(n)],
            "tenant": ["t"] * n,
        }
    )
    pq.write_table(table, path, row_group_size=row_group)
    assert pq.ParquetFile(path).num_row_groups == -(-n // row_group)
    return ids


def test_the_cache_gives_the_same_chunks_as_the_in_memory_corpus(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path)
    progress: list[float] = []
    cached = open_corpus(path, progress.append, small=0)
    in_memory = open_corpus(path)
    assert progress == [pytest.approx((i + 1) / 9) for i in range(9)]  # one call per row group
    assert list((tmp_path / "cache" / "triage").glob("corpus-*/index.arrow"))  # the cache is there
    assert len(cached) == len(in_memory) == len(ids)
    assert cached.ids.to_pylist() == in_memory.ids.to_pylist() == ids
    wanted = [*ids[::-1], "absent#1", "", "zzzz", "doc"]
    got, want = cached.get(wanted), in_memory.get(wanted)
    assert got == want and list(got) == ids[::-1]  # in the order asked; absent ids absent
    assert got[ids[3]].header == "Doc 3 > Section" and got[ids[5]].header is None
    assert got[ids[3]].text == "body of chunk 3 ééé" and got[ids[3]].source_type is None
    assert cached.get(["absent#1"]) == {} and cached.get([]) == {}
    asked = pa.array([ids[7], None, "absent#1", "", ids[7], ids[0]])
    assert cached._known is not None and in_memory._known is None  # by fingerprint / by hash set
    assert cached.rows_of(asked).tolist() == in_memory.rows_of(asked).tolist() == [7, -1, -1, -1, 7, 0]


def counted_builds(monkeypatch) -> list[Path]:  # type: ignore[no-untyped-def]
    """From now on, the cache folder of each corpus cache build, in order."""
    builds: list[Path] = []
    real = cache.build_cache

    def counting(p: Path, progress: object = None) -> object:
        builds.append(cache.folder_of(cache.corpus_key(p)))
        return real(p, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "build_cache", counting)
    return builds


def test_the_cache_is_built_once_and_reused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=30, row_group=4)
    builds = counted_builds(monkeypatch)
    first = open_corpus(path, small=0)
    second = open_corpus(path, small=0)
    assert len(builds) == 1
    assert second.get(ids) == first.get(ids) and len(second.get(ids)) == len(ids)
    assert open_corpus(path, small=1 << 40).get(ids) == first.get(ids)  # large threshold: in memory
    assert len(builds) == 1
    write_corpus(path, n=31, row_group=4)  # a new version of the file: a new cache
    assert len(open_corpus(path, small=0)) == 31 and len(builds) == 2 and builds[0] != builds[1]


def test_the_caches_header_tokens_are_the_headers_counted_now(tmp_path: Path, monkeypatch) -> None:
    from triage.core.text.words import token_estimate

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=40, row_group=6)
    table = pq.read_table(path)
    titles = table.column("title").to_pylist()
    titles[7] = "  many\twords\u3000here, é and\u00a0more  "  # non-ASCII whitespace: the regex path
    pq.write_table(table.set_column(1, "title", pa.array(titles, pa.string())), path, row_group_size=6)
    rows = np.array([7, 0, 5, 39, 7, 12], np.int64)
    want = [token_estimate(titles[r]) if titles[r] else 0 for r in rows]
    cached, in_memory = open_corpus(path, small=0), open_corpus(path)
    assert cached._tokens is not None and in_memory._tokens is None
    assert cached.header_tokens(rows).tolist() == in_memory.header_tokens(rows).tolist() == want
    assert want[0] > 0 and want[2] == 0  # a header counted, a null header none


def test_an_uncached_corpus_counts_each_header_once_when_first_asked(tmp_path: Path, monkeypatch) -> None:
    from triage.core.text.words import token_estimate

    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=30, row_group=4)
    corpus = open_corpus(path)  # small: in memory, no cached counts
    want = [token_estimate(h) if h else 0 for h in corpus.table.column("header").to_pylist()]
    counted: list[int] = []
    count = corpus_mod.token_estimates

    def counting(texts):  # type: ignore[no-untyped-def]
        counted.append(len(texts))
        return count(texts)

    monkeypatch.setattr(corpus_mod, "token_estimates", counting)
    first, second = np.array([5, 1, 5, 0]), np.array([1, 29, 0, 5, 29])
    assert corpus.header_tokens(first).tolist() == [want[i] for i in first]
    assert corpus.header_tokens(second).tolist() == [want[i] for i in second]
    assert corpus.header_tokens(first).tolist() == [want[i] for i in first]
    assert counted == [3, 1]  # rows 0, 1, 5; then 29 alone; then none


@pytest.mark.slow
def test_a_cache_folder_without_header_tokens_is_built_again_and_a_wrong_one_refused(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=20, row_group=4)
    builds = counted_builds(monkeypatch)
    open_corpus(path, small=0)
    tokens = builds[0] / "tokens.arrow"
    tokens.unlink()  # a folder an older triage wrote
    again = open_corpus(path, small=0)
    assert len(builds) == 2 and tokens.is_file() and again._tokens is not None
    with (
        pa.OSFile(str(tokens), "wb") as f,
        pa.ipc.new_file(f, pa.schema([("header_tokens", pa.int64())])) as w,
    ):
        w.write_table(pa.table({"header_tokens": pa.array([1, 2], pa.int64())}))
    third = open_corpus(path, small=0)  # not what the manifest proves: built again
    counted = open_corpus(path).header_tokens(np.arange(20)).tolist()  # in memory, counted now
    assert len(builds) == 3 and third.header_tokens(np.arange(20)).tolist() == counted


@pytest.mark.slow
@pytest.mark.parametrize("left", ["file", "link to the corpus", "folder"])
def test_the_files_an_older_triage_kept_are_removed_when_the_folder_is_built_again(
    tmp_path: Path, monkeypatch, left: str
) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=20, row_group=4)
    before = path.read_bytes()
    builds = counted_builds(monkeypatch)
    open_corpus(path, small=0)
    (builds[0] / "manifest.json").unlink()  # the folder as a version before left it
    older = [builds[0] / name for name in cache.OLDER_FILES]
    for name in older:
        if left == "file":
            name.write_bytes(b"fp and placed keys")
        elif left == "link to the corpus":
            name.symlink_to(path)
        else:
            name.mkdir()
    again = open_corpus(path, small=0)
    assert len(builds) == 2 and (builds[0] / "manifest.json").is_file()
    assert again.rows_of(pa.array(ids[:3])).tolist() == [0, 1, 2]
    assert all(n.is_dir() if left == "folder" else not os.path.lexists(n) for n in older)
    assert path.read_bytes() == before  # a link is removed, never followed


def test_the_corpus_ids_come_from_a_built_cache_as_the_file_gives_them(tmp_path: Path, monkeypatch) -> None:
    from triage.core.ids.index import IdIndex
    from triage.core.inputs import load as inputs

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)  # this small file is mapped like a large one
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=50, row_group=6)
    assert corpus_mod.cached_ids(path) is None  # no cache yet: the file is read
    from_file = inputs.load_corpus_ids(path)
    open_corpus(path, small=0)  # built (the app's look-ups, the report's text hints)
    got = corpus_mod.cached_ids(path)
    assert got is not None
    chunk_ids, index, slot_rows = got.ids, got.index, got._rows
    assert chunk_ids.to_pylist() == ids and slot_rows is not None
    fp = fingerprint(pa.array(ids))
    built = IdIndex.build(fp)
    assert index.table.tolist() == built.table.tolist() and index.mask == built.mask
    assert slot_rows[built.ends(fp)].tolist() == list(range(len(ids)))  # each id's slot holds its row
    assert (slot_rows[built.table == 0] == -1).all()  # and a free slot none

    read = inputs.read_input

    def no_corpus_file(path, role, *args, **kwargs):  # type: ignore[no-untyped-def]
        assert role is not Role.CORPUS, "the corpus file was read although its cache is built"
        return read(path, role, *args, **kwargs)

    monkeypatch.setattr(inputs, "read_input", no_corpus_file)
    from_cache = inputs.load_corpus_ids(path)
    asked = fingerprint(pa.array(ids[::3] + ["absent#1", ids[7] + "x"]))
    assert from_cache.holds(asked).tolist() == from_file.holds(asked).tolist() == [True] * 17 + [False] * 2
    assert from_cache.find(asked).tolist() == from_file.find(asked).tolist()


@pytest.mark.slow
def test_the_cache_of_a_corpus_with_a_repeated_id_is_refused_by_row(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=30, row_group=4)
    table = pq.read_table(path)
    pq.write_table(
        table.set_column(0, "chunk_id", pa.array(ids[:20] + [ids[3]] + ids[21:])), path, row_group_size=4
    )
    with pytest.raises(InputError, match=f"duplicate chunk_id '{ids[3]}' \\(row 4 and row 21\\)"):
        open_corpus(path, small=0)
    assert corpus_mod.cached_ids(path) is None


def _packed(key: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every id moved into one run of filled slots from slot 0, its row with it: laid out as an
    index would be, but most ids are not where a probe from their home slot looks."""
    filled = rows >= 0
    out_key, out_rows = np.zeros_like(key), np.full_like(rows, -1)
    out_key[: filled.sum()] = key[filled]
    out_rows[: filled.sum()] = rows[filled]
    return out_key, out_rows


def _free_slot(key: np.ndarray) -> int:
    return int(np.flatnonzero(key == 0)[0])


def _with(rows: np.ndarray, slot: int, row: int) -> np.ndarray:
    out = rows.copy()
    out[slot] = row
    return out


def _slot_of(rows: np.ndarray, row: int) -> int:
    return int(np.flatnonzero(rows == row)[0])


BROKEN_SLOTS = {
    "one slot": lambda key, rows: (key[:1], rows[:1]),
    "no free slot at the end": lambda key, rows: (np.arange(1, len(key) + 1, dtype=np.uint64), rows),
    # row 1's slot: not among the ids spot-checked (SPOT = 4 below: rows 0, 25, 50 and 75)
    "a row past the ids": lambda key, rows: (key, _with(rows, _slot_of(rows, 1), 105)),
    "no row in a filled slot": lambda key, rows: (key, _with(rows, _slot_of(rows, 1), -1)),
    "a row in a free slot": lambda key, rows: (key, _with(rows, _free_slot(key), 1)),
    "free slots marked other than -1": lambda key, rows: (key, np.where(rows < 0, np.int32(-7), rows)),
    "a row given twice": lambda key, rows: (key, _with(rows, _slot_of(rows, 1), 2)),
    "free slots filled, but the last": lambda key, rows: (
        np.r_[np.where(key[:-1] == 0, np.uint64(3), key[:-1]), key[-1:]],
        rows,
    ),
    "a slot's row missing": lambda key, rows: (key, rows[:-1]),
    "one run of every id": _packed,
}


def _plant(folder: Path, key: np.ndarray, rows: np.ndarray) -> None:
    for name, schema, values in (("table", cache.TABLE, key), ("slot_rows", cache.ROWS, rows)):
        (folder / f"{name}.arrow").unlink()
        with pa.OSFile(str(folder / f"{name}.arrow"), "wb") as f, pa.ipc.new_file(f, schema) as w:
            w.write_table(pa.table({schema.names[0]: pa.array(values, schema.field(0).type)}))
    _reseal(folder)


def _reseal(folder: Path) -> None:
    """The manifest rewritten for the files now there: a forgery the digests cannot see, so the
    index's own checks must."""
    import json

    manifest = json.loads((folder / "manifest.json").read_bytes())
    for name in manifest["files"]:
        size, digest = cache.file_digest(folder / name)
        manifest["files"][name] = {"bytes": size, "xxh3_64": digest}
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.slow
@pytest.mark.parametrize("broken", BROKEN_SLOTS, ids=list(BROKEN_SLOTS))
def test_a_broken_index_in_the_cache_is_read_past_and_then_named(
    tmp_path: Path, monkeypatch, broken: str
) -> None:
    from triage.core.inputs import load as inputs

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    monkeypatch.setattr(corpus_mod, "SPOT", 4)
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=100, row_group=16)
    open_corpus(path, small=0)
    folder = cache.folder_of(cache.corpus_key(path))
    key = (
        pa.ipc.open_file(pa.memory_map(str(folder / "table.arrow")))
        .read_all()
        .column("key")
        .to_numpy()
        .copy()
    )
    rows = (
        pa.ipc.open_file(pa.memory_map(str(folder / "slot_rows.arrow")))
        .read_all()
        .column("row")
        .to_numpy()
        .copy()
    )
    _plant(folder, *BROKEN_SLOTS[broken](key, rows))
    assert corpus_mod.cached_ids(path) is None
    assert inputs.load_corpus_ids(path).holds(fingerprint(pa.array(ids))).all()  # read from the file
    opened = open_corpus(path, small=0)  # built again (rows unlike the manifest's) or read directly
    assert (opened.notice is None or "inconsistent" in opened.notice) and opened.rows_of(
        pa.array(ids[:3])
    ).tolist() == [0, 1, 2]


@pytest.mark.parametrize("name", ["table", "slot_rows"])
def test_an_index_file_holding_a_null_is_read_past_and_then_named(tmp_path: Path, monkeypatch, name) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    path = tmp_path / "chunks.parquet"
    write_corpus(path, n=20, row_group=4)
    open_corpus(path, small=0)
    target = cache.folder_of(cache.corpus_key(path)) / f"{name}.arrow"
    built = pa.ipc.open_file(pa.memory_map(str(target))).read_all()
    values = built.column(0).to_pylist()
    values[-1] = None
    target.unlink()
    with pa.OSFile(str(target), "wb") as f, pa.ipc.new_file(f, built.schema) as w:
        w.write_table(pa.table({built.schema.names[0]: pa.array(values, built.schema.field(0).type)}))
    _reseal(target.parent)
    assert corpus_mod.cached_ids(path) is None
    assert "inconsistent" in (open_corpus(path, small=0).notice or "")


def test_the_index_read_at_load_is_taken_again_only_for_the_same_ids(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=20, row_group=4)
    open_corpus(path)  # built
    known = corpus_mod.cached_ids(path)
    assert known is not None
    checked: list[int] = []
    check = corpus_mod._known
    monkeypatch.setattr(corpus_mod, "_known", lambda *a: checked.append(1) or check(*a))
    again = open_corpus(path, known=known)
    assert checked == [] and again._known is known  # one index for both: the very table's ids
    alike = CorpusIds(pa.array(ids))  # the same ids, read from the file
    assert open_corpus(path, known=alike)._known is alike and checked == []
    assert again.rows_of(pa.array(ids[:2])).tolist() == [0, 1]
    stale = CorpusIds(pa.array(ids[::-1]))  # another corpus version's ids
    opened = open_corpus(path, known=stale)
    assert opened._known is not None and opened._known is not stale and checked == [1]


def test_a_mapped_corpus_never_gives_one_id_s_chunk_for_another(tmp_path: Path, monkeypatch) -> None:
    """Rows found by fingerprint are confirmed by their ids: two ids' rows swapped in an index
    that was not checked give absent chunks, not each other's."""
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "chunks.parquet"
    ids = write_corpus(path, n=20, row_group=4)
    mapped = open_corpus(path, small=0)
    assert mapped._known is not None and mapped._known._rows is not None
    rows = mapped._known._rows
    swapped = _with(_with(rows, _slot_of(rows, 3), 4), _slot_of(rows, 4), 3)
    known = CorpusIds(mapped.ids, index=mapped._known.index, slot_rows=swapped)
    corpus = corpus_mod.Corpus(mapped.table, path, None, None, known)
    assert corpus.rows_of(pa.array([ids[3], ids[4], ids[5]])).tolist() == [-1, -1, 5]
    assert set(corpus._batched(ids[:8])) == set(ids[:8]) - {ids[3], ids[4]}  # more than FEW ids asked


@pytest.mark.slow
def test_an_index_of_another_corpus_is_not_taken_for_this_ones(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from triage.core.inputs import load as inputs

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    p, q = tmp_path / "p.parquet", tmp_path / "q.parquet"
    ids = write_corpus(p, n=25, row_group=5)
    pq.write_table(pa.table({"chunk_id": [f"other#{i}" for i in range(25)]}), q)
    open_corpus(p, small=0)
    open_corpus(q, small=0)
    for name in ("table.arrow", "slot_rows.arrow"):  # same rows, another corpus
        target = cache.folder_of(cache.corpus_key(p)) / name
        target.unlink()
        shutil.copyfile(cache.folder_of(cache.corpus_key(q)) / name, target)
    assert corpus_mod.cached_ids(p) is None  # the digests fail
    assert inputs.load_corpus_ids(p).holds(fingerprint(pa.array(ids))).all()  # read from the file
    rebuilt = open_corpus(p, small=0)  # nor taken for its chunks: built again
    assert rebuilt.notice is None and rebuilt.rows_of(pa.array(ids[:2])).tolist() == [0, 1]
    _reseal(cache.folder_of(cache.corpus_key(p)))
    for name in ("table.arrow", "slot_rows.arrow"):  # planted again, the manifest forged to match
        target = cache.folder_of(cache.corpus_key(p)) / name
        target.unlink()
        shutil.copyfile(cache.folder_of(cache.corpus_key(q)) / name, target)
    _reseal(cache.folder_of(cache.corpus_key(p)))
    assert corpus_mod.cached_ids(p) is None  # the index's own check
    assert "inconsistent" in (open_corpus(p, small=0).notice or "")


@pytest.mark.slow
def test_the_report_is_the_same_with_the_corpus_ids_from_its_cache(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import shutil

    from triage.cli.main import main
    from triage.core.bundled import bundled

    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    folder = tmp_path / "ev"
    shutil.copytree(bundled("sample_runs"), folder)
    manifest = folder / "triage.toml"  # without the tuning split: its doc ids are read from the file
    manifest.write_text(manifest.read_text().split("[holdout]")[0])
    from triage.core.inputs import load as inputs

    reads: list[Path] = []
    read = inputs.read_input

    def counted(path, role, *args, **kwargs):  # type: ignore[no-untyped-def]
        if role is Role.CORPUS:
            reads.append(path)
        return read(path, role, *args, **kwargs)

    monkeypatch.setattr(inputs, "read_input", counted)
    outs = []
    for _ in range(2):  # the first reads the ids from the file and builds the cache; the second maps it
        assert main(["report", str(folder / "triage.toml"), "--format", "json"]) == 0
        outs.append(capsys.readouterr().out)
    assert len(reads) == 1 and corpus_mod.cached_ids(folder / "chunks.parquet") is not None
    assert outs[0] == outs[1] and '"corpus.ids"' in outs[0]
