"""Run tasks in this process, in local worker processes, or on a Dask cluster; same seeds, same table."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from anonbandits import registry
from anonbandits.experiments.grid import Task


@dataclass(frozen=True)
class TaskResult:
    """A results-table row, plus the run's curve (if any) and the label its line is drawn under."""

    row: dict[str, Any]
    curve: tuple[np.ndarray, np.ndarray] | None
    label: str


def run_task(task: Task) -> TaskResult:
    """Run one task; the row holds algorithm, parameters, seed, the run's metrics and its wall time."""
    spec = registry.get(task.algorithm)
    start = time.perf_counter()
    out = spec.run(task.params, task.seed)
    wall = time.perf_counter() - start
    row = {"algorithm": task.algorithm, **task.params, "seed": task.seed, **out.metrics, "wall_time": wall}
    return TaskResult(row=row, curve=out.curve, label=out.label or task.algorithm)


def run_tasks(tasks: Sequence[Task], *, workers: int | None = None, scheduler: str | None = None,
              progress: bool = True) -> list[TaskResult]:
    """Run every task and return the results in task order.

    Parameters
    ----------
    workers : number of local worker processes; ``None`` uses every core, ``1`` runs in this process.
    scheduler : address of a Dask scheduler (``tcp://host:port``); when given, tasks run on that cluster
        and ``workers`` is ignored.
    progress : show a progress bar over runs (on stderr).

    Each task seeds its own generator, so the table does not depend on the backend or on completion order.
    """
    bar = tqdm(total=len(tasks), desc="runs", unit="run", disable=not progress, leave=False)
    results: list[TaskResult | None] = [None] * len(tasks)
    try:
        if scheduler is not None:
            _run_dask(tasks, scheduler, results, bar)
        else:
            workers = workers or os.cpu_count() or 1
            if workers == 1 or len(tasks) == 1:
                for i, task in enumerate(tasks):
                    results[i] = run_task(task)
                    bar.update()
            else:
                with ProcessPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
                    futures = {pool.submit(run_task, t): i for i, t in enumerate(tasks)}
                    for fut in as_completed(futures):
                        results[futures[fut]] = fut.result()
                        bar.update()
    finally:
        bar.close()
    return results  # type: ignore[return-value]


def _run_dask(tasks: Sequence[Task], scheduler: str, results: list, bar: tqdm) -> None:
    from distributed import Client
    from distributed import as_completed as dask_completed

    with Client(scheduler) as client:
        futures = client.map(run_task, list(tasks), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in dask_completed(futures):
            results[index[fut.key]] = fut.result()
            bar.update()
