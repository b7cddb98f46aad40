"""The corpus cache proves itself: whatever is done to its files, the report is the one a cache
never touched gives, or the corpus is read directly and one notice says so (core/inputs/corpus_cache.py)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from triage.cli.main import main
from triage.core import files
from triage.core.bundled import bundled
from triage.core.inputs import corpus as corpus_mod
from triage.core.inputs import corpus_cache as cache
from triage.core.inputs.corpus import open_corpus

NAMES = [*cache.SCHEMAS, cache.MANIFEST]


@pytest.fixture
def ev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled sample, its corpus opened through the cache (small as it is)."""
    out = tmp_path / "ev"
    shutil.copytree(bundled("sample_runs"), out)
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_mod, "SMALL", 0)
    return out


def report(capsys: pytest.CaptureFixture[str], ev: Path) -> tuple[int, str, str]:
    rc = main(["report", "--format", "json", str(ev / "triage.toml")])
    out, err = capsys.readouterr()
    return rc, out, err


def folder(ev: Path) -> Path:
    return cache.folder_of(cache.corpus_key(ev / "chunks.parquet"))


def flip(path: Path, at: float) -> None:
    data = bytearray(path.read_bytes())
    i = min(len(data) - 1, int(len(data) * at))
    data[i] ^= 0x5A
    path.unlink()  # a new file: a mapping a test still holds keeps the old bytes
    path.write_bytes(bytes(data))


def truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[: int(len(data) * keep)])


def a_foreign_cache(ev: Path, tmp_path: Path) -> Path:
    """The cache folder of another corpus with the same ids (its headers and texts changed)."""
    table = pq.read_table(ev / "chunks.parquet")
    other = tmp_path / "other" / "chunks.parquet"
    other.parent.mkdir()
    swapped = {n: table.column(n) for n in table.column_names}
    for name in ("header", "text"):
        if name in swapped:
            swapped[name] = pa.array([f"x{i} " * 40 for i in range(table.num_rows)])
    pq.write_table(pa.table(swapped), other)
    open_corpus(other, small=0)
    return cache.folder_of(cache.corpus_key(other))


DAMAGE = {
    "truncated": lambda p, tmp: truncate(p, 0.5),
    "emptied": lambda p, tmp: truncate(p, 0.0),
    "a byte flipped at the start": lambda p, tmp: flip(p, 0.01),
    "a byte flipped in the middle": lambda p, tmp: flip(p, 0.5),
    "a byte flipped at the end": lambda p, tmp: flip(p, 0.999),
    "removed": lambda p, tmp: p.unlink(),
    "a folder": lambda p, tmp: (p.unlink(), p.mkdir()),
    "a link to a copy": lambda p, tmp: (
        shutil.copyfile(p, tmp / p.name),
        p.unlink(),
        p.symlink_to(tmp / p.name),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("how", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_cache_file_never_changes_the_report(ev, tmp_path, capsys, name, how) -> None:
    rc, before, _ = report(capsys, ev)
    assert rc == 0 and json.loads(before)["checks"]
    DAMAGE[how](folder(ev) / name, tmp_path)
    for _ in range(2):  # this run, and the next: nothing damaged persists
        again, after, err = report(capsys, ev)
        assert (again, after) == (0, before)
    if how != "a folder":  # built again, and proved
        assert cache.open_verified(ev / "chunks.parquet") is not None


@pytest.mark.slow
@pytest.mark.parametrize("planted", [[n] for n in cache.SCHEMAS] + [list(cache.SCHEMAS), NAMES])
def test_another_corpus_s_cache_files_planted_are_never_used(ev, tmp_path, capsys, planted) -> None:
    rc, before, _ = report(capsys, ev)
    other = a_foreign_cache(ev, tmp_path)
    for name in planted:
        (folder(ev) / name).unlink()
        shutil.copyfile(other / name, folder(ev) / name)
    assert report(capsys, ev)[:2] == (0, before)
    assert report(capsys, ev)[:2] == (0, before)


@pytest.mark.slow
def test_a_cache_of_another_format_is_never_read(ev, capsys) -> None:
    rc, before, _ = report(capsys, ev)
    manifest = folder(ev) / cache.MANIFEST
    body = json.loads(manifest.read_bytes())
    manifest.write_text(json.dumps({**body, "format": cache.FORMAT + 1}))
    assert cache.open_verified(ev / "chunks.parquet") is None
    assert report(capsys, ev)[:2] == (0, before)


def test_the_key_is_what_the_corpus_is(ev, tmp_path) -> None:
    """A copy of the corpus elsewhere shares its cache; a corpus rewritten gets another."""
    corpus = ev / "chunks.parquet"
    key = cache.corpus_key(corpus)
    copy = tmp_path / "copy.parquet"
    shutil.copy2(corpus, copy)
    assert cache.corpus_key(copy) == key
    table = pq.read_table(corpus)
    pq.write_table(table.slice(0, table.num_rows - 1), copy)
    os.utime(copy, ns=(os.stat(corpus).st_atime_ns, os.stat(corpus).st_mtime_ns))
    assert cache.corpus_key(copy) != key  # same mtime, another footer


def unwritable_root(ev: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "a file":
        (tmp_path / "root").write_text("not a folder")
        monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "root"))
        return
    code = {"read-only": errno.EROFS, "full": errno.ENOSPC, "no permission": errno.EACCES}[how]
    real = files.write_new

    def failing(path, fill, protected, replace=True):  # type: ignore[no-untyped-def]
        if path.suffix == ".arrow" or path.name == cache.MANIFEST:
            raise OSError(code, os.strerror(code), str(path))
        return real(path, fill, protected, replace)

    monkeypatch.setattr(cache, "write_new", failing)
    monkeypatch.setattr(cache, "write_bytes", lambda p, *a, **k: failing(p, None, None))


@pytest.mark.slow
@pytest.mark.parametrize("how", ["a file", "read-only", "full", "no permission"])
def test_a_cache_that_cannot_be_written_reads_the_corpus_directly(ev, tmp_path, capsys, monkeypatch, how):
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "fresh"))
    rc, before, _ = report(capsys, ev)
    shutil.rmtree(tmp_path / "fresh")
    unwritable_root(ev, tmp_path, monkeypatch, how)
    again, after, err = report(capsys, ev)
    assert (again, after) == (0, before)  # every check and number the same
    notices = [line for line in err.splitlines() if line.startswith("triage: notice:")]
    assert len(notices) == 1 and "read directly" in notices[0], err
    if how != "a file":
        assert not list((tmp_path / "fresh").rglob("*.arrow"))  # nothing half-written left


def test_the_corpus_itself_broken_is_named_not_read_past(ev, capsys) -> None:
    """A repeated chunk id is the corpus's fault, not the cache's: exit 2 naming the corpus."""
    table = pq.read_table(ev / "chunks.parquet")
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), ev / "chunks.parquet")
    rc, out, err = report(capsys, ev)
    assert rc == 2 and "chunks.parquet" in err and "Traceback" not in err


# -- any single corruption ----------------------------------------------------------------------


def _corpus(folder: Path, n: int = 60) -> Path:
    path = folder / "chunks.parquet"
    pq.write_table(
        pa.table(
            {
                "chunk_id": [f"d{i // 4}#{i}" for i in range(n)],
                "header": [f"Doc {i} > Part {i % 3}" if i % 7 else None for i in range(n)],
                "text": [f"text {i} " * (1 + i % 5) for i in range(n)],
            }
        ),
        path,
        row_group_size=16,
    )
    return path


def _view(corpus: corpus_mod.Corpus, ids: list[str]) -> tuple[object, ...]:
    rows = corpus.rows_of(pa.array(ids))
    return corpus.get(ids), rows.tolist(), corpus.header_tokens(np.maximum(rows, 0)).tolist()


CORRUPTION = st.one_of(
    st.tuples(st.just("flip"), st.sampled_from(NAMES), st.floats(0, 1), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.sampled_from(NAMES), st.floats(0, 0.999), st.just(0)),
    st.tuples(st.just("swap"), st.sampled_from(NAMES), st.sampled_from(NAMES), st.just(0)),
    st.tuples(st.just("plant"), st.sampled_from(NAMES), st.just(0.0), st.just(0)),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corruption=CORRUPTION)
def test_any_single_corruption_of_the_cache_gives_the_same_chunks(monkeypatch, corruption) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        monkeypatch.setenv("TRIAGE_CACHE", str(root / "cache"))
        path = _corpus(root)
        ids = [f"d{i // 4}#{i}" for i in range(60)] + ["absent"]
        want = _view(open_corpus(path), ids)  # in memory
        assert _view(open_corpus(path, small=0), ids) == want  # built
        where = cache.folder_of(cache.corpus_key(path))
        kind, name, x, y = corruption
        target = where / name
        if kind == "flip":
            data = bytearray(target.read_bytes())
            data[min(len(data) - 1, int(x * len(data)))] ^= y
            target.unlink()
            target.write_bytes(bytes(data))
        elif kind == "truncate":
            data = target.read_bytes()
            target.unlink()
            target.write_bytes(data[: int(x * len(data))])
        elif kind == "swap":
            other = where / x
            data, theirs = target.read_bytes(), other.read_bytes()
            target.unlink()
            other.unlink(missing_ok=True)
            target.write_bytes(theirs)
            other.write_bytes(data)
        else:  # another corpus's file under that name
            (root / "q").mkdir()
            q = _corpus(root / "q", 59)
            open_corpus(q, small=0)
            target.unlink()
            shutil.copyfile(cache.folder_of(cache.corpus_key(q)) / name, target)
        assert _view(open_corpus(path, small=0), ids) == want
        assert _view(open_corpus(path, small=0), ids) == want  # and the next time
