"""The distributed-DP elimination family as registered algorithms (paper 004, Chowdhury & Zhou, ICLR 2023:
../shared/papers/004_b05229be65bd7964.txt; spec ../shared/specs/distributed-dp.md).

All six are Algorithm 1 (Sec. 3 of the paper) with a different protocol P = (R, S, A):

========================  =========================================================================
``cdp-se``                central model, discrete Laplace added by the analyzer (Thm 5; Algs. 2-3, App. H)
``ldp-se``                local model, every user adds ``Lap_Z(g/eps)`` (Thm 6; Algs. 4-5, App. H)
``dist-dp-se``            distributed pure DP, Polya noise + SecAgg (Thm 1, Sec. 4)
``dist-rdp-se``           distributed RDP, Skellam noise + SecAgg, scale ``s`` (Thm 2, Sec. 5)
``dist-cdp-se``           distributed CDP, discrete Gaussian noise + SecAgg, scale ``s`` (Thm 4, App. F)
``shuffle-dp-se``         distributed pure DP via secure shuffling (Thm 3, App. D.2)
========================  =========================================================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from anonbandits.dp.distributed.elimination import SIMULATIONS, run_elimination
from anonbandits.dp.distributed.protocols import (
    CentralProtocol,
    DiscreteGaussianProtocol,
    LocalProtocol,
    Protocol,
    ShuffleProtocol,
    SkellamProtocol,
)
from anonbandits.envs.rewards import GAUSSIAN_SIGMA, REWARD_MODELS, model_means, parse_means
from anonbandits.errors import ConfigError
from anonbandits.registry import AlgorithmSpec, Param, Result

FAMILY = "distributed-dp"


def _common_params(secure: tuple[str, ...]) -> tuple[Param, ...]:
    return (
        Param("means", str, "0.9,0.8,0.7", "comma-separated arm means (reward parameters)"),
        Param("epsilon", float, 0.5, "privacy level eps > 0"),
        Param("horizon", int, 1_000_000, "number of users T"),
        Param("reward", str, "bernoulli", "reward model", choices=REWARD_MODELS),
        Param("reward_sigma", float, GAUSSIAN_SIGMA, "std of the clipped Gaussian rewards (paper: 0.1)"),
        Param("confidence", float, 0.1, "p in the confidence radius beta(b); 0 means 1/T"),
        Param("tau_confidence", float, 0.0, "p in the accuracy tau (sets m); 0 means 1/T (theory), "
                                            "the paper's code uses 0.1"),
        Param("batch_base", int, 2, "batch length l(b) = base^b (the paper's figures 1-3 use 4)"),
        Param("crs", float, 1.0, "multiplier of the confidence radius"),
        Param("simulation", str, "aggregate", "aggregate: exact block sums and aggregate noise; "
                                              "per-user: every user's message", choices=SIMULATIONS),
        Param("secagg", str, "ideal", "secure computation simulated in per-user mode", choices=secure),
        Param("checkpoints", int, 200, "points of the regret curve"),
    )


_SECAGG = ("ideal", "masked")
_SHUFFLE = ("ideal", "split-and-mix")
_SCALED = (Param("scale", float, 10.0, "scaling factor s >= 1 of the noise (larger: less regret, more bits)"),
           Param("delta", float, 1e-6, "delta of the reported (eps, delta)-DP conversion"))


def _resolve_p(value: float, horizon: int, name: str) -> float:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be in [0, 1] (0 means 1/T), got {value!r}")
    return 1.0 / horizon if value == 0.0 else float(value)


def _run(protocol_cls: type[Protocol], params: Mapping[str, Any], seed: int, *,
         eps_below_one: str | None = None) -> Result:
    """Validate ``params``, run Algorithm 1 with ``protocol_cls`` and package metrics and the regret curve."""
    means = parse_means(params["means"])
    horizon, base = int(params["horizon"]), int(params["batch_base"])
    eps, crs, sigma = float(params["epsilon"]), float(params["crs"]), float(params["reward_sigma"])
    if horizon < 1:
        raise ConfigError(f"horizon must be at least 1, got {horizon}")
    if base < 2:
        raise ConfigError(f"batch_base must be an integer >= 2, got {base}")
    if not (eps > 0 and math.isfinite(eps)):
        raise ConfigError(f"epsilon must be a positive number, got {eps!r}")
    if not crs > 0:
        raise ConfigError(f"crs must be positive, got {crs!r}")
    if not sigma > 0:
        raise ConfigError(f"reward_sigma must be positive, got {sigma!r}")
    if int(params["checkpoints"]) < 2:
        raise ConfigError(f"checkpoints must be at least 2, got {params['checkpoints']}")
    if params["simulation"] == "aggregate" and params["secagg"] != "ideal":
        raise ConfigError(f"secagg={params['secagg']!r} simulates users' messages: use simulation=per-user")
    if eps_below_one and eps >= 1:
        warnings.warn(f"{eps_below_one} assumes epsilon < 1 (spec Sec. 6 item 18); running with {eps}",
                      stacklevel=3)
    p = _resolve_p(float(params["confidence"]), horizon, "confidence")
    p_tau = _resolve_p(float(params["tau_confidence"]), horizon, "tau_confidence")
    scale = float(params.get("scale", 1.0))
    protocol = protocol_cls(eps, p_tau, scale)
    delta = params.get("delta")
    if delta is not None and not 0 < float(delta) < 1:
        raise ConfigError(f"delta must be in (0, 1), got {delta!r}")

    rng = np.random.default_rng(seed)
    res = run_elimination(protocol, means, reward=params["reward"], reward_sigma=sigma, horizon=horizon,
                          batch_base=base, confidence=p, crs=crs, rng=rng, simulation=params["simulation"],
                          secagg=params["secagg"], checkpoints=int(params["checkpoints"]))
    best = int(np.argmax(model_means(params["reward"], means, sigma)))
    sizes = [base**b for b in range(1, 64) if base**b <= horizon // 2]
    dp_eps, dp_delta = protocol.privacy(sizes, delta)
    metrics = {
        "regret": res.regret,
        "batches": res.batches,
        "active_arms": int(res.active.size),
        "identified": int(res.active.size == 1 and int(res.active[0]) == best),
        "best_pulls": int(res.pulls[best]),
        "bits": res.max_bits,
        "wrap_errors": res.wrap_errors,
        "dp_epsilon": dp_eps,
        "dp_delta": dp_delta,
    }
    label = protocol.name if protocol.pure else f"{protocol.name} s={scale:g}"
    return Result(metrics=metrics, curve=(res.checkpoints, res.cumulative_regret), label=label)


def run_cdp_se(params: Mapping[str, Any], seed: int) -> Result:
    """CDP-SE, paper 004 (004_b05229be65bd7964.txt): Algorithm 1 in the central model with Algorithms 2
    (randomizer) and 3 (analyzer), Theorem 5 (Appendix H); the trusted analyzer adds ``Lap_Z(g/eps)``.
    ``(eps, 0)``-DP in the central model."""
    return _run(CentralProtocol, params, seed, eps_below_one="CDP-SE (Theorem 5)")


def run_ldp_se(params: Mapping[str, Any], seed: int) -> Result:
    """LDP-SE, paper 004 (004_b05229be65bd7964.txt): Algorithm 1 in the local model with Algorithms 4
    (randomizer) and 5 (analyzer), Theorem 6 (Appendix H); every user adds ``Lap_Z(g/eps)``.
    ``(eps, 0)``-DP in the local model."""
    return _run(LocalProtocol, params, seed, eps_below_one="LDP-SE (Theorem 6)")


def run_dist_dp_se(params: Mapping[str, Any], seed: int) -> Result:
    """Dist-DP-SE, paper 004 (004_b05229be65bd7964.txt): Algorithm 1 with Polya noise and SecAgg,
    Theorem 1 (Section 4). ``(eps, 0)``-DP in the distributed model."""
    return _run(Protocol, params, seed)


def run_dist_rdp_se(params: Mapping[str, Any], seed: int) -> Result:
    """Dist-RDP-SE, paper 004 (004_b05229be65bd7964.txt): Algorithm 1 with Skellam noise and SecAgg,
    Theorem 2 (Section 5). RDP in the distributed model; ``dp_epsilon`` reports its ``(eps', delta)``-DP
    conversion (Lemma 10)."""
    return _run(SkellamProtocol, params, seed)


def run_dist_cdp_se(params: Mapping[str, Any], seed: int) -> Result:
    """Dist-CDP-SE, paper 004 (004_b05229be65bd7964.txt): Algorithm 1 with discrete Gaussian noise and
    SecAgg, Theorem 4 (Appendix F). CDP in the distributed model; ``dp_epsilon`` reports its
    ``(eps', delta)``-DP conversion."""
    return _run(DiscreteGaussianProtocol, params, seed, eps_below_one="Dist-CDP-SE (Theorem 4)")


def run_shuffle_dp_se(params: Mapping[str, Any], seed: int) -> Result:
    """Shuffle-DP-SE, paper 004 (004_b05229be65bd7964.txt): Algorithm 1 with a relaxed SecAgg from secure
    shuffling, Theorem 3 (Appendix D.2). ``(eps, 0)``-DP claimed by the theorem for the Cheu-Yan
    construction; the simulated shuffle (ideal, or split-and-mix) is exactly correct, its pure-DP security
    is not proven."""
    return _run(ShuffleProtocol, params, seed)


ALGORITHMS: tuple[AlgorithmSpec, ...] = (
    AlgorithmSpec("cdp-se", run_cdp_se, _common_params(_SECAGG),
                  "central-model batched elimination with discrete Laplace noise (paper 004, Thm 5)", FAMILY),
    AlgorithmSpec("ldp-se", run_ldp_se, _common_params(_SECAGG),
                  "local-model batched elimination with discrete Laplace noise (paper 004, Thm 6)", FAMILY),
    AlgorithmSpec("dist-dp-se", run_dist_dp_se, _common_params(_SECAGG),
                  "distributed pure-DP elimination: Polya noise + SecAgg (paper 004, Alg. 1, Thm 1)", FAMILY),
    AlgorithmSpec("dist-rdp-se", run_dist_rdp_se, _common_params(_SECAGG) + _SCALED,
                  "distributed RDP elimination: Skellam noise + SecAgg (paper 004, Alg. 1, Thm 2)", FAMILY),
    AlgorithmSpec("dist-cdp-se", run_dist_cdp_se, _common_params(_SECAGG) + _SCALED,
                  "distributed CDP elimination: discrete Gaussian + SecAgg (paper 004, Thm 4)", FAMILY),
    AlgorithmSpec("shuffle-dp-se", run_shuffle_dp_se, _common_params(_SHUFFLE),
                  "distributed pure-DP elimination via secure shuffling (paper 004, Thm 3)", FAMILY),
)
