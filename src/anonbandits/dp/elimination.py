"""Successive elimination: DP-SE (Sajed & Sheffet 2019) and its non-private counterpart SE.

DP-SE is the baseline of two papers, with different constants: paper 001 (Hu, Huang and Mehta, "Near-Optimal
Algorithms for Private Online Learning in a Stochastic Environment", arXiv 2102.07929, Sec. 6) uses confidence
beta = 1/T and round-robin pulls inside an epoch (the defaults); paper 004 (Chowdhury and Zhou, "Distributed
Differential Privacy in Multi-Armed Bandits", ICLR 2023, Sec. 7, with its published code) uses
``confidence=0.1``, ``order="blocks"`` (each active arm served to consecutive users) and, for its figures,
clipped Gaussian rewards of standard deviation 0.1 (a ``reward`` callable and ``expected_means``).

Both use the epochs of :func:`~anonbandits.core.schedules.epoch_length` (R_e pulls of each active arm in
epoch e), one fresh Lap(1/eps) per arm's epoch sum through the central Laplace mechanism (earlier epochs are
forgotten), and keep an arm while its noisy mean is within 2 (h_e + c_e)
(:func:`~anonbandits.core.radii.dpse_threshold`) of the best one. A horizon reached mid-epoch stops the run
without a release; the last arm is played to the horizon. SE is eps = infinity (no noise, c_e = 0).
Simulation: one event per epoch; each active arm's epoch sum is one draw (binomial for Bernoulli).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from anonbandits._deprecated import moved
from anonbandits._docstrings import fill
from anonbandits.channels.direct import RewardSum
from anonbandits.core import schedules
from anonbandits.core.elimination import gap_survivors
from anonbandits.core.radii import dpse_threshold
from anonbandits.core.regret import RegretTrace
from anonbandits.core.schedules import epoch_length
from anonbandits.dp.runs import Means, check_epsilon, finish, start
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import CentralLaplace
from anonbandits.results import Result

ORDERS = ("round-robin", "blocks")

#: ``parse_confidence`` moved to :mod:`anonbandits.core.schedules` (the anonymous family's ``se``/``dp-se`` use it
#: too); its old path here warns for one release.
__getattr__ = moved(__name__, {"parse_confidence": schedules})


def _play(trace: RegretTrace, arms: np.ndarray, rounds: int, per_arm: int, order: str) -> None:
    """Record ``rounds`` rounds of an epoch of ``per_arm`` pulls of each of ``arms``."""
    if order == "round-robin":
        return trace.play(arms, rounds)
    for arm in arms:
        n = min(per_arm, rounds)
        trace.play(arm, n)
        rounds -= n


@fill
def successive_elimination(
    means: Means,
    horizon: int,
    rng: np.random.Generator,
    *,
    epsilon: float = math.inf,
    confidence: str | float = "1/T",
    order: str = "round-robin",
    reward: str | RewardSum = "bernoulli",
    expected_means: Sequence[float] | None = None,
    checkpoints: int | Sequence[int] = 200,
) -> Result:
    """Run (DP-)SE once; ``epsilon = inf`` is non-private SE.

    Epochs e = 1, 2, ...: every active arm is pulled ``R_e`` times (:func:`~anonbandits.core.schedules.epoch_length`),
    its epoch sum gets one fresh ``Lap(1/eps)`` (earlier epochs are forgotten), and an arm is kept while its noisy
    mean is within ``2 (h_e + c_e)`` of the best one. A horizon reached mid-epoch stops the run without a release;
    the last arm left is played to the horizon.

    Parameters
    ----------
    {{dp_means}}
    horizon : int
        Number of rounds T, from 1 to :data:`~anonbandits.channels.feedback.MAX_HORIZON` (10^9).
    rng : numpy.random.Generator
        The run's source of randomness (rewards and noise).
    epsilon : float, optional
        Privacy parameter, positive; ``inf`` (default) adds no noise.
    confidence : str or float, optional
        beta: ``"1/T"`` (default, paper 001) or a number in (0, 1) such as 0.1 (paper 004).
    order : str, optional
        ``"round-robin"`` (default, paper 001) or ``"blocks"`` (each arm's ``R_e`` pulls consecutively, paper
        004); changes only when the regret accrues inside an epoch.
    {{reward_curve}}

    Returns
    -------
    Result
        Metrics ``regret``, ``best_arm_found`` (the most-played arm is a best one), ``releases`` (one per arm per
        completed epoch: its noisy mean), ``epochs`` (completed epochs) and ``survivors`` (active arms at the
        end); the regret curve; ``info``: ``pulls`` (per arm), ``best_arm`` and the ``ledger``.

    Raises
    ------
    ConfigError
        If the means, horizon (an integer from 1 to :data:`~anonbandits.channels.feedback.MAX_HORIZON`; a bool
        or a float is not one), epsilon, confidence, order or reward model are invalid (or, through
        :mod:`anonbandits.dp`, an argument breaks the registry's rules).

    See Also
    --------
    dp_se, se : the two registered cases.

    {{refs_sajed2019_paper001_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> run = successive_elimination([0.9, 0.1], 10_000, np.random.default_rng(0), epsilon=1.0, confidence=0.1,
    ...                              order="blocks")
    >>> run.info["pulls"].tolist(), run.metrics
    ([9350, 650], {'regret': 520.0, 'best_arm_found': 1, 'releases': 2, 'epochs': 1, 'survivors': 1})
    """
    mu, T, channel, true, grid, trace, ledger = start(means, horizon, reward, expected_means, checkpoints, rng)
    eps = math.inf if isinstance(epsilon, float | int) and epsilon == math.inf else check_epsilon(epsilon)
    beta = schedules.parse_confidence(confidence, T)
    require(order in ORDERS, "order", f"one of {', '.join(ORDERS)}", order)
    mechanism = CentralLaplace(eps) if math.isfinite(eps) else None
    active = np.arange(mu.size)
    epoch = 0
    while active.size > 1 and trace.rounds < T:
        e, size = epoch + 1, active.size
        length = epoch_length(size, e, beta, eps)
        if length * size > T - trace.rounds:
            _play(trace, active, T - trace.rounds, length, order)
            break
        epoch = e
        _play(trace, active, length * size, length, order)
        sums = channel.request(active, np.full(size, length)).sums
        noise = mechanism.noise(rng, size) if mechanism else np.zeros(size)  # release(sums)'s noise, drawn alone
        for arm, s, z in zip(active, sums, noise, strict=True):
            ledger.release([ledger.block(arm, length, s)], [arm], [s], [z], 1.0 / eps, trace.rounds)
        active = active[gap_survivors((sums + noise) / length, dpse_threshold(size, e, length, beta, eps))]
    trace.play(active[0], T - trace.rounds)
    return finish(trace, grid, true, ledger, epochs=epoch, survivors=int(active.size))


@fill
def dp_se(means: Means, epsilon: float, horizon: int, rng: np.random.Generator, **options: Any) -> Result:
    """DP-SE (Sajed & Sheffet 2019), epsilon-DP; the baseline of papers 001 (Sec. 6) and 004 (Sec. 7).

    :func:`successive_elimination` at a finite ``epsilon``: one ``Lap(1/eps)`` per arm's epoch sum.

    Parameters
    ----------
    {{dp_means}}
    {{dp_epsilon}}
    {{dp_horizon_rng}}
    **options : dict, optional
        Those of :func:`successive_elimination`: ``confidence``, ``order``, ``reward``, ``expected_means``,
        ``checkpoints``.

    Returns
    -------
    Result
        As :func:`successive_elimination`'s.

    Raises
    ------
    ConfigError
        If ``epsilon`` is not a finite positive number in the supported range, or another argument is invalid
        (as :func:`successive_elimination` refuses it).

    {{refs_sajed2019_paper001_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> run = dp_se("0.9,0.1", 1.0, 10_000, np.random.default_rng(0), confidence=0.1)
    >>> run.metrics["best_arm_found"], run.metrics["survivors"]
    (1, 1)
    """
    return successive_elimination(means, horizon, rng, epsilon=check_epsilon(epsilon), **options)


@fill
def se(means: Means, horizon: int, rng: np.random.Generator, **options: Any) -> Result:
    """Non-private successive elimination with DP-SE's epoch schedule at eps = infinity (the reference).

    Parameters
    ----------
    {{dp_means}}
    {{dp_horizon_rng}}
    **options : dict, optional
        Those of :func:`successive_elimination` but ``epsilon``.

    Returns
    -------
    Result
        As :func:`successive_elimination`'s (``c_e = 0``, no noise).

    Raises
    ------
    ConfigError
        If an argument is invalid (as :func:`successive_elimination` refuses it).

    {{refs_sajed2019_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> run = se([0.9, 0.1], 10_000, np.random.default_rng(0), confidence=0.1, checkpoints=4)
    >>> run.curve[0].tolist(), run.info["pulls"].tolist()
    ([2500, 5000, 7500, 10000], [9350, 650])
    """
    return successive_elimination(means, horizon, rng, epsilon=math.inf, **options)
