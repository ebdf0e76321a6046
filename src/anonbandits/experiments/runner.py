"""Run tasks in this process, in local worker processes, or on a Dask cluster; same seeds, same table.

:func:`iter_results` yields results as runs finish and stops every backend promptly when its consumer
stops (Ctrl-C, an error, or closing the generator): queued runs are cancelled, local worker processes are
terminated and Dask futures are cancelled, so the runs already finished can still be saved.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from anonbandits import registry
from anonbandits.errors import ConfigError
from anonbandits.experiments.grid import Task

#: seconds to wait for a Dask scheduler before giving up (an unreachable one must fail fast)
SCHEDULER_TIMEOUT = 3


@dataclass(frozen=True)
class TaskResult:
    """A results-table row and the run's :class:`~anonbandits.registry.Result` (curve, label, records)."""

    row: dict[str, Any]
    result: registry.Result

    @property
    def curve(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.result.curve

    @property
    def label(self) -> str:
        return self.result.label or self.row["algorithm"]


def run_task(task: Task) -> TaskResult:
    """Run one task (its parameters are resolved already); the row holds algorithm, parameters, seed, the run's
    metrics and its wall time."""
    start = time.perf_counter()
    out = registry.get(task.algorithm).run(task.params, task.seed)
    wall = time.perf_counter() - start
    return TaskResult(row={"algorithm": task.algorithm, **task.params, "seed": task.seed, **out.metrics,
                           "wall_time": wall}, result=out)


def _run_indexed(item: tuple[int, Task]) -> tuple[int, TaskResult]:
    return item[0], run_task(item[1])


def _worker_init() -> None:
    # Only the parent reacts to Ctrl-C (a terminal sends it to the whole process group); it then
    # terminates the workers. SIGTERM must kill a worker, not run a handler inherited from the parent.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def iter_results(tasks: Sequence[Task], *, workers: int | None = None,
                 scheduler: str | None = None) -> Iterator[tuple[int, TaskResult]]:
    """Yield ``(index into tasks, result)`` as runs finish, in completion order.

    ``workers`` local worker processes (``None``: every core; ``1``: in this process), or the Dask cluster
    of ``scheduler`` (``tcp://host:port``; ``workers`` is then ignored). When the consumer stops early (an
    exception, ``KeyboardInterrupt`` or ``close()``), queued runs are cancelled and local worker processes
    terminated before control returns.
    """
    if not tasks:
        return
    if scheduler is not None:
        yield from _iter_dask(tasks, scheduler)
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(tasks) == 1:
        for i, task in enumerate(tasks):
            yield i, run_task(task)
        return
    pool = multiprocessing.get_context().Pool(min(workers, len(tasks)), initializer=_worker_init)
    try:
        yield from pool.imap_unordered(_run_indexed, enumerate(tasks))
    finally:
        pool.terminate()
        pool.join()


def _iter_dask(tasks: Sequence[Task], scheduler: str) -> Iterator[tuple[int, TaskResult]]:
    """:func:`iter_results` on the Dask cluster of ``scheduler``; :class:`ConfigError` within a few seconds when
    it cannot be reached."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ConfigError("--scheduler needs the 'distributed' package (pip install 'anonbandits[sim]')") from None
    try:
        client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
    except (OSError, ValueError, TypeError, TimeoutError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"--scheduler {scheduler}: cannot connect: {reason}") from None
    futures = []
    try:
        futures = client.map(run_task, list(tasks), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in as_completed(futures):
            yield index[fut.key], fut.result()
    finally:
        client.cancel(futures)
        client.close()


class Progress:
    """``total`` runs done so far (or another ``label``: ``rows``, ...) on ``stream`` (stderr by default): a
    tqdm bar on a terminal, otherwise plain lines after the first run, then every ``interval`` seconds (so
    logs and CI output get no carriage-return noise); nothing when not ``enabled``."""

    def __init__(self, total: int, *, stream: TextIO | None = None, interval: float = 10.0,
                 enabled: bool = True, label: str = "runs") -> None:
        self.total, self.done, self.label, self.interval, self.enabled = total, 0, label, interval, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.start = self.last = time.monotonic()
        self.bar = None
        if enabled and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit=label.rstrip("s"), leave=False, file=self.stream)

    def update(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update()
            return
        now = time.monotonic()
        # the first line tells how long one run takes; later ones come at most every `interval` seconds
        due = self.done == 1 or now - self.last >= self.interval
        if self.enabled and due and self.done < self.total:
            self.last = now
            print(f"{self.label}: {self.done}/{self.total} done, {now - self.start:.0f} s", file=self.stream,
                  flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def collect(tasks: Sequence[Task], finished: dict[int, TaskResult], *, workers: int | None = None,
            scheduler: str | None = None, progress: bool = True) -> None:
    """Run every task (``workers``, ``scheduler``: as in :func:`iter_results`), storing each result in
    ``finished[index]`` as soon as it completes, so after an exception or Ctrl-C ``finished`` still holds the
    runs done so far; ``progress`` on stderr (see :class:`Progress`)."""
    bar = Progress(len(tasks), enabled=progress)
    try:
        with closing(iter_results(tasks, workers=workers, scheduler=scheduler)) as results:
            for i, result in results:
                finished[i] = result
                bar.update()
    finally:
        bar.close()


def run_tasks(tasks: Sequence[Task], *, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True) -> list[TaskResult]:
    """Run every task and return the results in task order (arguments as in :func:`collect`).

    Each task seeds its own generator, so the table does not depend on the backend or on completion order.
    """
    finished: dict[int, TaskResult] = {}
    collect(tasks, finished, workers=workers, scheduler=scheduler, progress=progress)
    return [finished[i] for i in range(len(tasks))]
