"""The simulator's view of paper 002's algorithms: names, parameters (with the spec's defaults) and runners.

* ``decentralized-elimination``: DECENTRALIZED ELIMINATION (Algorithm 2) with ``--subroutine naive|median|se|
  ser3|ugapec``; ``--subroutine ser4`` is the non-stationary extension DSER4 (Sec. 4, Theorem 4), run for
  ``--horizon`` steps with global resets of probability ``--phi``.
* ``no-sharing``: 1-PRIVACY-X, ``full-sharing``: 0-PRIVACY-X (Sec. 5.1).

Every run reports ``samples`` (global steps until the stopping rule), ``messages`` (the paper's convention,
spec A11), ``broadcasts``, ``p2p_messages``, ``recommended``, ``correct`` (eps-optimal), ``found_best``,
``agents_correct`` (fraction of players holding an eps-optimal arm) and more; the curve is the fraction of
players holding a single arm against the global step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anonbandits.envs.rewards import REWARD_MODELS, parse_means
from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized.algorithms import (
    DEFAULT_MAX_STEPS,
    STOP_RULES,
    DecentralizedResult,
    run_decentralized_elimination,
    run_dser4,
    run_full_sharing,
    run_no_sharing,
)
from anonbandits.multiagent.decentralized.kernel import SUBROUTINES
from anonbandits.multiagent.shared import ACTIVITIES, VOTE_ROUNDINGS
from anonbandits.registry import AlgorithmSpec, Param, RunOutput
from anonbandits.registry import parse_bool as flag

PAPER_MEANS = "0.7,0.5,0.3,0.1,0.1,0.1,0.1,0.1,0.1,0.1"
CURVE_AXES = ("global step", "fraction of players holding one arm")


_COMMON = (
    Param("agents", int, 64, "number of players N"),
    Param("means", str, PAPER_MEANS, "arm means, comma-separated (paper: K = 10)"),
    Param("delta", float, 0.05, "global failure probability"),
    Param("epsilon", float, 0.25, "approximation factor eps in (0, 1]"),
    Param("activity", str, "uniform", "player activity: uniform (Problem 1) or skewed (Problem 2)",
          ACTIVITIES),
    Param("reward", str, "bernoulli", "reward model", REWARD_MODELS),
    Param("drift", float, 0.0, "Problem 3: every arm but the best loses drift per step (e.g. 1e-5)"),
    Param("switch_at", int, 0, "from this step on the means are --means-after (0: never)"),
    Param("means_after", str, "", "arm means after --switch-at"),
    Param("max_steps", int, DEFAULT_MAX_STEPS, "cap on global steps (the run is marked truncated)"),
)


def _env_args(params: Mapping[str, Any]) -> dict[str, Any]:
    eps = float(params["epsilon"])
    if not 0 < eps <= 1:
        raise ConfigError(f"epsilon must be in (0, 1], got {eps}")
    after = params["means_after"]
    return {"means": parse_means(params["means"]), "eps": eps, "delta": float(params["delta"]),
            "activity": params["activity"], "reward": params["reward"], "drift": float(params["drift"]),
            "switch_at": int(params["switch_at"]), "means_after": parse_means(after) if after else None}


def _output(result: DecentralizedResult, label: str) -> RunOutput:
    return RunOutput(metrics=result.metrics(), curve=(result.done_steps, result.done_fraction), label=label)


def run_de(params: Mapping[str, Any], seed: int) -> RunOutput:
    """Runner of ``decentralized-elimination`` (DSER4 with ``subroutine = ser4``)."""
    rng = np.random.default_rng(seed)
    args = _env_args(params)
    sub = params["subroutine"]
    if sub == "ser4":
        result = run_dser4(args.pop("means"), int(params["agents"]), rng=rng, horizon=int(params["horizon"]),
                           phi=float(params["phi"]), eta=float(params["eta"]),
                           vote_rounding=params["vote_rounding"], **args)
    else:
        result = run_decentralized_elimination(
            args.pop("means"), int(params["agents"]), rng=rng, eta=float(params["eta"]), subroutine=sub,
            vote_rounding=params["vote_rounding"], max_steps=int(params["max_steps"]),
            draw_only_active=flag(params["draw_only_active"]), stop=params["stop"], **args)
    return _output(result, f"decentralized-{sub}")


def run_none(params: Mapping[str, Any], seed: int) -> RunOutput:
    """Runner of ``no-sharing`` (1-PRIVACY)."""
    args = _env_args(params)
    result = run_no_sharing(args.pop("means"), int(params["agents"]), rng=np.random.default_rng(seed),
                            subroutine=params["subroutine"], max_steps=int(params["max_steps"]),
                            draw_only_active=flag(params["draw_only_active"]), **args)
    return _output(result, f"no-sharing-{params['subroutine']}")


def run_full(params: Mapping[str, Any], seed: int) -> RunOutput:
    """Runner of ``full-sharing`` (0-PRIVACY)."""
    args = _env_args(params)
    result = run_full_sharing(args.pop("means"), int(params["agents"]), rng=np.random.default_rng(seed),
                              subroutine=params["subroutine"], max_steps=int(params["max_steps"]), **args)
    return _output(result, f"full-sharing-{params['subroutine']}")


ALGORITHMS: tuple[AlgorithmSpec, ...] = (
    AlgorithmSpec(
        name="decentralized-elimination", run=run_de, family="decentralized", curve_axes=CURVE_AXES,
        summary="Decentralized Elimination (Féraud et al. 2019, Alg. 2): private votes, M = ceil(log d/log eta)",
        params=_COMMON + (
            Param("eta", float, 0.9, "privacy level eta (players' subroutines run at confidence 1 - eta)"),
            Param("subroutine", str, "ser3", "arm selection subroutine (ser4: DSER4, non-stationary)",
                  SUBROUTINES + ("ser4",)),
            Param("vote_rounding", str, "ceil", "M = ceil (29 for the paper's values) or floor (28)",
                  VOTE_ROUNDINGS),
            Param("stop", str, "all", "stop when all players hold one arm, or at consensus", STOP_RULES),
            Param("draw_only_active", flag, False, "finished players leave the pool (spec A7 option)"),
            Param("phi", float, 1e-4, "ser4 only: reset probability per step"),
            Param("horizon", int, 1_000_000, "ser4 only: number of global steps"),
        )),
    AlgorithmSpec(
        name="no-sharing", run=run_none, family="decentralized", curve_axes=CURVE_AXES,
        summary="1-PRIVACY (Féraud et al. 2019, Sec. 5.1): every player alone at confidence delta/N, no messages",
        params=_COMMON + (
            Param("subroutine", str, "ser3", "arm selection subroutine", SUBROUTINES),
            Param("draw_only_active", flag, False, "finished players leave the pool (spec A7 option)"),
        )),
    AlgorithmSpec(
        name="full-sharing", run=run_full, family="decentralized", curve_axes=CURVE_AXES,
        summary="0-PRIVACY (Féraud et al. 2019, Sec. 5.1): one shared learner, every (arm, reward) broadcast",
        params=_COMMON + (
            Param("subroutine", str, "ser3", "arm selection subroutine", SUBROUTINES),
        )),
)
