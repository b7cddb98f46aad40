"""The footer of keys, rebuilt only when the keys it shows change.

Textual's Footer schedules a full rebuild on every bindings change (each focus move, each screen
resume), several per key press; a rebuild restyles every key (~30 ms each here). `Keys` compares
what it would show with what it shows and rebuilds at most once per refresh. It overrides the
Footer's internals, so it lives with the app's other uses of them in `triage.ui.internals`.
"""

from __future__ import annotations

from triage.ui.internals import Keys

__all__ = ["Keys"]
