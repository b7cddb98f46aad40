"""The footer of keys, rebuilt only when the keys it shows change.

Textual's Footer schedules a full rebuild on every bindings change (each focus move, each screen
resume), several per key press; a rebuild restyles every key (~30 ms each here). This one
compares what it would show with what it shows and rebuilds at most once per refresh.
"""

from __future__ import annotations

from textual.dom import NoScreen
from textual.screen import Screen
from textual.widgets import Footer


class Keys(Footer):
    _shown: tuple[object, ...] | None = None
    _pending = False

    def _signature(self) -> tuple[object, ...]:
        return tuple(
            (key, binding.description, enabled)
            for key, (_node, binding, enabled, _tooltip) in self.screen.active_bindings.items()
            if binding.show
        )

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
