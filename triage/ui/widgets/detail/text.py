"""Shortening data text for a row or a pane (the text stays data: shown through `literal`)."""

from __future__ import annotations


def clip(text: str | None, n: int) -> str:
    """`text` in at most `n` cells, ending in … when cut ("" for none)."""
    if not text:
        return ""
    return text if len(text) <= n else text[: max(0, n - 1)] + "…"


def short_header(header: str | None, keep: int = 2) -> str:
    """The most specific end of a heading path: "… > Leave > Annual leave"."""
    if not header:
        return ""
    parts = header.split(" > ")
    return header if len(parts) <= keep else "… > " + " > ".join(parts[-keep:])
