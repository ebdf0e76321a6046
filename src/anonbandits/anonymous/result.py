"""The result of one anonymous-bandit run (Algorithm 1 or 2 of *Anonymous Bandits for Multi-User Systems*)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from anonbandits.channels import AnonymousChannel
from anonbandits.envs.instances import MultiUserInstance


@dataclass(frozen=True)
class BatchRecord:
    """One exploration batch of Algorithm 1 (or the exploration phase of Algorithm 2).

    ``demand`` is D_b; ``assignments`` R_b (sum of multiplicities), ``distinct`` how many differ; ``method`` the
    decomposition method that ran; ``uncovered`` pairs left uncovered (best effort); ``rounds`` rounds played;
    ``eliminated`` arms eliminated after the batch (all users); ``active_pairs`` the (user, arm) pairs active
    when the batch was decomposed.
    """

    demand: int
    assignments: int
    distinct: int
    method: str
    uncovered: int
    rounds: int
    eliminated: int
    active_pairs: int


@dataclass(frozen=True, eq=False)
class AnonymousRun:
    """What a run reports: final pseudo-regret summed over users and rounds (elicitation included), the regret
    ``curve`` (rounds, cumulative regret) at about 200 points, the aggregate ``observations`` and the
    ``min_group_size`` the auditor served (``None`` if none), the rounds played (``horizon``) and spent eliciting
    (``exploration_rounds``), each user's ``committed`` arm (``None`` if the horizon came first) and the share
    of users whose committed arm is optimal (NaN without a commit), the per-batch records and the run constants
    ``info`` (with a privacy mechanism, ``info["exposure"]`` is the channel's privacy exposure)."""

    regret: float
    curve: tuple[np.ndarray, np.ndarray]
    observations: int
    min_group_size: int | None
    horizon: int
    exploration_rounds: int
    committed: np.ndarray | None
    optimal_fraction: float
    batches: tuple[BatchRecord, ...] = ()
    info: dict = field(default_factory=dict)

    @classmethod
    def finish(cls, channel: AnonymousChannel, instance: MultiUserInstance, commit: Callable[[], np.ndarray],
               batches: list[BatchRecord] | tuple[BatchRecord, ...], info: dict) -> AnonymousRun:
        """Commit every user to ``commit()`` unless the horizon is reached, play to it, and report the run."""
        exploration = channel.t
        committed = None if channel.done else commit()
        if committed is not None:
            channel.play(committed)
        return cls(regret=channel.regret, curve=channel.regret_curve(200), observations=channel.observations,
                   min_group_size=channel.min_group_size, horizon=channel.t, exploration_rounds=exploration,
                   committed=committed, optimal_fraction=math.nan if committed is None
                   else float(np.mean(committed == instance.optimal)),
                   batches=tuple(batches), info={**info, "exposure": channel.exposure})
