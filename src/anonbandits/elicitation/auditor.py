"""The anonymity auditor: the only code that turns per-user rewards into numbers a learner may see.

Paper 000 ("Anonymous Bandits for Multi-User Systems", NeurIPS 2022), Section 2.1; spec
``anonymous-bandits.md`` Section 1, *anonymity invariant*: every observation handed to a learner is the
aggregate reward of a group of at least C distinct users who all played the same arm in that round.
:class:`AnonymityAuditor` checks this for every group it serves, raises
:class:`~anonbandits.errors.AnonymityViolation` otherwise, and counts what it served (``observations`` and
``min_group_size`` are the figures the simulations report).
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import AnonymityViolation, require


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
        require(int(C) == C and C >= 1, "C", "a positive integer", C)
        self.C, self.observations, self.groups_served = int(C), 0, 0
        self.min_group_size: int | None = None

    def release(self, groups: np.ndarray, arms: np.ndarray, rewards: np.ndarray,
                repetitions: np.ndarray | int = 1) -> np.ndarray:
        """Sum the rewards of every group, after checking the anonymity invariant.

        Parameters
        ----------
        groups : (..., N) integer labels; each row (all leading indices together, S rows) is one round,
            column i one user. ``-1`` puts the user in no group; labels ``0..G-1`` name groups *within the
            row* (one user appears at most once per row, so the members of a group are distinct users by
            construction).
        arms : arm each user played in that round (broadcastable to ``groups``).
        rewards : each user's reward in that round (broadcastable to ``groups``), summed over the row's
            repetitions: i.i.d. repetitions of the round with the same groups.
        repetitions : scalar or one positive count per row (shape ``groups.shape[:-1]``).

        Returns
        -------
        (..., G) array: entry (row, g) is the total reward of group g in that row; NaN where the row has no
        group g.

        Raises
        ------
        AnonymityViolation : a group has fewer than C members, or members on different arms.
        """
        groups = np.asarray(groups)
        if groups.ndim < 2:
            raise ValueError("groups must be an (..., N) array of labels, one row per round")
        lead = groups.shape[:-1]
        n_rows = int(np.prod(lead))
        reps = np.broadcast_to(np.asarray(repetitions, dtype=np.int64), lead).ravel()
        if np.any(reps < 1):
            raise ValueError("repetitions must be positive")
        arms = np.broadcast_to(arms, groups.shape).ravel()
        rewards = np.broadcast_to(rewards, groups.shape).ravel()
        groups = groups.reshape(n_rows, -1)
        member = groups >= 0
        n_labels = int(groups.max()) + 1 if groups.size else 0
        if n_labels == 0:
            return np.full((*lead, 0), np.nan)
        n_bins = n_rows * n_labels
        # one flat bin per (row, group); users in no group go to an extra bin that is dropped
        flat = groups + (np.arange(n_rows, dtype=np.int64) * n_labels)[:, None]
        np.putmask(flat, ~member, n_bins)
        flat = flat.ravel()
        sizes = np.bincount(flat, minlength=n_bins + 1)[:n_bins]
        used = sizes > 0
        small = used & (sizes < self.C)
        if small.any():
            bad = int(np.flatnonzero(small)[0])
            raise AnonymityViolation(f"group {bad % n_labels} of round {bad // n_labels} has "
                                     f"{sizes[bad]} users, fewer than C = {self.C}")
        group_arm = np.empty(n_bins + 1, dtype=arms.dtype)
        group_arm[flat] = arms
        mixed = (group_arm[flat] != arms) & member.ravel()
        if mixed.any():
            bad = int(flat[np.flatnonzero(mixed)[0]])
            raise AnonymityViolation(f"group {bad % n_labels} of round {bad // n_labels} mixes users "
                                     "playing different arms")
        sums = np.bincount(flat, weights=rewards, minlength=n_bins + 1)[:n_bins]
        sums[~used] = np.nan
        per_row = used.reshape(n_rows, n_labels).sum(axis=1)
        self.observations += int((per_row * reps).sum())
        self.groups_served += int(per_row.sum())
        smallest = int(sizes[used].min())
        self.min_group_size = smallest if self.min_group_size is None else min(self.min_group_size, smallest)
        return sums.reshape(*lead, n_labels)
