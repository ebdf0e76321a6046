"""Shared pieces of the single-learner private bandit algorithms: input checks, the exact pseudo-regret
trace, the release ledger and the result type.

The algorithms of this package simulate *event by event*: a block of consecutive rounds with a fixed arm (or
cycle of arms) is one call whose rewards enter only through their sum, drawn through the direct channel.
:class:`~anonbandits.core.regret.RegretTrace` turns those blocks back into the exact cumulative pseudo-regret at
any round, and :class:`Ledger` records which block of rewards fed which noisy statistic, so that tests can check
that a reward is used in at most one release.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np

from anonbandits._docstrings import filled_dataclass
from anonbandits.channels.direct import DirectChannel, RewardSum
from anonbandits.core.regret import RegretTrace
from anonbandits.core.schedules import checkpoint_grid
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.envs.rewards import BOUNDED_MODELS, parse_means
from anonbandits.errors import require

__all__ = ["BanditRun", "Ledger", "Means", "RegretTrace", "RewardSum", "check_epsilon", "check_setup", "finish",
           "start"]

Means = str | Sequence[float] | np.ndarray


def check_epsilon(epsilon: float) -> float:
    """A finite positive privacy parameter."""
    require(float(epsilon) > 0 and math.isfinite(float(epsilon)), "epsilon", "a finite positive number", epsilon)
    return float(epsilon)


def instance_of(means: Means, reward: str | RewardSum,
                expected_means: Sequence[float] | None = None) -> MultiUserInstance:
    """The instance shared by the learner's rounds: checked arm means (a ``"0.9,0.8"`` string is parsed), reward
    model (a name of :data:`~anonbandits.envs.rewards.BOUNDED_MODELS`, rewards in [0, 1] as the privacy
    mechanisms assume, or a callable ``sums(mu, counts, rng)``) and true expected rewards, the pseudo-regret's
    reference: ``expected_means`` if given, the model's exact means for a named model (clipping shifts the
    Gaussian's), else the means."""
    mu = parse_means(means if isinstance(means, str) else [float(m) for m in np.ravel(means)])
    require(callable(reward) or reward in BOUNDED_MODELS, "reward", f"one of {', '.join(BOUNDED_MODELS)}", reward)
    if expected_means is not None:
        require(np.shape(expected_means) == mu.shape, "expected_means", f"one entry per arm ({mu.size})",
                expected_means)
    return MultiUserInstance(mu, reward, expected=expected_means)


def check_setup(means: Means, horizon: int, reward: str | RewardSum, *, min_horizon: int = 1,
                expected_means: Sequence[float] | None = None) -> tuple[np.ndarray, int, np.ndarray]:
    """Checked arm means, horizon (at least ``min_horizon``; ``-1`` for the number of arms) and the arms' true
    expected rewards (see :func:`instance_of`)."""
    instance = instance_of(means, reward, expected_means)
    minimum = instance.n_arms if min_horizon < 0 else min_horizon
    require(not isinstance(horizon, bool) and int(horizon) == horizon >= minimum, "horizon",
            f"an integer of at least {minimum}", horizon)
    return instance.row, int(horizon), instance.means[0]


def start(means: Means, horizon: int, reward: str | RewardSum, expected_means: Sequence[float] | None,
          checkpoints: int | Sequence[int], rng: np.random.Generator, *, min_horizon: int = 1
          ) -> tuple[np.ndarray, int, DirectChannel, np.ndarray, np.ndarray, RegretTrace, Ledger]:
    """What every event-driven driver starts from (see :func:`check_setup` for the checks): the means, the
    horizon, the direct channel every reward is drawn through (from ``rng``), the true means, the checkpoint grid,
    an empty trace and an empty ledger."""
    mu, T, true = check_setup(means, horizon, reward, min_horizon=min_horizon, expected_means=expected_means)
    return (mu, T, DirectChannel(mu, reward, rng), true, checkpoint_grid(T, checkpoints),
            RegretTrace(true.max() - true), Ledger())


@filled_dataclass
class Ledger:
    """Which rewards fed which privatized statistic.

    A *block* is a set of rewards of one arm (or, in the experts setting, the whole reward vectors of a set
    of rounds, ``arm = -1``) entered into the algorithm as one sum. A *release* computes noisy statistics
    from blocks; each of its noisy sums is one row of the ``noise_*`` columns (arm, true sum, noise draw,
    Laplace scale). :meth:`release` refuses (``RuntimeError``) a block that already fed a release, so the rule
    "each reward is used in at most one released statistic" is enforced when the run happens and checkable
    afterwards. Every field is a column, one entry per block (``block_*``), per release (``release_round``)
    or per noisy sum (``noise_*``); a new ledger starts empty.

    Parameters
    ----------
    block_arm : list of int, optional
        The arm of each block (-1: whole reward vectors).
    block_count : list of int, optional
        The number of rewards (rounds) of each block.
    block_sum : list of numpy.ndarray, optional
        The sum of each block's rewards (a vector of K sums in the experts setting).
    block_release : list of int, optional
        The release each block fed, -1 while unused.
    release_round : list of int, optional
        The round of each release.
    noise_release : list of int, optional
        The release of each noisy sum.
    noise_arm : list of int, optional
        The arm of each noisy sum.
    noise_true_sum : list of float, optional
        The exact sum behind each noisy sum.
    noise_value : list of float, optional
        The noise added to it.
    noise_scale : list of float, optional
        The Laplace scale of that noise.

    {{refs_paper001}}

    Examples
    --------
    >>> ledger = Ledger()
    >>> block = ledger.block(arm=0, count=3, reward_sum=2.0)
    >>> ledger.release([block], arms=[0], true_sums=[2.0], noises=[0.5], scale=1.0, round_=3)
    0
    >>> ledger.releases, ledger.block_release
    (1, [0])
    """

    block_arm: list[int] = field(default_factory=list)
    block_count: list[int] = field(default_factory=list)
    block_sum: list[np.ndarray] = field(default_factory=list)
    block_release: list[int] = field(default_factory=list)
    release_round: list[int] = field(default_factory=list)
    noise_release: list[int] = field(default_factory=list)
    noise_arm: list[int] = field(default_factory=list)
    noise_true_sum: list[float] = field(default_factory=list)
    noise_value: list[float] = field(default_factory=list)
    noise_scale: list[float] = field(default_factory=list)

    def block(self, arm: int, count: int, reward_sum: float | np.ndarray) -> int:
        """Record a block of ``count`` rewards of ``arm`` summing to ``reward_sum``, not yet used by a release.

        Parameters
        ----------
        arm : int
            The arm whose rewards these are (-1: whole reward vectors, the experts setting).
        count : int
            Number of rewards (rounds) in the block.
        reward_sum : float or numpy.ndarray
            Their sum (a vector of K sums in the experts setting).

        Returns
        -------
        int
            The block's id, its index in the ``block_*`` columns.

        Examples
        --------
        >>> ledger = Ledger()
        >>> ledger.block(arm=1, count=4, reward_sum=3.0), ledger.block(arm=0, count=2, reward_sum=1.0)
        (0, 1)
        >>> ledger.block_arm, ledger.block_release
        ([1, 0], [-1, -1])
        """
        self.block_arm.append(int(arm))
        self.block_count.append(int(count))
        self.block_sum.append(np.asarray(reward_sum, dtype=float))
        self.block_release.append(-1)
        return len(self.block_arm) - 1

    def release(self, blocks: Sequence[int], arms: Sequence[int], true_sums: Sequence[float],
                noises: Sequence[float], scale: float, round_: int) -> int:
        """Record one release at round ``round_`` fed by ``blocks``: noisy sums ``true_sums + noises``.

        Parameters
        ----------
        blocks : sequence of int
            Ids of the blocks (from :meth:`block`) whose rewards fed the release; each may feed one release only.
        arms : sequence of int
            The arm of each noisy sum released.
        true_sums : sequence of float
            The exact sum behind each noisy sum.
        noises : sequence of float
            The noise added to each.
        scale : float
            The Laplace scale of that noise (one for the whole release).
        round_ : int
            The round of the release.

        Returns
        -------
        int
            The release's id, its index in ``release_round``.

        Raises
        ------
        RuntimeError
            If one of ``blocks`` already fed a release (the blocks before it are then marked with this release).

        Examples
        --------
        >>> ledger = Ledger()
        >>> first = ledger.block(arm=0, count=2, reward_sum=1.0)
        >>> ledger.release([first], arms=[0], true_sums=[1.0], noises=[-0.25], scale=0.5, round_=2)
        0
        >>> ledger.noise_arm, ledger.noise_value, ledger.noise_scale
        ([0], [-0.25], [0.5])
        >>> ledger.release([first], arms=[0], true_sums=[1.0], noises=[0.0], scale=0.5, round_=4)
        Traceback (most recent call last):
        ...
        RuntimeError: block 0 already fed release 0
        """
        rid = len(self.release_round)
        for b in blocks:
            if self.block_release[b] != -1:
                raise RuntimeError(f"block {b} already fed release {self.block_release[b]}")
            self.block_release[b] = rid
        self.release_round.append(int(round_))
        n = len(arms)
        self.noise_release.extend([rid] * n)
        self.noise_arm.extend(int(a) for a in arms)
        self.noise_true_sum.extend(float(s) for s in true_sums)
        self.noise_value.extend(float(z) for z in noises)
        self.noise_scale.extend([float(scale)] * n)
        return rid

    @property
    def releases(self) -> int:
        return len(self.release_round)


@filled_dataclass(frozen=True)
class BanditRun:
    """One simulated run of a single-learner algorithm of :mod:`anonbandits.dp`.

    Parameters
    ----------
    regret : float
        Cumulative pseudo-regret after the last round (the initialization rounds included).
    checkpoints : numpy.ndarray
        Rounds of the regret curve (int).
    curve : numpy.ndarray
        The cumulative pseudo-regret after each checkpoint.
    pulls : numpy.ndarray
        (K,) int, number of rounds each arm was played.
    best_arm : int
        The index of the truly best arm; the property ``best_arm_found`` says whether it was the most-played one.
    releases : int
        Number of privatized releases (see each algorithm for what one release is).
    ledger : Ledger or None, optional
        Blocks of rewards and the releases they fed (``None`` where the algorithm keeps none).
    extra : Mapping, optional
        Algorithm-specific numbers (epochs, surviving arms, ...), reported as metrics by ``metrics()``, the
        results-table columns of the run.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> run = BanditRun(regret=1.5, checkpoints=np.array([10]), curve=np.array([1.5]), pulls=np.array([8, 2]),
    ...                 best_arm=0, releases=2, extra={"epochs": 1})
    >>> run.best_arm_found, run.metrics()
    (True, {'regret': 1.5, 'best_arm_found': 1, 'releases': 2, 'epochs': 1})
    """

    regret: float
    checkpoints: np.ndarray
    curve: np.ndarray
    pulls: np.ndarray
    best_arm: int
    releases: int
    ledger: Ledger | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def best_arm_found(self) -> bool:
        return int(np.argmax(self.pulls)) == self.best_arm

    def metrics(self) -> dict[str, Any]:
        """The results-table columns of this run.

        Returns
        -------
        dict of str to Any
            ``regret``, ``best_arm_found`` (0 or 1), ``releases``, then the entries of ``extra``.

        Examples
        --------
        >>> import numpy as np
        >>> run = BanditRun(regret=2.0, checkpoints=np.array([5]), curve=np.array([2.0]), pulls=np.array([1, 4]),
        ...                 best_arm=0, releases=3)
        >>> run.metrics()
        {'regret': 2.0, 'best_arm_found': 0, 'releases': 3}
        """
        return {"regret": self.regret, "best_arm_found": int(self.best_arm_found),
                "releases": self.releases, **self.extra}


def finish(trace: RegretTrace, grid: np.ndarray, true_means: np.ndarray, ledger: Ledger,
           **extra: Any) -> BanditRun:
    """Package a finished trace and its ledger as a :class:`BanditRun` (one release per ledger release)."""
    return BanditRun(regret=float(trace.regret), checkpoints=grid, curve=trace.curve(grid),
                     pulls=trace.pulls.copy(), best_arm=int(np.argmax(true_means)), releases=ledger.releases,
                     ledger=ledger, extra=extra)
