"""Absent users: decompositions whose groups keep C+1 present users with a chosen probability.

The model (the "platform" issue): every user misses a block (one assignment, its 2C+2 rounds) with probability
A_i, drawn once per user and block and known at the block's start; groups form from the present users only; a
group (the users on one arm in one assignment) releases only if at least C+1 of its users are present, and an
absent user gets no reward. A = 0 is the model of the paper, and gives today's decompositions bit for bit.

A group G is *robust* when ``P(at least C+1 of G present) >= Q`` (the confidence): with one A for every user the
exact binomial tail, which depends on |G| only (:func:`robust_group_size` is the smallest robust size); with
one A_i per user the exact Poisson-binomial tail of G's users. An arm whose whole support B_j is not robust is
*at risk*: its group can do no better than hold every user of B_j, and counts only when it does. A group counts
(gives its users informative samples) when it holds at least C+1 users and is robust, or holds the whole
support of its arm. Every decision is exact: the binomial tail in integer arithmetic, the Poisson-binomial tail
in floating point with a proven error bound, and in integer arithmetic where that bound cannot decide.

References
----------
Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the C-anonymous
decompositions of Section 3, whose groups this module sizes for absent users).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from anondecomp.errors import InvalidInputError, MethodNotApplicableError, SolverError
from anondecomp.graph import DemandGraph
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import (
    check_absence,
    check_confidence,
    check_one_absence,
    checked,
    drop_uncoverable,
    thin_arms_error,
)

DEFAULT_CONFIDENCE = 0.95
"""The confidence Q when none is given: a robust group keeps C+1 present users with probability >= 0.95."""
PAD_ROUNDS = 4
"""Rounds in which padders are spent, each on the groups least likely to keep C+1 present users at its start."""
PAD_BUDGET = 200_000_000
"""Distinct assignments x (users + edges) above which the padding pass is skipped (``info["padded"]`` False)."""
STAGE_QUANTILE = 0.9
"""With one absence per user, the first stage sizes groups for this quantile of the absences; what it leaves
uncovered is decomposed again with groups sized for the largest absence, which is always enough."""
MAX_ROBUST_GROUP = 10**6
"""Largest robust group size computed: the exact binomial tail of n users is an integer of about 55 n bits."""
EXACT_TERMS = 3 * 10**8
"""Bound on (terms of the shorter tail) x (group size) of one exact binomial tail (up to about 40 s of integer
work on the project's machine)."""
_U = 2.0**-53  # unit roundoff of float64
_TINY = 1e-290  # bounds the absolute error that underflow can add to a float lower tail


# -- exact tails -------------------------------------------------------------------------------------------------


def _lower_scaled(n: int, C: int, present: int, absent: int) -> int:
    """``P(at most C of n users present) * D^n`` as an integer, with each user present with probability
    ``present / D`` and absent with ``absent / D`` (``present + absent = D``): the exact binomial lower tail."""
    if n <= C:
        return (present + absent) ** n
    acc, binom, p_k = 1, 1, 1  # Horner in powers of `absent`: sum_k binom(n, k) present^k absent^(C-k)
    for k in range(1, C + 1):
        binom = binom * (n - k + 1) // k
        p_k *= present
        acc = acc * absent + binom * p_k
    return acc * absent ** (n - C)


def _upper_scaled(n: int, C: int, present: int, absent: int) -> int:
    """``P(at least C+1 of n users present) * D^n`` as an integer (the terms of :func:`_lower_scaled`'s
    complement: fewer when n - C < C + 1)."""
    acc, binom = 0, 1  # Horner in `present`, from k = n down to C + 1: sum_k binom(n, k) present^k absent^(n-k)
    a_pow = 1
    for k in range(n, C, -1):
        acc = acc * present + binom * a_pow
        binom = binom * k // (n - k + 1)
        a_pow *= absent
    return acc * present ** (C + 1)


def _meets_uniform(n: int, C: int, absence: float, confidence: float) -> bool:
    """Exactly: whether n users, each absent with probability ``absence``, keep C+1 present with probability
    at least ``confidence`` (summing whichever tail has fewer terms)."""
    a, q = Fraction(absence), Fraction(confidence)
    D = a.denominator
    if n - C < C + 1:
        upper = _upper_scaled(n, C, D - a.numerator, a.numerator)
        return upper * q.denominator >= q.numerator * D**n
    lower = _lower_scaled(n, C, D - a.numerator, a.numerator)
    return lower * q.denominator <= (q.denominator - q.numerator) * D**n


def _float_lower_uniform(n: int, C: int, absence: float) -> float:
    """A float estimate of ``P(Binomial(n, 1 - absence) <= C)`` (only to start the exact search)."""
    from scipy.special import bdtr

    return float(bdtr(C, n, 1.0 - absence))


@checked(absence=check_one_absence)
def robust_group_size(C: int, absence: float, confidence: float | None = None) -> int:
    """The smallest group that keeps at least C+1 present users with probability >= ``confidence``.

    Each of the n users of a group is present independently with probability ``1 - absence``; the group is
    robust when ``P(Binomial(n, 1 - absence) >= C + 1) >= confidence``, a probability that grows with n. The
    answer is exact: the binomial tail is summed in integer arithmetic (every float is a dyadic rational), a
    floating-point estimate only chooses where to look.

    Parameters
    ----------
    C : int
        The anonymity parameter (>= 1).
    absence : float
        The probability in [0, 1) that a user misses a block.
    confidence : float, optional
        Q in (0, 1), default :data:`DEFAULT_CONFIDENCE` (0.95).

    Returns
    -------
    int
        The smallest robust size n (C + 1 when ``absence`` is 0).

    Raises
    ------
    InvalidInputError
        For C < 1, an absence outside [0, 1) or a confidence outside (0, 1) (bools, strings, NaN included), or a
        size beyond the exact tail's limits: above :data:`MAX_ROBUST_GROUP` users, or (terms of the shorter
        tail) x size above :data:`EXACT_TERMS`.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (groups of at
    least C+1 users, Section 3).

    Examples
    --------
    >>> robust_group_size(50, 0.10), robust_group_size(50, 0.0), robust_group_size(1, 0.5, 0.25)
    (61, 51, 2)
    """
    confidence = DEFAULT_CONFIDENCE if confidence is None else confidence
    if absence == 0:
        return C + 1
    target = 1.0 - confidence
    lo, hi = C + 1, C + 1
    while hi <= 2 * MAX_ROBUST_GROUP and _float_lower_uniform(hi, C, absence) > target:  # float search first
        lo, hi = hi, 2 * hi
    while hi - lo > 1 and hi <= 2 * MAX_ROBUST_GROUP:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _float_lower_uniform(mid, C, absence) > target else (lo, mid)
    if hi > MAX_ROBUST_GROUP or min(C + 1, hi - C) * hi > EXACT_TERMS:
        raise InvalidInputError(
            f"absence {absence!r} at C = {C:.6g} and confidence {confidence!r} needs groups of about {hi:.3g} users, "
            f"beyond the exact tail's limits (MAX_ROBUST_GROUP = {MAX_ROBUST_GROUP:.0e} users, EXACT_TERMS = "
            f"{EXACT_TERMS:.0e}; anondecomp.absence)"
        )
    n = hi
    while n > C + 1 and _meets_uniform(n - 1, C, absence, confidence):  # exact from here on
        n -= 1
    while not _meets_uniform(n, C, absence, confidence):
        n += 1
    return n


def _exact_group_meets(absence: np.ndarray, C: int, confidence: float) -> bool:
    """Exactly: whether users absent with the given probabilities keep C+1 present with probability >=
    ``confidence`` (the Poisson-binomial lower tail in integers over the common power-of-two denominator)."""
    fr = [Fraction(float(a)) for a in absence]
    D = max(f.denominator for f in fr)
    s = [1] + [0] * C  # s[k] * D^t = P(exactly k of the first t present), for k <= C
    for f in fr:
        a = f.numerator * (D // f.denominator)
        p = D - a
        for k in range(C, 0, -1):
            s[k] = s[k] * a + s[k - 1] * p
        s[0] *= a
    q = Fraction(confidence)
    return sum(s) * q.denominator <= (q.denominator - q.numerator) * D ** len(fr)


def _float_lower_tails(
    absence: np.ndarray, starts: np.ndarray, sizes: np.ndarray, C: int, stop: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Float ``P(at most C present)`` of every group (members ``absence[starts[g]:starts[g] + sizes[g]]``), and
    how many members each value covers: with ``stop``, a group's recursion ends once its tail is certainly
    below ``stop`` (the tail only falls as members join). Every entry of the recursion is a sum of products of
    non-negative numbers, so after t members its relative error is at most ``(1+u)^(4t+C+2) - 1``
    (:func:`_error_bound`), plus underflow, absolutely below :data:`_TINY`."""
    G = len(sizes)
    low = np.ones(G)
    seen = np.zeros(G, dtype=np.int64)
    act = np.flatnonzero(sizes > C)
    low[sizes <= C] = 1.0
    seen[sizes <= C] = sizes[sizes <= C]
    S = np.zeros((len(act), C + 1))
    S[:, 0] = 1.0
    t = 0
    while len(act):
        a = absence[starts[act] + t][:, None]
        S[:, 1:] = S[:, 1:] * a + S[:, :-1] * (1.0 - a)
        S[:, 0] *= a[:, 0]
        t += 1
        tail = S.sum(axis=1)
        done = sizes[act] == t
        if stop is not None:
            done |= tail * (1 + _error_bound(t, C)) + _TINY < stop
        low[act[done]], seen[act[done]] = tail[done], t
        act, S = act[~done], S[~done]
    return low, seen


def _error_bound(t: int, C: int) -> float:
    """A bound on the relative error of a float lower tail after t members (twice ``(4t + C + 2) u``, which
    bounds ``(1+u)^(4t+C+2) - 1`` and its inverse while ``(4t+C+2) u < 1/2``)."""
    return 2.0 * (4 * t + C + 2) * _U


def group_meets(absence: np.ndarray, starts: np.ndarray, sizes: np.ndarray, C: int, confidence: float) -> np.ndarray:
    """Exactly, for each group: whether it keeps at least C+1 present users with probability >= ``confidence``.

    ``absence`` holds the members' absence probabilities, group g's at ``starts[g]:starts[g] + sizes[g]``
    (sorted from the most present, the recursion stops soonest). The float recursion decides every group its
    error bound can; the others are summed in integers (:func:`_exact_group_meets`)."""
    tau = 1.0 - confidence  # exact where confidence >= 1/2, else within one rounding
    lo_tau, hi_tau = tau * (1 - 2 * _U), tau * (1 + 2 * _U)
    low, seen = _float_lower_tails(absence, starts, sizes, C, stop=lo_tau)
    gam = 2.0 * (4 * seen + C + 2) * _U  # _error_bound of each group's last step
    meets = low * (1 + gam) + _TINY < lo_tau
    misses = (seen == sizes) & (low * (1 - gam) - _TINY > hi_tau)
    out = meets.copy()
    for g in np.flatnonzero(~meets & ~misses & (sizes > C)):
        out[g] = _exact_group_meets(absence[starts[g] : starts[g] + sizes[g]], C, confidence)
    return out


# -- the absence model of one graph ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Presence:
    """The absence model of one graph at one C: which groups count, and the arms at risk.

    Built by :func:`presence`. ``size`` is the robust group size when every user has the same absence (then a
    group counts exactly when it holds ``threshold[j]`` users of arm j), ``None`` with one absence per user.
    """

    C: int
    confidence: float
    absence: np.ndarray  # (N,) each user's probability of missing a block
    given: float | np.ndarray  # as the caller gave it, kept in the decomposition's info
    size: int | None
    degrees: np.ndarray  # (K,) users whose support holds the arm
    at_risk: np.ndarray  # (K,) bool: wanted arms of >= C+1 users whose whole support is not robust

    @property
    def threshold(self) -> np.ndarray:
        """(K,) the users a group of each arm needs to count (every user alike): the robust size, or the
        arm's whole support when it is smaller (never below C+1)."""
        return np.maximum(self.C + 1, np.minimum(self.size or 0, self.degrees))

    def counted(self, block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For a (b, N) block of assignments: (b*K,) bool, whether the group of key ``r*K + j`` counts, and
        (b*K,) int64 its size."""
        b, N = block.shape
        K = len(self.degrees)
        at = np.arange(b, dtype=np.int64)[:, None] * K + block
        sizes = np.bincount(at.ravel(), minlength=b * K)
        deg = np.tile(self.degrees, b)
        if self.size is not None:
            return sizes >= np.tile(self.threshold, b), sizes
        counted = (sizes > self.C) & (sizes >= deg)  # whole supports count (at risk or not)
        open_ = (sizes > self.C) & ~counted
        if open_.any():
            r, i = np.nonzero(open_[at])
            keys = at[r, i]
            order = np.lexsort((self.absence[i], keys))
            keys, users = keys[order], i[order]
            firsts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
            groups = keys[firsts]
            size = np.diff(np.append(firsts, len(keys)))
            counted[groups] = group_meets(self.absence[users], firsts, size, self.C, self.confidence)
        return counted, sizes

    def informative(self, block: np.ndarray) -> np.ndarray:
        """(b, N) bool: whether each entry of a block of assignments is in a group that counts."""
        K = len(self.degrees)
        counted, _ = self.counted(block)
        return counted[np.arange(len(block), dtype=np.int64)[:, None] * K + block]

    def info(self, graph: DemandGraph) -> dict:
        """The fields a decomposition's ``info`` keeps (and its file's header): absence, confidence, robust size
        and the arms at risk."""
        out: dict = {"absence": self.given, "confidence": self.confidence}
        if self.size is not None:
            out["robust_size"] = self.size
        out["at_risk_arms"] = graph.arm_names(np.flatnonzero(self.at_risk))
        return out


def presence(graph: DemandGraph, C: int, absence, confidence: float | None = None) -> Presence:
    """The absence model of ``graph`` at ``C``: ``absence`` one probability or one per user (checked by the
    rule of :data:`~anondecomp.validation.RULES`), ``confidence`` default :data:`DEFAULT_CONFIDENCE`."""
    given = check_absence("absence", absence, {"graph": graph})
    Q = DEFAULT_CONFIDENCE if confidence is None else check_confidence("confidence", confidence)
    assert Q is not None
    a = np.full(graph.n_users, given) if isinstance(given, float) else np.asarray(given)
    deg = graph.arm_degrees
    wanted = graph.wanted_arms & (deg > C)
    if a.size and (a == a[0]).all():
        size = robust_group_size(C, float(a[0]), Q)
        at_risk = wanted & (deg < size)
    else:
        size = None
        order = np.lexsort((a[graph.edge_users], graph.edge_arms))  # by arm, most present first
        starts = np.concatenate([[0], np.cumsum(deg)[:-1]])
        whole = group_meets(a[graph.edge_users[order]], starts, deg, C, Q)
        at_risk = wanted & ~whole
    for arr in (a, deg, at_risk):
        arr.flags.writeable = False
    return Presence(C, Q, a, given, size, deg, at_risk)


def is_absent(absence) -> bool:
    """Whether ``absence`` (``None``, a number or one per user) makes any user miss a block."""
    return absence is not None and bool(np.any(np.asarray(absence) != 0))


# -- robust decompositions ---------------------------------------------------------------------------------------

Solve = Callable[[DemandGraph, int], Decomposition]


def graph_with_demand(graph: DemandGraph, weights: np.ndarray, required: np.ndarray) -> DemandGraph:
    """``graph``'s users, arms and support with other per-edge weights and demands (users may have none)."""
    return DemandGraph._from_edges(
        graph.shape, graph.users, graph.arms, graph.edge_users, graph.edge_arms, weights, required
    )


def robust_coverage(graph: DemandGraph, assignments: np.ndarray, multiplicities: np.ndarray, pres: Presence):
    """Informative samples per edge when only the groups that count give samples (exact)."""
    from anondecomp.verify import edge_coverage

    got, _ = edge_coverage(graph, assignments, multiplicities, pres.C, informative=pres.informative)
    return got


def _free_placement(graph: DemandGraph, remaining: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """(N,) each user's arm when nothing else places it: the arm of its support (not a whole-support arm)
    with the most demand left, then the most users; a user with whole-support arms only takes its first."""
    score = np.where(whole[graph.edge_arms], -1, remaining)
    order = np.lexsort((graph.arm_degrees[graph.edge_arms], score, graph.edge_users))
    return graph.edge_arms[order[graph.indptr[1:] - 1]].astype(np.int64)


def _whole_support(
    graph: DemandGraph, whole: np.ndarray, remaining: np.ndarray, base: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Assignments in which arms of ``whole`` hold every user of their support: first fit of the arms (most
    demand first) into classes of disjoint supports; a class is one assignment repeated as often as its arms'
    largest demand left, its other users at ``base``."""
    K = graph.n_arms
    need = np.zeros(K, dtype=np.int64)
    np.maximum.at(need, graph.edge_arms, remaining)
    arms = np.flatnonzero(whole & (need > 0))
    if not len(arms):
        return np.empty((0, graph.n_users), dtype=np.int64), np.empty(0, dtype=np.int64)
    order = graph.arm_order
    bounds = np.searchsorted(graph.edge_arms[order], np.stack([arms, arms + 1]))
    members = {int(j): graph.edge_users[order[lo:hi]] for j, lo, hi in zip(arms, *bounds, strict=True)}
    classes: list[tuple[set, list[int]]] = []
    for j in sorted(members, key=lambda j: (-need[j], j)):
        home = next((c for c in classes if c[0].isdisjoint(members[j].tolist())), None)
        if home is None:
            home = (set(), [])
            classes.append(home)
        home[0].update(members[j].tolist())
        home[1].append(j)
    rows = np.tile(base, (len(classes), 1))
    for r, (_, chosen) in enumerate(classes):
        for j in chosen:
            rows[r, members[j]] = j
    return rows, np.array([max(need[j] for j in chosen) for _, chosen in classes], dtype=np.int64)


def _priorities(row: np.ndarray, sizes: np.ndarray, pres: Presence, K: int) -> np.ndarray:
    """(K,) how needy each arm's group is in one assignment (smaller first): its size with every user alike,
    else its probability of keeping C+1 present users (a float estimate: it only orders the groups)."""
    if pres.size is not None:
        return sizes.astype(np.float64)
    users = np.argsort(row, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    low, _ = _float_lower_tails(pres.absence[users], starts, sizes, pres.C)
    return 1.0 - low


def _pad_row(graph: DemandGraph, row: np.ndarray, pres: Presence) -> None:
    """Spend one assignment's padders (users in groups that do not count) on the counting groups of their
    support, least likely to keep C+1 present users first, in :data:`PAD_ROUNDS` rounds. Counting groups only
    grow and the others only shrink, so no group changes whether it counts: coverage can only rise."""
    K = graph.n_arms
    counted, sizes = pres.counted(row[None, :])
    padder = ~counted[row]
    ok = padder[graph.edge_users] & counted[graph.edge_arms] & ~pres.at_risk[graph.edge_arms]
    if not ok.any():
        return
    cu, ca = graph.edge_users[ok].astype(np.int64), graph.edge_arms[ok].astype(np.int64)
    for k in range(PAD_ROUNDS):
        sel = cu % PAD_ROUNDS == k
        if not sel.any():
            continue
        u, a = cu[sel], ca[sel]
        prio = _priorities(row, np.bincount(row, minlength=K), pres, K)
        order = np.lexsort((prio[a], u))
        first = np.concatenate([[True], u[order][1:] != u[order][:-1]])
        row[u[order][first]] = a[order][first]


def _pad(graph: DemandGraph, rows: np.ndarray, pres: Presence) -> bool:
    """Pad every assignment of ``rows`` in place (:func:`_pad_row`), unless above :data:`PAD_BUDGET`."""
    if len(rows) * (graph.n_users + graph.nnz) > PAD_BUDGET:
        return False
    for row in rows:
        _pad_row(graph, row, pres)
    return True


def _stage(
    graph: DemandGraph, pres: Presence, solve: Solve, remaining: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray, str | None, bool]:
    """One stage: arms of fewer than ``size`` users (and those at risk) in whole-support assignments, every
    other arm by ``solve`` at C' = size - 1 (so its informative groups hold at least ``size`` users), padded.
    Returns the assignments, multiplicities, the method used (``None`` if not called) and whether it padded."""
    whole = (pres.degrees < size) | pres.at_risk
    base = _free_placement(graph, remaining, whole)
    rows, mult = _whole_support(graph, whole, remaining, base)
    left = remaining
    if len(rows):
        left = np.maximum(remaining - robust_coverage(graph, rows, mult, pres), 0)
    method = None
    on_whole = whole[graph.edge_arms]
    if (left[~on_whole] > 0).any():
        left = np.where(on_whole, 0, left)
        # the graph itself when the method, with best effort at C' = size - 1, drops exactly the whole-support
        # arms (fewer than `size` users) and nothing else changed: it keeps its form (a batched graph's D)
        drops_them = not (whole & (pres.degrees >= size)).any()
        same = drops_them and np.array_equal(left, np.where(on_whole, 0, graph.edge_required))
        try:
            core = solve(graph if same else graph_with_demand(graph, left * 1.0, left), size - 1)
        except MethodNotApplicableError as exc:  # its C+1 is the robust size: say so, or C+1 reads wrong
            raise MethodNotApplicableError(
                f"{exc} (with absent users C+1 is the robust group size {size}, for C = {pres.C})"
            ) from None
        method = core.method
        rows = np.concatenate([rows, np.asarray(core.assignments, dtype=np.int64)])
        mult = np.concatenate([mult, core.multiplicities.astype(np.int64)])
    rows = np.array(rows, dtype=np.int64)
    padded = _pad(graph, rows, pres)
    return rows, mult, method, padded


def robust_decomposition(
    graph: DemandGraph, C: int, solve: Solve, absence, confidence: float | None, best_effort: bool
) -> Decomposition:
    """A decomposition whose groups are robust to absent users (module docstring): ``solve(graph, C')`` is the
    chosen method with best effort, run with groups of at least the robust size; arms of fewer users (those
    at risk among them) get assignments holding their whole support; padders are spent on the least robust
    groups; with one absence per user, what the first stage leaves short is decomposed again with groups sized
    for the largest absence. Every pair that can be covered is covered by counting groups (checked exactly)."""
    start = time.perf_counter()
    pres = presence(graph, C, absence, confidence)
    thin = graph.thin_arms(C)
    if len(thin) and not best_effort:
        raise thin_arms_error(graph.arm_names(thin), C, "; use best_effort to cover everything else")
    need, uncovered = drop_uncoverable(graph, C, graph.edge_required)
    sizes = [pres.size] if pres.size is not None else _stage_sizes(pres)
    parts, methods, remaining, padded = [], [], need.astype(np.int64), True
    for size in sizes:
        rows, mult, method, pad = _stage(graph, pres, solve, remaining, size)
        padded &= pad
        methods += [method] if method else []
        if len(rows):
            parts.append((rows, mult))
            remaining = np.maximum(remaining - robust_coverage(graph, rows, mult, pres), 0)
        if not remaining.any():
            break
    if remaining.any():
        raise SolverError(f"robust decomposition left {int((remaining > 0).sum())} pair(s) short")
    rows = np.concatenate([p[0] for p in parts]) if parts else np.empty((0, graph.n_users), dtype=np.int64)
    mult = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, dtype=np.int64)
    rows, mult = compress(rows.astype(arm_dtype(graph.n_arms)), mult)
    info = {**pres.info(graph), "base_method": "+".join(dict.fromkeys(methods)) or "whole-support", "padded": padded}
    return Decomposition(
        graph,
        C,
        "robust:" + info["base_method"],
        rows,
        mult,
        uncovered=uncovered,
        wall_time=time.perf_counter() - start,
        info=info,
    )


def _stage_sizes(pres: Presence) -> list[int]:
    """The group sizes of the stages with one absence per user: for the :data:`STAGE_QUANTILE` of the
    absences, then for the largest (a group of that many users is robust whoever they are: each user's
    presence dominates the least present one's)."""
    a = pres.absence
    first = robust_group_size(pres.C, float(np.quantile(a, STAGE_QUANTILE)), pres.confidence)
    last = robust_group_size(pres.C, float(a.max()), pres.confidence)
    return [first] if first == last else [first, last]


def user_demand_bound(graph: DemandGraph, absence) -> float:
    """``max_i (sum_j ceil(w_ij)) / (1 - A_i)``: the blocks the neediest user must be scheduled for, in
    expectation, to receive its demand when it misses each block with probability A_i.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    absence : float or array_like of float
        One probability in [0, 1) for every user, or one per user.

    Returns
    -------
    float
        The bound (0 for a graph without users).

    Raises
    ------
    InvalidInputError
        For an absence that is not one probability in [0, 1) or one per user.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the lower bound
    max_i sum_j w_ij of Section 3, here for users that miss blocks).

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_weights(np.array([[3.0, 1.0], [2.0, 0.0]]))
    >>> user_demand_bound(g, 0.2)  # user 0 needs 4 samples: 4 / 0.8 blocks
    5.0
    """
    a = _user_absences(graph, absence)
    return float(np.max(graph.user_demand / (1.0 - a))) if graph.n_users else 0.0


def _user_absences(graph: DemandGraph, absence) -> np.ndarray:
    """(N,) each user's absence, checked (one for all users or one per user)."""
    given = check_absence("absence", absence, {"graph": graph})
    return np.broadcast_to(np.asarray(0.0 if given is None else given, dtype=np.float64), (graph.n_users,))


_BOUND_CELLS = 1 << 22  # (round, user kind) tail probabilities evaluated at once by completion_bound
_BOUND_TOL = 1e-9  # the sum of completion_bound stops when its terms fall below this


def completion_bound(graph: DemandGraph, absence) -> float:
    """``E[max_i T_i]``: the expected blocks until every user has been present in as many blocks as its demand.

    ``T_i`` is the block of user i's ``d_i``-th presence, ``d_i = sum_j ceil(w_ij)`` (a negative binomial count,
    each block attended with probability ``1 - A_i``). A user takes at most one sample per block, and only when
    present, so no schedule, re-planned or adaptive, finishes in fewer blocks on average. It is at least
    :func:`user_demand_bound` (Jensen), and further above it the more users share the largest demand.

    Computed exactly as ``D + sum_{t >= D} (1 - prod_i P(T_i <= t))``, ``D`` the largest demand and
    ``P(T_i <= t) = P(Binomial(t, 1 - A_i) >= d_i)`` (a regularised incomplete beta function), users of equal
    demand and absence counted together; the sum stops when its terms fall below 10^-9.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph; user i's demand is ``d_i = sum_j ceil(w_ij)``.
    absence : float or array_like of float
        Each user's probability of missing a block, in [0, 1): one for all users, or one per user.

    Returns
    -------
    float
        ``E[max_i T_i]`` in blocks (0 when no user has demand).

    Raises
    ------
    InvalidInputError
        For an absence outside [0, 1), of another length than the users, or not a number.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (every user on
    one arm of each assignment, so one sample per user and assignment at most, Section 3).

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.ones((1, 1), bool))
    >>> round(completion_bound(g, 0.2), 6)  # one user: its negative binomial mean, 10 / 0.8
    12.5
    """
    from scipy.special import betainc

    a = _user_absences(graph, absence)
    d = np.asarray(graph.user_demand, dtype=np.int64)
    kinds, count = np.unique(np.stack([d, a])[:, d > 0], axis=1, return_counts=True)
    if not kinds.shape[1]:
        return 0.0
    need, p = kinds[0], 1.0 - kinds[1]
    top = int(need.max())
    total, t0 = float(top), top
    widest = max(1, _BOUND_CELLS // len(need))
    step = min(widest, top)  # the tail rarely reaches past 2D; it doubles when it does (absences near 1)
    while True:
        t = np.arange(t0, t0 + step, dtype=np.float64)[:, None]
        # P(Binomial(t, p) >= d) as the regularised incomplete beta I_p(d, t - d + 1), t >= D >= d; one below
        # the smallest float is 0, its log -inf and its round's product 0
        with np.errstate(divide="ignore"):
            log_f = np.log(betainc(need, t - need + 1, p))
        tail = -np.expm1(log_f @ count.astype(np.float64))
        total += float(tail.sum())
        if tail[-1] < _BOUND_TOL:
            return total
        t0, step = t0 + step, min(2 * step, widest)


def describe_absence(given) -> str:
    """One absence for a summary line: the number, or ``per user (mean m, max M)``."""
    if isinstance(given, float | int):
        return f"{given:g}"
    a = np.asarray(given, dtype=np.float64)
    return f"per user (mean {a.mean():.4g}, max {a.max():.4g})"


_SIM_BLOCKS = 1 << 22  # (block, user) presence draws made at once by simulate_received


def simulate_received(
    graph: DemandGraph,
    assignments: np.ndarray,
    multiplicities: np.ndarray,
    C: int,
    absence,
    rng: np.random.Generator,
) -> np.ndarray:
    """Run a schedule under the absence model once: (E,) int64 informative samples each edge receives.

    Every assignment is run as often as its multiplicity; in each block every user is present independently
    with probability ``1 - A_i``, the present users of an arm form its group, the group releases when at least
    C+1 of them are present, and each present user of a released group gets one sample of its arm. Memory is
    bounded by :data:`_SIM_BLOCKS` draws at a time."""
    N, K = graph.shape
    a = np.broadcast_to(np.asarray(absence, dtype=np.float64), (N,))
    keys = graph.edge_users.astype(np.int64) * K + graph.edge_arms
    got = np.zeros(graph.nnz, dtype=np.int64)
    rows = np.repeat(np.arange(len(multiplicities)), np.asarray(multiplicities, dtype=np.int64))
    step = max(1, _SIM_BLOCKS // max(N, 1))
    for lo in range(0, len(rows), step):
        block = np.asarray(assignments)[rows[lo : lo + step]].astype(np.int64)
        here = rng.random(block.shape) >= a[None, :]
        at = np.arange(len(block), dtype=np.int64)[:, None] * K + block
        present = np.bincount(at[here], minlength=len(block) * K)
        r, i = np.nonzero(here & (present[at] > C))
        want = i * K + block[r, i]
        e = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        on = keys[e] == want
        got += np.bincount(e[on], minlength=graph.nnz)
    return got
