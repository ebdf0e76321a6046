"""The anonymous feedback channel: the only interface between an anonymous-bandit learner and the world.

Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022), Sections 2.1 and
3.1. A learner can only *play* assignments without feedback or *elicit* feedback with the 2C+2-round
sub-algorithm: rewards are drawn here, summed per group by the auditor, optionally made differentially private
by a mechanism, and the learner gets only the estimates computed from those sums. The channel keeps the round
clock (never past the horizon) and the pseudo-regret books.

* The sub-algorithm (spec ``anonymous-bandits.md`` Section 2): every user plays its arm pi(i) for 2C+2
  rounds. (1) The users of each arm j with |pi^-1(j)| >= C+1 are split into ``floor(n_j / (C+1))`` groups of
  sizes between C+1 and 2C+1 (the remainder spread one user per group), users ordered by index in each
  group; (2) round 0 observes every group G_s (sum r_{s,0}); (3) round k = 1..2C+1 observes G_s minus its
  k-th user (G_s itself when k > |G_s|), so every observed group has at least C users (sum r_{s,k}); (4) the
  k-th user of G_s gets the estimate ``r_{s,0} - r_{s,k}``, unbiased for its mean (Lemma 2). Its functions
  only describe the groups and combine released sums; they never see a per-user reward.
* The auditor (spec Section 1, *anonymity invariant*): every observation handed to a learner is the aggregate
  reward of a group of at least C distinct users who all played the same arm in that round.
  :class:`AnonymityAuditor` checks this for every group it serves, raises
  :class:`~anonbandits.errors.AnonymityViolation` otherwise, and counts what it served.

Speed **[DECISION]**: the m repetitions of one distinct assignment are i.i.d., so for each (user, round of the
sub-algorithm) the channel draws the *sum* of the user's m rewards at once (one binomial draw for Bernoulli
rewards). Group sums of these are exactly the sums over the m repetitions of the group observations; the
auditor checks every group and counts each served sum as m observations.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels.direct import DirectChannel
from anonbandits.core.regret import RegretTrace
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonymityViolation, ConfigError, require
from anonbandits.privacy.mechanisms import Mechanism

#: The longest simulated horizon: Algorithm 2 keeps one entry per exploration phase (about T^(2/3)).
MAX_HORIZON = 10**9
#: Upper bound on the entries of one vectorised chunk (rows x rounds x users, or individual draws).
CHUNK_ENTRIES = 1 << 22


def elicitation_rounds(C: int) -> int:
    """Length of one run of the feedback-elicitation sub-algorithm: 2C + 2 rounds.

    Parameters
    ----------
    C : int
        The anonymity parameter (minimum group size).

    Returns
    -------
    int
        ``2 C + 2``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> elicitation_rounds(3)
    8
    """
    return 2 * C + 2


def elicitation_variance(C: int) -> float:
    """Variance proxy of one estimate of the feedback-elicitation sub-algorithm: ``(4C+1)/4``.

    An estimate is the difference of two released group sums, of at most 2C+1 and 2C rewards in [0, 1]
    (Lemma 2), so it is sub-Gaussian with proxy ``(4C+1)/4`` instead of the 1/4 of one reward. Learners size
    their demands and radii with it.

    Parameters
    ----------
    C : int
        The anonymity parameter (minimum group size).

    Returns
    -------
    float
        ``(4 C + 1) / 4``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> elicitation_variance(3)
    3.25
    """
    return (4 * C + 1) / 4


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


def kept_segments(a: np.ndarray, reps: np.ndarray, wanted: np.ndarray, C: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split repeated assignments so that every (user, arm) pair keeps exactly its first ``wanted`` estimates.

    A learner uses exactly the samples it asked for: when a decomposition over-covers a pair, the estimates
    beyond ``wanted[i, j]`` are discarded. Repetitions of one assignment are drawn as one sum, so each row of
    ``a`` ((n, N), repeated ``reps`` (n,) times) is cut at the repetitions where some user's need runs out:
    within a piece every user either keeps all its estimates or none.

    Returns
    -------
    rows : (m, N) the pieces' assignments (rows of ``a``, in order).
    row_reps : (m,) their repetitions (summing to ``reps`` per row of ``a``).
    keep : (m, N) bool, whether the user's estimates of that piece are kept.
    surplus : (N, K) int64, informative estimates discarded per pair.
    """
    n, n_users = a.shape
    n_arms = np.shape(wanted)[1]
    wanted = np.asarray(wanted, dtype=np.int64)
    reps = np.asarray(reps, dtype=np.int64)
    users = np.arange(n_users)
    # an estimate exists only for a user whose arm holds at least C+1 users in the row
    per_arm = np.bincount((np.arange(n)[:, None] * n_arms + a).ravel(), minlength=n * n_arms).reshape(n, n_arms)
    informative = np.take_along_axis(per_arm, a, axis=1) >= C + 1
    # Pairs take estimates greedily in row order, so before row k a pair has consumed min(wanted, its informative
    # repetitions in rows < k): an exclusive cumulative sum per (user, arm) along the rows, in one stable sort
    pair = users[None, :] * n_arms + a                                    # (n, N)
    given = np.where(informative, reps[:, None], 0)
    flat = pair.T.ravel()                                                 # user-major, rows in order
    order = np.argsort(flat, kind="stable")
    sorted_given = given.T.ravel()[order]
    total = np.cumsum(sorted_given)
    first = np.ones(flat.size, dtype=bool)
    first[1:] = flat[order][1:] != flat[order][:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(flat.size), 0))
    before = np.empty(flat.size, dtype=np.int64)
    before[order] = total - sorted_given - (total[start] - sorted_given[start])
    before = before.reshape(n_users, n).T
    need = np.where(informative, np.clip(wanted[users[None, :], a] - before, 0, reps[:, None]), 0)
    surplus = np.bincount(pair.ravel(), weights=(given - need).ravel(),
                          minlength=n_users * n_arms).astype(np.int64).reshape(n_users, n_arms)
    # each row is cut at the distinct values of {0, reps, need}: within a piece a user keeps all or nothing
    cuts = np.sort(np.concatenate((np.zeros((n, 1), np.int64), reps[:, None], need), axis=1), axis=1)
    new = np.ones(cuts.shape, dtype=bool)
    new[:, 1:] = cuts[:, 1:] != cuts[:, :-1]
    values, row_of = cuts[new], np.nonzero(new)[0]
    head = np.ones(values.size, dtype=bool)  # the first distinct value of a row (0) starts no piece
    head[1:] = row_of[1:] != row_of[:-1]
    hi, pieces = values[~head], row_of[~head]
    lo = values[np.flatnonzero(~head) - 1]
    return a[pieces], hi - lo, need[pieces] >= hi[:, None], surplus


class AnonymityAuditor:
    """Serves group sums of rewards, refusing any group smaller than ``C``.

    Parameters
    ----------
    C : the anonymity parameter (minimum group size), >= 1.

    Attributes
    ----------
    observations : number of aggregate observations served so far (a sum over ``reps`` i.i.d. repetitions of
        one round counts ``reps``: the learner could have had each).
    min_group_size : smallest group ever served (``None`` before the first).
    group_sizes : (S,) int64 histogram of the groups served: ``group_sizes[s]`` observations of a group of s
        users (counted as ``observations``, so it sums to it); an independent record a test can check against C.
    """

    def __init__(self, C: int) -> None:
        require(int(C) == C and C >= 1, "C", "a positive integer", C)
        self.C, self.observations, self.min_group_size = int(C), 0, None
        self.group_sizes = np.zeros(0, dtype=np.int64)

    def release(self, groups: np.ndarray, arms: np.ndarray, rewards: np.ndarray,
                repetitions: np.ndarray | int = 1) -> np.ndarray:
        """Sum the rewards of every group, after checking the anonymity invariant.

        Parameters
        ----------
        groups : (..., N) integer labels; each row (all leading indices together) is one round, column i one
            user. ``-1``: in no group; ``0..G-1`` name groups *within the row* (one user per column, so the
            members of a group are distinct users by construction).
        arms, rewards : each user's arm and reward in that round (broadcastable to ``groups``), the rewards
            summed over the row's ``repetitions`` (i.i.d. repetitions of the round with the same groups).
        repetitions : scalar or one positive count per row (shape ``groups.shape[:-1]``).

        Returns
        -------
        (..., G) array: the total reward of group g in each row (NaN where the row has no group g), or
        :class:`~anonbandits.errors.AnonymityViolation` when a group has fewer than C members or mixed arms.
        """
        groups = np.asarray(groups)
        if groups.ndim < 2:
            raise ValueError("groups must be an (..., N) array of labels, one row per round")
        lead = groups.shape[:-1]
        reps = np.broadcast_to(np.asarray(repetitions, dtype=np.int64), lead).ravel()
        if np.any(reps < 1):
            raise ValueError("repetitions must be positive")
        n_rows, n_labels = reps.size, int(groups.max(initial=-1)) + 1
        if n_labels == 0:
            return np.full((*lead, 0), np.nan)
        arms = np.broadcast_to(arms, groups.shape).ravel()
        rewards = np.broadcast_to(rewards, groups.shape).ravel()
        groups = groups.reshape(n_rows, -1)
        member = groups >= 0
        # one flat bin per (row, group); users in no group go to an extra bin that is dropped (in place: the
        # arrays hold every user of every round)
        n_bins = n_rows * n_labels
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
        self.observations += int((used.reshape(n_rows, n_labels).sum(axis=1) * reps).sum())
        served = np.bincount(sizes[used], weights=np.repeat(reps, n_labels)[used]).astype(np.int64)
        if served.size > self.group_sizes.size:
            self.group_sizes = np.concatenate((self.group_sizes,
                                               np.zeros(served.size - self.group_sizes.size, np.int64)))
        self.group_sizes[:served.size] += served
        smallest = int(sizes[used].min())
        self.min_group_size = smallest if self.min_group_size is None else min(self.min_group_size, smallest)
        return sums.reshape(*lead, n_labels)


@dataclass(frozen=True)
class Feedback:
    """What an elicitation returns: per (user, arm) pair, the sum and number of its unbiased estimates.

    Parameters
    ----------
    sums : numpy.ndarray
        (N, K): ``sums[i, j]``, the sum of the unbiased estimates of mu_ij the elicitation produced.
    counts : numpy.ndarray
        (N, K) int64: ``counts[i, j]``, their number.
    noise : numpy.ndarray or None, optional
        (N, K), with a privacy mechanism: the variance of the noise in ``sums[i, j]`` (public: it depends on
        no reward). Default ``None`` (no mechanism).
    surplus : numpy.ndarray or None, optional
        (N, K) int64, when the samples ``wanted`` were given to :meth:`AnonymousChannel.elicit`: the informative
        estimates beyond them, discarded. Default ``None``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Lemma 2).

    Examples
    --------
    >>> import numpy as np
    >>> fb = Feedback(np.array([[1.5, 0.0]]), np.array([[3, 0]]))
    >>> float(fb.sums[0, 0] / fb.counts[0, 0]), fb.noise is None
    (0.5, True)
    """

    sums: np.ndarray
    counts: np.ndarray
    noise: np.ndarray | None = None
    surplus: np.ndarray | None = None


@fill
class AnonymousChannel:
    """Rounds, rewards and audited feedback for N users on one instance.

    ``instance`` (means and reward model) stays private: a learner sees ``n_users``, ``n_arms``, the clock
    (``t``, ``done``) and the audited feedback only. :meth:`play` plays assignments without feedback;
    :meth:`elicit` runs the 2C+2-round sub-algorithm and returns its :class:`Feedback`, every observed group
    having at least ``C`` users who played one arm (the auditor raises
    :class:`~anonbandits.errors.AnonymityViolation` otherwise). Nothing is played beyond ``horizon``. With a
    ``mechanism``, ``exposure[(c, n)][i]`` counts the releases of ``n`` rewards that held ``c`` of user i's
    (:func:`~anonbandits.privacy.mechanisms.guarantee`).

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The N x K means and reward model.
    C : int
        The anonymity parameter (minimum group size), a positive integer.
    horizon : int
        The horizon T, between 1 and ``MAX_HORIZON`` (10^9) rounds.
    rng : numpy.random.Generator
        The source of every reward.
    {{mechanism}}

    Raises
    ------
    ConfigError
        If ``horizon`` is out of range or ``C`` is not a positive integer.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Sections 2.1 and 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.envs.instances import MultiUserInstance
    >>> instance = MultiUserInstance(np.array([[0.9, 0.1]] * 4))
    >>> channel = AnonymousChannel(instance, 2, 100, np.random.default_rng(0))
    >>> fb = channel.elicit(np.zeros(4, dtype=int), np.array([1]))
    >>> channel.t, fb.counts.tolist(), channel.min_group_size
    (6, [[1, 0], [1, 0], [1, 0], [1, 0]], 3)
    >>> channel.play(np.zeros(4, dtype=int)), channel.done, channel.regret
    (94, True, 0.0)
    """

    def __init__(self, instance: MultiUserInstance, C: int, horizon: int, rng: np.random.Generator, *,
                 mechanism: Mechanism | None = None,
                 noise_rng: np.random.Generator | None = None) -> None:
        if not 1 <= horizon <= MAX_HORIZON:
            raise ConfigError(f"horizon must be between 1 and {MAX_HORIZON:.0e} rounds, got {horizon}")
        self._instance = instance  # private: a learner sees only what elicit() and play() return
        self.n_users, self.n_arms = instance.n_users, instance.n_arms
        self.auditor = AnonymityAuditor(C)
        self.C, self.horizon, self._rng = self.auditor.C, int(horizon), rng
        self.mechanism, self._noise_rng = mechanism, noise_rng if noise_rng is not None else rng
        self.exposure: dict[tuple[int, int], np.ndarray] = {}
        self._trace = RegretTrace()   # the pseudo-regret books: one block per played or elicited stretch
        self._sums = DirectChannel.sampler(instance.model, instance.sigma)   # the exact sums of many rewards

    @property
    def t(self) -> int:
        """Rounds played so far."""
        return self._trace.rounds

    @property
    def regret(self) -> float:
        """Cumulative pseudo-regret so far, summed over users."""
        return self._trace.regret

    @property
    def done(self) -> bool:
        return self.t >= self.horizon

    @property
    def observations(self) -> int:
        return self.auditor.observations

    @property
    def min_group_size(self) -> int | None:
        return self.auditor.min_group_size

    def regret_curve(self, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Cumulative pseudo-regret (summed over users) at ``points + 1`` evenly spaced rounds of [0, t].

        Exact, as regret is linear within each played segment; rounds that coincide after rounding to integers
        appear once.

        Parameters
        ----------
        points : int, optional
            Number of intervals between the curve's rounds (default 200).

        Returns
        -------
        rounds : numpy.ndarray
            The ``int64`` rounds, increasing from 0 to :attr:`t`.
        regret : numpy.ndarray
            The cumulative pseudo-regret after each of ``rounds``.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> channel = AnonymousChannel(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 2, 100, np.random.default_rng(0))
        >>> channel.play(np.zeros(4, dtype=int), 10), channel.play(np.ones(4, dtype=int), 10)
        (10, 10)
        >>> rounds, regret = channel.regret_curve(4)
        >>> rounds.tolist(), regret.tolist()
        ([0, 5, 10, 15, 20], [0.0, 0.0, 0.0, 16.0, 32.0])
        """
        x = np.unique(np.linspace(0, self.t, points + 1).round().astype(np.int64))
        return x, self._trace.curve(x)

    def play(self, arms: np.ndarray, rounds: int | None = None) -> int:
        """Every user i plays ``arms[i]`` for ``rounds`` rounds (default: to the horizon), with no feedback.

        Parameters
        ----------
        arms : numpy.ndarray
            (N,) arm index of each user.
        rounds : int or None, optional
            Number of rounds to play; ``None`` (default): every round left to the horizon.

        Returns
        -------
        int
            The number of rounds played (cut at the horizon; 0 once :attr:`done`).

        Raises
        ------
        ValueError
            If ``arms`` is not of shape (N,).

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> channel = AnonymousChannel(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 2, 30, np.random.default_rng(0))
        >>> channel.play(np.array([0, 0, 1, 1]), 20), channel.regret
        (20, 32.0)
        >>> channel.play(np.zeros(4, dtype=int), 20), channel.done
        (10, True)
        """
        arms = np.asarray(arms)
        if arms.shape != (self.n_users,):
            raise ValueError(f"arms must have shape ({self.n_users},)")
        n = self.horizon - self.t if rounds is None else min(int(rounds), self.horizon - self.t)
        if n > 0:
            self._trace.charge(np.array([n]), np.array([self._instance.round_regret(arms)]))
        return n

    def elicit(self, assignments: np.ndarray, multiplicities: np.ndarray | None = None, *,
               order: np.ndarray | None = None, wanted: np.ndarray | None = None) -> Feedback:
        """Run the 2C+2-round sub-algorithm on each repetition of the given assignments and return its estimates.

        The (n, N) ``assignments`` (or one (N,) assignment) are repeated ``multiplicities`` (n,) times one after
        the other, or played in ``order``. The feedback holds the estimates of every *complete* repetition: one
        cut by the horizon is played and served (regret, observations) but yields no estimate. With ``wanted``,
        each pair keeps its first ``wanted[i, j]`` informative estimates (distinct assignments in row order) and
        the rest are discarded and counted in ``Feedback.surplus`` (:func:`kept_segments`).

        Parameters
        ----------
        assignments : numpy.ndarray
            (n, N) or (N,) arm index of each user in each assignment.
        multiplicities : numpy.ndarray or None, optional
            (n,) number of repetitions of each assignment; ignored when ``order`` is given.
        order : numpy.ndarray or None, optional
            Assignment indices, one per repetition, in the order played; ``None`` (default): from
            ``multiplicities``.
        wanted : numpy.ndarray or None, optional
            (N, K) integers, the number of estimates each (user, arm) pair keeps; ``None`` (default): all.

        Returns
        -------
        Feedback
            The (N, K) sums and counts of the estimates (and with a mechanism, their noise variances).

        Raises
        ------
        ValueError
            If ``assignments`` does not have N columns, holds an arm index out of range, or neither
            ``multiplicities`` nor ``order`` is given.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> channel = AnonymousChannel(MultiUserInstance(np.array([[1.0, 0.0]] * 4)), 2, 100, np.random.default_rng(0))
        >>> feedback = channel.elicit(np.array([[0, 0, 0, 0], [1, 1, 1, 1]]), np.array([1, 2]))
        >>> feedback.sums.tolist(), feedback.counts[0].tolist(), channel.t
        ([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]], [1, 2], 18)
        """
        a = np.atleast_2d(assignments)
        n_dist, n_users = a.shape
        if n_users != self.n_users:
            raise ValueError(f"assignments must have {self.n_users} columns, got {n_users}")
        if np.any((a < 0) | (a >= self.n_arms)):
            raise ValueError("assignment arm index out of range")
        if order is None and multiplicities is None:
            raise ValueError("give multiplicities or order")
        if order is None:
            order = np.repeat(np.arange(n_dist), np.asarray(multiplicities, dtype=np.int64))
        order = np.asarray(order, dtype=np.int64)
        r, remaining = elicitation_rounds(self.C), self.horizon - self.t
        n_full = min(order.size, remaining // r)
        partial = remaining - n_full * r if n_full < order.size else 0
        rates = self._instance.round_regret(a)
        played = order[:n_full]
        reps = np.bincount(played, minlength=n_dist)
        if n_full:
            starts = np.concatenate(([0], np.flatnonzero(np.diff(played)) + 1))
            lengths = np.diff(np.append(starts, n_full))
            self._trace.charge(lengths * r, rates[played[starts]])
        if wanted is None:
            feedback = self._elicit_repeated(a[reps > 0], reps[reps > 0])
        else:
            rows, row_reps, keep, surplus = kept_segments(a[reps > 0], reps[reps > 0], wanted, self.C)
            feedback = replace(self._elicit_repeated(rows, row_reps, keep), surplus=surplus)
        if partial:
            self._trace.charge(np.array([partial]), rates[order[n_full]:order[n_full] + 1])
            cut = a[order[n_full]][None, :]
            self.serve(cut, *partition_groups(cut, self.n_arms, self.C), np.ones(1, np.int64), partial)
        return feedback

    def _elicit_repeated(self, a: np.ndarray, reps: np.ndarray, keep: np.ndarray | None = None) -> Feedback:
        n_users, n_arms, r = self.n_users, self.n_arms, elicitation_rounds(self.C)
        sums, noise = np.zeros(n_users * n_arms), np.zeros(n_users * n_arms)
        counts = np.zeros(n_users * n_arms, dtype=np.int64)
        step = max(1, CHUNK_ENTRIES // (r * n_users))
        users = np.arange(n_users)
        for lo in range(0, len(a), step):
            ac, mc = a[lo:lo + step], reps[lo:lo + step]
            labels, positions = partition_groups(ac, n_arms, self.C)
            released, variance = self.serve(ac, labels, positions, mc, r)
            ok = labels >= 0 if keep is None else (labels >= 0) & keep[lo:lo + step]
            pair = (users[None, :] * n_arms + ac)[ok]
            sums += np.bincount(pair, weights=estimates_from_sums(released, labels, positions)[ok],
                                minlength=n_users * n_arms)
            counts += np.bincount(pair, weights=np.broadcast_to(mc[:, None], ok.shape)[ok],
                                  minlength=n_users * n_arms).astype(np.int64)
            if variance is not None:  # an estimate r_{s,0} - r_{s,k} has the variances of both sums
                signed = variance * np.where(np.arange(r) == 0, 1.0, -1.0)[:, None]
                noise += np.bincount(pair, weights=estimates_from_sums(signed, labels, positions)[ok],
                                     minlength=n_users * n_arms)
        shape = (n_users, n_arms)
        return Feedback(sums.reshape(shape), counts.reshape(shape),
                        noise.reshape(shape) if self.mechanism is not None else None)

    def serve(self, a: np.ndarray, labels: np.ndarray, positions: np.ndarray, reps: np.ndarray,
              rounds: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Draw ``rounds`` rounds of the rows of ``a`` and release their group sums, what an observer sees.

        Each row's rewards are summed over its ``reps[row]`` repetitions. **[DECISION]** A release is what the
        auditor serves: one group's sum in one round over the ``reps`` repetitions of a row (the batched learner
        needs nothing finer), so each reward enters exactly one release. The clock and regret are the caller's
        to charge.

        Parameters
        ----------
        a : numpy.ndarray
            (n, N) arm index of each user in each row.
        labels : numpy.ndarray
            (n, N) group labels of :func:`partition_groups` (``-1``: in no group).
        positions : numpy.ndarray
            (n, N) 1-based positions inside the groups, from :func:`partition_groups`.
        reps : numpy.ndarray
            (n,) ``int64`` number of repetitions of each row.
        rounds : int
            Number of rounds drawn, at most 2C+2 (a repetition cut by the horizon has fewer).

        Returns
        -------
        sums : numpy.ndarray
            (n, rounds, G) released group sums (noisy with a mechanism), NaN where a row has no group g.
        variance : numpy.ndarray or None
            With a mechanism, the noise variance of each release (NaN where none); ``None`` without one.

        Raises
        ------
        AnonymityViolation
            If a group of a round has fewer than C users or mixes arms (the auditor refuses to release it).

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> channel = AnonymousChannel(MultiUserInstance(np.array([[1.0, 0.0]] * 4)), 1, 100, np.random.default_rng(0))
        >>> a = np.array([[0, 0, 1, 1]])
        >>> labels, positions = partition_groups(a, 2, 1)
        >>> sums, variance = channel.serve(a, labels, positions, np.ones(1, np.int64), 4)
        >>> sums.tolist(), variance
        ([[[2.0, 0.0], [1.0, 0.0], [1.0, 0.0], [2.0, 0.0]]], None)
        """
        groups = round_labels(labels, positions, self.C)[:, :rounds]
        rewards = self._reward_sums(self._instance.mu[np.arange(a.shape[1]), a], reps, rounds)
        sums = self.auditor.release(groups, a[:, None, :], rewards, reps[:, None])
        if self.mechanism is None:
            return sums, None
        # each release's number of rewards n (group size x repetitions), and for its members c = reps of them
        rows, rnds, users = np.nonzero(groups >= 0)
        slot = (rows * rounds + rnds) * sums.shape[2] + groups[rows, rnds, users]
        n_rel = np.bincount(slot, reps[rows], sums.size).astype(np.int64)
        keys, kind = np.unique(np.stack([reps[rows], n_rel[slot]]), axis=1, return_inverse=True)
        seen = np.bincount(kind * self.n_users + users, minlength=keys.shape[1] * self.n_users)
        for (c, n), row in zip(keys.T.tolist(), seen.reshape(-1, self.n_users), strict=True):
            self.exposure[(c, n)] = self.exposure.get((c, n), 0) + row
        ok, noisy, variance = n_rel > 0, sums.ravel(), np.full(sums.size, np.nan)
        noisy[ok] = self.mechanism.release_rewards(noisy[ok], n_rel[ok], self._noise_rng).values
        variance[ok] = self.mechanism.variance(n_rel[ok])
        return noisy.reshape(sums.shape), variance.reshape(sums.shape)

    def _reward_sums(self, mu: np.ndarray, reps: np.ndarray, rounds: int) -> np.ndarray:
        """(n, rounds, N): for each row's users and each round, the sum of ``reps[row]`` i.i.d. rewards of
        mean parameter ``mu[row, user]`` (every user is drawn; the auditor ignores users in no group)."""
        n, n_users = mu.shape
        shape = (n, rounds, n_users)
        if self._instance.model == "bernoulli":
            if np.all(reps == 1):  # one repetition: a uniform draw is cheaper than a binomial one
                return (self._rng.random(shape) < mu[:, None, :]).astype(float)
            return self._rng.binomial(reps[:, None, None], mu[:, None, :], size=shape).astype(float)
        out = np.zeros(shape)
        cap = max(1, CHUNK_ENTRIES // (rounds * n_users))
        for start in range(0, int(reps.max(initial=0)), cap):
            sel = np.flatnonzero(reps > start)
            take = np.minimum(reps[sel] - start, cap)
            out[sel] += self._sums(mu[sel, None, :], np.broadcast_to(take[:, None, None], (sel.size, rounds, n_users)),
                                   self._rng)
        return out
