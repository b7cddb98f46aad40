"""`triage review export`: the regressions (or every flip) as one Markdown or HTML document.

The bundled sample's expectations are computed here from its files (not from triage); the
hostile evaluation holds every payload in every place data reaches the document.
"""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from triage.cli.main import main
from triage.core.views.hints import Hint, HintKind
from triage.labels.verdicts import Cause, Verdict, Verdicts
from triage.report.review.document import ending, opening
from triage.workspace.snapshot import Snapshot

from conftest import ROOT, manifest, write_parquet

SAMPLE = ROOT / "sample_runs"
REGRESSIONS = {"q155", "q113", "q061", "q150", "q031", "q046"}
K = 5


# -- the bundled sample, read independently ------------------------------------------------------
def sample_truth() -> tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]], dict[str, str]]:
    """(outcome per flipped query, A's lists, B's lists, query texts) from the sample's files."""
    labels = pq.read_table(SAMPLE / "labels.parquet").to_pylist()
    gold: dict[str, set[str]] = {}
    for r in labels:
        if (r["relevance"] if r["relevance"] is not None else 1) >= 1:
            gold.setdefault(r["query_id"], set()).add(r["chunk_id"])
    lists = []
    for name in ("plain", "headers"):
        rows = pq.read_table(SAMPLE / "runs" / f"{name}.parquet").to_pylist()
        lists.append({r["query_id"]: r["retrieved"] for r in rows})
    a, b = lists
    flips = {}
    for q, g in gold.items():
        hit_a, hit_b = bool(g & set(a.get(q, [])[:K])), bool(g & set(b.get(q, [])[:K]))
        if hit_a != hit_b:
            flips[q] = "hit→miss" if hit_a else "miss→hit"
    texts = {r["query_id"]: r["text"] for r in pq.read_table(SAMPLE / "queries.parquet").to_pylist()}
    return flips, a, b, texts


def md_escaped(s: str) -> str:
    """How the export must spell plain data in Markdown (written out here, not imported)."""
    return re.sub(r"([\\`*_\[\]<>#|~&$@])", r"\\\1", s)


def sections(doc: str) -> dict[str, str]:
    """The Markdown document's query sections by query id ("## 3. q155 · hit→miss")."""
    found = {}
    for part in re.split(r"^## ", doc, flags=re.M)[1:]:
        m = re.match(r"\d+\. (\S+) · ", part)
        if m:
            found[m.group(1)] = part
    return found


def export(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["review", "export", *args]) == 0
    return capsys.readouterr().out


def test_markdown_export_of_the_sample_holds_the_six_regressions_with_texts_and_top_k(capsys) -> None:
    flips, a, b, texts = sample_truth()
    assert {q for q, o in flips.items() if o == "hit→miss"} == REGRESSIONS
    doc = export(capsys)
    found = sections(doc)
    assert set(found) == REGRESSIONS
    for q, body in found.items():
        assert body.split("\n", 1)[0].endswith("· hit→miss")
        assert f"**Query:** {md_escaped(texts[q])}" in body
        for side, lists in (("A", a), ("B", b)):
            table = body.split(f"**{side} ")[1].split("\n\n", 2)[1].splitlines()[2:]
            ids = [row.split(" | ")[1] for row in table]
            assert ids == [md_escaped(c) for c in lists[q][:K]], (q, side)
    assert "| A hit | 118 | 6 |" in doc and "| A miss | 40 | 36 |" in doc
    assert "McNemar exact p = 3.1e-07" in doc
    assert "The 6 regressions (hit→miss) of 46 flips." in doc


@pytest.mark.slow
def test_all_holds_every_flip_regressions_first(capsys) -> None:
    flips, *_ = sample_truth()
    doc = export(capsys, "--all")
    order = list(sections(doc))
    assert len(order) == 46 and set(order) == set(flips)
    assert {flips[q] for q in order[:6]} == {"hit→miss"}
    assert {flips[q] for q in order[6:]} == {"miss→hit"}


@pytest.mark.slow
def test_the_label_state_is_the_reports(capsys) -> None:
    import json

    assert main(["report", "--format", "json"]) == 0
    state = json.loads(capsys.readouterr().out)["labels"]["state"]
    assert f"Labels: {state}." in export(capsys)


def test_gold_heading_path_and_opening_lines(capsys) -> None:
    chunks = {r["chunk_id"]: r for r in pq.read_table(SAMPLE / "chunks.parquet").to_pylist()}
    body = sections(export(capsys))["q155"]
    gold = chunks["borealis/handbook-2024#028"]
    assert f"Heading path: {md_escaped(gold['header'])}" in body
    assert f"> {md_escaped(gold['text'])}" in body  # a short body: whole, unmarked


def test_a_window_hint_shows_the_words_past_the_window(capsys) -> None:
    """q046's answer is its body's last line, past e5's window in B: the export quotes what was cut,
    as many words as the hint counts; a gold without a window hint gets no such block."""
    chunks = {r["chunk_id"]: r for r in pq.read_table(SAMPLE / "chunks.parquet").to_pylist()}
    found = sections(export(capsys))
    body = found["q046"]
    cut = int(re.search(r"the body's last \\?~(\d+) words were cut off", body).group(1))
    tail = " ".join(chunks["fjord/docs#019"]["text"].split()[-cut:])
    past = "Past the embedding window (cut off where the heading path is prepended):"
    assert f"{past}\n\n> {md_escaped(tail)}" in body
    assert not any("Past the embedding window" in found[q] for q in REGRESSIONS - {"q046"})


def test_ending_keeps_the_last_words_within_300_characters() -> None:
    assert ending("one two  three\nfour", 2) == "three four"
    assert ending("one two", 5) == "one two"
    assert ending("x" * 1_000_000, 1) == "…" + "x" * 300
    assert ending(None, 3) is None and ending("a b", 0) is None


def test_opening_keeps_three_lines_and_300_characters() -> None:
    assert opening("one\n\n  two  \nthree\nfour") == "one\ntwo\nthree…"
    assert opening("one\ntwo") == "one\ntwo"
    long = opening("x" * 1_000_000)
    assert long == "x" * 300 + "…"
    assert opening(None) is None


# -- writing a file ------------------------------------------------------------------------------
@pytest.mark.slow
def test_out_is_written_new_and_an_existing_one_is_refused_unless_force(tmp_path: Path, capsys) -> None:
    out = tmp_path / "review.md"
    assert main(["review", "export", str(out)]) == 0
    assert set(sections(out.read_text("utf-8"))) == REGRESSIONS
    out.write_text("mine", "utf-8")
    assert main(["review", "export", str(out)]) == 2
    assert "exists; not overwritten (--force replaces it)" in capsys.readouterr().err
    assert out.read_text("utf-8") == "mine"
    assert main(["review", "export", str(out), "--force"]) == 0
    assert out.read_text("utf-8").startswith("# triage review: plain → headers at k = 5")


@pytest.mark.slow
def test_html_is_chosen_by_the_suffix_and_markdown_by_default(tmp_path: Path) -> None:
    assert main(["review", "export", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    assert main(["review", "export", str(tmp_path / "r.htm"), "--format", "markdown"]) == 0
    assert (tmp_path / "r.htm").read_text("utf-8").startswith("# triage review")


@pytest.mark.parametrize("force", [False, True])
def test_out_refuses_a_symlink_even_with_force(tmp_path: Path, capsys, force: bool) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("keep", "utf-8")
    link = tmp_path / "review.md"
    link.symlink_to(target)
    assert main(["review", "export", str(link), *(["--force"] if force else [])]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert target.read_text("utf-8") == "keep" and link.is_symlink()


def copy_sample(tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(SAMPLE, tmp_path / "eval")
    return tmp_path / "eval"


@pytest.mark.parametrize("name", ["labels.parquet", "queries.parquet", "runs/headers.parquet", "triage.toml"])
def test_out_refuses_an_input_even_with_force(tmp_path: Path, capsys, name: str) -> None:
    folder = copy_sample(tmp_path)
    victim = folder / name
    before = victim.read_bytes()
    assert main(["review", "export", str(victim), str(folder), "--force"]) == 2
    assert "is an input of this evaluation" in capsys.readouterr().err
    assert victim.read_bytes() == before


def test_out_refuses_a_hard_link_to_the_frozen_labels(tmp_path: Path, capsys) -> None:
    folder = copy_sample(tmp_path)
    alias = tmp_path / "review.md"
    os.link(folder / "labels.parquet", alias)
    before = alias.read_bytes()
    assert main(["review", "export", str(alias), str(folder), "--force"]) == 2
    assert "is an input of this evaluation" in capsys.readouterr().err
    assert (folder / "labels.parquet").read_bytes() == before


def test_out_refuses_an_amendment_file(tmp_path: Path, capsys) -> None:
    folder = copy_sample(tmp_path)
    assert (
        main(
            [
                "labels",
                "judge",
                str(folder),
                "--query",
                "q150",
                "--chunk",
                "driftwood/handbook-2023#009",
                "--grade",
                "1",
            ]
        )
        == 0
    )
    (session,) = (folder / "labels.amendments").glob("*.jsonl")
    before = session.read_bytes()
    capsys.readouterr()
    assert main(["review", "export", str(session), str(folder), "--force"]) == 2
    assert session.read_bytes() == before


def test_a_folder_as_out_is_refused_with_the_way_to_stdout(tmp_path: Path, capsys) -> None:
    folder = copy_sample(tmp_path)
    assert main(["review", "export", str(folder)]) == 2
    assert "triage review export - FOLDER" in capsys.readouterr().err
    doc = export(capsys, "-", str(folder))  # '-' is standard output, then the evaluation
    assert set(sections(doc)) == REGRESSIONS


def test_help_names_the_review_verb(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "triage review export" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["review", "export", "--help"])
    out = capsys.readouterr().out
    for option in ("--format", "--all", "--force", "--k", "--label-state", "--labels"):
        assert option in out


# -- hostile data ----------------------------------------------------------------------------------
SCRIPT = "<script>alert(1)</script>"
PIPES = "| a | b |"
BOLD = "**bold**"
LINK = "[x](javascript:alert(1))"
ESC = "\x1b[2J"
ZWSP = "zero\u200bwidth"
MARKS = "q150\u061c\u3164\ufe0f\u00ad\u034f"  # an Arabic letter mark, a filler, a selector, …: invisible
PAYLOAD = f"{SCRIPT} {PIPES} {BOLD} {LINK} {ESC} {ZWSP} {MARKS} <img src=x onerror=alert(1)> &amp; `tick`"
INVISIBLE = "\u200b\u061c\u3164\ufe0f\u00ad\u034f"
# how it must read: ESC as ␛, each invisible mark as <U+XXXX>
SHOWN = "".join("␛" if c == "\x1b" else f"<U+{ord(c):04X}>" if c in INVISIBLE else c for c in PAYLOAD)
BIG = "1. " + "y" * 1_000_000  # a 1 MB gold body that starts like a list item


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """q1 hit→miss: its text, tenant, gold header and body, and a retrieved header hold payloads;
    the gold `g1` is 1 MB; B returned 2 ids (< k); q2 miss→hit with a short gold; a hint and a
    verdict carry payloads too. B retrieves `gone`, absent from the corpus: a warning check."""
    run = lambda lists, n: [  # noqa: E731
        {"query_id": q, "retrieved": ids, "plan": f"ann {PIPES}", "n_returned": n.get(q, len(ids))}
        for q, ids in lists.items()
    ]
    write_parquet(
        tmp_path / "a.parquet",
        run({"q1": ["g1", "c1", "c2"], "q2": ["c1", "c2", "x1", "x2", "x3", "g2"]}, {}),
    )
    write_parquet(tmp_path / "b.parquet", run({"q1": ["c1", "gone"], "q2": ["g2", "c1"]}, {"q1": 2}))
    write_parquet(
        tmp_path / "labels.parquet",
        [
            {"query_id": "q1", "chunk_id": "g1", "relevance": 2},
            {"query_id": "q1", "chunk_id": "c2", "relevance": 0},
            {"query_id": "q2", "chunk_id": "g2", "relevance": 1},
        ],
    )
    write_parquet(
        tmp_path / "queries.parquet",
        [
            {"query_id": "q1", "text": PAYLOAD + "\nsecond line", "tenant": PAYLOAD, "filter": None},
            {
                "query_id": "q2",
                "text": "see http://x.example, www.x.example",
                "tenant": "acme",
                "filter": "tenant = 'acme'",
            },
        ],
    )
    write_parquet(
        tmp_path / "chunks.parquet",
        [
            {"chunk_id": "g1", "header": "# " + PAYLOAD, "text": BIG},
            {"chunk_id": "g2", "header": "H2", "text": "> quoted\n- item\n" + PAYLOAD},
            {"chunk_id": "c1", "header": "- " + PAYLOAD, "text": "c1"},
            {"chunk_id": "c2", "header": "c2", "text": "c2"},
        ],
    )
    hint = Hint(HintKind.SHORT_LIST, "b", "B returned 2 of 5: " + PAYLOAD)
    monkeypatch.setattr(
        "triage.report.review.document.hints_for",
        lambda ev, qs, corpus: {q: (hint,) if q == 0 else () for q in qs},
    )
    verdict = Verdict("v1", "q1", Cause.OTHER, "note: " + PAYLOAD, "1. " + PAYLOAD, "2026-01-01T00:00:00Z")
    monkeypatch.setattr(Snapshot, "verdicts", property(lambda self: Verdicts({"q1": (verdict,)})))
    return manifest(
        tmp_path,
        "a.parquet",
        "b.parquet",
        "labels.parquet",
        k=5,
        corpus="chunks.parquet",
        queries="queries.parquet",
    )


RAW = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069{INVISIBLE}]")


class Parsed(HTMLParser):
    """Start tags, attributes and the text of an HTML document (entities resolved)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.rows: list[int] = []  # cells per table row

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th"):
            self.rows[-1] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Parsed:
    p = Parsed()
    p.feed(html)
    p.close()
    return p


def test_html_keeps_every_payload_literal(hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.html"
    assert main(["review", "export", str(out), str(hostile), "--all"]) == 0
    html = out.read_text("utf-8")
    assert not RAW.search(html.replace("\n", "")), "a raw control or invisible character"
    assert len(html) < 60_000, "the 1 MB chunk is capped"
    p = parse(html)
    assert {"script", "img", "a", "link", "iframe", "object", "form"}.isdisjoint(p.tags)
    assert {"strong", "table", "section", "style"} <= set(p.tags)  # the document's own structure
    assert not [v for k, v in p.attrs if k.startswith("on") or "javascript" in (v or "")]
    text = " ".join(p.text)
    assert text.count(SHOWN) >= 7  # query, tenant, gold header, c1's header, g2's body, hint, note
    assert "second line" in text and "␛[2J" in text and "zero<U+200B>width" in text
    assert "1. " + "y" * 297 + "…" in text and "y" * 298 not in text
    assert "B returned 2 of 5" in text and "1. " + SHOWN in text and "note: " + SHOWN in text
    assert "n_returned 2 < k = 5" in text
    assert "✗ judged not relevant" in text and "★2 gold" in text
    assert "corpus.retrieved" in text and "k.match" not in text  # checks not ok only
    assert "no hints" in text  # q2 has none
    assert "no verdict yet" in text  # q2 has none


def md_payload_escaped(doc: str) -> None:
    assert not RAW.search(doc.replace("\n", "")), "a raw control or invisible character"
    escaped = md_escaped(SHOWN)
    assert doc.count(escaped) >= 7
    assert not re.search(r"(?<!\\)<(script|img)", doc), "an unescaped tag"
    assert not re.search(r"(?<!\\)\[x(?<!\\)\]", doc), "an unescaped link"
    assert "\\*\\*bold\\*\\*" in doc and "\\| a \\| b \\|" in doc


def test_markdown_escapes_every_payload(hostile: Path, capsys) -> None:
    doc = export(capsys, "-", str(hostile), "--all")
    md_payload_escaped(doc)
    assert len(doc) < 60_000, "the 1 MB chunk is capped"
    assert "> 1\\. " + "y" * 297 + "…" in doc and "y" * 298 not in doc  # a leading "1." opens no list
    assert "> \\> quoted\\" in doc and "> \\- item\\" in doc  # nor a quote or list inside the quote
    assert "- 1\\. " + md_escaped(SHOWN) + ": other — note: " in doc
    assert "**Query:** see http\\://x.example, www\\.x.example" in doc  # no bare link on GitHub
    assert "| 2 | gone | (not in the corpus) | · unjudged |" in doc
    assert "n\\_returned 2 < k = 5" not in doc and "n\\_returned 2 \\< k = 5" in doc
    for line in doc.splitlines():  # a pipe from the data adds no column: every row of a table
        if line.startswith("|"):  # has its header's cells
            assert len(re.split(r"(?<!\\)\|", line)) in (4, 5, 6), line
    filters = [line for line in doc.splitlines() if line.startswith("| filter |")]
    assert filters == ["| filter | – |", "| filter | tenant = 'acme' |"]  # none drawn blank


@pytest.mark.slow
def test_markdown_renders_the_payloads_as_text(hostile: Path, capsys) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    doc = export(capsys, "-", str(hostile), "--all")
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(doc)
    p = parse(html)
    assert {"script", "img", "a", "em", "ol", "pre", "code"}.isdisjoint(p.tags)
    assert p.tags.count("h1") == 1  # only the title: a "# " header from the data is no heading
    assert p.tags.count("blockquote") == 2  # the two golds' openings, nothing nested from data
    text = "".join(p.text)
    assert text.count(SHOWN) >= 7
    tables = re.findall(r"<table>.*?</table>", html, re.S)
    for t in tables:
        widths = {len(re.findall(r"<t[dh]", row)) for row in re.findall(r"<tr>.*?</tr>", t, re.S)}
        assert len(widths) == 1, t


def test_without_a_corpus_chunk_text_is_said_unavailable(tmp_path: Path, capsys) -> None:
    write_parquet(tmp_path / "a.parquet", [{"query_id": "q1", "retrieved": ["g1"]}])
    write_parquet(tmp_path / "b.parquet", [{"query_id": "q1", "retrieved": ["x"]}])
    write_parquet(tmp_path / "labels.parquet", [{"query_id": "q1", "chunk_id": "g1", "relevance": 1}])
    m = manifest(tmp_path, "a.parquet", "b.parquet", "labels.parquet", k=1)
    doc = export(capsys, "-", str(m))
    assert "chunk text unavailable: the evaluation names no corpus" in doc
    assert list(sections(doc)) == ["q1"] and "Heading path" not in doc
    assert "| 1 | x | – | · unjudged |" in doc
    assert main(["review", "export", "-", str(m), "--format", "html"]) == 0
    assert "chunk text unavailable" in capsys.readouterr().out


def test_a_file_appearing_while_the_review_is_written_is_not_replaced(tmp_path: Path) -> None:
    from triage.core.errors import InputError
    from triage.core.files import write_new

    out = tmp_path / "review.md"

    def fill(f) -> None:  # type: ignore[no-untyped-def]
        f.write(b"review")
        out.write_text("theirs", "utf-8")  # another writer takes the name meanwhile

    with pytest.raises(InputError, match="exists; not overwritten"):
        write_new(out, fill, frozenset(), replace=False)
    assert out.read_text("utf-8") == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["review.md"]  # no temporary file left
