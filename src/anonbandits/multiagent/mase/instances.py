"""Bandit instances and agent-activity distributions of paper 003 (Rio et al., ICML 2023, App. C.1 and C.4).

Rewards are drawn either one pull at a time (vectorised over rows and arms) or as exact sums of many pulls:
a sum of n Bernoulli(mu) rewards is one Binomial(n, mu) draw (via :func:`anonbandits.envs.rewards.sum_rewards`)
and a sum of n Gaussian N(mu, sigma^2) rewards is one N(n mu, n sigma^2) draw. The Gaussian model here is the
*unclipped* one of Problem 2 (means around 11, spec A13), not the clipped model of :mod:`anonbandits.envs.rewards`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonbandits.envs.rewards import sum_rewards
from anonbandits.errors import ConfigError
from anonbandits.multiagent.shared import ACTIVITIES, activity_probabilities  # noqa: F401 (paper 003's public names)

PROBLEMS = ("1", "2")
MODELS = ("bernoulli", "gaussian")


@dataclass(frozen=True)
class Instance:
    """A K-armed instance: ``means``, reward ``model`` and (Gaussian) standard deviation ``sigma``."""

    means: np.ndarray
    model: str = "bernoulli"
    sigma: float = 0.5
    name: str = "custom"

    @property
    def arms(self) -> int:
        return int(self.means.size)

    @property
    def best(self) -> int:
        """Index of the best arm (the first one if several share the largest mean)."""
        return int(np.argmax(self.means))

    def is_best(self, arm: int) -> bool:
        """Whether ``arm`` has the largest mean (ties count as correct)."""
        return bool(0 <= arm < self.arms and self.means[arm] == self.means.max())

    def draw(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        """One reward per (row, arm): an array of shape ``(rows, arms)``."""
        if self.model == "bernoulli":
            return (rng.random((rows, self.arms)) < self.means).astype(float)
        return rng.normal(self.means, self.sigma, (rows, self.arms))

    def sums(self, rng: np.random.Generator, counts: np.ndarray) -> np.ndarray:
        """Exact sum of ``counts[..., k]`` rewards of arm k."""
        counts = np.asarray(counts, dtype=np.int64)
        if self.model == "bernoulli":
            return sum_rewards("bernoulli", self.means, counts, rng)
        return rng.normal(counts * self.means, self.sigma * np.sqrt(counts))


def problem(name: str, sigma: float = 0.5) -> Instance:
    """Paper 003's Problem 1 (Bernoulli) or Problem 2 (Gaussian, standard deviation ``sigma``; A13)."""
    if name == "1":
        return Instance(np.array([0.7, 0.5, 0.3] + [0.1] * 7), "bernoulli", sigma, "problem1")
    if name == "2":
        return Instance(np.array([11.0, 10.8] + [10.4] * 8), "gaussian", sigma, "problem2")
    raise ConfigError(f"problem must be one of {', '.join(PROBLEMS)}, got {name!r}")
