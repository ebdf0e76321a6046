"""Algorithm 2 of paper 000: explore-then-commit anonymous bandits without a user-cluster assumption.

Paper ``000_e91e148c589dfd32.txt`` Section 3.5, Algorithm 2 and Theorem 2; spec ``anonymous-bandits.md``
Section 5.3. Needs N > C. Exploration lasts ``T_exp = scale * C^(2/3) K^(1/3) T^(2/3) (log NKT)^(1/3)``
rounds (the paper's scale is 10), i.e. ``floor(T_exp / (2C+2))`` phases (at least one). The users are split
once into S = floor(N/(C+1)) groups of C+1 consecutive users, the remaining users joining the last group. In
phase r group s plays arm ``(r + s) mod K`` (``arm_offset=True``, **[DECISION]** of the spec, which spreads
the arms across groups) or ``r mod K`` (``arm_offset=False``, the paper's text); each phase is one run of the
2C+2-round sub-algorithm through the audited channel, adding one estimate to n_ij and sigma_ij. Then every
user plays ``argmax_j sigma_ij / n_ij`` (unexplored arms last, lowest index on ties) to the horizon.

Because the assignment of phase r depends only on r mod K, the phases use K distinct assignments; they are
played in the paper's order (r = 1, 2, ...), so the regret curve and a cut at the horizon are exact.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.anonymous.result import AnonymousRun, BatchRecord
from anonbandits.channels import AnonymousChannel
from anonbandits.channels.mechanisms import Mechanism
from anonbandits.elicitation import elicitation_rounds
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError

CURVE_POINTS = 200


def exploration_length(n_users: int, n_arms: int, C: int, horizon: int, scale: float = 10.0) -> float:
    """T_exp of Algorithm 2 (in rounds)."""
    return (scale * C ** (2 / 3) * n_arms ** (1 / 3) * horizon ** (2 / 3)
            * math.log(n_users * n_arms * horizon) ** (1 / 3))


def etc_assignments(n_users: int, n_arms: int, C: int, arm_offset: bool = True) -> np.ndarray:
    """(K, N): row q is the assignment of every phase r with r mod K = q."""
    n_groups = n_users // (C + 1)
    group = np.minimum(np.arange(n_users) // (C + 1), n_groups - 1)
    q = np.arange(n_arms)[:, None]
    return (q + group[None, :]) % n_arms if arm_offset else np.broadcast_to(q, (n_arms, n_users)).copy()


def anon_etc(instance: MultiUserInstance, C: int, horizon: int, *, arm_offset: bool = True,
             explore_scale: float = 10.0, rng: np.random.Generator, mechanism: Mechanism | None = None,
             noise_rng: np.random.Generator | None = None) -> AnonymousRun:
    """Run Algorithm 2 on ``instance`` for ``horizon`` rounds (see the module docstring).

    Parameters
    ----------
    instance : N x K means and reward model (no cluster assumption needed).
    C : anonymity parameter; N > C is required.
    horizon : T.
    arm_offset : group s plays ``(r + s) mod K`` (True) or ``r mod K`` (False).
    explore_scale : the constant in front of T_exp (10 in the paper).
    rng : randomness of the rewards.
    mechanism, noise_rng : privacy mechanism on every released group sum and its randomness.
    """
    n_users, n_arms = instance.n_users, instance.n_arms
    if C < 1:
        raise ConfigError(f"C must be at least 1, got {C}")
    if n_users <= C:
        raise ConfigError(f"Algorithm 2 needs more users than C: users = {n_users}, C = {C}")
    if not explore_scale > 0:
        raise ConfigError(f"explore_scale must be positive, got {explore_scale}")
    channel = AnonymousChannel(instance, C, horizon, rng, mechanism=mechanism, noise_rng=noise_rng)
    r = elicitation_rounds(C)
    t_exp = exploration_length(n_users, n_arms, C, horizon, explore_scale)
    phases = max(1, int(t_exp // r))
    assignments = etc_assignments(n_users, n_arms, C, arm_offset)
    order = np.arange(1, phases + 1) % n_arms
    fb = channel.elicit(assignments, order=order)
    exploration = channel.t
    committed = None
    if not channel.done:
        with np.errstate(invalid="ignore", divide="ignore"):
            score = np.where(fb.counts > 0, fb.sums / fb.counts, -np.inf)
        committed = np.argmax(score, axis=1)
        channel.play(committed)
    record = BatchRecord(demand=phases, assignments=min(phases, exploration // r), distinct=n_arms,
                         method="etc", uncovered=0, rounds=exploration, eliminated=0,
                         active_pairs=instance.n_users * n_arms)
    return AnonymousRun(
        regret=channel.regret, curve=channel.regret_curve(CURVE_POINTS), observations=channel.observations,
        min_group_size=channel.min_group_size, horizon=channel.t, exploration_rounds=exploration,
        committed=committed,
        optimal_fraction=float(np.mean(committed == instance.optimal)) if committed is not None else math.nan,
        batches=(record,), info={"exploration_target": t_exp, "phases": phases, "exposure": channel.exposure})
