"""Reading aids: query words highlighted, the best-passage key, empty columns
hidden, short lists marked. Driven with Pilot on the bundled sample and on evaluations written here
with and without the cause (tenants, plans, short lists)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Static

from triage.ui.app import TriageApp
from triage.ui.literal import QUERY_WORD
from triage.ui.screens.chunk import ChunkScreen
from triage.ui.screens.detail import DetailScreen
from triage.ui.screens.lists import FlipsScreen
from triage.ui.screens.slices import TenantsScreen
from triage.ui.table import VirtualTable

from app_helpers import open_first_flip, wait_loaded
from conftest import frozen_evaluation, manifest, write_parquet

SIZE = (140, 45)
LIST_COLUMNS = ["#", "outcome", "query", "tenant", "gold A", "gold B", "plan A", "plan B", "text"]
FLIPS_COLUMNS = [*LIST_COLUMNS[:-1], "hint", "text"]  # the flips list adds each flip's first hint


def content_of(screen, selector: str) -> Content:
    shown = screen.query_one(selector, Static).render()
    assert isinstance(shown, Content)
    return shown


def marked_words(content: Content) -> list[str]:
    """The pieces of `content` drawn in the query-word style, lower-cased."""
    return [content.plain[s.start : s.end].lower() for s in content.spans if s.style == QUERY_WORD]


def titles(table: VirtualTable) -> list[str]:
    return [c.title for c in table.columns]


def row_text(table: VirtualTable, index: int) -> str:
    return str(table.render_line(index + 1).text)


def write_eval(folder: Path, tenants: str, plans: bool) -> Path:
    """Four queries at k = 3. q1 hit→miss: B's list is 2 ids long (no `n_returned` column: the
    stored depth says short); q3's list in A is 2 ids long too, gold first. q2 miss→hit, q3 both
    hit, q4 both miss. `tenants`: "none" (no tenant column), "null" (a tenant column, every value
    null) or "some"; `plans`: whether runs record a plan."""
    lists_a = {
        "q1": ["g1", "x1", "x2"],
        "q2": ["x3", "x4", "x5"],
        "q3": ["g3", "x6"],
        "q4": ["x8", "x9", "x1"],
    }
    lists_b = {
        "q1": ["x1", "x2"],
        "q2": ["g2", "x4", "x5"],
        "q3": ["x6", "g3", "x7"],
        "q4": ["x9", "x8", "x2"],
    }

    def run(lists: dict[str, list[str]], plan: str) -> list[dict]:
        rows = []
        for q, ids in lists.items():
            row: dict = {"query_id": q, "retrieved": ids, "scores": [float(9 - i) for i in range(len(ids))]}
            if plans:
                row["plan"] = plan
            rows.append(row)
        return rows

    write_parquet(folder / "a.parquet", run(lists_a, "scan"), {"k": "3", "name": "plain"})
    write_parquet(folder / "b.parquet", run(lists_b, "ann"), {"k": "3", "name": "headers"})
    gold = {"q1": "g1", "q2": "g2", "q3": "g3", "q4": "g4"}
    write_parquet(
        folder / "labels.parquet", [{"query_id": q, "chunk_id": c, "relevance": 1} for q, c in gold.items()]
    )
    queries = []
    for i, q in enumerate(gold):
        row = {"query_id": q, "text": f"how do I renew the {q} licence"}
        if tenants != "none":
            row["tenant"] = None if tenants == "null" else f"t{i % 2}"
        queries.append(row)
    write_parquet(folder / "queries.parquet", queries)
    chunks = [
        {"chunk_id": c, "header": "Guide > Licences", "text": f"To renew a licence, open {c}."}
        for c in gold.values()
    ]
    chunks += [
        {"chunk_id": f"x{i}", "header": "Guide > Other", "text": "Nothing here."} for i in range(1, 10)
    ]
    write_parquet(folder / "chunks.parquet", chunks)
    return manifest(
        folder,
        "a.parquet",
        "b.parquet",
        "labels.parquet",
        k=None,
        queries="queries.parquet",
        corpus="chunks.parquet",
    )


# -- 1. highlighting --------------------------------------------------------------------------


@pytest.mark.slow
async def test_query_words_are_marked_in_the_gold_pane_preview_and_chunk_text_but_stop_words_never() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        screen = await open_first_flip(pilot)  # q046: "how long after a deploy can I still roll back …"
        assert screen.detail.query_id == "q046"
        gold = content_of(screen, "#gold-text")
        assert "deploy" in marked_words(gold)  # "… checked again when a deploy starts."
        header = gold.plain.index("Fjord Deploy Reference") + len("Fjord ")
        assert any(s.start == header and s.style == QUERY_WORD for s in gold.spans)  # in the header too
        for stop in ("a", "the", "can", "when", "and"):
            assert stop not in marked_words(gold)
        assert {w.rstrip("s") for w in marked_words(gold)} <= {
            "deploy",
            "without",
            "long",
            "still",
            "roll",
            "back",
            "asked",
            "confirm",
        }
        preview = content_of(screen, "#preview")  # B #1 fjord/docs#006, roles and permissions
        assert set(marked_words(preview)) <= {"deploy", "without", "long", "still", "roll", "back"}
        await pilot.press("tab", "enter")  # the gold pane: open the gold in full
        chunk = app.screen
        assert isinstance(chunk, ChunkScreen)
        body = content_of(chunk, "#chunk-body")
        assert body.plain.endswith("maximum 240.")  # the whole body, not the pane's 600 characters
        words = marked_words(body)
        assert words.count("deploy") + words.count("deploys") >= 8 and "without" in words
        assert "a" not in words and "the" not in words
        # and the terminal draws them so: the segment for "without" is bold, "fjord" next to it is not
        strips = chunk.query_one("#chunk-body", Static).render_lines(Region(0, 0, 136, 40))
        styles = {seg.text.strip(): seg.style for strip in strips for seg in strip if seg.text.strip()}
        drawn = {t: s for t, s in styles.items() if "without" == t}
        assert drawn and all(s is not None and s.bold for s in drawn.values())
        plain_piece = next(t for t in styles if "rollback restores" in t)
        assert not (styles[plain_piece] and styles[plain_piece].bold)


@pytest.mark.slow
async def test_a_query_word_is_marked_where_it_is_shown_after_a_control_character(tmp_path: Path) -> None:
    """`visible` turns ESC into ␛ (same length) and U+200B into `<U+200B>` (longer): spans are found
    on the shown text, so the word marked is the word, not shifted."""
    path = write_eval(tmp_path, "some", True)
    chunks = [
        {
            "chunk_id": "g1",
            "header": "Guide",
            "text": "zero\u200bwidth\u200b then \x1b[31m renew here, renew.",
        },
        *[{"chunk_id": c, "header": "Guide", "text": "renew"} for c in ("g2", "g3", "g4")],
        *[{"chunk_id": f"x{i}", "header": "Guide", "text": "Nothing."} for i in range(1, 10)],
    ]
    write_parquet(tmp_path / "chunks.parquet", chunks)
    app = TriageApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        screen = await open_first_flip(pilot)
        assert screen.detail.query_id == "q1"
        gold = content_of(screen, "#gold-text")
        assert "<U+200B>" in gold.plain and "␛" in gold.plain
        assert marked_words(gold) == ["renew", "renew"]


# -- 2. the best passage ------------------------------------------------------------------------


@pytest.mark.slow
async def test_w_jumps_to_the_last_passage_of_q046s_gold_and_again_to_the_next_best() -> None:
    app = TriageApp()
    async with app.run_test(size=(100, 20)) as pilot:  # small: the gold's body must scroll
        await wait_loaded(pilot)
        await pilot.press("f", "enter", "tab", "enter")
        chunk = app.screen
        assert isinstance(chunk, ChunkScreen) and chunk.chunk_id == "fjord/docs#019"
        scroll = chunk.query_one("#chunk-scroll", VerticalScroll)
        body = chunk.query_one("#chunk-body", Static)
        assert scroll.scroll_y == 0 and chunk.current() is None
        assert not [s for s in content_of(chunk, "#chunk-body").spans if s.style != QUERY_WORD]
        n = len(chunk.found)
        assert n > 3

        def in_view() -> str:
            """The body's text inside the scroll's viewport, as the terminal draws it."""
            top = int(scroll.scroll_y) - body.virtual_region.y
            height = scroll.scrollable_content_region.height
            strips = body.render_lines(Region(0, max(0, top), body.size.width, height + min(0, top)))
            return " ".join(" ".join(strip.text for strip in strips).split())

        await pilot.press("w")
        p = chunk.current()
        assert p is not None and p.index == n - 1  # the last passage: the rollback_window line
        assert "rollback_window" in chunk.shown[p.start : p.end]
        assert scroll.scroll_y > 0 and "rollback_window" in in_view() and "maximum 240." in in_view()
        assert "Every key below" not in in_view()
        where = str(content_of(chunk, "#chunk-where"))
        assert f"passage {n} of {n} · 2 of 8 query words (deploy, without)" in where
        assert "best 1 of" in where
        shaded = [s for s in content_of(chunk, "#chunk-body").spans if s.style != QUERY_WORD]
        assert [(s.start, s.end) for s in shaded] == [(p.start, p.end)]
        last_y = scroll.scroll_y

        await pilot.press("w")  # next best: one query word; the first of those in the text
        q = chunk.current()
        assert q is not None and len(q.shared) == 1 and q.index == 0
        assert scroll.scroll_y < last_y and "Every key below" in in_view()  # passage 1 starts there
        assert "best 2 of" in str(content_of(chunk, "#chunk-where"))
        await pilot.press("W")  # back
        assert chunk.current() == p and scroll.scroll_y == last_y


@pytest.mark.slow
async def test_w_says_so_when_no_passage_shares_a_query_word(tmp_path: Path) -> None:
    path = write_eval(tmp_path, "some", True)
    write_parquet(
        tmp_path / "chunks.parquet",
        [
            {"chunk_id": c, "header": "H", "text": "Nothing about it.\n\nStill nothing."}
            for c in ("g1", "g2", "g3", "g4")
        ],
    )
    app = TriageApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f", "enter", "tab", "enter")
        chunk = app.screen
        assert isinstance(chunk, ChunkScreen) and chunk.chunk_id == "g1"
        assert "2 passages, 0 holding some of the 3 query words" in str(content_of(chunk, "#chunk-where"))
        await pilot.press("w")
        assert chunk.current() is None


# -- 3. empty columns hidden ----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tenants", "plans"), [("none", False), ("null", False), ("some", False), ("null", True)]
)
async def test_list_columns_empty_for_this_evaluation_are_hidden(
    tmp_path: Path, tenants: str, plans: bool
) -> None:
    app = TriageApp(write_eval(tmp_path, tenants, plans))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        table = app.screen.query_one(VirtualTable)
        expected = [
            c
            for c in FLIPS_COLUMNS
            if (c != "tenant" or tenants == "some") and (not c.startswith("plan") or plans)
        ]
        assert titles(table) == expected
        cells = table.cells(0)
        assert len(cells) == len(expected)
        assert cells[expected.index("query")] == "q1" and cells[expected.index("gold A")] == "1"
        if plans:
            assert cells[expected.index("plan A")] == "scan" and cells[expected.index("plan B")] == "ann"
        await pilot.press("escape", "a")
        assert titles(app.screen.query_one(VirtualTable)) == [c for c in expected if c != "hint"]


@pytest.mark.slow
async def test_the_sample_shows_every_list_column_and_the_tenants_plan_and_selectivity() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        assert titles(app.screen.query_one(VirtualTable)) == FLIPS_COLUMNS
        await pilot.press("t")
        assert isinstance(app.screen, TenantsScreen)
        table = app.screen.query_one(VirtualTable)
        assert "plan" in titles(table) and "sel." in titles(table)
        assert len(table.cells(0)) == len(table.columns)


@pytest.mark.slow
async def test_the_tenants_screen_hides_plan_and_selectivity_when_no_tenant_has_them(tmp_path: Path) -> None:
    app = TriageApp(write_eval(tmp_path, "some", False))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("t")
        table = app.screen.query_one(VirtualTable)
        assert "tenant" in titles(table) and "plan" not in titles(table) and "sel." not in titles(table)
        assert len(table.cells(0)) == len(table.columns)
        assert table.cells(0)[1] in ("t0", "t1")
        await pilot.press("b")  # the bars view has neither column anyway
        assert titles(table)[:3] == ["#", "tenant", "n"] and len(table.cells(0)) == len(table.columns)


# -- 4. short lists --------------------------------------------------------------------------------


@pytest.mark.slow
async def test_q031s_short_list_is_marked_in_the_list_and_the_detail() -> None:
    app = TriageApp()
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        flips = app.screen
        assert isinstance(flips, FlipsScreen)
        table = flips.query_one(VirtualTable)
        at = {table.cells(i)[2]: table.cells(i) for i in range(table.count)}
        assert at["q031"][4:6] == ["2", "– (3/5)"]  # A scanned, gold at 2; B returned 3 of 5
        assert all("(" not in row[5].replace("(>k)", "") for q, row in at.items() if q != "q031")
        row = next(i for i in range(table.count) if table.cells(i)[2] == "q031")
        assert "– (3/5)" in row_text(table, row)
        table.cursor = row
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.detail.query_id == "q031"
        b = str(content_of(screen, "#arm-b"))
        a = str(content_of(screen, "#arm-a"))
        assert "returned 3 of k = 5 · short list" in b and "short list" not in a


@pytest.mark.slow
async def test_a_list_shorter_than_k_without_n_returned_is_short_by_its_stored_depth(tmp_path: Path) -> None:
    app = TriageApp(write_eval(tmp_path, "none", False))
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("f")
        table = app.screen.query_one(VirtualTable)
        cells = {table.cells(i)[2]: table.cells(i) for i in range(table.count)}
        assert cells["q1"][3:5] == ["1", "– (2/3)"]
        assert cells["q2"][3:5] == ["absent", "1"]
        await pilot.press("enter")
        assert "returned 2 of k = 3 · short list" in str(content_of(app.screen, "#arm-b"))
        assert "short list" not in str(content_of(app.screen, "#arm-a"))
        await pilot.press("escape", "escape", "a")
        table = app.screen.query_one(VirtualTable)
        cells = {table.cells(i)[2]: table.cells(i) for i in range(table.count)}
        assert cells["q3"][3:5] == ["1 (2/3)", "2"]  # found, in a short list
        assert cells["q4"][3:5] == ["absent", "absent"]  # 3 ids each: a miss, not short


def test_arm_short_reads_n_returned_where_recorded_else_the_stored_depth(tmp_path: Path) -> None:
    path = write_eval(tmp_path, "none", False)
    rows = [
        {"query_id": "q1", "retrieved": ["x1", "x2"], "n_returned": 3},  # stored 2, returned 3 = k
        {"query_id": "q2", "retrieved": ["g2", "x4", "x5"], "n_returned": 1},  # returned 1 < k
        {"query_id": "q3", "retrieved": ["x6"], "n_returned": None},  # not recorded: depth 1 < k
    ]  # q4 absent from B: not short (it did not answer)
    write_parquet(tmp_path / "b.parquet", rows, {"k": "3", "name": "headers"})
    ev = frozen_evaluation(path)
    short = {ev.query_ids[i].as_py(): bool(s) for i, s in enumerate(ev.b.short)}
    assert short == {"q1": False, "q2": True, "q3": True, "q4": False}
    assert [ev.query_ids[i].as_py() for i in ev.a.short.nonzero()[0]] == ["q3"]  # A stored 2 ids
