"""Multi-agent best-arm identification with private communications (paper 003: Rio et al., ICML 2023).

MASE (Alg. 1), DP-MASE (Alg. 2), CORRUPTED ELIMINATION (Alg. 3) and the CENTRAL and INDEPENDENT baselines;
see docs/multi-agent-bai.md. The Féraud et al. (2019) baseline is paper 002's Decentralized Elimination
(``decentralized-elimination`` with the SE subroutine), or CORRUPTED ELIMINATION with ``xi = 0``: the registry's
``feraud`` (paper 003, Sec. 5, runs it this way). ``ALGORITHMS``: the registry entries, parameters with the
defaults of the paper's experiments (Sec. 6, App. C). The functions are those of :mod:`.voting`,
:mod:`.dp_mase` and :mod:`anonbandits.multiagent.shared`, which check their arguments by the registry's rules
(:mod:`anonbandits.validation`).
"""

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from anonbandits import _deprecated
from anonbandits.envs.means_file import shared_means
from anonbandits.multiagent import shared
from anonbandits.multiagent.mase import dp_mase as _dp
from anonbandits.multiagent.mase import model, voting
from anonbandits.multiagent.mase.dp_mase import DPMASEConfig, dp_mase, dp_mase_local_elimination
from anonbandits.multiagent.mase.model import ARMS_AXES, EliminationLog, Instance, NoiseAudit, problem
from anonbandits.multiagent.mase.voting import (
    SAMPLINGS,
    STOP_RULES,
    central,
    corrupted_elimination,
    independent,
    mase,
)
from anonbandits.multiagent.shared import ACTIVITIES, CHANNEL_PARAMS, activity_probabilities
from anonbandits.results import Result
from anonbandits.spec import AlgorithmSpec, Param, agent_means
from anonbandits.spec import parse_bool as flag

__all__ = [
    "ALGORITHMS",
    "DPMASEConfig",
    "EliminationLog",
    "Instance",
    "NoiseAudit",
    "activity_probabilities",
    "central",
    "corrupted_elimination",
    "dp_mase",
    "dp_mase_local_elimination",
    "independent",
    "mase",
    "problem",
]

COMMON = (
    Param("users", int, 64, "number of agents (users) N", aliases=("agents",), unit="users"),
    Param(
        "problem",
        str,
        "1",
        "paper 003's instance: 1 (Bernoulli) or 2 (Gaussian); --means overrides it",
        choices=model.PROBLEMS,
    ),
    agent_means(""),
    Param(
        "reward",
        str,
        "bernoulli",
        "reward model of --means (gaussian: unclipped, std --reward-sigma)",
        choices=model.MODELS,
    ),
    Param(
        "reward_sigma",
        float,
        0.5,
        "standard deviation of Gaussian rewards (Problem 2, App. C.1; unstated there)",
        aliases=("sigma",),
        unit="reward",
    ),
    Param("delta", float, 0.05, "global failure probability"),
    Param(
        "activity",
        str,
        "uniform",
        "agent distribution P_N: uniform or skewed, P(n) ∝ (n+a)^-g with g the activity exponent",
        choices=ACTIVITIES,
    ),
    Param("activity_exponent", float, 0.8, "exponent g of the skewed activity", aliases=("gamma",)),
    Param("activity_offset", float, 0.0, "offset a of the skewed activity"),
    Param("max_rounds", int, 10**9, "stop (truncated) after this many rounds", unit="rounds"),
)
WIDTH = (
    Param("width_c", float, 1.0, "constant c in the SE width 2 sqrt(log(c K t^2/b)/t) (Sec. 4.1)"),
    Param("width_denominator", int, 1, "1: width uses t; 2: it uses 2t (Sec. 4.1)", choices=(1, 2)),
)
SAMPLING = Param(
    "sampling",
    str,
    "active",
    "active: draw among agents still running (P_N(t)); fixed: keep drawing from P_N, finished agents' rounds are idle",
    choices=SAMPLINGS,
)
ETA = Param("eta", float, 0.9, "apparent privacy level eta")
RETIRE = Param("retire_on_sync", flag, False, "also retire agents left with <= 1 arm by a sync (Alg. 2, 3)")


def _dp_mase_entry(
    instance: Instance, probs: np.ndarray, rng: np.random.Generator, *, epsilon: float, **params: Any
) -> Result:
    """DP-MASE (:func:`.dp_mase.dp_mase`, unchecked) with the registry's parameters (``epsilon`` is
    :class:`DPMASEConfig`'s ``eps``)."""
    return _dp._dp_mase(instance, probs, DPMASEConfig(eps=epsilon, **params), rng)


def _run(call: Callable[..., Result], names: tuple[str, ...], params: Mapping[str, Any], seed: int) -> Result:
    """Registry entry of a paper-003 algorithm: the library ``call`` (an unchecked body of :mod:`.voting` or
    :mod:`.dp_mase`) on the instance and activity that ``params`` (resolved and checked by the registry) describe,
    with the parameters ``names`` passed on by name."""
    sigma = params["reward_sigma"]
    if params["means"]:  # --means overrides --problem
        means, users = shared_means(params["means"])
        instance = Instance(means, params["reward"], sigma, "custom")
    else:
        users, instance = None, problem(params["problem"], sigma)
    probs = shared._activity_probabilities(
        users or params["users"],
        params["activity"],  # a file's count: users
        gamma=params["activity_exponent"],
        offset=params["activity_offset"],
    )
    result = call(instance, probs, np.random.default_rng(seed), **{name: params[name] for name in names})
    # the registry's result: the metrics, the curve and what the table needs of info (the logs stay with the
    # library functions)
    return Result(
        metrics=result.metrics,
        curve=result.curve,
        info={"instance": result.info["instance"], "votes": [int(v) for v in result.info["votes"]]},
    )


ALGORITHMS: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(
        name,
        partial(_run, call, ("delta", "max_rounds", *(p.name for p in own))),
        COMMON + own,
        summary,
        "multi-agent BAI (paper 003)",
        axes,
    )
    for name, call, own, summary, axes in (
        (
            "mase",
            voting._mase,
            WIDTH
            + (
                Param(
                    "beta", float, 0.5, "local failure probability of each agent's SE; M = ceil(log delta / log beta)"
                ),
                *CHANNEL_PARAMS,
            ),
            "MASE (paper 003, Alg. 1): SE agents vote, immediate global sync",
            ARMS_AXES,
        ),
        (
            "dp-mase",
            _dp_mase_entry,
            (
                Param("epsilon", float, 0.1, "differential-privacy level eps_dp"),
                Param("beta", float, 0.5, "local failure probability of each agent's DP-SE"),
                Param("literal_order", flag, False, "next epoch length before the sync (Alg. 2)"),
                RETIRE,
                SAMPLING,
                *CHANNEL_PARAMS,
            ),
            "DP-MASE (paper 003, Alg. 2): epoch-wise DP-SE agents vote; eps-DP messages",
            ARMS_AXES,
        ),
        (
            "corrupted-elimination",
            voting._corrupted_elimination,
            WIDTH
            + (ETA, Param("xi", float, 0.05, "probability that a vote is dropped (corruption)"), RETIRE, SAMPLING),
            "Corrupted Elimination (paper 003, Alg. 3); xi=0 is Feraud et al.",
            ARMS_AXES,
        ),
        (
            "feraud",
            partial(voting._corrupted_elimination, xi=0.0),
            WIDTH + (ETA, RETIRE, SAMPLING),
            "Feraud et al. 2019 baseline as paper 003 runs it: Corrupted Elimination with xi = 0 (Sec. 5)",
            ARMS_AXES,
        ),
        (
            "central",
            voting._central,
            WIDTH,
            "CENTRAL baseline (paper 003, Sec. 6): SE on pooled raw rewards",
            ARMS_AXES,
        ),
        (
            "independent",
            voting._independent,
            WIDTH
            + (
                Param(
                    "stop", str, "all", "all: until every agent is done (Sec. 6); first: first done", choices=STOP_RULES
                ),
                SAMPLING,
            ),
            "INDEPENDENT baseline (paper 003, Sec. 6): every agent runs SE alone",
            ("round", "users still running"),
        ),
    )
)

__getattr__ = _deprecated.moved(
    __name__, {}, {"MaseResult": (Result, "anonbandits.results.Result (the logs are in its info)")}
)
