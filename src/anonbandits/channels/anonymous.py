"""The anonymous feedback channel: the only interface between an anonymous-bandit learner and the world.

Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022), Sections 2.1 and
3.1. A learner can only *play* assignments without feedback or *elicit* feedback with the 2C+2-round
sub-algorithm: rewards are drawn here, summed per group by the auditor, optionally made differentially private
by a mechanism, and the learner gets only the estimates computed from those sums. The channel keeps the round
clock (never past the horizon) and the pseudo-regret books.

* The sub-algorithm (Section 3.1, the feedback-elicitation sub-algorithm): every user plays its arm pi(i) for 2C+2
  rounds. (1) The users of each arm j with |pi^-1(j)| >= C+1 are split into ``floor(n_j / (C+1))`` groups of
  sizes between C+1 and 2C+1 (the remainder spread one user per group), users ordered by index in each
  group; (2) round 0 observes every group G_s (sum r_{s,0}); (3) round k = 1..2C+1 observes G_s minus its
  k-th user (G_s itself when k > |G_s|), so every observed group has at least C users (sum r_{s,k}); (4) the
  k-th user of G_s gets the estimate ``r_{s,0} - r_{s,k}``, unbiased for its mean (Lemma 2). Its functions
  only describe the groups and combine released sums; they never see a per-user reward.
* The auditor (Section 2.1, the anonymity constraint): every observation handed to a learner is the aggregate
  reward of a group of at least C distinct users who all played the same arm in that round.
  :class:`AnonymityAuditor` checks this for every group it serves, raises
  :class:`~anonbandits.errors.AnonymityViolation` otherwise, and counts what it served.

Speed **[DECISION]**: the m repetitions of one distinct assignment are i.i.d., so for each (user, round of the
sub-algorithm) the channel draws the *sum* of the user's m rewards at once (one binomial draw for Bernoulli
rewards). Group sums of these are exactly the sums over the m repetitions of the group observations; the
auditor checks every group and counts each served sum as m observations.

As a :class:`~anonbandits.channels.feedback.FeedbackChannel` (:meth:`AnonymousChannel.serve_batch`), a batch's
demand becomes a demand graph whose supports are kept apart from the demand (:func:`supports`,
:func:`demand_graph`), ``anondecomp.decompose`` splits it into C-anonymous assignments (:func:`decompose_demand`,
Section 3.2), the sub-algorithm runs on them, and each learner keeps exactly the estimates it asked for
(:func:`elicit_demand`; Algorithm 1's BaSE keeps them all); a privacy mechanism's noise raises the variance proxy
(:func:`noisy_variance`). The solver layer ``anondecomp`` is imported by these functions only, so importing the
channels does not load it.

Absent users (the platform model, ``absence`` A > 0): each user misses each block (one repetition of an
assignment, its 2C+2 rounds) with probability A, drawn once per user and block from the run's generator (one
(blocks, N) Bernoulli array per chunk of an elicitation) and known at the block's start. The groups of a block
form from its present users only: the present users of each arm are partitioned as in step 1, so an arm left with
C or fewer present users forms no group and nothing of it reaches the auditor (which still refuses any group
below C). An absent user gets no reward, is in no sum and adds no pseudo-regret for that block; the blocks are
drawn one by one (their groups differ), so the estimates of a pair are counted as actually received. A batch is
decomposed with groups robust to A (``anondecomp.decompose(absence=A, confidence=Q)``) and what the absent
users left short is re-planned (``anondecomp.replan``) until every pair has its demand: the learners get exactly
what was received (a method that does not apply to a robust batch or residual, such as ``polytope`` whose
condition the robust size can break, gives way to ``auto``: :func:`with_robust_fallback`). At A = 0 nothing of
this runs and no extra number is drawn.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels.direct import DirectChannel
from anonbandits.channels.feedback import (
    MAX_HORIZON,
    MECHANISM,
    OPTIONS,
    ChannelOptions,
    RoundBooks,
    Served,
)
from anonbandits.core.limits import MAX_ELICITATION_ENTRIES, check_size
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonBanditsError, AnonymityViolation, ConfigError, _shown, require
from anonbandits.privacy.mechanisms import Mechanism
from anonbandits.validation import (
    BOOL,
    COUNT,
    COUNT_MATRIX,
    COUNTS,
    INSTANCE,
    LEARNERS,
    OPEN_UNIT,
    POSITIVE_FINITE,
    RNG,
    RULES,
    Rule,
    array_of,
    checks,
    instance_of,
    optional,
)

if TYPE_CHECKING:
    import anondecomp
    from anonbandits.core.learners import BatchLearner

__all__ = [
    "CHUNK_ENTRIES",
    "MAX_ELICITED",
    "MAX_HORIZON",
    "AnonymityAuditor",
    "AnonymousChannel",
    "Feedback",
    "check_decomposer",
    "decompose_demand",
    "demand_graph",
    "elicit_demand",
    "elicitation_rounds",
    "elicitation_variance",
    "is_decomposer",
    "noisy_variance",
    "supports",
]

#: Upper bound on the entries of one vectorised chunk (rows x rounds x users, or individual draws).
CHUNK_ENTRIES = 1 << 22
#: The rules of the channel's arguments: assignments of arms to users (one, or one row per assignment), group
#: labels and positions of :func:`partition_groups`, repetitions, the noise variances and pairs of a batch
ASSIGNMENT = array_of("iu", "an (N,) array of arm indices (integers >= 0)", low=0)
ASSIGNMENTS = array_of("iu", "an (n, N) array of arm indices (integers >= 0)", ndim=2, low=0)
LABELS = array_of("iu", "an (n, N) array of group labels (integers >= -1)", ndim=2, low=-1)
POSITIONS = array_of("iu", "an (n, N) array of positions in the groups (integers >= 0)", ndim=2, low=0)
REPETITIONS = array_of("iu", "an (n,) array of repetitions (integers >= 1)", low=1)
VARIANCES = array_of("iuf", "a 2-D array of finite variances >= 0", ndim=2, low=0)
PAIRS = array_of("b", "a 2-D array of bools", ndim=2)
#: a decomposition method of the solver layer (the solver layer is loaded when one is checked)
DECOMPOSER = Rule(lambda v: is_decomposer(v), "an anondecomp method (anonbandits decompose --help lists them)")
GRAPH = instance_of("anondecomp.DemandGraph", "an anondecomp.DemandGraph")
DECOMPOSITION = instance_of("anondecomp.Decomposition", "an anondecomp.Decomposition (of decompose_demand)")
CHANNEL = instance_of("anonbandits.channels.anonymous.AnonymousChannel", "an AnonymousChannel")

#: Distinct user-assignments (distinct assignments x users) one identification batch may elicit. Keeping each
#: pair's demanded estimates and the 2C+2 rounds' group sums holds about 100 bytes per entry (measured: 3 x 10^7
#: entries took 3 GB), so this keeps a batch near 1 GB; only decompositions without multiplicities (randomized,
#: on many arms) come near it.
MAX_ELICITED = 10**7
#: Re-plans of one batch's residual demand under absence before it is refused (each re-plan runs at least one
#: block; a pair still short after this many has groups its users almost never fill).
MAX_REPLANS = 1000


@checks(C=COUNT)
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

    Raises
    ------
    ConfigError
        If ``C`` is not an integer from 1 to 2^62.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> elicitation_rounds(3)
    8
    """
    return 2 * C + 2


@checks(C=COUNT)
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

    Raises
    ------
    ConfigError
        If ``C`` is not an integer from 1 to 2^62.

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
    big = counts % np.maximum(n_groups, 1)  # this many groups get one extra user
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


def kept_segments(
    a: np.ndarray, reps: np.ndarray, wanted: np.ndarray, C: int
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
    pair = users[None, :] * n_arms + a  # (n, N)
    given = np.where(informative, reps[:, None], 0)
    flat = pair.T.ravel()  # user-major, rows in order
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
    surplus = (
        np.bincount(pair.ravel(), weights=(given - need).ravel(), minlength=n_users * n_arms)
        .astype(np.int64)
        .reshape(n_users, n_arms)
    )
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
        RULES["C"].check("C", C)  # the parameter's one rule: True, 2.5 or NaN would audit groups of one
        self.C, self.observations = int(C), 0
        self.min_group_size: int | None = None
        self.group_sizes = np.zeros(0, dtype=np.int64)

    def release(
        self, groups: np.ndarray, arms: np.ndarray, rewards: np.ndarray, repetitions: np.ndarray | int = 1
    ) -> np.ndarray:
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
            raise AnonymityViolation(
                f"group {bad % n_labels} of round {bad // n_labels} has {sizes[bad]} users, fewer than C = {self.C}"
            )
        group_arm = np.empty(n_bins + 1, dtype=arms.dtype)
        group_arm[flat] = arms
        mixed = (group_arm[flat] != arms) & member.ravel()
        if mixed.any():
            bad = int(flat[np.flatnonzero(mixed)[0]])
            raise AnonymityViolation(
                f"group {bad % n_labels} of round {bad // n_labels} mixes users playing different arms"
            )
        sums = np.bincount(flat, weights=rewards, minlength=n_bins + 1)[:n_bins]
        sums[~used] = np.nan
        self.observations += int((used.reshape(n_rows, n_labels).sum(axis=1) * reps).sum())
        served = np.bincount(sizes[used], weights=np.repeat(reps, n_labels)[used]).astype(np.int64)
        if served.size > self.group_sizes.size:
            self.group_sizes = np.concatenate(
                (self.group_sizes, np.zeros(served.size - self.group_sizes.size, np.int64))
            )
        self.group_sizes[: served.size] += served
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
class AnonymousChannel(RoundBooks):
    """Rounds, rewards and audited feedback for N users on one instance.

    ``instance`` (means and reward model) and the pseudo-regret stay in the channel's private ledger
    (:class:`~anonbandits.channels.feedback.ChannelLedger`, read by the drivers' result builders): a learner
    sees ``n_users``, ``n_arms``, the clock (``t``, ``horizon``, ``done``) and the audited feedback only.
    :meth:`play` plays assignments without feedback; :meth:`elicit` runs the 2C+2-round sub-algorithm and returns
    its :class:`Feedback`, every observed group having at least ``C`` users who played one arm (the auditor raises
    :class:`~anonbandits.errors.AnonymityViolation` otherwise). Nothing is played beyond ``horizon``. With a
    ``mechanism``, ``exposure[(c, n)][i]`` counts the releases of ``n`` rewards that held ``c`` of user i's
    (:func:`~anonbandits.privacy.mechanisms.guarantee`).

    As a :class:`~anonbandits.channels.FeedbackChannel` (``CHANNELS["anonymous"]``), :meth:`open` builds it from a
    driver's options and :meth:`serve_batch` serves a whole batch of learners' demand: its demand graph,
    decomposition and elicitation, with the variance proxy :meth:`sample_variance` raised by a mechanism's noise.

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
    allow_large : bool, optional
        Confirm (2C+2) x N above :data:`~anonbandits.core.limits.MAX_ELICITATION_ENTRIES` (5 x 10^7 user-rounds
        of one elicitation, held at once). Default False.
    absence : float, optional
        The probability in [0, 1) that a user misses a block (one assignment, its 2C+2 rounds; module
        docstring). Default 0: every user is always there, and nothing is drawn for presence.
    confidence : float or None, optional
        Q in (0, 1) of the robust decompositions of :meth:`serve_batch` (``None``, the default: the solver's
        0.95); only with an ``absence`` above 0.

    Raises
    ------
    ConfigError
        If ``instance`` is not a :class:`~anonbandits.envs.MultiUserInstance`, ``horizon`` not an integer from
        1 to ``MAX_HORIZON``, ``C`` not an integer from 1 to 2^62, ``rng`` (or ``noise_rng``) not a generator,
        ``mechanism`` not ``None`` or a mechanism, ``allow_large`` not True or False, (2C+2) x N passes
        ``MAX_ELICITATION_ENTRIES`` without ``allow_large``, ``absence`` is not a probability in [0, 1), or
        ``confidence`` is not ``None`` or in (0, 1) (or is given without an absence).

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
    >>> channel.play(np.zeros(4, dtype=int)), channel.done
    (94, True)

    With absent users, a block's groups hold its present users only:

    >>> absent = AnonymousChannel(MultiUserInstance(np.array([[1.0, 0.0]] * 6)), 2, 600, np.random.default_rng(0),
    ...                           absence=0.3)
    >>> fb = absent.elicit(np.zeros(6, dtype=int), np.array([100]))
    >>> bool((fb.sums == fb.counts).all()), int(fb.counts.sum()) < 600, absent.auditor.group_sizes[:2].tolist()
    (True, True, [0, 0])
    """

    name = "anonymous"
    requires_decomposition = True

    @checks(
        instance=INSTANCE,
        C=COUNT,
        horizon=RULES["horizon"],
        rng=RNG,
        mechanism=MECHANISM,
        noise_rng=optional(RNG),
        allow_large=BOOL,
        absence=RULES["absence"],
        confidence=optional(OPEN_UNIT),
    )
    def __init__(
        self,
        instance: MultiUserInstance,
        C: int,
        horizon: int,
        rng: np.random.Generator,
        *,
        mechanism: Mechanism | None = None,
        noise_rng: np.random.Generator | None = None,
        allow_large: bool = False,
        absence: float = 0.0,
        confidence: float | None = None,
    ) -> None:
        options = ChannelOptions(C=C, absence=absence, confidence=confidence)  # refuses a confidence without absence
        super().__init__(instance, horizon)
        self.auditor = AnonymityAuditor(C)
        # one elicitation holds every user of every one of its 2C+2 rounds at once: sized before any is drawn
        check_size(
            "(2C+2) x users",
            elicitation_rounds(self.auditor.C) * instance.n_users,
            MAX_ELICITATION_ENTRIES,
            "MAX_ELICITATION_ENTRIES",
            "user-rounds of one feedback elicitation",
            allow_large=allow_large,
        )
        self.C, self._rng = self.auditor.C, rng
        self.mechanism, self._noise_rng = mechanism, noise_rng if noise_rng is not None else rng
        self.exposure: dict[tuple[int, int], np.ndarray] = {}
        self._sums = DirectChannel.sampler(instance.model, instance.sigma)  # the exact sums of many rewards
        self._options, self._dec_rng = options, rng
        self.absence, self.confidence = float(absence), confidence
        self.variance_proxy = elicitation_variance(self.C)
        # with use_surplus: the noise variances and estimates pooled over every batch so far
        self._noise = np.zeros((self.n_users, self.n_arms))
        self._pooled = np.zeros((self.n_users, self.n_arms), np.int64)

    @classmethod
    @checks(instance=INSTANCE, horizon=RULES["horizon"], rng=RNG, options=OPTIONS)
    def open(
        cls, instance: MultiUserInstance, horizon: int, rng: np.random.Generator, options: ChannelOptions
    ) -> AnonymousChannel:
        """The anonymous channel of one run, decomposing its batches as ``options`` say.

        Parameters
        ----------
        instance : anonbandits.envs.instances.MultiUserInstance
            The N x K means and reward model.
        horizon : int
            The horizon T, between 1 and ``MAX_HORIZON`` (10^9) rounds.
        rng : numpy.random.Generator
            The source of every reward (and of the decomposer without ``options.decomposer_rng``).
        options : ChannelOptions
            C, the decomposer, the mechanism and how a batch is served.

        Returns
        -------
        AnonymousChannel
            The channel, its clock at 0.

        Raises
        ------
        ConfigError
            For an argument of another type or out of range (as :class:`AnonymousChannel` says; ``options`` not
            a :class:`ChannelOptions`), or ``options.decomposer`` not an ``anondecomp`` method.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> channel = AnonymousChannel.open(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 100,
        ...                                 np.random.default_rng(0), ChannelOptions(C=2))
        >>> channel.C, channel.variance_proxy, channel.t
        (2, 2.25, 0)
        """
        check_decomposer(options.decomposer)  # its batches are decomposed: refused now, not at the first one
        channel = cls(
            instance,
            options.C,
            horizon,
            rng,
            mechanism=options.mechanism,
            noise_rng=options.noise_rng,
            allow_large=options.allow_large,
            absence=options.absence,
            confidence=options.confidence,
        )
        channel._options = options
        channel._dec_rng = options.decomposer_rng if options.decomposer_rng is not None else rng
        return channel

    @staticmethod
    @checks(C=COUNT)
    def sample_variance(C: int) -> float:
        """The variance proxy of one estimate, ``(4C+1)/4`` (:func:`elicitation_variance`).

        Parameters
        ----------
        C : int
            The anonymity parameter.

        Returns
        -------
        float
            ``(4 C + 1) / 4``.

        Raises
        ------
        ConfigError
            If ``C`` is not an integer from 1 to 2^62.

        Examples
        --------
        >>> AnonymousChannel.sample_variance(3)
        3.25
        """
        return elicitation_variance(C)

    @staticmethod
    @checks(C=COUNT)
    def min_group(C: int) -> int:
        """The smallest aggregate released: C (a vote board releases a tally of at least C agents).

        Parameters
        ----------
        C : int
            The anonymity parameter.

        Returns
        -------
        int
            C.

        Raises
        ------
        ConfigError
            If ``C`` is not an integer from 1 to 2^62.

        Examples
        --------
        >>> AnonymousChannel.min_group(3)
        3
        """
        return int(C)

    @property
    def observations(self) -> int:
        """The aggregate observations the auditor served."""
        return self.auditor.observations

    @property
    def min_group_size(self) -> int | None:
        """The smallest group the auditor served (``None`` before the first)."""
        return self.auditor.min_group_size

    @checks(learners=LEARNERS, demand=COUNT_MATRIX, batch=COUNT, partial=BOOL)
    def serve_batch(self, learners: BatchLearner, demand: np.ndarray, batch: int, *, partial: bool) -> Served | None:
        """One batch: decompose ``demand`` into C-anonymous assignments, elicit their estimates, keep the demanded.

        The batch's graph is :func:`demand_graph`'s (or ``options.batch_graph``'s), decomposed by
        :func:`decompose_demand` and run by :func:`elicit_demand`; a mechanism's noise raises
        :attr:`variance_proxy` (:func:`noisy_variance`: the worst batch so far, or with ``use_surplus`` the
        noise pooled over every batch).

        Parameters
        ----------
        learners : BatchLearner
            The N learners (their supports and recommendations shape the graph).
        demand : numpy.ndarray
            (N, K) int64 samples wanted.
        batch : int
            The batch's number (1-based), for the error messages.
        partial : bool
            Play a batch the horizon cuts to the horizon (answered with ``sums=None``); otherwise a batch that
            does not fit in the rounds left is not played and ``None`` is returned.

        Returns
        -------
        Served or None
            The estimates' sums and counts, the variance proxy and the batch's figures.

        Raises
        ------
        ConfigError
            If ``learners`` is not a batch learner of the channel's N users and K arms, ``demand`` not an (N, K)
            array of non-negative integers, ``batch`` not a positive integer or ``partial`` not True or False.
        AnonBanditsError
            When an arm some learner wants cannot gather C + 1 users, a decomposer leaves a pair short (not
            ``best_effort``), or the decomposition passes ``max_elicited``.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.core.learners import EpochElimination
        >>> from anonbandits.envs import clustered_instance
        >>> instance = clustered_instance(6, 2, 0, 0.4, np.random.default_rng(0))
        >>> learners = EpochElimination(6, 2, confidence=0.1, sigma2=2.25)
        >>> channel = AnonymousChannel.open(instance, 10**6, np.random.default_rng(1),
        ...                                 ChannelOptions(C=2, decomposer="polytope"))
        >>> served = channel.serve_batch(learners, learners.demand(), 1, partial=True)
        >>> served.rounds == served.assignments * 6 == channel.t, served.sigma2, served.method
        (True, 2.25, 'polytope')
        """
        self._check_batch(learners, demand)
        o = self._options
        graph = (
            demand_graph(learners, demand, self.C, batch, best_effort=o.best_effort)
            if o.batch_graph is None
            else o.batch_graph(demand, batch)
        )
        if self.absence > 0:
            return self._serve_absent(learners, demand, batch, graph, partial)
        res = self._plan(learners, demand, batch, graph)
        if not partial and self.t + res.total_assignments * elicitation_rounds(self.C) > self.horizon:
            return None
        t0 = self.t
        fb, complete = elicit_demand(self, res, demand, batch, use_surplus=o.use_surplus, best_effort=o.best_effort)
        if complete and fb.noise is not None:
            base, wanted = elicitation_variance(self.C), demand > 0
            if o.use_surplus:  # pooled estimates carry the noise of every batch so far
                self._noise, self._pooled = self._noise + fb.noise, self._pooled + fb.counts
                self.variance_proxy = noisy_variance(base, self._noise, self._pooled, wanted)
            else:
                self.variance_proxy = max(self.variance_proxy, noisy_variance(base, fb.noise, fb.counts, wanted))
        return Served(
            sums=fb.sums if complete else None,
            counts=fb.counts if o.use_surplus else demand,
            sigma2=self.variance_proxy,
            rounds=self.t - t0,
            size=int(graph.demand or graph.lower_bound),
            assignments=res.total_assignments,
            distinct=res.n_distinct,
            method=res.method,
            uncovered=len(res.uncovered),
            surplus=0 if fb.surplus is None else int(fb.surplus.sum()),
        )

    @checks(
        assignments=Rule(
            lambda v: ASSIGNMENT.test(v) or ASSIGNMENTS.test(v),
            "an (N,) or (n, N) array of arm indices (integers >= 0)",
        ),
        multiplicities=optional(COUNTS),
        order=optional(COUNTS),
        wanted=optional(COUNT_MATRIX),
    )
    def elicit(
        self,
        assignments: np.ndarray,
        multiplicities: np.ndarray | None = None,
        *,
        order: np.ndarray | None = None,
        wanted: np.ndarray | None = None,
    ) -> Feedback:
        """Run the 2C+2-round sub-algorithm on each repetition of the given assignments and return its estimates.

        The (n, N) ``assignments`` (or one (N,) assignment) are repeated ``multiplicities`` (n,) times one after
        the other, or played in ``order``. The feedback holds the estimates of every *complete* repetition: one
        cut by the horizon is played and served (regret, observations) but yields no estimate. With ``wanted``,
        each pair keeps its first ``wanted[i, j]`` informative estimates (distinct assignments in row order) and
        the rest are discarded and counted in ``Feedback.surplus`` (:func:`kept_segments`). With absent users
        (``absence`` > 0) each repetition is a block drawn apart: its present users form its groups, the absent
        ones get no estimate and add no regret, so the counts are the estimates actually received.

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
        ConfigError
            If ``assignments`` is not an (n, N) or (N,) array of arm indices from 0 to K - 1, ``multiplicities``
            not (n,) integers from 0 to 2^62, ``order`` not indices of the n assignments, ``wanted`` not an (N, K)
            array of non-negative integers, or neither ``multiplicities`` nor ``order`` is given.

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
        if n_users != self.n_users or np.any((a < 0) | (a >= self.n_arms)):
            raise ConfigError(
                f"assignments must be {self.n_users} arm indices from 0 to {self.n_arms - 1} per row, got "
                f"{_shown(assignments)}"
            )
        if wanted is not None and np.shape(wanted) != (self.n_users, self.n_arms):
            raise ConfigError(f"wanted must be a ({self.n_users}, {self.n_arms}) array, got {_shown(wanted)}")
        r, remaining = elicitation_rounds(self.C), self.horizon - self.t
        fit = remaining // r  # the repetitions the horizon leaves room for: nothing beyond is ever allocated
        if order is not None:
            reps, runs, lengths, cut_row = _ordered(np.asarray(order, dtype=np.int64), n_dist, fit)
        elif multiplicities is not None:
            reps, runs, lengths, cut_row = _repetitions(multiplicities, n_dist, fit)
        else:
            raise ConfigError("multiplicities or order must be given, got neither")
        partial = remaining - int(reps.sum()) * r if cut_row is not None else 0
        if self.absence > 0:  # every block drawn apart: its present users form its groups
            played = None if order is None else np.asarray(order, dtype=np.int64)[: int(reps.sum())]
            return self._elicit_absent(a, reps, played, wanted, partial, cut_row)
        rates = self._ledger.instance.round_regret(a)
        if runs.size:
            self._ledger.charge(lengths * r, rates[runs])
        if wanted is None:
            feedback = self._elicit_repeated(a[reps > 0], reps[reps > 0])
        else:
            rows, row_reps, keep, surplus = kept_segments(a[reps > 0], reps[reps > 0], wanted, self.C)
            feedback = replace(self._elicit_repeated(rows, row_reps, keep), surplus=surplus)
        if partial and cut_row is not None:
            self._ledger.charge(np.array([partial]), rates[cut_row : cut_row + 1])
            cut = a[cut_row][None, :]
            self._release(cut, *partition_groups(cut, self.n_arms, self.C), np.ones(1, np.int64), partial)
        return feedback

    def _elicit_repeated(self, a: np.ndarray, reps: np.ndarray, keep: np.ndarray | None = None) -> Feedback:
        n_users, n_arms, r = self.n_users, self.n_arms, elicitation_rounds(self.C)
        sums, noise = np.zeros(n_users * n_arms), np.zeros(n_users * n_arms)
        counts = np.zeros(n_users * n_arms, dtype=np.int64)
        step = max(1, CHUNK_ENTRIES // (r * n_users))
        users = np.arange(n_users)
        for lo in range(0, len(a), step):
            ac, mc = a[lo : lo + step], reps[lo : lo + step]
            labels, positions = partition_groups(ac, n_arms, self.C)
            released, variance = self._release(ac, labels, positions, mc, r)
            ok = labels >= 0 if keep is None else (labels >= 0) & keep[lo : lo + step]
            pair = (users[None, :] * n_arms + ac)[ok]
            sums += np.bincount(
                pair, weights=estimates_from_sums(released, labels, positions)[ok], minlength=n_users * n_arms
            )
            counts += np.bincount(
                pair, weights=np.broadcast_to(mc[:, None], ok.shape)[ok], minlength=n_users * n_arms
            ).astype(np.int64)
            if variance is not None:  # an estimate r_{s,0} - r_{s,k} has the variances of both sums
                signed = variance * np.where(np.arange(r) == 0, 1.0, -1.0)[:, None]
                noise += np.bincount(
                    pair, weights=estimates_from_sums(signed, labels, positions)[ok], minlength=n_users * n_arms
                )
        shape = (n_users, n_arms)
        return Feedback(
            sums.reshape(shape), counts.reshape(shape), noise.reshape(shape) if self.mechanism is not None else None
        )

    @checks(a=ASSIGNMENTS, labels=LABELS, positions=POSITIONS, reps=REPETITIONS, rounds=COUNT)
    def serve(
        self, a: np.ndarray, labels: np.ndarray, positions: np.ndarray, reps: np.ndarray, rounds: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Play ``rounds`` rounds of the rows of ``a`` and release their group sums, what an observer sees.

        Each row's rewards are summed over its ``reps[row]`` repetitions. A release is what the auditor serves:
        one group's sum in one round over the ``reps`` repetitions of a row (the batched learner needs nothing
        finer), so each reward enters exactly one release. The rounds played (``reps.sum() * rounds``) are on
        the clock and their pseudo-regret in the channel's books, as for :meth:`elicit`: no feedback is free.

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
        ConfigError
            If ``a``, ``labels`` and ``positions`` are not (n, N) integer arrays (arms from 0 to K - 1, labels
            from -1 to N - 1, positions >= 0), ``reps`` not (n,) positive integers, ``rounds`` not an integer from
            1 to 2C+2, or the rounds played (``reps.sum() x rounds``) would pass the horizon; or the channel has
            absent users (given groups would hold them: :meth:`elicit` forms each block's groups itself).
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
        if self.absence > 0:
            raise ConfigError(
                "labels must be the channel's own with absent users (absence > 0: a block's groups form from its "
                "present users, drawn at its start): use elicit or serve_batch"
            )
        a, labels, positions = np.asarray(a), np.asarray(labels), np.asarray(positions)
        reps = np.asarray(reps, dtype=np.int64)
        shape = (a.shape[0], self.n_users)
        for name, value, top in (("a", a, self.n_arms - 1), ("labels", labels, self.n_users - 1)):
            if value.shape != shape or (value.size and value.max() > top):
                raise ConfigError(f"{name} must be an {shape} array of integers up to {top}, got {_shown(value)}")
        if positions.shape != shape:
            raise ConfigError(f"positions must be an {shape} array (the shape of a), got {_shown(positions)}")
        if reps.shape != shape[:1]:
            raise ConfigError(f"reps must be an ({shape[0]},) array (one per row of a), got {_shown(reps)}")
        if rounds > elicitation_rounds(self.C):
            raise ConfigError(f"rounds must be at most 2C+2 = {elicitation_rounds(self.C)}, got {rounds}")
        left = self.horizon - self.t
        # a repetition past the horizon is refused before the sum, which then stays exact in 64 bits
        if (reps.size and int(reps.max()) > left) or int(rounds) * int(reps.sum()) > left:
            raise ConfigError(
                f"rounds must be within the horizon ({left} rounds left), got reps.sum() x rounds = "
                f"{_shown(reps)}.sum() x {rounds}"
            )
        released = self._release(a, labels, positions, reps, rounds)  # the auditor refuses before any charge
        self._ledger.charge(reps * rounds, self._ledger.instance.round_regret(a))
        return released

    def _release(
        self, a: np.ndarray, labels: np.ndarray, positions: np.ndarray, reps: np.ndarray, rounds: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`serve` without the clock: the callers (:meth:`elicit`) charge the rounds themselves."""
        groups = round_labels(labels, positions, self.C)[:, :rounds]
        rewards = self._reward_sums(self._ledger.instance.mu[np.arange(a.shape[1]), a], reps, rounds)
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

    def _present_groups(self, block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(b, N) rows of ``block``, one block each: who is present (one Bernoulli draw per user and block), and
        step 1's group labels and positions among the present users only (an absent user is in no group; an arm
        left with at most C present users forms none, so the auditor is never asked for it)."""
        present = self._rng.random(block.shape) >= self.absence
        # the absent users go to an arm K of their own, whose groups (numbered last) are then dropped
        labels, positions = partition_groups(np.where(present, block, self.n_arms), self.n_arms + 1, self.C)
        return present, np.where(present, labels, -1), np.where(present, positions, 0)

    def _present_regret(self, block: np.ndarray, present: np.ndarray) -> np.ndarray:
        """(b,) the pseudo-regret of one round of each block, summed over its present users."""
        gaps = self._ledger.instance.gaps[np.arange(self.n_users)[None, :], block]
        return np.where(present, gaps, 0.0).sum(axis=1)

    def _stretches(self, arms: np.ndarray, rounds: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`play`'s charge: with absent users, blocks of 2C+2 rounds from the play's start, each user present
        in ``Binomial(full blocks, 1 - A)`` of them (one draw per user) and in the last, shorter block with
        probability 1 - A; each stretch's per-round regret is its present users' average."""
        if self.absence == 0:
            return super()._stretches(arms, rounds)
        r = elicitation_rounds(self.C)
        full, rest = divmod(rounds, r)
        gaps = self._ledger.instance.gaps[np.arange(self.n_users), arms]
        lengths, rates = [], []
        if full:
            lengths.append(full * r)
            rates.append(float(gaps @ self._rng.binomial(full, 1.0 - self.absence, self.n_users)) / full)
        if rest:
            lengths.append(rest)
            rates.append(float(gaps @ (self._rng.random(self.n_users) >= self.absence)))
        return np.array(lengths, dtype=np.int64), np.array(rates)

    def _elicit_absent(
        self,
        a: np.ndarray,
        reps: np.ndarray,
        played: np.ndarray | None,
        wanted: np.ndarray | None,
        partial: int,
        cut_row: int | None,
    ) -> Feedback:
        """:meth:`elicit` with absent users: the ``reps.sum()`` blocks that fit (``played``, or each row of ``a``
        ``reps`` times in order) drawn one by one, a chunk of blocks at a time; each pair keeps its first
        ``wanted`` informative estimates in block order (all without ``wanted``)."""
        n_users, n_arms, r = self.n_users, self.n_arms, elicitation_rounds(self.C)
        size = n_users * n_arms
        sums, noise = np.zeros(size), np.zeros(size)
        counts, seen, surplus = np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size, np.int64)
        limit = None if wanted is None else np.asarray(wanted, dtype=np.int64).ravel()
        total, ends = int(reps.sum()), np.cumsum(reps)
        users = np.arange(n_users)[None, :]
        step = max(1, CHUNK_ENTRIES // (r * n_users))
        for lo in range(0, total, step):
            at = np.arange(lo, min(lo + step, total))
            block = a[played[at] if played is not None else np.searchsorted(ends, at, side="right")]
            present, labels, positions = self._present_groups(block)
            self._ledger.charge(np.full(len(block), r, dtype=np.int64), self._present_regret(block, present))
            released, variance = self._release(block, labels, positions, np.ones(len(block), np.int64), r)
            key, informative = users * n_arms + block, labels >= 0
            keep = informative if limit is None else _first_wanted(key, informative, seen, limit)
            pair = key[keep]
            sums += np.bincount(pair, weights=estimates_from_sums(released, labels, positions)[keep], minlength=size)
            counts += np.bincount(pair, minlength=size)
            surplus += np.bincount(key[informative & ~keep], minlength=size)
            if variance is not None:  # an estimate r_{s,0} - r_{s,k} has the variances of both sums
                signed = variance * np.where(np.arange(r) == 0, 1.0, -1.0)[:, None]
                noise += np.bincount(pair, weights=estimates_from_sums(signed, labels, positions)[keep], minlength=size)
        if partial and cut_row is not None:  # the block the horizon cuts: played and served, no estimate
            cut = a[cut_row][None, :]
            present, labels, positions = self._present_groups(cut)
            self._ledger.charge(np.array([partial]), self._present_regret(cut, present))
            self._release(cut, labels, positions, np.ones(1, np.int64), partial)
        shape = (n_users, n_arms)
        return Feedback(
            sums.reshape(shape),
            counts.reshape(shape),
            noise.reshape(shape) if self.mechanism is not None else None,
            None if wanted is None else surplus.reshape(shape),
        )

    def _plan(
        self, learners: BatchLearner, demand: np.ndarray, batch: int, graph: anondecomp.DemandGraph, **robust: Any
    ) -> anondecomp.Decomposition:
        """The batch's decomposition (:func:`decompose_demand`) with the options the channel was opened with."""
        o = self._options
        return decompose_demand(
            learners,
            demand,
            self.C,
            o.decomposer,
            self._dec_rng,
            batch,
            graph=graph,
            max_elicited=o.max_elicited,
            best_effort=o.best_effort,
            max_exposure=o.max_exposure,
            **robust,
        )

    def _serve_absent(
        self, learners: BatchLearner, demand: np.ndarray, batch: int, graph: anondecomp.DemandGraph, partial: bool
    ) -> Served | None:
        """:meth:`serve_batch` with absent users: ``graph`` decomposed with groups robust to them, then the residual
        demand (demand minus what was received) re-planned (``anondecomp.replan``) and elicited until every pair
        has its demand (or the horizon cuts the batch); the learners get the estimates received."""
        import anondecomp  # the solver layer, loaded with the first decomposed batch

        o, r = self._options, elicitation_rounds(self.C)
        plan = self._plan(learners, demand, batch, graph, absence=self.absence, confidence=self.confidence)
        first, target = plan, np.array(demand, dtype=np.int64)
        target[plan.uncovered[:, 0], plan.uncovered[:, 1]] = 0  # best effort: pairs no group can cover
        sums, noise = np.zeros(target.shape), np.zeros(target.shape)
        received = np.zeros(target.shape, np.int64)
        t0, surplus, assignments, distinct, complete = self.t, 0, 0, 0, True
        for replans in range(MAX_REPLANS + 1):
            if replans:
                plan = with_robust_fallback(
                    functools.partial(
                        anondecomp.replan,
                        graph,
                        plan,
                        received,
                        best_effort=o.best_effort,
                        rng=self._dec_rng,
                        improve=False,
                        absence=self.absence,
                        confidence=self.confidence,
                    ),
                    o.decomposer,
                    self.absence,
                )
                _check_elicited(plan, self.n_users, o.max_elicited, batch)
            if not partial and self.t + plan.total_assignments * r > self.horizon:
                return None
            start = self.t
            wanted = None if o.use_surplus else np.maximum(demand - received, 0)
            fb = self.elicit(plan.assignments, plan.multiplicities, wanted=wanted)
            sums, received = sums + fb.sums, received + fb.counts
            noise = noise + fb.noise if fb.noise is not None else noise
            surplus += 0 if fb.surplus is None else int(fb.surplus.sum())
            assignments, distinct = assignments + plan.total_assignments, distinct + plan.n_distinct
            complete = self.t - start == plan.total_assignments * r
            if not complete or not plan.total_assignments or (received >= target).all():
                break
        else:
            raise AnonBanditsError(
                f"batch {batch}: {MAX_REPLANS} re-plans left pairs short of their demand (absence {self.absence:g} "
                "leaves too few users present for their groups)"
            )
        if complete and not o.best_effort and np.any(received < demand):
            raise AnonBanditsError(f"decomposer {first.method!r} left pairs below their demand in batch {batch}")
        if complete and self.mechanism is not None:
            base = elicitation_variance(self.C)
            if o.use_surplus:  # pooled estimates carry the noise of every batch so far
                self._noise, self._pooled = self._noise + noise, self._pooled + received
                self.variance_proxy = noisy_variance(base, self._noise, self._pooled, demand > 0)
            else:
                self.variance_proxy = max(self.variance_proxy, noisy_variance(base, noise, received, demand > 0))
        return Served(
            sums=sums if complete else None,
            counts=received,
            sigma2=self.variance_proxy,
            rounds=self.t - t0,
            size=int(graph.demand or graph.lower_bound),
            assignments=assignments,
            distinct=distinct,
            method=first.method,
            uncovered=len(first.uncovered),
            surplus=surplus,
        )

    def _reward_sums(self, mu: np.ndarray, reps: np.ndarray, rounds: int) -> np.ndarray:
        """(n, rounds, N): for each row's users and each round, the sum of ``reps[row]`` i.i.d. rewards of
        mean parameter ``mu[row, user]`` (every user is drawn; the auditor ignores users in no group)."""
        n, n_users = mu.shape
        shape = (n, rounds, n_users)
        if self._ledger.instance.model == "bernoulli":
            if np.all(reps == 1):  # one repetition: a uniform draw is cheaper than a binomial one
                return (self._rng.random(shape) < mu[:, None, :]).astype(float)
            return self._rng.binomial(reps[:, None, None], mu[:, None, :], size=shape).astype(float)
        out = np.zeros(shape)
        cap = max(1, CHUNK_ENTRIES // (rounds * n_users))
        for start in range(0, int(reps.max(initial=0)), cap):
            sel = np.flatnonzero(reps > start)
            take = np.minimum(reps[sel] - start, cap)
            out[sel] += self._sums(
                mu[sel, None, :], np.broadcast_to(take[:, None, None], (sel.size, rounds, n_users)), self._rng
            )
        return out


def _repetitions(
    multiplicities: np.ndarray, n_dist: int, fit: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int | None]:
    """The repetitions of each of ``n_dist`` assignments repeated ``multiplicities`` times one after the other that
    fit in ``fit`` full repetitions, without allocating one entry per repetition (a multiplicity may be 10^11).

    Returns ``(reps, runs, lengths, cut_row)``: (n_dist,) repetitions played of each assignment, the assignments
    played in order and their runs' lengths (the regret books' stretches), and the assignment of the first
    repetition that does not fit (``None`` when every one fits)."""
    m = np.asarray(multiplicities)
    if (
        m.shape != (n_dist,)
        or m.dtype == bool
        or not np.issubdtype(m.dtype, np.number)
        or not np.all(np.isfinite(m))
        or np.any(m < 0)
        or np.any(m != np.floor(m))
    ):
        raise ConfigError(f"multiplicities must be {n_dist} integers >= 0 (one per assignment), got {_shown(m)}")
    m = m.astype(np.int64)
    before = np.cumsum(m) - m
    reps = np.clip(fit - before, 0, m)
    runs = np.flatnonzero(reps)
    cut = np.flatnonzero(reps < m)  # the first assignment with a repetition left
    return reps, runs, reps[runs], int(cut[0]) if cut.size else None


def _ordered(order: np.ndarray, n_dist: int, fit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int | None]:
    """:func:`_repetitions` for assignments played in ``order`` (one index per repetition)."""
    if order.ndim != 1 or np.any((order < 0) | (order >= n_dist)):
        raise ConfigError(f"order must list assignment indices in [0, {n_dist}), got {_shown(order)}")
    n_full = min(order.size, fit)
    played = order[:n_full]
    reps = np.bincount(played, minlength=n_dist)
    if not n_full:
        return reps, played, played, int(order[0]) if order.size else None
    starts = np.concatenate(([0], np.flatnonzero(np.diff(played)) + 1))
    lengths = np.diff(np.append(starts, n_full))
    return reps, played[starts], lengths, int(order[n_full]) if n_full < order.size else None


def _first_wanted(key: np.ndarray, informative: np.ndarray, seen: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """(b, N) bool: the ``informative`` entries of b blocks that are among their pair's first ``limit[pair]``
    informative estimates, blocks in order (``key``: (b, N) each entry's pair ``user * K + arm``); ``seen`` ((N K,)
    the informative estimates of each pair before these blocks) is advanced in place. One stable sort, as
    :func:`kept_segments`: within a pair the blocks keep their order."""
    b, n_users = key.shape
    flat = key.T.ravel()  # user-major, blocks in order
    given = informative.T.ravel().astype(np.int64)
    order = np.argsort(flat, kind="stable")
    sorted_given = given[order]
    total = np.cumsum(sorted_given)
    first = np.ones(flat.size, dtype=bool)
    first[1:] = flat[order][1:] != flat[order][:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(flat.size), 0))
    before = np.empty(flat.size, dtype=np.int64)
    before[order] = total - sorted_given - (total[start] - sorted_given[start])
    keep = informative & (seen[key] + before.reshape(n_users, b).T < limit[key])
    seen += np.bincount(key[informative], minlength=seen.size)
    return keep


def _check_elicited(res: anondecomp.Decomposition, n_users: int, max_elicited: int | None, batch: int) -> None:
    """Refuse a (re-planned) decomposition of more distinct user-assignments than ``max_elicited``."""
    if max_elicited is not None and len(res.multiplicities) * n_users > max_elicited:
        raise AnonBanditsError(
            f"batch {batch}: the {res.method} decomposition has {len(res.multiplicities)} "
            f"distinct assignments of {n_users} users, more than the {max_elicited:.0e} "
            "user-assignments a batch elicits"
        )


@fill
@checks(learners=LEARNERS)
def supports(learners: BatchLearner) -> np.ndarray:
    """The arms each user may be assigned: every arm while it explores, its recommendation alone once stopped.

    **[DECISION]** A user still exploring may fill a group on any arm (it discards what it did not ask for); a
    user that has stopped plays only its recommendation, so nobody else drops below C+1 on that arm.

    Parameters
    ----------
    learners : BatchLearner
        N batched learners.

    Returns
    -------
    numpy.ndarray
        (N, K) bool support.

    Raises
    ------
    ConfigError
        If ``learners`` is not a batch learner (:class:`~anonbandits.core.learners.BatchLearner`).

    {{refs_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import BestArmElimination
    >>> learners = BestArmElimination(2, 3, "naive", approx=0.5, delta=0.1, rng=np.random.default_rng(0))
    >>> supports(learners).tolist()  # before any sample: every arm
    [[True, True, True], [True, True, True]]
    >>> wanted = learners.demand()
    >>> _ = learners.update(wanted * np.array([0.1, 0.9, 0.2]), wanted, 0.25)
    >>> supports(learners).tolist()  # stopped: the recommendation alone
    [[False, True, False], [False, True, False]]
    """
    n, k = learners.n_learners, learners.n_arms
    support = np.repeat(learners.exploring[:, None], k, axis=1)
    support[np.arange(n), learners.recommendation()] = True
    return support


def _check_demand(learners: BatchLearner, demand: np.ndarray) -> None:
    """Refuse a demand of another size than the learners' N x K (O(1): every batch)."""
    if np.shape(demand) != (learners.n_learners, learners.n_arms):
        raise ConfigError(
            f"demand must be a ({learners.n_learners}, {learners.n_arms}) array (the learners' users x arms), "
            f"got {_shown(demand)}"
        )


@fill
@checks(learners=LEARNERS, demand=COUNT_MATRIX, C=COUNT, batch=COUNT, best_effort=BOOL)
def demand_graph(
    learners: BatchLearner, demand: np.ndarray, C: int, batch: int, *, best_effort: bool = False
) -> anondecomp.DemandGraph:
    """One batch's demand graph, every user on its :func:`supports`.

    **[DECISION]** When an arm some learner wants cannot gather C + 1 users on those supports (too few explore,
    too few have stopped on it), users that have stopped are recruited onto it as well: they fill its groups
    for this batch (their identification is done; in a regret run they pay the arm's gap like any play). Only
    when the arm cannot gather C + 1 users in all is the batch refused.

    Parameters
    ----------
    learners : BatchLearner
        The N learners whose ``demand`` this is (their supports and recommendations).
    demand : numpy.ndarray
        (N, K) int64 samples wanted; a row of zeros is a user that only fills groups.
    C : int
        The anonymity parameter.
    batch : int
        The batch's number (1-based), for the error message.
    best_effort : bool, optional
        Keep an arm that cannot gather C + 1 users (the decomposer leaves its pairs uncovered) instead of
        refusing the batch. Default False.

    Returns
    -------
    anondecomp.DemandGraph
        The graph, ``w_ij`` the demand, each user's support apart from it.

    Raises
    ------
    ConfigError
        If ``learners`` is not a batch learner, ``demand`` not an (N, K) array of non-negative integers (N
        learners of K arms), ``C`` or ``batch`` not a positive integer, or ``best_effort`` not True or False.
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, stopped users included (not ``best_effort``).

    {{refs_paper000}}
    Section 3.2, the demand graph.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> learners = EpochElimination(6, 2, confidence=0.1)
    >>> graph = demand_graph(learners, learners.demand(), 2, 1)
    >>> graph.lower_bound, bool(graph.support.all())
    (1300, True)
    """
    import anondecomp  # the solver layer, loaded with the first decomposed batch

    _check_demand(learners, demand)
    support = supports(learners)
    graph = anondecomp.DemandGraph.from_weights(demand, support=support)
    thin = graph.thin_arms(C)
    if thin.size:  # recruit stopped users onto the arms that cannot gather C + 1 users otherwise
        support[:, thin] = True
        graph = anondecomp.DemandGraph.from_weights(demand, support=support)
        thin = graph.thin_arms(C)
    if thin.size and not best_effort:
        raise AnonBanditsError(
            f"batch {batch}: arm {int(thin[0])} is wanted but fewer than C + 1 = {C + 1} users "
            "can play it; the instance needs more users per arm"
        )
    return graph


@fill
def is_decomposer(name: object) -> bool:
    """Whether ``name`` is a decomposition method of the solver layer (``anondecomp.METHODS``).

    The test of :func:`check_decomposer` and of the registry's ``decomposer`` parameter; the solver layer is
    loaded by this call only.

    Parameters
    ----------
    name : object
        The decomposer given.

    Returns
    -------
    bool
        True for a name of ``anondecomp.METHODS``.

    {{refs_paper000}}
    Section 3.2, the anonymous decomposition.

    Examples
    --------
    >>> is_decomposer("auto"), is_decomposer("magic"), is_decomposer(3)
    (True, False, False)
    """
    import anondecomp  # only when a decomposer is checked: importing the channels does not load the solvers

    return isinstance(name, str) and name in anondecomp.METHODS


@fill
def check_decomposer(decomposer: str) -> str:
    """``decomposer``, checked to be a decomposition method of the solver layer (``anondecomp.METHODS``).

    The one check of a ``decomposer`` argument: the library drivers call it, and the registry's ``decomposer``
    parameter (:data:`anonbandits.channel_params.DECOMPOSER`) applies the same test.

    Parameters
    ----------
    decomposer : str
        The decomposer given.

    Returns
    -------
    str
        ``decomposer``.

    Raises
    ------
    ConfigError
        If ``decomposer`` is not one of ``anondecomp.METHODS`` (the message lists them; anything but a str is
        none).

    {{refs_paper000}}
    Section 3.2, the anonymous decomposition.

    Examples
    --------
    >>> check_decomposer("polytope")
    'polytope'
    >>> check_decomposer("magic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: decomposer must be one of auto, ..., got 'magic'
    """
    import anondecomp  # the solver layer, loaded with the first decomposer checked

    require(is_decomposer(decomposer), "decomposer", f"one of {', '.join(anondecomp.METHODS)}", decomposer)
    return decomposer


@fill
@checks(
    learners=LEARNERS,
    demand=COUNT_MATRIX,
    C=COUNT,
    decomposer=DECOMPOSER,
    rng=RNG,
    batch=COUNT,
    max_elicited=optional(COUNT),
    graph=optional(GRAPH),
    best_effort=BOOL,
    absence=RULES["absence"],
    max_exposure=optional(RULES["max_exposure"]),
    confidence=optional(OPEN_UNIT),
)
def decompose_demand(
    learners: BatchLearner,
    demand: np.ndarray,
    C: int,
    decomposer: str,
    rng: np.random.Generator,
    batch: int,
    *,
    max_elicited: int | None = None,
    graph: anondecomp.DemandGraph | None = None,
    best_effort: bool = False,
    absence: float = 0.0,
    confidence: float | None = None,
    max_exposure: int | None = None,
) -> anondecomp.Decomposition:
    """The C-anonymous decomposition of one batch's demand graph (by default :func:`demand_graph`'s).

    Parameters
    ----------
    learners : BatchLearner
        The N learners of the batch (:func:`demand_graph` reads their supports).
    demand : numpy.ndarray
        (N, K) int64 samples wanted, as for :func:`demand_graph`.
    C : int
        The anonymity parameter: every group of an assignment has at least C + 1 users.
    decomposer : str
        An ``anondecomp.METHODS`` name.
    rng : numpy.random.Generator
        Randomness of randomized decomposers.
    batch : int
        The batch's number (1-based), for the error messages.
    max_elicited : int, optional
        A bound on the distinct user-assignments (distinct assignments x users) the batch may elicit
        (:data:`MAX_ELICITED` for identification); none by default.
    graph : anondecomp.DemandGraph, optional
        The batch's graph when the caller builds it (Algorithm 1: BaSE's batched graph ``(D_b, A_{.,b})``);
        default :func:`demand_graph`.
    best_effort : bool, optional
        Cover what can be covered and list the rest in the result's ``uncovered``
        (``anondecomp.decompose(best_effort=True)``) instead of refusing the batch. Default False.
    absence : float, optional
        The probability in [0, 1) that a user misses a block: above 0 the decomposition's groups are robust to it
        (``anondecomp.decompose(absence=..., confidence=...)``). Default 0: the method's decomposition, bit for
        bit.
    confidence : float or None, optional
        Q in (0, 1) of the robust groups (``None``, the default: the solver's 0.95); only with an absence.
    max_exposure : int or None, optional
        S >= 0: the decomposition is re-seated and no user is exposed (in a released group) in more than S blocks
        beyond its demand (``anondecomp.decompose(max_surplus_exposure=S)``). ``None`` (default): the method's
        own seating, bit for bit. Not with an absence.

    Returns
    -------
    anondecomp.Decomposition
        The assignments and their multiplicities.

    Raises
    ------
    ConfigError
        If ``learners`` is not a batch learner, ``demand`` not an (N, K) array of non-negative integers (N
        learners of K arms), ``C`` or ``batch`` not a positive integer, ``decomposer`` not an ``anondecomp``
        method, ``rng`` not a generator, ``max_elicited`` not ``None`` or a positive integer, ``graph`` not
        ``None`` or an (N, K) ``anondecomp.DemandGraph``, ``best_effort`` not True or False, ``absence`` not a
        probability in [0, 1), or ``confidence`` not ``None`` or in (0, 1) (or given without an absence).
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, stopped users included (not ``best_effort``);
        or when the batch's decomposition has more distinct user-assignments than ``max_elicited`` (for
        ``randomized``, refused before drawing when the decomposer's own estimate of its assignments already
        passes it).

    {{refs_paper000}}
    Section 3.2, the anonymous decomposition.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> learners = EpochElimination(6, 2, confidence=0.1)
    >>> learners.demand()[0].tolist()
    [650, 650]
    >>> res = decompose_demand(learners, learners.demand(), 2, "polytope", np.random.default_rng(0), 1)
    >>> res.total_assignments  # R = D: each user's 1300 samples, no assignment wasted
    1300
    >>> robust = decompose_demand(learners, learners.demand(), 2, "auto", np.random.default_rng(0), 1, absence=0.1)
    >>> robust.info["robust_size"], robust.total_assignments  # all 6 users on one arm: 3 of them stay present
    (5, 1300)
    """
    import anondecomp  # the solver layer, loaded with the first decomposed batch

    _check_demand(learners, demand)
    if graph is not None and graph.shape != np.shape(demand):
        raise ConfigError(
            f"graph must be a graph of the demand's {np.shape(demand)} users x arms, got one of {graph.shape}"
        )
    if graph is None:
        graph = demand_graph(learners, demand, C, batch, best_effort=best_effort)
    n = learners.n_learners
    if max_elicited is not None and decomposer == "randomized":
        # the decomposer's own estimate of the assignments it draws (each distinct, of every user), checked
        # before it draws them: on many arms they run to millions
        from anondecomp.methods.randomized import expected_assignments

        expected = expected_assignments(graph, demand, C)
        if expected * n > max_elicited:
            raise AnonBanditsError(
                f"batch {batch}: the randomized decomposition would draw about {expected:.3g} "
                f"distinct assignments of {n} users, more than the {max_elicited:.0e} "
                "user-assignments a batch elicits; use an exact decomposer"
            )
    # improve=False: a batch needs its decomposition fast, not auto's last rounds removed (and the runs keep
    # the decompositions of the reproduction tables)
    require(
        absence > 0 or confidence is None,
        "confidence",
        "None without absence (it sizes groups for absent users)",
        confidence,
    )
    require(absence == 0 or max_exposure is None, "max_exposure", "None with an absence above 0", max_exposure)
    robust: dict[str, Any] = {"absence": absence, "confidence": confidence} if absence > 0 else {}  # none at 0
    if max_exposure is not None:
        robust["max_surplus_exposure"] = max_exposure
    # the method's own seating (reseat=False): the recorded runs of the bandit layer were made with it
    try:
        res = with_robust_fallback(
            functools.partial(
                anondecomp.decompose, graph, C, rng=rng, best_effort=best_effort, improve=False, reseat=False, **robust
            ),
            decomposer,
            absence,
        )
    except (anondecomp.InfeasibleError, anondecomp.MethodNotApplicableError) as exc:
        if max_exposure is None:
            raise
        raise AnonBanditsError(f"batch {batch}: max_exposure {max_exposure}: {exc}") from None
    if max_elicited is not None and len(res.multiplicities) * n > max_elicited:
        raise AnonBanditsError(
            f"batch {batch}: the {decomposer} decomposition has {len(res.multiplicities)} "
            f"distinct assignments of {n} users, more than the {max_elicited:.0e} "
            "user-assignments a batch elicits"
        )
    return res


def with_robust_fallback(decompose: Callable[..., Any], method: str, absence: float) -> Any:
    """``decompose(method=method)``, or, with an absence above 0 where the method does not apply,
    ``decompose(method="auto")``.

    Robust groups raise the group size a method must reach from C+1 to the robust size, so a method that applies
    to a batch without absence may not apply with it (``polytope`` needs every arm's column sum of w/D to reach
    that size), nor, often, to a re-planned residual. The batch or re-plan then runs on ``auto``, which applies
    to every graph; a batch's record names the method its plan ran on (``robust:...``)."""
    import anondecomp  # the solver layer, loaded with the first decomposed batch

    try:
        return decompose(method=method)
    except anondecomp.MethodNotApplicableError:
        if absence == 0 or method == "auto":
            raise
        return decompose(method="auto")


@fill
@checks(channel=CHANNEL, res=DECOMPOSITION, demand=COUNT_MATRIX, batch=COUNT, use_surplus=BOOL, best_effort=BOOL)
def elicit_demand(
    channel: AnonymousChannel,
    res: anondecomp.Decomposition,
    demand: np.ndarray,
    batch: int,
    *,
    use_surplus: bool = False,
    best_effort: bool = False,
) -> tuple[Feedback, bool]:
    """Run a batch's decomposition through the channel, each pair keeping exactly its demanded estimates (or all).

    Parameters
    ----------
    channel : AnonymousChannel
        The run's channel (its clock may cut the batch at the horizon).
    res : anondecomp.Decomposition
        The batch's decomposition (:func:`decompose_demand`).
    demand : numpy.ndarray
        (N, K) int64 samples wanted.
    batch : int
        The batch's number (1-based), for the error message.
    use_surplus : bool, optional
        Keep every estimate, those beyond a pair's demand too (Algorithm 1's BaSE uses them all; the feedback
        then has no ``surplus``). Default False.
    best_effort : bool, optional
        Accept pairs left below their demand (a best-effort decomposition's uncovered pairs). Default False.

    Returns
    -------
    feedback : anonbandits.channels.Feedback
        Sums and counts of the kept estimates, the discarded ``surplus`` and, with a mechanism, the noise
        variances.
    complete : bool
        Whether every repetition ran (False when the horizon cut the batch: the feedback is then partial).

    Raises
    ------
    ConfigError
        If ``channel`` is not an :class:`AnonymousChannel`, ``res`` not an ``anondecomp.Decomposition`` of the
        channel's N users x K arms, ``demand`` not an (N, K) array of non-negative integers, ``batch`` not a
        positive integer, or a switch not True or False.
    AnonBanditsError
        When a complete batch left a pair below its demand (not ``best_effort``).

    {{refs_paper000}}
    Section 3.1, the feedback-elicitation sub-algorithm.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> from anonbandits.envs import clustered_instance
    >>> instance = clustered_instance(6, 2, 0, 0.4, np.random.default_rng(0))
    >>> learners = EpochElimination(6, 2, confidence=0.1)
    >>> demand = learners.demand()
    >>> res = decompose_demand(learners, demand, 2, "polytope", np.random.default_rng(1), 1)
    >>> feedback, complete = elicit_demand(AnonymousChannel(instance, 2, 10**6, np.random.default_rng(2)), res,
    ...                                    demand, 1)
    >>> complete, bool((feedback.counts == demand).all())
    (True, True)
    """
    users_arms = (channel.n_users, channel.n_arms)
    if np.shape(demand) != users_arms:
        raise ConfigError(f"demand must be a {users_arms} array (the channel's users x arms), got {_shown(demand)}")
    if res.graph.shape != users_arms:
        raise ConfigError(
            f"res must decompose a graph of the channel's {users_arms} users x arms, got one of {res.graph.shape}"
        )
    t0 = channel.t
    fb = channel.elicit(res.assignments, res.multiplicities, wanted=None if use_surplus else demand)
    complete = channel.t - t0 == res.total_assignments * elicitation_rounds(channel.C)
    if complete and not best_effort and np.any(fb.counts < demand):
        raise AnonBanditsError(f"decomposer {res.method!r} left pairs below their demand in batch {batch}")
    return fb, complete


@checks(sigma2=POSITIVE_FINITE, noise=VARIANCES, counts=COUNT_MATRIX, where=PAIRS)
def noisy_variance(sigma2: float, noise: np.ndarray, counts: np.ndarray, where: np.ndarray) -> float:
    """The variance proxy of estimates whose sums carry a mechanism's noise: ``sigma2 + max W_ij / n_ij``.

    **[DECISION]** Variance-matched: the noise variance ``W_ij`` of a pair's sum (public: it depends on no
    reward) spread over its ``n_ij`` estimates, the worst pair of ``where``.

    Parameters
    ----------
    sigma2 : float
        The proxy without noise (``(4C+1)/4`` on the anonymous channel).
    noise : numpy.ndarray
        (N, K) noise variance of each pair's sum.
    counts : numpy.ndarray
        (N, K) estimates in each pair's sum.
    where : numpy.ndarray
        (N, K) bool, the pairs whose estimates the learners use.

    Returns
    -------
    float
        The raised proxy (``sigma2`` when ``where`` is empty).

    Raises
    ------
    ConfigError
        If ``sigma2`` is not a finite positive number, ``noise`` not a 2-D array of finite numbers >= 0,
        ``counts`` one of non-negative integers or ``where`` one of bools, or the three of different shapes.

    References
    ----------
    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> noisy_variance(3.25, np.array([[8.0, 2.0]]), np.array([[4, 0]]), np.array([[True, False]]))
    5.25
    """
    if not np.shape(noise) == np.shape(counts) == np.shape(where):
        raise ConfigError(
            f"noise, counts and where must have one shape, got {np.shape(noise)}, {np.shape(counts)} and "
            f"{np.shape(where)}"
        )
    return sigma2 + float(np.max(noise / np.maximum(counts, 1), where=where, initial=0.0))
