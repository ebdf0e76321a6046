"""Every batch and epoch schedule of the bandit layer: when a learner stops to look at its data.

* static grids of BaSE (Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019) as run by
  Algorithm 1 of paper 000 (Section 2.2): ``0 = t_0 <= ... <= t_M = T`` depends only on T and M, so N learners
  run in lock-step. minimax ``t_m = floor(a^(2 - 2^(1-m)))`` with ``a = T^(1/(2 - 2^(1-M)))``; geometric
  ``t_m = floor(T^(m/M))``; arithmetic ``t_m = floor(m T / M)``; always ``t_M = T`` (tiny T: empty batches);
* the epochs of DP-SE (Sajed and Sheffet, "An Optimal Private Stochastic-MAB Algorithm based on an Optimal
  Private Stopping Rule", ICML 2019), used by papers 001, 003 (per agent) and 004;
* the exploration length of Algorithm 2 of paper 000 (explore-then-commit, Section 3.5);
* the per-arm sample counts of naive and median elimination (Even-Dar, Mannor, Mansour, COLT 2002), subroutines
  of paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019);
* the batches ``l(b) = base^b`` of paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits",
  ICLR 2023, Algorithm 1), and the checkpoint grids at which regret curves are recorded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import overload

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import EPSILONS_OR_INF, OPEN_UNITS, POSITIVE_INTS
from anonbandits.core.limits import MAX_GRID_POINTS
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import (
    COUNT,
    Rule,
    array_of,
    checks,
    int_between,
    is_integer,
    one_of,
)

GRIDS = ("minimax", "geometric", "arithmetic")


@checks(horizon=COUNT)
def default_batches(horizon: int) -> int:
    """The number of batches M = ceil(log log T), at least 2 (Lemma 1 of paper 000 uses M = log log T).

    Parameters
    ----------
    horizon : int
        The horizon T, at least 1.

    Returns
    -------
    int
        ``max(2, ceil(log(max(log T, 1))))``.

    Raises
    ------
    ConfigError
        If ``horizon`` is not an integer from 1 to 2^62.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Lemma 1).

    Examples
    --------
    >>> default_batches(100), default_batches(10**6)
    (2, 3)
    """
    return max(2, math.ceil(math.log(max(math.log(horizon), 1.0))))


@checks(horizon=COUNT, batches=int_between(1, MAX_GRID_POINTS))
@fill
def static_grid(kind: str, horizon: int, batches: int) -> np.ndarray:
    """The static grid ``[t_0, ..., t_M]`` of BaSE (int64, non-decreasing, ``t_0 = 0``, ``t_M = horizon``).

    minimax ``t_m = floor(a^(2 - 2^(1-m)))`` with ``a = T^(1/(2 - 2^(1-M)))``; geometric ``t_m = floor(T^(m/M))``;
    arithmetic ``t_m = floor(m T / M)``; always ``t_M = T`` (a tiny T gives empty batches).

    Parameters
    ----------
    kind : str
        One of :data:`GRIDS`: ``"minimax"``, ``"geometric"`` or ``"arithmetic"``.
    horizon : int
        The horizon T, at least 1.
    batches : int
        The number of batches M, from 1 to :data:`~anonbandits.core.limits.MAX_GRID_POINTS` (10^7).

    Returns
    -------
    numpy.ndarray
        The M + 1 grid points, int64.

    Raises
    ------
    ConfigError
        If ``kind`` is not a grid name, ``horizon`` is not an integer from 1 to 2^62 or ``batches`` not one from
        1 to 10^7.

    {{refs_gao2019_paper000}}
    Section 2.2.

    Examples
    --------
    >>> static_grid("minimax", 1000, 3).tolist()
    [0, 51, 372, 1000]
    >>> static_grid("arithmetic", 10, 4).tolist()
    [0, 2, 5, 7, 10]
    """
    # the registry calls its parameter grid; the library argument is kind
    if not (isinstance(kind, str) and kind in GRIDS):
        raise ConfigError(f"grid must be one of {', '.join(GRIDS)}, got kind={_shown(kind)}")
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


@overload
def epoch_length(active: int, epoch: int, beta: float, epsilon: float = ...) -> int: ...


@overload
def epoch_length(active: np.ndarray, epoch: int | np.ndarray, beta: float, epsilon: float = ...) -> np.ndarray: ...


@overload
def epoch_length(active: int | np.ndarray, epoch: np.ndarray, beta: float, epsilon: float = ...) -> np.ndarray: ...


@checks(active=POSITIVE_INTS, epoch=POSITIVE_INTS, beta=OPEN_UNITS, epsilon=EPSILONS_OR_INF)
@fill
def epoch_length(
    active: int | np.ndarray, epoch: int | np.ndarray, beta: float, epsilon: float = math.inf
) -> int | np.ndarray:
    """R_e: pulls of each active arm in epoch ``epoch`` (1-based) with ``active`` arms at its start.

    ``R_e = floor(max(32 ln(8 s e^2/beta) 4^e, 8 ln(4 s e^2/beta) 2^e / eps)) + 1`` with s = ``active``
    (Delta_e = 2^-e); SE is ``epsilon = inf`` (statistical term only). DP-SE of Sajed and Sheffet, used by
    paper 001, paper 004 and, per agent, by DP-MASE of paper 003. Vectorised over ``active`` and ``epoch``
    (an int for scalar arguments, an int64 array otherwise).

    Parameters
    ----------
    active : int or numpy.ndarray
        s, the number of arms active at the start of the epoch, at least 1.
    epoch : int or numpy.ndarray
        e, the epoch (1-based).
    beta : float or numpy.ndarray
        The failure probability, in (0, 1).
    epsilon : float or numpy.ndarray, optional
        The privacy parameter, in the range the privacy mechanisms support; the default ``math.inf`` gives SE
        (no privacy term).

    Returns
    -------
    int or numpy.ndarray
        R_e, an int for scalar arguments, an int64 array of the broadcast shape otherwise.

    Raises
    ------
    ConfigError
        If ``active`` or ``epoch`` is not a positive integer (or an array of them), ``beta`` is not in (0, 1),
        ``epsilon`` is neither ``inf`` nor in the supported range (entry by entry for arrays), the arguments'
        shapes do not broadcast together,
        or R_e is above 2^62 (an epoch far past any horizon: it would not fit in 64-bit integers).

    {{refs_sajed2019}}

    Examples
    --------
    >>> epoch_length(5, 1, 1 / 4_194_304, 0.5), epoch_length(10, 1, 0.5, 0.1)  # epoch 1 in papers 001 and 003
    (2425, 702)
    """
    s = np.asarray(active, dtype=float)
    e = np.asarray(epoch, dtype=float)
    try:
        with np.errstate(over="ignore"):  # an overflow to inf is refused below
            bound = np.maximum(
                32.0 * np.log(8.0 * s * e * e / beta) * 4.0**e,
                8.0 * np.log(4.0 * s * e * e / beta) * 2.0**e / epsilon,
            )
    except ValueError:  # numpy's only ValueError here: shapes that do not broadcast
        shapes = [np.shape(x) for x in (active, epoch, beta, epsilon)]
        raise ConfigError(
            f"active, epoch, beta and epsilon must have shapes that broadcast together, got {shapes}"
        ) from None
    # floor + 1 must fit in int64 (a larger R_e would wrap around to a negative length)
    if not np.all(bound < 2.0**62):
        raise ConfigError(
            f"epoch_length: R_e is above 2^62 at active={_shown(active)}, epoch={_shown(epoch)}, "
            f"beta={_shown(beta)}, epsilon={_shown(epsilon)}: a later epoch than any horizon reaches"
        )
    # The smallest integer strictly above the bound (floor + 1, as the DP-SE code of paper 004 computes it; paper
    # 001 gives no constants). Paper 003's Algorithm 4 prints a garbled formula whose ceiling we would take; the two
    # differ only when the bound is an integer, which it never is at the papers' parameters (a test scans
    # them), so one rule serves both and paper 003's reproduction is unchanged.
    out = np.floor(bound).astype(np.int64) + 1
    return int(out) if out.ndim == 0 else out


def parse_confidence(value: str | float, horizon: int) -> float:
    """The confidence beta of DP-SE's epochs (:func:`epoch_length`): ``"1/T"`` means 1/horizon (paper 001),
    otherwise a number in (0, 1) (paper 004: 0.1)."""
    if isinstance(value, str) and value.strip().replace(" ", "").upper() == "1/T":
        return 1.0 / horizon
    try:
        beta = float(value)
    except (TypeError, ValueError):
        beta = math.nan
    require(0 < beta < 1, "confidence", "'1/T' or a number in (0, 1)", value)
    return beta


def exploration_length(n_users: int, n_arms: int, C: int, horizon: int, scale: float = 10.0) -> float:
    """``T_exp = scale C^(2/3) K^(1/3) T^(2/3) (log NKT)^(1/3)`` rounds of exploration of Algorithm 2 of paper 000.

    Theorem 2 of the paper sets the scale to 10. Algorithm 2 explores for ``floor(T_exp / (2C+2))`` phases
    (at least one).

    Parameters
    ----------
    n_users : int
        N, the number of users.
    n_arms : int
        K, the number of arms.
    C : int
        The anonymity parameter.
    horizon : int
        The horizon T.
    scale : float, optional
        The constant in front of the formula. Default 10.0.

    Returns
    -------
    float
        T_exp, in rounds (not rounded).

    Raises
    ------
    ConfigError
        Called through :mod:`anonbandits.anonymous`, if an argument breaks its rule in
        :mod:`anonbandits.validation` (the core function itself does not check).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.5,
    Theorem 2).

    Examples
    --------
    >>> round(exploration_length(8, 2, 1, 2000), 1)
    4361.9
    """
    return (
        scale * C ** (2 / 3) * n_arms ** (1 / 3) * horizon ** (2 / 3) * math.log(n_users * n_arms * horizon) ** (1 / 3)
    )


def naive_elimination_pulls(eps: float, conf: float, arms: int) -> int:
    """Naive elimination's pulls of each of ``arms`` arms, ``ceil(4 / eps^2 log(2K / conf))`` (Even-Dar,
    Mannor, Mansour, COLT 2002, a subroutine of paper 002): then the empirical best is eps-optimal with
    probability at least ``1 - conf``."""
    return math.ceil(4.0 / eps**2 * math.log(2 * arms / conf))


def median_elimination_pulls(eps: float, conf: float, phase: int) -> int:
    """Median elimination's pulls of each arm in phase ``l`` (1-based; Even-Dar, Mannor,
    Mansour, COLT 2002, a subroutine of paper 002):
    ``ceil(4 log(3 / delta_l) / eps_l^2)`` with ``eps_l = eps/4 (3/4)^(l-1)`` and ``delta_l = conf / 2^l``."""
    eps_l = eps / 4 * 0.75 ** (phase - 1)
    delta_l = conf / 2.0**phase
    return math.ceil(4 * math.log(3 / delta_l) / eps_l**2)


def batch_length(base: int, batch: int) -> int:
    """``l(b) = base^b`` users per active arm in batch ``b`` (1-based) of Algorithm 1 of paper 004."""
    return base**batch


#: ``spacing`` of :func:`checkpoint_grid`.
SPACINGS = ("even", "log-even")

_ROUNDS = array_of("iu", "", size=1)
#: ``checkpoints`` of :func:`checkpoint_grid`: how many, or which rounds
CHECKPOINTS = Rule(
    lambda v: (is_integer(v) and 1 <= v <= MAX_GRID_POINTS) or (not is_integer(v) and _ROUNDS.test(v)),
    f"a number of rounds from 1 to {MAX_GRID_POINTS:.0e} (MAX_GRID_POINTS) or a non-empty 1-D array of rounds",
)


@checks(horizon=COUNT, checkpoints=CHECKPOINTS, spacing=one_of(*SPACINGS))
def checkpoint_grid(
    horizon: int, checkpoints: int | Sequence[int] | np.ndarray = 200, *, spacing: str = "even"
) -> np.ndarray:
    """Rounds at which the cumulative regret is recorded.

    Parameters
    ----------
    horizon : int
        The last round T, at least 1.
    checkpoints : int or sequence of int or numpy.ndarray, optional
        The number of rounds wanted (default 200, at most :data:`~anonbandits.core.limits.MAX_GRID_POINTS`),
        or the rounds themselves (each in [1, T]; sorted and deduplicated here).
    spacing : str, optional
        For a number n of rounds: ``"even"`` (the default), n evenly spaced rounds ending at T; ``"log-even"``,
        half of them log-spaced from 1 (the early behaviour a log-scale plot shows) and half evenly spaced, about
        n rounds in all after merging duplicates (paper 004's figures).

    Returns
    -------
    numpy.ndarray
        The sorted distinct rounds, int64, each in [1, T].

    Raises
    ------
    ConfigError
        If ``horizon`` is not an integer from 1 to 2^62, ``checkpoints`` is neither an integer from 1 to
        ``MAX_GRID_POINTS`` nor a non-empty 1-D array of integers in [1, T], or ``spacing`` is unknown.

    References
    ----------
    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023 (the log-even grid
    of its figures).

    Examples
    --------
    >>> checkpoint_grid(100, 4).tolist()
    [25, 50, 75, 100]
    >>> checkpoint_grid(100, 4, spacing="log-even").tolist()
    [1, 50, 100]
    """
    if np.isscalar(checkpoints):
        n = int(np.asarray(checkpoints))  # an int or a numpy integer (the checks above)
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
        raise ConfigError(f"checkpoints: checkpoint rounds must lie in [1, {horizon}], got {_shown(checkpoints)}")
    return grid


def ftnl_epoch_length(epoch: int) -> int:
    """Rounds ``2^s`` of epoch ``s`` (0-based) of Follow-the-Noisy-Leader (Hu, Huang, Mehta, "Near-Optimal
    Algorithms for Private Online Learning in a Stochastic Environment", arXiv, Algorithm 2): epoch 0 is round 1."""
    return 2**epoch
