"""The start and the finish of one run of a single-learner private bandit algorithm: the input checks, what every
event-driven driver starts from (checked means, the direct channel, an empty regret trace and an empty
:class:`~anonbandits.dp.ledger.Ledger`) and the :class:`~anonbandits.results.Result` it returns.

The algorithms of :mod:`anonbandits.dp` simulate *event by event*: a block of consecutive rounds with a fixed arm (or
cycle of arms) is one call whose rewards enter only through their sum, drawn through the direct channel.
:class:`~anonbandits.core.regret.RegretTrace` turns those blocks back into the exact cumulative pseudo-regret at any
round. A run's :class:`~anonbandits.results.Result` holds the metrics (``regret``, ``best_arm_found``, ``releases``,
then the algorithm's own counts), the regret curve, and in ``info`` what the metrics schema cannot say: the pulls of
each arm, the best arm's index and the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from anonbandits.channels.direct import DirectChannel, RewardSum
from anonbandits.channels.feedback import MAX_HORIZON
from anonbandits.core.regret import RegretTrace
from anonbandits.core.schedules import checkpoint_grid
from anonbandits.dp.ledger import Ledger
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.envs.rewards import BOUNDED_MODELS, parse_means
from anonbandits.errors import require
from anonbandits.results import Result
from anonbandits.validation import EPSILON, RULES, Rule, is_integer

__all__ = [
    "HORIZON",
    "HORIZON_PARAM",
    "REGRET_AXES",
    "Means",
    "check_epsilon",
    "check_setup",
    "finish",
    "instance_of",
    "run_result",
    "start",
]

Means = str | Sequence[float] | np.ndarray

#: the names of a run's curve: rounds and the cumulative pseudo-regret
REGRET_AXES = ("round", "cumulative pseudo-regret")

#: The horizon of the dp families' algorithms: at most MAX_HORIZON rounds, as the other families'. ``HORIZON`` is
#: the library functions' rule (the vocabulary's "at least 1", then the limit), ``HORIZON_PARAM`` the registry
#: parameters' (the anonymous family's message).
HORIZON = Rule(
    RULES["horizon"].test,
    RULES["horizon"].requirement,
    then=Rule(lambda v: v <= MAX_HORIZON, f"at most {MAX_HORIZON:.0e} rounds (MAX_HORIZON)"),
)
HORIZON_PARAM = Rule(lambda v: is_integer(v) and 1 <= v <= MAX_HORIZON, f"between 1 and {MAX_HORIZON:.0e} rounds")


def check_epsilon(epsilon: float) -> float:
    """A finite positive privacy parameter (not a bool) in the supported range (:data:`anonbandits.validation.EPSILON`:
    one line naming the value otherwise)."""
    EPSILON.check("epsilon", epsilon)
    return float(epsilon)


def instance_of(
    means: Means, reward: str | RewardSum, expected_means: Sequence[float] | np.ndarray | None = None
) -> MultiUserInstance:
    """The instance shared by the learner's rounds: checked arm means (a ``"0.9,0.8"`` string is parsed), reward
    model (a name of :data:`~anonbandits.envs.rewards.BOUNDED_MODELS`, rewards in [0, 1] as the privacy
    mechanisms assume, or a callable ``sums(mu, counts, rng)``) and true expected rewards, the pseudo-regret's
    reference: ``expected_means`` if given, the model's exact means for a named model (clipping shifts the
    Gaussian's), else the means."""
    mu = parse_means(means if isinstance(means, str) else [float(m) for m in np.ravel(means)])
    require(callable(reward) or reward in BOUNDED_MODELS, "reward", f"one of {', '.join(BOUNDED_MODELS)}", reward)
    if expected_means is not None:
        require(
            np.shape(expected_means) == mu.shape, "expected_means", f"one entry per arm ({mu.size})", expected_means
        )
    return MultiUserInstance(mu, reward, expected=None if expected_means is None else np.asarray(expected_means))


def check_setup(
    means: Means,
    horizon: int,
    reward: str | RewardSum,
    *,
    min_horizon: int = 1,
    expected_means: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, int, np.ndarray]:
    """Checked arm means, horizon (an integer from ``min_horizon``, ``-1`` for the number of arms, to
    :data:`~anonbandits.channels.feedback.MAX_HORIZON` rounds) and the arms' true expected rewards (see
    :func:`instance_of`); ``ConfigError`` for any of them refused."""
    instance = instance_of(means, reward, expected_means)
    minimum = instance.n_arms if min_horizon < 0 else min_horizon
    require(
        is_integer(horizon) and minimum <= horizon <= MAX_HORIZON,
        "horizon",
        f"an integer from {minimum} to {MAX_HORIZON:.0e} rounds (MAX_HORIZON)",
        horizon,
    )
    return instance.row, int(horizon), instance.means[0]


def start(
    means: Means,
    horizon: int,
    reward: str | RewardSum,
    expected_means: Sequence[float] | None,
    checkpoints: int | Sequence[int],
    rng: np.random.Generator,
    *,
    min_horizon: int = 1,
) -> tuple[np.ndarray, int, DirectChannel, np.ndarray, np.ndarray, RegretTrace, Ledger]:
    """What every event-driven driver starts from (see :func:`check_setup` for the checks): the means, the
    horizon, the direct channel every reward is drawn through (from ``rng``), the true means, the checkpoint grid,
    an empty trace and an empty ledger."""
    mu, T, true = check_setup(means, horizon, reward, min_horizon=min_horizon, expected_means=expected_means)
    return (
        mu,
        T,
        DirectChannel(mu, reward, rng),
        true,
        checkpoint_grid(T, checkpoints),
        RegretTrace(true.max() - true),
        Ledger(),
    )


def run_result(
    regret: float,
    checkpoints: np.ndarray,
    curve: np.ndarray,
    pulls: np.ndarray,
    best_arm: int,
    releases: int,
    ledger: Ledger | None = None,
    axes: tuple[str, str] = REGRET_AXES,
    **extra: Any,
) -> Result:
    """The :class:`~anonbandits.results.Result` of one run of a single-learner algorithm.

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
        The index of the truly best arm; ``best_arm_found`` says whether it was the most-played one.
    releases : int
        Number of privatized releases (see each algorithm for what one release is).
    ledger : Ledger or None, optional
        Blocks of rewards and the releases they fed (``None``, the default, where the algorithm keeps none).
    axes : tuple of str, optional
        The names of the curve's x and y (default :data:`REGRET_AXES`).
    **extra : object
        Algorithm-specific counts (epochs, surviving arms, ...), metrics after the three above.

    Returns
    -------
    Result
        ``metrics``: ``regret``, ``best_arm_found`` (0 or 1), ``releases``, then ``extra``; ``curve``:
        ``(checkpoints, curve)``; ``info``: ``pulls``, ``best_arm`` and ``ledger``.

    Examples
    --------
    >>> import numpy as np
    >>> run = run_result(1.5, np.array([10]), np.array([1.5]), np.array([8, 2]), best_arm=0, releases=2, epochs=1)
    >>> run.metrics, run.info["pulls"].tolist(), run.curve_axes
    ({'regret': 1.5, 'best_arm_found': 1, 'releases': 2, 'epochs': 1}, [8, 2], ('round', 'cumulative pseudo-regret'))
    """
    metrics = {
        "regret": regret,
        "best_arm_found": int(int(np.argmax(pulls)) == best_arm),
        "releases": releases,
        **extra,
    }
    return Result(
        metrics,
        curve=(checkpoints, curve),
        info={"pulls": pulls, "best_arm": best_arm, "ledger": ledger},
        curve_axes=axes,
    )


def finish(
    trace: RegretTrace,
    grid: np.ndarray,
    true_means: np.ndarray,
    ledger: Ledger,
    axes: tuple[str, str] = REGRET_AXES,
    **extra: Any,
) -> Result:
    """A finished trace and its ledger as a run's :class:`~anonbandits.results.Result` (:func:`run_result`; one
    release per ledger release)."""
    if trace.pulls is None:
        raise TypeError("finish needs a trace of played arms: RegretTrace(gaps)")
    return run_result(
        float(trace.regret),
        grid,
        trace.curve(grid),
        trace.pulls.copy(),
        int(np.argmax(true_means)),
        ledger.releases,
        ledger,
        axes,
        **extra,
    )
