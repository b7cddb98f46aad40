"""A key's frame as soon as its changes are ready, not a frame period later.

Textual paints a screen from a repeating timer (`MAX_FPS`, 60 a second) that pauses itself after
each frame and is resumed once something is dirty. When a frame took longer than the period (a
detail key's layout and paint take ~15 ms), the timer skips to the period *after* the next one:
its next tick is 17-33 ms away. A key typed right after that frame (keys in a row, a held key)
is handled in ~8 ms and then waits, idle, for the rest of that sleep before it is painted -- on a
real terminal, half the time of a detail key at a million queries.

Without skipping, a timer that is behind its schedule ticks as soon as it is resumed; one that
keeps up still ticks on its schedule. Each tick still paints what a whole batch of messages made
dirty (the timer is resumed only once the screen's messages are handled).
"""

from __future__ import annotations

from textual.screen import Screen


def prompt_frames(screen: Screen) -> None:
    """Let `screen` paint as soon as it is dirty when its frame timer is behind (see above).
    Reads Textual's private screen timer; `tests/test_frames.py` fails if that changes."""
    screen._update_timer._skip = False
