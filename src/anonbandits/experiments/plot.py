"""Mean curves with a band over seeds: one panel per quantity, one line per configuration.

* **Panels.** Runs are grouped by the quantity their curve plots (the y name of ``Result.curve_axes``): a grid
  mixing regret and arms-left curves gets two panels, never two scales on one axis.
* **Lines.** One line per configuration: the runs of one label whose parameters agree (the seeds of one
  configuration). A parameter that differs between runs of one label is named in the line's label
  (``anon-etc [C=5] (n=3)``; :func:`anonbandits.experiments.table.configuration_labels`).
* **Steps.** A count (arms left, users still exploring, the fraction of players holding one arm) changes at
  events and holds in between: each run's value at x is its last recorded value at or before x, the line is drawn
  with ``drawstyle="steps-post"`` and carries its hold points (the value before each change, at the change's x),
  so a count that falls from 60 to 2 at round 393,216 is drawn flat until that round, then down. The stored
  curves are not changed. Other curves (regret) are interpolated linearly between their points.
* **Bands.** A 95% normal band over seeds around the mean, clipped to the quantity's range (:data:`QUANTITIES`):
  regret >= 0, a fraction within [0, 1], arms left within [0, K], users within [0, N].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError
from anonbandits.experiments.runner import TaskResult
from anonbandits.experiments.table import configuration_labels, writable
from anonbandits.validation import PATH, Rule, checks, optional
from anondecomp.io import atomic_open


@dataclass(frozen=True)
class Quantity:
    """What a curve's y is: whether it is a step function, and its range.

    ``low`` is a number or ``None`` (unbounded); ``high`` a number, the results-table column holding each run's
    bound (``"arms"``: K, ``"users"``: N; where the column is empty, the largest value the runs' curves take, as a
    count starts at its bound), or ``None``.
    """

    step: bool
    low: float | None = None
    high: float | str | None = None


#: the quantity of every curve an algorithm registers (its ``curve_axes`` y name); another name is drawn as a
#: line with an unclipped band (tests/bandits/test_runner_output.py checks every registered name is here)
QUANTITIES: dict[str, Quantity] = {
    "cumulative pseudo-regret": Quantity(step=False, low=0.0),
    "cumulative pseudo-regret (experts)": Quantity(step=False, low=0.0),
    "arms left in the global set": Quantity(step=True, low=0.0, high="arms"),
    "users still exploring": Quantity(step=True, low=0.0, high="users"),
    "users still running": Quantity(step=True, low=0.0, high="users"),
    "fraction of players holding one arm": Quantity(step=True, low=0.0, high=1.0),
}
UNKNOWN = Quantity(step=False)


def _figure_format(path: Any) -> bool:
    """Whether ``path`` ends in an image format matplotlib writes (``.png``, ``.svg``, ``.pdf``, ...)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return Path(path).suffix[1:].lower() in FigureCanvasBase.get_supported_filetypes()


#: the runs to draw: a list or tuple of :class:`~anonbandits.experiments.TaskResult`
RESULTS = Rule(
    lambda v: isinstance(v, list | tuple) and all(isinstance(r, TaskResult) for r in v),
    "a list or tuple of TaskResult (anonbandits.experiments.run_tasks)",
)
#: an axis label, or ``None`` for the names the results give their curves
LABEL = optional(Rule(lambda v: isinstance(v, str), "a str"))


@fill
@checks(results=RESULTS, xlabel=LABEL, ylabel=LABEL)
def curves_figure(results: Sequence[TaskResult], *, xlabel: str | None = None, ylabel: str | None = None):
    """The figure :func:`plot_curves` saves: one panel per quantity, one line per configuration.

    Parameters
    ----------
    results : sequence of TaskResult
        The runs; those without a curve are left out.
    xlabel : str, optional
        Label of every panel's x axis; default ``None``: the names the runs' results give their curves
        (``Result.curve_axes``).
    ylabel : str, optional
        Label of every panel's y axis; default ``None``: the quantity's name.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not attached to pyplot): ``figure.axes`` holds one panel per quantity, in the order the runs
        first give it; each panel one line per configuration, labelled ``<label> [<varying parameters>] (n=<runs>)``,
        and its band.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For ``results`` that are not a list or tuple of :class:`TaskResult` or of which no
        run recorded a curve, or a label that is neither ``None`` nor a str.

    {{refs_experiments}}

    Examples
    --------
    >>> from anonbandits.experiments import run_tasks, tasks_from_grid
    >>> grid = {"seeds": 2, "runs": [{"algorithm": "dp-se", "horizon": 1000, "means": ["0.9,0.5", "0.9,0.8"]}]}
    >>> figure = curves_figure(run_tasks(tasks_from_grid(grid), workers=1, progress=False))
    >>> [line.get_label() for line in figure.axes[0].get_lines()]
    ['dp-se (eps=0.5) [means=0.9,0.5] (n=2)', 'dp-se (eps=0.5) [means=0.9,0.8] (n=2)']
    """
    from matplotlib.figure import Figure

    runs = [r for r in results if r.curve is not None]
    if not runs:
        raise ConfigError(f"results hold no run that recorded a curve to plot ({len(results)} runs)")
    labels = configuration_labels([r.row for r in runs], [r.label for r in runs])
    # panel (y name) -> line label -> runs, in the order the runs first give them
    panels: dict[str, dict[str, list[TaskResult]]] = {}
    for run, label in zip(runs, labels, strict=True):
        panels.setdefault(_axes(run)[1], {}).setdefault(label, []).append(run)
    figure = Figure(figsize=(7, 0.9 + 3.6 * len(panels)))
    axes = figure.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (name, lines) in zip(axes, panels.items(), strict=True):
        quantity = QUANTITIES.get(name, UNKNOWN)
        for label, group in lines.items():
            _draw(ax, group, quantity, f"{label} (n={len(group)})")
        xnames = dict.fromkeys(_axes(run)[0] for group in lines.values() for run in group)
        ax.set(xlabel=xlabel or " / ".join(xnames), ylabel=ylabel or name)
        if quantity.low is not None:
            ax.set_ylim(bottom=quantity.low)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    figure.tight_layout()
    return figure


@fill
@checks(
    results=RESULTS,
    path=Rule(
        lambda v: PATH.test(v) and _figure_format(v),
        "a file path ending in an image format (.png, .svg, .pdf, ...)",
    ),
    xlabel=LABEL,
    ylabel=LABEL,
)
def plot_curves(
    results: Sequence[TaskResult], path: str | Path, *, xlabel: str | None = None, ylabel: str | None = None
) -> Path:
    """Plot the mean of each configuration's curves with a 95% normal band over seeds and save to ``path``.

    One panel per quantity and one line per configuration (:func:`curves_figure`; the module docstring says how
    steps and bands are drawn). Curves of one configuration are evaluated on the union of their x values, so
    runs may record different checkpoints (e.g. a run stopped early). The file is written atomically, as
    tables are.

    Parameters
    ----------
    results : sequence of TaskResult
        The runs; those without a curve are left out.
    path : str or pathlib.Path
        The image; its extension gives the format (``.png``, ``.svg``, ``.pdf``). Missing parent directories
        are created.
    xlabel : str, optional
        Label of the x axes; default ``None``: the names the runs' results give their curves
        (``Result.curve_axes``).
    ylabel : str, optional
        Label of the y axes; default ``None``: as for ``xlabel``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For ``results`` that are not a list or tuple of :class:`TaskResult` or of which no
        run recorded a curve, a ``path`` that is not a str or a path object, has no image format's extension,
        or cannot be written (a directory, a device), or a label that is neither ``None`` nor a str.

    {{refs_experiments}}

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from anonbandits.experiments import run_tasks, tasks_from_grid
    >>> results = run_tasks(tasks_from_grid({"seeds": 2, "runs": [{"algorithm": "dp-se", "horizon": 1000}]}),
    ...                     workers=1, progress=False)
    >>> tmp = tempfile.TemporaryDirectory()
    >>> plot_curves(results, Path(tmp.name) / "regret.png").stat().st_size > 0
    True
    >>> tmp.cleanup()
    """
    import matplotlib

    matplotlib.use("Agg")  # a file, never a window
    return save_figure(curves_figure(results, xlabel=xlabel, ylabel=ylabel), path)


def _axes(run: TaskResult) -> tuple[str, str]:
    x, y = run.result.curve_axes or ("x", "y")
    return x, y


def _draw(ax, runs: Sequence[TaskResult], quantity: Quantity, label: str) -> None:
    """The mean of ``runs``' curves and its band, clipped to the quantity's range."""
    curves = [(np.asarray(cx, float), np.asarray(cy, float)) for cx, cy in (_curve(r) for r in runs)]
    x = np.unique(np.concatenate([cx for cx, _ in curves]))
    ys = np.stack([_held(x, cx, cy) if quantity.step else np.interp(x, cx, cy) for cx, cy in curves])
    mean = ys.mean(axis=0)
    half = 1.96 * ys.std(axis=0, ddof=1) / np.sqrt(len(ys)) if len(ys) > 1 else np.zeros_like(mean)
    low, high = quantity.low, _bound(quantity.high, runs, curves)
    lower = mean - half if low is None else np.maximum(mean - half, low)
    upper = mean + half if high is None else np.minimum(mean + half, high)
    if quantity.step:
        x, mean, lower, upper = hold_points(x, mean, lower, upper)
    (line,) = ax.plot(x, mean, label=label, drawstyle="steps-post" if quantity.step else "default")
    ax.fill_between(
        x, lower, upper, color=line.get_color(), alpha=0.2, linewidth=0, step="post" if quantity.step else None
    )


def _curve(run: TaskResult) -> tuple[np.ndarray, np.ndarray]:
    """The run's curve (``ValueError`` for a run without one: it has nothing to draw)."""
    if run.curve is None:
        raise ValueError(f"run {run.row.get('algorithm')!r} has no curve to draw")
    return run.curve


def _held(x: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    """A step curve's value at each ``x``: its last point at or before x (after every change recorded at x),
    its first value before its first point and its last one after its end."""
    return cy[np.clip(np.searchsorted(cx, x, side="right") - 1, 0, len(cy) - 1)]


def hold_points(x: np.ndarray, *ys: np.ndarray) -> tuple[np.ndarray, ...]:
    """A step function given at its change points, with the hold point before each change added:
    ``(x0, y0), (x1, y1)`` becomes ``(x0, y0), (x1, y0), (x1, y1)``, so that even a line drawn point to point
    holds each value until the next change.

    >>> [v.tolist() for v in hold_points(np.array([0, 393216]), np.array([60.0, 2.0]))]
    [[0, 393216, 393216], [60.0, 60.0, 2.0]]
    """
    return (np.repeat(x, 2)[1:], *(np.repeat(y, 2)[:-1] for y in ys))


def _bound(high: float | str | None, runs: Sequence[TaskResult], curves) -> float | None:
    """The upper end of the quantity's range for these runs: a number, or the largest bound their rows give
    in the column ``high`` (a count's start, the largest value of their curves, where no row gives one)."""
    if high is None or isinstance(high, int | float):
        return high
    given = [_number(r.row.get(high)) for r in runs]
    known = [v for v in given if v is not None]
    if given and len(known) == len(given):
        return max(known)
    return max(float(np.max(cy)) for _, cy in curves if len(cy))


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def save_figure(fig, path: str | Path) -> Path:
    """Save ``fig`` to ``path`` (format from the extension) atomically, as tables are written: a temporary
    file renamed into place, never over a device or FIFO (:func:`anondecomp.io.atomic_open`); missing parent
    directories are created. The figure is closed."""
    import matplotlib.pyplot as plt

    path = writable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_open(path, binary=True) as fh:
            fig.savefig(fh, format=path.suffix[1:].lower(), dpi=120)
    finally:
        plt.close(fig)
    return path
