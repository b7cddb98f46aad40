"""Benchmark the triage app (Textual UI) on the 100,000-query evaluation with a 2M-chunk corpus.

Measures, and prints as a table with target and verdict (exit 1 if any target is missed):

1. first paint on the bundled sample: ``python -m triage`` as a real process in a pseudo-terminal
   (120x36); clock from just before the spawn until the ANSI-stripped terminal output holds both
   the title "triage" and the footer's first key, "help". Median of ``--repeat``.   target <= 1.0 s
2. interactive on the 100k evaluation: same method, ``python -m triage DATA``, until the overview
   shows the loaded numbers ("Paired outcomes"). Cold: ``TRIAGE_CACHE`` set to a fresh empty
   folder each run (the second worker then builds the corpus cache; when its index file appears
   is reported as info). Warm: a cache built beforehand; then the time until the app process
   stops using CPU (its background work done) and the time from typing `a` to "All queries"
   painted are reported as info.                                                target <= 5 s
3. ``n`` / ``p`` in the detail screen, two ways:
   a. as specified, in-process: ``TriageApp(DATA).run_test(size=(120, 36))``; wait until
      ``app.session`` is set, ``app.session.corpus`` is not None and no worker is running; press
      ``f``, ``enter``; time 50 ``n`` then 50 ``p``, each ``await pilot.press(key)`` +
      ``await pilot.pause()``. Textual's Pilot sleeps at least 3 x 20 ms per key waiting for the
      process to go idle (textual/_wait.py), so the same is timed for a key bound to nothing (the
      "floor"), and the CPU time per key is reported too, with the screen layouts and Python's
      full garbage collections done during them (per key).
   b. the real app on a pty (warm cache, after its background work): per key, from writing it to
      the terminal until the flip label it changes ("regression 2 of N") is painted.
   Also ``session.detail(q)`` directly for 200 flips (and ``build_detail(session.snapshot, q,
   None)``, to split off the chunk look-ups).                               target p95 <= 50 ms
4. chunk look-ups: ``open_corpus(chunks.parquet)`` on the warm cache in a fresh child, then
   ``corpus.get(ids)`` for 200 random queries' ~25 ids (gold + first 10 of each arm; picked by
   another child so the look-up child reads nothing else). p50 / p95, and that child's peak RSS
   (``os.wait4``) split into anonymous and mapped-file memory.               target p95 <= 50 ms
   The same child then times ``hints_for`` for every flip, without and with the corpus.
   App peak RSS: a separate child runs the app headless, waits for the evaluation, the corpus and
   its workers, opens the first flip's detail and exits: ``ru_maxrss`` from ``os.wait4``; and the
   real app of 3b after all its keys.                            target <= 2.5 GB (2.5e9 bytes)
5. all-queries list (100,000 rows), both ways as in 3: press ``a`` (in-process: until the new
   screen's table draws its first data row), then 200 ``pagedown``, then 10 x (``end``,
   ``home``); on the pty each key is timed until the "query N of 100000" label changes.
                                                        target p95 <= 50 ms, no key > 200 ms
6. fuzzy search: ``session.searcher.search(prefix)`` for every prefix of id needles on the 100k
   evaluation (its queries have no text), and of word and typo needles over a Searcher built on
   100,000 synthetic ~60-character texts from a word list.           target p95 <= 100 ms per key

Every measurement that loads data runs in its own child process (this script imports neither
numpy nor pyarrow, so its own peak RSS -- which Linux carries into a child's ``ru_maxrss`` at
exec -- stays small). Other processes skew every figure on a small machine: before each
measurement the script waits until they use at most ``--quiet-cores`` cores, and it reports how
much CPU they used during each measurement. The data folder is built with ``make_bench.py
--corpus --queries N --depth D --chunks M`` when its ``bench.json`` does not match (``--queries``,
``--depth`` and ``--chunks``, default 100,000, 100 and 2,000,000: the size the targets are set
for; a smaller size is a smoke run of the same measurements).

Usage::

    python tests/benchmarks/bench_app.py                       # data in /tmp/triage-bench-corpus
    python tests/benchmarks/bench_app.py --data DIR --repeat 5 --cold-repeat 3 --json out.json
    python tests/benchmarks/bench_app.py --only keys,search    # paint,interactive,keys,corpus,search
    python tests/benchmarks/bench_app.py --cache DIR           # keep the warm corpus cache in DIR
    python tests/benchmarks/bench_app.py --data /tmp/ta-small --queries 5000 --chunks 50000 --repeat 2
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import math
import os
import platform
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

COLS, ROWS = 120, 36
SECTIONS = ("paint", "interactive", "keys", "corpus", "search")
GB = 1e9

# CSI ... final, OSC ... BEL/ST, DCS/SOS/PM/APC ... ST, and two-byte escapes.
ANSI = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]"
)


# ======================================================================================
# small helpers (no numpy here)
# ======================================================================================
def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    s = sorted(values)
    if not s:
        return float("nan")
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))]


def dist(values: list[float]) -> dict:
    return {
        "n": len(values),
        "p50": statistics.median(values) if values else float("nan"),
        "p95": pct(values, 95),
        "max": max(values) if values else float("nan"),
        "min": min(values) if values else float("nan"),
        "first": values[0] if values else float("nan"),
    }


def num(x: float | None, spec: str = ".2f") -> str:
    return "n/a" if x is None else f"{x:{spec}}"


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def mib(kib: float) -> str:
    return f"{kib / 1024:,.0f} MiB"


# ======================================================================================
# other processes on the machine (they skew every figure here; 2 cores are easily saturated)
# ======================================================================================
HZ = os.sysconf("SC_CLK_TCK")


def _busy_s() -> float:
    """CPU seconds spent busy by all processes since boot (/proc/stat)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = f[:8]
    return (user + nice + system + irq + softirq + steal) / HZ


def _own_s() -> float:
    """CPU seconds of this process and its reaped children."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


QUIET = {"cores": 0.25, "timeout": 600.0}  # set from the command line
LOADS: list[tuple[str, float]] = []  # (measurement, cores used by other processes meanwhile)


def wait_quiet(label: str = "") -> float:
    """Wait until other processes use at most QUIET['cores'] cores over a 1 s window (give up
    after QUIET['timeout'] s); return the last figure."""
    t_end = time.perf_counter() + QUIET["timeout"]
    said = False
    while True:
        b0, o0, t0 = _busy_s(), _own_s(), time.perf_counter()
        time.sleep(1.0)
        others = ((_busy_s() - b0) - (_own_s() - o0)) / (time.perf_counter() - t0)
        if others <= QUIET["cores"] or time.perf_counter() > t_end:
            if said:
                print(f"  ... other load now {others:.2f} cores", flush=True)
            return others
        if not said:
            print(f"  waiting for other processes to calm down ({others:.2f} cores busy) {label}", flush=True)
            said = True


class OtherLoad:
    """CPU used by other processes (cores, averaged) while the block runs."""

    def __enter__(self) -> OtherLoad:
        self.b0, self.o0, self.t0 = _busy_s(), _own_s(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        wall = time.perf_counter() - self.t0
        self.cores = max(0.0, ((_busy_s() - self.b0) - (_own_s() - self.o0)) / max(wall, 1e-9))


# ======================================================================================
# the real app in a pseudo-terminal
# ======================================================================================
def _become_tty_leader() -> None:  # runs in the child between fork and exec
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Term:
    """``python -m triage ARGS`` on a fresh 120x36 pseudo-terminal, driven like a user would.

    The clock starts just before the spawn. `wait` scans only output that arrived after the last
    `send` (or the spawn), ANSI-stripped; each read is stripped together with the 4 KiB before it,
    so a string split across reads is still seen without re-stripping the whole output."""

    def __init__(self, args: list[str], env: dict[str, str], label: str = "pty") -> None:
        wait_quiet()
        self.label = label
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        child_env = {**os.environ, **env, "TERM": "xterm-256color", "COLUMNS": str(COLS), "LINES": str(ROWS)}
        self.load = OtherLoad().__enter__()
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "triage", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=child_env,
            cwd=REPO,
            preexec_fn=_become_tty_leader,
            close_fds=True,
        )
        os.close(slave)
        self.buf = bytearray()
        self.mark = 0  # output offset where the current wait starts looking
        self.sent = self.t0
        self.closed = False
        self.rss_kib = 0
        self.exit_status: int | None = None

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def _read(self, timeout: float) -> bytes:
        if self.closed:
            time.sleep(timeout)
            return b""
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return b""
        try:
            data = os.read(self.master, 1 << 16)
        except OSError:
            data = b""
        if not data:
            self.closed = True
        self.buf += data
        return data

    def send(self, keys: bytes) -> None:
        self._read(0)  # take what is already there
        while self._read(0):
            pass
        self.mark = len(self.buf)
        self.sent = time.perf_counter()
        os.write(self.master, keys)

    def wait(self, check, timeout: float, poll=None) -> float | None:  # type: ignore[no-untyped-def]
        """Seconds from the last `send` (or the spawn) until `check(text)` is true for the text
        arrived since then (or `poll()` is true); None on timeout or when the app exits."""
        deadline = time.perf_counter() + timeout
        first = True
        while time.perf_counter() < deadline:
            data = b"" if first else self._read(0.01)
            end = len(self.buf)
            if first or data:
                lo = self.mark if first else max(self.mark, end - len(data) - 4096)
                if check(ANSI.sub(b"", bytes(self.buf[lo:end]))):
                    return time.perf_counter() - self.sent
            first = False
            if poll is not None and poll():
                return time.perf_counter() - self.sent
            if self.closed:
                return None
        return None

    def _cpu_s(self) -> float:
        """CPU seconds of the app process so far (all its threads), from /proc/PID/stat."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / HZ  # utime, stime

    def wait_idle(self, timeout: float, cores: float = 0.10, window: float = 0.5) -> float | None:
        """Seconds since the spawn at which the app stopped working in the background (its CPU
        use over `window` fell to `cores` or below), draining output meanwhile; None on timeout."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline and not self.closed:
            c0, t0 = self._cpu_s(), time.perf_counter()
            while time.perf_counter() - t0 < window:
                self._read(0.02)
            if (self._cpu_s() - c0) / (time.perf_counter() - t0) <= cores:
                return t0 - self.t0
        return None

    def tail(self, n: int = 4000) -> str:
        return ANSI.sub(b"", bytes(self.buf[-n:])).decode("utf-8", "replace")

    def close(self) -> None:
        """Type `q`; reap with os.wait4 (SIGKILL after 5 s); keep the child's peak RSS."""
        try:
            os.write(self.master, b"q")
        except OSError:
            pass
        end = time.perf_counter() + 5
        status = usage = None
        while time.perf_counter() < end:
            pid, st, ru = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                status, usage = st, ru
                break
            self._read(0.05)
        if usage is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = self.exit_status = os.waitstatus_to_exitcode(status)
        self.rss_kib = usage.ru_maxrss
        os.close(self.master)
        self.load.__exit__()
        LOADS.append((self.label, self.load.cores))


def all_of(*strings: str):  # type: ignore[no-untyped-def]
    """A `Term.wait` check: true once every string has been seen (in any of the texts)."""
    missing = {s.encode() for s in strings}

    def check(text: bytes) -> bool:
        for s in list(missing):
            if s in text:
                missing.discard(s)
        return not missing

    return check


def changed(pattern: bytes, previous: list[bytes]):  # type: ignore[no-untyped-def]
    """A `Term.wait` check: true when `pattern` matches with a value other than previous[0]."""
    rx = re.compile(pattern)

    def check(text: bytes) -> bool:
        for m in rx.finditer(text):
            if m.group(0) != previous[0]:
                previous[0] = m.group(0)
                return True
        return False

    return check


READY = "Paired outcomes"  # painted by the overview only once the evaluation is loaded
FLIP_LABEL = rb"(?:regression|win) \d+ of \d+"
LIST_LABEL = rb"query \d+ of \d+"
KEYS = {"pagedown": b"\x1b[6~", "end": b"\x1b[F", "home": b"\x1b[H", "enter": b"\r"}


def ready_and_settled(t: Term, out: dict, timeout: float) -> bool:
    """Wait for the overview's numbers, then for the background work after it (corpus opening,
    deferred checks); False (with `out["error"]`) when the app never got there."""
    out["ready"] = t.wait(all_of(READY), timeout)
    if out["ready"] is None:
        out["error"] = "never interactive:\n" + t.tail()
        return False
    out["settled"] = t.wait_idle(timeout)
    return True


def term_session(
    data: Path, env: dict[str, str], n_keys: int, n_pages: int, n_jumps: int, timeout: float
) -> dict:
    """The real app on the 100k evaluation, typed at: f, enter, n x n_keys, p x n_keys, a,
    pagedown x n_pages, (end, home) x n_jumps. Each key is timed from the write to the pty until
    the label it changes (flip label or list position) is painted. A list shorter than n_pages
    pages (a small smoke-run evaluation) is paged to its last row only, then sent back home."""
    out: dict = {"n": [], "p": [], "pagedown": [], "end": [], "home": []}
    t = Term([str(data)], env, "pty keys")
    try:
        if not ready_and_settled(t, out, timeout):
            return out
        t.send(b"f")
        out["f"] = t.wait(all_of("Flips, hit"), 30)
        t.send(KEYS["enter"])
        label = [b""]
        # the detail with chunk text: the gold pane counts tokens (shown once the corpus is ready)
        out["enter"] = t.wait(all_of("tokens)"), 60)
        if out["enter"] is None:
            out["error"] = "detail never showed chunk text:\n" + t.tail()
            return out
        m = re.findall(FLIP_LABEL, ANSI.sub(b"", bytes(t.buf[t.mark :])))
        label = [m[-1] if m else b""]
        for key in ("n", "p"):
            for _ in range(n_keys):
                t.send(key.encode())
                dt = t.wait(changed(FLIP_LABEL, label), 10)
                if dt is None:
                    out["error"] = f"no repaint after {key}:\n" + t.tail()
                    return out
                out[key].append(dt)
        t.send(b"a")
        out["a"] = t.wait(all_of("All queries"), 30)
        label = [b"query 1 of"]
        t.wait(changed(LIST_LABEL, label), 5)  # settle on the first label
        for _ in range(n_pages):
            t.send(KEYS["pagedown"])
            dt = t.wait(changed(LIST_LABEL, label), 10)
            if dt is None:
                out["error"] = "no repaint after pagedown:\n" + t.tail()
                return out
            out["pagedown"].append(dt)
            if _at_end(label[0]):  # a pagedown more would change nothing
                t.send(KEYS["home"])
                if t.wait(changed(LIST_LABEL, label), 10) is None:
                    out["error"] = "no repaint after home:\n" + t.tail()
                    return out
                break
        for _ in range(n_jumps):
            for key in ("end", "home"):
                t.send(KEYS[key])
                dt = t.wait(changed(LIST_LABEL, label), 10)
                if dt is None:
                    out["error"] = f"no repaint after {key}:\n" + t.tail()
                    return out
                out[key].append(dt)
        out["last_label"] = label[0].decode()
    finally:
        t.close()
        out["rss_kib"] = t.rss_kib
    return out


def _at_end(label: bytes) -> bool:
    """Whether a list label "query N of M" names the last row (N = M)."""
    m = re.fullmatch(rb"query (\d+) of (\d+)", label)
    return m is not None and m.group(1) == m.group(2)


# ======================================================================================
# children (each measurement with data in its own process)
# ======================================================================================
def run_child(mode: str, data: Path, out: Path, env: dict[str, str], extra: list[str] | None = None) -> dict:
    """Run this script as ``--child MODE``; return its JSON result plus wall and peak RSS."""
    cmd = [sys.executable, __file__, "--child", mode, "--data", str(data), "--out", str(out), *(extra or [])]
    wait_quiet(f"(before child {mode})")
    with OtherLoad() as load:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env={**os.environ, **env}, cwd=REPO, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    LOADS.append((f"child {mode}", load.cores))
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child {mode} exited {proc.returncode}: {' '.join(cmd)}")
    result = json.loads(out.read_text())
    result["_wall_s"] = wall
    result["_rss_kib"] = usage.ru_maxrss
    return result


def _status_kib() -> dict[str, int]:
    """VmRSS / VmHWM / RssAnon / RssFile of this process, KiB."""
    out = {}
    for ln in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = ln.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(rest.split()[0])
    return out


def child_warm(data: Path) -> dict:
    """Build the corpus cache in TRIAGE_CACHE (the cold path of the corpus worker)."""
    from triage.core.inputs.corpus import open_corpus

    t0 = time.perf_counter()
    corpus = open_corpus(data / "chunks.parquet")
    return {"build_s": time.perf_counter() - t0, "chunks": len(corpus)}


def child_ids(data: Path, n: int, seed: int) -> dict:
    """For `n` random queries: gold ids + the first 10 of each arm (joined on query_id)."""
    import random

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    labels = pq.read_table(data / "labels.parquet", columns=["query_id", "chunk_id"])
    qids = pc.unique(pq.read_table(data / "run_a.parquet", columns=["query_id"]).column("query_id"))
    chosen = random.Random(seed).sample(qids.to_pylist(), n)
    want = pa.array(chosen)
    per: dict[str, list[str]] = {q: [] for q in chosen}
    lab = labels.filter(pc.is_in(labels.column("query_id"), value_set=want))
    for q, c in zip(lab.column("query_id").to_pylist(), lab.column("chunk_id").to_pylist(), strict=True):
        per[q].append(c)
    for arm in ("a", "b"):
        t = pq.read_table(data / f"run_{arm}.parquet", columns=["query_id", "retrieved"])
        t = t.filter(pc.is_in(t.column("query_id"), value_set=want))
        for q, lst in zip(t.column("query_id").to_pylist(), t.column("retrieved").to_pylist(), strict=True):
            per[q].extend(lst[:10])
    lists = [per[q] for q in chosen]
    return {"queries": chosen, "ids": lists}


def child_corpus(data: Path, ids_file: Path) -> dict:
    """open_corpus on the warm cache, then corpus.get(ids) per query."""
    lists = json.loads(ids_file.read_text())["ids"]
    from triage.core.inputs.corpus import open_corpus

    before = _status_kib()
    t0 = time.perf_counter()
    corpus = open_corpus(data / "chunks.parquet")
    open_s = time.perf_counter() - t0
    after_open = _status_kib()
    times, found, asked = [], 0, 0
    for ids in lists:
        t = time.perf_counter()
        got = corpus.get(ids)
        times.append(time.perf_counter() - t)
        found += len(got)
        asked += len(set(ids))
    # where the time goes: one look-up's binary search vs. the row slice
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for ids in lists[:50]:
        corpus.get(ids)
    prof.disable()
    stats = pstats.Stats(prof)
    top = sorted(
        ((v[3], f"{Path(k[0]).name}:{k[1]}({k[2]})", v[1]) for k, v in stats.stats.items()),  # type: ignore[attr-defined]
        reverse=True,
    )[:8]
    hints = _time_hints(data, corpus)
    return {
        "hints": hints,
        "open_s": open_s,
        "get": times,
        "ids_per_query": statistics.mean(len(x) for x in lists),
        "found": found,
        "asked": asked,
        "status_before": before,
        "status_after_open": after_open,
        "status_end": _status_kib(),
        "chunks_arrow_bytes": sum(p.stat().st_size for p in Path(corpus_cache_dir()).rglob("chunks.arrow")),
        "profile_top_cumulative": [(round(c, 4), name, calls) for c, name, calls in top],
    }


def _time_hints(data: Path, corpus: object) -> dict:
    """Cause hints for every flip of the evaluation: without the corpus (no text) and with it."""
    from triage.core.evaluation import evaluate
    from triage.core.inputs.load import load_inputs
    from triage.core.inputs.manifest import from_manifest
    from triage.core.views.hints import hints_for

    inputs = load_inputs(from_manifest(data / "triage.toml"))
    ev = evaluate(inputs, inputs.frozen.table)
    t = time.perf_counter()
    hints_for(ev, ev.flips, None)
    bare = time.perf_counter() - t
    t = time.perf_counter()
    got = hints_for(ev, ev.flips, corpus)  # type: ignore[arg-type]
    full = time.perf_counter() - t
    return {
        "flips": len(ev.flips),
        "no_corpus_s": bare,
        "corpus_s": full,
        "with_hint": sum(map(bool, got.values())),
    }


def corpus_cache_dir() -> str:
    from triage.core.inputs.corpus import cache_dir

    return str(cache_dir())


async def _wait(pilot, cond, timeout: float, step: float = 0.02) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("condition not met")
        await pilot.pause(step)
    return time.perf_counter() - t0


async def _timed_key(pilot, key: str, cpu: list[float] | None = None) -> float:  # type: ignore[no-untyped-def]
    """Wall seconds of `pilot.press(key)` + `pilot.pause()`; its CPU seconds appended to `cpu`."""
    c = time.process_time()
    t = time.perf_counter()
    await pilot.press(key)
    await pilot.pause()
    wall = time.perf_counter() - t
    if cpu is not None:
        cpu.append(time.process_time() - c)
    return wall


def _workers_idle(app) -> bool:  # type: ignore[no-untyped-def]
    """No worker (loading, corpus, deferred checks, ...) is still pending or running."""
    return all(w.is_finished for w in app.workers)


def _idle_key(app) -> str:  # type: ignore[no-untyped-def]
    """A key nothing is bound to on the current screen (to time Pilot's own overhead)."""
    bound = set(app.active_bindings)
    return next(k for k in ("f12", "f11", "f10", "z", "x") if k not in bound)


class _Passes:
    """Counts, while the block runs, the screen layouts (Compositor.reflow) and Python's full
    garbage collections (generation 2), each ~5 and 35-60 ms on a 2-core machine."""

    def __enter__(self) -> _Passes:
        import gc

        from textual._compositor import Compositor

        self.layouts = self.full_gc = 0
        self._reflow = reflow = Compositor.reflow

        def counting(compositor, parent, size):  # type: ignore[no-untyped-def]
            self.layouts += 1
            return reflow(compositor, parent, size)

        def collected(phase: str, info: dict) -> None:
            if phase == "stop" and info["generation"] == 2:
                self.full_gc += 1

        Compositor.reflow = counting  # type: ignore[method-assign]
        self._collected = collected
        gc.callbacks.append(collected)
        return self

    def __exit__(self, *exc: object) -> None:
        import gc

        from textual._compositor import Compositor

        Compositor.reflow = self._reflow  # type: ignore[method-assign]
        gc.callbacks.remove(self._collected)


def child_load(data: Path) -> dict:
    """The app headless: load the 100k evaluation and the corpus, open one detail, exit."""
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen

    out: dict = {}

    async def main() -> None:
        t0 = time.perf_counter()
        app = TriageApp(data)
        async with app.run_test(size=(COLS, ROWS)) as pilot:
            await _wait(pilot, lambda: app.session is not None, 300)
            out["session_s"] = time.perf_counter() - t0
            await _wait(pilot, lambda: app.session.corpus is not None, 300)
            out["corpus_s"] = time.perf_counter() - t0
            await _wait(pilot, lambda: _workers_idle(app), 300)
            out["settled_s"] = time.perf_counter() - t0
            await pilot.press("f")
            await pilot.press("enter")
            await _wait(pilot, lambda: isinstance(app.screen, DetailScreen), 30)
            await pilot.pause()
            out["status"] = _status_kib()
            app.exit()

    asyncio.run(main())
    return out


def child_pilot(data: Path) -> dict:
    """n/p in the detail screen, session.detail directly, and the all-queries list."""
    from triage.ui.app import TriageApp
    from triage.ui.screens.detail import DetailScreen
    from triage.ui.screens.lists import AllQueriesScreen
    from triage.ui.table import VirtualTable
    from triage.workspace.detail import build_detail

    # Instrument (this process only): the first time each table draws a data row.
    first_row_drawn: dict[int, float] = {}
    original = VirtualTable.render_line

    def render_line(self, y: int):  # type: ignore[no-untyped-def]
        if y > 0 and id(self) not in first_row_drawn:
            first_row_drawn[id(self)] = time.perf_counter()
        return original(self, y)

    VirtualTable.render_line = render_line  # type: ignore[method-assign]
    out: dict = {}

    async def main() -> None:
        t0 = time.perf_counter()
        app = TriageApp(data)
        async with app.run_test(size=(COLS, ROWS)) as pilot:
            await _wait(pilot, lambda: app.session is not None, 300)
            out["session_s"] = time.perf_counter() - t0
            await _wait(pilot, lambda: app.session.corpus is not None, 300)
            out["corpus_s"] = time.perf_counter() - t0
            await _wait(pilot, lambda: _workers_idle(app), 300)
            out["settled_s"] = time.perf_counter() - t0
            s = app.session
            out["n_flips"] = int(len(s.flips))
            out["n_queries"] = int(s.ev.n)

            # -- 3. n / p -----------------------------------------------------------------
            out["f_s"] = await _timed_key(pilot, "f")
            out["enter_s"] = await _timed_key(pilot, "enter")
            screen = app.screen
            assert isinstance(screen, DetailScreen), type(screen)
            assert screen.detail is not None and screen.detail.a.rows[0].chunk is not None, "no chunk text"
            out["idle_key"] = idle = _idle_key(app)
            out["idle_detail"] = [await _timed_key(pilot, idle) for _ in range(20)]
            out["n_cpu"], out["p_cpu"] = [], []
            with _Passes() as passes:  # what Textual did for them: layouts, full collections
                out["n"] = [await _timed_key(pilot, "n", out["n_cpu"]) for _ in range(50)]
                out["n_position"] = screen.position
                out["p"] = [await _timed_key(pilot, "p", out["p_cpu"]) for _ in range(50)]
                out["p_position"] = screen.position
            out["np_layouts"], out["np_full_gc"] = passes.layouts, passes.full_gc

            flips = [int(q) for q in s.flips[:200]]
            with_corpus, without = [], []
            for q in flips:
                t = time.perf_counter()
                s.detail(q)
                with_corpus.append(time.perf_counter() - t)
            for q in flips:
                t = time.perf_counter()
                build_detail(s.snapshot, q, None)
                without.append(time.perf_counter() - t)
            out["detail"] = with_corpus
            out["detail_no_corpus"] = without

            # -- 5. the all-queries list ----------------------------------------------------
            t = time.perf_counter()
            await pilot.press("a")
            out["a_press_s"] = time.perf_counter() - t
            await _wait(
                pilot,
                lambda: (
                    isinstance(app.screen, AllQueriesScreen)
                    and id(app.screen.query_one(VirtualTable)) in first_row_drawn
                ),
                60,
                step=0.0,
            )
            table = app.screen.query_one(VirtualTable)
            out["a_first_paint_s"] = first_row_drawn[id(table)] - t
            out["a_rows"] = table.count
            await pilot.pause()
            out["idle_list"] = [await _timed_key(pilot, idle) for _ in range(20)]
            out["pagedown_cpu"] = []
            out["pagedown"] = []
            for _ in range(200):  # a list shorter than 200 pages (a smoke run) is paged to its end only
                out["pagedown"].append(await _timed_key(pilot, "pagedown", out["pagedown_cpu"]))
                if table.cursor >= table.count - 1:
                    break
            out["cursor_after_pagedown"] = table.cursor
            out["page"] = max(1, table.size.height - 2)
            if table.cursor >= table.count - 1:  # at the end already: `end` would do nothing
                await pilot.press("home")
                await pilot.pause()
            out["end"], out["home"] = [], []
            for _ in range(10):
                out["end"].append(await _timed_key(pilot, "end"))
                out["home"].append(await _timed_key(pilot, "home"))
            out["cursor_end"] = table.cursor
            out["status"] = _status_kib()
            app.exit()

    asyncio.run(main())
    return out


WORDS = """
leave annual parental sick vacation days holiday pension match insurance contract payment terms
invoice overdue refund vendor supplier renewal notice period salary payroll bonus expenses claim
travel policy laptop password reset account access login email invite onboarding new hire manager
approval request form deadline quarter report budget forecast audit compliance security incident
outage uptime guarantee service level credit customer support ticket escalation priority response
time data export spreadsheet backup restore sync error code failing update install mobile app
office remote work hours overtime shift schedule training course certificate benefit health dental
vision gym allowance parking badge visitor meeting room booking calendar policy handbook code
conduct gift hospitality conflict interest whistleblowing privacy personal retention deletion
request access rights consent cookie marketing newsletter unsubscribe price discount tier plan
upgrade downgrade cancel trial subscription license seat user admin role permission group team
project milestone delivery shipping tracking return warehouse stock order purchase receipt tax
vat currency exchange rate bank transfer card declined fraud dispute chargeback limit approval
how what when where who why can do does is are the a my our for to of in on with after before
""".split()


def child_search(data: Path, seed: int) -> dict:
    """session.searcher on the 100k evaluation; a Searcher over 100k synthetic texts."""
    import random

    import pyarrow as pa

    from triage.core.text.search import Searcher
    from triage.workspace.session import open_session

    def keystrokes(searcher, needle: str) -> list[dict]:  # type: ignore[no-untyped-def]
        rows = []
        for i in range(1, len(needle) + 1):
            prefix = needle[:i]
            t = time.perf_counter()
            found = searcher.search(prefix, limit=50)
            rows.append({"prefix": prefix, "s": time.perf_counter() - t, "found": len(found)})
        return rows

    t0 = time.perf_counter()
    session = open_session(data)
    out: dict = {"session_s": time.perf_counter() - t0, "bench": {}, "synthetic": {}}
    texts = session.texts
    out["bench_texts_nonempty"] = int(len(texts) - texts.null_count)
    for needle in ("q0012", "q001234", "q099999", "parental leave", "pasword"):
        out["bench"][needle] = keystrokes(session.searcher, needle)

    rng = random.Random(seed)
    n = len(session.ev.query_ids)
    synth = []
    for _ in range(n):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < rng.randint(50, 70):
            words.append(rng.choice(WORDS))
        synth.append(" ".join(words))
    ids = session.ev.query_ids
    out["synthetic_mean_chars"] = statistics.mean(len(t) for t in synth)
    searcher = Searcher(ids, pa.array(synth))
    for needle in (
        "parental leave",
        "reset my password",
        "invoice overdue payment",
        "vacaton dyas",  # typos: no substring hit once past "vac" -> QRatio over every text
        "pasword rest",
        "q0042",
    ):
        out["synthetic"][needle] = keystrokes(searcher, needle)

    # where a slow keystroke goes
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for needle in ("parental leave", "vacaton dyas"):
        for i in range(1, len(needle) + 1):
            searcher.search(needle[:i], limit=50)
    prof.disable()
    stats = pstats.Stats(prof)
    top = sorted(
        ((v[3], f"{Path(k[0]).name}:{k[1]}({k[2]})", v[1]) for k, v in stats.stats.items()),  # type: ignore[attr-defined]
        reverse=True,
    )[:12]
    out["profile_top_cumulative"] = [(round(c, 4), name, calls) for c, name, calls in top]
    return out


CHILDREN = {
    "warm": lambda a: child_warm(a.data),
    "ids": lambda a: child_ids(a.data, a.n_lookups, a.seed),
    "corpus": lambda a: child_corpus(a.data, a.ids),
    "load": lambda a: child_load(a.data),
    "pilot": lambda a: child_pilot(a.data),
    "search": lambda a: child_search(a.data, a.seed),
}


# ======================================================================================
# the report
# ======================================================================================
@dataclass
class Line:
    what: str
    figure: str
    target: str
    ok: bool | None  # None: information only
    how: str = ""


def verdict(ok: bool | None) -> str:
    return "info" if ok is None else "PASS" if ok else "MISS"


def print_table(lines: list[Line]) -> None:
    w1 = max(len(x.what) for x in lines)
    w2 = max(len(x.figure) for x in lines)
    w3 = max(len(x.target) for x in lines)
    print(f"\n{'measure':<{w1}}  {'figure':<{w2}}  {'target':<{w3}}  verdict")
    print(f"{'-' * w1}  {'-' * w2}  {'-' * w3}  -------")
    for x in lines:
        print(f"{x.what:<{w1}}  {x.figure:<{w2}}  {x.target:<{w3}}  {verdict(x.ok)}")


def keys_line(name: str, d: dict, target_p95: float, target_max: float | None = None, how: str = "") -> Line:
    fig = f"p50 {ms(d['p50'])}, p95 {ms(d['p95'])}, max {ms(d['max'])} (n={d['n']})"
    ok = d["p95"] <= target_p95 and (target_max is None or d["max"] <= target_max)
    tgt = f"p95 <= {target_p95 * 1000:.0f} ms" + (
        f", max <= {target_max * 1000:.0f} ms" if target_max else ""
    )
    return Line(name, fig, tgt, ok, how)


def _git_state() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--short", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}" + (
        f" + {len(dirty)} modified file(s): {' '.join(x.split()[-1] for x in dirty)}" if dirty else ""
    )


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("inf")


def _range(xs: list[float], unit: float = 1.0, fmt: str = ".2f", suffix: str = " s") -> str:
    if not xs:
        return "n/a"
    lo, hi = min(xs) * unit, max(xs) * unit
    return f"{_med(xs) * unit:{fmt}}{suffix} (min {lo:{fmt}}, max {hi:{fmt}}, n={len(xs)})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=Path("/tmp/triage-bench-corpus"), help="evaluation folder")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each pty start-up measurement (median)")
    ap.add_argument("--cold-repeat", type=int, default=None, help="cold interactive runs (default: --repeat)")
    ap.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    ap.add_argument("--cache", type=Path, default=None, help="warm corpus cache folder, kept (default: temp)")
    ap.add_argument("--queries", type=int, default=100_000, help="queries, when building --data")
    ap.add_argument("--depth", type=int, default=100, help="ids per query, when building --data")
    ap.add_argument(
        "--chunks", type=int, default=2_000_000, help="corpus chunks (the id space), when building --data"
    )
    ap.add_argument("--n-lookups", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per pty run")
    ap.add_argument("--json", type=Path, default=None, help="also write every raw figure here")
    ap.add_argument(
        "--quiet-cores",
        type=float,
        default=0.25,
        help="before each measurement wait until other processes use at most this many cores",
    )
    ap.add_argument("--quiet-timeout", type=float, default=600.0, help="give up waiting after this (s)")
    # internal: run one measurement as a child
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--ids", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        result = CHILDREN[args.child](args)
        args.out.write_text(json.dumps(result))
        return 0

    QUIET.update(cores=args.quiet_cores, timeout=args.quiet_timeout)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = only - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    data = args.data.resolve()
    cold_repeat = args.cold_repeat or args.repeat
    if only - {"paint"}:
        from bench_report import ensure_data

        ensure_data(data, args.queries, args.depth, True, args.chunks)

    print("machine:")
    print(f"  nproc {os.cpu_count()} (usable: {len(os.sched_getaffinity(0))})")
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in ln
        ),
        "?",
    )
    mem = next(ln for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal"))
    print(f"  cpu {cpu}; {mem.split(':')[1].strip()} RAM; {platform.platform()}")
    print(
        f"  python {platform.python_version()}, textual {version('textual')}, rich {version('rich')}, "
        f"pyarrow {version('pyarrow')}, numpy {version('numpy')}, rapidfuzz {version('rapidfuzz')}"
    )
    code_start = _git_state()
    print(f"  code {code_start}")
    print(f"  data {data}; terminal {COLS}x{ROWS}")

    lines: list[Line] = []
    raw: dict = {}
    work = Path(tempfile.mkdtemp(prefix="triage-bench-app-"))
    cache = args.cache.resolve() if args.cache else work / "warm-cache"
    warm_env = {"TRIAGE_CACHE": str(cache)}
    try:
        # -- 1. first paint ----------------------------------------------------------------------
        if "paint" in only:
            print(f"\n[1] first paint of `python -m triage` (bundled sample), {args.repeat} runs", flush=True)
            paints = []
            for i in range(args.repeat):
                t = Term([], {"TRIAGE_CACHE": str(work / "sample-cache")}, "first paint")
                dt = t.wait(all_of("triage", "help"), 60)  # the footer's first key ("quit" may not fit)
                t.close()
                print(f"  run {i + 1}: first paint {num(dt, '.3f')} s", flush=True)
                if dt is None:
                    print("  never painted; output:\n" + t.tail())
                else:
                    paints.append(dt)
            raw["paint"] = paints
            lines.append(
                Line(
                    "1 first paint, sample (median)",
                    _range(paints, fmt=".3f"),
                    "<= 1.0 s",
                    _med(paints) <= 1.0 and len(paints) == args.repeat,
                )
            )

        # the warm cache, needed by everything below
        if only & {"interactive", "keys", "corpus"}:
            if not (cache.exists() and any(cache.rglob("index.arrow"))):
                print(f"\nbuilding the warm corpus cache in {cache} ...", flush=True)
                w = run_child("warm", data, work / "warm.json", warm_env)
                print(f"  built in {w['build_s']:.1f} s (child peak RSS {mib(w['_rss_kib'])})")
                raw["warm_build"] = w
                lines.append(
                    Line(
                        "  corpus cache build alone (open_corpus)",
                        f"{w['build_s']:.1f} s, peak RSS {mib(w['_rss_kib'])}",
                        "-",
                        None,
                    )
                )

        # -- 2. interactive ------------------------------------------------------------------
        if "interactive" in only:
            print(f"\n[2] interactive: `python -m triage {data}`; cold x{cold_repeat}", flush=True)
            cold, indexed, cold_rss = [], [], []
            for i in range(cold_repeat):
                fresh = work / f"cold-{i}"
                fresh.mkdir()
                t = Term([str(data)], {"TRIAGE_CACHE": str(fresh)}, "interactive cold")
                ready = t.wait(all_of(READY), args.timeout)
                # then until the corpus worker has written its index (the end of the cold path)
                done = t.wait(lambda _: False, args.timeout, poll=lambda f=fresh: any(f.rglob("index.arrow")))
                done_s = None if done is None else t.now()
                t.close()
                shutil.rmtree(fresh, ignore_errors=True)
                print(
                    f"  cold {i + 1}: interactive {num(ready, '.2f')} s, corpus "
                    f"indexed {num(done_s, '.2f')} s, peak RSS {mib(t.rss_kib)}",
                    flush=True,
                )
                if ready is None:
                    print("  never interactive; output:\n" + t.tail())
                    continue
                cold.append(ready)
                cold_rss.append(t.rss_kib)
                if done_s is not None:
                    indexed.append(done_s)
            print(f"  warm x{args.repeat} (cache {cache}), then `a`", flush=True)
            warm, warm_a, warm_rss, warm_settled = [], [], [], []
            for i in range(args.repeat):
                t = Term([str(data)], warm_env, "interactive warm")
                ready = t.wait(all_of(READY), args.timeout)
                a_s = settled = None
                if ready is not None:
                    settled = t.wait_idle(args.timeout)
                    t.send(b"a")
                    a_s = t.wait(all_of("All queries"), 30)
                t.close()
                print(
                    f"  warm {i + 1}: interactive {num(ready, '.2f')} s, background "
                    f"work done {num(settled, '.2f')} s, `a` "
                    f"painted after {num(a_s, '.3f')} s, peak RSS {mib(t.rss_kib)}",
                    flush=True,
                )
                if ready is None:
                    print("  never interactive; output:\n" + t.tail())
                    continue
                warm.append(ready)
                warm_rss.append(t.rss_kib)
                if settled is not None:
                    warm_settled.append(settled)
                if a_s is not None:
                    warm_a.append(a_s)
            raw["interactive"] = {"cold": cold, "indexed": indexed, "warm": warm, "a": warm_a}
            for label, got, n in (("cold", cold, cold_repeat), ("warm", warm, args.repeat)):
                lines.append(
                    Line(
                        f"2 interactive, 100k, {label} cache (median)",
                        _range(got),
                        "<= 5 s",
                        _med(got) <= 5 and len(got) == n,
                    )
                )
            lines.append(Line("  cold: corpus indexed, from spawn", _range(indexed), "-", None))
            lines.append(Line("  warm: background work done, from spawn", _range(warm_settled), "-", None))
            lines.append(
                Line(
                    "  real process peak RSS at interactive",
                    f"cold {mib(max(cold_rss, default=0))}, warm {mib(max(warm_rss, default=0))}",
                    "-",
                    None,
                )
            )
            lines.append(
                Line(
                    "  `a` to 'All queries' painted, real pty", _range(warm_a, 1000, ".0f", " ms"), "-", None
                )
            )

        # -- 3 + 5. keys: Pilot as specified, and the real app on a pty ---------------------------
        if "keys" in only:
            print("\n[3,5] Pilot child: n/p, session.detail, all-queries list ...", flush=True)
            p = run_child("pilot", data, work / "pilot.json", warm_env)
            raw["pilot"] = p
            print(
                f"  loaded: session {p['session_s']:.2f} s, corpus {p['corpus_s']:.2f} s, workers done "
                f"{p['settled_s']:.2f} s; "
                f"{p['n_flips']:,} flips of {p['n_queries']:,} queries; "
                f"after 50 n at position {p['n_position']}, "
                f"after 50 p at {p['p_position']}; list cursor after {len(p['pagedown'])} pagedown: "
                f"{p['cursor_after_pagedown']:,} (page {p['page']}); idle key: {p['idle_key']!r}"
            )
            lines.append(keys_line("3 `n` per key, Pilot press+pause", dist(p["n"]), 0.050))
            lines.append(keys_line("3 `p` per key, Pilot press+pause", dist(p["p"]), 0.050))
            lines.append(
                Line(
                    "  Pilot floor: unbound key, detail screen",
                    f"p50 {ms(dist(p['idle_detail'])['p50'])}, p95 {ms(dist(p['idle_detail'])['p95'])}",
                    "-",
                    None,
                )
            )
            cpu = dist(p["n_cpu"] + p["p_cpu"])
            lines.append(
                Line(
                    "  `n`/`p` CPU per key (process_time)",
                    f"p50 {ms(cpu['p50'])}, p95 {ms(cpu['p95'])}, max {ms(cpu['max'])}",
                    "-",
                    None,
                )
            )
            n_keys = len(p["n"]) + len(p["p"])
            lines.append(
                Line(
                    "  `n`/`p` layouts, full collections per key",
                    f"{p['np_layouts'] / n_keys:.2f} layouts, "
                    f"{p['np_full_gc'] / n_keys:.2f} full collections",
                    "-",
                    None,
                )
            )
            d, d0 = dist(p["detail"]), dist(p["detail_no_corpus"])
            lines.append(keys_line("3 session.detail(q), 200 flips", d, 0.050))
            lines.append(
                Line(
                    "  build_detail(snapshot, q, None), no look-ups",
                    f"p50 {ms(d0['p50'])}, p95 {ms(d0['p95'])}, max {ms(d0['max'])}",
                    "-",
                    None,
                )
            )
            lines.append(
                Line(
                    "5 `a` to first painted row, Pilot",
                    f"{ms(p['a_first_paint_s'])} ({p['a_rows']:,} rows; press returned after "
                    f"{ms(p['a_press_s'])})",
                    "-",
                    None,
                )
            )
            lines.append(keys_line("5 pagedown, Pilot press+pause", dist(p["pagedown"]), 0.050, 0.200))
            lines.append(keys_line("5 end/home, Pilot press+pause", dist(p["end"] + p["home"]), 0.050, 0.200))
            lines.append(
                Line(
                    "  Pilot floor: unbound key, list screen",
                    f"p50 {ms(dist(p['idle_list'])['p50'])}, p95 {ms(dist(p['idle_list'])['p95'])}",
                    "-",
                    None,
                )
            )
            cpu = dist(p["pagedown_cpu"])
            lines.append(
                Line(
                    "  pagedown CPU per key (process_time)",
                    f"p50 {ms(cpu['p50'])}, p95 {ms(cpu['p95'])}, max {ms(cpu['max'])}",
                    "-",
                    None,
                )
            )
            lines.append(Line("  Pilot child peak RSS", mib(p["_rss_kib"]), "-", None))

            print(
                "\n[3,5] the real app on a pty: f, enter, 50 n, 50 p, a, 200 pagedown, 10 x (end, home) ...",
                flush=True,
            )
            r = term_session(data, warm_env, 50, 200, 10, args.timeout)
            raw["pty_keys"] = r
            if "error" in r:
                print("  " + r["error"])
            print(
                f"  interactive {num(r.get('ready'), '.2f')} s; background work done at "
                f"{num(r.get('settled'), '.2f')} s; `f` {num(r.get('f'), '.3f')} s; "
                f"`enter` to chunk text {num(r.get('enter'), '.3f')} s; "
                f"last list label {r.get('last_label')!r}"
            )
            ok = "error" not in r
            lines.append(
                keys_line("3 `n`, real pty, key to repaint", dist(r["n"]), 0.050)
                if r["n"]
                else Line("3 `n`, real pty", "n/a", "", False)
            )
            lines.append(
                keys_line("3 `p`, real pty, key to repaint", dist(r["p"]), 0.050)
                if r["p"]
                else Line("3 `p`, real pty", "n/a", "", False)
            )
            if r.get("a") is not None:
                lines.append(Line("5 `a` to 'All queries' painted, real pty", ms(r["a"]), "-", None))
            pg = r["pagedown"]
            jumps = r["end"] + r["home"]
            lines.append(
                keys_line("5 pagedown, real pty", dist(pg), 0.050, 0.200)
                if pg
                else Line("5 pagedown, real pty", "n/a", "", False)
            )
            lines.append(
                keys_line("5 end/home, real pty", dist(jumps), 0.050, 0.200)
                if jumps
                else Line("5 end/home, real pty", "n/a", "", False)
            )
            lines.append(
                Line(
                    "4 real app peak RSS (load+corpus+all keys)",
                    f"{mib(r['rss_kib'])} = {r['rss_kib'] * 1024 / GB:.2f} GB",
                    "<= 2.5 GB",
                    r["rss_kib"] * 1024 <= 2.5 * GB and ok,
                )
            )

        # -- 4. chunk look-ups and the app's peak RSS ---------------------------------------------
        if "corpus" in only:
            print(
                f"\n[4] chunk look-ups: {args.n_lookups} queries' ids, then the app's peak RSS ...",
                flush=True,
            )
            ids_file = work / "ids.json"
            run_child("ids", data, ids_file, warm_env)
            c = run_child("corpus", data, work / "corpus.json", warm_env, ["--ids", str(ids_file)])
            raw["corpus"] = c
            g = dist(c["get"])
            print(
                f"  open_corpus (warm) {c['open_s'] * 1000:.0f} ms; {c['ids_per_query']:.1f} ids per query; "
                f"found {c['found']:,} of {c['asked']:,}"
            )
            print(
                f"  child RSS: before open {mib(c['status_before']['VmRSS'])}, after open "
                f"{mib(c['status_after_open']['VmRSS'])} (anon {mib(c['status_after_open']['RssAnon'])}, "
                f"file {mib(c['status_after_open']['RssFile'])}), end {mib(c['status_end']['VmRSS'])} "
                f"(file {mib(c['status_end']['RssFile'])}); chunks.arrow is "
                f"{c['chunks_arrow_bytes'] / 2**20:,.0f} MiB"
            )
            print("  profile of 50 look-ups (cumulative s, function, calls):")
            for cum, name, calls in c["profile_top_cumulative"]:
                print(f"    {cum:8.4f}  {name}  x{calls}")
            lines.append(
                Line(
                    "4 corpus.get(~25 ids), 200 queries",
                    f"p50 {ms(g['p50'])}, p95 {ms(g['p95'])}, max {ms(g['max'])}",
                    "p95 <= 50 ms",
                    g["p95"] <= 0.050 and c["found"] == c["asked"],
                )
            )
            h = c["hints"]
            lines.append(
                Line(
                    f"4 hints_for every flip ({h['flips']:,})",
                    f"{h['corpus_s']:.1f} s with the corpus, {h['no_corpus_s']:.1f} s without",
                    "-",
                    None,
                )
            )
            lines.append(
                Line(
                    "  look-up child peak RSS",
                    f"{mib(c['_rss_kib'])} (at end: anon {mib(c['status_end']['RssAnon'])}, "
                    f"mapped file {mib(c['status_end']['RssFile'])})",
                    "-",
                    None,
                )
            )
            ld = run_child("load", data, work / "load.json", warm_env)
            raw["load"] = ld
            lines.append(
                Line(
                    "4 app peak RSS, 100k + corpus (headless)",
                    f"{mib(ld['_rss_kib'])} = {ld['_rss_kib'] * 1024 / GB:.2f} GB "
                    f"(session {ld['session_s']:.1f} s, corpus {ld['corpus_s']:.1f} s)",
                    "<= 2.5 GB",
                    ld["_rss_kib"] * 1024 <= 2.5 * GB,
                )
            )

        # -- 6. fuzzy search -----------------------------------------------------------------------
        if "search" in only:
            print("\n[6] fuzzy search per keystroke ...", flush=True)
            s = run_child("search", data, work / "search.json", warm_env)
            raw["search"] = s
            print(
                f"  100k evaluation: {s['bench_texts_nonempty']:,} queries with text; synthetic texts "
                f"average {s['synthetic_mean_chars']:.0f} characters"
            )
            for group in ("bench", "synthetic"):
                for needle, rows in s[group].items():
                    cells = "  ".join(f"{r['prefix']!r}:{r['s'] * 1000:.0f}" for r in rows)
                    print(f"  {group:9} {needle!r:26} ms per prefix: {cells}")
            print("  profile, synthetic 'parental leave' + 'vacaton dyas' keystrokes (cumulative s):")
            for cum, name, calls in s["profile_top_cumulative"]:
                print(f"    {cum:8.4f}  {name}  x{calls}")
            for group, label in (("bench", "ids, 100k bench"), ("synthetic", "100k synthetic texts")):
                every = [r["s"] for rows in s[group].values() for r in rows]
                lines.append(keys_line(f"6 search per keystroke, {label}", dist(every), 0.100))
            lines.append(
                Line(
                    "  first keystroke ever (builds Python lists)",
                    f"bench {ms(s['bench']['q0012'][0]['s'])}, synthetic "
                    f"{ms(s['synthetic']['parental leave'][0]['s'])}",
                    "-",
                    None,
                )
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)  # temp caches included; a --cache folder is kept

    print("\nhow measured:")
    print("  1, 2: `python -m triage [DATA]` spawned on a 120x36 pty (os.openpty + Popen); clock from just")
    print("        before the spawn until the ANSI-stripped output holds the strings; reaped with os.wait4.")
    print(
        "  3, 5 Pilot: one child, TriageApp(DATA).run_test(size=(120, 36)); "
        "per key = pilot.press + pilot.pause"
    )
    print("        (Textual's Pilot sleeps >= 3 x 20 ms per key waiting for idle: see the 'floor' lines).")
    print("  3, 5 real pty: the app as in 2 (warm cache); per key = write to the pty until the label the key")
    print("        changes (flip label / 'query N of M') is painted.")
    print("  4: children: open_corpus on the warm cache, 200 x corpus.get; the app headless to")
    print("     corpus-ready + one detail; peak RSS = ru_maxrss from os.wait4 of that child.")
    print("  6: one child: session.searcher.search(prefix, limit=50) per prefix; synthetic Searcher.")
    print_table(lines)
    code_end = _git_state()
    if code_end != code_start:
        print(f"\nWARNING: the code changed during the run: now {code_end}")
    if LOADS:
        worst = max(LOADS, key=lambda x: x[1])
        mean = statistics.mean(c for _, c in LOADS)
        print(
            f"\nother processes during the measurements: mean {mean:.2f} cores, worst {worst[1]:.2f} "
            f"({worst[0]}); each measurement waited for <= {QUIET['cores']:.2f} cores first"
        )
        noisy = [f"{n} {c:.2f}" for n, c in LOADS if c > 0.5]
        if noisy:
            print("  contended (> 0.5 core of other load): " + "; ".join(noisy))
    if args.json:
        args.json.write_text(
            json.dumps({"lines": [x.__dict__ for x in lines], "raw": raw, "other_load": LOADS}, indent=1)
        )
    missed = [x for x in lines if x.ok is False]
    if missed:
        print("\nMISSED:")
        for x in missed:
            print(f"  - {x.what}: {x.figure} (target {x.target})")
        return 1
    print("\nall targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
