"""`triage report --format html`: one self-contained page (inline CSS and SVG, no script, a
Content-Security-Policy), whose figures are the JSON report's, whose data text is never markup,
and which a real browser draws (headless Chromium, when installed)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import struct
import subprocess
import zlib
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from test_review_export import PAYLOAD, RAW, SHOWN, hostile  # noqa: F401  (hostile: a fixture)

from triage.cli.main import main

from conftest import write_evaluation

CHROMIUM = Path("/usr/bin/chromium")
SECTIONS = ("summary", "checks", "measures", "paired", "charts", "flips", "tenants")
CHARTS = ("chart-ranks", "chart-delta", "chart-tenants")


class Page(HTMLParser):
    """The page read back: tags, attributes, text, each section's table rows (cell texts), and each
    chart's <title>, <desc> and shapes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.rows: dict[str, list[list[str]]] = {}
        self.charts: dict[str, dict[str, object]] = {}
        self.meta: list[dict[str, str | None]] = []
        self._section = ""
        self._chart = ""
        self._in: list[str] = []  # open elements whose text is collected: td/th, title, desc
        self._shapes: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        a = dict(attrs)
        if tag == "meta":
            self.meta.append(a)
        if tag == "section":
            self._section = a.get("id") or ""
        if tag == "svg":
            self._chart = a.get("id") or ""
            self.charts[self._chart] = {"attrs": a, "title": "", "desc": "", "shapes": []}
        if tag == "tr":
            self.rows.setdefault(self._section, []).append([])
        if tag in ("td", "th"):
            self.rows[self._section][-1].append("")
        if tag in ("rect", "circle"):
            self.charts[self._chart]["shapes"].append({"tag": tag, **a, "tip": ""})
        self._in.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._in.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            while self._in.pop() != tag:
                pass
        if tag == "svg":
            self._chart = ""

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        inside = self._in[-1] if self._in else ""
        if inside in ("td", "th") and self._section in self.rows:
            self.rows[self._section][-1][-1] += data
        elif inside in ("title", "desc") and self._chart:
            chart = self.charts[self._chart]
            if len(self._in) >= 2 and self._in[-2] in ("rect", "circle"):
                chart["shapes"][-1]["tip"] += data
            else:
                chart[inside] += data


def read(html: str) -> Page:
    p = Page()
    p.feed(html)
    p.close()
    return p


def report(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["report", *args]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def sample_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    """The bundled sample's page and its JSON report (amendments read from an empty data folder)."""
    pages = []
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TRIAGE_DATA", str(tmp_path_factory.mktemp("data")))
        for fmt in ("html", "json"):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["report", "--format", fmt]) == 0
            pages.append(out.getvalue())
    return pages[0], json.loads(pages[1])


# -- the sample's page ---------------------------------------------------------------------------


def test_the_page_has_every_section_and_three_charts(sample_page: tuple[str, dict]) -> None:
    html, _ = sample_page
    p = read(html)
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>\n")
    ids = [v for k, v in p.attrs if k == "id"]
    assert all(s in ids for s in SECTIONS), ids
    assert html.count("<svg") == 3 and tuple(p.charts) == CHARTS
    for ident, chart in p.charts.items():
        attrs = chart["attrs"]
        assert attrs["role"] == "img" and attrs["aria-labelledby"] == f"{ident}-title {ident}-desc"
        assert chart["title"] and len(str(chart["desc"])) > 40 and re.search(r"\d", str(chart["desc"]))
        assert chart["shapes"], ident
    text = " ".join(p.text)
    for axis in ("gold rank A − B", "queries", "Δ hit@5", "hit rate", "tenant (scored queries)"):
        assert axis in text
    flips = p.rows["flips"][1:]
    directions = [row[3] for row in flips]
    assert directions == sorted(directions, key=lambda d: d != "hit→miss")  # hit→miss first
    assert directions.count("hit→miss") == 6 and len(flips) == 6 + 25  # miss→hit capped at 25


def test_no_script_no_external_resource_and_the_csp(sample_page: tuple[str, dict]) -> None:
    html, _ = sample_page
    p = read(html)
    assert "script" not in p.tags and "<script" not in html.lower()
    assert not [k for k, _ in p.attrs if k.startswith("on")]
    assert not re.search(r"https?:|//|url\(|@import|src=|href=", html, re.I)
    assert {"img", "link", "iframe", "object", "embed", "a", "form"}.isdisjoint(p.tags)
    csp = [m["content"] for m in p.meta if (m.get("http-equiv") or "").lower() == "content-security-policy"]
    assert len(csp) == 1 and csp[0] is not None
    policy = dict(part.strip().split(" ", 1) for part in csp[0].split(";"))
    assert policy["default-src"] == "'none'" and policy["img-src"] == "'none'"
    assert "script-src" not in policy  # so default-src 'none' forbids every script


def test_the_pages_figures_are_the_json_reports(sample_page: tuple[str, dict]) -> None:
    html, r = sample_page
    p = read(html)
    a, b, paired = r["arms"]["a"], r["arms"]["b"], r["paired"]
    metrics = {row[0]: row[1:] for row in p.rows["measures"]}
    for name in ("hit_rate", "recall", "mrr", "ndcg"):
        assert metrics[f"{name}@5"][:2] == [f"{a[name]:.3f}", f"{b[name]:.3f}"]
    cells = p.rows["paired"]
    assert cells[1] == ["A hit", str(paired["both_hit"]), str(paired["a_hit_b_miss"])]
    assert cells[2] == ["A miss", str(paired["a_miss_b_hit"]), str(paired["both_miss"])]
    shown_p = float(re.search(r"McNemar exact p = ([0-9.e+-]+);", " ".join(p.text)).group(1))
    assert shown_p == pytest.approx(paired["mcnemar_p"], rel=0.02)
    # the rank histogram: one bar per change, each as tall as its count says
    changes = {int(c): n for c, n in r["ranks"]["histogram"]["changes"].items()}
    bars = {}
    for s in p.charts["chart-ranks"]["shapes"]:
        m = re.fullmatch(r"change ([+-]\d+): (\d+) quer(y|ies)", s["tip"])
        if m:
            bars[int(m.group(1))] = (int(m.group(2)), float(s["height"]))
    assert {c: n for c, (n, _) in bars.items() if n} == changes
    unit = {round(h / n, 3) for n, h in bars.values() if n}
    assert max(unit) - min(unit) < 0.05, unit  # heights proportional to the counts
    # the per-query differences: the paired cells, one run each, widths proportional
    desc = str(p.charts["chart-delta"]["desc"])
    same = paired["both_hit"] + paired["both_miss"]
    assert f"{paired['n']} scored queries: {paired['a_hit_b_miss']} at −1" in desc
    assert f"{same} at 0, {paired['a_miss_b_hit']} at +1" in desc
    runs = [s for s in p.charts["chart-delta"]["shapes"] if s["tag"] == "rect"]
    widths = [float(s["width"]) for s in runs]
    counts = [paired["a_hit_b_miss"], same, paired["a_miss_b_hit"]]
    assert [round(w / widths[1] * counts[1]) for w in widths] == counts
    # the tenants: each drawn where its hit rate is, on one linear scale
    rows = r["tenants"]["rows"][:25]
    dots = [s for s in p.charts["chart-tenants"]["shapes"] if s["tag"] == "circle" and ": B " in s["tip"]]
    assert [d["tip"] for d in dots] == [f"{t['tenant']}: B {t['hit_rate_b']:.3f}" for t in rows]
    xs = np.array([float(d["cx"]) for d in dots])
    rates = np.array([t["hit_rate_b"] for t in rows])
    slope, intercept = np.polyfit(rates, xs, 1)
    assert slope > 100 and np.abs(slope * rates + intercept - xs).max() < 0.2
    tenants_desc = str(p.charts["chart-tenants"]["desc"])
    for t in rows:
        said = f"{t['tenant']} (n {t['n']}): B {t['hit_rate_b']:.3f} [{t['wilson_low_b']:.3f}, "
        assert said in tenants_desc


def test_without_tenants_or_rank_changes_the_page_says_so(tmp_path: Path, capsys) -> None:
    """No queries file (no tenants) and golds retrieved by one arm only (no rank change): the
    page keeps its sections, draws the one chart it can, and says what it cannot draw and which
    input would fill the tenants."""
    rows_a = [{"query_id": "q1", "retrieved": ["g1", "x"]}, {"query_id": "q2", "retrieved": ["x", "y"]}]
    rows_b = [{"query_id": "q1", "retrieved": ["x", "y"]}, {"query_id": "q2", "retrieved": ["g2", "x"]}]
    labels = [
        {"query_id": "q1", "chunk_id": "g1", "relevance": 1},
        {"query_id": "q2", "chunk_id": "g2", "relevance": 1},
    ]
    html = report(capsys, str(write_evaluation(tmp_path, rows_a, rows_b, labels)), "--format", "html")
    p = read(html)
    assert tuple(p.charts) == ("chart-delta",)
    assert "Tenants: no <code>tenant</code> column in the runs or the queries file" in html  # in place of it
    assert "no scored query has a gold id in both stored lists" in " ".join(p.text)
    assert "2 scored queries: 1 at −1 (hit→miss), 0 at 0, 1 at +1 (miss→hit)" in str(
        p.charts["chart-delta"]["desc"]
    )
    assert [row[2] for row in p.rows["flips"][1:]] == ["hit→miss", "miss→hit"]  # no text column: none given
    assert "Query text: none given" in html


# -- hostile text --------------------------------------------------------------------------------


def test_hostile_text_is_escaped_and_never_markup(hostile: Path, capsys) -> None:  # noqa: F811
    toml = hostile.read_text("utf-8")
    for side in ("a", "b"):  # the arms' names carry the payload too
        toml = toml.replace(f'name = "{side}"', f"name = {json.dumps(side.upper() + ' ' + PAYLOAD)}")
    hostile.write_text(toml, "utf-8")
    html = report(capsys, str(hostile), "--format", "html")
    assert not RAW.search(html.replace("\n", "")), "a raw control or invisible character"
    p = read(html)
    assert {"script", "img", "a", "link", "iframe", "object", "form"}.isdisjoint(p.tags)
    assert not [v for k, v in p.attrs if k.startswith("on") or "javascript" in (v or "")]
    assert html.count("<svg") == 3 and "<script" not in html and "<img" not in html
    text = " ".join(p.text)
    # the arms in the heading, the title, the summary and the measures' head; the tenant in the
    # flips, the tenants table and the tenants chart's description
    assert text.count(SHOWN) >= 9, text.count(SHOWN)
    assert "␛[2J" in text and "zero<U+200B>width" in text
    tenants = p.rows["tenants"]
    assert all(len(row) == len(tenants[0]) for row in tenants)  # a pipe or tag adds no cell
    assert any(row[1] == SHOWN for row in tenants)
    names = [s for s in p.charts["chart-tenants"]["shapes"] if s["tag"] == "circle"]
    assert any(s["tip"].startswith(PAYLOAD[:23] + "…") for s in names)  # cut, still text


# -- a real browser --------------------------------------------------------------------------------


def png_pixels(data: bytes) -> np.ndarray:
    """An 8-bit RGB(A), non-interlaced PNG as an (h, w, 3) array: a small decoder (zlib, the five
    row filters)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, [], b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        head = body if kind == b"IHDR" else head
        idat += [body] if kind == b"IDAT" else []
        pos += 12 + n
    w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", head)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), np.uint8)
    prev = np.zeros(w * bpp, np.uint8)
    for y in range(h):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            out[y] = line
        elif kind == 1:  # sub: a running sum along the row, per channel
            out[y] = (np.cumsum(line.reshape(w, bpp), axis=0, dtype=np.int64) % 256).ravel()
        elif kind == 2:
            out[y] = line + prev
        else:
            out[y] = np.frombuffer(_unfilter(int(kind), line.tobytes(), prev.tobytes(), bpp), np.uint8)
        prev = out[y]
    return out.reshape(h, w, bpp)[:, :, :3]


def _unfilter(kind: int, line: bytes, up: bytes, bpp: int) -> bytes:
    """The average (3) and Paeth (4) filters, which run along the row."""
    cur = bytearray(line)
    for i in range(len(cur)):
        a = cur[i - bpp] if i >= bpp else 0
        b = up[i]
        if kind == 3:
            cur[i] = (cur[i] + ((a + b) >> 1)) & 255
            continue
        c = up[i - bpp] if i >= bpp else 0
        pa, pb = abs(b - c), abs(a - c)
        pc = abs(b - c + a - c)
        cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return bytes(cur)


def test_png_decoder_reads_each_filter() -> None:
    """The decoder against an image written here with every filter type."""
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    rows, prev = [], np.zeros(12, np.int64)
    for y, kind in enumerate(range(5)):
        x, left = img[y].ravel().astype(np.int64), np.zeros(12, np.int64)
        left[3:] = x[:-3]
        upleft = np.zeros(12, np.int64)
        upleft[3:] = prev[:-3]
        pa, pb, pc = np.abs(prev - upleft), np.abs(left - upleft), np.abs(prev + left - 2 * upleft)
        paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
        pred = [0, left, prev, (left + prev) // 2, paeth][kind]
        rows.append(bytes([kind]) + ((x - pred) % 256).astype(np.uint8).tobytes())
        prev = x
    chunk = lambda kind, body: struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"  # noqa: E731
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 5, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b"")
    assert (png_pixels(png) == img).all()


def colour(hex_: str) -> tuple[int, int, int]:
    return int(hex_[1:3], 16), int(hex_[3:5], 16), int(hex_[5:7], 16)


@pytest.mark.slow  # a browser process: 5-10 s
@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")
def test_chromium_draws_the_page_and_its_charts(sample_page: tuple[str, dict], tmp_path: Path) -> None:
    from triage.report import svg

    page, shot = tmp_path / "report.html", tmp_path / "out.png"
    page.write_text(sample_page[0], "utf-8")
    profile = tmp_path / "profile"
    profile.mkdir()
    args = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--screenshot={shot}",
        "--window-size=1280,4000",
        page.as_uri(),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert shot.exists(), done.stderr[-2000:]
    data = shot.read_bytes()
    assert len(data) > 50_000  # a blank page of this size compresses to a few kilobytes
    px = png_pixels(data)
    assert px.shape == (4000, 1280, 3)
    flat = px.reshape(-1, 3)
    assert len(np.unique(flat[::7], axis=0)) > 50  # text, tables and charts: many colours
    drawn = {c: int((px == colour(c)).all(axis=2).sum()) for c in (svg.FELL, svg.ROSE, svg.TRACK, svg.B_DOT)}
    assert all(n > 100 for n in drawn.values()), drawn  # the charts' bars, intervals and dots
    shutil.rmtree(profile, ignore_errors=True)


def test_the_page_and_the_markdown_carry_the_same_sections(
    sample_page: tuple[str, dict], tmp_path: Path
) -> None:
    """Every heading of the Markdown report, section or table title, is on the page, in order; the
    page adds only its charts."""
    html, _ = sample_page
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as env, contextlib.redirect_stdout(out):
        env.setenv("TRIAGE_DATA", str(tmp_path))
        assert main(["report", "--format", "markdown"]) == 0
    md = [
        line[3:] if line.startswith("## ") else line[2:-2]
        for line in out.getvalue().splitlines()
        if line.startswith("## ")
        or (line.startswith("**") and line.endswith("**") and line[2:-2].count("**") == 0)
    ]
    md = [h.replace("\\", "") for h in md if not h.startswith("Quote the real figure")]
    page = [unescape(h) for h in re.findall(r"<h[23]>(.*?)</h[23]>", html) if h != "Charts"]
    assert page == md and len(md) >= 20
    for needle in ("Per query, B against A", "Rank drops", "What the change cost", "By plan"):
        assert any(h.startswith(needle) for h in page), needle
