"""Mean curve with a band over seeds, one line per label."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.experiments.runner import TaskResult
from anondecomp.io import atomic_open


@fill
def plot_curves(results: Sequence[TaskResult], path: str | Path, *, xlabel: str | None = None,
                ylabel: str | None = None) -> Path:
    """Plot the mean of each label's curves with a 95% normal band over seeds and save to ``path``.

    Curves of one label are interpolated onto the union of their x values, so runs may record different
    checkpoints (e.g. a run stopped early). The file is written atomically, as tables are.

    Parameters
    ----------
    results : sequence of TaskResult
        The runs; those without a curve are left out.
    path : str or pathlib.Path
        The image; its extension gives the format (``.png``, ``.svg``, ``.pdf``). Missing parent directories
        are created.
    xlabel : str, optional
        Label of the x axis; default ``None``: the names the runs' results give their curves
        (``Result.curve_axes``).
    ylabel : str, optional
        Label of the y axis; default ``None``: as for ``xlabel``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        When no run recorded a curve.

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

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[str, list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
    for r in (r for r in results if r.curve is not None):
        groups[r.label].append(r.curve)
    if not groups:
        raise ValueError("no run recorded a curve to plot")
    # the runs' own axis names; a grid mixing algorithms whose curves differ names them all ("a / b")
    named = [r.result.curve_axes or ("x", "y") for r in results if r.curve is not None]
    xlabel = xlabel or " / ".join(dict.fromkeys(a[0] for a in named))
    ylabel = ylabel or " / ".join(dict.fromkeys(a[1] for a in named))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, curves in sorted(groups.items()):
        x = np.unique(np.concatenate([np.asarray(c[0], float) for c in curves]))
        ys = np.stack([np.interp(x, np.asarray(cx, float), np.asarray(cy, float)) for cx, cy in curves])
        mean = ys.mean(axis=0)
        half = 1.96 * ys.std(axis=0, ddof=1) / np.sqrt(len(ys)) if len(ys) > 1 else np.zeros_like(mean)
        (line,) = ax.plot(x, mean, label=f"{label} (n={len(ys)})")
        ax.fill_between(x, mean - half, mean + half, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return save_figure(fig, path)


def save_figure(fig, path: str | Path) -> Path:
    """Save ``fig`` to ``path`` (format from the extension) atomically, as tables are written: a temporary
    file renamed into place, never over a device or FIFO (:func:`anondecomp.io.atomic_open`); missing parent
    directories are created. The figure is closed."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_open(path, binary=True) as fh:
            fig.savefig(fh, format=path.suffix[1:].lower(), dpi=120)
    finally:
        plt.close(fig)
    return path
