"""Where the shards are scanned: `local` (in this process, one shard after another) or `ray` (a Ray
cluster's workers, a shard each at a time; docs/truth.md "Past one machine, on Ray").

Both run the same pure step, `shards.scan_shard(shard, job, predicates)`, and hand back each
shard's result as it is done (in the order they finish), so the caller keeps it in the truth cache
at once: a run stopped midway has kept every shard it finished. The truth is merged from the
results by the caller, whichever engine made them: the same bytes (the kernel's scores do not
depend on the blocking, the threads or the machine).

Ray is imported only when `--engine ray` is asked for, and is an optional extra
(`pip install 'retrieval-triage[ray]'`). The shards are the items of a Ray Dataset
(`ray.data.from_items`, one block each) mapped by `map_batches` with one task per shard: a task
reads its shard from its path (a file every worker can read: a shared folder, or object storage),
scans it and returns its result pickled; the job (the query vectors, the predicates) is put in the
object store once, with the mapping function, not once per shard. Ray Data streams the results
back as the tasks finish, retries a task whose worker died, and keeps no more blocks in flight than
the object store holds. When this run starts Ray itself (no cluster connected yet), it ships
triage's own package to the workers (`runtime_env` `py_modules`), so a cluster runs this very
code; the workers need its dependencies (numpy, pyarrow, xxhash, sqlglot) installed.
"""

from __future__ import annotations

import logging
import pickle
import re
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from triage.core.errors import InputError
from triage.core.truth import shards as shard_scan
from triage.core.truth.kernel import Job
from triage.core.truth.predicate import Predicate
from triage.core.truth.shards import Shard, ShardResult

ENGINES = ("local", "ray")
RAY_EXTRA = "pip install 'retrieval-triage[ray]'"
CONNECT_SECONDS = 10  # a cluster's address that does not answer within this is refused


@dataclass(frozen=True)
class ShardTask:
    """One shard to scan for a job: the shard's place in the corpus, the shard, and its job's
    number in `Work.jobs` (shards needing the same queries share one job)."""

    index: int
    shard: Shard
    job: int


@dataclass(frozen=True)
class Work:
    """The shards to scan and the jobs they answer (each with the predicates of its groups)."""

    tasks: tuple[ShardTask, ...]
    jobs: tuple[tuple[Job, tuple[Predicate, ...]], ...]


def scan_task(work: Work, task: ShardTask, progress: Callable[[int], None] | None = None) -> ShardResult:
    """The pure per-shard step (`shards.scan_shard`), looked up at its module on each call."""
    job, predicates = work.jobs[task.job]
    return shard_scan.scan_shard(task.shard, job, predicates, progress)


def require(engine: str) -> None:
    """InputError when `engine` cannot run here (Ray not installed), before anything is read."""
    if engine == "ray":
        _ray()


def scan_shards(
    engine: str,
    work: Work,
    address: str | None = None,
    progress: Callable[[int], None] | None = None,
    shown: Callable[[str], None] | None = None,
) -> Iterator[tuple[int, ShardResult]]:
    """Each task's (shard index, result), as each is done. `progress(rows)` as rows are scanned;
    `shown(name)`: the shard being scanned (local) or last done (Ray)."""
    if engine == "ray":
        yield from _run_ray(work, address, progress, shown)
        return
    for task in work.tasks:
        if shown is not None:
            shown(task.shard.name)
        yield task.index, scan_task(work, task, progress)


# -- Ray -----------------------------------------------------------------------------------------


def _ray() -> ModuleType:
    try:
        import ray
        import ray.data  # noqa: F401  # the Data library: `ray[data]`
    except ImportError as e:
        raise InputError(
            "--engine ray",
            f"needs Ray with its Data library, which is not installed ({e}): {RAY_EXTRA}",
        ) from None
    return ray


def _run_ray(
    work: Work,
    address: str | None,
    progress: Callable[[int], None] | None,
    shown: Callable[[str], None] | None,
) -> Iterator[tuple[int, ShardResult]]:
    if not work.tasks:
        return
    ray = _ray()
    if address is not None:
        _answers(address)
    started = not ray.is_initialized()  # else: the caller's own cluster (`ray.init` in Python)
    if started:
        _connect(ray, address)
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # the run's own bar counts rows
        logging.getLogger("ray.data").setLevel(logging.CRITICAL)  # a failure is said once, by the run
        items = [{"task": i} for i in range(len(work.tasks))]
        done = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            _scan_batch, batch_size=1, batch_format="numpy", fn_kwargs={"work": work}, num_cpus=1
        )
        for batch in _batches(done):
            for i, blob in zip(batch["task"], batch["result"], strict=True):
                task = work.tasks[int(i)]
                result = pickle.loads(blob)
                if isinstance(result, tuple):  # the shard's bad input (`_scan_batch`)
                    raise InputError(*result)
                if shown is not None:
                    shown(task.shard.name)
                if progress is not None:
                    progress(task.shard.rows)
                yield task.index, result
    finally:
        if started:
            ray.shutdown()


def _connect(ray: ModuleType, address: str | None) -> None:
    try:
        ray.init(
            address=address,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
            runtime_env={"py_modules": [str(Path(__file__).parents[2])]},  # the package `triage`
        )
    except (ConnectionError, ValueError, RuntimeError) as e:
        where = f"the Ray cluster at {address}" if address else "a Ray cluster"
        raise InputError("--address", f"cannot connect to {where}: {e}") from None


def _answers(address: str) -> None:
    """InputError when nothing answers at a `host:port` address (`ray://host:port` too): Ray itself
    would wait minutes for it. Another form ("auto", "local") is left to Ray."""
    m = re.fullmatch(r"(?:ray://)?\[?([^\[\]/]+?)\]?:(\d{1,5})", address.strip())
    if m is None:
        return
    try:
        socket.create_connection((m[1], int(m[2])), timeout=CONNECT_SECONDS).close()
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e) or type(e).__name__
        raise InputError("--address", f"{address}: no Ray cluster answers there ({why})") from None


def _batches(dataset) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    """The dataset's batches as they are done; a task that failed on the cluster (a worker lost
    past Ray's retries, a module missing there) is an InputError naming the engine and the failure."""
    from ray.exceptions import RayError

    try:
        yield from dataset.iter_batches(batch_size=None, batch_format="numpy")
    except RayError as e:
        raise InputError("--engine ray", f"a task failed on the Ray cluster: {_failure(e)}") from None


def _failure(e: BaseException) -> str:
    """What failed, from a Ray error's text: the last `Name: message` line of the task's traceback
    (the cause, not Ray Data's wrapper), else the text's first line."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    causes = [
        line
        for line in lines
        if re.match(r"[A-Za-z_][\w.]*: \S", line) and not line.startswith("ray.exceptions.UserCodeException")
    ]
    return causes[-1] if causes else (lines[0] if lines else type(e).__name__)


def _scan_batch(batch: dict, work: Work) -> dict:
    """Ray Data's map over a batch of task numbers (one, `batch_size=1`): each shard scanned, its
    result pickled; a bad input in the shard is returned as its InputError's parts (raised by
    the caller as itself: Ray would carry it as a task failure, without its file and row)."""
    tasks = [int(i) for i in batch["task"]]
    results = []
    for i in tasks:
        try:
            done: object = scan_task(work, work.tasks[i])
        except InputError as e:
            done = (e.path, e.problem, e.where)
        results.append(pickle.dumps(done, protocol=5))
    return {"task": np.array(tasks, np.int64), "result": np.array(results, dtype=object)}
