"""The shortcuts of the paper-002 engine that only serve speed, each against a plain computation.

* the activation clock (chunks sized to the lookups, keys sorted per chunk): every lookup equals the count or
  position read off the drawn player sequence itself, across chunk boundaries and at ``max_steps``;
* Bernoulli reward sums (a uniform draw per single pull, a binomial per block, nothing for no pull): mean and
  variance per count within a tolerance from the variance of the estimates;
* the inverse of the SE/SER3 reach table equals the binary search it replaces;
* 1-PRIVACY has the law of the per-pull reference loop (on the compiled kernel; the engine's blocks run back
  to back on the clock are compared with the kernel in ``test_decentralized_kernel.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.multiagent.decentralized import Environment, run_no_sharing
from anonbandits.multiagent.decentralized.clock import NEVER, ActivationClock
from anonbandits.multiagent.decentralized.environment import activity_sampler
from anonbandits.multiagent.decentralized.subroutines import SER3, SuccessiveElimination, _first_reaching, _reach_table
from anonbandits.reference import decentralized as reference


def _sequence(clock: ActivationClock) -> np.ndarray:
    """The player of every drawn step, rebuilt from the clock's keys (0-based steps)."""
    keys = clock._keys[:clock.horizon]
    seq = np.empty(clock.horizon, np.int64)
    seq[keys % clock._scale - 1] = keys // clock._scale
    return seq


@pytest.mark.parametrize(("n", "activity", "max_steps"), [(5, "uniform", 10**6), (40, "skewed", 10**7),
                                                          (300, "uniform", 2500)])
def test_clock_lookups_match_the_drawn_sequence(n: int, activity: str, max_steps: int) -> None:
    clock = ActivationClock(activity_sampler(activity, n), n, np.random.default_rng(n), max_steps, initial=97)
    rng = np.random.default_rng(1)
    for _ in range(25):  # growing requests: many chunks of different sizes
        who = rng.integers(0, n, 30)
        j = rng.integers(-1, 1500, 30)
        steps, bounds = clock.time_of(who, j), clock.time_lower_bound(who, 3 * j)
        seq = _sequence(clock)
        assert np.all(np.diff(clock._offset) > 0) and clock.horizon <= max_steps
        for w, jj, step, kk, bound in zip(who, j, steps, 3 * j, bounds, strict=True):
            mine = np.flatnonzero(seq == w) + 1
            assert step == (mine[jj - 1] if 1 <= jj <= mine.size else NEVER)
            assert bound == (mine[kk - 1] if 1 <= kk <= mine.size else max(clock.horizon + kk - mine.size, 1))
        t = np.concatenate([rng.integers(-3, clock.horizon + 3000, 25), np.array(clock._offset[-3:])])
        w = rng.integers(0, n, t.size)
        counts = clock.count_upto(w, t)
        seq = _sequence(clock)
        for ww, tt, c in zip(w, t, counts, strict=True):
            assert c == np.sum(seq[:max(min(tt, max_steps), 0)] == ww)


def test_bernoulli_sums_have_the_binomial_law() -> None:
    env = Environment(np.array([0.2, 0.7, 0.5]))
    rng = np.random.default_rng(3)
    reps = 4000
    counts = np.tile(np.array([[0, 1, 1], [7, 1, 0], [3, 30, 1]]), (reps, 1, 1))
    mu = np.broadcast_to(env.means, counts.shape)
    sums = env.sums(mu, counts, rng)
    assert sums.shape == counts.shape and np.all(sums[counts == 0] == 0)
    assert np.all((sums >= 0) & (sums <= counts) & (sums == np.round(sums)))
    mean, var = counts[0] * env.means, counts[0] * env.means * (1 - env.means)
    # mean within 5 standard errors; sample variance within 5 of its standard errors (4th moment <= 3 var^2+var)
    assert np.all(np.abs(sums.mean(axis=0) - mean) <= 5 * np.sqrt(var / reps) + 1e-12)
    assert np.all(np.abs(sums.var(axis=0) - var) <= 5 * np.sqrt((3 * var**2 + var) / reps) + 1e-12)


@pytest.mark.parametrize(("cls", "conf", "eps"), [(SER3, 0.9, 0.25), (SER3, 0.05 / 4096, 0.25),
                                                  (SuccessiveElimination, 0.9, 0.0)])
def test_reach_inverse_equals_the_binary_search(cls, conf: float, eps: float) -> None:
    table, inverse = _reach_table(cls, 10, eps, conf, 4.0)
    rng = np.random.default_rng(0)
    need = np.concatenate([np.arange(-300.0, 70_000.0), rng.uniform(-50, 500, 2000),
                           [np.inf, -np.inf, 1e9, table[0], np.floor(table[0]), table[7]]])
    assert np.array_equal(_first_reaching(table, inverse, need), np.searchsorted(table, need, side="left"))


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
