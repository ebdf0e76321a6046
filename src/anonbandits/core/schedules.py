"""Every batch and epoch schedule of the bandit layer: when a learner stops to look at its data.

* static grids of BaSE (Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019) as run by
  Algorithm 1 of paper 000 (Section 2.2): ``0 = t_0 <= ... <= t_M = T`` depends only on T and M, so N learners
  run in lock-step. minimax ``t_m = floor(a^(2 - 2^(1-m)))`` with ``a = T^(1/(2 - 2^(1-M)))``; geometric
  ``t_m = floor(T^(m/M))``; arithmetic ``t_m = floor(m T / M)``; always ``t_M = T`` (tiny T: empty batches);
* the epochs of DP-SE (Sajed and Sheffet, "An Optimal Private Stochastic-MAB Algorithm based on an Optimal
  Private Stopping Rule", ICML 2019), used by papers 001, 003 (per agent) and 004;
* the batches ``l(b) = base^b`` of paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits",
  ICLR 2023, Algorithm 1), and the checkpoint grids at which regret curves are recorded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from anonbandits.errors import ConfigError, require

GRIDS = ("minimax", "geometric", "arithmetic")


def default_batches(horizon: int) -> int:
    """M = ceil(log log T), at least 2 (Lemma 1 of paper 000 uses M = log log T); T >= 1."""
    return max(2, math.ceil(math.log(max(math.log(horizon), 1.0))))


def static_grid(kind: str, horizon: int, batches: int) -> np.ndarray:
    """The grid ``[t_0, ..., t_M]`` (int64, non-decreasing, ``t_0 = 0``, ``t_M = horizon``)."""
    require(kind in GRIDS, "grid", f"one of {', '.join(GRIDS)}", kind)
    require(horizon >= 1, "grid horizon", "at least 1", horizon)
    require(batches >= 1, "batches", "at least 1", batches)
    m = np.arange(1, batches + 1, dtype=float)
    if kind == "arithmetic":
        points = np.floor(m * horizon / batches)
    else:
        exponents = (2 - 2.0 ** (1 - m)) / (2 - 2.0 ** (1 - batches)) if kind == "minimax" else m / batches
        # exp(log T * e) with a tiny relative guard so exact integers are not floored one below
        points = np.floor(np.exp(math.log(horizon) * exponents) * (1 + 1e-12))
    grid = np.concatenate(([0], np.minimum(points, horizon))).astype(np.int64)
    grid[-1] = horizon
    return np.maximum.accumulate(grid)


def epoch_length(active: int | np.ndarray, epoch: int | np.ndarray, beta: float,
                 epsilon: float = math.inf) -> int | np.ndarray:
    """R_e: pulls of each active arm in epoch ``epoch`` (1-based) with ``active`` arms at its start.

    ``R_e = floor(max(32 ln(8 s e^2/beta) 4^e, 8 ln(4 s e^2/beta) 2^e / eps)) + 1`` with s = ``active``
    (Delta_e = 2^-e); SE is ``epsilon = inf`` (statistical term only). DP-SE of Sajed and Sheffet, used by
    paper 001, paper 004 and, per agent, by DP-MASE of paper 003. Vectorised over ``active`` and ``epoch``
    (an int for scalar arguments, an int64 array otherwise).

    Examples
    --------
    >>> epoch_length(5, 1, 1 / 4_194_304, 0.5), epoch_length(10, 1, 0.5, 0.1)  # spec tables of papers 001, 003
    (2425, 702)
    """
    s = np.asarray(active, dtype=float)
    e = np.asarray(epoch, dtype=float)
    bound = np.maximum(32.0 * np.log(8.0 * s * e * e / beta) * 4.0**e,
                       8.0 * np.log(4.0 * s * e * e / beta) * 2.0**e / epsilon)
    # The smallest integer strictly above the bound, as paper 001's spec states it (A9, from the DP-SE
    # reimplementation). Paper 003's spec (A2) takes the ceiling of the same garbled formula instead; the two
    # differ only when the bound is an integer, which it never is at the papers' parameters (a test scans
    # them), so one rule serves both and paper 003's reproduction is unchanged.
    out = np.floor(bound).astype(np.int64) + 1
    return int(out) if out.ndim == 0 else out


def batch_length(base: int, batch: int) -> int:
    """``l(b) = base^b`` users per active arm in batch ``b`` (1-based) of Algorithm 1 of paper 004."""
    return base**batch


#: ``spacing`` of :func:`checkpoint_grid`.
SPACINGS = ("even", "log-even")


def checkpoint_grid(horizon: int, checkpoints: int | Sequence[int] | np.ndarray = 200, *,
                    spacing: str = "even") -> np.ndarray:
    """Rounds at which the cumulative regret is recorded.

    Parameters
    ----------
    horizon : last round T.
    checkpoints : the number of rounds wanted, or the rounds themselves (sorted, each in [1, T]).
    spacing : for a number n of rounds: ``"even"``, n evenly spaced rounds ending at T; ``"log-even"``, half of
        them log-spaced from 1 (the early behaviour a log-scale plot shows) and half evenly spaced, about n
        rounds in all after merging duplicates (paper 004's figures).

    Examples
    --------
    >>> checkpoint_grid(100, 4).tolist()
    [25, 50, 75, 100]
    >>> checkpoint_grid(100, 4, spacing="log-even").tolist()
    [1, 50, 100]
    """
    if np.isscalar(checkpoints):
        n = int(checkpoints)
        require(n >= 1, "checkpoints", "at least 1", checkpoints)
        if spacing == "even":
            grid = np.linspace(horizon / n, horizon, n)
        elif spacing == "log-even":
            half = max(1, n // 2)
            rest = max(1, n - half)
            grid = np.concatenate([np.geomspace(1, horizon, half), np.linspace(horizon / rest, horizon, rest)])
        else:
            raise ConfigError(f"spacing must be one of {', '.join(SPACINGS)}, got {spacing!r}")
        return np.unique(np.clip(np.round(grid), 1, horizon).astype(np.int64))
    grid = np.unique(np.asarray(checkpoints, dtype=np.int64))
    if grid.size == 0 or grid[0] < 1 or grid[-1] > horizon:
        raise ConfigError(f"checkpoint rounds must lie in [1, {horizon}]")
    return grid
