"""Algorithm 1 of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022),
Section 3.3 and Theorem 1: low-regret anonymous bandits with a pluggable anonymous decomposition.

Every user runs its own BaSE (:class:`~anonbandits.core.learners.BaSEElimination`, all in lock-step on one static
grid) with horizon ``T' = floor(T / (alpha (2C+2)))`` and ``B = max(2, ceil(log log T'))`` batches. The batches
run on :func:`~anonbandits.anonymous.batched_regret`, the one driver of every batched learner: each exploration
batch's graph (D_b, A_{.,b}) is checked to be U-batched (the driver's ``batch_graph`` hook), decomposed once by
``anondecomp``, and its assignments run through the channel's 2C+2-round sub-algorithm; every estimate goes to
the users' BaSE, those of over-covered pairs too (the driver's ``use_surplus``: Algorithm 1 as the paper states
it, where the other learners keep exactly their demand).

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
from dataclasses import replace

import numpy as np

import anondecomp
from anonbandits._docstrings import fill
from anonbandits.anonymous._legacy import old_names
from anonbandits.anonymous.batches import DECOMPOSER, MECHANISM, OPTIONAL_RNG
from anonbandits.anonymous.regret import batched_regret
from anonbandits.channels import check_decomposer, elicitation_rounds, elicitation_variance
from anonbandits.core import GRIDS, THRESHOLDS, default_batches, static_grid
from anonbandits.core.learners import BaSEElimination
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import AnonBanditsError, ConfigError, require
from anonbandits.privacy.mechanisms import Mechanism
from anonbandits.results import Result
from anonbandits.validation import (
    BOOL,
    COUNT,
    INSTANCE,
    NONNEGATIVE_COUNT,
    OPEN_UNIT,
    POSITIVE_FINITE,
    RULES,
    Rule,
    optional,
    validated,
)

__getattr__ = old_names(__name__, ("AnonymousRun",))


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
def _guaranteed_ratio(method: str, n_arms: int, C: int, U: int) -> int:
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
    check_decomposer(method)
    return n_arms if method == "greedy" else max(1, math.ceil(n_arms * (C + 1) / U))


# the library function, checking its arguments by the registry's rules (anonbandits.validation.validated)
guaranteed_ratio = validated(_guaranteed_ratio, method=DECOMPOSER, n_arms="arms", U=COUNT)


def measured_ratio(
    method: str, n_users: int, n_arms: int, C: int, demand: int, *, rng: np.random.Generator | None = None
) -> float:
    """R / D of ``method`` on the all-active batched graph of ``n_users`` x ``n_arms`` at demand ``demand``
    (known before any reward is seen: ``alpha="measured"`` budgets T' with it, at the first batch's D_1).

    >>> measured_ratio("greedy", 40, 4, 3, 100), measured_ratio("polytope", 40, 4, 3, 100)
    (4.0, 1.0)
    """
    graph = anondecomp.DemandGraph.from_batched(demand, np.ones((n_users, n_arms), bool))
    res = anondecomp.decompose(graph, C, method=method, rng=rng, improve=False, reseat=False)
    return res.total_assignments / demand


@fill
def _anon_batched(
    instance: MultiUserInstance,
    C: int,
    horizon: int,
    *,
    U: int,
    decomposer: str = "auto",
    grid: str = "minimax",
    batches: int = 0,
    gamma: float = 4.0,
    threshold: str = "log",
    alpha: float | str = 0.0,
    best_effort: bool = False,
    rng: np.random.Generator,
    decomposer_rng: np.random.Generator | None = None,
    mechanism: Mechanism | None = None,
    noise_rng: np.random.Generator | None = None,
    absence: float = 0.0,
    confidence: float | None = None,
    max_exposure: int | None = None,
) -> Result:
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
    {{driver_absence}}
        T' is not changed by it: the re-planned blocks take rounds of the horizon.

    Returns
    -------
    Result
        The run's regret, curve, audit figures and batch records (:func:`~anonbandits.anonymous.regret.finish_run`);
        ``info`` holds the commitments and ``alpha``, ``base_horizon``, ``grid``, ``batches`` and
        ``thin_arm_users``.

    Raises
    ------
    ConfigError
        If an argument is of the wrong type (an ``instance`` that is not a ``MultiUserInstance``, a generator
        that is not one, a bool where a number is meant) or out of range (e.g. ``U < C + 1``, an instance with an
        arm optimal for fewer than U users without ``best_effort``, an unknown decomposer or grid, a horizon
        above ``MAX_HORIZON`` (10^9) or leaving BaSE no round, an ``absence`` outside [0, 1), a ``confidence``
        outside (0, 1) or given without an absence).
    NotUBatchedError
        If a batch's graph is not U-batched and ``best_effort`` is False.
    AnonBanditsError
        If the decomposer leaves a (user, arm) pair below its demand and ``best_effort`` is False.

    {{refs_paper000}}
    Section 3.3, Algorithm 1, Theorem 1.

    {{anon_example}}
    >>> run = anon_batched(instance, 1, 2000, U=4, rng=np.random.default_rng(1))
    >>> run.info["horizon"], run.metrics["min_group_size"], len(run.records), run.metrics["optimal_fraction"]
    (2000, 1, 1, 1.0)
    """
    n_users, n_arms = instance.n_users, instance.n_arms
    require(C >= 1, "C", "at least 1", C)
    require(U >= C + 1, "cluster U", f"at least C + 1 = {C + 1} for Algorithm 1", U)
    thin = np.flatnonzero(instance.cluster_sizes < U)
    if thin.size and not best_effort:
        arm = int(thin[np.argmin(instance.cluster_sizes[thin])])
        raise ConfigError(
            f"the instance has an arm that is optimal for only {instance.min_cluster} users, fewer "
            f"than U = {U} (Algorithm 1's user-cluster assumption): arm {arm}"
            + (f" and {thin.size - 1} other arm(s)" if thin.size > 1 else "")
            + "; lower the cluster U or set best_effort to serve their users as the "
            "decomposition allows"
        )
    check_decomposer(decomposer)
    r = elicitation_rounds(C)
    dec_rng = decomposer_rng if decomposer_rng is not None else rng
    given = parse_alpha(alpha)
    if given == "measured":
        first = static_grid(grid, max(1, horizon // r), batches or default_batches(max(1, horizon // r)))[1]
        ratio: float = measured_ratio(decomposer, n_users, n_arms, C, max(1, int(first)), rng=dec_rng)
    else:
        ratio = float(given)
    ratio = ratio or _guaranteed_ratio(decomposer, n_arms, C, U)
    base_horizon = int(horizon // (ratio * r))
    if base_horizon < 1:
        raise ConfigError(
            f"horizon {horizon} is too short: T / (alpha (2C+2)) = {horizon / (ratio * r):.3g} leaves BaSE no round"
        )
    n_batches = batches or default_batches(base_horizon)
    learner = BaSEElimination(
        n_users,
        n_arms,
        static_grid(grid, base_horizon, n_batches),
        gamma=gamma,
        threshold=threshold,
        sigma2=elicitation_variance(C),
    )

    def batched_graph(demand: np.ndarray, batch: int) -> anondecomp.DemandGraph:
        """The batch's graph (D_b, A_{.,b}), after checking it is U-batched."""
        short = anondecomp.check_u_batched(learner.active, U)
        if short.size and not best_effort:
            raise NotUBatchedError(
                f"batch {batch}: the graph is not {U}-batched, arm(s) "
                f"{', '.join(map(str, short))} cannot get {U} users (an optimal arm was "
                "eliminated); rerun with best_effort to continue",
                arms=short,
                batch=batch,
            )
        return anondecomp.DemandGraph.from_batched(float(learner.base.batch_length()), learner.active)

    # BaSE uses every estimate, those of over-covered pairs too (paper 000's Algorithm 1)
    run = batched_regret(
        instance,
        learner,
        horizon,
        C=C,
        decomposer=decomposer,
        rng=rng,
        decomposer_rng=dec_rng,
        mechanism=mechanism,
        noise_rng=noise_rng,
        batch_graph=batched_graph,
        use_surplus=True,
        best_effort=best_effort,
        absence=absence,
        confidence=confidence,
        max_exposure=max_exposure,
    )
    kept = {key: run.info[key] for key in ("horizon", "committed", "channel", "exposure")}
    return replace(
        run,
        info={
            "alpha": ratio,
            "base_horizon": base_horizon,
            "grid": learner.base.grid.tolist(),
            "batches": n_batches,
            "thin_arm_users": int(np.isin(instance.optimal, thin).sum()),
            **kept,
        },
    )


# the library function, checking its arguments by the registry's rules (anonbandits.validation.validated) and,
# for those that are no parameter of the vocabulary, by the drivers' (anonbandits.anonymous.batches)
anon_batched = validated(
    _anon_batched,
    instance=INSTANCE,
    U=COUNT,
    decomposer=DECOMPOSER,
    grid=Rule(lambda v: isinstance(v, str) and v in GRIDS, f"one of {', '.join(GRIDS)}"),
    batches=NONNEGATIVE_COUNT,
    gamma=POSITIVE_FINITE,
    threshold=Rule(lambda v: isinstance(v, str) and v in THRESHOLDS, f"one of {', '.join(THRESHOLDS)}"),
    best_effort=BOOL,
    decomposer_rng=OPTIONAL_RNG,
    mechanism=MECHANISM,
    noise_rng=OPTIONAL_RNG,
    confidence=optional(OPEN_UNIT),
    max_exposure=optional(RULES["max_exposure"]),
)
