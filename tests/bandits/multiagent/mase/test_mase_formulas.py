"""Closed forms of paper 003 against values derived from its formulas (Sec. 4-5), and the kernel's safe-stretch
bound."""

import math

import numpy as np
import pytest

from anonbandits.core.compiled import se_boundary as compiled_boundary
from anonbandits.core.radii import dpse_widths, se_boundary
from anonbandits.core.schedules import epoch_length
from anonbandits.errors import ConfigError
from anonbandits.multiagent.mase.model import eta_xi, voting_threshold
from anonbandits.multiagent.mase.se_kernel import safe_steps


@pytest.mark.parametrize("local, expected", [(0.3, 3), (0.5, 5), (0.8, 14), (0.9, 29), (0.8413, 18), (0.7419, 11)])
def test_voting_thresholds_match_derived_table(local, expected):
    assert voting_threshold(0.05, local, 1000) == expected


def test_real_thresholds_over_eta_grid():
    got = [math.log(0.05) / math.log(eta) for eta in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)]
    assert np.allclose(got, [4.32, 5.86, 8.40, 13.43, 28.43, 58.40], atol=0.006)


def test_eta_xi_and_its_limits():
    assert [round(eta_xi(0.9, xi, 10), 4) for xi in (0.0, 0.05, 0.1)] == [0.9, 0.8413, 0.7419]
    assert eta_xi(0.9, 0.225, 10) > 0
    with pytest.raises(ConfigError, match="xi must be below 0.2257"):
        eta_xi(0.9, 0.23, 10)
    with pytest.raises(ConfigError, match="exceeds the 20 agents"):
        voting_threshold(0.05, 0.9, 20)


@pytest.mark.parametrize(
    "eps, cells",
    [
        (0.05, [(1, 10, 1403, 0.210, 0.0143), (2, 2, 2662, 0.123, None), (3, 2, 11598, 0.048, None)]),
        (0.10, [(1, 10, 702, 0.245, 0.0143), (2, 2, 2485, 0.096, None), (3, 2, 11598, 0.040, None)]),
        (0.25, [(1, 10, 650, 0.179, 0.0062), (2, 2, 2485, 0.076, None), (3, 2, 11598, 0.035, None)]),
        (0.50, [(1, 10, 650, 0.152, 0.0031), (2, 2, 2485, 0.069, None), (3, 2, 11598, 0.033, None)]),
    ],
)
def test_dp_mase_epoch_quantities_match_derived_table(eps, cells):
    for e, s, length, threshold, scale in cells:
        r = epoch_length(s, e, 0.5, eps)
        h, c = dpse_widths(s, e, r, 0.5, eps)
        assert r == length
        assert abs(2 * (h + c) - threshold) < 0.0006
        if scale is not None:
            assert abs(1 / (eps * r) - scale) < 0.00006


def test_first_epoch_length_over_beta():
    assert [epoch_length(10, 1, b, 0.5) for b in (0.3, 0.5, 0.8)] == [716, 650, 590]


def test_epoch_length_makes_both_widths_at_most_an_eighth_of_the_gap():
    rng = np.random.default_rng(0)
    e = rng.integers(1, 8, 500)
    s = rng.integers(1, 20, 500)
    eps = rng.uniform(0.01, 2, 500)
    beta = rng.uniform(0.01, 0.99, 500)
    for i in range(500):
        r = epoch_length(s[i], e[i], beta[i], eps[i])
        h, c = dpse_widths(s[i], e[i], r, beta[i], eps[i])
        assert h <= 2.0 ** -e[i] / 8 + 1e-12 and c <= 2.0 ** -e[i] / 8 + 1e-12


@pytest.mark.parametrize(
    "conf, crossings",
    [(0.9, (1733, 354, 136)), (0.8413, (1740, 356, 137)), (0.7419, (1755, 360, 139)), (0.05, (2056, 437, 174))],
)
def test_se_crossing_times_match_derived_table(conf, crossings):
    t = np.arange(1, 5000)
    g = se_boundary(t, 10, conf)
    got = [int(t[np.argmax(gap * t >= g)]) for gap in (0.2, 0.4, 0.6)]
    assert tuple(got) == crossings
    # the alternatives of the width's lost constants: denominator 2t, and c = 4
    if conf == 0.9:
        assert int(t[np.argmax(0.2 * t >= se_boundary(t, 10, 0.9, denominator=2))]) == 788
        assert int(t[np.argmax(0.2 * t >= se_boundary(t, 10, 0.9, c=4.0))]) == 1889


def test_safe_steps_never_allow_a_crossing():
    """Within the returned number of steps, even the worst-case path (+1 per step) stays below g."""
    rng = np.random.default_rng(1)
    t = rng.integers(1, 3000, 4000)
    g_now = se_boundary(t, 10, 0.3)
    spread = np.floor(g_now * rng.uniform(0, 1.2, t.size))
    table = np.array([0.0, *se_boundary(np.arange(1, 1000), 10, 0.3)])  # the kernel's table, then the formula
    b = np.array([safe_steps(float(s), int(u), table, 10, 0.3, 1.0, 1) for s, u in zip(spread, t, strict=True)])
    assert b.max() > 50 and (b == 0).any()
    for i in np.flatnonzero(b > 0)[:400]:
        steps = np.arange(1, b[i] + 1)
        assert np.all(spread[i] + steps < se_boundary(t[i] + steps, 10, 0.3))
    # one more step would be unsafe for the simple bound when the boundary grows slower than the path
    tight = np.flatnonzero((b > 0) & (t > 100))[:200]
    assert np.any(spread[tight] + b[tight] + 1 >= se_boundary(t[tight] + b[tight] + 1, 10, 0.3))
    # the compiled boundary is the formula itself, including the t vs 2t and c options
    for c, d in ((1.0, 1), (4.0, 2)):
        assert np.array_equal(
            [compiled_boundary(int(u), 10, 0.3, c, d) for u in t[:200]], se_boundary(t[:200], 10, 0.3, c, d)
        )
