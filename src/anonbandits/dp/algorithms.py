"""Registry entries of the single-learner private bandit family (paper 001 and the DP-SE baseline)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anonbandits.dp.common import BanditRun
from anonbandits.dp.elimination import ORDERS, dp_se, se
from anonbandits.dp.ftnl import ftnl
from anonbandits.dp.hybrid_ucb import TREE_NOISES, hybrid_ucb
from anonbandits.dp.lazy_ucb import STORAGES, anytime_lazy_ucb
from anonbandits.envs.rewards import REWARD_MODELS
from anonbandits.registry import AlgorithmSpec, Param, Result

FAMILY = "dp"
PAPER_HORIZON = 2 * 2**21

MEANS = Param("means", str, "0.9,0.8,0.7", "comma-separated arm (action) means in [0, 1]")
EPSILON = Param("epsilon", float, 0.5, "privacy parameter epsilon")
HORIZON = Param("horizon", int, PAPER_HORIZON, "number of rounds T (paper 001: 2 x 2^21)")
REWARD = Param("reward", str, "bernoulli", "reward distribution", choices=REWARD_MODELS)
CONFIDENCE = Param("confidence", str, "1/T", "DP-SE confidence beta: '1/T' (paper 001) or a number (paper 004: 0.1)")
ORDER = Param("order", str, "round-robin", "pull order inside an epoch (paper 004: blocks)", choices=ORDERS)


def _output(run: BanditRun, label: str) -> Result:
    return Result(metrics=run.metrics(), curve=(run.checkpoints, run.curve), label=label)


def _label(name: str, params: Mapping[str, Any]) -> str:
    return f"{name} (eps={params['epsilon']:g})"


def run_se(params: Mapping[str, Any], seed: int) -> Result:
    run = se(params["means"], params["horizon"], np.random.default_rng(seed), reward=params["reward"],
             confidence=params["confidence"], order=params["order"])
    return _output(run, "se")


def run_dp_se(params: Mapping[str, Any], seed: int) -> Result:
    run = dp_se(params["means"], params["epsilon"], params["horizon"], np.random.default_rng(seed),
                reward=params["reward"], confidence=params["confidence"], order=params["order"])
    return _output(run, _label("dp-se", params))


def run_anytime_lazy_ucb(params: Mapping[str, Any], seed: int) -> Result:
    run = anytime_lazy_ucb(params["means"], params["epsilon"], params["horizon"], np.random.default_rng(seed),
                           storage=params["storage"], reward=params["reward"])
    return _output(run, _label("anytime-lazy-ucb", params))


def run_hybrid_ucb(params: Mapping[str, Any], seed: int) -> Result:
    run = hybrid_ucb(params["means"], params["epsilon"], params["horizon"], np.random.default_rng(seed),
                     tree_noise=params["tree_noise"], reward=params["reward"])
    return _output(run, _label("hybrid-ucb", params))


def run_ftnl(params: Mapping[str, Any], seed: int) -> Result:
    run = ftnl(params["means"], params["epsilon"], params["horizon"], np.random.default_rng(seed),
               noise_multiplier=params["noise_multiplier"], initial=params["initial"], reward=params["reward"])
    return _output(run, _label("ftnl", params))


def run_naive_ftnl(params: Mapping[str, Any], seed: int) -> Result:
    run = ftnl(params["means"], params["epsilon"], params["horizon"], np.random.default_rng(seed), naive=True,
               initial=params["initial"], reward=params["reward"])
    return _output(run, _label("naive-ftnl", params))


_INITIAL = Param("initial", str, "random", "action of epoch 0: 'random' or an index")
_EXPERTS_AXES = ("round", "cumulative pseudo-regret (experts)")

ALGORITHMS: tuple[AlgorithmSpec, ...] = (
    AlgorithmSpec("se", run_se, (MEANS, HORIZON, REWARD, CONFIDENCE, ORDER),
                  "non-private successive elimination (DP-SE's schedule without noise)", FAMILY),
    AlgorithmSpec("dp-se", run_dp_se, (MEANS, EPSILON, HORIZON, REWARD, CONFIDENCE, ORDER),
                  "DP-SE, Sajed & Sheffet 2019 (baseline of papers 001 and 004)", FAMILY),
    AlgorithmSpec("anytime-lazy-ucb", run_anytime_lazy_ucb,
                  (MEANS, EPSILON, HORIZON, REWARD,
                   Param("storage", str, "o1", "o1: Appendix A tuples; arrays: keep observations",
                         choices=STORAGES)),
                  "Anytime-Lazy-UCB (paper 001, Algorithm 1)", FAMILY),
    AlgorithmSpec("hybrid-ucb", run_hybrid_ucb,
                  (MEANS, EPSILON, HORIZON, REWARD,
                   Param("tree_noise", str, "paper", "tree node noise: paper 2r/eps or exact 2(r+1)/eps",
                         choices=TREE_NOISES)),
                  "Hybrid-UCB (paper 001, Algorithm 4; per-round decisions)", FAMILY),
    AlgorithmSpec("ftnl", run_ftnl,
                  (MEANS, EPSILON, HORIZON, REWARD, _INITIAL,
                   Param("noise_multiplier", float, 1.0, "RNM noise Lap(m/eps): 1 (paper) or 2 (A13)")),
                  "Follow-the-Noisy-Leader with Report Noisy Max, experts setting (paper 001, Alg. 2-3)",
                  FAMILY, curve_axes=_EXPERTS_AXES),
    AlgorithmSpec("naive-ftnl", run_naive_ftnl, (MEANS, EPSILON, HORIZON, REWARD, _INITIAL),
                  "naive FTNL, Lap(K/eps) per action, experts setting (paper 001, Sec. 5)", FAMILY,
                  curve_axes=_EXPERTS_AXES),
)
