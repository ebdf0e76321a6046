"""Run tasks in this process, in local worker processes, or on a Dask cluster; same seeds, same table.

:func:`iter_results` yields results as runs finish and stops every backend promptly when its consumer
stops (Ctrl-C, SIGTERM, an error, or closing the generator): queued runs are cancelled, local worker processes
are killed and reaped and Dask futures are cancelled, so the runs already finished can still be saved.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as connection_wait
from typing import Any, NamedTuple, TextIO, cast

import numpy as np

from anonbandits import registry
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.core.limits import allowing_large
from anonbandits.errors import AnonBanditsError, ConfigError
from anonbandits.experiments.grid import Task
from anonbandits.experiments.instance import recorded_params
from anonbandits.results import Result
from anonbandits.validation import BOOL, COUNT, Rule, checks, instance_of, optional, trusted
from anondecomp.errors import AnonDecompError

#: seconds to wait for a Dask scheduler before giving up (an unreachable one must fail fast)
SCHEDULER_TIMEOUT = 3


@filled_dataclass(frozen=True)
class TaskResult:
    """A results-table row and the run's :class:`~anonbandits.results.Result` (curve, label, records).

    Parameters
    ----------
    row : dict of str to object
        The table row: algorithm, parameters, seed, the run's metrics and its wall time (seconds).
    result : anonbandits.results.Result
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
    result: Result

    @property
    def curve(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self.result.curve

    @property
    def label(self) -> str:
        return self.result.label or self.row["algorithm"]


@fill
@checks(task=instance_of("anonbandits.experiments.grid.Task", "a Task (anonbandits.experiments.Task)"))
def run_task(task: Task) -> TaskResult:
    """Run one task in this process.

    Parameters
    ----------
    task : Task
        The run; its parameters are resolved already (:func:`~anonbandits.experiments.tasks_from_grid`,
        ``AlgorithmSpec.resolve``), so the run is trusted: its library calls do not check them again, as in
        :func:`anonbandits.simulate`.

    Returns
    -------
    TaskResult
        The row (algorithm, parameters, seed, the run's metrics and its wall time in seconds) and the result.
        Where a means file sets the instance, the row's ``users`` and ``arms`` are the file's, not the flags'
        (:func:`anonbandits.experiments.instance.recorded_params`).

    Raises
    ------
    ConfigError
        For a ``task`` that is not a :class:`Task`, an algorithm that is not registered (or a bad seed); whatever
        else the algorithm raises propagates.

    {{refs_experiments}}

    Examples
    --------
    >>> out = run_task(Task("dp-se", registry.get("dp-se").resolve({"horizon": 1000}), seed=0))
    >>> list(out.row)[:3], out.row["seed"], out.row["best_arm_found"], out.row["wall_time"] > 0
    (['algorithm', 'means', 'epsilon'], 0, 1, True)
    """
    start = time.perf_counter()
    spec = registry.get(task.algorithm)
    # --allow-large reaches every size check of the run, in this process; the parameters were checked when the
    # task was resolved, so the run's library calls are trusted (as a registry run's are)
    with allowing_large(task.allow_large), trusted():
        out = spec.run(task.params, task.seed)
    wall = time.perf_counter() - start
    params = recorded_params(task.algorithm, task.params)  # the instance that ran (a means file's sizes)
    return TaskResult(
        row={"algorithm": task.algorithm, **params, "seed": task.seed, **out.metrics, "wall_time": wall}, result=out
    )


class WorkerDied(RuntimeError):
    """A local worker process ended while it ran a task (killed by a signal, out of memory, ...)."""


#: What a failing run raises: the project's errors (a parameter refused by a run's own check, an anonymity
#: violation, a solver's refusal) and those of a bug or of the machine (a wrong type or value, an index or key out
#: of range, an arithmetic or assertion error, a recursion too deep, memory, an operating-system error). A worker
#: forwards them to its parent, which re-raises them (:func:`iter_results`), and ``anonbandits simulate`` reports
#: them in one line, keeping the finished runs; anything else ends the worker, reported as :class:`WorkerDied`.
RUN_ERRORS: tuple[type[Exception], ...] = (
    AnonBanditsError,
    AnonDecompError,
    ArithmeticError,
    AssertionError,
    AttributeError,
    LookupError,
    MemoryError,
    OSError,
    RuntimeError,
    TypeError,
    ValueError,
)


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
        reply: tuple[int, TaskResult | None, tuple[Exception, str] | None]
        try:
            reply = (i, run_task(task), None)
        except RUN_ERRORS as exc:  # forwarded: the parent re-raises it (anything else ends this worker: WorkerDied)
            reply = (i, None, (exc, "".join(traceback.format_exception(exc))))
        try:
            conn.send(reply)
        except OSError:
            return
        # the reply does not pickle (send pickles it whole before writing): a local object, a lock, a class
        # pickle cannot find, or one nested too deeply; its text is sent instead
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            what = reply[2][0] if reply[2] is not None else exc
            conn.send((i, None, (RuntimeError(f"{type(what).__name__}: {what}"), "")))


def iter_results(
    tasks: Sequence[Task],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    started: Callable[[], None] | None = None,
) -> Generator[tuple[int, TaskResult], None, None]:
    """Yield ``(index into tasks, result)`` as runs finish, in completion order.

    ``workers`` local worker processes (``None``: every core; ``1``: in this process), or the Dask cluster
    of ``scheduler`` (``tcp://host:port``; ``workers`` is then ignored). ``started`` is called once the backend
    is up (after the local worker processes are forked), before the first run ends: a thread started there
    (:class:`Progress`'s) is never copied into a forked worker. When the consumer stops early (an
    exception, ``KeyboardInterrupt`` or ``close()``), queued runs are cancelled and local worker processes
    killed and reaped before control returns. A run that raises re-raises here; a worker that dies raises
    :class:`WorkerDied`.
    """
    started = started or (lambda: None)
    if not tasks:
        return
    if scheduler is not None:
        yield from _iter_dask(tasks, scheduler, started)
        return
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(tasks) == 1:
        started()
        for i, task in enumerate(tasks):
            yield i, run_task(task)
        return
    yield from _iter_local(tasks, min(workers, len(tasks)), started)


class _Worker(NamedTuple):
    proc: multiprocessing.process.BaseProcess
    sent: deque[int]  # indices of the tasks sent to it and not answered yet, oldest (the one running) first


def _iter_local(
    tasks: Sequence[Task], workers: int, started: Callable[[], None]
) -> Generator[tuple[int, TaskResult], None, None]:
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
                proc = ctx.Process(target=_worker, args=(child, os.getpid()), daemon=True, name="anonbandits-worker")
                proc.start()
                procs.append(proc)
                conns.append(conn)
                child.close()  # from now on only the worker holds its end: the pipe ends when the worker does
                running[conn] = _Worker(proc, deque())
        started()
        for _ in range(_IN_FLIGHT):
            for conn in list(running):
                _dispatch(conn, queue, running)
        while running:
            for ready in connection_wait(list(running)):
                conn = cast(Connection, ready)  # wait returns the objects it was given: our connections
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
            for started_proc in procs:
                started_proc.kill()
            for started_proc in procs:
                started_proc.join(timeout=10)
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


def _iter_dask(
    tasks: Sequence[Task], scheduler: str, started: Callable[[], None]
) -> Generator[tuple[int, TaskResult], None, None]:
    """:func:`iter_results` on the Dask cluster of ``scheduler``; :class:`ConfigError` within a few seconds when
    it cannot be reached."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ConfigError("--scheduler needs the 'distributed' package (pip install 'anonbandits[sim]')") from None
    from anondecomp.errors import InvalidInputError
    from anondecomp.scale import probe_scheduler  # the one TCP probe, shared with decompose --scheduler

    try:  # a refused connection fails at once and says so, a silent host within the probe's timeout
        probe_scheduler(scheduler)
    except InvalidInputError as exc:  # "--scheduler ADDRESS: connection refused" (or no answer, or why not)
        reason = str(exc).removeprefix(f"--scheduler {scheduler}: ")
        raise ConfigError(f"--scheduler {scheduler}: cannot connect: {reason}") from None
    try:
        client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
    except (OSError, ValueError, TypeError, TimeoutError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"--scheduler {scheduler}: cannot connect: {reason}") from None
    futures = []
    try:
        futures = client.map(run_task, list(tasks), pure=False)
        started()
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in as_completed(futures):
            yield index[fut.key], fut.result()
    finally:
        client.cancel(futures)
        client.close()


#: seconds between two progress lines off a terminal, at most (whether or not a run ended meanwhile)
PROGRESS_INTERVAL = 10.0


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``: a time span as a progress line gives it."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Progress:
    """``total`` runs done so far (or another ``label``: ``rows``, ...) on ``stream`` (stderr by default).

    On a terminal, a tqdm bar. Otherwise (logs, CI, pipes) plain lines, with no carriage-return noise: one when
    the first run ends (how long one run takes), then one at least every ``interval`` seconds, whether or not a
    run ended meanwhile (a timer thread, started by :meth:`start`), each with the time elapsed and an estimate of
    the time left (``ETA``): ``runs: 3/30 done, 1 min 02 s elapsed, ETA 9 min 18 s``. The estimate is the mean
    time per finished run so far, times the runs left, less the time since the last one ended; before the first
    run ends there is none to give (``ETA after the first run``). Nothing once every run is done, and nothing
    at all when not ``enabled``. ``interval``: default :data:`PROGRESS_INTERVAL`; 0 prints a line at every run
    and starts no thread.
    """

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        interval: float | None = None,
        enabled: bool = True,
        label: str = "runs",
    ) -> None:
        interval = PROGRESS_INTERVAL if interval is None else interval
        self.total, self.done, self.label, self.interval, self.enabled = total, 0, label, interval, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.start_time = self.last = self.last_done = time.monotonic()
        self.bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if enabled and _isatty(self.stream):
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit=label.rstrip("s"), leave=False, file=self.stream)

    def start(self) -> None:
        """Start the timer thread of the lines off a terminal (idempotent); :func:`collect` calls it once the
        worker processes are forked."""
        if self.enabled and self.bar is None and self.interval > 0 and self._thread is None and self.done < self.total:
            self._thread = threading.Thread(target=self._tick, name=f"progress: {self.label}", daemon=True)
            self._thread.start()

    def update(self) -> None:
        """One more run is done."""
        with self._lock:
            self.done += 1
            now = self.last_done = time.monotonic()
            if self.bar is not None:
                self.bar.update()
                return
            # the first line tells how long one run takes; later ones come at most every `interval` seconds
            if self.done == 1 or now - self.last >= self.interval:
                self._line(now)

    def status(self, now: float | None = None) -> str:
        """The line off a terminal: ``runs: 3/30 done, 1 min 02 s elapsed, ETA 9 min 18 s``."""
        now = time.monotonic() if now is None else now
        if self.done:
            per_run = (self.last_done - self.start_time) / self.done
            eta = duration(per_run * (self.total - self.done) - (now - self.last_done))
        else:
            eta = f"after the first {self.label.rstrip('s')}"
        return f"{self.label}: {self.done}/{self.total} done, {duration(now - self.start_time)} elapsed, ETA {eta}"

    def _line(self, now: float) -> None:
        if not self.enabled or self.done >= self.total:
            return
        self.last = now
        try:  # one write per line: the timer thread's lines and the main thread's never interleave
            self.stream.write(self.status(now) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr: progress is not worth an error
            pass

    def _tick(self) -> None:
        while not self._stop.wait(max(0.0, self.last + self.interval - time.monotonic())):
            with self._lock:
                if self._stop.is_set():
                    return
                if time.monotonic() - self.last >= self.interval:
                    self._line(time.monotonic())

    def close(self) -> None:
        """Stop the display: the timer thread (waited for briefly) and the bar."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        if self.bar is not None:
            self.bar.close()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def collect(
    tasks: Sequence[Task],
    finished: dict[int, TaskResult],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
) -> None:
    """Run every task (``workers``, ``scheduler``: as in :func:`iter_results`), storing each result in
    ``finished[index]`` as soon as it completes, so after an exception or Ctrl-C ``finished`` still holds the
    runs done so far; ``progress`` on stderr (see :class:`Progress`)."""
    bar = Progress(len(tasks), enabled=progress)
    try:
        with closing(iter_results(tasks, workers=workers, scheduler=scheduler, started=bar.start)) as results:
            for i, result in results:
                finished[i] = result
                bar.update()
    finally:
        bar.close()


@fill
@checks(
    tasks=Rule(
        lambda v: isinstance(v, list | tuple) and all(isinstance(t, Task) for t in v),
        "a list or tuple of Task (anonbandits.experiments.Task)",
    ),
    workers=optional(COUNT),
    scheduler=optional(Rule(lambda v: isinstance(v, str) and v != "", "a scheduler address (tcp://host:port)")),
    progress=BOOL,
)
def run_tasks(
    tasks: Sequence[Task], *, workers: int | None = None, scheduler: str | None = None, progress: bool = True
) -> list[TaskResult]:
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
        For ``tasks`` that are not a list or tuple of :class:`Task`, ``workers`` that is not ``None`` or a
        positive integer, a ``scheduler`` that is not ``None`` or an address, ``progress`` that is not a bool;
        when the Dask scheduler cannot be reached, or the ``distributed`` package is missing.
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
