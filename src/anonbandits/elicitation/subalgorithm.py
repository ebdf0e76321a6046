"""The feedback-eliciting sub-algorithm (2C+2 rounds), vectorised over many assignments.

Paper 000 ("Anonymous Bandits for Multi-User Systems", NeurIPS 2022), Section 3.1; spec
``anonymous-bandits.md`` Section 2. Given an assignment pi of users to arms, every user plays pi(i) for
2C+2 rounds:

1. the users of each arm j with |pi^-1(j)| >= C+1 are split into ``floor(n_j / (C+1))`` groups of sizes
   between C+1 and 2C+1 (the remainder spread one user per group), users ordered by index in each group;
2. round 0 observes every group G_s (sum r_{s,0});
3. round k = 1..2C+1 observes G_s minus its k-th user (G_s itself when k > |G_s|), so every observed group
   has at least C users (sum r_{s,k});
4. the k-th user of G_s gets the estimate ``r_{s,0} - r_{s,k}``, unbiased for its mean (Lemma 2).

These functions only describe the groups and combine the sums the auditor released; they never see a
per-user reward.
"""

from __future__ import annotations

import numpy as np


def elicitation_rounds(C: int) -> int:
    """Length of one run of the sub-algorithm: 2C + 2 rounds."""
    return 2 * C + 2


def partition_groups(assignments: np.ndarray, n_arms: int, C: int) -> tuple[np.ndarray, np.ndarray]:
    """Step 1 for each row of ``assignments`` ((n, N) arm indices).

    Returns
    -------
    labels : (n, N) int64, the user's group label within its row (groups numbered arm by arm), or -1 when
        its arm has at most C users (no feedback for it).
    positions : (n, N) int64, the user's 1-based position k inside its group, 0 when not in a group.
    """
    a = np.atleast_2d(np.asarray(assignments))
    n, n_users = a.shape
    key = a.astype(np.int16 if n_arms <= np.iinfo(np.int16).max else np.int64)
    # stable per-row sort (radix sort for 16-bit keys): users of one arm in index order
    order = np.argsort(key, axis=1, kind="stable")
    flat = (np.arange(n, dtype=np.int64)[:, None] * n_arms + a).ravel()
    counts = np.bincount(flat, minlength=n * n_arms).reshape(n, n_arms)
    starts = np.cumsum(counts, axis=1) - counts
    rows = np.arange(n)[:, None]
    rank = np.empty((n, n_users), dtype=np.int64)
    rank[rows, order] = np.arange(n_users)[None, :] - starts[rows, a[rows, order]]
    n_groups = counts // (C + 1)
    size = counts // np.maximum(n_groups, 1)
    big = counts % np.maximum(n_groups, 1)          # this many groups get one extra user
    offset = np.cumsum(n_groups, axis=1) - n_groups  # first label of each arm's groups in the row
    ai = a.astype(np.intp)
    q, r, p = size[rows, ai], big[rows, ai], rank
    in_big = p < r * (q + 1)
    tail = p - r * (q + 1)
    g = np.where(in_big, p // (q + 1), r + tail // np.maximum(q, 1))
    k = np.where(in_big, p % (q + 1), tail % np.maximum(q, 1)) + 1
    grouped = n_groups[rows, ai] > 0
    labels = np.where(grouped, offset[rows, ai] + g, -1)
    positions = np.where(grouped, k, 0)
    return labels, positions


def round_labels(labels: np.ndarray, positions: np.ndarray, C: int) -> np.ndarray:
    """(n, 2C+2, N) group label of every user in every round: round 0 the full groups, round k without
    the k-th user of each group."""
    ks = np.arange(elicitation_rounds(C))[None, :, None]
    return np.where((positions[:, None, :] == ks) & (ks > 0), -1, labels[:, None, :])


def estimates_from_sums(sums: np.ndarray, labels: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Step 4: ``r_{s,0} - r_{s,k}`` for the k-th user of group s.

    ``sums`` is (n, 2C+2, G) as released by the auditor; returns (n, N) estimates (NaN where the user is in
    no group). With sums over m repetitions this is the sum of the m repetitions' estimates.
    """
    n = labels.shape[0]
    rows = np.arange(n)[:, None]
    lab = np.maximum(labels, 0)
    est = sums[rows, 0, lab] - sums[rows, positions, lab]
    return np.where(labels >= 0, est, np.nan)
