"""The anonymity auditor: the only code that turns per-user rewards into numbers a learner may see.

Paper ``000_e91e148c589dfd32.txt`` Section 2.1; spec ``anonymous-bandits.md`` Section 1, *anonymity invariant*:
every observation handed to a learner is the aggregate reward of a group of at least C distinct users who all
played the same arm in that round. :class:`AnonymityAuditor` checks this for every group it serves, raises
:class:`~anonbandits.errors.AnonymityViolation` otherwise, and counts what it served (``observations`` and
``min_group_size`` are the figures the simulations report).
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import AnonymityViolation, ConfigError


class AnonymityAuditor:
    """Serves group sums of rewards, refusing any group smaller than ``C``.

    Parameters
    ----------
    C : the anonymity parameter (minimum group size), >= 1.

    Attributes
    ----------
    observations : number of aggregate observations served so far (a served sum that aggregates ``reps``
        i.i.d. repetitions of one round counts as ``reps`` observations: the learner could have had each).
    min_group_size : smallest group ever served (``None`` before the first).
    groups_served : number of distinct (row, group) sums released.
    """

    def __init__(self, C: int) -> None:
        if int(C) != C or C < 1:
            raise ConfigError(f"C must be a positive integer, got {C}")
        self.C = int(C)
        self.observations = 0
        self.min_group_size: int | None = None
        self.groups_served = 0

    def release(self, groups: np.ndarray, arms: np.ndarray, rewards: np.ndarray,
                repetitions: np.ndarray | int = 1) -> np.ndarray:
        """Sum the rewards of every group, after checking the anonymity invariant.

        Parameters
        ----------
        groups : (S, N) integer labels; row s is one round, column i one user. ``-1`` puts the user in no
            group; labels ``0..G-1`` name groups *within the row* (one user appears at most once per row,
            so the members of a group are distinct users by construction).
        arms : (S, N) arm each user played in that round (broadcastable to ``groups``).
        rewards : (S, N) each user's reward in that round, summed over ``repetitions[s]`` i.i.d. repetitions
            of the round with the same groups.
        repetitions : (S,) or scalar, positive.

        Returns
        -------
        (S, G) array: entry (s, g) is the total reward of group g in row s; NaN where row s has no group g.

        Raises
        ------
        AnonymityViolation : a group has fewer than C members, or members on different arms.
        """
        groups = np.asarray(groups)
        if groups.ndim != 2:
            raise ValueError("groups must be an (S, N) array of labels")
        n_rows = groups.shape[0]
        reps = np.broadcast_to(np.asarray(repetitions, dtype=np.int64), (n_rows,))
        if np.any(reps < 1):
            raise ValueError("repetitions must be positive")
        member = groups >= 0
        n_labels = int(groups.max()) + 1 if groups.size else 0
        if n_labels == 0:
            return np.full((n_rows, 0), np.nan)
        row_of = np.broadcast_to(np.arange(n_rows, dtype=np.int64)[:, None], groups.shape)[member]
        flat = row_of * n_labels + groups[member]
        sizes = np.bincount(flat, minlength=n_rows * n_labels)
        used = sizes > 0
        small = used & (sizes < self.C)
        if small.any():
            bad = int(np.flatnonzero(small)[0])
            raise AnonymityViolation(f"group {bad % n_labels} of round {bad // n_labels} has "
                                     f"{sizes[bad]} users, fewer than C = {self.C}")
        member_arms = np.broadcast_to(arms, groups.shape)[member]
        group_arm = np.empty(n_rows * n_labels, dtype=member_arms.dtype)
        group_arm[flat] = member_arms
        mixed = group_arm[flat] != member_arms
        if mixed.any():
            bad = int(flat[np.flatnonzero(mixed)[0]])
            raise AnonymityViolation(f"group {bad % n_labels} of round {bad // n_labels} mixes users "
                                     "playing different arms")
        sums = np.bincount(flat, weights=np.broadcast_to(rewards, groups.shape)[member],
                           minlength=n_rows * n_labels)
        sums[~used] = np.nan
        per_row = used.reshape(n_rows, n_labels).sum(axis=1)
        self.observations += int((per_row * reps).sum())
        self.groups_served += int(per_row.sum())
        smallest = int(sizes[used].min())
        self.min_group_size = smallest if self.min_group_size is None else min(self.min_group_size, smallest)
        return sums.reshape(n_rows, n_labels)
