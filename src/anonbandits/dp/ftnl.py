"""Follow-the-Noisy-Leader for stochastic DTOL (experts, full information): paper 001
(Hu, Huang and Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic Environment",
arXiv 2102.07929), Algorithm 2 with Report Noisy Max (Algorithm 3), Sec. 5.1, and the naive variant described
in the text of Sec. 5.

Epoch s has 2^s rounds (epoch 0 = round 1 plays the initial action, configurable: the analysis takes action 1
as the optimal one, so a fixed first action would be free information); every round the whole reward
vector is observed. At the end of epoch s, RNM adds one Lap(b) to each action's epoch gain and the argmax is
played during epoch s + 1; only epoch-s data enter (forgetfulness), so each reward vector feeds exactly one
RNM call. b = noise_multiplier / eps with the paper's noise_multiplier = 1 (2 guarantees eps-DP for
non-monotone gains: the claim of Dwork and Roth that Algorithm 3 cites is for monotone queries); the naive
variant gives each action its own (eps/K)-DP sum, b = K / eps. The horizon just stops the run (the algorithm is
anytime); the reward components are independent across actions (the paper does not state their joint law).

Simulation: one event per epoch; the K epoch gains are drawn as sums (binomial for Bernoulli).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels.direct import RewardSum
from anonbandits.core.schedules import ftnl_epoch_length
from anonbandits.dp.runs import Means, check_epsilon, finish, start
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import CentralLaplace
from anonbandits.results import Result

#: the names of FTNL's curve: rounds and the experts' cumulative pseudo-regret
EXPERTS_AXES = ("round", "cumulative pseudo-regret (experts)")


def parse_initial(value: str | int, actions: int, rng: np.random.Generator) -> int:
    """The action of epoch 0: ``"random"`` (uniform) or an index in [0, actions)."""
    if isinstance(value, str) and value.strip().lower() == "random":
        return int(rng.integers(actions))
    try:
        index = int(value)
    except (TypeError, ValueError):
        index = -1
    require(0 <= index < actions, "initial", f"'random' or an action index in [0, {actions})", value)
    return index


@fill
def ftnl(
    means: Means,
    epsilon: float,
    horizon: int,
    rng: np.random.Generator,
    *,
    naive: bool = False,
    noise_multiplier: float = 1.0,
    initial: str | int = "random",
    reward: str | RewardSum = "bernoulli",
    expected_means: Sequence[float] | None = None,
    checkpoints: int | Sequence[int] = 200,
) -> Result:
    """Run FTNL (paper 001, Algorithms 2 and 3) or its naive variant once, in the experts setting.

    Epoch s has 2^s rounds and observes every action's reward; at its end Report Noisy Max adds one ``Lap(b)``
    to each action's epoch gain and the argmax is played during epoch s + 1.

    Parameters
    ----------
    means : str, sequence of float or numpy.ndarray
        Mean reward of each action (or a ``"0.9,0.8"`` string).
    {{dp_epsilon}}
    {{dp_horizon_rng}}
    naive : bool, optional
        Naive FTNL (``Lap(K/eps)`` per action) instead of Report Noisy Max with ``Lap(noise_multiplier/eps)``
        (default ``False``).
    noise_multiplier : float, optional
        1 (default, the paper) or 2 (eps-DP for non-monotone gains); ignored when ``naive``.
    initial : str or int, optional
        Action of epoch 0, ``"random"`` (default) or an index.
    {{reward_curve}}

    Returns
    -------
    Result
        Metrics ``regret`` (the experts' pseudo-regret), ``best_arm_found``, ``releases`` (one per RNM call, with
        K noisy gains) and ``epochs`` (completed epochs); the regret curve (axes :data:`EXPERTS_AXES`); ``info``:
        ``pulls`` (the rounds each action was played), ``best_arm`` and the ``ledger``.

    Raises
    ------
    ConfigError
        If the means, epsilon, horizon (an integer from 1 to :data:`~anonbandits.channels.feedback.MAX_HORIZON`),
        noise multiplier, initial action or reward model are invalid.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> run = ftnl([0.9, 0.1], 1.0, 100, np.random.default_rng(0), initial=1)
    >>> run.info["pulls"].tolist(), run.metrics["epochs"]
    ([95, 5], 6)
    """
    mu, T, channel, true, grid, trace, ledger = start(means, horizon, reward, expected_means, checkpoints, rng)
    eps, K = check_epsilon(epsilon), mu.size
    require(noise_multiplier > 0, "noise_multiplier", "positive", noise_multiplier)
    # naive: each action's sum is (eps/K)-DP, i.e. sensitivity K at level eps; RNM: noise_multiplier at level eps
    laplace = CentralLaplace(eps, K if naive else noise_multiplier)
    action, epoch = parse_initial(initial, K, rng), 0
    while trace.rounds < T:
        length = ftnl_epoch_length(epoch)
        if trace.rounds + length >= T:  # last epoch: truncated at T, its data never used
            trace.play(action, T - trace.rounds)
            break
        gains = channel.request(np.arange(K), np.full(K, length)).sums
        trace.play(action, length)
        noise = laplace.noise(rng, K)
        ledger.release([ledger.block(-1, length, gains)], range(K), gains, noise, laplace.scale, trace.rounds)
        action = int(np.argmax(gains + noise))
        epoch += 1
    return finish(trace, grid, true, ledger, EXPERTS_AXES, epochs=epoch)
