"""Every place the app leans on Textual's internals, in one module.

Textual's public API offers none of these; each buys speed on a detail key or the footer (docs/benchmarks.md,
"Benchmarks"). pyproject.toml bounds Textual to the major version tested, and `tests/app/test_internals.py`
checks every item below on the installed Textual: the private names exist with the shape used,
and the behaviour each relies on still holds. A Textual upgrade that changes one breaks that test,
not the app. Nowhere else in `triage.ui` touches a private name of Textual's (the test checks that
too).

1. `prompt_frames` -- `Screen._update_timer` (a property: the screen's paint timer) and its
   `Timer._skip` (set from `Timer(skip=True)`, read by `Timer._run`), set to False.
   Why: the paint timer pauses after each frame; after a frame longer than its period (~15 ms
   for a detail key) it skips to the period after the next, so a key typed just then waits idle
   17-33 ms before it is painted. Not skipping, a timer behind its schedule ticks as soon as it is
   resumed; one that keeps up still ticks on schedule, and a tick still paints a whole batch.
   If it changes: a renamed `_update_timer` raises AttributeError when the app mounts; a renamed
   or unread `_skip` is silently ignored and keys wait a frame period again.

2. `OneLayout._size_updated` -- overrides `Widget._size_updated(size, virtual_size,
   container_size, layout=True) -> bool` (and `ScrollView`'s) and always passes `layout=False`.
   Why: when a layout gives a widget a new size or virtual size, Textual sets its `virtual_size`
   reactive, which asks for a second layout of the whole screen that moves nothing (a detail key
   then pays two layouts and paints). With `layout=False` the size is stored without one; the
   widget still gets its Resize event (the method's True) and its scroll bars still follow.
   If it changes: a renamed method is no longer called (two layouts per key again, silently); a
   changed signature raises TypeError on the first layout of a detail screen.

3. `Keys` -- a `Footer` that overrides `Footer.bindings_changed(screen)` (subscribed by name to
   `screen.bindings_updated_signal` in `Footer.on_mount`), sets the private reactive
   `Footer._bindings_ready` (`Footer.compose` yields nothing until it is True), and reads
   `screen.active_bindings` values as `(node, binding, enabled, tooltip)`.
   Why: Textual's Footer recomposes on every bindings change (each focus move, each screen resume,
   several per key), restyling every key (~30 ms); `Keys` recomposes at most once per refresh, and
   only when what it shows changed.
   If it changes: a renamed hook or reactive leaves the footer empty (or back to rebuilding on
   every change); another tuple shape raises in `_signature` when the footer is rebuilt.
   It composes its keys itself (`Keys.compose`, with `FooterKey` from `textual.widgets._footer`)
   so that they fit the width: the screen's own, then the app's jumps while they fit (compact
   below `NARROW` columns); the rest are in `?`. If `FooterKey` moves, the import fails at start.

4. `freeze_garbage` -- `gc.freeze()` once the session is shown. Not Textual's, but it is about
   Textual's objects: it assumes the widgets, caches and session loaded by then live as long as
   the app. A full collection otherwise walks them all (~100k objects, 50-80 ms) inside a key
   press. `triage.ui.collect` moves the remaining full collections to when the keys rest.
   If it changes: nothing breaks; the collections cost more again.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.dom import NoScreen
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


# -- 1. the paint timer -----------------------------------------------------------------------
def prompt_frames(screen: Screen) -> None:
    """Let `screen` paint as soon as it is dirty when its paint timer is behind (item 1)."""
    screen._update_timer._skip = False


# -- 2. one layout per change -----------------------------------------------------------------
# A mixin, not a Widget subclass: Textual's CSS type names (`Static`, `VirtualTable`) follow a
# class's first DOMNode base, so the widget class it is mixed into must come next.
if TYPE_CHECKING:
    _Mixin = Widget
else:
    _Mixin = object


class OneLayout(_Mixin):
    """A widget that needs one layout per change, not two (item 2): Textual answers a layout that
    gave a widget a new size or scrollable size by asking for another layout of the whole screen
    (and a repaint of the widget). The first one already placed it at that size, so the second
    changes nothing and costs a detail key a second layout and paint. Its scroll bars still follow
    (a scroll bar that comes or goes asks for its own layout), and it still gets a Resize event."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)


# -- 3. the footer of keys --------------------------------------------------------------------
NARROW = 120  # columns: a narrower footer is compact (one space between keys)
PALETTE = 12  # cells the palette key takes at the right


class Keys(Footer):
    """The footer of keys, rebuilt only when the keys it shows change (item 3). It shows the
    screen's own keys (`?` first), then the app's named jumps (bindings with an `id`, in the
    app's `FOOTER_JUMPS` order) while they fit the width, then the palette key if it fits:
    nothing is cut off at the edge, and what is left out is in `?`."""

    _shown: tuple[object, ...] | None = None
    _pending = False

    def keys_shown(self) -> tuple[bool, list[tuple[str, Binding, bool, str]], bool]:
        """Whether compact, the bindings shown (key, binding, enabled, tooltip), one per action,
        and whether the palette key fits too."""
        width = self.size.width or self.app.size.width  # its own (a scroll bar may take two)
        compact = width < NARROW
        order: tuple[str, ...] = getattr(self.app, "FOOTER_JUMPS", ())
        own: list[tuple[str, Binding, bool, str]] = []
        jumps: list[tuple[str, Binding, bool, str]] = []
        actions: set[str] = set()
        for key, (node, binding, enabled, tooltip) in self.screen.active_bindings.items():
            if not binding.show or binding.action in actions:
                continue
            actions.add(binding.action)
            jump = node is self.app and binding.id is not None and binding.id != "help"
            (jumps if jump else own).append((key, binding, enabled, tooltip))
        jumps.sort(key=lambda j: order.index(j[1].id) if j[1].id in order else len(order))

        def cells(binding: Binding) -> int:
            label = len(self.app.get_key_display(binding)) + 1 + len(binding.description)
            return label + (1 if compact else 3)

        used = sum(cells(b) for _, b, _, _ in own)
        for extra in jumps:
            if used + cells(extra[1]) > width:
                break
            used += cells(extra[1])
            own.append(extra)
        return compact, own, used + PALETTE <= width

    def _signature(self) -> tuple[object, ...]:
        compact, keys, palette = self.keys_shown()
        return (compact, palette) + tuple((key, b.description, enabled) for key, b, enabled, _ in keys)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        compact, keys, palette = self.keys_shown()
        self.compact = compact
        for key, binding, enabled, tooltip in keys:
            yield FooterKey(
                key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        if palette and self.app.ENABLE_COMMAND_PALETTE:
            found = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, binding, enabled, tooltip = found
                yield FooterKey(
                    binding.key,
                    self.app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    classes="-command-palette",
                    disabled=not enabled,
                    tooltip=binding.tooltip or binding.description,
                )

    def on_resize(self) -> None:
        """Another width may show other keys: checked as on a bindings change."""
        if self.is_attached and self._shown is not None:
            self.bindings_changed(self.screen)

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen or self._pending:
            return
        self._pending = True
        self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._pending = False
        if not self.is_attached or not self.is_mounted:
            return  # its screen went away meanwhile
        try:
            signature = self._signature()
        except NoScreen:
            return
        if signature != self._shown:
            self._shown = signature
            await self.recompose()


# -- 4. long-lived objects out of the collector's sight ---------------------------------------
def freeze_garbage() -> None:
    """Once the evaluation is loaded and shown, move its long-lived objects out of the
    collector's sight (item 4)."""
    gc.collect()
    gc.freeze()
