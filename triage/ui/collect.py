"""Full garbage collections while the keys rest, not in the middle of a key press.

A full collection walks every tracked object not frozen after loading (`internals.freeze_garbage`):
Textual's caches and the screens' widgets, some 45k objects, 35-60 ms on a small machine. Python
starts one every few dozen detail keys, inside whichever key is being handled, which then takes
twice its time. `RestingCollector` leaves the young generations to Python and runs the full
collection itself once no key has come for `rest` seconds.
"""

from __future__ import annotations

import gc
import time

NEVER = 1_000_000  # young collections before Python would start a full one: never, in practice


class RestingCollector:
    """Python's full collections off; `tick` (from a timer, every `rest` s) runs one when no key
    came for `rest` s and objects reached the oldest generation since the last one."""

    def __init__(self, rest: float = 1.0) -> None:
        self.rest = rest  # seconds
        self.last_key = time.monotonic()
        self.full = 0  # full collections run
        self._threshold: tuple[int, int, int] | None = None

    def start(self) -> None:
        if self._threshold is None:
            self._threshold = gc.get_threshold()
            young, middle, _ = self._threshold
            gc.set_threshold(young, middle, NEVER)

    def stop(self) -> None:
        """Python's own thresholds again."""
        if self._threshold is not None:
            gc.set_threshold(*self._threshold)
            self._threshold = None

    def key(self) -> None:
        self.last_key = time.monotonic()

    def tick(self) -> bool:
        """A full collection if the keys rested and there is something new to look at (a young
        collection promoted objects to the oldest generation since the last); whether it ran."""
        if time.monotonic() - self.last_key < self.rest or gc.get_count()[2] == 0:
            return False
        gc.collect()
        self.full += 1
        return True
