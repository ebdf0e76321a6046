"""What moves in paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019),
Sec. 2 and 5, around one bandit instance, and who plays.

* :class:`MeansSchedule`: the arms' means as a function of the global time step ``t`` (1-based) over one instance
  shared by every player (:class:`~anonbandits.envs.instances.MultiUserInstance`: its means and reward model;
  Bernoulli by default, the paper not stating the law): stationary (Problems 1 and 2 of Sec. 5.1), drifting
  (Problem 3: every arm but the initial best loses ``drift`` per global step, clipped at 0) or switching once
  (``means_after`` from step ``switch_at`` on: a switch of the best arm, the case DSER4 of Sec. 4 is for). Its
  rewards are drawn through the direct channel.
* :func:`activity_sampler`: draws from the player distribution ``P_x``: ``uniform``
  (Problem 1), ``skewed`` (Problem 2: half of the players generate 80% of the events) or any probability vector.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from anonbandits._deprecated import moved
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.channels.direct import DirectChannel
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError, require
from anonbandits.multiagent.shared import SKEWED_SHARE, _activity_probabilities
from anonbandits.validation import (
    FINITE_ARRAY,
    INSTANCE,
    NONNEGATIVE_COUNT,
    NONNEGATIVE_FINITE,
    RNG,
    VECTOR,
    array_of,
    checks,
)

#: ``sampler(mu, counts, rng) -> sums``: the sum of ``counts[i]`` rewards of mean ``mu[i]`` for every entry.
RewardSampler = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


@filled_dataclass(frozen=True)
class MeansSchedule:
    """Arm means ``mu_k(t)`` at global step ``t`` (1-based) over one shared ``instance``.

    Stationary (Problems 1 and 2), drifting (Problem 3) or switching once (the scenario of the DSER4 tests).
    Earlier releases also called it ``Environment``: that name still gives this class, with a
    ``DeprecationWarning``, until the next release.

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The instance at ``t = 0``: one row of means and its reward model (a name of
        :mod:`anonbandits.envs.rewards` or a ``RewardSampler``, e.g. an unclipped Gaussian for means outside
        [0, 1]).
    drift : float, optional
        Problem 3 (default 0: none): ``mu_k(t) = max(0, means_k - drift * t)`` for every arm but
        ``argmax(means)``.
    switch_at : int, optional
        From step ``switch_at`` on (``switch_at > 0``; default 0: never), the means are ``means_after``.
    means_after : numpy.ndarray or None, optional
        The means after ``switch_at`` (one per arm).

    Raises
    ------
    ConfigError
        If ``instance`` is not a :class:`~anonbandits.envs.instances.MultiUserInstance` of one row, ``drift``
        is not a finite number >= 0, ``switch_at`` is not an integer >= 0, ``switch_at > 0`` comes without
        ``means_after`` (or with both a drift and a switch), or ``means_after`` is not a vector of finite means
        of the instance's size.

    {{refs_paper002}}

    Examples
    --------
    >>> import numpy as np
    >>> schedule = MeansSchedule(MultiUserInstance(np.array([0.9, 0.5]), "bernoulli"), drift=0.1)
    >>> schedule.mean(np.array([0, 2])).tolist(), schedule.stationary
    ([[0.9, 0.5], [0.9, 0.3]], False)
    """

    instance: MultiUserInstance
    drift: float = 0.0
    switch_at: int = 0
    means_after: np.ndarray | None = None

    def __post_init__(self) -> None:
        INSTANCE.check("instance", self.instance)
        means = self.instance.row
        NONNEGATIVE_FINITE.check("drift", self.drift)
        NONNEGATIVE_COUNT.check("switch_at", self.switch_at)
        if self.switch_at > 0:
            if self.means_after is None:
                raise ConfigError("switch_at > 0 needs means_after")
            VECTOR.check("means_after", self.means_after)
            after = np.asarray(self.means_after, dtype=float)
            require(after.shape == means.shape, "means_after", f"{means.size} arms like means", after.size)
            if self.drift > 0:
                raise ConfigError("give either drift or switch_at, not both")
            object.__setattr__(self, "means_after", after)

    @property
    def stationary(self) -> bool:
        """Whether the means stay those of ``t = 0`` (no drift and no switch)."""
        return self.drift == 0 and self.switch_at == 0

    @property
    def means(self) -> np.ndarray:
        """The means at ``t = 0`` (the instance's parameters)."""
        return self.instance.row

    @property
    def reward(self) -> str | RewardSampler:
        """The instance's reward model."""
        return self.instance.model

    @property
    def arms(self) -> int:
        """The number of arms K."""
        return self.instance.n_arms

    @fill
    @checks(times=array_of("iuf", "a step or an array of steps >= 0", ndim=None, low=0))
    def mean(self, times: np.ndarray) -> np.ndarray:
        """Means of the arms at the given steps.

        Parameters
        ----------
        times : numpy.ndarray
            Global steps ``t`` (1-based), an array of any shape or a scalar.

        Returns
        -------
        numpy.ndarray
            Float means of shape ``times.shape + (K,)`` (a read-only broadcast view when stationary).

        Raises
        ------
        ConfigError
            For ``times`` that are not finite numbers >= 0 (text, NaN, a ragged list).

        {{refs_paper002}}

        Examples
        --------
        >>> import numpy as np
        >>> schedule = MeansSchedule(MultiUserInstance(np.array([0.4, 0.6, 0.5]), "bernoulli"), switch_at=5,
        ...                          means_after=np.array([0.7, 0.2, 0.5]))
        >>> schedule.mean(np.array([1, 5])).tolist()
        [[0.4, 0.6, 0.5], [0.7, 0.2, 0.5]]
        """
        t = np.asarray(times, dtype=float)[..., None]
        if self.switch_at > 0 and self.means_after is not None:  # (set whenever switch_at > 0: checked above)
            return np.where(t >= self.switch_at, self.means_after, self.means)
        if self.drift > 0:
            decayed = np.maximum(0.0, self.means - self.drift * t)
            keep = np.arange(self.arms) == int(np.argmax(self.means))
            return np.where(keep, self.means, decayed)
        return np.broadcast_to(self.means, t.shape[:-1] + (self.arms,))

    @fill
    @checks(t=NONNEGATIVE_COUNT)
    def best(self, t: int) -> int:
        """The best arm at step ``t``.

        Parameters
        ----------
        t : int
            The global step (1-based).

        Returns
        -------
        int
            The index of the arm with the largest mean at ``t``, the first one on ties.

        Raises
        ------
        ConfigError
            For a ``t`` that is not an integer >= 0 (a bool, a float, text).

        {{refs_paper002}}

        Examples
        --------
        >>> import numpy as np
        >>> instance = MultiUserInstance(np.array([0.4, 0.6, 0.5]), "bernoulli")
        >>> schedule = MeansSchedule(instance, switch_at=5, means_after=np.array([0.7, 0.2, 0.5]))
        >>> schedule.best(1), schedule.best(5)
        (1, 0)
        """
        return int(np.argmax(self.mean(np.array(t))))

    @fill
    @checks(t=NONNEGATIVE_COUNT, eps=NONNEGATIVE_FINITE)
    def eps_optimal(self, t: int, eps: float) -> np.ndarray:
        """Mask of the eps-optimal arms at step ``t`` (Definition 1 of Féraud, Alami, Laroche, ICML 2019).

        Parameters
        ----------
        t : int
            The global step (1-based).
        eps : float
            The tolerance: an arm is eps-optimal when its mean is at least the best mean minus ``eps``.

        Returns
        -------
        numpy.ndarray
            (K,) bool, True for the eps-optimal arms.

        Raises
        ------
        ConfigError
            For a ``t`` that is not an integer >= 0, or an ``eps`` that is not a finite number >= 0.

        {{refs_paper002}}

        Examples
        --------
        >>> from anonbandits.envs import MultiUserInstance
        >>> drifting = MeansSchedule(MultiUserInstance([0.4, 0.6, 0.5], "bernoulli"), drift=0.05)
        >>> drifting.eps_optimal(1, 0.2).tolist(), drifting.eps_optimal(3, 0.2).tolist()
        ([False, True, True], [False, True, False])
        """
        mu = self.mean(np.array(t))
        return mu >= mu.max() - eps

    @fill
    @checks(mu=FINITE_ARRAY, rng=RNG)
    def draw(self, mu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One reward of mean ``mu`` per entry, through the direct channel of the instance's reward model.

        The compiled kernel draws Bernoulli rewards itself and calls this for the other reward models.

        Parameters
        ----------
        mu : numpy.ndarray
            Means, one reward drawn for each entry.
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        numpy.ndarray
            Float rewards of the shape of ``mu``.

        Raises
        ------
        ConfigError
            For ``mu`` that is not a number or an array of finite numbers, or an ``rng`` that is not a generator.

        {{refs_paper002}}

        Examples
        --------
        >>> import numpy as np
        >>> schedule = MeansSchedule(MultiUserInstance(np.array([0.9, 0.5]), "bernoulli"))
        >>> schedule.draw(np.array([1.0, 0.0, 1.0]), np.random.default_rng(0)).tolist()
        [1.0, 0.0, 1.0]
        """
        return DirectChannel.of(self.instance, rng).draw(mu)


def activity_sampler(activity: str | np.ndarray, n: int) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``sample(size, rng)``: ``size`` i.i.d. players from ``P_x`` (player ids 0..n-1)."""
    p = _activity_probabilities(n, activity, skew="halves")
    dtype = np.int16 if n < 2**15 else np.int32
    if isinstance(activity, str) and activity == "uniform":
        return lambda size, rng: rng.integers(0, n, size, dtype=dtype)
    if isinstance(activity, str) and activity == "skewed":
        half = n // 2

        def skewed(size: int, rng: np.random.Generator) -> np.ndarray:
            frequent = rng.random(size) < SKEWED_SHARE
            return (rng.integers(0, half, size) + np.where(frequent, 0, half)).astype(dtype)

        return skewed
    return lambda size, rng: rng.choice(n, size, p=p).astype(dtype)


# ``Environment``, the schedule's second name in earlier releases: still found for one release, with a warning
__getattr__ = moved(
    __name__, {}, {"Environment": (MeansSchedule, "anonbandits.multiagent.decentralized.MeansSchedule")}
)
