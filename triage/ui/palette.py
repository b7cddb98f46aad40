"""Command palette: jump to a query by id or text; switch the theme by its name ("light", "dark")."""

from __future__ import annotations

import asyncio
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from triage.core.measures.paired import Outcome
from triage.core.text.sanitize import one_line
from triage.ui.messages import OpenQuery


class QueryCommands(Provider):
    def _session(self):  # type: ignore[no-untyped-def]
        return getattr(self.app, "session", None)

    def _label(self, q: int) -> tuple[Content, str]:
        """The hit's display (Content: never parsed as markup) and its plain text."""
        s = self._session()
        text = one_line(
            f"{s.query_id(q)}  {Outcome(int(s.outcomes[q])).label}  {s.texts[q].as_py() or ''}", 100
        )
        return Content(text), text

    async def discover(self) -> Hits:
        s = self._session()
        if s is None:
            return
        for q in s.flips[:20].tolist():
            display, text = self._label(q)
            yield DiscoveryHit(
                display, partial(self.app.post_message, OpenQuery(q)), text=text, help="open this flip"
            )

    async def search(self, query: str) -> Hits:
        s = self._session()
        if s is None:
            return
        found = await asyncio.to_thread(s.searcher.search, query, None, 15)
        for rank, q in enumerate(found):
            display, text = self._label(q)
            yield Hit(
                1.0 - rank / 20,
                display,
                partial(self.app.post_message, OpenQuery(q)),
                text=text,
                help="open query",
            )


class ThemeCommands(Provider):
    """Every theme by name: typing "light" finds the light ones, "dark" the dark ones."""

    def _themes(self) -> list[tuple[str, str]]:
        """(theme name, the hit's text) for every theme the app has, dark or light said."""
        themes = self.app.available_themes
        return [
            (name, f"theme {name} ({'dark' if t.dark else 'light'})") for name, t in sorted(themes.items())
        ]

    def _switch(self, name: str) -> None:
        self.app.theme = name

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, text in self._themes():
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(text),
                    partial(self._switch, name),
                    text=text,
                    help="switch to it",
                )
