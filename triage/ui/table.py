"""A virtual table: rows are produced on demand, so 100,000 of them paint as fast as ten.

Cells are plain strings and are never parsed as markup; every cell passes through `one_line`,
which makes control characters visible. Row colours come from component classes, so themes
(dark or light) style them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from triage.core.text.sanitize import one_line
from triage.report.columns import Column

PAGES = "move by a page, to the ends"
# A list's keys. A screen holding a list names them in its own BINDINGS too, where `?` lists them,
# with its `enter` (what opening a row does there): the focused table handles them, the screen
# (`LiveScreen`) passes them on to its table wherever the focus is.
LIST_KEYS = [
    Binding("j,down", "move(1)", "down", show=False, tooltip="move"),
    Binding("k,up", "move(-1)", "up", show=False, tooltip="move"),
    Binding(
        "pagedown,space",
        "page(1)",
        "page down",
        show=False,
        key_display="pgdn / pgup, home / end",
        tooltip=PAGES,
    ),
    Binding("pageup", "page(-1)", "page up", show=False, tooltip=PAGES),
    Binding("home", "jump(0)", "first", show=False, tooltip=PAGES),
    Binding("end", "jump(-1)", "last", show=False, tooltip=PAGES),
]


def opens(what: str) -> Binding:
    """A screen's `enter` on its list: `what` it opens."""
    return Binding("enter", "select", "open", show=False, tooltip=what)


RowFn = Callable[[int], Sequence[object]]
TagFn = Callable[[int], str | None]  # a component-class suffix for a row ("bad", "good", "gold", …)


class VirtualTable(ScrollView, can_focus=True):
    """Rows `0..count-1`, drawn by `row(i)`; a cursor moved with j/k, arrows and page keys."""

    BINDINGS: ClassVar[list[BindingType]] = [*LIST_KEYS, Binding("enter", "select", "open", show=False)]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "table--header",
        "table--cursor",
        "table--bad",
        "table--good",
        "table--gold",
        "table--suggest",
        "table--muted",
        "table--rule",
    }
    DEFAULT_CSS = """
    VirtualTable { background: $surface; height: 1fr; }
    VirtualTable > .table--header { text-style: bold; color: $text-accent; }
    VirtualTable > .table--cursor { background: $block-cursor-blurred-background; }
    VirtualTable:focus > .table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    VirtualTable > .table--bad { color: $text-error; }
    VirtualTable > .table--good { color: $text-success; }
    VirtualTable > .table--gold { color: $text-warning; text-style: bold; }
    VirtualTable > .table--suggest { color: $text-warning; text-style: italic; }
    VirtualTable > .table--muted { color: $text-muted; }
    VirtualTable > .table--rule { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0)

    @dataclass
    class Highlighted(Message):
        table: VirtualTable
        index: int

    @dataclass
    class Selected(Message):
        table: VirtualTable
        index: int

    def __init__(
        self, columns: Sequence[Column[Any]], *, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.columns: list[Column[Any]] = list(columns)
        self.count = 0
        self._row: RowFn = lambda i: ()
        self._tag: TagFn = lambda i: None
        self.rule_after: int | None = None  # draw a line under this row (the cut-off k)
        self._paint: tuple[int, Style, list[int]] | None = None  # (width, base style, widths) of a paint

    # -- data ----------------------------------------------------------------------------------
    def set_rows(
        self, count: int, row: RowFn, tag: TagFn | None = None, cursor: int = 0, announce: bool = True
    ) -> None:
        """Rows `0..count-1` drawn by `row`, the cursor at `cursor`; `announce`: post Highlighted
        for it (False: the caller draws what follows the cursor itself)."""
        self.count = count
        self._row = row
        self._tag = tag or (lambda i: None)
        self.virtual_size = Size(self._total_width(), count + 1)
        self.set_reactive(VirtualTable.cursor, max(0, min(cursor, count - 1)))
        self._show_cursor()
        self.refresh()
        if count and announce:
            self.post_message(self.Highlighted(self, self.cursor))

    def cells(self, i: int) -> list[str]:
        """Row `i`'s cells as it draws them, before they are fitted to the column widths."""
        return ["" if value is None else str(value) for value in self._row(i)]

    def _total_width(self) -> int:
        return sum(c.width + 1 for c in self.columns)

    # -- keys ----------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        if self.count:
            self.cursor = max(0, min(self.count - 1, self.cursor + step))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = where % self.count

    def action_select(self) -> None:
        if self.count:
            self.post_message(self.Selected(self, self.cursor))

    def watch_cursor(self, old: int, new: int) -> None:
        self._show_cursor()
        self.refresh()
        if self.count:
            self.post_message(self.Highlighted(self, new))

    def _show_cursor(self) -> None:
        visible = max(1, self.size.height - 1)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)

    def on_resize(self) -> None:
        self._show_cursor()

    def on_click(self, event) -> None:  # type: ignore[no-untyped-def]
        row = int(self.scroll_y) + event.y - 1
        if 0 <= row < self.count:
            self.cursor = row

    # -- drawing -------------------------------------------------------------------------------
    def _widths(self, width: int) -> list[int]:
        fixed = sum(c.width + 1 for c in self.columns if c.width)
        flexible = [c for c in self.columns if not c.width]
        rest = max(8 * len(flexible), width - fixed - len(flexible))
        shares = sum(c.share for c in flexible) or 1
        out = [c.width or max(1, rest * c.share // shares) for c in self.columns]
        if flexible:  # what rounding left over goes to the last flexible column
            last = max(i for i, c in enumerate(self.columns) if not c.width)
            out[last] += rest - sum(out[i] for i, c in enumerate(self.columns) if not c.width)
        return out

    def render_lines(self, crop: Region) -> list[Strip]:
        # The widget's style walks its ancestors (backgrounds): read once per paint, not per line.
        width = self.size.width
        self._paint = (width, self.rich_style, self._widths(width))
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def _line(self, cells: Sequence[object], width: int, style: Style) -> Strip:
        """One segment for the row (its cells share its style): each step after this one, from
        cropping to writing to the terminal, works per segment."""
        texts, length = [], 0
        widths = self._paint[2] if self._paint and self._paint[0] == width else self._widths(width)
        for col, w, value in zip(self.columns, widths, cells, strict=False):
            text = one_line("" if value is None else value, w)
            pad = w - cell_len(text)
            texts.append((" " * pad + text) if col.right and pad > 0 else set_cell_size(text, w))
            texts.append(" ")
            length += w + 1
        return Strip([Segment("".join(texts), style)], length).crop_extend(0, width, style)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._paint[1] if self._paint and self._paint[0] == width else self.rich_style
        if y == 0:
            header = base + self.get_component_rich_style("table--header")
            return self._line([c.title for c in self.columns], width, header)
        i = int(self.scroll_y) + y - 1
        if i >= self.count:
            return Strip.blank(width, base)
        style = base
        tag = self._tag(i)
        if tag:
            style += self.get_component_rich_style(f"table--{tag}")
        if i == self.cursor:
            style += self.get_component_rich_style("table--cursor")
        if self.rule_after is not None and i == self.rule_after:
            style += Style(underline=True)
        return self._line(self._row(i), width, style)
