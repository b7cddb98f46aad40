"""Work done ahead of the reader, off the UI thread, without Textual workers.

A Textual thread worker per key press posts its state changes (pending, running, done) through the
DOM: messages the UI thread dispatches while it should be drawing. `Ahead` keeps one plain thread
and one wish: the latest `want` replaces an older one not yet started.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Ahead:
    """Calls `build(q)` in a background thread for the latest wished `q` (older wishes are
    dropped). A failure is dropped too: the work is a guess, done again when it is needed."""

    def __init__(self, build: Callable[[int], object], name: str = "ahead") -> None:
        self._build = build
        self._name = name
        self._wish: int | None = None
        self._closed = False
        self._thread: threading.Thread | None = None
        self._cv = threading.Condition()
        self.done = 0  # builds finished (for tests)

    def want(self, q: int) -> None:
        with self._cv:
            if self._closed:
                return
            self._wish = q
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cv.notify()

    def close(self) -> None:
        """No more wishes; the thread ends after the build it is in."""
        with self._cv:
            self._closed = True
            self._wish = None
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._wish is None and not self._closed:
                    self._cv.wait()
                q, self._wish = self._wish, None
                if self._closed or q is None:
                    return
            try:
                self._build(q)
            except Exception:  # noqa: BLE001 - a guess ahead; the key builds it itself
                pass
            with self._cv:
                self.done += 1
