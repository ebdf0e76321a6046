"""The benchmarks' one confidence interval: the half-width of a 95% interval of a mean over runs."""

import numpy as np
from scipy import stats


def half_width(values: np.ndarray, *, axis: int = 0, normal: bool = False) -> np.ndarray | float:
    """Half-width of the 95% interval of the mean of ``values`` along ``axis``: Student t with n - 1 degrees of
    freedom, or the normal quantile 1.96 with ``normal`` (the older reproductions' tables use it); 0 for n = 1."""
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    if n < 2:
        return np.zeros_like(values.mean(axis=axis))
    q = 1.96 if normal else stats.t.ppf(0.975, n - 1)
    return q * values.std(axis=axis, ddof=1) / np.sqrt(n)
