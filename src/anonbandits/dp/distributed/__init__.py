"""Distributed-DP batched successive elimination (paper 004, Chowdhury and Zhou, "Distributed Differential
Privacy in Multi-Armed Bandits", ICLR 2023) as registered algorithms.

All six are Algorithm 1 (Sec. 3 of the paper, :func:`run_elimination`) with a different protocol
P = (R, S, A) of :mod:`anonbandits.privacy.protocols`, whose docstrings give each guarantee:

========================  =========================================================================
``cdp-se``                central model, discrete Laplace added by the analyzer (Thm 5; Algs. 2-3, App. H)
``ldp-se``                local model, every user adds ``Lap_Z(g/eps)`` (Thm 6; Algs. 4-5, App. H)
``dist-dp-se``            distributed pure DP, Polya noise + SecAgg (Thm 1, Sec. 4)
``dist-rdp-se``           distributed RDP, Skellam noise + SecAgg, scale ``s`` (Thm 2, Sec. 5)
``dist-cdp-se``           distributed CDP, discrete Gaussian noise + SecAgg, scale ``s`` (Thm 4, App. F)
``shuffle-dp-se``         distributed pure DP via secure shuffling (Thm 3, App. D.2)
========================  =========================================================================

Every variant reports its guarantee as ``privacy_epsilon`` and ``privacy_delta`` (the RDP and CDP variants
their ``(eps', delta)``-DP conversion at the parameter ``dp_delta``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from anonbandits._deprecated import moved
from anonbandits.core.limits import MAX_GRID_POINTS
from anonbandits.core.schedules import batch_length
from anonbandits.dp.distributed import elimination as _elimination
from anonbandits.dp.distributed.elimination import SIMULATIONS, _EliminationResult
from anonbandits.dp.runs import HORIZON, HORIZON_PARAM
from anonbandits.envs.rewards import BOUNDED_MODELS, GAUSSIAN_SIGMA, REWARD_MODELS, parse_means
from anonbandits.privacy.protocols import PROTOCOLS, SECAGGS, BatchParams, Protocol
from anonbandits.results import Result
from anonbandits.spec import ARM_MEANS, AlgorithmSpec, Param
from anonbandits.validation import (
    POSITIVE_FINITE,
    RNG,
    RULES,
    UNIT_NO_ZERO,
    VECTOR,
    Rule,
    checks,
    int_between,
    one_of,
)

#: ``confidence`` and ``tau_confidence``: a probability, 0 standing for 1/T
CONFIDENCE = Rule(lambda v: 0 <= v <= 1, "in [0, 1] (0 means 1/T)")

__all__ = ["ALGORITHMS", "PROTOCOLS", "BatchParams", "Protocol", "run_elimination"]

#: ``EliminationResult``, what :func:`run_elimination` returned before :class:`~anonbandits.results.Result`: found
#: here for one release, with a warning
__getattr__ = moved(
    __name__, {}, {"EliminationResult": (_EliminationResult, "anonbandits.Result (what run_elimination returns now)")}
)

#: Algorithm 1 as a library function, checking its arguments by the registry's rules and those of its own (the
#: registry entries call the unchecked one: resolve has checked their parameters)
run_elimination = checks(
    protocol=Rule(lambda v: isinstance(v, Protocol), "a protocol of anonbandits.privacy.protocols.PROTOCOLS"),
    means=VECTOR,
    reward=Rule(
        lambda v: isinstance(v, str) and v in BOUNDED_MODELS,
        f"one of {', '.join(BOUNDED_MODELS)} (the encodings need rewards in [0, 1])",
    ),
    reward_sigma=RULES["reward_sigma"],
    horizon=HORIZON,
    batch_base=RULES["batch_base"],
    confidence=UNIT_NO_ZERO,
    crs=RULES["crs"],
    rng=RNG,
    simulation=one_of(*SIMULATIONS),
    secagg=one_of(*SECAGGS),
    checkpoints=int_between(2, MAX_GRID_POINTS),
    record=Rule(lambda v: isinstance(v, bool), "True or False"),
)(_elimination.run_elimination)


def _run(name: str, eps_below_one: str | None, params: Mapping[str, Any], seed: int) -> Result:
    """Run Algorithm 1 with protocol ``name`` on the resolved ``params`` (each checked by its Param's rule; the
    pairing of simulation and secagg by :func:`run_elimination`) and package metrics and the regret curve;
    warn when ``eps_below_one`` (a theorem) assumes epsilon < 1 and it is not."""
    means = parse_means(params["means"])
    horizon, base, eps = params["horizon"], params["batch_base"], params["epsilon"]
    p, p_tau = (params[key] or 1.0 / horizon for key in ("confidence", "tau_confidence"))
    protocol = PROTOCOLS[name](eps, p_tau, params.get("scale", 1.0))  # refuses an epsilon out of range first
    lengths = [n for n in (batch_length(base, b) for b in range(1, 64)) if n <= horizon // 2]
    for n in lengths[-1:]:  # the largest batch has the largest modulus: refused before the run, not at it
        protocol.batch_params(n)
    if eps_below_one and eps >= 1:
        warnings.warn(
            f"{eps_below_one} assumes epsilon < 1 (as paper 004's Theorems 4-6 do); running with {eps}", stacklevel=2
        )
    res = _elimination.run_elimination(
        protocol,
        means,
        reward=params["reward"],
        reward_sigma=params["reward_sigma"],
        horizon=horizon,
        batch_base=base,
        confidence=p,
        crs=params["crs"],
        rng=np.random.default_rng(seed),
        simulation=params["simulation"],
        secagg=params["secagg"],
        checkpoints=params["checkpoints"],
    )
    dp_eps, dp_delta = protocol.privacy(lengths, params.get("dp_delta"))
    label = protocol.name if protocol.pure else f"{protocol.name} s={protocol.scale:g}"
    # a conversion gives epsilon 0 with delta > 0 only where delta alone covers the releases: say so
    info = (
        {
            "privacy_note": f"dp_delta = {dp_delta:g} makes the guarantee trivial (epsilon 0: delta alone bounds "
            "the privacy loss)"
        }
        if dp_eps == 0 and dp_delta > 0
        else {}
    )
    return Result(
        metrics={**res.metrics, "privacy_epsilon": dp_eps, "privacy_delta": dp_delta},
        curve=res.curve,
        label=label,
        info=info,
    )


def _params(secure: tuple[str, ...], scaled: bool = False) -> tuple[Param, ...]:
    return (
        ARM_MEANS,
        Param("epsilon", float, 0.5, "privacy level eps > 0", rule=POSITIVE_FINITE),
        Param("horizon", int, 1_000_000, "number of users T (one round each)", unit="rounds", rule=HORIZON_PARAM),
        Param("reward", str, "bernoulli", "reward model", choices=REWARD_MODELS),
        Param("reward_sigma", float, GAUSSIAN_SIGMA, "std of the clipped Gaussian rewards (paper: 0.1)", unit="reward"),
        Param("confidence", float, 0.1, "p in the confidence radius beta(b); 0 means 1/T", rule=CONFIDENCE),
        Param(
            "tau_confidence",
            float,
            0.0,
            "p in the accuracy tau (sets m); 0 means 1/T (theory), the paper's code uses 0.1",
            rule=CONFIDENCE,
        ),
        Param("batch_base", int, 2, "batch length l(b) = base^b (the paper's figures 1-3 use 4)", unit="rounds"),
        Param("crs", float, 1.0, "multiplier of the confidence radius"),
        Param(
            "simulation",
            str,
            "aggregate",
            "aggregate: exact block sums and aggregate noise; per-user: every user's message",
            choices=SIMULATIONS,
        ),
        Param("secagg", str, "ideal", "secure computation simulated in per-user mode", choices=secure),
        Param("checkpoints", int, 200, "points of the regret curve", unit="points"),
    ) + (
        (
            Param("scale", float, 10.0, "scaling factor s >= 1 of the noise (larger: less regret, more bits)"),
            Param("dp_delta", float, 1e-6, "delta of the reported (eps, delta)-DP conversion", aliases=("delta",)),
        )
        if scaled
        else ()
    )


_SECAGG = ("ideal", "masked")
ALGORITHMS: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(name, partial(_run, name, warn), params, summary, "distributed-dp")
    for name, params, warn, summary in (
        (
            "cdp-se",
            _params(_SECAGG),
            "CDP-SE (Theorem 5)",
            "central-model batched elimination with discrete Laplace noise (paper 004, Thm 5)",
        ),
        (
            "ldp-se",
            _params(_SECAGG),
            "LDP-SE (Theorem 6)",
            "local-model batched elimination with discrete Laplace noise (paper 004, Thm 6)",
        ),
        (
            "dist-dp-se",
            _params(_SECAGG),
            None,
            "distributed pure-DP elimination: Polya noise + SecAgg (paper 004, Alg. 1, Thm 1)",
        ),
        (
            "dist-rdp-se",
            _params(_SECAGG, scaled=True),
            None,
            "distributed RDP elimination: Skellam noise + SecAgg (paper 004, Alg. 1, Thm 2)",
        ),
        (
            "dist-cdp-se",
            _params(_SECAGG, scaled=True),
            "Dist-CDP-SE (Theorem 4)",
            "distributed CDP elimination: discrete Gaussian + SecAgg (paper 004, Thm 4)",
        ),
        (
            "shuffle-dp-se",
            _params(("ideal", "split-and-mix")),
            None,
            "distributed pure-DP elimination via secure shuffling (paper 004, Thm 3)",
        ),
    )
)
