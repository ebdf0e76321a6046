"""Algorithm 1 of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022),
Section 3.3 and Theorem 1: low-regret anonymous bandits with a pluggable anonymous decomposition.

Every user runs its own BaSE (:class:`~anonbandits.core.learners.BaSEElimination`, all in lock-step on one static
grid) with horizon ``T' = floor(T / (alpha (2C+2)))`` and ``B = max(2, ceil(log log T'))`` batches. Each
exploration batch's graph (D_b, A_{.,b}) is checked to be U-batched, decomposed once by ``anondecomp``, and its
assignments run through the channel's 2C+2-round sub-algorithm; the estimates go to the users' BaSE.

* **[DECISION]** the last batch needs no feedback: every user plays its committed arm to the horizon; a graph
  that is not U-batched raises :class:`NotUBatchedError` unless ``best_effort``; the run stops exactly at T.
* alpha (sets T'): by default the method's guarantee, ``greedy`` K (Sec. 3.4.1), every other method
  ``max(1, ceil(K(C+1)/U))`` (Corollaries 1 and 2; ``randomized`` gets the same **[DECISION]**);
  ``"measured"``: :func:`measured_ratio`; a number sets it by hand.
* BaSE's variance proxy is ``(4C+1)/4`` (an estimate is a difference of sums of at most 2C+1 and 2C rewards in
  [0, 1]). **[DECISION]** With a privacy ``mechanism``, the noise variance W_ij of a pair's sum (public) adds
  ``max W_ij / n_ij`` over the active pairs: a variance-matched radius (Laplace-type noise is sub-exponential,
  but a pair's noise is a sum of many releases, small next to its samples except at the smallest epsilons).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import anondecomp
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.anonymous.batches import noisy_variance
from anonbandits.channels import AnonymousChannel, elicitation_rounds, elicitation_variance
from anonbandits.channels.mechanisms import Mechanism
from anonbandits.core import default_batches, static_grid
from anonbandits.core.learners import BaSEElimination
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonBanditsError, ConfigError, require


@dataclass(frozen=True)
class BatchRecord:
    """One exploration batch of Algorithm 1 (or the exploration phase of Algorithm 2).

    Parameters
    ----------
    demand : int
        D_b, the samples each user wants from each of its active arms (Algorithm 2: its number of phases).
    assignments : int
        R_b, the number of assignments run (the sum of the multiplicities).
    distinct : int
        How many of them differ.
    method : str
        The decomposition method that ran (``"etc"`` for Algorithm 2).
    uncovered : int
        The (user, arm) pairs left uncovered (best effort only).
    rounds : int
        The rounds played in the batch.
    eliminated : int
        The arms eliminated after the batch, over all users.
    active_pairs : int
        The (user, arm) pairs active when the batch was decomposed.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Sections 3.3 and 3.5).

    Examples
    --------
    >>> record = BatchRecord(demand=62, assignments=62, distinct=2, method="polytope", uncovered=0, rounds=248,
    ...                      eliminated=0, active_pairs=16)
    >>> record.rounds // record.assignments  # 2C + 2 rounds per assignment, C = 1
    4
    """

    demand: int
    assignments: int
    distinct: int
    method: str
    uncovered: int
    rounds: int
    eliminated: int
    active_pairs: int


@filled_dataclass(frozen=True, eq=False)
class AnonymousRun:
    """What a run of Algorithm 1 or 2 reports.

    Parameters
    ----------
    regret : float
        The final pseudo-regret, summed over users and rounds (elicitation included).
    curve : tuple of numpy.ndarray
        ``(rounds, cumulative regret)`` at about 200 evenly spaced rounds.
    observations : int
        The aggregate observations the auditor served.
    min_group_size : int or None
        The smallest group the auditor served (``None`` if none).
    horizon : int
        The rounds played.
    exploration_rounds : int
        The rounds spent eliciting feedback.
    committed : numpy.ndarray or None
        (N,) each user's committed arm (``None`` if the horizon came first).
    optimal_fraction : float
        The share of all users whose committed arm is optimal (of largest mean, ties included); if the horizon
        came first, of those whose recommendation (the arm they would commit to) is. Never NaN.
    batches : tuple of BatchRecord, optional
        The per-batch records. Default ``()``.
    info : dict, optional
        The run constants (Algorithm 1: ``alpha``, ``base_horizon``, ``grid``, ``batches``; Algorithm 2:
        ``exploration_target``, ``phases``); ``info["exposure"]`` is the channel's privacy exposure (empty
        without a mechanism). Default ``{}``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Theorems 1 and 2).

    {{anon_example}}
    >>> run = anon_batched(instance, 1, 2000, U=4, rng=np.random.default_rng(1))
    >>> run.horizon, run.exploration_rounds, run.min_group_size, run.optimal_fraction
    (2000, 248, 1, 1.0)
    >>> int(run.curve[0][-1]), run.info["grid"]
    (2000, [0, 62, 500])
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

    @classmethod
    def finish(cls, channel: AnonymousChannel, instance: MultiUserInstance, commit: Callable[[], np.ndarray],
               batches: Sequence[BatchRecord], info: dict) -> AnonymousRun:
        """Commit every user to ``commit()`` unless the horizon is reached, play to it, and report the run.

        Parameters
        ----------
        channel : anonbandits.channels.AnonymousChannel
            The run's channel, after its exploration.
        instance : anonbandits.envs.instances.MultiUserInstance
            The run's instance (its optimal arms give ``optimal_fraction``).
        commit : callable
            ``commit() -> numpy.ndarray``: each user's (N,) committed arm, played if the horizon is not reached
            (and otherwise the recommendation that ``optimal_fraction`` scores).
        batches : sequence of BatchRecord
            The per-batch records of the exploration.
        info : dict
            The run constants; the channel's ``exposure`` is added under ``"exposure"``.

        Returns
        -------
        AnonymousRun
            The report of the run, its regret curve at about 200 points.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.channels import AnonymousChannel
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> instance = MultiUserInstance(np.array([[0.9, 0.1]] * 4))
        >>> channel = AnonymousChannel(instance, 2, 100, np.random.default_rng(0))
        >>> _ = channel.elicit(np.ones(4, dtype=int), np.array([1]))
        >>> run = AnonymousRun.finish(channel, instance, lambda: np.zeros(4, dtype=int), [], {})
        >>> run.horizon, run.exploration_rounds, round(run.regret, 6), run.optimal_fraction, run.info
        (100, 6, 19.2, 1.0, {'exposure': {}})
        """
        exploration = channel.t
        # scored even when the horizon came first, so the share is over all users and never NaN
        recommended = np.asarray(commit())
        committed = None if channel.done else recommended
        if committed is not None:
            channel.play(committed)
        best = instance.gaps[np.arange(instance.n_users), recommended] == 0  # a tie for the best counts
        return cls(regret=channel.regret, curve=channel.regret_curve(200), observations=channel.observations,
                   min_group_size=channel.min_group_size, horizon=channel.t, exploration_rounds=exploration,
                   committed=committed, optimal_fraction=float(best.mean()),
                   batches=tuple(batches), info={**info, "exposure": channel.exposure})


class NotUBatchedError(AnonBanditsError):
    """A batch's graph is not U-batched: an optimal arm was eliminated and Algorithm 1 aborts.

    Parameters
    ----------
    message : str
        The error message.
    arms : iterable of int, optional
        The arms that cannot receive U users (stored as a tuple in ``arms``). Default ``()``.
    batch : int, optional
        The batch (1-based) whose graph is not U-batched. Default 0.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.3).

    Examples
    --------
    >>> error = NotUBatchedError("batch 2: the graph is not 4-batched", arms=[1], batch=2)
    >>> error.arms, error.batch
    ((1,), 2)
    """

    def __init__(self, message: str, arms=(), batch: int = 0) -> None:
        super().__init__(message)
        self.arms, self.batch = tuple(int(a) for a in arms), batch


def parse_alpha(value: str | float) -> float | str:
    """``measured`` or a number >= 0 (0 = the decomposer's guarantee); :class:`ConfigError` otherwise."""
    if isinstance(value, str) and value.strip().lower() == "measured":
        return "measured"
    try:
        alpha = float(value)
    except (TypeError, ValueError):
        alpha = math.nan
    require(0 <= alpha < math.inf, "alpha", "a number >= 0 (0 = the decomposer's guarantee) or 'measured'", value)
    return alpha


@fill
def guaranteed_ratio(method: str, n_arms: int, C: int, U: int) -> int:
    """The approximation ratio alpha(C, U) Algorithm 1 assumes for the decomposition ``method``.

    ``greedy`` is a K-approximation (Section 3.4.1); every other method gets ``max(1, ceil(K (C+1) / U))``
    (Corollaries 1 and 2).

    Parameters
    ----------
    method : str
        An ``anondecomp.METHODS`` name.
    n_arms : int
        K, the number of arms.
    C : int
        The anonymity parameter.
    U : int
        The cluster lower bound (every arm optimal for at least U users).

    Returns
    -------
    int
        alpha(C, U).

    {{raises_validation}}

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.4).

    Examples
    --------
    >>> guaranteed_ratio("greedy", 4, 1, 4), guaranteed_ratio("polytope", 4, 1, 4)
    (4, 2)
    """
    return n_arms if method == "greedy" else max(1, math.ceil(n_arms * (C + 1) / U))


def measured_ratio(method: str, n_users: int, n_arms: int, C: int, demand: int, *,
                   rng: np.random.Generator | None = None) -> float:
    """R / D of ``method`` on the all-active batched graph of ``n_users`` x ``n_arms`` at demand ``demand``
    (known before any reward is seen: ``alpha="measured"`` budgets T' with it, at the first batch's D_1).

    >>> measured_ratio("greedy", 40, 4, 3, 100), measured_ratio("polytope", 40, 4, 3, 100)
    (4.0, 1.0)
    """
    graph = anondecomp.DemandGraph.from_batched(demand, np.ones((n_users, n_arms), bool))
    return anondecomp.decompose(graph, C, method=method, rng=rng).total_assignments / demand


@fill
def anon_batched(instance: MultiUserInstance, C: int, horizon: int, *, U: int, decomposer: str = "auto",
                 grid: str = "minimax", batches: int = 0, gamma: float = 4.0, threshold: str = "log",
                 alpha: float | str = 0.0, best_effort: bool = False, rng: np.random.Generator,
                 decomposer_rng: np.random.Generator | None = None, mechanism: Mechanism | None = None,
                 noise_rng: np.random.Generator | None = None) -> AnonymousRun:
    """Run Algorithm 1 (``anon-batched``) on ``instance`` for ``horizon`` rounds.

    Every user runs BaSE with horizon ``T' = floor(T / (alpha (2C+2)))``; each exploration batch's demand graph is
    decomposed by ``anondecomp`` into C-anonymous assignments, whose feedback the 2C+2-round sub-algorithm
    elicits; in the last batch every user plays its committed arm to the horizon.

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The N x K means and reward model.
    C : int
        The anonymity parameter, at least 1.
    horizon : int
        The horizon T.
    U : int
        The cluster lower bound given to the algorithm (every arm optimal for at least U users), at least C + 1.
    decomposer : str, optional
        An ``anondecomp.METHODS`` name. Default ``"auto"``.
    grid : str, optional
        BaSE's static grid (:data:`~anonbandits.core.GRIDS`). Default ``"minimax"``.
    batches : int, optional
        The number of batches; 0 (the default) gives ``max(2, ceil(log log T'))``.
    gamma : float, optional
        BaSE's elimination constant. Default 4.0.
    threshold : str, optional
        BaSE's radius form, ``"log"`` (the default) or ``"gao"``.
    alpha : float or str, optional
        The approximation ratio that sets T': 0 (the default) takes :func:`guaranteed_ratio`, ``"measured"`` the
        decomposer's ratio on the first batch's all-active graph, a positive number sets it by hand.
    best_effort : bool, optional
        Run an instance that breaks the user-cluster assumption (an arm optimal for fewer than U users) and
        continue when a batch's graph is not U-batched or a pair stays uncovered: the decomposer serves every
        pair it can (``anondecomp.decompose(best_effort=True)``), and ``info["thin_arm_users"]`` counts the
        users whose optimal arm is optimal for fewer than U users (no guarantee for them). Default False.
    rng : numpy.random.Generator
        The source of the rewards.
    decomposer_rng : numpy.random.Generator or None, optional
        The randomness of randomized decomposers (default ``rng``).
    {{mechanism}}

    Returns
    -------
    AnonymousRun
        The run's regret, curve, audit figures, commitments and batch records.

    Raises
    ------
    ConfigError
        If an argument is out of range (e.g. ``U < C + 1``, an instance with an arm optimal for fewer than U users
        without ``best_effort``, an unknown decomposer, or a horizon leaving BaSE no round).
    NotUBatchedError
        If a batch's graph is not U-batched and ``best_effort`` is False.
    AnonBanditsError
        If the decomposer leaves a (user, arm) pair below its demand and ``best_effort`` is False.

    {{refs_paper000}}
    Section 3.3, Algorithm 1, Theorem 1.

    {{anon_example}}
    >>> run = anon_batched(instance, 1, 2000, U=4, rng=np.random.default_rng(1))
    >>> run.horizon, run.min_group_size, len(run.batches), run.optimal_fraction
    (2000, 1, 1, 1.0)
    """
    n_users, n_arms = instance.n_users, instance.n_arms
    require(C >= 1, "C", "at least 1", C)
    require(U >= C + 1, "cluster U", f"at least C + 1 = {C + 1} for Algorithm 1", U)
    thin = np.flatnonzero(instance.cluster_sizes < U)
    if thin.size and not best_effort:
        arm = int(thin[np.argmin(instance.cluster_sizes[thin])])
        raise ConfigError(f"the instance has an arm that is optimal for only {instance.min_cluster} users, fewer "
                          f"than U = {U} (Algorithm 1's user-cluster assumption): arm {arm}"
                          + (f" and {thin.size - 1} other arm(s)" if thin.size > 1 else "")
                          + "; lower the cluster U or set best_effort to serve their users as the "
                          "decomposition allows")
    require(decomposer in anondecomp.METHODS, "decomposer", f"one of {', '.join(anondecomp.METHODS)}", decomposer)
    channel = AnonymousChannel(instance, C, horizon, rng, mechanism=mechanism, noise_rng=noise_rng)
    r = elicitation_rounds(C)
    noise = np.zeros((n_users, n_arms))
    dec_rng = decomposer_rng if decomposer_rng is not None else rng
    alpha = parse_alpha(alpha)
    if alpha == "measured":
        first = static_grid(grid, max(1, horizon // r), batches or default_batches(max(1, horizon // r)))[1]
        alpha = measured_ratio(decomposer, n_users, n_arms, C, max(1, int(first)), rng=dec_rng)
    alpha = alpha or guaranteed_ratio(decomposer, n_arms, C, U)
    base_horizon = int(horizon // (alpha * r))
    if base_horizon < 1:
        raise ConfigError(f"horizon {horizon} is too short: T / (alpha (2C+2)) = {horizon / (alpha * r):.3g} "
                          "leaves BaSE no round")
    n_batches = batches or default_batches(base_horizon)
    base_sigma2 = elicitation_variance(C)  # privacy noise adds to it
    learner = BaSEElimination(n_users, n_arms, static_grid(grid, base_horizon, n_batches), gamma=gamma,
                              threshold=threshold, sigma2=base_sigma2)
    sigma2, base = base_sigma2, learner.base
    records: list[BatchRecord] = []
    while learner.exploring.any() and not channel.done:
        demand = base.batch_length()
        if demand == 0:
            learner.update(np.zeros((n_users, n_arms)), np.zeros((n_users, n_arms), np.int64), sigma2)
            continue
        active = learner.active.copy()
        short = anondecomp.check_u_batched(active, U)
        if short.size and not best_effort:
            raise NotUBatchedError(f"batch {base.batch + 1}: the graph is not {U}-batched, arm(s) "
                                   f"{', '.join(map(str, short))} cannot get {U} users (an optimal arm was "
                                   "eliminated); rerun with best_effort to continue", arms=short,
                                   batch=base.batch + 1)
        graph = anondecomp.DemandGraph.from_batched(float(demand), active)
        res = anondecomp.decompose(graph, C, method=decomposer, rng=dec_rng, best_effort=best_effort)
        t0 = channel.t
        fb = channel.elicit(res.assignments, res.multiplicities)
        complete = channel.t - t0 == res.total_assignments * r
        if complete and not best_effort and np.any(fb.counts[active] < graph.required[active]):
            raise AnonBanditsError(f"decomposer {res.method!r} left (user, arm) pairs below their demand in "
                                   f"batch {base.batch + 1}")
        if fb.noise is not None and complete:
            noise += fb.noise
            sigma2 = noisy_variance(base_sigma2, noise, base.counts + fb.counts, active)
        eliminated = learner.update(fb.sums, fb.counts, sigma2) if complete else np.zeros(0, bool)
        records.append(BatchRecord(demand=demand, assignments=res.total_assignments, distinct=res.n_distinct,
                                   method=res.method, uncovered=len(res.uncovered), rounds=channel.t - t0,
                                   eliminated=int(eliminated.sum()), active_pairs=int(active.sum())))
    return AnonymousRun.finish(channel, instance, learner.recommendation, records,
                               {"alpha": alpha, "base_horizon": base_horizon, "grid": base.grid.tolist(),
                                "batches": n_batches,
                                "thin_arm_users": int(np.isin(instance.optimal, thin).sum())})
