"""Untrusted text for widgets: always `Content`, never markup; control characters made visible."""

from __future__ import annotations

from textual.content import Content

from triage.core.sanitize import DISPLAY_CAP, visible


def plain(value: object, cap: int | None = DISPLAY_CAP) -> Content:
    """Data as literal text: `[b]x[/b]` stays as typed, ESC shows as ␛."""
    return Content(visible(value, cap))


def line(*parts: str | tuple[str, str]) -> Content:
    """Content from pieces: a `str` is data (shown literally, made visible, capped); a (text, style) pair
    is our own styled label. Styles are Textual style strings such as "bold" or "$text-error"."""
    out = []
    for p in parts:
        out.append((visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p))
    return Content.assemble(*out)
