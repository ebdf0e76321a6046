"""Algorithm 1 of paper 004 (Chowdhury and Zhou, "Distributed Differential Privacy in Multi-Armed Bandits",
ICLR 2023): private batch-based successive arm elimination, generic over the protocol P = (R, S, A) of its
Sec. 3.

Batch ``b = 1, 2, ...`` serves every active arm to a block of ``l(b) = base^b`` new users, in increasing arm
order; each block's rewards reach the server only through one protocol release, whose estimate
``muhat_a(b) = z/l(b)`` is compared with the confidence radius ``beta(b)`` of Lemma 2. Only the last batch is
used (forgetting); an arm survives iff ``UCB_a >= max_{a'} LCB_{a'}`` (non-strict, as in Algorithm 1). When
the horizon ends inside a batch, the remaining users are served and nothing is aggregated (as the paper's code
does); once a single arm is left it is pulled to the end without running the protocol.

Simulation: one step per batch, vectorised over the active arms; a block's encoded sum is one draw
(:meth:`~anonbandits.channels.DirectChannel.encoded`) and the users' total noise one draw from its exact
aggregate law, unless ``simulation="per-user"`` runs the protocol user by user. The pseudo-regret is
piecewise linear between block ends, so the curve is exact at every checkpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from anonbandits._deprecated import moved
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.channels.direct import DirectChannel
from anonbandits.core.elimination import interval_survivors
from anonbandits.core.regret import RegretTrace
from anonbandits.core.schedules import batch_length, checkpoint_grid
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.envs.rewards import BOUNDED_MODELS
from anonbandits.errors import require
from anonbandits.privacy import randomized_round
from anonbandits.privacy.mechanisms import Distributed
from anonbandits.privacy.protocols import BatchParams, Protocol, Release
from anonbandits.results import Result
from anonbandits.validation import MAX_DRAWS

SIMULATIONS = ("aggregate", "per-user")


@dataclass(frozen=True)
class BlockRelease:
    """The statistic released for arm ``arm`` in batch ``batch``, computed from users ``start..stop-1``."""

    batch: int
    arm: int
    start: int
    stop: int
    params: BatchParams
    yhat: int
    z: float


@filled_dataclass(frozen=True)
class _EliminationResult:
    """One run of Algorithm 1, as :func:`run_elimination` returned it before it returned
    :class:`~anonbandits.results.Result`: deprecated, found as ``EliminationResult`` for one release.

    Parameters
    ----------
    regret : float
        Cumulative pseudo-regret over the horizon.
    pulls : numpy.ndarray
        (K,) int, users served each arm.
    batches : int
        Batches whose statistics were released (a batch cut by the horizon is not counted).
    active : numpy.ndarray
        The arms still active at the end (int; one arm once elimination has finished).
    checkpoints : numpy.ndarray
        Users (rounds) of the regret curve, log-evenly spaced.
    cumulative_regret : numpy.ndarray
        The cumulative pseudo-regret at each checkpoint.
    max_bits : int
        Bits of the longest user message, ``ceil(log2 m)`` of the largest batch.
    wrap_errors : int
        Releases whose analyzer output differs from the exact noisy sum (modular wrap-around).
    blocks : numpy.ndarray
        (B, 3) int, every block of consecutive users served the same arm, as rows ``(arm, start, stop)``
        in serving order.
    releases : tuple
        Every released statistic (batch, arm, users, parameters, SecAgg output, estimate) with
        ``record=True``, else empty.

    {{refs_paper004}}
    """

    regret: float
    pulls: np.ndarray
    batches: int
    active: np.ndarray
    checkpoints: np.ndarray
    cumulative_regret: np.ndarray
    max_bits: int
    wrap_errors: int
    blocks: np.ndarray
    releases: tuple[BlockRelease, ...]


@fill
def run_elimination(
    protocol: Protocol,
    means: np.ndarray,
    *,
    reward: str,
    reward_sigma: float,
    horizon: int,
    batch_base: int,
    confidence: float,
    crs: float,
    rng: np.random.Generator,
    simulation: str = "aggregate",
    secagg: str = "ideal",
    checkpoints: int = 200,
    record: bool = False,
) -> Result:
    """Run Algorithm 1 (private batch-based successive arm elimination) with ``protocol`` for ``horizon`` users.

    Batch ``b = 1, 2, ...`` serves every active arm to a block of ``l(b) = batch_base^b`` new users; each block's
    rewards reach the server only through one release of the protocol, and an arm survives while its upper
    confidence bound ``z/l(b) + crs beta(b)`` is at least the best lower bound (only the last batch is used).

    Parameters
    ----------
    protocol : Protocol
        The privacy protocol P = (R, S, A) (noise, precision g, accuracy tau, modulus m, confidence radius).
    means : numpy.ndarray
        Per-arm reward parameters (for ``reward="gaussian"`` the mean before clipping).
    reward : str
        A bounded reward model of :mod:`anonbandits.envs.rewards` (the encodings need rewards in [0, 1]).
    reward_sigma : float
        Standard deviation of the clipped Gaussian rewards (unused by the other models).
    horizon : int
        Number of users T (one round each).
    batch_base : int
        The base of the batch lengths, ``l(b) = batch_base^b``.
    confidence : float
        ``p`` of the confidence radius ``beta(b)``.
    crs : float
        Multiplier of the confidence radius.
    rng : numpy.random.Generator
        The run's source of randomness.
    simulation : str, optional
        ``"aggregate"`` (default: exact block sums and aggregate noise) or ``"per-user"`` (every user's message).
    secagg : str, optional
        Secure computation in per-user mode: ``"ideal"`` (default), ``"masked"`` or ``"split-and-mix"``.
    checkpoints : int, optional
        About how many points of the regret curve to return (default 200).
    record : bool, optional
        Keep every released statistic in ``releases`` (default ``False``).

    Returns
    -------
    Result
        Metrics ``regret`` (cumulative pseudo-regret over the horizon), ``batches`` (batches whose statistics
        were released; a batch cut by the horizon is not counted), ``active_arms`` (arms still active at the
        end), ``best_arm_found`` (the only arm left is a best one), ``best_pulls`` (users served the best arm),
        ``bits`` (the longest user message, ``ceil(log2 m)`` of the largest batch) and ``wrap_errors`` (releases
        whose analyzer output differs from the exact noisy sum: modular wrap-around); the regret curve at
        log-evenly spaced users. ``info``: ``pulls`` ((K,) int, users served each arm), ``active`` (the arms
        still active), ``blocks`` ((B, 3) int, every block of consecutive users served the same arm, as rows
        ``(arm, start, stop)`` in serving order) and ``releases`` (every released statistic, a
        :class:`BlockRelease`, with ``record=True``; else empty).

    Raises
    ------
    ConfigError
        If ``reward`` is not a bounded reward model, the means are invalid (a non-empty 1-D array of finite
        numbers, at least two arms in the model's range), ``secagg`` is not ``"ideal"`` with
        ``simulation="aggregate"`` (the others simulate the users' messages), or ``simulation="per-user"``
        with a horizon over :data:`~anonbandits.validation.MAX_DRAWS` users (each drawn); through
        :mod:`anonbandits.dp.distributed`, if ``protocol`` is not a protocol, ``horizon`` is not an integer from
        1 to :data:`~anonbandits.channels.feedback.MAX_HORIZON`, ``confidence`` is outside (0, 1],
        ``checkpoints`` is not an integer from 2 to :data:`~anonbandits.core.limits.MAX_GRID_POINTS`,
        ``simulation`` or ``secagg`` is not one of its names, ``record`` is not a bool, or another argument
        breaks the registry's rules.

    {{refs_paper004}}

    {{dist_elimination_example}}
    >>> res.info["pulls"].tolist(), res.metrics["batches"], res.curve[0].tolist()
    ([1746, 254], 7, [1, 1000, 2000])
    >>> res.info["blocks"][:2].tolist(), res.info["active"].tolist()
    ([[0, 0, 2], [1, 2, 4]], [0])
    """
    require(
        isinstance(reward, str) and reward in BOUNDED_MODELS,
        "reward",
        f"one of {', '.join(BOUNDED_MODELS)} (the encodings need rewards in [0, 1])",
        reward,
    )
    require(
        simulation == "per-user" or secagg == "ideal",
        "secagg",
        "ideal with simulation=aggregate (the others simulate users' messages)",
        secagg,
    )
    require(
        simulation != "per-user" or horizon <= MAX_DRAWS,
        "horizon",
        f"at most MAX_DRAWS = {MAX_DRAWS:,} users with simulation=per-user (each user is drawn)",
        horizon,
    )
    instance = MultiUserInstance(np.asarray(means, dtype=float), reward, reward_sigma)
    means, gaps = instance.row, instance.gaps[0]
    channel = DirectChannel.of(instance, rng)
    active = np.arange(means.size)
    mechanism = Distributed(protocol)
    t, b, batches, max_bits, wraps = 0, 0, 0, 0, 0
    blocks: list[tuple[int, int, int]] = []
    releases: list[BlockRelease] = []
    while t < horizon and active.size > 1:
        b += 1
        length = batch_length(batch_base, b)
        if t + active.size * length > horizon:  # the horizon ends inside this batch: no aggregation
            for arm in active[: math.ceil((horizon - t) / length)]:  # the arms whose block starts before T
                blocks.append((int(arm), t, min(horizon, t + length)))
                t = blocks[-1][2]
            break
        bp = protocol.batch_params(length)
        if simulation == "aggregate":
            encoded = channel.encoded(active, bp.g, length)
            rel = mechanism.release(encoded, length, rng, params=bp).accounting["release"]
        else:
            parts = []
            for arm in active:  # each user rounds her reward and adds her noise; then SecAgg and the analyzer
                rewards = channel.draw(np.full(length, float(means[arm])))
                parts.append(protocol.release_users(randomized_round(rewards, bp.g, rng), bp, secagg, rng))
            rel = Release(*(np.concatenate([getattr(r, f) for r in parts]) for f in ("yhat", "z", "exact")))
        wraps += int(np.count_nonzero(rel.z != rel.exact))
        for k, arm in enumerate(active):
            blocks.append((int(arm), t + k * length, t + (k + 1) * length))
            if record:
                releases.append(BlockRelease(b, *blocks[-1], bp, int(rel.yhat[k]), float(rel.z[k])))
        t += active.size * length
        batches, max_bits = batches + 1, max(max_bits, bp.bits)
        active = active[interval_survivors(rel.z / length, crs * protocol.radius(length, active.size, b, confidence))]
    if t < horizon:  # a single arm is left: pulled to the end without running the protocol
        blocks.append((int(active[0]), t, horizon))

    block_arr = np.array(blocks, dtype=np.int64).reshape(-1, 3)
    sizes = block_arr[:, 2] - block_arr[:, 1]
    pulls = np.bincount(block_arr[:, 0], weights=sizes, minlength=means.size).astype(np.int64)
    trace = RegretTrace()
    trace.charge(sizes, gaps[block_arr[:, 0]])  # block after block, each user of a block costing its arm's gap
    grid = checkpoint_grid(horizon, checkpoints, spacing="log-even")
    best = instance.best
    metrics = {
        "regret": float(gaps @ pulls),
        "batches": batches,
        "active_arms": int(active.size),
        "best_arm_found": int(active.size == 1 and int(active[0]) == best),
        "best_pulls": int(pulls[best]),
        "bits": max_bits,
        "wrap_errors": wraps,
    }
    return Result(
        metrics,
        curve=(grid, trace.curve(grid)),
        info={"pulls": pulls, "active": active, "blocks": block_arr, "releases": tuple(releases)},
        curve_axes=("round", "cumulative pseudo-regret"),
    )


#: ``EliminationResult``, what :func:`run_elimination` returned before :class:`~anonbandits.results.Result`
__getattr__ = moved(
    __name__, {}, {"EliminationResult": (_EliminationResult, "anonbandits.Result (what run_elimination returns now)")}
)
