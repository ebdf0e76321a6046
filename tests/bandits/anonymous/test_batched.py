"""Static grids and vectorised BaSE (Gao et al. 2019, as used by paper 000 Section 2.2)."""

import math

import numpy as np
import pytest

from anonbandits.core import BatchedElimination, default_batches, static_grid
from anonbandits.errors import ConfigError


def test_minimax_grid_follows_its_formula():
    T, M = 10**6, 4
    a = T ** (1 / (2 - 2 ** (1 - M)))
    expected = [0] + [math.floor(a ** (2 - 2 ** (1 - m))) for m in range(1, M)] + [T]
    assert static_grid("minimax", T, M).tolist() == expected


@pytest.mark.parametrize("kind", ["minimax", "geometric", "arithmetic"])
def test_grids_are_static_and_end_at_the_horizon(kind):
    for T in (10, 977, 10**5):
        for M in (1, 2, 3, 5):
            g = static_grid(kind, T, M)
            assert g[0] == 0 and g[-1] == T and len(g) == M + 1 and np.all(np.diff(g) >= 0)
    assert static_grid("geometric", 1000, 3).tolist() == [0, 10, 100, 1000]
    assert static_grid("arithmetic", 100, 3).tolist() == [0, 33, 66, 100]


def test_default_batches_is_ceil_loglog():
    assert default_batches(10**6) == math.ceil(math.log(math.log(10**6)))
    assert default_batches(5) == 2
    with pytest.raises(ConfigError, match="grid must be one of"):
        static_grid("cubic", 100, 3)


def _run_base(learner: BatchedElimination, mu: np.ndarray, rng: np.random.Generator) -> None:
    """Feed each learner exactly the samples it asks for (Bernoulli), batch after batch."""
    while learner.exploring:
        want = np.ceil(learner.demand()).astype(np.int64)
        learner.update(rng.binomial(want, mu).astype(float), want)


def test_base_eliminates_a_clearly_bad_arm_and_keeps_the_best():
    rng = np.random.default_rng(2024)
    n_learners, K, T = 200, 4, 20_000
    base = np.array([0.9, 0.6, 0.55, 0.1])
    mu = np.array([rng.permutation(base) for _ in range(n_learners)])
    best, worst = mu.argmax(axis=1), mu.argmin(axis=1)
    learner = BatchedElimination(n_learners, K, static_grid("minimax", T, 3), gamma=4.0, sigma2=0.25)
    _run_base(learner, mu, rng)
    rows = np.arange(n_learners)
    assert not learner.active[rows, worst].any()  # the 0.1 arm is gone for every learner
    assert learner.active[rows, best].all()  # the 0.9 arm survives for every learner
    assert np.array_equal(learner.commit(), best)
    # samples really were split evenly: every active arm has the same count within a learner
    c = np.where(learner.active, learner.counts, -1)
    assert np.all((c == c.max(axis=1, keepdims=True)) | (c == -1))


def test_gao_threshold_also_eliminates_and_commits():
    rng = np.random.default_rng(7)
    mu = np.tile([0.2, 0.9, 0.3], (50, 1))
    learner = BatchedElimination(50, 3, static_grid("geometric", 30_000, 3), gamma=1.0, threshold="gao")
    _run_base(learner, mu, rng)
    assert not learner.active[:, 0].any() and learner.active[:, 1].all()
    assert np.all(learner.commit() == 1)


def test_base_refuses_samples_for_eliminated_arms_and_extra_batches():
    learner = BatchedElimination(1, 2, np.array([0, 10, 20]))
    learner.active[0, 1] = False
    with pytest.raises(ValueError, match="eliminated arm"):
        learner.update(np.zeros((1, 2)), np.array([[5, 5]]))
    learner.update(np.array([[3.0, 0.0]]), np.array([[5, 0]]))
    assert not learner.exploring
    with pytest.raises(RuntimeError):
        learner.update(np.zeros((1, 2)), np.zeros((1, 2), int))
