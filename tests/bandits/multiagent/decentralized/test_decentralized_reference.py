"""The simulation against the plain per-pull reference loop (:mod:`anonbandits.reference.decentralized`).

Both simulate Algorithm 2 of paper 002 (Sec. 3.2). These runs (stationary Bernoulli rewards, one pull per
activation) take the kernel's lazy mode, which draws a round's rewards at its end and settles lazily which arms
a round had pulled when an arm leaves it, so it cannot share random numbers with the reference; every other
option is compared in ``test_decentralized_kernel.py``. The test compares the two laws over independent seeds:
two-sample Kolmogorov-Smirnov tests on the stopping and consensus steps and on the number of players holding
the best arm, and Welch's statistic on the message counts (means within 4 standard errors). The instances sit
in the hard regime (eps larger than the gaps, eta = 0.5) where players finish on different arms, vote
against the best arm and restart after global eliminations, so every branch of the protocol runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.multiagent.decentralized import run_decentralized_elimination
from anonbandits.reference import decentralized as reference

CASES = [  # subroutine, activity, means, players, eps, runs
    ("ser3", "uniform", [0.6, 0.55, 0.5, 0.45], 5, 0.6, 80),
    ("se", "skewed", [0.6, 0.55, 0.5, 0.45], 6, 0.7, 60),
    ("naive", "skewed", [0.6, 0.55, 0.5, 0.45], 6, 0.8, 100),
    ("median", "uniform", [0.7, 0.5, 0.3], 3, 1.0, 60),
    ("ugapec", "uniform", [0.7, 0.55, 0.4], 4, 0.6, 30),
]


@pytest.mark.parametrize(
    ("subroutine", "activity", "means", "players", "eps", "runs"), CASES, ids=[c[0] for c in CASES]
)
def test_simulation_and_per_pull_loop_have_the_same_law(subroutine, activity, means, players, eps, runs) -> None:
    kw = {"delta": 0.25, "eta": 0.5, "eps": eps, "subroutine": subroutine, "activity": activity}
    ref = [
        reference.reference_decentralized(means, players, rng=np.random.default_rng(10**6 + s), **kw)
        for s in range(runs)
    ]
    eng = [run_decentralized_elimination(means, players, rng=np.random.default_rng(s), **kw) for s in range(runs)]
    best = int(np.argmax(means))
    pairs = {
        "samples": ([r["samples"] for r in ref], [r.metrics["samples"] for r in eng]),
        "t_consensus": ([r["t_consensus"] or -1 for r in ref], [r.metrics["t_consensus"] or -1 for r in eng]),
        "best holders": (
            [sum(a == best for a in r["arms"]) for r in ref],
            [int(np.sum(r.info["agent_arms"] == best)) for r in eng],
        ),
    }
    for name, (a, b) in pairs.items():
        p = stats.ks_2samp(a, b).pvalue
        assert p > 1e-3, f"{name}: reference mean {np.mean(a):.1f} vs engine {np.mean(b):.1f} (KS p = {p:.2g})"
    a, b = np.array([r["messages"] for r in ref]), np.array([r.metrics["messages"] for r in eng])
    se = np.sqrt(a.var(ddof=1) / runs + b.var(ddof=1) / runs) + 1e-9
    assert abs(a.mean() - b.mean()) <= 4 * se + 1e-9, (a.mean(), b.mean())
    for r in eng:  # invariants of every run
        assert r.info["agent_pulls"].sum() == r.metrics["samples"]
        assert r.metrics["messages"] <= r.metrics["vote_threshold"] * len(means)
