"""Bandit instances, one model for every family: an N x K matrix of reward parameters, a reward model, and what
follows from them (true means, optimal arms, gaps, user clusters). N users each with their own means (paper 000,
*Anonymous Bandits for Multi-User Systems*, NeurIPS 2022, Section 2.1: the *user-cluster* assumption U says
that every arm is the optimal arm of at least U users), or one row shared by every learner or agent (N = 1: the
single-learner and multi-agent families). What moves over time or decides who plays (paper 002's drift and switch,
the agents' activity) is not instance data: :class:`anonbandits.multiagent.decentralized.environment.MeansSchedule`
and :func:`anonbandits.multiagent.shared.activity_probabilities` take an instance.

How :func:`clustered_instance` generates an instance (the project's documented choice; the paper's
simulation settings are not in its text):

1. Optimal arms. ``cluster = U > 0``: a random permutation of the users gives the first U users arm 0, the
   next U arm 1, ..., so every arm is optimal for at least U users (needs N >= K*U); each of the remaining
   N - K*U users gets a uniformly random optimal arm. ``cluster = 0``: balanced, ``floor(N/K)`` per arm plus
   the remainder at random (so U = floor(N/K)).
2. Means. For user i with optimal arm j*(i), the K-1 other means are i.i.d. Uniform(``low``, ``high - gap``), and
   ``mu[i, j*(i)] = max_{j != j*(i)} mu[i, j] + gap``: every user's gap between its best and second-best arm
   is exactly ``gap`` (before the reward model); the other gaps are larger.
3. Rewards. ``bernoulli``: the means above. ``gaussian``: ``clip(N(mu, 0.5^2), 0, 1)``, whose true mean
   (:func:`anonbandits.envs.rewards.model_means`) is an increasing function of mu, so the optimal arms are
   unchanged but the gaps shrink; regret is always measured against the true (model) means.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonbandits.core.limits import MAX_INSTANCE_CELLS, check_size
from anonbandits.envs.rewards import BOUNDED_MODELS, GAUSSIAN_SIGMA, REWARD_MODELS, model_means
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import (
    BOOL,
    FINITE,
    INTEGER,
    NONNEGATIVE_COUNT,
    POSITIVE_FINITE,
    RNG,
    RULES,
    array_of,
    checks,
)

MEANS_LOW, MEANS_HIGH = 0.1, 0.9
#: one round's arms: (N,) or (n, N) integer arm indices (their range is the instance's, checked by the method)
ASSIGNMENTS = array_of("iu", "(N,) or (n, N) integer arm indices", ndim=None)
#: The reward models the anonymous family offers (its channel's sums are exact for every model).
INSTANCE_REWARDS = ("bernoulli", "gaussian")


@dataclass(frozen=True, eq=False)
class MultiUserInstance:
    """N users (or learners, agents) x K arms with a reward model.

    Parameters
    ----------
    mu : array_like
        (N, K) parameters of the reward distributions (the Bernoulli means, or the Gaussian centres); a (K,)
        vector is one row shared by every learner (N = 1). Stored as an (N, K) float array.
    model : str or callable, optional
        A reward model of ``anonbandits.envs.REWARD_MODELS`` (default ``"bernoulli"``), or a callable
        ``sums(mu, counts, rng)`` (then ``mu`` is taken as the true means unless ``expected`` says otherwise).
    sigma : float, optional
        Standard deviation of the Gaussian models; default 0.5.
    name : str, optional
        A label for tables (paper 003's ``problem1``, ``problem2``); default ``"custom"``.
    expected : array_like, optional
        (N, K) or (K,) true expected rewards, when they are not the model's (a callable model's); default
        ``None``: the model's means.

    Attributes
    ----------
    means : numpy.ndarray
        (N, K) true expected rewards under ``model`` (what pseudo-regret is measured against).
    optimal : numpy.ndarray
        (N,) each user's optimal arm (argmax of ``means``).
    gaps : numpy.ndarray
        (N, K) ``means[i].max() - means[i, j]``; the regret of one round of user i on arm j.
    n_users : int
        N, the number of users (rows).
    n_arms : int
        K, the number of arms (the property ``arms`` is K too).
    cluster_sizes : numpy.ndarray
        (K,) number of users whose optimal arm is j.
    min_cluster : int
        The largest U for which the user-cluster assumption holds.

    Raises
    ------
    ConfigError
        For ``mu`` that is not an (N, K) matrix or K-vector of numbers with K >= 2 (text, bools, a ragged list,
        a 3-D array), means outside [0, 1] for a bounded model (or not finite otherwise), an unknown model, a
        ``sigma`` that is not a finite positive number, a ``name`` that is not a str, or ``expected`` of the
        wrong size or not finite.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (N users with
    their own means; the user-cluster assumption of its Section 2.1).

    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023
    (one row of means shared by every agent; its Problem 2).

    Examples
    --------
    >>> inst = MultiUserInstance([11.0, 10.8, 10.4], "gaussian-unclipped", name="problem2")  # shared by all
    >>> inst.n_users, inst.best, inst.row.tolist()
    (1, 0, [11.0, 10.8, 10.4])
    >>> two = MultiUserInstance([[0.9, 0.5], [0.2, 0.6]])
    >>> two.optimal.tolist(), two.gaps.round(2).tolist(), float(two.round_regret([0, 0]).round(2))
    ([0, 1], [[0.0, 0.4], [0.4, 0.0]], 0.4)
    """

    mu: np.ndarray
    model: str | Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray] = "bernoulli"
    sigma: float = GAUSSIAN_SIGMA
    name: str = "custom"
    expected: np.ndarray | None = None
    # derived by __post_init__ (documented under Attributes): not arguments, not in the repr
    means: np.ndarray = field(init=False, repr=False)
    optimal: np.ndarray = field(init=False, repr=False)
    gaps: np.ndarray = field(init=False, repr=False)
    n_users: int = field(init=False, repr=False)
    n_arms: int = field(init=False, repr=False)
    cluster_sizes: np.ndarray = field(init=False, repr=False)
    min_cluster: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mu = _matrix("mu", self.mu)
        named = not callable(self.model)
        require(
            not named or (isinstance(self.model, str) and self.model in REWARD_MODELS),
            "reward",
            f"one of {', '.join(REWARD_MODELS)} or a callable sums(mu, counts, rng)",
            self.model,
        )
        bounded = named and self.model in BOUNDED_MODELS
        bad = np.argwhere(~((mu >= 0) & (mu <= 1)) if bounded else ~np.isfinite(mu))
        if bad.size:
            i, j = bad[0]
            where = f"mu[{j}]" if np.ndim(self.mu) == 1 else f"mu[{i}, {j}]"
            requirement = f"in [0, 1] for the {self.model} model" if bounded else "finite"
            raise ConfigError(f"mu must be {requirement}: {where} is {float(mu[i, j])!r}")
        POSITIVE_FINITE.check("sigma", self.sigma)
        if not isinstance(self.name, str):
            raise ConfigError(f"name must be a str, got {_shown(self.name)}")
        if self.expected is not None:
            expected = _matrix("expected", self.expected)
            require(
                expected.size == mu.size and bool(np.all(np.isfinite(expected))),
                "expected",
                f"finite, one entry per arm of mu ({mu.shape[1]})",
                self.expected,
            )
            means = expected.reshape(mu.shape)
        elif callable(self.model):
            means = mu
        else:
            means = model_means(self.model, mu, self.sigma)
        optimal = np.argmax(means, axis=1)
        sizes = np.bincount(optimal, minlength=mu.shape[1])
        derived = {
            "mu": mu,
            "means": means,
            "optimal": optimal,
            "gaps": means.max(axis=1, keepdims=True) - means,
            "n_users": mu.shape[0],
            "n_arms": mu.shape[1],
            "cluster_sizes": sizes,
            "min_cluster": int(sizes.min()),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @property
    def arms(self) -> int:
        """K, the number of arms."""
        return self.n_arms

    def _shared(self) -> None:
        if self.n_users != 1:
            raise ConfigError(f"this instance has {self.n_users} rows of means, not one shared by every learner")

    @property
    def row(self) -> np.ndarray:
        """(K,) the reward parameters of an instance shared by every learner (N = 1)."""
        self._shared()
        return self.mu[0]

    @property
    def best(self) -> int:
        """The best arm of a shared instance (the first one if several share the largest mean)."""
        self._shared()
        return int(self.optimal[0])

    @checks(arm=INTEGER)
    def is_best(self, arm: int) -> bool:
        """Whether ``arm`` has the largest true mean of a shared instance (ties count as correct).

        Parameters
        ----------
        arm : int
            An arm index; one outside ``0 .. K-1`` is not the best.

        Returns
        -------
        bool
            True when ``means[0, arm]`` is the largest true mean.

        Raises
        ------
        ConfigError
            For an instance with more than one row of means, or an ``arm`` that is not an integer (a bool, a
            float or text) or is beyond 2^62 in absolute value.

        Examples
        --------
        >>> MultiUserInstance([0.5, 0.7, 0.7]).is_best(2)
        True
        """
        self._shared()
        return bool(0 <= arm < self.n_arms and self.means[0, arm] == self.means[0].max())

    @checks(assignments=ASSIGNMENTS)
    def round_regret(self, assignments: np.ndarray) -> np.ndarray:
        """Pseudo-regret of one round of each assignment, summed over users.

        Parameters
        ----------
        assignments : array_like
            (N,) arm indices, one per user, or (n, N): n assignments.

        Returns
        -------
        numpy.float64 or numpy.ndarray
            The sum over users of ``gaps[i, assignment[i]]``: a scalar for one assignment, else (n,).

        Raises
        ------
        ConfigError
            For assignments that are not integers, not of shape (N,) or (n, N), or hold an arm outside
            ``0 .. K-1`` (-1 does not wrap to the last arm).

        Examples
        --------
        >>> inst = MultiUserInstance([[0.9, 0.5], [0.2, 0.6]])
        >>> inst.round_regret([[0, 1], [1, 0]]).round(2).tolist()
        [0.0, 0.8]
        """
        a = np.asarray(assignments)
        if a.ndim not in (1, 2) or a.shape[-1] != self.n_users or (a.size and (a.min() < 0 or a.max() >= self.n_arms)):
            raise ConfigError(
                f"assignments must be (N,) or (n, N) arm indices with N = {self.n_users} users and arms in "
                f"0 .. {self.n_arms - 1}, got {_shown(assignments)}"
            )
        return self.gaps[np.arange(self.n_users), a].sum(axis=-1)


def _matrix(name: str, value: Any) -> np.ndarray:
    """``value`` (an (N, K) matrix or a K-vector of numbers, K >= 2) as an (N, K) float array; a one-line
    :class:`ConfigError` naming ``name`` for anything else (text, bools, a ragged list, a 3-D array)."""
    array = None
    if not isinstance(value, str | bytes | Mapping) and value is not None:
        try:
            array = np.asarray(value)
        except (ValueError, TypeError):  # a ragged list
            array = None
    if array is None or array.dtype.kind not in "iuf" or array.ndim not in (1, 2) or array.size == 0:
        array = None
    elif array.shape[-1] < 2:
        array = None
    if array is None:
        raise ConfigError(f"{name} must be an (N, K) matrix or a K-vector of numbers with K >= 2, got {_shown(value)}")
    matrix = array.astype(float)
    return matrix[None, :] if matrix.ndim == 1 else matrix


@checks(
    n_users=RULES["users"],
    n_arms=RULES["arms"],
    cluster=NONNEGATIVE_COUNT,
    gap=POSITIVE_FINITE,
    rng=RNG,
    low=FINITE,
    high=FINITE,
    allow_large=BOOL,
)
def clustered_instance(
    n_users: int,
    n_arms: int,
    cluster: int,
    gap: float,
    rng: np.random.Generator,
    *,
    model: str = "bernoulli",
    low: float = MEANS_LOW,
    high: float = MEANS_HIGH,
    allow_large: bool = False,
) -> MultiUserInstance:
    """A random instance in which every arm is optimal for at least ``cluster`` users.

    See the module docstring for the exact construction.

    Parameters
    ----------
    n_users : int
        N, the number of users, at least 1.
    n_arms : int
        K, the number of arms, at least 2.
    cluster : int
        U, the minimum number of users per optimal arm (at most N / K); 0 means balanced (``floor(N/K)``).
    gap : float
        Every user's gap between its best and second-best mean, in (0, high - low).
    rng : numpy.random.Generator
        Source of randomness.
    model : str, optional
        ``"bernoulli"`` (default) or ``"gaussian"`` (clipped, sigma 0.5).
    low : float, optional
        Lower end of the range of the means; default 0.1.
    high : float, optional
        Upper end of the range of the means; default 0.9.
    allow_large : bool, optional
        Confirm N x K above :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS` (10^8). Default False.

    Returns
    -------
    MultiUserInstance
        The (N, K) instance.

    Raises
    ------
    ConfigError
        For N < 1, K < 2, a negative ``cluster``, ``cluster * K > N``, a ``gap`` outside (0, high - low), a
        range ``low``, ``high`` outside [0, 1] (or empty), an ``rng`` that is not a generator, or N x K above
        ``MAX_INSTANCE_CELLS`` without ``allow_large`` (refused before anything is drawn); each a bool, a float
        where an integer is meant, text or NaN included.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the
    user-cluster assumption U of its Section 2.1).

    Examples
    --------
    >>> import numpy as np
    >>> inst = clustered_instance(6, 3, 2, 0.2, np.random.default_rng(0))
    >>> inst.cluster_sizes.tolist(), inst.min_cluster
    ([2, 2, 2], 2)
    >>> bool(np.allclose(np.sort(inst.gaps, axis=1)[:, 1], 0.2))  # second-smallest gap of each user
    True
    """
    require(0 <= low < high <= 1, "low, high", "a range 0 <= low < high <= 1 of means", (low, high))
    check_size(
        "users x arms",
        int(n_users) * int(n_arms),
        MAX_INSTANCE_CELLS,
        "MAX_INSTANCE_CELLS",
        "cells of one instance: n_users x n_arms",
        allow_large=allow_large,
    )
    if cluster * n_arms > n_users:
        raise ConfigError(
            f"cluster {cluster} x arms {n_arms} exceeds users {n_users}: "
            "every arm cannot be optimal for that many users"
        )
    if not gap < high - low:
        raise ConfigError(f"gap must lie in (0, {high - low:g}), got {_shown(gap)}")
    u = cluster if cluster > 0 else n_users // n_arms
    optimal = np.empty(n_users, dtype=np.intp)
    order = rng.permutation(n_users)
    optimal[order[: u * n_arms]] = np.repeat(np.arange(n_arms), u)
    optimal[order[u * n_arms :]] = rng.integers(0, n_arms, size=n_users - u * n_arms)
    mu = rng.uniform(low, high - gap, size=(n_users, n_arms))
    rows = np.arange(n_users)
    mu[rows, optimal] = -np.inf
    mu[rows, optimal] = mu.max(axis=1) + gap
    return MultiUserInstance(mu=mu, model=model)
