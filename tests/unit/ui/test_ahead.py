"""`triage.ui.ahead.Ahead`: one background thread, the latest wish only, failures dropped."""

from __future__ import annotations

import threading
import time

from triage.ui.ahead import Ahead


def _until(cond, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def test_ahead_builds_the_latest_wish_drops_older_ones_and_failures() -> None:
    gate, built = threading.Event(), []

    def build(q: int) -> None:
        if q == 1:
            gate.wait(5)
        if q == 4:
            raise ValueError("a guess that failed")
        built.append(q)

    ahead = Ahead(build)
    ahead.want(1)
    assert _until(lambda: ahead._wish is None)  # 1 started, blocked at the gate
    ahead.want(2)
    ahead.want(3)  # replaces 2, which never started
    gate.set()
    assert _until(lambda: ahead.done == 2)
    assert built == [1, 3]
    ahead.want(4)  # fails: dropped, the thread lives on
    assert _until(lambda: ahead.done == 3)
    ahead.want(5)
    assert _until(lambda: ahead.done == 4)
    assert built == [1, 3, 5]
    thread = ahead._thread
    ahead.close()
    ahead.want(6)  # after close: ignored
    assert thread is not None
    thread.join(5)
    assert not thread.is_alive() and built == [1, 3, 5]
