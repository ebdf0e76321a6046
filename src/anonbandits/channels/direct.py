"""The direct feedback channel: exact sufficient statistics of i.i.d. rewards (DP-SE, Sajed and Sheffet,
ICML 2019, the baseline of papers 001 and 004).

A driver hands over a demand (samples wanted per learner and arm, any shape) and gets the sums of that many
rewards and the counts: one draw per entry whatever its length (the sum of n Bernoulli(mu) rewards is one
Binomial(n, mu); :func:`anonbandits.envs.rewards.sum_rewards`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from anonbandits.envs.rewards import sum_rewards

#: ``sums(mu, counts, rng)``: the sum of ``counts[k]`` rewards of arm mean ``mu[k]`` for each k.
RewardSum = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


class Batch(NamedTuple):
    """What a channel returns for a demand: per-entry reward sums and sample counts (same shape); a named tuple,
    cheaper to build than a dataclass once per epoch."""

    sums: np.ndarray
    counts: np.ndarray


class DirectChannel:
    """Rewards of arms with parameters ``means`` ((..., K), indexed by a demand's ``arms``) under ``reward`` (a
    model of :mod:`anonbandits.envs.rewards` or a callable ``sums(mu, counts, rng)``), drawn from ``rng``."""

    def __init__(self, means: np.ndarray, reward: str | RewardSum, rng: np.random.Generator) -> None:
        self.means = np.asarray(means, dtype=float)
        self._draw = self.sampler(reward)
        self._rng = rng

    @staticmethod
    def sampler(reward: str | RewardSum) -> RewardSum:
        """The block-sum sampler of ``reward``: the callable itself, or the named model's exact sums."""
        return reward if callable(reward) else lambda mu, counts, rng: sum_rewards(reward, mu, counts, rng)

    def request(self, arms: np.ndarray, counts: np.ndarray) -> Batch:
        """Draw ``counts[k]`` rewards of arm ``arms[k]`` for every k (arrays of one shape); one draw per entry
        (exact sums)."""
        return Batch(self._draw(self.means[arms], counts, self._rng), counts)
