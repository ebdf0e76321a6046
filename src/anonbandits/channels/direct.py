"""The direct feedback channel: exact sufficient statistics of i.i.d. rewards (DP-SE, Sajed and Sheffet,
ICML 2019, the baseline of papers 001 and 004), and the one path by which every non-anonymous driver draws rewards.

A driver hands over a demand (samples wanted per learner and arm, any shape) and gets the sums of that many
rewards and the counts: one draw per entry whatever its length (the sum of n Bernoulli(mu) rewards is one
Binomial(n, mu); :func:`anonbandits.envs.rewards.sum_rewards`). Drivers that decide after every reward take them
one by one (:meth:`DirectChannel.draw`), and paper 004's protocols the sums of their encodings
(:meth:`DirectChannel.encoded`).

:class:`DirectFeedback` is the direct channel as the multi-user drivers see it
(:class:`~anonbandits.channels.feedback.FeedbackChannel`): N users' batches answered with their exact sums, on a
clock and pseudo-regret books, each user taking its samples one a round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial as partial_fn
from typing import TYPE_CHECKING, Any, NamedTuple, Self

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels.feedback import ARMS, OPTIONS, ChannelOptions, RoundBooks, Served
from anonbandits.core.learners import UNIT_SIGMA2
from anonbandits.envs.rewards import (
    BOUNDED_MODELS,
    GAUSSIAN_SIGMA,
    REWARD_MODELS,
    draw_rewards,
    encoded_sums,
    sum_rewards,
)
from anonbandits.errors import ConfigError, _shown
from anonbandits.validation import (
    BOOL,
    COUNT,
    COUNT_MATRIX,
    INSTANCE,
    LEARNERS,
    MAX_DRAWS,
    NONNEGATIVE_COUNT,
    POSITIVE_FINITE,
    RNG,
    RULES,
    SIZE,
    Rule,
    array_of,
    checks,
    int_between,
)

if TYPE_CHECKING:
    from anonbandits.core.learners import BatchLearner
    from anonbandits.envs.instances import MultiUserInstance

#: ``sums(mu, counts, rng)``: the sum of ``counts[k]`` rewards of arm mean ``mu[k]`` for each k.
RewardSum = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]

#: a reward model of :mod:`anonbandits.envs.rewards` by name, or a block-sum sampler
REWARD = Rule(
    lambda v: callable(v) or (isinstance(v, str) and v in REWARD_MODELS),
    f"one of {', '.join(REWARD_MODELS)} or a callable sums(mu, counts, rng)",
)
#: reward parameters (an array of any shape up to 3-D), refused beyond a model's range by the channel
PARAMETERS = array_of("iuf", "a number or an array of finite numbers", ndim=None)
#: the arms' parameters of a channel: at least one
MEANS = array_of("iuf", "a non-empty array of finite numbers (..., K)", ndim=None, size=1)
#: arm indices (their upper bound, the number of arms, is the channel's)
INDICES = array_of("iu", "an integer or an array of arm indices (integers >= 0)", ndim=None, low=0)
#: numbers of rewards
NUMBERS = array_of("iu", "an integer or an array of non-negative integers", ndim=None, low=0)
#: the precision of randomized rounding: the encoding's pmf holds g + 1 values
PRECISION = int_between(1, MAX_DRAWS)


class _Batch(NamedTuple):
    sums: np.ndarray
    counts: np.ndarray


@fill
class Batch(_Batch):
    """What a channel returns for a demand: per-entry reward sums and sample counts (same shape).

    A named tuple, cheaper to build than a dataclass once per epoch.

    Parameters
    ----------
    sums : numpy.ndarray
        The sum of the rewards drawn for each entry of the demand.
    counts : numpy.ndarray
        The number of rewards in each sum (the demand itself).

    Raises
    ------
    ConfigError
        However built (``Batch(...)``, ``_make``, ``_replace``): for ``sums`` not an array of finite numbers,
        ``counts`` not an array of non-negative integers, or the two of different shapes.

    {{refs_sajed2019}}

    Examples
    --------
    >>> import numpy as np
    >>> batch = DirectChannel(np.array([0.0, 1.0]), "bernoulli", np.random.default_rng(0)).request(
    ...     np.array([0, 1]), np.array([5, 5]))
    >>> batch.sums.tolist(), batch.counts.tolist()
    ([0.0, 5.0], [5, 5])
    >>> Batch(np.array([1.0, np.nan]), np.array([2, 2]))
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: sums must be a number or an array of finite numbers, got array([ 1., nan])
    """

    __slots__ = ()

    @checks(sums=PARAMETERS, counts=NUMBERS)
    def __new__(cls, sums: np.ndarray, counts: np.ndarray) -> Batch:
        # the relation of the fields (the rules above are skipped inside the channel, which builds one per draw)
        if np.shape(sums) != np.shape(counts):
            raise ConfigError(f"sums must have the shape of counts {np.shape(counts)}, got {_shown(sums)}")
        return super().__new__(cls, sums, counts)

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Self:  # type: ignore[override]  # checked, however built
        return cls(*iterable)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**self._asdict(), **changes})


def _broadcast(names: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to, or the one-line refusal of the arguments ``names`` whose they are."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:  # numpy's refusal of shapes that do not broadcast
        raise ConfigError(f"{names} must broadcast together, got the shapes {', '.join(map(str, shapes))}") from None


def _parameters(name: str, reward: str | RewardSum, mu: np.ndarray) -> None:
    """Refuse the parameters ``mu`` (the argument ``name``) outside the reward model's range (a bounded model's
    means lie in [0, 1])."""
    if isinstance(reward, str) and reward in BOUNDED_MODELS and not np.all((mu >= 0) & (mu <= 1)):
        raise ConfigError(f"{name} must lie in [0, 1] (means of {reward} rewards), got {_shown(mu)}")


@fill
class DirectChannel:
    """Exact rewards of arms: the sums of i.i.d. rewards a demand asks for, one draw per entry.

    :meth:`request` returns the :class:`Batch` of a demand (the sum of ``counts[k]`` rewards of arm
    ``arms[k]``), :meth:`draw` single rewards, :meth:`encoded` the sums of randomized-rounding encodings
    of paper 004's protocols; :meth:`of` builds the channel of an instance.

    Parameters
    ----------
    means : numpy.ndarray
        (..., K) parameters of the arms (Bernoulli means or Gaussian centres), indexed by a demand's ``arms``.
    reward : str or callable
        A reward model of :mod:`anonbandits.envs.rewards`, or a callable ``sums(mu, counts, rng)`` returning
        the sum of ``counts[k]`` rewards of parameter ``mu[k]``.
    rng : numpy.random.Generator
        The source of every reward.
    sigma : float, optional
        Standard deviation of the Gaussian models (default ``anonbandits.envs.rewards.GAUSSIAN_SIGMA``).

    Raises
    ------
    ConfigError
        For ``means`` not a non-empty array of finite numbers (nor in [0, 1] for a bounded model: Bernoulli,
        clipped Gaussian, Beta), ``reward`` neither a model of :data:`anonbandits.envs.rewards.REWARD_MODELS`
        nor callable, ``rng`` not a generator or ``sigma`` not a finite positive number.

    {{refs_sajed2019}}

    Examples
    --------
    >>> import numpy as np
    >>> channel = DirectChannel(np.array([0.0, 1.0]), "bernoulli", np.random.default_rng(0))
    >>> channel.request(np.array([1, 1, 0]), np.array([2, 3, 4])).sums.tolist()
    [2.0, 3.0, 0.0]
    >>> channel.draw(np.array([1.0, 0.0])).tolist()
    [1.0, 0.0]
    """

    @checks(means=MEANS, reward=REWARD, rng=RNG, sigma=POSITIVE_FINITE)
    def __init__(
        self, means: np.ndarray, reward: str | RewardSum, rng: np.random.Generator, *, sigma: float = GAUSSIAN_SIGMA
    ) -> None:
        _parameters("means", reward, np.asarray(means))
        self.means = np.asarray(means, dtype=float)
        self.reward, self.sigma = reward, float(sigma)
        self._draw = self.sampler(reward, sigma)
        self._rng = rng

    @classmethod
    @checks(instance=INSTANCE, rng=RNG)
    def of(cls, instance: MultiUserInstance, rng: np.random.Generator) -> DirectChannel:
        """The channel of an instance shared by all learners (one row of means).

        The channel takes the instance's arm parameters, reward model and standard deviation.

        Parameters
        ----------
        instance : anonbandits.envs.MultiUserInstance
            An instance whose users share one row of means (:attr:`~anonbandits.envs.MultiUserInstance.row`).
        rng : numpy.random.Generator
            The source of every reward of the channel.

        Returns
        -------
        DirectChannel
            A channel on ``instance.row`` with the instance's reward model and ``sigma``.

        Raises
        ------
        ConfigError
            If ``instance`` is not a :class:`~anonbandits.envs.MultiUserInstance` whose users share one row of
            means, or ``rng`` not a generator.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs import MultiUserInstance
        >>> instance = MultiUserInstance(np.array([0.2, 0.9]), "bernoulli")
        >>> DirectChannel.of(instance, np.random.default_rng(0)).means.tolist()
        [0.2, 0.9]
        """
        if instance.n_users != 1:
            raise ConfigError(
                f"instance must have one row of means shared by every learner, got {instance.n_users} rows"
            )
        return cls(instance.row, instance.model, rng, sigma=instance.sigma)

    @staticmethod
    @checks(reward=REWARD, sigma=POSITIVE_FINITE)
    def sampler(reward: str | RewardSum, sigma: float = GAUSSIAN_SIGMA) -> RewardSum:
        """The block-sum sampler of ``reward``: the callable itself, or the named model's exact sums.

        Parameters
        ----------
        reward : str or callable
            A reward model of :mod:`anonbandits.envs.rewards`, or a callable ``sums(mu, counts, rng)``.
        sigma : float, optional
            Standard deviation of the Gaussian models (default ``anonbandits.envs.rewards.GAUSSIAN_SIGMA``).

        Returns
        -------
        callable
            ``sums(mu, counts, rng)``: the sum of ``counts[k]`` rewards of parameter ``mu[k]`` for every k.

        Raises
        ------
        ConfigError
            For ``reward`` neither a model of :data:`anonbandits.envs.rewards.REWARD_MODELS` nor callable, or
            ``sigma`` not a finite positive number.

        Examples
        --------
        >>> import numpy as np
        >>> sums = DirectChannel.sampler("bernoulli")
        >>> sums(np.array([1.0, 0.0]), np.array([5, 3]), np.random.default_rng(0)).tolist()
        [5.0, 0.0]
        """
        return reward if callable(reward) else lambda mu, counts, rng: sum_rewards(reward, mu, counts, rng, sigma)

    @checks(arms=INDICES, counts=NUMBERS)
    def request(self, arms: np.ndarray, counts: np.ndarray) -> Batch:
        """Draw ``counts[k]`` rewards of arm ``arms[k]`` for every k (arrays of one shape).

        Each entry is one draw of the exact sum.

        Parameters
        ----------
        arms : numpy.ndarray
            Integer arm indices into the last axis of :attr:`means`.
        counts : numpy.ndarray
            Number of rewards of each entry, of the shape of ``arms``.

        Returns
        -------
        Batch
            The sums of the demanded rewards and ``counts``.

        Raises
        ------
        ConfigError
            For ``arms`` not integers from 0 to K - 1 (K the arms of :attr:`means`), ``counts`` not non-negative
            integers of the shape of ``arms``, or (models drawn one by one) more rewards than
            :data:`~anonbandits.core.limits.MAX_REWARD_DRAWS`.

        Examples
        --------
        >>> import numpy as np
        >>> channel = DirectChannel(np.array([0.0, 1.0]), "bernoulli", np.random.default_rng(0))
        >>> batch = channel.request(np.array([0, 1]), np.array([4, 6]))
        >>> batch.sums.tolist(), batch.counts.tolist()
        ([0.0, 6.0], [4, 6])
        >>> channel.request(np.array([0, 2]), np.array([4, 6]))
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: arms must be arm indices from 0 to 1, got array([0, 2])
        """
        if np.shape(arms) != np.shape(counts):
            raise ConfigError(f"counts must have the shape of arms {np.shape(arms)}, got {_shown(counts)}")
        return Batch(self._draw(self._arms(arms), counts, self._rng), counts)

    def _arms(self, arms: np.ndarray) -> np.ndarray:
        """The parameters of ``arms``; an index past the last arm is refused (a negative one, by the rule)."""
        try:
            return self.means[arms]
        except IndexError:  # numpy's refusal of an index out of range: the one error indexing the arms raises
            raise ConfigError(f"arms must be arm indices from 0 to {len(self.means) - 1}, got {_shown(arms)}") from None

    @checks(mu=PARAMETERS, counts=NUMBERS)
    def sums(self, mu: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The sum of ``counts[k]`` rewards of parameter ``mu[k]`` for every k (arrays broadcast).

        Unlike :meth:`request`, the parameters are given directly, not as arms of :attr:`means`.

        Parameters
        ----------
        mu : numpy.ndarray
            Reward parameters (Bernoulli means or Gaussian centres).
        counts : numpy.ndarray
            Number of rewards summed for each entry, broadcast with ``mu``.

        Returns
        -------
        numpy.ndarray
            The sums, of the broadcast shape.

        Raises
        ------
        ConfigError
            For ``mu`` not finite numbers (in [0, 1] for a bounded model), ``counts`` not non-negative integers,
            the two of shapes that do not broadcast, or (models drawn one by one) more rewards than
            :data:`~anonbandits.core.limits.MAX_REWARD_DRAWS`.

        Examples
        --------
        >>> import numpy as np
        >>> channel = DirectChannel(np.array([0.5]), "bernoulli", np.random.default_rng(0))
        >>> channel.sums(np.array([1.0, 0.0, 1.0]), np.array([2, 7, 3])).tolist()
        [2.0, 0.0, 3.0]
        """
        _broadcast("mu and counts", np.shape(mu), np.shape(counts))
        _parameters("mu", self.reward, np.asarray(mu))
        return self._draw(mu, counts, self._rng)

    @checks(mu=PARAMETERS, size=SIZE)
    def draw(self, mu: np.ndarray, size: int | tuple[int, ...] | None = None) -> np.ndarray:
        """One reward of parameter ``mu`` per entry (``mu`` broadcast to ``size`` if given).

        The named model's draws one by one, or a callable's sums of one reward each.

        Parameters
        ----------
        mu : numpy.ndarray
            Reward parameters (Bernoulli means or Gaussian centres).
        size : int, tuple of int or None, optional
            Shape of the draws, ``mu`` broadcast to it; ``None`` (default): the shape of ``mu``.

        Returns
        -------
        numpy.ndarray
            The rewards, as floats.

        Raises
        ------
        ConfigError
            For ``mu`` not finite numbers (in [0, 1] for a bounded model), or ``size`` not ``None`` or a shape
            of at most :data:`~anonbandits.validation.MAX_DRAWS` (10^8) entries that ``mu`` broadcasts to.

        Examples
        --------
        >>> import numpy as np
        >>> channel = DirectChannel(np.array([0.5]), "bernoulli", np.random.default_rng(0))
        >>> channel.draw(np.array([0.0, 1.0]), size=(2, 2)).tolist()
        [[0.0, 1.0], [0.0, 1.0]]
        """
        if size is not None:
            shape = (size,) if not isinstance(size, tuple) else size
            if _broadcast("mu and size", np.shape(mu), shape) != shape:
                raise ConfigError(f"size must be a shape {np.shape(mu)} broadcasts to, got {_shown(size)}")
        _parameters("mu", self.reward, np.asarray(mu))
        if callable(self.reward):
            mu = np.asarray(mu, dtype=float) if size is None else np.broadcast_to(np.asarray(mu, dtype=float), size)
            return np.asarray(self.reward(mu, np.ones(mu.shape, np.int64), self._rng), dtype=float)
        return draw_rewards(self.reward, mu, self._rng, size, sigma=self.sigma)

    @checks(arms=ARMS, g=PRECISION, n=COUNT)
    def encoded(self, arms: np.ndarray, g: int, n: int) -> np.ndarray:
        """For each of ``arms``, the sum of the randomized-rounding encodings (precision ``g``) of ``n`` fresh rewards.

        Exact in law (paper 004, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023, Sec. 2.1;
        :func:`~anonbandits.envs.rewards.encoded_sums`; a named model of [0, 1] rewards).

        Parameters
        ----------
        arms : numpy.ndarray
            (m,) integer arm indices into the last axis of :attr:`means`.
        g : int
            The precision of randomized rounding.
        n : int
            The number of rewards (users) encoded and summed for each arm.

        Returns
        -------
        numpy.ndarray
            ``int64`` encoded sums, one per entry of ``arms``, each in ``[0, n g]``.

        Raises
        ------
        ConfigError
            If the channel's reward is not a bounded model of :mod:`anonbandits.envs.rewards` (a callable, or
            unclipped Gaussian rewards that no precision encodes), ``arms`` not (m,) integers from 0 to K - 1, ``g`` not
            an integer from 1 to :data:`~anonbandits.validation.MAX_DRAWS` (10^8: the encoding's pmf holds g + 1
            values), ``n`` not a positive integer, or ``n g`` past 2^62 (the sums are 64-bit integers).

        Examples
        --------
        >>> import numpy as np
        >>> channel = DirectChannel(np.array([0.0, 1.0]), "bernoulli", np.random.default_rng(0))
        >>> channel.encoded(np.array([0, 1]), 4, 10).tolist()
        [0, 40]
        """
        if not (isinstance(self.reward, str) and self.reward in BOUNDED_MODELS):
            raise ConfigError(
                f"encoded sums need a bounded reward model ({', '.join(BOUNDED_MODELS)}), the channel's is "
                f"{_shown(self.reward)}"
            )
        if g * n > 2**62:
            raise ConfigError(
                f"n x g must be at most 2^62 (the encoded sums are 64-bit integers), got n = {n}, g = {g}"
            )
        return encoded_sums(self.reward, self._arms(arms), g, n, self._rng, self.sigma)


def _direct_charges(
    demand: np.ndarray, gaps: np.ndarray, fill_gap: np.ndarray, room: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (lengths, rates) charged for one direct batch played with ``room`` rounds left: its stretches of
    :func:`_direct_segments`, cut at the horizon."""
    lengths, rates = _direct_segments(demand, gaps, fill_gap)
    before = np.cumsum(lengths) - lengths
    return np.clip(room - before, 0, lengths), rates


def _direct_segments(demand: np.ndarray, gaps: np.ndarray, fill_gap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, rates) of the stretches of constant per-round regret of one direct batch: user i plays arm 0
    ``demand[i, 0]`` rounds, then arm 1, ..., then its recommendation (regret ``fill_gap[i]``) to the batch's end."""
    ends = np.cumsum(demand, axis=1)
    last = ends[:, -1]
    pos = np.concatenate([(ends - demand).ravel(), ends.ravel(), last, np.full(last.size, last.max())])
    change = np.concatenate([gaps.ravel(), -gaps.ravel(), fill_gap, -fill_gap])
    bounds, at = np.unique(pos, return_inverse=True)
    rates = np.cumsum(np.bincount(at, weights=change, minlength=bounds.size))[:-1]
    return np.diff(bounds), rates


@fill
class DirectFeedback(RoundBooks):
    """The direct channel of N users' batched learners: exact reward sums, no anonymity.

    A batch lasts as long as its longest user: each user takes its samples arm by arm, one a round, then plays
    its recommendation until the batch ends; the rewards' sums are exact (:class:`DirectChannel`), a sample's
    variance proxy 1/4 (a reward in [0, 1]), and every reward is seen by its own user alone
    (``min_group_size`` 1). No group is released, so no privacy mechanism applies.

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The N x K means and reward model.
    horizon : int
        The most rounds charged, between 1 and 10^9.
    rng : numpy.random.Generator
        The source of every reward.

    Raises
    ------
    ConfigError
        If ``instance`` is not a :class:`~anonbandits.envs.MultiUserInstance`, ``horizon`` not an integer from 1
        to 10^9 or ``rng`` not a generator.

    {{refs_sajed2019}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> from anonbandits.envs.instances import MultiUserInstance
    >>> instance = MultiUserInstance(np.array([[0.9, 0.1]] * 2))
    >>> channel = DirectFeedback(instance, 1000, np.random.default_rng(0))
    >>> learners = EpochElimination(2, 2, confidence=0.1)
    >>> served = channel.serve_batch(learners, np.array([[3, 2], [1, 4]]), 1, partial=True)
    >>> served.rounds, channel.t, int(served.counts.sum()), channel.observations, channel.min_group_size
    (5, 5, 10, 10, 1)
    """

    name = "direct"
    requires_decomposition = False

    @checks(instance=INSTANCE, horizon=RULES["horizon"], rng=RNG)
    def __init__(self, instance: MultiUserInstance, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(instance, horizon)
        self._source = DirectChannel(instance.mu, instance.model, rng, sigma=instance.sigma)
        self._samples = 0
        self.variance_proxy = self.sample_variance(1)
        self.exposure: dict = {}

    @classmethod
    @checks(instance=INSTANCE, horizon=RULES["horizon"], rng=RNG, options=OPTIONS)
    def open(
        cls, instance: MultiUserInstance, horizon: int, rng: np.random.Generator, options: ChannelOptions
    ) -> DirectFeedback:
        """The direct channel of one run (``options`` give no decomposition and no mechanism here).

        Parameters
        ----------
        instance : anonbandits.envs.instances.MultiUserInstance
            The N x K means and reward model.
        horizon : int
            The most rounds charged.
        rng : numpy.random.Generator
            The source of every reward.
        options : ChannelOptions
            The driver's options; only a mechanism or an absence matters, and is refused.

        Returns
        -------
        DirectFeedback
            The channel, its clock at 0.

        Raises
        ------
        ConfigError
            If ``options`` has a privacy mechanism (it acts on released group sums) or an absence above 0 (absent
            users miss the blocks of the anonymous channel's assignments: there are none here), or for an argument
            of another type or out of range (as :class:`DirectFeedback` says; ``options`` not a
            :class:`ChannelOptions`).

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> DirectFeedback.open(MultiUserInstance(np.array([[0.9, 0.1]])), 10, np.random.default_rng(0),
        ...                     ChannelOptions()).variance_proxy
        0.25
        """
        if options.mechanism is not None:
            raise ConfigError(
                "options.mechanism must be None on the direct channel (a privacy mechanism acts on released group "
                f"sums: it needs the anonymous channel), got {_shown(options.mechanism)}"
            )
        if options.absence:
            raise ConfigError(
                "options.absence must be 0 on the direct channel (a user misses a block of the anonymous channel's "
                f"assignments: it has none), got {_shown(options.absence)}"
            )
        return cls(instance, horizon, rng)

    @staticmethod
    @checks(C=NONNEGATIVE_COUNT)
    def sample_variance(C: int) -> float:
        """1/4, the variance proxy of one reward in [0, 1].

        Parameters
        ----------
        C : int
            The anonymity parameter (it plays no part).

        Returns
        -------
        float
            0.25.

        Raises
        ------
        ConfigError
            If ``C`` is not an integer from 0 to 2^62.

        Examples
        --------
        >>> DirectFeedback.sample_variance(3)
        0.25
        """
        return UNIT_SIGMA2

    @staticmethod
    @checks(C=NONNEGATIVE_COUNT)
    def min_group(C: int) -> int:
        """1: every reward (or vote) reaches its reader alone.

        Parameters
        ----------
        C : int
            The anonymity parameter (it plays no part).

        Returns
        -------
        int
            1.

        Raises
        ------
        ConfigError
            If ``C`` is not an integer from 0 to 2^62.

        Examples
        --------
        >>> DirectFeedback.min_group(3)
        1
        """
        return 1

    @property
    def observations(self) -> int:
        """The rewards served."""
        return self._samples

    @property
    def min_group_size(self) -> int:
        """1: every reward is seen by its own user alone."""
        return 1

    @checks(learners=LEARNERS, demand=COUNT_MATRIX, batch=COUNT, partial=BOOL)
    def serve_batch(self, learners: BatchLearner, demand: np.ndarray, batch: int, *, partial: bool) -> Served | None:
        """Play one batch and answer with the exact sums of the demanded rewards.

        Parameters
        ----------
        learners : BatchLearner
            The N learners (their recommendations fill each user's rounds after its samples).
        demand : numpy.ndarray
            (N, K) int64 samples wanted.
        batch : int
            The batch's number (1-based).
        partial : bool
            Play a batch the horizon cuts to the horizon (answered with ``sums=None``); otherwise a batch that
            does not fit in the rounds left is not played and ``None`` is returned.

        Returns
        -------
        Served or None
            The sums and counts (the demand), the variance proxy 1/4 and the rounds charged.

        Raises
        ------
        ConfigError
            If ``learners`` is not a batch learner of the channel's N users and K arms, ``demand`` not an (N, K)
            array of non-negative integers, ``batch`` not a positive integer or ``partial`` not True or False.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.core.learners import EpochElimination
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> channel = DirectFeedback(MultiUserInstance(np.array([[1.0, 0.0]] * 2)), 10, np.random.default_rng(0))
        >>> served = channel.serve_batch(EpochElimination(2, 2, confidence=0.1), np.array([[2, 1], [1, 1]]), 1,
        ...                              partial=True)
        >>> served.sums.tolist(), served.rounds, served.sigma2
        ([[2.0, 0.0], [1.0, 0.0]], 3, 0.25)
        """
        self._check_batch(learners, demand)
        longest = int(demand.sum(axis=1).max())  # users sample in parallel, one reward per round
        room = self.horizon - self.t
        if longest > room and not partial:
            return None
        # the regret books need each user's filling arm now; the segments are computed when the regret is read
        # (identification never reads it)
        instance = self._ledger.instance
        fill_gap = instance.gaps[np.arange(demand.shape[0]), learners.recommendation()]
        self._ledger.defer(min(longest, room), partial_fn(_direct_charges, demand, instance.gaps, fill_gap, room))
        sums = None
        if longest <= room:
            self._samples += int(demand.sum())
            sums = self._source.sums(instance.mu, demand)
        return Served(
            sums=sums,
            counts=demand,
            sigma2=self.variance_proxy,
            rounds=min(longest, room),
            size=longest,
            assignments=0,
            distinct=0,
            method=self.name,
            uncovered=0,
            surplus=0,
        )
