"""The anonymous family's registry entries: the :class:`~anonbandits.spec.AlgorithmSpec` table ``ALGORITHMS`` and
the run adapters behind it (``run(params, seed) -> Result``). (This module was ``anonbandits.anonymous.specs``;
that path still works for one release, with a ``DeprecationWarning``.)

Registry entries ``anon-batched`` (Algorithm 1), ``anon-etc`` (Algorithm 2) and ``anon-bai`` of paper 000
(Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS 2022), and the N-user runs of
``se`` and ``dp-se`` over a channel that needs a decomposition (``--channel anonymous``).

Both draw a clustered instance (:func:`anonbandits.envs.clustered_instance`) from the run's seed, so for a seed
every algorithm faces the same instance (``instance_seed >= 0`` fixes one for all seeds).
``np.random.default_rng(seed).spawn(4)`` gives the streams of the instance, the rewards, the decomposer and
the privacy noise (so ``--privacy none`` draws exactly what it drew before privacy existed).

``--privacy central|distributed --epsilon E`` puts a mechanism of :mod:`anonbandits.privacy.mechanisms` on
every released group sum: central ``Lap(1/E)``, or paper 004's SecAgg protocol, each member adding a noise
share (``--shares``: Polya, the default, is pure E-DP per reward like the central model; Skellam and discrete
Gaussian shares keep paper 004's calibration and report their (eps, delta)).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

import anondecomp
from anonbandits.anonymous.algorithm1 import anon_batched, parse_alpha
from anonbandits.anonymous.algorithm2 import anon_etc
from anonbandits.anonymous.bai import error_rate, identify
from anonbandits.anonymous.regret import batched_regret
from anonbandits.channel_params import DECOMPOSER, DIRECT_ONLY, INSTANCE_PARAMS, PRIVACY_PARAMS, SHARES
from anonbandits.channels import CHANNELS, CentralLaplace, Distributed, channel_named
from anonbandits.channels.feedback import MAX_HORIZON
from anonbandits.core import GRIDS, THRESHOLDS
from anonbandits.core.learners import BAI_SCHEMES, BestArmElimination, EpochElimination, UGapEc
from anonbandits.core.schedules import parse_confidence
from anonbandits.envs.instances import INSTANCE_REWARDS, MultiUserInstance, clustered_instance
from anonbandits.envs.means_file import read_means
from anonbandits.errors import ConfigError, require
from anonbandits.privacy.mechanisms import Mechanism, epsilon_by_user, guarantee
from anonbandits.privacy.protocols import PROTOCOLS
from anonbandits.results import Result
from anonbandits.spec import AlgorithmSpec, Param, parse_bool
from anonbandits.validation import Rule, is_integer


def _mechanism(params: Mapping[str, Any]) -> Mechanism | None:
    eps, privacy = params["epsilon"], params["privacy"]
    if (privacy == "none") != (eps == math.inf):
        raise ConfigError(
            f"epsilon = {eps} needs privacy central or distributed (privacy is none)"
            if privacy == "none"
            else f"privacy {privacy} needs an epsilon"
        )
    if privacy == "none":
        return None
    if privacy == "central":
        return CentralLaplace(eps)
    if params["reward"] != "bernoulli":
        raise ConfigError(f"privacy distributed needs bernoulli rewards (exact encoding), got {params['reward']}")
    horizon = params["horizon"] if "horizon" in params else params["max_rounds"]  # anon-bai: its cap on the rounds
    return Distributed(PROTOCOLS[SHARES[params["shares"]]](eps, 1.0 / horizon))


#: the instance and privacy parameters of anon-bai (no horizon: it stops when every user has; no dp_delta: its
#: delta is the failure probability, and the privacy delta is reported at dp_delta's default)
BAI_INSTANCE = (
    "users",
    "arms",
    "C",
    "cluster",
    "gap",
    "reward",
    "instance_seed",
    "means",
    "privacy",
    "epsilon",
    "shares",
    "absence",
    "max_exposure",
)

#: ``--decomposer`` of the family: :data:`~anonbandits.channel_params.DECOMPOSER`, its values listed by ``--help``
#: and named by the error of a wrong one (this family loads the solver layer anyway)
LISTED_DECOMPOSER = dataclasses.replace(DECOMPOSER, choices=tuple(anondecomp.METHODS))

BATCHED_PARAMS = (
    LISTED_DECOMPOSER,
    Param("grid", str, "minimax", "static BaSE grid", choices=GRIDS),
    Param("batches", int, 0, "BaSE batches B (0 = max(2, ceil(log log T')))", unit="batches"),
    Param("gamma", float, 4.0, "BaSE elimination constant"),
    Param(
        "threshold",
        str,
        "log",
        "BaSE radius: log = sqrt(gamma s2 log(T'K)/tau), gao = sqrt(gamma s2 K log(T'K/t_m)/t_m)",
        choices=THRESHOLDS,
    ),
    Param(
        "alpha",
        parse_alpha,
        0.0,
        "decomposer ratio setting T' = T/(alpha(2C+2)): 0 = the method's "
        "guarantee (paper), 'measured' = its R/D on the all-active graph, or a number",
    ),
    Param(
        "best_effort",
        parse_bool,
        False,
        "run an instance with an arm optimal for fewer than U users, and "
        "continue when a batch graph is not U-batched (thin_arm_users counts the users without a guarantee)",
    ),
)

ETC_PARAMS = (
    Param("arm_offset", parse_bool, True, "group s plays arm (r+s) mod K (true) or r mod K (false)"),
    Param("explore_scale", float, 10.0, "constant of T_exp = scale C^(2/3) K^(1/3) T^(2/3) log(NKT)^(1/3)"),
)


def _instance(params: Mapping[str, Any], seed: int) -> tuple[Any, ...]:
    """The run's instance and its reward, decomposer and noise streams."""
    inst_rng, reward_rng, dec_rng, noise_rng = np.random.default_rng(seed).spawn(4)
    inst_rng = np.random.default_rng(params["instance_seed"]) if params["instance_seed"] >= 0 else inst_rng
    if params["means"]:
        instance = MultiUserInstance(mu=read_means(params["means"])[0], model=params["reward"])
    else:
        instance = clustered_instance(
            params["users"], params["arms"], params["cluster"], params["gap"], inst_rng, model=params["reward"]
        )
    return instance, reward_rng, dec_rng, noise_rng


def _run(params: Mapping[str, Any], seed: int) -> tuple[Any, ...]:
    """The run's instance, reward and decomposer streams and privacy mechanism with its noise stream."""
    mechanism = _mechanism(params)
    instance, reward_rng, dec_rng, noise_rng = _instance(params, seed)
    return instance, reward_rng, dec_rng, mechanism, noise_rng


def _output(
    run: Result,
    label: str,
    extra: Mapping[str, Any],
    params: Mapping[str, Any],
    mechanism: Mechanism | None,
    info: Mapping[str, Any] | None = None,
) -> Result:
    """The registry's result of a regret run: the library run's metrics, with ``extra`` first and the privacy
    metrics of ``mechanism``, labelled."""
    m = run.metrics
    optimal = m["optimal_fraction"]
    metrics = {
        **extra,
        "regret": m["regret"],
        "observations": m["observations"],
        "min_group_size": m["min_group_size"],
        **_privacy(mechanism, run.info["exposure"], params["dp_delta"]),
        "exploration_rounds": m["exploration_rounds"],
        "assignments": m["assignments"],
        "optimal_fraction": None if optimal is None or math.isnan(optimal) else optimal,
    }
    info = {**(info or {}), **_user_epsilons(mechanism, run.info["exposure"], params["dp_delta"])}
    return Result(metrics=metrics, curve=run.curve, label=label, info=info, records=run.records)


def run_batched(params: Mapping[str, Any], seed: int) -> Result:
    """``anon-batched``: Algorithm 1 of paper 000 on a clustered instance."""
    instance, reward_rng, dec_rng, mechanism, noise_rng = _run(params, seed)
    pairs, U = instance.n_users * instance.n_arms, params["cluster"] or instance.n_users // instance.n_arms
    algorithm = {p.name: params[p.name] for p in BATCHED_PARAMS}
    run = anon_batched(
        instance,
        params["C"],
        params["horizon"],
        U=U,
        **algorithm,
        rng=reward_rng,
        decomposer_rng=dec_rng,
        mechanism=mechanism,
        noise_rng=noise_rng,
        absence=params["absence"],
        max_exposure=_cap(params["max_exposure"]),
    )
    per_batch = {}
    for b, rec in enumerate(run.records, start=1):
        per_batch[f"R_over_D_b{b}"] = rec["assignments"] / rec["demand"]
        per_batch[f"eliminated_before_b{b}"] = (pairs - rec["active_pairs"]) / pairs
    return _output(
        run,
        f"anon-batched/{params['decomposer']}",
        {
            "alpha_used": run.info["alpha"],
            "distinct_assignments": sum(b["distinct"] for b in run.records),
            "exploration_batches": len(run.records),
            "thin_arm_users": run.info["thin_arm_users"],
            **per_batch,
        },
        params,
        mechanism,
        {"methods_used": "+".join(dict.fromkeys(b["method"] for b in run.records))},
    )


BAI_PARAMS = (
    Param(
        "subroutine",
        str,
        "se",
        "per-user best-arm identification scheme (paper 002's subroutines)",
        choices=BAI_SCHEMES,
    ),
    Param("approx", float, 0.1, "epsilon of each user's (epsilon, delta)-PAC guarantee", unit="reward"),
    Param("delta", float, 0.05, "failure probability per user"),
    Param(
        "channel",
        str,
        "anonymous",
        "how rewards are observed: anonymous (groups of at least C) or direct",
        choices=tuple(CHANNELS),
    ),
    LISTED_DECOMPOSER,
    Param(
        "max_rounds",
        int,
        10**9,
        "cap on the rounds (users still exploring keep their recommendation)",
        unit="rounds",
        rule=Rule(lambda v: is_integer(v) and 1 <= v <= MAX_HORIZON, f"between 1 and {MAX_HORIZON:.0e} rounds"),
    ),
)


def _user_epsilons(mechanism: Mechanism | None, exposure: Mapping, dp_delta: float) -> dict[str, Any]:
    """``{"epsilon_by_user": (N,) array}``: each user's epsilon from her own releases
    (:func:`~anonbandits.privacy.mechanisms.epsilon_by_user`); empty without a mechanism."""
    return {"epsilon_by_user": epsilon_by_user(mechanism, exposure, dp_delta)} if mechanism else {}


def _cap(max_exposure: int) -> int | None:
    """The library's ``max_exposure`` of the parameter's value (-1: no cap)."""
    return None if max_exposure == -1 else max_exposure


def _privacy(mechanism: Mechanism | None, exposure: Mapping, dp_delta: float) -> dict[str, Any]:
    """The privacy metrics of a run; empty (the schema's "not applicable") without a mechanism."""
    privacy = guarantee(mechanism, exposure, dp_delta) if mechanism else (None, None, None)
    return dict(zip(("privacy_epsilon", "privacy_epsilon_per_user", "privacy_delta"), privacy, strict=True))


def run_bai(params: Mapping[str, Any], seed: int) -> Result:
    """``anon-bai``: best-arm identification for every user of a clustered instance, in lock-step batches."""
    instance, reward_rng, dec_rng, mechanism, noise_rng = _run(params, seed)
    channel = channel_named(params["channel"])
    n, k, sigma2 = instance.n_users, instance.n_arms, channel.sample_variance(params["C"])
    learners: UGapEc | BestArmElimination
    if params["subroutine"] == "ugapec":  # one pull per user and batch (UGapEc's docstring says why)
        learners = UGapEc(n, k, approx=params["approx"], delta=params["delta"], rng=dec_rng, sigma2=sigma2)
    else:
        learners = BestArmElimination(
            n, k, params["subroutine"], approx=params["approx"], delta=params["delta"], rng=dec_rng, sigma2=sigma2
        )
    run = identify(
        instance,
        learners,
        channel=channel,
        C=params["C"],
        decomposer=params["decomposer"],
        rng=reward_rng,
        decomposer_rng=dec_rng,
        max_rounds=params["max_rounds"],
        mechanism=mechanism,
        noise_rng=noise_rng,
        absence=params["absence"],
        max_exposure=_cap(params["max_exposure"]),
    )
    m = run.metrics
    metrics = {
        **{key: m[key] for key in ("rounds", "samples", "surplus", "batches", "assignments", "min_group_size")},
        "users_approx_optimal": 1.0 - error_rate(run, instance, params["approx"]),
        "users_stopped": m["users_stopped"],
    }
    info = {}
    if mechanism is not None:
        metrics.update(_privacy(mechanism, run.info["exposure"], PRIVACY_PARAMS[-1].default))
        info = _user_epsilons(mechanism, run.info["exposure"], PRIVACY_PARAMS[-1].default)
    label = f"anon-bai/{params['subroutine']}/{params['channel']}"
    if channel.requires_decomposition:  # the decomposer that shaped the rounds
        label += f"/{params['decomposer']}"
    return Result(metrics=metrics, curve=run.curve, label=label, info=info)


def _epoch_instance(params: Mapping[str, Any], seed: int, default_means: str) -> tuple[Any, ...]:
    """``_instance`` for se/dp-se: the default means give a clustered instance, a comma list the same means to
    every user, anything else is a means file."""
    from anonbandits.envs.rewards import parse_means

    means = params["means"]
    is_file = means != default_means and Path(means).suffix.lower() in (".csv", ".parquet", ".pq")
    instance, *streams = _instance({**params, "means": means if is_file else ""}, seed)
    if not is_file and means != default_means:
        mu = np.tile(parse_means(means), (params["users"], 1))
        instance = MultiUserInstance(mu=mu, model=params["reward"])
    return instance, *streams


def run_epochs(name: str, defaults: Mapping[str, Any], params: Mapping[str, Any], seed: int) -> Result:
    """``se`` and ``dp-se --channel anonymous``: N users' SE (DP-SE) with doubling epochs over the channel
    ``--channel`` names, for the horizon (:func:`~anonbandits.anonymous.batched_regret`). ``defaults`` are the
    entry's."""
    changed = [n for n in DIRECT_ONLY if n in params and params[n] != defaults[n]]
    if changed:
        flags = ", ".join(f"--{n.replace('_', '-')}" for n in changed)
        raise ConfigError(f"{name}: {flags} only with --channel direct")
    require(
        params["reward"] in INSTANCE_REWARDS,
        "reward",
        f"one of {', '.join(INSTANCE_REWARDS)} on the anonymous channel",
        params["reward"],
    )
    private = name == "dp-se"
    eps = params["epsilon"] if private else math.inf
    mechanism = _mechanism(
        {**params, "epsilon": eps if params["privacy"] != "none" else math.inf} if private else params
    )
    instance, reward_rng, dec_rng, noise_rng = _epoch_instance(params, seed, defaults["means"])
    channel = channel_named(params["channel"])
    learners = EpochElimination(
        instance.n_users,
        instance.n_arms,
        confidence=parse_confidence(params["confidence"], params["horizon"]),
        epsilon=eps,
        sigma2=channel.sample_variance(params["C"]),
    )
    run = batched_regret(
        instance,
        learners,
        params["horizon"],
        channel=channel,
        C=params["C"],
        decomposer=params["decomposer"],
        rng=reward_rng,
        decomposer_rng=dec_rng,
        mechanism=mechanism,
        noise_rng=noise_rng,
        sum_epsilon=eps,
        absence=params["absence"],
        max_exposure=_cap(params["max_exposure"]),
    )
    extra = {
        "batches": len(run.records),
        "surplus": run.info["surplus"],
        "samples": run.info["samples"],
        "users_stopped": run.info["stopped"],
    }
    label = f"{name}/{params['channel']}/{params['decomposer']}" + (f" (eps={eps:g})" if private else "")
    return _output(run, label, extra, params, mechanism)


def run_etc(params: Mapping[str, Any], seed: int) -> Result:
    """``anon-etc``: Algorithm 2 of paper 000 on a clustered instance."""
    instance, reward_rng, _, mechanism, noise_rng = _run(params, seed)
    run = anon_etc(
        instance,
        params["C"],
        params["horizon"],
        arm_offset=params["arm_offset"],
        explore_scale=params["explore_scale"],
        rng=reward_rng,
        mechanism=mechanism,
        noise_rng=noise_rng,
        absence=params["absence"],
    )
    return _output(run, "anon-etc", {}, params, mechanism)


ALGORITHMS: tuple[AlgorithmSpec, ...] = (
    AlgorithmSpec(
        name="anon-batched",
        run=run_batched,
        params=INSTANCE_PARAMS + BATCHED_PARAMS,
        summary="Algorithm 1 of paper 000: per-user BaSE + anonymous decomposition (C-anonymous)",
        family="anonymous",
        observes="anonymous",
    ),
    AlgorithmSpec(
        name="anon-bai",
        run=run_bai,
        params=tuple(p for p in INSTANCE_PARAMS if p.name in BAI_INSTANCE) + BAI_PARAMS,
        summary="best-arm identification for every user (naive, median, SE, SER3) over the anonymous "
        "or the direct channel; rounds to stop",
        family="anonymous",
        curve_axes=("round", "users still exploring"),
    ),
    AlgorithmSpec(
        name="anon-etc",
        run=run_etc,
        # no --max-exposure: Algorithm 2's groups are fixed by its phases, never decomposed
        params=tuple(p for p in INSTANCE_PARAMS if p.name != "max_exposure") + ETC_PARAMS,
        summary="Algorithm 2 of paper 000: anonymous explore-then-commit (no cluster assumption)",
        family="anonymous",
        observes="anonymous",
    ),
)
