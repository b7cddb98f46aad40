"""Showing new content at the cost of what changed: one layout, and only when a size changes.

`Static.update` repaints the widget and asks for a layout of the whole screen every time, even
with the content it already shows; `redraw` does neither when nothing changed and lays out only
when the height may change. A layout re-arranges every widget of the screen, and Textual follows
one that resized a widget with a second (`OneLayout` answers that one is enough).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Size
from textual.visual import Visual
from textual.widget import Widget
from textual.widgets import Static


def redraw(widget: Static, content: Content) -> bool:
    """Show `content` in `widget`; False, doing nothing, when it shows exactly that already (text
    and styles). The screen is laid out again only when the widget's size may change."""
    old = widget.visual
    if isinstance(old, Content) and old.is_same(content):
        return False
    widget.update(content, layout=resizes(widget, old, content))
    return True


def resizes(widget: Static, old: Visual, new: Content) -> bool:
    """Whether showing `new` instead of `old` may change the widget's size: its width follows its
    content, or its height does and the lines at its width differ in number."""
    styles = widget.styles
    if styles.width is not None and styles.width.is_auto:
        return True
    if styles.height is not None and not styles.height.is_auto:
        return False  # cells or fr: the content has no say
    width = widget.size.width
    if not width or not isinstance(old, Content):
        return True  # not laid out yet, or not comparable
    rules = cast(RulesMap, styles)  # read with .get, as Textual's own content height does
    return old.get_height(rules, width) != new.get_height(rules, width)


# A mixin, not a Widget subclass: Textual's CSS type names (`Static`, `VirtualTable`) follow a
# class's first DOMNode base, so the widget class it is mixed into must come next.
if TYPE_CHECKING:
    _Mixin = Widget
else:
    _Mixin = object


class OneLayout(_Mixin):
    """A widget that needs one layout per change, not two: Textual answers a layout that gave a
    widget a new size or scrollable size by asking for another layout of the whole screen (and a
    repaint of the widget). The first one already placed it at that size, so the second changes
    nothing and costs a detail key a second layout and paint. Its scroll bars still follow (a
    scroll bar that comes or goes asks for its own layout), and it still gets a Resize event."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)
