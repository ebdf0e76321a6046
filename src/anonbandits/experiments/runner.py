"""Run tasks in this process, in local worker processes, or on a Dask cluster; same seeds, same table.

:func:`iter_results` yields results as runs finish and stops every backend promptly when its consumer
stops (Ctrl-C, SIGTERM, an error, or closing the generator): queued runs are cancelled, local worker processes
are killed and reaped and Dask futures are cancelled, so the runs already finished can still be saved.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as connection_wait
from typing import Any, NamedTuple, TextIO

import numpy as np

from anonbandits import registry
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.errors import ConfigError
from anonbandits.experiments.grid import Task

#: seconds to wait for a Dask scheduler before giving up (an unreachable one must fail fast)
SCHEDULER_TIMEOUT = 3


@filled_dataclass(frozen=True)
class TaskResult:
    """A results-table row and the run's :class:`~anonbandits.registry.Result` (curve, label, records).

    Parameters
    ----------
    row : dict of str to object
        The table row: algorithm, parameters, seed, the run's metrics and its wall time (seconds).
    result : anonbandits.registry.Result
        The run's result.

    Attributes
    ----------
    curve : tuple of numpy.ndarray or None
        The result's ``(x, y)`` curve, if any.
    label : str
        The result's label, else the algorithm's name.

    {{refs_experiments}}

    Examples
    --------
    >>> out = run_task(Task("dp-se", registry.get("dp-se").resolve({"horizon": 1000}), seed=0))
    >>> out.label, out.curve is not None, out.row["regret"] == out.result.metrics["regret"]
    ('dp-se (eps=0.5)', True, True)
    """

    row: dict[str, Any]
    result: registry.Result

    @property
    def curve(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.result.curve

    @property
    def label(self) -> str:
        return self.result.label or self.row["algorithm"]


@fill
def run_task(task: Task) -> TaskResult:
    """Run one task in this process.

    Parameters
    ----------
    task : Task
        The run; its parameters are resolved already.

    Returns
    -------
    TaskResult
        The row (algorithm, parameters, seed, the run's metrics and its wall time in seconds) and the result.

    Raises
    ------
    ConfigError
        For an algorithm that is not registered (or a bad seed); whatever else the algorithm raises
        propagates.

    {{refs_experiments}}

    Examples
    --------
    >>> out = run_task(Task("dp-se", registry.get("dp-se").resolve({"horizon": 1000}), seed=0))
    >>> list(out.row)[:3], out.row["seed"], out.row["best_arm_found"], out.row["wall_time"] > 0
    (['algorithm', 'means', 'epsilon'], 0, 1, True)
    """
    start = time.perf_counter()
    out = registry.get(task.algorithm).run(task.params, task.seed)
    wall = time.perf_counter() - start
    return TaskResult(row={"algorithm": task.algorithm, **task.params, "seed": task.seed, **out.metrics,
                           "wall_time": wall}, result=out)


class WorkerDied(RuntimeError):
    """A local worker process ended while it ran a task (killed by a signal, out of memory, ...)."""


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process, attached as its ``__cause__``."""

    def __str__(self) -> str:
        return self.args[0]


#: the signals that stop a run; held while worker processes are started or stopped, so that a signal arriving
#: then cannot leave a worker behind (it is delivered as soon as the set of workers is consistent again)
_STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
#: seconds a worker waits for its next task before checking that its parent is still alive
_ORPHAN_CHECK = 1.0
#: tasks sent to a worker ahead of its results: the one it runs and the next
_IN_FLIGHT = 2


@contextmanager
def _stop_signals_held() -> Iterator[None]:
    if not hasattr(signal, "pthread_sigmask"):  # not on Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker(conn: Connection, parent: int) -> None:
    """A worker process: run the ``(index, task)`` pairs ``conn`` sends, one at a time, and send back
    ``(index, result, None)`` or ``(index, None, (exception, traceback text))``; return on ``None`` or when the
    parent is gone."""
    # Only the parent reacts to Ctrl-C (a terminal sends it to the whole process group) and then kills the
    # workers; SIGTERM ends a worker at once (the parent keeps the finished runs), never runs an inherited handler.
    # The parent started this process with both signals held: they are set up before they are let in.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    while True:
        try:
            while not conn.poll(_ORPHAN_CHECK):
                if os.getppid() != parent:  # the parent was killed outright: nobody is waiting for results
                    return
            item = conn.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        i, task = item
        try:
            reply = (i, run_task(task), None)
        except Exception as exc:
            reply = (i, None, (exc, "".join(traceback.format_exception(exc))))
        try:
            conn.send(reply)
        except OSError:
            return
        except Exception as exc:  # the reply does not pickle (send pickles it whole before writing): send text
            what = reply[2][0] if reply[2] is not None else exc
            conn.send((i, None, (RuntimeError(f"{type(what).__name__}: {what}"), "")))


def iter_results(tasks: Sequence[Task], *, workers: int | None = None,
                 scheduler: str | None = None) -> Iterator[tuple[int, TaskResult]]:
    """Yield ``(index into tasks, result)`` as runs finish, in completion order.

    ``workers`` local worker processes (``None``: every core; ``1``: in this process), or the Dask cluster
    of ``scheduler`` (``tcp://host:port``; ``workers`` is then ignored). When the consumer stops early (an
    exception, ``KeyboardInterrupt`` or ``close()``), queued runs are cancelled and local worker processes
    killed and reaped before control returns. A run that raises re-raises here; a worker that dies raises
    :class:`WorkerDied`.
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
    yield from _iter_local(tasks, min(workers, len(tasks)))


class _Worker(NamedTuple):
    proc: multiprocessing.process.BaseProcess
    sent: deque[int]  # indices of the tasks sent to it and not answered yet, oldest (the one running) first


def _iter_local(tasks: Sequence[Task], workers: int) -> Iterator[tuple[int, TaskResult]]:
    """:func:`iter_results` on ``workers`` local processes.

    Each worker has its own pipe, holding its current task and the next one (so it never waits for this
    process between two runs); it gets another when it sends a result. Nothing is shared between workers: no
    queue and no lock that a killed worker could leave held. Stopping kills every worker (SIGKILL) and reaps it;
    this cannot block, whatever state the workers are in (already dead from a SIGTERM sent to the whole process
    group, or in the middle of a run).
    """
    ctx = multiprocessing.get_context()
    procs: list[multiprocessing.process.BaseProcess] = []
    conns: list[Connection] = []
    running: dict[Connection, _Worker] = {}
    queue = iter(enumerate(tasks))
    try:
        with _stop_signals_held():
            for _ in range(workers):
                conn, child = ctx.Pipe()
                proc = ctx.Process(target=_worker, args=(child, os.getpid()), daemon=True,
                                   name="anonbandits-worker")
                proc.start()
                procs.append(proc)
                conns.append(conn)
                child.close()  # from now on only the worker holds its end: the pipe ends when the worker does
                running[conn] = _Worker(proc, deque())
        for _ in range(_IN_FLIGHT):
            for conn in list(running):
                _dispatch(conn, queue, running)
        while running:
            for conn in connection_wait(list(running)):
                worker = running[conn]
                try:
                    k, result, error = conn.recv()
                except (EOFError, OSError):
                    raise _died(worker.proc, tasks[worker.sent[0]]) from None
                if error is not None:
                    exc, text = error
                    raise exc from (RemoteTraceback(text) if text else None)
                worker.sent.popleft()
                _dispatch(conn, queue, running)
                yield k, result
    finally:
        with _stop_signals_held():
            for proc in procs:
                proc.kill()
            for proc in procs:
                proc.join(timeout=10)
            for conn in conns:
                conn.close()


def _dispatch(conn: Connection, queue: Iterator[tuple[int, Task]], running: dict[Connection, _Worker]) -> None:
    """Send the next task to the worker of ``conn``; when none is left, retire the worker once it is idle."""
    worker = running[conn]
    item = next(queue, None)
    if item is None:
        if not worker.sent:
            del running[conn]
            with suppress(OSError):  # a worker that is gone need not be told to stop
                conn.send(None)
        return
    try:
        conn.send(item)
    except OSError:
        raise _died(worker.proc, item[1]) from None
    worker.sent.append(item[0])


def _died(proc: multiprocessing.process.BaseProcess, task: Task) -> WorkerDied:
    # When the whole process group got SIGTERM, this process got it too: its handler runs before the return
    # (at the next bytecode), so a worker killed that way stops the run as Terminated, not as this error.
    proc.join(timeout=1)
    code = proc.exitcode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited (code {code})"
    return WorkerDied(f"a worker process {how} while it ran {task.algorithm} with seed {task.seed}")


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


@fill
def run_tasks(tasks: Sequence[Task], *, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True) -> list[TaskResult]:
    """Run every task and return the results in task order.

    Each task seeds its own generator, so the table does not depend on the backend or on completion order.
    When the run stops early (an error, Ctrl-C), queued runs are cancelled and local worker processes killed
    before the exception propagates.

    Parameters
    ----------
    tasks : sequence of Task
        The runs.
    workers : int or None, optional
        Local worker processes; ``None`` (default): one per core; ``1``: in this process. Ignored with
        ``scheduler``.
    scheduler : str or None, optional
        Address of a Dask scheduler (``tcp://host:port``) to run the tasks on; default ``None``: local.
    progress : bool, optional
        Whether to report progress on stderr; default ``True``.

    Returns
    -------
    list of TaskResult
        One per task, in task order.

    Raises
    ------
    ConfigError
        When the Dask scheduler cannot be reached, or the ``distributed`` package is missing.
    WorkerDied
        When a local worker process dies while it runs a task; a task that raises re-raises its exception.

    {{refs_experiments}}

    Examples
    --------
    >>> from anonbandits.experiments import tasks_from_grid
    >>> tasks = tasks_from_grid({"seeds": 2, "runs": [{"algorithm": "dp-se", "horizon": [1000, 2000]}]})
    >>> results = run_tasks(tasks, workers=1, progress=False)
    >>> [(r.row["horizon"], r.row["seed"]) for r in results]
    [(1000, 0), (1000, 1), (2000, 0), (2000, 1)]
    """
    finished: dict[int, TaskResult] = {}
    collect(tasks, finished, workers=workers, scheduler=scheduler, progress=progress)
    return [finished[i] for i in range(len(tasks))]
