"""Anytime-Lazy-UCB: paper 001 (Hu, Huang and Mehta, "Near-Optimal Algorithms for Private Online Learning in
a Stochastic Environment", arXiv 2102.07929), Algorithm 1, Sec. 4.1 and Appendix A.

Each arm's observations go into arrays of sizes 1, 2, 4, ...; when an array is full its sum gets one fresh
Lap(1/eps) and the arm's private mean becomes that noisy sum over the array size; older arrays are forgotten,
so each reward enters exactly one noisy sum (epsilon-DP, Theorem 2). The index at round t is
``mu~ + sqrt(3 ln t / lambda) + 3 ln t / (eps lambda)`` with lambda the size of the last full array.
Where Algorithm 1 is silent, this implementation chooses: the initialization pull is noised too (array 0 of size
1 gets its own Lap(1/eps); released in the clear it would break epsilon-DP), lambda^(0) = 1 (what the
algorithm's completion test implies: array r completes at O = 2^(r+1) - 1 pulls), and the global round counter
t (1-based) enters ln t.

Simulation (exact): between two array completions an arm's index moves only through ln t, so the played arm changes
only when an arm with a smaller last-array size (its width grows faster) overtakes it; the crossing round solves a
quadratic in sqrt(ln t), checked on the integer rounds. Each block of consecutive pulls of one arm is one event whose
rewards are drawn as one sum. Ties have probability zero and go to the lowest index (the paper does not say).
``storage="o1"`` keeps per arm the Appendix A tuple (count, running sum, capacity) of the filling array and the last
noisy mean; ``storage="arrays"`` keeps (and draws) every observation of the filling array.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels.direct import RewardSum
from anonbandits.core.indices import lazy_ucb_capacity, lazy_ucb_crossing
from anonbandits.core.radii import lazy_ucb_index, lazy_ucb_widths
from anonbandits.dp.runs import Means, check_epsilon, finish, start
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import CentralLaplace
from anonbandits.results import Result

STORAGES = ("o1", "arrays")


def _overtaken_at(mean: np.ndarray, size: np.ndarray, epsilon: float, j: int, t: int, horizon: int) -> int:
    """First round after ``t`` at which some arm's index exceeds that of ``j`` (the argmax at round ``t``),
    with every array frozen; ``horizon + 1`` if none does by the horizon."""
    a, b = lazy_ucb_widths(size, epsilon)
    rivals = np.flatnonzero(size < size[j])
    if rivals.size == 0:
        return horizon + 1
    root = lazy_ucb_crossing(mean[rivals] - mean[j], a[rivals] - a[j], b[rivals] - b[j])
    best = horizon + 1
    near = root * root < math.log(horizon + 1) + 1  # crossings far beyond the horizon are skipped
    for k, s in zip(rivals[near], root[near], strict=True):

        def ahead(u: int, k: int = k) -> bool:
            idx = lazy_ucb_index(mean[[k, j]], size[[k, j]], epsilon, u)
            return bool(idx[0] > idx[1])

        u = max(t + 1, math.floor(math.exp(s * s)) + 1)
        while u - 1 > t and ahead(u - 1):
            u -= 1
        while u <= horizon and not ahead(u):
            u += 1
        best = min(best, u)
    return best


@fill
def anytime_lazy_ucb(
    means: Means,
    epsilon: float,
    horizon: int,
    rng: np.random.Generator,
    *,
    storage: str = "o1",
    reward: str | RewardSum = "bernoulli",
    expected_means: Sequence[float] | None = None,
    checkpoints: int | Sequence[int] = 200,
) -> Result:
    """Run Anytime-Lazy-UCB (paper 001, Algorithm 1) once.

    Each arm's observations fill arrays of sizes 1, 2, 4, ...; a full array's sum plus one ``Lap(1/eps)`` becomes
    the arm's private mean (older arrays are forgotten), and the arm with the largest index
    ``mu~ + sqrt(3 ln t / lambda) + 3 ln t / (eps lambda)`` is played.

    Parameters
    ----------
    {{dp_means}}
    {{dp_epsilon}}
    horizon : int
        Number of rounds T, from the number of arms to :data:`~anonbandits.channels.feedback.MAX_HORIZON`; the
        algorithm itself does not use it.
    rng : numpy.random.Generator
        The run's source of randomness.
    storage : str, optional
        ``"o1"`` (default, Appendix A tuples) or ``"arrays"`` (observations kept individually); same law.
    {{reward_curve}}

    Returns
    -------
    Result
        Metrics ``regret``, ``best_arm_found``, ``releases`` (one per completed array, the K initialization pulls
        included), ``events`` (blocks simulated) and ``stored_values`` (peak number of stored numbers); the regret
        curve; ``info``: ``pulls``, ``best_arm`` and the ``ledger``.

    Raises
    ------
    ConfigError
        If the means, epsilon, horizon (an integer from the number of arms to
        :data:`~anonbandits.channels.feedback.MAX_HORIZON`), storage or reward model are invalid.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> run = anytime_lazy_ucb([0.9, 0.1], 1.0, 1000, np.random.default_rng(0))
    >>> run.info["pulls"].tolist(), run.metrics["releases"]
    ([873, 127], 16)
    """
    mu, T, channel, true, grid, trace, ledger = start(
        means, horizon, reward, expected_means, checkpoints, rng, min_horizon=-1
    )
    eps, K = check_epsilon(epsilon), mu.size
    require(storage in STORAGES, "storage", f"one of {', '.join(STORAGES)}", storage)
    laplace = CentralLaplace(eps)
    # Initialization: round j pulls arm j; array 0 (size 1) gets its own Lap(1/eps) (not in Algorithm 1: without
    # it the first observation would be released in the clear).
    first = channel.request(np.arange(K), np.ones(K, dtype=np.int64)).sums
    noise = laplace.noise(rng, K)
    trace.play(np.arange(K), K)
    for j in range(K):
        ledger.release([ledger.block(j, 1, first[j])], [j], [first[j]], [noise[j]], laplace.scale, j + 1)
    mean, size = first + noise, np.ones(K)  # last full array's noisy mean and size lambda
    fill_n, fill_sum = np.zeros(K, dtype=np.int64), np.zeros(K)  # filling array: observations, sum (o1 form)
    fill_obs: list[list[np.ndarray]] = [[] for _ in range(K)]  # ... or the observations (array form)
    fill_blocks: list[list[int]] = [[] for _ in range(K)]
    stored_peak, events = 5 * K, 0
    while trace.rounds < T:
        t = trace.rounds + 1
        j = int(np.argmax(lazy_ucb_index(mean, size, eps, t)))
        capacity = int(lazy_ucb_capacity(size[j]))
        n = min(capacity - int(fill_n[j]), T - t + 1, _overtaken_at(mean, size, eps, j, t, T) - t)
        if storage == "o1":
            block_sum = float(channel.request(np.array([j]), np.array([n])).sums[0])
            fill_sum[j] += block_sum
        else:
            obs = channel.request(np.full(n, j), np.ones(n, dtype=np.int64)).sums
            fill_obs[j].append(obs)
            block_sum = float(obs.sum())
            stored_peak = max(stored_peak, 2 * K + int(fill_n.sum()) + n)
        fill_blocks[j].append(ledger.block(j, n, block_sum))
        trace.play(j, n)
        fill_n[j] += n
        events += 1
        if fill_n[j] == capacity:
            total = fill_sum[j] if storage == "o1" else float(np.concatenate(fill_obs[j]).sum())
            z = laplace.noise(rng)
            ledger.release(fill_blocks[j], [j], [total], [z], laplace.scale, trace.rounds)
            mean[j], size[j] = (total + z) / capacity, capacity
            fill_n[j], fill_sum[j], fill_obs[j], fill_blocks[j] = 0, 0.0, [], []
    return finish(trace, grid, true, ledger, events=events, stored_values=stored_peak)
