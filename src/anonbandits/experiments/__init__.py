"""Declarative experiment grids (instances x algorithms x seeds), run locally or on Dask; tables and plots."""

from anonbandits.experiments.grid import Task, count_runs, load_grid, tasks_from_grid
from anonbandits.experiments.plot import curves_figure, plot_curves
from anonbandits.experiments.runner import TaskResult, run_task, run_tasks
from anonbandits.experiments.table import write_table

__all__ = [
    "Task",
    "TaskResult",
    "count_runs",
    "curves_figure",
    "load_grid",
    "plot_curves",
    "run_task",
    "run_tasks",
    "tasks_from_grid",
    "write_table",
]
