"""Registry entries of paper 003's algorithms: parameters (with the spec's defaults) and ``run`` functions."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from anonbandits.envs.rewards import parse_means
from anonbandits.errors import ConfigError
from anonbandits.multiagent.mase.dp_mase import DPMASEConfig, dp_mase
from anonbandits.multiagent.mase.instances import (
    ACTIVITIES,
    MODELS,
    PROBLEMS,
    Instance,
    activity_probabilities,
    problem,
)
from anonbandits.multiagent.mase.voting import (
    SAMPLINGS,
    STOP_RULES,
    central,
    corrupted_elimination,
    independent,
    mase,
)
from anonbandits.registry import AlgorithmSpec, Param, Result
from anonbandits.registry import parse_bool as flag

FAMILY = "multi-agent BAI (paper 003)"
ARMS_AXES = ("round", "arms left in the global set")


COMMON = (
    Param("agents", int, 64, "number of agents N"),
    Param("problem", str, "1", "paper 003's instance: 1 (Bernoulli) or 2 (Gaussian); --means overrides it",
          choices=PROBLEMS),
    Param("means", str, "", "custom arm means, comma-separated (overrides --problem)"),
    Param("reward", str, "bernoulli", "reward model of --means (gaussian: unclipped, std --sigma)",
          choices=MODELS),
    Param("sigma", float, 0.5, "standard deviation of Gaussian rewards (Problem 2; spec A13)"),
    Param("delta", float, 0.05, "global failure probability"),
    Param("activity", str, "uniform", "agent distribution P_N: uniform or skewed, P(n) ∝ (n+a)^-gamma",
          choices=ACTIVITIES),
    Param("gamma", float, 0.8, "exponent of the skewed activity"),
    Param("activity_offset", float, 0.0, "offset a of the skewed activity"),
    Param("max_rounds", int, 10**9, "stop (truncated) after this many rounds"),
)
WIDTH = (
    Param("width_c", float, 1.0, "constant c in the SE width 2 sqrt(log(c K t^2/b)/t) (spec A4)"),
    Param("width_denominator", int, 1, "1: width uses t; 2: it uses 2t (spec A4)", choices=(1, 2)),
)
SAMPLING = Param("sampling", str, "active", "active: draw among agents still running (A10); fixed: keep "
                 "drawing from P_N, finished agents' rounds are idle", choices=SAMPLINGS)
ETA = Param("eta", float, 0.9, "apparent privacy level eta")
RETIRE = Param("retire_on_sync", flag, False, "also retire agents left with <= 1 arm by a sync (A9)")


def _run(name: str, params: Mapping[str, Any], seed: int) -> Result:
    """Registry entry of paper 003's algorithm ``name`` (:mod:`.voting`, :mod:`.dp_mase`); ``feraud`` is the
    Féraud et al. (2019) baseline as paper 003 runs it: CORRUPTED ELIMINATION with ``xi = 0`` (spec 2.6)."""
    agents = int(params["agents"])
    if agents < 1:
        raise ConfigError(f"agents must be at least 1, got {agents}")
    sigma = float(params["sigma"])
    if not sigma > 0:
        raise ConfigError(f"sigma must be positive, got {sigma}")
    # --means (with --reward) overrides --problem
    instance = (Instance(parse_means(params["means"]), params["reward"], sigma, "custom") if params["means"]
                else problem(str(params["problem"]), sigma))
    probs = activity_probabilities(agents, params["activity"], gamma=float(params["gamma"]),
                                   offset=float(params["activity_offset"]))
    if int(params["max_rounds"]) < 1:
        raise ConfigError(f"max_rounds must be positive, got {params['max_rounds']}")
    rng = np.random.default_rng(seed)
    common = {"delta": float(params["delta"]), "max_rounds": int(params["max_rounds"])}
    if name == "dp-mase":
        result = dp_mase(instance, probs, DPMASEConfig(
            eps=float(params["epsilon"]), beta=float(params["beta"]), literal_order=flag(params["literal_order"]),
            retire_on_sync=flag(params["retire_on_sync"]), sampling=params["sampling"], **common), rng)
    else:
        common |= {"width_c": float(params["width_c"]), "width_denominator": int(params["width_denominator"])}
        if name == "central":
            result = central(instance, probs, rng, **common)
        elif name == "independent":
            result = independent(instance, probs, rng, stop=params["stop"], sampling=params["sampling"], **common)
        elif name == "mase":
            result = mase(instance, probs, rng, beta=float(params["beta"]), **common)
        else:
            result = corrupted_elimination(instance, probs, rng, eta=float(params["eta"]),
                                           xi=0.0 if name == "feraud" else float(params["xi"]),
                                           sampling=params["sampling"],
                                           retire_on_sync=flag(params["retire_on_sync"]), **common)
    metrics = {**result.metrics(), "instance": instance.name, "arms": instance.arms}
    return Result(metrics=metrics, curve=result.curve())


ALGORITHMS: tuple[AlgorithmSpec, ...] = tuple(AlgorithmSpec(name, partial(_run, name), COMMON + params, summary,
                                                            FAMILY, axes) for name, params, summary, axes in (
    ("mase", WIDTH + (Param("beta", float, 0.5, "local failure probability of each agent's SE; "
                                                "M = ceil(log delta / log beta)"),),
     "MASE (paper 003, Alg. 1): SE agents vote, immediate global sync", ARMS_AXES),
    ("dp-mase", (Param("epsilon", float, 0.1, "differential-privacy level eps_dp"),
                 Param("beta", float, 0.5, "local failure probability of each agent's DP-SE"),
                 Param("literal_order", flag, False, "next epoch length before the sync (A8)"), RETIRE, SAMPLING),
     "DP-MASE (paper 003, Alg. 2): epoch-wise DP-SE agents vote; eps-DP messages", ARMS_AXES),
    ("corrupted-elimination", WIDTH + (ETA, Param("xi", float, 0.05, "probability that a vote is dropped "
                                                                     "(corruption)"), RETIRE, SAMPLING),
     "Corrupted Elimination (paper 003, Alg. 3); xi=0 is Feraud et al.", ARMS_AXES),
    ("feraud", WIDTH + (ETA, RETIRE, SAMPLING),
     "Feraud et al. 2019 baseline as paper 003 runs it: Corrupted Elimination with xi = 0 (spec 2.6)", ARMS_AXES),
    ("central", WIDTH, "CENTRAL baseline (paper 003, Sec. 6): SE on pooled raw rewards", ARMS_AXES),
    ("independent", WIDTH + (Param("stop", str, "all", "all: until every agent is done (A14); first: first done",
                                   choices=STOP_RULES), SAMPLING),
     "INDEPENDENT baseline (paper 003, Sec. 6): every agent runs SE alone", ("round", "agents still running")),
))
