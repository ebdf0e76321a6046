"""The library parameters of the anonymous channel (:class:`~anonbandits.spec.Param` definitions), shared by the
algorithms that take it: the multi-user instance, the anonymity parameter C, the privacy mechanism on released
group sums (``--privacy``, ``--epsilon``), the users' absence (``--absence``), the decomposer, and the
``--channel`` flags of ``se`` and ``dp-se``.

A module of its own, light to import (no solver, no anonymous driver): the registry entries of ``se`` and
``dp-se`` (in :mod:`anonbandits.dp`) list these parameters, and a first direct run must not load the anonymous
family (its runs import :mod:`anonbandits.anonymous.entries` only when ``--channel anonymous`` is given). The
channels themselves, and their names, are :data:`anonbandits.channels.CHANNELS`. (This module was
``anonbandits.channel_flags``; that path still works for one release, with a ``DeprecationWarning``.)
"""

from __future__ import annotations

import dataclasses
import math

from anonbandits.channels import CHANNELS as _CHANNEL_TABLE
from anonbandits.channels.anonymous import is_decomposer
from anonbandits.channels.feedback import MAX_HORIZON
from anonbandits.envs.instances import INSTANCE_REWARDS
from anonbandits.spec import ARM_MEANS, Param
from anonbandits.validation import BOOL, POSITIVE, Rule, checks, is_integer

#: ``--shares`` of ``--privacy distributed``: the paper 004 protocol whose per-member noise shares they are.
SHARES = {"polya": "dist-dp-se", "skellam": "dist-rdp-se", "gaussian": "dist-cdp-se"}


def parse_epsilon(value: str | float) -> float:
    """A positive finite number; the float infinity (the default, never typed text) means no privacy."""
    if isinstance(value, bool):  # float(True) is 1.0: a flag is not an epsilon
        raise ValueError(f"expected a positive finite number, got {value!r}")
    eps = float(value)
    if not 0 < eps < math.inf and (isinstance(value, str) or eps != math.inf):
        raise ValueError(f"expected a positive finite number, got {value!r}")
    return eps


PRIVACY_PARAMS = (
    Param(
        "privacy",
        str,
        "none",
        "noise on every released group sum: none, central (Laplace) or "
        "distributed (members' shares through secure aggregation); the results report "
        "privacy_epsilon (per reward), privacy_epsilon_per_user (whole run) and privacy_delta",
        choices=("none", "central", "distributed"),
    ),
    Param(
        "epsilon",
        parse_epsilon,
        math.inf,
        "event-level epsilon, needed by --privacy central|distributed "
        "(inf = none given): each released group sum is epsilon-DP w.r.t. any one reward in it "
        "(sensitivity 1: rewards lie in [0, 1])",
        rule=POSITIVE,
    ),
    Param(
        "shares",
        str,
        "polya",
        "noise shares of --privacy distributed (bernoulli rewards): polya = pure "
        "epsilon-DP; skellam, gaussian = paper 004's RDP / CDP calibration",
        choices=tuple(SHARES),
    ),
    Param(
        "dp_delta",
        float,
        1e-6,
        "delta of the reported (epsilon, delta) guarantees (per user; also per reward with skellam/gaussian shares)",
        aliases=("delta",),
    ),
)


#: ``--means`` of the anonymous family: a means file of N users x K arms, instead of a clustered instance
INSTANCE_MEANS = Param(
    "means",
    str,
    "",
    "a means file (.csv matrix or user-type table with a count column, .parquet "
    "table; docs/anonymous-bandits.md) instead of a clustered instance: it sets users and arms",
    rule=Rule(lambda v: isinstance(v, str), "the path of a means file, or empty"),
)

#: ``--absence``: users of the platform miss blocks (the anonymous channel's assignments); 0 is the paper's model
ABSENCE = Param(
    "absence",
    float,
    0.0,
    "probability in [0, 1) that a user misses a block (one assignment, its 2C+2 rounds): absent users get no "
    "reward, are in no sum and add no regret; decomposed batches use groups robust to it (confidence 0.95) and "
    "are re-planned until every pair has its demand (docs/platform.md)",
)

#: ``--max-exposure``: a cap on each user's surplus exposure per decomposed batch (-1: none, the decomposer's seating)
MAX_EXPOSURE = Param(
    "max_exposure",
    int,
    -1,
    "S >= 0: each decomposed batch puts no user in a released group in more than S blocks beyond its demand "
    "(anondecomp's max_surplus_exposure); with --privacy each user's epsilon comes from its own releases; "
    "-1 = no cap (docs/platform.md)",
    rule=Rule(lambda v: is_integer(v) and -1 <= v <= 2**62, "an integer >= 0, or -1 for no cap"),
)

INSTANCE_PARAMS = (
    Param("users", int, 300, "number of users N", unit="users"),
    Param("arms", int, 5, "number of arms K", unit="arms"),
    Param("C", int, 3, "anonymity parameter: every observed group has at least C users", unit="users"),
    Param("cluster", int, 0, "U: every arm is optimal for at least U users (0 = balanced, floor(N/K))", unit="users"),
    Param(
        "horizon",
        int,
        200_000,
        "number of rounds T",
        unit="rounds",
        rule=Rule(lambda v: is_integer(v) and 1 <= v <= MAX_HORIZON, f"between 1 and {MAX_HORIZON:.0e} rounds"),
    ),
    Param(
        "gap", float, 0.1, "each user's gap between its best and second-best mean (others are larger)", unit="reward"
    ),
    Param("reward", str, "bernoulli", "reward model (gaussian = clipped N(mu, 0.5^2))", choices=INSTANCE_REWARDS),
    Param("instance_seed", int, -1, "seed of the instance; -1 draws a new instance from each run's seed"),
    INSTANCE_MEANS,
    *PRIVACY_PARAMS,
    ABSENCE,
    MAX_EXPOSURE,
)

#: ``--means`` of ``se`` and ``dp-se``: one learner's arm means, and with ``--channel anonymous`` also a means file
EPOCH_MEANS = dataclasses.replace(
    ARM_MEANS,
    help=f"{ARM_MEANS.help}; --channel anonymous: this default draws a "
    "clustered instance, another list gives every user these means, a .csv/.parquet "
    "path is a means file (docs/anonymous-bandits.md)",
)


#: ``--channel`` of ``se`` and ``dp-se`` (their registry entries are in :mod:`anonbandits.dp`)
EPOCH_CHANNEL = Param(
    "channel",
    str,
    "direct",
    "how rewards are observed: direct (one user, the single-user "
    "engine) or anonymous (N users x K arms, every observed group has at least C users)",
    choices=tuple(_CHANNEL_TABLE),
)
#: the flags that apply to ``se``/``dp-se`` on the anonymous channel only (and to the direct channel only)
ANONYMOUS_ONLY = (
    "users",
    "arms",
    "C",
    "cluster",
    "gap",
    "instance_seed",
    "decomposer",
    "privacy",
    "shares",
    "dp_delta",
    "absence",
    "max_exposure",
)
DIRECT_ONLY = ("order", "reward_sigma", "spacing")


#: ``--decomposer``: the one definition of the parameter (``anon-batched``, ``anon-bai``, and ``se``/``dp-se`` with
#: ``--channel anonymous``), checked by the test :func:`anonbandits.channels.check_decomposer` applies
DECOMPOSER = Param(
    "decomposer",
    str,
    "auto",
    "anondecomp method decomposing each batch (anonymous channel; anonbandits decompose --help lists them)",
    rule=Rule(is_decomposer, "an anondecomp method (anonbandits decompose --help lists them)"),
)


@checks(private=BOOL)
def epoch_params(private: bool) -> tuple[Param, ...]:
    """The parameters ``se`` and ``dp-se`` add for ``--channel anonymous``.

    Horizon, means, reward and confidence are their own; ``se`` also takes the mechanism's ``epsilon``, while
    ``dp-se``'s ``epsilon`` is DP-SE's and sets the mechanism's too.

    Parameters
    ----------
    private : bool
        True for ``dp-se`` (no second ``epsilon``), False for ``se``.

    Returns
    -------
    tuple of Param
        ``channel``, the instance and privacy parameters of the anonymous family (without deprecated names:
        these entries never had them) and ``decomposer``.

    Raises
    ------
    ConfigError
        If ``private`` is not True or False.

    References
    ----------
    Sajed, Sheffet, "An Optimal Private Stochastic-MAB Algorithm based on an Optimal Private Stopping Rule",
    ICML 2019 (DP-SE).

    Examples
    --------
    >>> [p.name for p in epoch_params(private=True)][:4]
    ['channel', 'users', 'arms', 'C']
    >>> "epsilon" in [p.name for p in epoch_params(private=False)]
    True
    """
    names = set(ANONYMOUS_ONLY) | (set() if private else {"epsilon"})
    return (
        EPOCH_CHANNEL,
        *(dataclasses.replace(p, aliases=()) for p in INSTANCE_PARAMS if p.name in names),
        DECOMPOSER,
    )
