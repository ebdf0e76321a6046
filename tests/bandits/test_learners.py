"""The batched elimination learners of anonbandits.core.learners: against plain per-learner loops written from
paper 002's subroutines (Sec. 3.1) and from DP-SE's epochs, and their PAC guarantee on many learners."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonbandits.core.learners import SUBROUTINES, BatchLearner, BestArmElimination, EpochElimination
from anonbandits.errors import ConfigError


def _plain_bai(k: int, subroutine: str, approx: float, delta: float, served) -> tuple[int, list[int]]:
    """One learner from the paper's formulas, for rewards in [0, 1]: its recommended arm and the samples per
    arm of each of its batches; ``served(arms, n)`` returns ``{arm: sum of n rewards}`` for one batch."""
    active = list(range(k))
    if subroutine == "naive":
        n = math.ceil(4 / approx**2 * math.log(2 * k / delta))
        got = served(active, n)
        return max(active, key=lambda a: got[a]), [n]
    history: list[int] = []
    if subroutine == "median":
        phase = 1
        while len(active) > 1:
            eps_l, delta_l = approx / 4 * 0.75 ** (phase - 1), delta / 2**phase
            n = math.ceil(4 * math.log(3 / delta_l) / eps_l**2)
            history.append(n)
            got = served(active, n)
            active = sorted(active, key=lambda a: -got[a])[: math.ceil(len(active) / 2)]
            phase += 1
        return active[0], history
    den = 2 if subroutine == "ser3" else 1
    sums, tau, b = dict.fromkeys(active, 0.0), 0, 0
    while len(active) > 1:
        n = 2**b - tau  # checks after 1, 2, 4, ... samples per arm
        history.append(n)
        got = served(active, n)
        for a in active:
            sums[a] += got[a]
        tau, b = tau + n, b + 1
        two_radius = 2 * math.sqrt(max(math.log(4 * k * tau * tau / delta), 0.0) / (den * tau))
        best = max(active, key=lambda a: sums[a])
        active = [a for a in active if a == best or (sums[best] - sums[a]) / tau + approx < two_radius]
    return active[0], history


def _run(learners, mu: np.ndarray, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Serve every batch with Gaussian sums (no ties); returns each batch's (N, K) demand and sums."""
    served = []
    while learners.exploring.any():
        d = learners.demand()
        sums = np.where(d > 0, d * mu + rng.normal(0.0, 0.5, size=d.shape) * np.sqrt(d), 0.0)
        served.append((d, sums))
        learners.update(sums, d, 0.25)
    return served


@pytest.mark.parametrize("subroutine", SUBROUTINES)
def test_batched_learners_match_a_plain_loop(subroutine):
    n, k, approx, delta = 30, 5, 0.2, 0.1
    mu = np.random.default_rng(1).uniform(0.2, 0.8, size=(n, k))
    learners = BestArmElimination(n, k, subroutine, approx=approx, delta=delta, rng=np.random.default_rng(0))
    assert isinstance(learners, BatchLearner)
    batches = _run(learners, mu, np.random.default_rng(2))
    rec = learners.recommendation()
    assert not learners.exploring.any() and (learners.active.sum(axis=1) == 1).all()
    for i in range(n):
        mine = [(d[i], s[i]) for d, s in batches if d[i].any()]
        sums = iter(s for _, s in mine)
        best, history = _plain_bai(
            k, subroutine, approx, delta, lambda arms, _n, sums=sums: dict(zip(arms, next(sums)[arms], strict=True))
        )
        assert best == rec[i], (subroutine, i)
        assert history == [int(d.max()) for d, _ in mine], (subroutine, i)
        assert learners.samples[i] == sum(int(d.sum()) for d, _ in mine)


@pytest.mark.parametrize("subroutine", SUBROUTINES)
def test_each_learner_is_pac(subroutine):
    """Every learner's recommendation is approx-optimal with probability >= 1 - delta: with 2000 learners the
    errors stay below delta N plus three binomial standard deviations (Bernoulli rewards)."""
    n, approx, delta = 2000, 0.1, 0.1
    mu = np.tile([0.6, 0.48, 0.45, 0.4], (n, 1))  # only arm 0 is within approx of the best
    rng = np.random.default_rng(5)
    learners = BestArmElimination(n, 4, subroutine, approx=approx, delta=delta, rng=np.random.default_rng(6))
    while learners.exploring.any():
        d = learners.demand()
        learners.update(rng.binomial(d, mu).astype(float), d, 0.25)
    errors = int((learners.recommendation() != 0).sum())
    assert errors <= delta * n + 3 * math.sqrt(n * delta * (1 - delta))


def test_a_too_small_radius_would_be_caught():
    """The PAC test has power: SE with a radius 20 times too small errs far more often than delta."""
    n, approx, delta = 2000, 0.01, 0.1
    mu = np.tile([0.6, 0.58], (n, 1))
    rng = np.random.default_rng(7)
    learners = BestArmElimination(n, 2, "se", approx=approx, delta=delta, rng=np.random.default_rng(8))
    while learners.exploring.any():
        d = learners.demand()
        learners.update(rng.binomial(d, mu).astype(float), d, 0.25 / 400)  # claims far less noise than there is
    assert (learners.recommendation() != 0).mean() > 2 * delta


def test_the_variance_proxy_scales_fixed_designs_and_radii():
    rng = np.random.default_rng(0)
    unit = BestArmElimination(3, 4, "naive", approx=0.1, delta=0.05, rng=rng)
    anon = BestArmElimination(3, 4, "naive", approx=0.1, delta=0.05, rng=rng, sigma2=(4 * 3 + 1) / 4)
    # (4 sigma2) times the samples, up to the ceiling
    assert anon.demand()[0, 0] == pytest.approx(13 * unit.demand()[0, 0], abs=13)
    se = BestArmElimination(1, 2, "se", approx=0.05, delta=0.05, rng=rng)
    assert se._two_radius(np.array([16.0]), 1.0)[0] == pytest.approx(2 * se._two_radius(np.array([16.0]), 0.25)[0])


def test_learners_take_exactly_what_they_asked_for():
    learners = BestArmElimination(2, 3, "se", approx=0.1, delta=0.1, rng=np.random.default_rng(0))
    d = learners.demand()
    with pytest.raises(ValueError, match="learner 0 asked for 1 samples of arm 0 and got 2"):
        learners.update(np.zeros(d.shape), d + (np.arange(3) == 0), 0.25)
    with pytest.raises(ConfigError):
        learners.update(np.zeros(d.shape), d, -1.0)


def test_stopped_learners_demand_nothing():
    n = 20
    mu = np.tile([0.9, 0.1, 0.1], (n, 1))
    mu[:10] = [0.5, 0.49, 0.48]  # these take much longer
    learners = BestArmElimination(n, 3, "se", approx=0.01, delta=0.1, rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    seen_partial = False
    while learners.exploring.any():
        d = learners.demand()
        stopped = ~learners.exploring
        assert not d[stopped].any()
        seen_partial |= bool(stopped.any() and learners.exploring.any())
        learners.update(rng.binomial(d, mu).astype(float), d, 0.25)
    assert seen_partial
    assert (learners.recommendation()[10:] == 0).all()


def _plain_dpse(k: int, confidence: float, served) -> int:
    """SE with DP-SE's epochs (epsilon = inf), one learner, from Sajed and Sheffet's Algorithm 1."""
    active, e = list(range(k)), 0
    while len(active) > 1:
        e += 1
        s = len(active)
        length = math.floor(32 * math.log(8 * s * e * e / confidence) * 4**e) + 1
        got = served(active, length)
        h = math.sqrt(math.log(8 * s * e * e / confidence) / (2 * length))
        best = max(got[a] / length for a in active)
        active = [a for a in active if best - got[a] / length <= 2 * h]
    return active[0]


def test_epoch_elimination_matches_a_plain_loop():
    n, k = 25, 4
    mu = np.random.default_rng(3).uniform(0.3, 0.7, size=(n, k))
    learners = EpochElimination(n, k, confidence=0.05)
    assert isinstance(learners, BatchLearner)
    batches = _run(learners, mu, np.random.default_rng(4))
    rec = learners.recommendation()
    for i in range(n):
        sums = iter(s[i] for d, s in batches if d[i].any())
        assert (
            _plain_dpse(k, 0.05, lambda arms, _n, sums=sums: dict(zip(arms, next(sums)[arms], strict=True))) == rec[i]
        )


def test_epoch_elimination_finds_clear_best_arms_and_epsilon_lengthens_epochs():
    n = 200
    mu = np.tile([0.8, 0.5, 0.4], (n, 1))
    rng = np.random.default_rng(9)
    learners = EpochElimination(n, 3, confidence=0.05)
    while learners.exploring.any():
        d = learners.demand()
        learners.update(rng.binomial(d, mu).astype(float), d, 0.25)
    assert (learners.recommendation() == 0).all()
    private = EpochElimination(1, 3, confidence=0.05, epsilon=0.01)
    assert private.demand()[0, 0] > EpochElimination(1, 3, confidence=0.05).demand()[0, 0]


def test_one_module_per_learner_family_and_the_old_path_exports_every_name():
    """``anonbandits.core.learners`` is a package, one module per learner family; its names are those the
    single module exported."""
    import importlib

    from anonbandits.core import learners

    homes = {
        "BatchLearner": "protocol",
        "UNIT_SIGMA2": "protocol",
        "BestArmElimination": "best_arm",
        "SUBROUTINES": "best_arm",
        "UGapEc": "ugapec",
        "BAI_SCHEMES": "ugapec",
        "EpochElimination": "epochs",
        "BaSEElimination": "batched_se",
    }
    assert sorted(learners.__all__) == sorted(homes)
    for name, module in homes.items():
        assert getattr(importlib.import_module(f"anonbandits.core.learners.{module}"), name) is getattr(learners, name)
