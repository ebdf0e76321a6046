"""Algorithm 1's outcome depends on the decomposer (issue: paper 000 as the paper defines it).

The reproduction's main setting (``benchmarks/anonymous_paper000.py``): N = 300 users, K = 5 arms, C = 3,
U = 60, gamma = 1, geometric grid; here at T = 10^5 so the test stays fast.
"""

import math

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.anonymous import anon_batched, guaranteed_ratio
from anonbandits.anonymous.algorithm1 import measured_ratio
from anonbandits.anonymous.entries import run_batched
from anonbandits.channels import elicitation_rounds
from anonbandits.core import default_batches, static_grid
from anonbandits.envs import clustered_instance
from anonbandits.errors import ConfigError

N, K, C, U, T = 300, 5, 3, 60, 100_000
SEEDS = range(6)


def _run(decomposer, seed, **kw):
    inst = clustered_instance(N, K, U, 0.1, np.random.default_rng(seed))
    return anon_batched(
        inst,
        C,
        T,
        U=U,
        decomposer=decomposer,
        grid="geometric",
        gamma=1.0,
        best_effort=True,
        rng=np.random.default_rng(1000 + seed),
        decomposer_rng=np.random.default_rng(seed),
        **kw,
    )


def test_at_equal_alpha_different_R_b_give_different_exploration_and_regret():
    poly = [_run("polytope", s, alpha=1.0) for s in SEEDS]
    greedy = [_run("greedy", s, alpha=1.0) for s in SEEDS]
    for p, g in zip(poly, greedy, strict=True):
        # same T' and grid, hence the same demands D_b; R_b differs by a factor K
        assert [b["demand"] for b in p.records] == [b["demand"] for b in g.records[: len(p.records)]]
        assert all(b["assignments"] <= 1.1 * b["demand"] for b in p.records)
        assert all(b["assignments"] == K * b["demand"] for b in g.records)
        assert g.metrics["exploration_rounds"] > 2 * p.metrics["exploration_rounds"]
    diff = np.array([g.metrics["regret"] - p.metrics["regret"] for p, g in zip(poly, greedy, strict=True)])
    half = 1.96 * diff.std(ddof=1) / math.sqrt(len(diff))
    assert abs(diff.mean()) > half, "the decomposer did not change the regret"


def test_paper_alpha_budgets_greedy_with_K():
    run = _run("greedy", 0)
    assert run.info["alpha"] == K == guaranteed_ratio("greedy", K, C, U)
    base = T // (K * elicitation_rounds(C))
    assert run.info["base_horizon"] == base
    # greedy meets its budget exactly: K D_b assignments per batch
    assert all(b["assignments"] == K * b["demand"] for b in run.records)


def test_measured_alpha_is_the_ratio_on_the_all_active_graph():
    assert measured_ratio("greedy", N, K, C, 50) == K
    assert measured_ratio("polytope", N, K, C, 50) == 1.0
    ratio = measured_ratio("randomized", N, K, C, 50, rng=np.random.default_rng(0))
    assert 1.0 < ratio < K
    # measured at D_1, the first batch of the grid for T / (2C+2): there polytope meets the lower bound
    # K ceil(D_1 / K) exactly
    d1 = int(static_grid("geometric", T // 8, default_batches(T // 8))[1])
    run = _run("polytope", 0, alpha="measured")
    assert run.info["alpha"] == K * math.ceil(d1 / K) / d1
    run = _run("randomized", 0, alpha="measured")
    assert run.info["alpha"] > 1.0
    with pytest.raises(ConfigError, match="measured"):
        _run("polytope", 0, alpha="guess")


def test_registry_reports_per_batch_ratios_and_eliminations():
    params = {
        "users": N,
        "arms": K,
        "C": C,
        "cluster": U,
        "horizon": T,
        "gap": 0.1,
        "reward": "bernoulli",
        "instance_seed": -1,
        "decomposer": "greedy",
        "grid": "arithmetic",
        "batches": 0,
        "gamma": 1.0,
        "threshold": "log",
        "alpha": 0.0,
        "best_effort": True,
    }
    metrics = run_batched(registry.get("anon-batched").resolve(params), 3).metrics
    assert metrics["exploration_batches"] == 2
    assert metrics["R_over_D_b1"] == metrics["R_over_D_b2"] == K
    assert metrics["eliminated_before_b1"] == 0
    # gamma = 1 on the arithmetic grid: a large share of pairs is gone before the second batch
    assert 0.2 < metrics["eliminated_before_b2"] < 1
