"""The result of one anonymous-bandit run."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class BatchRecord:
    """One exploration batch of Algorithm 1 (or the exploration phase of Algorithm 2).

    ``demand`` is D_b; ``assignments`` R_b (sum of multiplicities); ``distinct`` their number of distinct
    assignments; ``method`` the decomposition method that ran; ``uncovered`` pairs left uncovered (best
    effort); ``rounds`` rounds played; ``eliminated`` arms eliminated after the batch (over all users);
    ``active_pairs`` the (user, arm) pairs still active when the batch was decomposed (N K before any
    elimination).
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
    """What a run of Algorithm 1 or 2 reports.

    Attributes
    ----------
    regret : final cumulative pseudo-regret, summed over users and rounds (elicitation rounds included).
    curve : (rounds, cumulative regret) at about 200 evenly spaced rounds.
    observations : aggregate observations the learner received (counted by the auditor).
    min_group_size : smallest group ever observed (``None`` if none was).
    horizon : rounds played (always the horizon T).
    exploration_rounds : rounds spent in the 2C+2-round sub-algorithm.
    committed : (N,) arm each user committed to, or ``None`` if the horizon ended before the commit.
    optimal_fraction : fraction of users whose committed arm is optimal (NaN without a commit).
    batches : per exploration batch, a :class:`BatchRecord`.
    info : run constants (e.g. alpha, the BaSE horizon and grid).
    """

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
