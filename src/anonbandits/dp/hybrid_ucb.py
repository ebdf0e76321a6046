"""Hybrid-UCB: paper 001 (Hu, Huang and Mehta, "Near-Optimal Algorithms for Private Online Learning in a
Stochastic Environment", arXiv 2102.07929), Algorithm 4, Sec. 4.2 and Appendix E.

Non-lazy and non-forgetful: the pulled arm's private mean is recomputed after every pull from all its
observations, as (noisy sums of the full arrays 0..r-1, each with one persistent Lap(2/eps))
+ (binary-mechanism noisy prefix sum of the current tree r, each dyadic node with one persistent
Lap(2r/eps) as printed, or Lap(2(r+1)/eps) with ``tree_noise="exact"``: a leaf lies in r + 1 dyadic nodes,
the root included), divided by the pull count O. Index:
``mu~ + sqrt(3 log2 t / O) + 6 sqrt(8) log2(t) floor(log2(O+1)) / (eps O)`` (log base 2, as the proofs of
Appendix E use it). A tree of 2^r leaves completes at O = 2^(r+1) - 1 (Algorithm 4 and eqs. (32)-(34), rather
than the group sizes of the text of Sec. 4.2); that update still uses the root's noise, and the array then joins
the Laplace group with a fresh Z (the algorithm's order: insert, recompute the private mean, then open the next
tree).

Simulation: the algorithm needs a decision every round. :func:`hybrid_ucb_batch` advances a batch of
independent runs (each with its own means and epsilon) in lockstep in the compiled loop of
:mod:`anonbandits.dp.hybrid_kernel`, which returns to Python only where the generator must draw mid-chunk (a
completed tree's array noise; every round for a non-Bernoulli reward), so the random stream is the one a
round-by-round numpy loop would consume (random numbers are drawn in chunks of rounds: Laplace node noises,
Bernoulli uniforms); a single run (:func:`hybrid_ucb`) is a batch of one. Ties have probability zero and go to
the lowest index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.channels.direct import DirectChannel, RewardSum
from anonbandits.core.indices import hybrid_ucb_array_scale, hybrid_ucb_node_scale
from anonbandits.core.limits import MAX_TABLE_ROUNDS, check_size
from anonbandits.core.radii import HYBRID_PRIVACY_WIDTH, hybrid_ucb_widths
from anonbandits.core.schedules import checkpoint_grid
from anonbandits.dp.hybrid_kernel import choose_arms, floor_log2, run_rounds, tree_noise_store
from anonbandits.dp.runs import Means, check_epsilon, check_setup, run_result
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import laplace_noise
from anonbandits.results import Result

TREE_NOISES = ("paper", "exact")
_CHUNK = 4096


@filled_dataclass(frozen=True)
class HybridBatch:
    """Runs of :func:`hybrid_ucb_batch`, R runs of K arms each.

    Parameters
    ----------
    checkpoints : numpy.ndarray
        Rounds of the regret curves (int).
    curves : numpy.ndarray
        (R, checkpoints) cumulative pseudo-regret of each run at each checkpoint.
    regret : numpy.ndarray
        (R,) final cumulative pseudo-regret of each run.
    pulls : numpy.ndarray
        (R, K) int, rounds each arm was played.
    noisy_means : numpy.ndarray
        (R, K) private means after the last round.
    best_arm : numpy.ndarray
        (R,) int, the truly best arm of each run.
    laplace_draws : numpy.ndarray
        (R,) int, the Laplace noise draws of each run (array noises and tree-node noises).

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> batch = hybrid_ucb_batch(np.array([0.9, 0.1]), [0.5, 1.0], 100, np.random.default_rng(0), checkpoints=4)
    >>> batch.curves.shape, batch.pulls.sum(axis=1).tolist()
    ((2, 4), [100, 100])
    """

    checkpoints: np.ndarray
    curves: np.ndarray
    regret: np.ndarray
    pulls: np.ndarray
    noisy_means: np.ndarray
    best_arm: np.ndarray
    laplace_draws: np.ndarray


@fill
def hybrid_ucb_batch(
    means: np.ndarray,
    epsilons: np.ndarray | Sequence[float],
    horizon: int,
    rng: np.random.Generator,
    *,
    tree_noise: str = "paper",
    reward: str | RewardSum = "bernoulli",
    expected_means: Sequence[float] | np.ndarray | None = None,
    checkpoints: int | Sequence[int] = 200,
) -> HybridBatch:
    """Run Hybrid-UCB (paper 001, Algorithm 4) for a batch of independent runs in lockstep.

    After every pull the pulled arm's private mean is recomputed from all its observations: the full arrays
    (each with one persistent ``Lap(2/eps)``) plus the binary-mechanism prefix sum of the current tree (one
    persistent Laplace noise per dyadic node), over the pull count.

    Parameters
    ----------
    means : numpy.ndarray
        (R, K) arm means per run, or (K,) shared by all runs.
    epsilons : numpy.ndarray or sequence of float
        (R,) privacy parameter per run, each finite and positive (R is taken from here when ``means`` is 1-D).
    horizon : int
        Number of rounds T (from K to :data:`~anonbandits.channels.feedback.MAX_HORIZON`).
    rng : numpy.random.Generator
        Random generator of the batch (runs draw from it jointly, so one batch of R runs is not the same as R
        single runs with separate seeds, but has the same law).
    tree_noise : str, optional
        ``"paper"`` (default, node noise ``Lap(2r/eps)``) or ``"exact"`` (``Lap(2(r+1)/eps)``: the r + 1 dyadic
        nodes of a leaf, the root included).
    reward : str or callable, optional
        A bounded reward model of :mod:`anonbandits.envs.rewards` (default ``"bernoulli"``), or a callable
        ``sums(mu, counts, rng)``.
    expected_means : numpy.ndarray, optional
        True expected rewards for the pseudo-regret, (R, K) or (K,) (default: the model's means).
    checkpoints : int or sequence of int, optional
        Number of evenly spaced curve points (default 200), or the rounds themselves.

    Returns
    -------
    HybridBatch
        Per-run regret, curves, pulls, final private means, best arms and noise draws.

    Raises
    ------
    ConfigError
        If ``means`` is not a non-empty (K,) or (R, K) array of finite numbers (in the reward model's range)
        with R the number of epsilons, ``epsilons`` is not a privacy parameter or a non-empty 1-D array of them
        (each between :data:`~anonbandits.validation.EPSILON_MIN` and
        :data:`~anonbandits.validation.EPSILON_MAX`), ``horizon`` is not an integer from K to
        :data:`~anonbandits.channels.feedback.MAX_HORIZON`, ``rng`` is not a generator, or ``tree_noise``, the
        reward model, ``expected_means`` or ``checkpoints`` is invalid.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> batch = hybrid_ucb_batch(np.array([0.9, 0.1]), [0.5, 1.0], 100, np.random.default_rng(0), checkpoints=4)
    >>> batch.checkpoints.tolist(), batch.best_arm.tolist()
    ([25, 50, 75, 100], [0, 0])
    """
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))])
    mu = np.asarray(means, dtype=float)
    mu = np.broadcast_to(mu, (eps.size, mu.shape[-1])) if mu.ndim == 1 else mu
    require(mu.ndim == 2 and mu.shape[0] == eps.size, "means", f"(runs, arms) with {eps.size} runs", mu.shape)
    require(tree_noise in TREE_NOISES, "tree_noise", f"one of {', '.join(TREE_NOISES)}", tree_noise)
    checked = [check_setup(row, horizon, reward, min_horizon=-1) for row in mu]
    T, exact = checked[0][1], tree_noise == "exact"
    check_size("horizon", T, MAX_TABLE_ROUNDS, "MAX_TABLE_ROUNDS", "rounds of Hybrid-UCB's per-round tables")
    true = (
        np.stack([c[2] for c in checked])
        if expected_means is None
        else np.broadcast_to(np.asarray(expected_means, dtype=float), mu.shape)
    )
    grid = checkpoint_grid(T, checkpoints)
    R, K = mu.shape
    gaps, mu_flat, eps_flat = (true.max(axis=1, keepdims=True) - true).ravel(), mu.ravel(), np.repeat(eps, K)

    draw = DirectChannel(mu_flat, reward, rng).draw  # one reward per entry of the given means
    # Initialization: round j pulls arm j; array 0 gets Z ~ Lap(2/eps); the current tree is r = 1.
    full = draw(mu_flat) + laplace_noise(hybrid_ucb_array_scale(eps_flat), rng)  # noisy sum of the full arrays
    pulls, tree_r = np.ones(R * K, dtype=np.int64), np.ones(R * K, dtype=np.int64)
    tree_leaves = np.left_shift(1, tree_r)  # 2^r: the current tree is full at this count
    tree_k, tree_sum = np.zeros(R * K, dtype=np.int64), np.zeros(R * K)
    node_scale = hybrid_ucb_node_scale(tree_r, eps_flat, exact)  # Lap scale of the current tree's nodes
    priv_width = HYBRID_PRIVACY_WIDTH / eps_flat
    log2_table = floor_log2(np.arange(T + 2).clip(1)).astype(np.int16)
    mean, (width_a, width_b) = full.copy(), hybrid_ucb_widths(pulls, log2_table[pulls + 1], priv_width)
    laplace_draws = np.full(R, K, dtype=np.int64)

    curves = np.zeros((R, grid.size))
    init_cum = np.cumsum(gaps.reshape(R, K), axis=1)
    early = grid <= K
    curves[:, early] = init_cum[:, grid[early] - 1]
    regret = init_cum[:, -1].copy()
    cursor = np.array([np.searchsorted(grid, K, side="right")], dtype=np.int64)  # next checkpoint
    arm, done = np.empty(R, dtype=np.int64), np.zeros(R, dtype=np.bool_)
    state = (
        mu_flat,
        gaps,
        mean,
        width_a,
        width_b,
        full,
        pulls,
        tree_k,
        tree_sum,
        tree_leaves,
        node_scale,
        priv_width,
        log2_table,
        *tree_noise_store(R * K, T),
        regret,
        curves,
        grid,
        cursor,
        arm,
        done,
    )
    bernoulli, no_uniform = reward == "bernoulli", np.empty((0, R))
    for start in range(K + 1, T + 1, _CHUNK):
        stop = min(start + _CHUNK, T + 1)
        lap = laplace_noise(1.0, rng, (stop - start, R))  # unit draws, scaled per node in the kernel
        uniform = rng.random((stop - start, R)) if bernoulli else no_uniform
        t = start
        while t < stop:
            if bernoulli:
                t = run_rounds(t, stop, start, lap, uniform, np.empty(R), False, state)
            else:
                choose_arms(t, K, mean, width_a, width_b, arm)
                t = run_rounds(t, t + 1, start, lap, uniform, draw(mu_flat[arm]), True, state)
            if done.any():  # the completed trees' arrays join the Laplace group with a fresh Z (Algorithm 4)
                g = arm[done]
                full[g] += tree_sum[g] + laplace_noise(hybrid_ucb_array_scale(eps_flat[g]), rng)
                tree_sum[g], tree_k[g], tree_r[g], tree_leaves[g] = 0.0, 0, tree_r[g] + 1, tree_leaves[g] * 2
                node_scale[g] = hybrid_ucb_node_scale(tree_r[g], eps_flat[g], exact)
                laplace_draws[done] += 1
                done[:] = False
        laplace_draws += stop - start
    return HybridBatch(
        checkpoints=grid,
        curves=curves,
        regret=regret,
        pulls=pulls.reshape(R, K),
        noisy_means=mean.reshape(R, K),
        best_arm=true.argmax(axis=1),
        laplace_draws=laplace_draws,
    )


@fill
def hybrid_ucb(
    means: Means,
    epsilon: float,
    horizon: int,
    rng: np.random.Generator,
    *,
    tree_noise: str = "paper",
    reward: str | RewardSum = "bernoulli",
    expected_means: Sequence[float] | np.ndarray | None = None,
    checkpoints: int | Sequence[int] = 200,
) -> Result:
    """Run Hybrid-UCB (paper 001, Algorithm 4) once: a batch of one run of :func:`hybrid_ucb_batch`.

    Parameters
    ----------
    {{dp_means}}
    {{dp_epsilon}}
    horizon : int
        Number of rounds T, from the number of arms to :data:`~anonbandits.channels.feedback.MAX_HORIZON`.
    rng : numpy.random.Generator
        The run's source of randomness.
    tree_noise : str, optional
        ``"paper"`` (default, node noise ``Lap(2r/eps)``) or ``"exact"`` (``Lap(2(r+1)/eps)``: the r + 1 dyadic
        nodes of a leaf, the root included).
    {{reward_curve}}

    Returns
    -------
    Result
        Metrics ``regret``, ``best_arm_found``, ``releases`` (one noisy mean every round, the K initialization
        rounds included) and ``laplace_draws`` (array noises and tree-node noises); the regret curve; ``info``:
        ``pulls``, ``best_arm`` and ``ledger`` ``None`` (Hybrid-UCB keeps none).

    Raises
    ------
    ConfigError
        If the means, epsilon, horizon (an integer from the number of arms to
        :data:`~anonbandits.channels.feedback.MAX_HORIZON`), ``tree_noise`` or reward model are invalid.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> run = hybrid_ucb([0.9, 0.1], 1.0, 100, np.random.default_rng(0), checkpoints=4)
    >>> run.curve[0].tolist(), run.metrics["releases"], run.metrics["laplace_draws"]
    ([25, 50, 75, 100], 100, 108)
    """
    batch = hybrid_ucb_batch(
        check_setup(means, horizon, reward)[0],
        [check_epsilon(epsilon)],
        horizon,
        rng,
        tree_noise=tree_noise,
        reward=reward,
        expected_means=expected_means,
        checkpoints=checkpoints,
    )
    return run_result(
        float(batch.regret[0]),
        batch.checkpoints,
        batch.curves[0],
        batch.pulls[0],
        int(batch.best_arm[0]),
        int(batch.pulls[0].sum()),
        laplace_draws=int(batch.laplace_draws[0]),
    )
