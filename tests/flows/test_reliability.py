"""Nothing lost, nothing forged, nothing silently wrong: a catalogue of malformed inputs, each a real
file in a copy of the bundled sample (exit 2, nothing on stdout, the file, the place and the problem
named, no traceback; the tolerated ones read right), and the frozen label file planted as a link at
every name triage writes (refused, the frozen file untouched)."""

from __future__ import annotations

import gzip
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.bundled import bundled
from triage.core.inputs.corpus import open_corpus
from triage.core.inputs.corpus_cache import corpus_key, folder_of
from triage.core.inputs.frozen import sha256_file
from triage.core.inputs.manifest import from_manifest
from triage.labels.records import ADD
from triage.labels.writer import FrozenFileChanged, Writer
from triage.workspace.session import Session
from triage.workspace.snapshot import open_snapshot

RUN, LABELS, QUERIES, CORPUS = "runs/headers.parquet", "labels.parquet", "queries.parquet", "chunks.parquet"
B_HIT, A_HIT, N_SCORED = 0.79, 0.62, 200  # the sample's numbers (README: the bundled sample)
Make = Callable[[Path], list[str]]  # writes the bad file into the copy; the arguments after `report`
Lines = Callable[[list[str]], list[str]]
KEEP: Lines = lambda ls: ls  # noqa: E731
NAN, INF, BOM = float("nan"), float("inf"), b"\xef\xbb\xbf"
LFS = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n"


# -- building bad files --------------------------------------------------------------------------
def retarget(ev: Path, old: str, new: str) -> None:
    text = (ev / "triage.toml").read_text()
    assert f'"{old}"' in text
    (ev / "triage.toml").write_text(text.replace(f'"{old}"', f'"{new}"'))


def rows(ev: Path, rel: str) -> list[dict]:
    return pq.read_table(ev / rel).to_pylist()


def meta(ev: Path, rel: str) -> dict[str, str]:
    raw = pq.read_schema(ev / rel).metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items() if not k.startswith(b"ARROW")}


def parquet(rel: str, change: Callable[[list[dict]], list[dict]], schema: pa.Schema | None = None) -> Make:
    """`rel` rewritten as Parquet with its rows changed, its metadata kept."""

    def make(ev: Path) -> list[str]:
        kept = {k.encode(): v.encode() for k, v in meta(ev, rel).items()}
        table = pa.Table.from_pylist(change(rows(ev, rel)), schema=schema).replace_schema_metadata(kept)
        pq.write_table(table, ev / rel)
        return [str(ev)]

    return make


def row(i: int, **changes: object) -> Callable[[list[dict]], list[dict]]:
    return lambda rs: [dict(r, **changes) if n == i else r for n, r in enumerate(rs)]


def col(**change: Callable[[object], object]) -> Callable[[list[dict]], list[dict]]:
    return lambda rs: [dict(r, **{k: f(r[k]) for k, f in change.items()}) for r in rs]


def text(rel: str, new: str, build: Callable[[list[str]], bytes]) -> Make:
    """`rel`'s rows as JSON lines, turned into bytes by `build`, written at `new`; the manifest points
    there, a run's metadata goes to a sidecar."""

    def make(ev: Path) -> list[str]:
        (ev / new).write_bytes(build([json.dumps(r) for r in rows(ev, rel)]))
        if rel.startswith("runs/"):
            (ev / (new + ".meta.json")).write_text(json.dumps(meta(ev, rel)))
        retarget(ev, rel, new)
        return [str(ev)]

    return make


def jl(rel: str, edit: Lines = KEEP, nl: str = "\n", bom: bytes = b"") -> Make:
    new = rel.rsplit(".", 1)[0] + ".jsonl"
    return text(rel, new, lambda ls: bom + "".join(x + nl for x in edit(ls)).encode())


def line(i: int, new: str) -> Lines:
    return lambda ls: [new if n == i else x for n, x in enumerate(ls)]


def field(i: int, **changes: object) -> Lines:
    """Line `i`'s object with `changes` (json.dumps writes NaN, Infinity and \\ud800 as given)."""
    return lambda ls: [json.dumps(dict(json.loads(x), **changes)) if n == i else x for n, x in enumerate(ls)]


def trec(kind: str, edit: Lines = KEEP, nl: str = "\n", bom: bytes = b"") -> Make:
    def make(ev: Path) -> list[str]:
        if kind == "run":
            rel, new = RUN, "runs/headers.run"
            lines = [
                f"{r['query_id']} Q0 {c} {i + 1} {s} headers"
                for r in rows(ev, RUN)
                for i, (c, s) in enumerate(zip(r["retrieved"], r["scores"], strict=True))
            ]
            (ev / (new + ".meta.json")).write_text(json.dumps(meta(ev, RUN)))
        else:
            rel, new = LABELS, "labels.qrels"
            lines = [f"{r['query_id']} 0 {r['chunk_id']} {r['relevance']}" for r in rows(ev, LABELS)]
        (ev / new).write_bytes(bom + "".join(x + nl for x in edit(lines)).encode())
        retarget(ev, rel, new)
        return [str(ev)]

    return make


def raw(rel: str, change: Callable[[bytes], bytes]) -> Make:
    def make(ev: Path) -> list[str]:
        (ev / rel).write_bytes(change((ev / rel).read_bytes()))
        return [str(ev)]

    return make


def toml(change: Callable[[str], str]) -> Make:
    return raw("triage.toml", lambda b: change(b.decode()).encode())


def write(rel: str, data: str | bytes, *extra: str) -> Make:
    def make(ev: Path) -> list[str]:
        (ev / rel).write_bytes(data.encode() if isinstance(data, str) else data)
        return [str(ev), *(x.format(ev=ev) for x in extra)]

    return make


def sidecar(data: str | bytes) -> Make:
    return write(RUN + ".meta.json", data)


def gate(floors: str) -> Make:
    return write("floors.toml", floors, "--gate", "{ev}/floors.toml")


def special(kind: str) -> Make:
    def make(ev: Path) -> list[str]:
        if kind == "fifo":
            os.mkfifo(ev / "runs/pipe.parquet")
        retarget(ev, RUN, {"fifo": "runs/pipe.parquet", "device": "/dev/zero", "folder": "runs"}[kind])
        return [str(ev)]

    return make


def then(*makers: Make) -> Make:
    return lambda ev: [m(ev) for m in makers][-1]


def args(*extra: str) -> Make:
    return lambda ev: [str(ev), *extra]


def integer_ids(ev: Path) -> list[str]:
    """Every query id an integer (q007 -> 7) in the runs and queries; the labels spell it as text."""
    for rel in ("runs/plain.parquet", RUN, QUERIES):
        parquet(rel, col(query_id=lambda q: int(q[1:])))(ev)
    return parquet(LABELS, col(query_id=lambda q: str(int(q[1:]))))(ev)


def not_utf8(rel: str, name: str, i: int) -> Make:
    """Row `i` of a Parquet string column holding a byte that is not UTF-8 (Arrow does not check)."""

    def make(ev: Path) -> list[str]:
        table = pq.read_table(ev / rel)
        values = [v.encode() for v in table.column(name).to_pylist()]
        values[i] = b"q\xff" + values[i]
        bad = pa.array(values, pa.binary()).view(pa.string())
        pq.write_table(table.set_column(table.column_names.index(name), name, bad), ev / rel)
        return [str(ev)]

    return make


def not_utf8_listed(rel: str, name: str, i: int) -> Make:
    """Row `i` of a Parquet column of id lists holding, in its last id, a byte that is not UTF-8."""

    def make(ev: Path) -> list[str]:
        table = pq.read_table(ev / rel)
        lists = [[v.encode() for v in vs] for vs in table.column(name).to_pylist()]
        lists[i][-1] += b"\xe9"
        raw = pa.array(lists, pa.list_(pa.binary()))
        bad = pa.ListArray.from_arrays(raw.offsets, raw.flatten().view(pa.string()))
        pq.write_table(table.set_column(table.column_names.index(name), name, bad), ev / rel)
        return [str(ev)]

    return make


def run_k(k: str) -> Make:
    def make(ev: Path) -> list[str]:
        table = pq.read_table(ev / RUN)
        pq.write_table(table.replace_schema_metadata({**table.schema.metadata, b"k": k.encode()}), ev / RUN)
        return [str(ev)]

    return make


def deep(n: int = 100_000) -> str:
    return '{"query_id": "q001", "x": ' + "[" * n + "]" * n + "}"


def zero_rows(rel: str) -> Make:
    return parquet(rel, lambda rs: [], pq.read_schema(bundled("sample_runs") / rel))


# -- the catalogue -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    name: str
    make: Make
    file: str | None  # the file's name in the message (None: an argument, or a case that must succeed)
    place: str | None  # "row N" (Parquet), "line N" (text), "[section]" (TOML), None: the whole file
    words: tuple[str, ...] = ()
    process: bool = False  # also run as a real process

    @property
    def succeeds(self) -> bool:
        return self.file is None and not self.words


def bad(name: str, make: Make, file: str | None, place: str | None, *words: str, p: bool = False) -> Case:
    return Case(name, make, file, place, words, p)


def good(name: str, make: Make) -> Case:
    return Case(name, make, None, None)


H, HJ, HR, HM = "headers.parquet", "headers.jsonl", "headers.run", "headers.parquet.meta.json"
HJZ = "runs/headers.jsonl.gz"
LJ, LQ, TOML = "labels.jsonl", "labels.qrels", "triage.toml"
U64 = pa.schema([("query_id", pa.string()), ("chunk_id", pa.string()), ("relevance", pa.uint64())])
# fmt: off
CASES = [
    # runs, Parquet
    bad("run truncated", raw(RUN, lambda b: b[: len(b) // 2]), H, None, "cannot read Parquet", p=True),
    bad("run empty", raw(RUN, lambda b: b""), H, None, "empty (0 bytes)"),
    bad("run LFS pointer", raw(RUN, lambda b: LFS), H, None, "Git LFS pointer"),
    good("run gzip bytes", raw(RUN, gzip.compress)),  # compressed Parquet under a plain name: read
    bad("run NaN score", parquet(RUN, row(3, scores=[NAN] * 20)), H, "row 4", "NaN or an infinite"),
    bad("run inf score", parquet(RUN, row(6, scores=[INF] * 20)), H, "row 7", "NaN or an infinite"),
    bad("run float ids", parquet(RUN, col(query_id=lambda q: float(q[1:]))), H, None, "'query_id'", "double"),
    bad("run bool ids", parquet(RUN, col(query_id=lambda q: q < "q100")), H, None, "'query_id'", "bool"),
    bad("run null in list", parquet(RUN, row(9, retrieved=["a", None])), H, "row 10", "null"),
    bad("run null list", parquet(RUN, row(4, retrieved=None, scores=None)), H, "row 5", "'retrieved' is"),
    bad("run duplicate query", parquet(RUN, lambda rs: [*rs, rs[1]]), H, "row 201", "'q002'", p=True),
    bad("run scores length", parquet(RUN, row(11, scores=[1.0])), H, "row 12", "1 scores for 20 retrieved"),
    bad("run n_returned 1e30", parquet(RUN, row(2, n_returned=1e30)), H, "row 3", "'n_returned' is 1e+30"),
    bad("run n_eligible -1", parquet(RUN, row(5, n_eligible=-1)), H, "row 6", "'n_eligible' is -1"),
    bad("run zero rows", zero_rows(RUN), H, None, "holds no rows"),
    bad("run float list", parquet(RUN, col(retrieved=lambda ids: [1.5])), H, None, "list of ids"),
    bad("run not UTF-8 id", not_utf8(RUN, "query_id", 7), H, "row 8", "'query_id'", "not UTF-8", p=True),
    bad("run not UTF-8 listed", not_utf8_listed(RUN, "retrieved", 5), H, "row 6", "'retrieved'", "UTF-8"),
    bad("run metadata k = 0", run_k("0"), H, None, "metadata k = 0"),
    bad("run metadata k = x", run_k("five"), H, None, "metadata k = 'five' is not an integer"),
    # runs, JSON Lines
    good("run jsonl BOM", jl(RUN, bom=BOM)),
    good("run jsonl CRLF", jl(RUN, nl="\r\n")),
    good("integer ids", integer_ids),
    bad("run jsonl not UTF-8", text(RUN, "runs/headers.jsonl", lambda ls: "\n".join(ls).encode()
                                    .replace(b"q004", b"q\xe904")), HJ, "line 4", "not UTF-8", "0xe9"),
    bad("run jsonl xz", text(RUN, "runs/headers.jsonl", lambda ls: lzma.compress(b"{}")), HJ, None,
        "xz-compressed", p=True),
    good("run jsonl gzipped", text(RUN, HJZ, lambda ls: gzip.compress("\n".join(ls).encode()))),
    bad("run jsonl .gz not gzip", text(RUN, HJZ, lambda ls: "\n".join(ls).encode()), HJZ, None,
        "named .gz but holds bytes that are not compressed", p=True),
    bad("run jsonl gzip truncated", text(RUN, HJZ, lambda ls: gzip.compress("\n".join(ls).encode())[:-30]),
        HJZ, None, "cannot decompress"),
    bad("run jsonl NaN", jl(RUN, field(2, scores=[NAN] * 20)), HJ, "line 3", "NaN"),
    bad("run jsonl Infinity", jl(RUN, field(4, latency_ms=-INF)), HJ, "line 5", "Infinity"),
    bad("run jsonl key twice", jl(RUN, line(0, '{"query_id": "q1", "query_id": "q2"}')), HJ, "line 1",
        "'query_id' appears twice"),
    bad("run jsonl surrogate", jl(RUN, field(5, query_id="q\ud800")), HJ, "line 6", "lone surrogate", p=True),
    bad("run jsonl 100k deep", jl(RUN, line(7, deep())), HJ, "line 8", "nested too deeply", p=True),
    bad("run jsonl n_returned 10**30", jl(RUN, field(8, n_returned=10**30)), HJ, "line 9", "'n_returned'"),
    bad("run jsonl float id", jl(RUN, field(1, query_id=2.0)), HJ, "line 2", "'query_id'"),
    bad("run jsonl bool id", jl(RUN, field(1, query_id=True)), HJ, "line 2", "'query_id'"),
    bad("run jsonl null in list", jl(RUN, field(3, retrieved=["a", None])), HJ, "line 4", "null"),
    bad("run jsonl scores length", jl(RUN, field(9, scores=[1.0])), HJ, "line 10", "1 scores for 20"),
    bad("run jsonl duplicate", jl(RUN, lambda ls: [*ls, ls[0]]), HJ, "line 201", "query_id 'q001'"),
    bad("run jsonl truncated", jl(RUN, lambda ls: [*ls[:-1], ls[-1][:20]]), HJ, "line 200", "not valid JSON"),
    bad("run jsonl no records", text(RUN, "runs/headers.jsonl", lambda ls: b"\n \n"), HJ, None, "no records"),
    bad("run jsonl an array", jl(RUN, line(0, '["q001"]')), HJ, "line 1", "expected a JSON object"),
    # runs, TREC
    good("run trec CRLF and BOM", trec("run", nl="\r\n", bom=BOM)),
    bad("run trec 5 fields", trec("run", line(3, "q001 Q0 x 4 1.0")), HR, "line 4", "expected 6 fields"),
    bad("run trec nan score", trec("run", line(0, "q001 Q0 x 1 nan h")), HR, "line 1", "not finite"),
    bad("run trec rank 1.5", trec("run", line(1, "q001 Q0 x 1.5 2.0 h")), HR, "line 2", "not numbers"),
    # labels
    # a negative grade is read (trec_eval's "pooled, unjudged"): tests/flows/test_trec_eval_files.py
    bad("labels uint64 max", parquet(LABELS, row(2, relevance=2**64 - 1), U64), LABELS, "row 3", "2^53"),
    bad("labels 1e20", parquet(LABELS, row(6, relevance=1e20)), LABELS, "row 7", "'relevance' is 1e+20"),
    bad("labels null chunk", parquet(LABELS, row(3, chunk_id=None)), LABELS, "row 4", "'chunk_id' is empty"),
    bad("labels float ids", parquet(LABELS, col(chunk_id=lambda c: 1.0)), LABELS, None, "double"),
    bad("labels LFS pointer", raw(LABELS, lambda b: LFS), LABELS, None, "Git LFS pointer", p=True),
    bad("labels jsonl 10**20", jl(LABELS, field(5, relevance=10**20)), LJ, "line 6", "'relevance' is 1e+20"),
    bad("labels jsonl 1.5", jl(LABELS, field(1, relevance=1.5)), LJ, "line 2", "1.5"),
    good("labels qrels CRLF and BOM", trec("qrels", nl="\r\n", bom=BOM)),
    bad("qrels 3 fields", trec("qrels", line(2, "q001 0 c")), LQ, "line 3", "expected 4 fields"),
    bad("qrels relevance x", trec("qrels", line(3, "q001 0 c x")), LQ, "line 4", "not an integer"),
    bad("qrels 10**20", trec("qrels", line(5, f"q001 0 c {10**20}")), LQ, "line 6", "1e+20", p=True),
    bad("qrels not UTF-8", then(trec("qrels"), raw(LQ, lambda b: b.replace(b"\nq", b"\n\xff", 2))), LQ,
        "line 2", "not UTF-8"),
    # queries and corpus
    bad("queries duplicate", parquet(QUERIES, lambda rs: [*rs[:10], rs[3], *rs[10:]]), QUERIES, "row 11",
        "query_id 'q004'"),
    bad("queries zero rows", zero_rows(QUERIES), QUERIES, None, "holds no rows"),
    bad("queries NaN selectivity", parquet(QUERIES, row(8, selectivity=NAN)), QUERIES, "row 9", "finite"),
    bad("queries not UTF-8", not_utf8(QUERIES, "text", 12), QUERIES, "row 13", "'text'", "not UTF-8"),
    bad("queries surrogate", jl(QUERIES, field(2, text="\udc00")), "queries.jsonl", "line 3", "surrogate"),
    bad("corpus duplicate", parquet(CORPUS, lambda rs: [*rs, rs[17]]), CORPUS, "row 726", "chunk_id"),
    good("corpus gzip", raw(CORPUS, gzip.compress)),
    bad("corpus gzip not Parquet", raw(CORPUS, lambda b: gzip.compress(b[4:])), CORPUS, None,
        "not a Parquet file"),
    bad("corpus not UTF-8", not_utf8(CORPUS, "chunk_id", 30), CORPUS, "row 31", "not UTF-8"),
    # manifest
    bad("manifest unknown key", toml(lambda t: t.replace("[corpus]", "[corpus]\nparth = 1")), TOML,
        "[corpus]", "unknown key 'parth'"),
    bad("manifest k = 0", toml(lambda t: "k = 0\n" + t), TOML, None, "k must be a positive integer, found 0"),
    bad("manifest k = -1", toml(lambda t: "k = -1\n" + t), TOML, None, "positive integer, found -1"),
    bad("manifest k = '5'", toml(lambda t: 'k = "5"\n' + t), TOML, None, "positive integer, found '5'"),
    bad("manifest missing file", then(lambda ev: retarget(ev, QUERIES, "no.parquet"), args()), TOML,
        "[queries]", "missing file"),
    bad("manifest not UTF-8", raw(TOML, lambda b: b.replace(b"plain", b"pl\xe9in")), TOML, None, "TOML"),
    bad("manifest 100k deep", toml(lambda t: f"x = {'[' * 10**5}{']' * 10**5}\n" + t), TOML, None,
        "nested too deeply"),
    good("manifest BOM and CRLF", raw(TOML, lambda b: BOM + b.replace(b"\n", b"\r\n"))),
    bad("a FIFO as a run", special("fifo"), "pipe.parquet", None, "FIFO", p=True),
    bad("/dev/zero as a run", special("device"), "/dev/zero", None, "a device", p=True),
    # a folder is read as one run of Parquet shards: three whole runs in it repeat each query
    bad("a folder as a run", special("folder"), "runs", None, "duplicate query_id 'q001' (headers.parq"),
    bad("a missing file", lambda ev: [str(ev / "nowhere")], "nowhere", None, "does not exist"),
    # the run's sidecar
    bad("sidecar not JSON", sidecar("{k: 5}"), HM, None, "not a valid JSON object"),
    bad("sidecar key twice", sidecar('{"k": 5, "k": 6}'), HM, None, "'k' appears twice"),
    bad("sidecar NaN", sidecar('{"chunker": NaN}'), HM, None, "NaN"),
    bad("sidecar k = 5.5", sidecar('{"k": 5.5}'), H, None, "metadata k", "5.5"),
    bad("sidecar a list", sidecar("[5]"), HM, None, "expected one JSON object"),
    bad("sidecar 100k deep", sidecar('{"x": ' + "[" * 10**5 + "]" * 10**5 + "}"), HM, None, "too deeply"),
    bad("sidecar not UTF-8", sidecar(b'{"name": "h\xe9"}'), HM, None, "0xe9"),
    bad("sidecar surrogate", sidecar('{"name": "\\ud800"}'), HM, None, "lone surrogate", p=True),
    good("sidecar BOM", sidecar(BOM + b'{"k": 5}')),
    # the gate file
    bad("gate absent slice", gate('[floors]\n"tenant:acme-legl" = 0.99\n'), "floors.toml", "[floors]",
        "'tenant:acme-legl' names no slice", p=True),
    bad("gate floor 1.5", gate("[floors]\noverall = 1.5\n"), "floors.toml", "[floors]", "between 0 and 1"),
    bad("gate floor -0.1", gate('[floors]\n"tenant:*" = -0.1\n'), "floors.toml", "[floors]", "between 0"),
    bad("gate floor nan", gate("[floors]\noverall = nan\n"), "floors.toml", "[floors]", "between 0 and 1"),
    bad("gate floor text", gate('[floors]\noverall = "0.9"\n'), "floors.toml", "[floors]", "between 0"),
    bad("gate no floors", gate("overall = 0.9\n"), "floors.toml", None, "needs a [floors] table"),
    bad("gate unknown key", gate('[floors]\n"region:eu" = 0.5\n'), "floors.toml", None, "unknown floor"),
    # arguments
    bad("--k 0", args("--k", "0"), None, None, "--k", "not positive"),
    bad("--k -1", args("--k", "-1"), None, None, "--k", "not positive"),
    bad("--k 1.5", args("--k", "1.5"), None, None, "--k", "not a whole number", p=True),
    bad("--floor nan", args("--floor", "nan"), None, None, "--floor", "between 0 and 1"),
    bad("--floor 2", args("--floor", "2"), None, None, "--floor", "between 0 and 1"),
]
# fmt: on


@pytest.fixture
def ev(tmp_path: Path) -> Path:
    out = tmp_path / "ev"
    shutil.copytree(bundled("sample_runs"), out)
    return out


def judge(case: Case, rc: int, out: str, err: str) -> None:
    assert "Traceback" not in err, err
    if case.succeeds:  # and read right: the sample's numbers
        assert rc == 0, err
        d = json.loads(out)
        assert (d["n_scored"], d["arms"]["b"]["hit_rate"], d["arms"]["a"]["hit_rate"]) == (
            N_SCORED,
            B_HIT,
            A_HIT,
        )
        return
    assert (rc, out) == (2, ""), err
    for needle in (case.file, case.place, *case.words):
        if needle is not None:
            assert needle in err, f"{needle!r} not in {err!r}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_malformed_input_is_named(case: Case, ev: Path, capsys) -> None:
    argv = case.make(ev)
    try:
        rc = main(["report", *argv, "--format", "json"])
    except SystemExit as e:  # argparse refusing an argument
        rc = int(e.code or 0)
    out = capsys.readouterr()
    judge(case, rc, out.out, out.err)


PROCESS = [c for c in CASES if c.process]


@pytest.mark.slow
@pytest.mark.parametrize("case", PROCESS, ids=[c.name for c in PROCESS])
def test_no_traceback_reaches_a_real_process(case: Case, ev: Path) -> None:
    argv = [sys.executable, "-m", "triage", "report", *case.make(ev), "--format", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    judge(case, done.returncode, done.stdout, done.stderr)


def test_the_catalogue_is_wide() -> None:
    assert len({c.name for c in CASES}) == len(CASES) >= 40
    assert sum(c.succeeds for c in CASES) >= 6 and len(PROCESS) >= 10


# -- the frozen file planted at every name triage writes ----------------------------------------
HOW = ["symlink", "hardlink"]
Q150 = ("q150", "driftwood/handbook-2023#009")  # the sample's likely-also-gold passage


def plant(at: Path, target: Path, how: str) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    if how == "symlink":
        at.symlink_to(target)
    else:
        os.link(target, at)


def fingerprint(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return rc, out.out, out.err


@pytest.mark.slow
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize(
    "planted, out", [("X.parquet", "X.parquet"), ("v2.qrels", "v2.qrels"), ("v2.qrels.meta.json", "v2.qrels")]
)
def test_an_export_onto_the_frozen_file_is_refused(
    ev: Path, capsys, how: str, planted: str, out: str
) -> None:
    frozen = ev / LABELS
    before, names = fingerprint(frozen), sorted(os.listdir(ev))
    plant(ev / planted, frozen, how)
    assert cli(capsys, "labels", "verify", str(ev))[0] == 0
    rc, stdout, err = cli(capsys, "labels", "export", str(ev), "--out", str(ev / out))
    assert (rc, stdout) == (2, "") and f"{planted}: is " in err and "never" in err
    assert fingerprint(frozen) == before
    assert sorted(os.listdir(ev)) == sorted([*names, planted])  # neither name written, no temp file left


@pytest.mark.slow
@pytest.mark.parametrize("how", HOW)
def test_an_amendments_folder_that_is_the_frozen_file(ev: Path, capsys, how: str) -> None:
    frozen = ev / LABELS
    before = fingerprint(frozen)
    plant(ev / "labels.amendments", frozen, how)
    for argv in (
        ["report", str(ev), "--format", "json"],
        ["labels", "log", str(ev)],
        ["labels", "export", str(ev), "--out", str(ev / "v2.parquet")],
    ):
        assert cli(capsys, *argv)[0] == 0, argv
    rc, out, _ = cli(capsys, "labels", "verify", str(ev))
    assert rc == 1 and "labels.amendments: not a folder" in out  # said before anyone amends
    rc, out, _ = cli(capsys, "report", str(ev), "--format", "json")
    assert any(c["code"] == "labels.amendments_folder" for c in json.loads(out)["checks"])
    assert pq.read_table(ev / "v2.parquet").num_rows == pq.read_table(frozen).num_rows
    session = Session(open_snapshot(from_manifest(ev)), reviewer="ana")
    change = session.add(*Q150)
    assert not change.saved and "frozen label file" in change.error
    assert session.unsaved == 1 and session.labels.unsaved[0].query_id == "q150"  # kept, in memory
    assert fingerprint(frozen) == before
    assert (ev / "labels.amendments").is_symlink() == (how == "symlink") and not (
        ev / "labels.amendments"
    ).is_dir()


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("target", [LABELS, RUN])
def test_a_session_file_linked_to_an_input_is_refused(ev: Path, how: str, target: str) -> None:
    frozen, name = ev / LABELS, "ana@host.20260101T000000Z-0a1b2c.jsonl"
    before, run_before = fingerprint(frozen), fingerprint(ev / RUN)
    plant(ev / "labels.amendments" / name, ev / target, how)
    spec = from_manifest(ev)
    writer = Writer(ev / "labels.amendments", frozen, sha256_file(frozen), "ana", name, spec.inputs())
    with pytest.raises((FrozenFileChanged, OSError)):
        writer.append(writer.new_record(ADD, *Q150))
    assert fingerprint(frozen) == before and fingerprint(ev / RUN) == run_before


CACHE_NAMES = [
    ("chunks.arrow",),
    ("index.arrow",),
    ("tokens.arrow",),
    ("table.arrow",),
    ("slot_rows.arrow",),
    ("chunks.arrow", "index.arrow", "tokens.arrow", "table.arrow", "slot_rows.arrow"),
]


@pytest.mark.slow
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("names", CACHE_NAMES, ids=["+".join(n) for n in CACHE_NAMES])
def test_corpus_cache_names_linked_to_the_frozen_file(ev, tmp_path, monkeypatch, how, names) -> None:
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    frozen = ev / LABELS
    before, folder = fingerprint(frozen), folder_of(corpus_key(ev / CORPUS))
    for n in names:
        plant(folder / n, frozen, how)
    corpus = open_corpus(ev / CORPUS, small=0)
    # rebuilt over the planted names (a link removed, never followed): plain files, none the frozen one
    assert len(corpus) == 725 and corpus.get(["driftwood/handbook-2023#009"]) and corpus.notice is None
    for n in ("chunks.arrow", "index.arrow", "tokens.arrow", "table.arrow", "slot_rows.arrow"):
        assert not (folder / n).is_symlink() and not os.path.samefile(folder / n, frozen)
    assert fingerprint(frozen) == before


@pytest.mark.parametrize("how", HOW)
def test_a_planted_cache_folder_with_its_manifest_is_never_used(ev, tmp_path, monkeypatch, how) -> None:
    """Every cache name, the manifest's too, planted as the frozen file: none proves itself, so
    the cache is built again and the frozen file is never written."""
    monkeypatch.setenv("TRIAGE_CACHE", str(tmp_path / "cache"))
    folder, before = folder_of(corpus_key(ev / CORPUS)), fingerprint(ev / LABELS)
    for n in (*CACHE_NAMES[-1], "manifest.json"):
        plant(folder / n, ev / LABELS, how)
    corpus = open_corpus(ev / CORPUS, small=0)
    assert len(corpus) == 725 and corpus.get(["driftwood/handbook-2023#009"])
    assert fingerprint(ev / LABELS) == before
