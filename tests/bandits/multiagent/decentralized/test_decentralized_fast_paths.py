"""The shortcuts of the paper-002 kernel that only serve speed, each against a plain computation.

* uniform integers from one uniform double (Lemire's multiply-and-reject up to ``MAX_ARMS``, plain rejection
  beyond): chi-square against the uniform law;
* 1-PRIVACY (a round's rewards drawn at its end, its arms settled lazily) has the law of the per-pull
  reference loop;
* the tabulated SE/SER3 radius (and the core's compiled boundary past the table) is the paper's formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from anonbandits.core.compiled import se_boundary
from anonbandits.multiagent.decentralized import kernel, run_no_sharing
from anonbandits.multiagent.decentralized.kernel import MAX_ARMS, _index
from anonbandits.reference import decentralized as reference


@pytest.mark.parametrize("q", [2, 3, 7, MAX_ARMS, MAX_ARMS + 2, 3000])
def test_index_is_uniform(q: int) -> None:
    rng = np.random.default_rng(q)
    draws = np.array([_index(rng, q) for _ in range(40 * q)])
    assert draws.min() >= 0 and draws.max() < q
    assert stats.chisquare(np.bincount(draws, minlength=q)).pvalue > 1e-4


def test_no_sharing_has_the_law_of_the_per_pull_loop() -> None:
    means, players, runs = [0.6, 0.5, 0.4], 4, 60
    kw = {"delta": 0.3, "eps": 0.25, "subroutine": "ser3", "activity": "skewed"}
    ref = [
        reference.reference_no_sharing(means, players, rng=np.random.default_rng(10**6 + s), **kw) for s in range(runs)
    ]
    eng = [run_no_sharing(means, players, rng=np.random.default_rng(s), **kw) for s in range(runs)]
    p = stats.ks_2samp([r["samples"] for r in ref], [r.metrics["samples"] for r in eng]).pvalue
    assert p > 1e-3, (np.mean([r["samples"] for r in ref]), np.mean([r.metrics["samples"] for r in eng]))
    best_ref = [sum(a == 0 for a in r["arms"]) for r in ref]
    best_eng = [int(np.sum(r.info["agent_arms"] == 0)) for r in eng]
    assert stats.ks_2samp(best_ref, best_eng).pvalue > 1e-3
    for r in eng:
        assert r.info["agent_pulls"].sum() == r.metrics["samples"] and np.all(r.info["agent_arms"] >= 0)


@pytest.mark.parametrize(
    ("kind", "c", "denominator"), [(kernel.SE, 4.0, 1), (kernel.SE, 1.0, 1), (kernel.SER3, 4.0, 2)]
)
def test_radius_table_is_the_papers_radius(kind: int, c: float, denominator: int) -> None:
    """The tabulated ``2 radius(tau)`` of SE and SER3 (paper 002, Sec. 3.1's subroutines) is the paper's formula
    ``2 sqrt(log(c K tau^2/conf) / (denominator tau))``, and the compiled value used past the table continues it."""
    k, conf = 10, 0.1
    two_radius, _ = kernel._tables(kind, k, conf, c)
    for tau in (1, 2, 17, 1000, kernel.TABLE - 1):
        paper = 2 * math.sqrt(math.log(c * k * tau**2 / conf) / (denominator * tau))
        assert two_radius[tau] == pytest.approx(paper, rel=1e-14)
    tau = kernel.TABLE + 5
    paper = 2 * math.sqrt(math.log(c * k * tau**2 / conf) / (denominator * tau))
    assert se_boundary(tau, k, conf, c, denominator) / tau == pytest.approx(paper, rel=1e-14)
