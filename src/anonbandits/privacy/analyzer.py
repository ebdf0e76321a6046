"""The analyzer A of the distributed protocol, with the underflow correction (spec distributed-dp.md, Sec. 2.3).

Given the SecAgg output ``yhat = (sum_i xhat_i + sum_i eta_i) mod m`` with ``m = n g + 2 tau + 1``, the
analyzer returns ``(yhat - m)/g`` if ``yhat > n g + tau`` (the noisy sum was negative and wrapped) and
``yhat/g`` otherwise. Whenever ``|sum_i eta_i| <= tau`` the result equals ``(sum xhat + sum eta)/g``
exactly (proof of Theorem 1 in paper 004); beyond that range the modular wrap corrupts it.
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import ConfigError


def modulus(n: int, g: int, tau: int) -> int:
    """``m = n g + 2 tau + 1``: the smallest modulus for which the analyzer is exact on ``|noise| <= tau``."""
    return int(n) * int(g) + 2 * int(tau) + 1


def analyze(yhat: np.ndarray | int, n: int, g: int, tau: int, m: int) -> np.ndarray:
    """Private estimate ``z`` of ``sum_i x_i`` from SecAgg output(s) ``yhat`` in {0, ..., m-1} (vectorised)."""
    if m < modulus(n, g, tau):
        raise ConfigError(f"modulus m={m} is smaller than n g + 2 tau + 1 = {modulus(n, g, tau)}")
    y = np.asarray(yhat, dtype=np.int64)
    if np.any((y < 0) | (y >= m)):
        raise ConfigError("SecAgg outputs must lie in {0, ..., m-1}")
    wrapped = y > int(n) * int(g) + int(tau)
    return np.where(wrapped, (y - m) / g, y / g)
