"""Showing new content at the cost of what changed: one layout, and only when a size changes.

`Static.update` repaints the widget and asks for a layout of the whole screen every time, even
with the content it already shows; `redraw` does neither when nothing changed and lays out only
when the height may change. A layout re-arranges every widget of the screen, and Textual follows
one that resized a widget with a second (`OneLayout` answers that one is enough; it overrides a
private method of Textual's, so it lives in `triage.ui.internals`).
"""

from __future__ import annotations

from typing import cast

from textual.content import Content
from textual.css.styles import RulesMap
from textual.visual import Visual
from textual.widgets import Static

from triage.ui.internals import OneLayout

__all__ = ["OneLayout", "redraw", "resizes"]


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
