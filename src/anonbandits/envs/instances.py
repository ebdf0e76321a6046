"""Multi-user bandit instances: an N x K matrix of means, a reward model, and user clusters (paper 000,
*Anonymous Bandits for Multi-User Systems*, NeurIPS 2022, Section 2.1: the *user-cluster* assumption U says
that every arm is the optimal arm of at least U users).

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

from dataclasses import dataclass

import numpy as np

from anonbandits.envs.rewards import model_means
from anonbandits.errors import ConfigError, require

MEANS_LOW, MEANS_HIGH = 0.1, 0.9
INSTANCE_REWARDS = ("bernoulli", "gaussian")


@dataclass(frozen=True, eq=False)
class MultiUserInstance:
    """N users x K arms with a reward model.

    Attributes
    ----------
    mu : (N, K) parameters of the reward distributions (the Bernoulli means, or the Gaussian centres).
    model : reward model name (``bernoulli`` or ``gaussian``), see :mod:`anonbandits.envs.rewards`.
    means : (N, K) true expected rewards under ``model`` (what pseudo-regret is measured against).
    optimal : (N,) each user's optimal arm (argmax of ``means``).
    gaps : (N, K) ``means[i].max() - means[i, j]``; the regret of one round of user i on arm j.
    n_users, n_arms : N and K.
    cluster_sizes : (K,) number of users whose optimal arm is j.
    min_cluster : the largest U for which the user-cluster assumption holds.
    """

    mu: np.ndarray
    model: str = "bernoulli"

    def __post_init__(self) -> None:
        mu = np.asarray(self.mu, dtype=float)
        if mu.ndim != 2 or mu.shape[0] < 1 or mu.shape[1] < 2:
            raise ConfigError(f"instance means must be an (N, K) matrix with K >= 2, got shape {mu.shape}")
        if not np.all((mu >= 0) & (mu <= 1)):
            raise ConfigError("instance means must lie in [0, 1]")
        require(self.model in INSTANCE_REWARDS, "reward", f"one of {', '.join(INSTANCE_REWARDS)}", self.model)
        means = model_means(self.model, mu)
        optimal = np.argmax(means, axis=1)
        sizes = np.bincount(optimal, minlength=mu.shape[1])
        derived = {"mu": mu, "means": means, "optimal": optimal, "gaps": means.max(axis=1, keepdims=True) - means,
                   "n_users": mu.shape[0], "n_arms": mu.shape[1], "cluster_sizes": sizes,
                   "min_cluster": int(sizes.min())}
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def round_regret(self, assignments: np.ndarray) -> np.ndarray:
        """Pseudo-regret of one round of each assignment, summed over users.

        ``assignments`` is (N,) or (n, N) arm indices; returns a scalar or an (n,) array.
        """
        a = np.asarray(assignments, dtype=np.intp)
        return self.gaps[np.arange(self.n_users), a].sum(axis=-1)


def clustered_instance(n_users: int, n_arms: int, cluster: int, gap: float, rng: np.random.Generator, *,
                       model: str = "bernoulli", low: float = MEANS_LOW,
                       high: float = MEANS_HIGH) -> MultiUserInstance:
    """A random instance in which every arm is optimal for at least ``cluster`` users.

    Parameters
    ----------
    n_users, n_arms : N and K.
    cluster : U, the minimum number of users per optimal arm; 0 means balanced (``floor(N/K)``).
    gap : every user's gap between its best and second-best mean, in (0, high - low).
    rng : source of randomness.
    model : ``bernoulli`` or ``gaussian`` (clipped, sigma 0.5).
    low, high : range of the means.

    See the module docstring for the exact construction.
    """
    require(n_users >= 1, "users", "at least 1", n_users)
    require(n_arms >= 2, "arms", "at least 2", n_arms)
    require(cluster >= 0, "cluster", ">= 0 (0 = balanced)", cluster)
    if cluster * n_arms > n_users:
        raise ConfigError(f"cluster {cluster} x arms {n_arms} exceeds users {n_users}: "
                          "every arm cannot be optimal for that many users")
    if not 0 < gap < high - low:
        raise ConfigError(f"gap must lie in (0, {high - low:g}), got {gap}")
    u = cluster if cluster > 0 else n_users // n_arms
    optimal = np.empty(n_users, dtype=np.intp)
    order = rng.permutation(n_users)
    optimal[order[: u * n_arms]] = np.repeat(np.arange(n_arms), u)
    optimal[order[u * n_arms:]] = rng.integers(0, n_arms, size=n_users - u * n_arms)
    mu = rng.uniform(low, high - gap, size=(n_users, n_arms))
    rows = np.arange(n_users)
    mu[rows, optimal] = -np.inf
    mu[rows, optimal] = mu.max(axis=1) + gap
    return MultiUserInstance(mu=mu, model=model)
