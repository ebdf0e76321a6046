"""The shortcuts of the paper-002 kernel that only serve speed, each against a plain computation.

* uniform integers from one uniform double (Lemire's multiply-and-reject up to ``MAX_ARMS``, plain rejection
  beyond): chi-square against the uniform law;
* 1-PRIVACY (a round's rewards drawn at its end, its arms settled lazily) has the law of the per-pull
  reference loop.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.multiagent.decentralized import run_no_sharing
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
    ref = [reference.reference_no_sharing(means, players, rng=np.random.default_rng(10**6 + s), **kw)
           for s in range(runs)]
    eng = [run_no_sharing(means, players, rng=np.random.default_rng(s), **kw) for s in range(runs)]
    p = stats.ks_2samp([r["samples"] for r in ref], [r.samples for r in eng]).pvalue
    assert p > 1e-3, (np.mean([r["samples"] for r in ref]), np.mean([r.samples for r in eng]))
    best_ref = [sum(a == 0 for a in r["arms"]) for r in ref]
    best_eng = [int(np.sum(r.agent_arms == 0)) for r in eng]
    assert stats.ks_2samp(best_ref, best_eng).pvalue > 1e-3
    for r in eng:
        assert r.agent_pulls.sum() == r.samples and np.all(r.agent_arms >= 0)
