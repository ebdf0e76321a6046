"""Algorithm 2 of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022),
Section 3.5 and Theorem 2: explore-then-commit anonymous bandits without a user-cluster assumption (N > C).

Exploration lasts ``T_exp = scale C^(2/3) K^(1/3) T^(2/3) (log NKT)^(1/3)`` rounds (the paper's scale is 10),
``floor(T_exp / (2C+2))`` phases (at least one). The users are split once into floor(N/(C+1)) groups of C+1
consecutive users (the rest join the last group); in phase r group s plays arm ``(r + s) mod K``
(``arm_offset``, our **[DECISION]**, spreading the arms across groups) or ``r mod K`` (the paper's text);
each phase is one run of the 2C+2-round sub-algorithm. Then every user plays ``argmax_j sigma_ij / n_ij``
(unexplored arms last, lowest index on ties) to the horizon. The phases use K distinct assignments, played in
the paper's order, so the regret curve and a cut at the horizon are exact.
"""

from __future__ import annotations

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.anonymous._legacy import old_names
from anonbandits.anonymous.batches import MECHANISM, OPTIONAL_RNG, BatchRecord
from anonbandits.anonymous.regret import finish_run
from anonbandits.channels import AnonymousChannel, elicitation_rounds
from anonbandits.core.limits import MAX_INSTANCE_CELLS, check_size
from anonbandits.core.schedules import exploration_length
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import Mechanism
from anonbandits.results import Result
from anonbandits.validation import BOOL, INSTANCE, POSITIVE_FINITE, validated

__getattr__ = old_names(__name__, ("AnonymousRun",))


@fill
def _etc_assignments(n_users: int, n_arms: int, C: int, arm_offset: bool = True) -> np.ndarray:
    """The K assignments of Algorithm 2's exploration: row q is played in every phase r with r mod K = q.

    The users are split into floor(N/(C+1)) groups of C+1 consecutive users (the rest join the last group);
    group s plays arm ``(q + s) mod K`` (``arm_offset``) or ``q`` (the paper's text).

    Parameters
    ----------
    n_users : int
        N, the number of users (more than C).
    n_arms : int
        K, the number of arms.
    C : int
        The anonymity parameter.
    arm_offset : bool, optional
        Spread the arms across groups (the default) or give every group the phase's arm.

    Returns
    -------
    numpy.ndarray
        (K, N) arm indices.

    {{raises_validation}}
        Also for N at most C, or N x K above ``MAX_INSTANCE_CELLS`` (10^8) without an enclosing
        :func:`~anonbandits.core.limits.allowing_large`.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
    (Section 3.5, Algorithm 2).

    Examples
    --------
    >>> etc_assignments(6, 3, 1).tolist()
    [[0, 0, 1, 1, 2, 2], [1, 1, 2, 2, 0, 0], [2, 2, 0, 0, 1, 1]]
    >>> etc_assignments(5, 2, 1, arm_offset=False).tolist()
    [[0, 0, 0, 0, 0], [1, 1, 1, 1, 1]]
    """
    require(n_users > C, "n_users", f"more than C = {C} (a group has C + 1 users)", n_users)
    check_size(
        "users x arms",
        n_users * n_arms,
        MAX_INSTANCE_CELLS,
        "MAX_INSTANCE_CELLS",
        "cells of the assignments: n_users x n_arms",
    )
    n_groups = n_users // (C + 1)
    group = np.minimum(np.arange(n_users) // (C + 1), n_groups - 1)
    q = np.arange(n_arms)[:, None]
    return (q + group[None, :]) % n_arms if arm_offset else np.broadcast_to(q, (n_arms, n_users)).copy()


@fill
def _anon_etc(
    instance: MultiUserInstance,
    C: int,
    horizon: int,
    *,
    arm_offset: bool = True,
    explore_scale: float = 10.0,
    rng: np.random.Generator,
    mechanism: Mechanism | None = None,
    noise_rng: np.random.Generator | None = None,
    allow_large: bool = False,
    absence: float = 0.0,
) -> Result:
    """Run Algorithm 2 (``anon-etc``, explore-then-commit) on ``instance`` for ``horizon`` rounds.

    Explores for ``floor(T_exp / (2C+2))`` phases (:func:`~anonbandits.core.schedules.exploration_length`), each
    one run of the 2C+2-round sub-algorithm on an assignment of :func:`etc_assignments`, then every user plays
    its arm of best estimated mean to the horizon. No user-cluster assumption.

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The N x K means and reward model.
    C : int
        The anonymity parameter, at least 1 and below N.
    horizon : int
        The horizon T.
    arm_offset : bool, optional
        Group s plays ``(r + s) mod K`` in phase r (the default) or ``r mod K``.
    explore_scale : float, optional
        The constant of T_exp, positive. Default 10.0 (the paper's).
    rng : numpy.random.Generator
        The source of the rewards.
    {{mechanism}}
    allow_large : bool, optional
        Confirm sizes past the documented limits of :mod:`anonbandits.core.limits` (the anonymous channel's
        (2C+2) x N user-rounds of one elicitation). Default False: refused in one line.
    absence : float, optional
        The probability in [0, 1) that a user misses a phase (one block of 2C+2 rounds): an absent user gets no
        reward, is in no sum and adds no regret, and a group keeps only its present users (an arm left with C or
        fewer gives nothing that phase). The phases are not re-planned: each user commits on the estimates it
        received. Default 0.

    Returns
    -------
    Result
        The run's regret, curve, audit figures and its one exploration record
        (:func:`~anonbandits.anonymous.regret.finish_run`); ``info`` holds the commitments,
        ``exploration_target`` and ``phases``.

    Raises
    ------
    ConfigError
        If an argument is of the wrong type (an ``instance`` that is not a ``MultiUserInstance``, a generator
        that is not one, a switch that is not a bool), ``C`` is below 1, the instance has at most C users, the
        horizon is not an integer from 1 to ``MAX_HORIZON`` (10^9), ``explore_scale`` is not a finite positive
        number, or ``absence`` is not a probability in [0, 1).

    {{refs_paper000}}
    Section 3.5, Algorithm 2, Theorem 2.

    {{anon_example}}
    >>> run = anon_etc(instance, 1, 5000, explore_scale=1.0, rng=np.random.default_rng(1))
    >>> run.info["phases"], run.metrics["exploration_rounds"], run.metrics["optimal_fraction"]
    (206, 824, 1.0)
    """
    n_users, n_arms = instance.n_users, instance.n_arms
    require(C >= 1, "C", "at least 1", C)
    require(n_users > C, "users", f"more than C = {C} (Algorithm 2 needs more users than C)", n_users)
    require(explore_scale > 0, "explore_scale", "positive", explore_scale)
    channel = AnonymousChannel(
        instance, C, horizon, rng, mechanism=mechanism, noise_rng=noise_rng, allow_large=allow_large, absence=absence
    )
    r = elicitation_rounds(C)
    t_exp = exploration_length(n_users, n_arms, C, horizon, explore_scale)
    phases = max(1, int(t_exp // r))
    fb = channel.elicit(_etc_assignments(n_users, n_arms, C, arm_offset), order=np.arange(1, phases + 1) % n_arms)
    record = BatchRecord(
        demand=phases,
        assignments=min(phases, channel.t // r),
        distinct=n_arms,
        method="etc",
        uncovered=0,
        rounds=channel.t,
        eliminated=0,
        active_pairs=n_users * n_arms,
    )

    def commit() -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.argmax(np.where(fb.counts > 0, fb.sums / fb.counts, -np.inf), axis=1)

    return finish_run(channel, instance, commit, (record,), {"exploration_target": t_exp, "phases": phases})


# the library functions, checking their arguments by the registry's rules (anonbandits.validation.validated) and,
# for those that are no parameter of the vocabulary, by the drivers' (anonbandits.anonymous.batches)
etc_assignments = validated(_etc_assignments, n_users="users", n_arms="arms", arm_offset=BOOL)
anon_etc = validated(
    _anon_etc,
    instance=INSTANCE,
    arm_offset=BOOL,
    explore_scale=POSITIVE_FINITE,
    mechanism=MECHANISM,
    noise_rng=OPTIONAL_RNG,
    allow_large=BOOL,
)
