"""Honest privacy (issue 31, item 3): a mechanism's label is the noise it adds.

Constructors refuse what would make them differ (one line naming the argument and the value), extreme but valid
epsilons are refused in one line (never an OverflowError, ZeroDivisionError or numpy ValueError), conversions to
(epsilon, delta) never report a negative epsilon, a parameter without effect is refused, and the noise each
mechanism realises has the scale its label claims (fixed seeds; each tolerance fails for a scale 10% off).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import anonbandits
from anonbandits.errors import ConfigError
from anonbandits.privacy import accounting
from anonbandits.privacy.mechanisms import CentralLaplace, Distributed
from anonbandits.privacy.protocols import MAX_MODULUS, PROTOCOLS, Protocol
from anonbandits.results import Result
from anonbandits.validation import EPSILON_MAX, EPSILON_MIN

BAD_EPSILONS = [
    0,
    0.0,
    -1,
    -1e-9,
    float("nan"),
    float("inf"),
    -float("inf"),
    True,
    False,
    np.bool_(True),
    "1",
    None,
    1e300,
    1e-300,
    EPSILON_MAX * 1.01,
    EPSILON_MIN / 1.01,
]


def _one_line(exc: pytest.ExceptionInfo, *words: str) -> None:
    message = str(exc.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_central_laplace_refuses_a_bad_epsilon(epsilon):
    with pytest.raises(ConfigError) as exc:
        CentralLaplace(epsilon)
    _one_line(exc, "epsilon", repr(epsilon))


@pytest.mark.parametrize("sensitivity", [0, 0.0, -1.0, float("nan"), float("inf"), True, "1", None], ids=repr)
def test_central_laplace_refuses_a_bad_sensitivity(sensitivity):
    with pytest.raises(ConfigError) as exc:
        CentralLaplace(1.0, sensitivity)
    _one_line(exc, "sensitivity", repr(sensitivity))


@pytest.mark.parametrize("epsilon, sensitivity", [(EPSILON_MIN, 1e300), (EPSILON_MAX, 1e-320)])
def test_central_laplace_refuses_a_scale_whose_variance_overflows_or_vanishes(epsilon, sensitivity):
    with pytest.raises(ConfigError) as exc:
        CentralLaplace(epsilon, sensitivity)
    _one_line(exc, "sensitivity / epsilon")


@pytest.mark.parametrize("epsilon", [EPSILON_MIN, 1e-3, 1.0, EPSILON_MAX])
def test_central_laplace_runs_across_the_range_with_its_label(epsilon):
    mechanism = CentralLaplace(epsilon)
    release = mechanism.release(np.zeros(3), 3, np.random.default_rng(0))
    assert np.all(np.isfinite(release.values)) and release.accounting["epsilon"] == epsilon
    assert np.all(np.isfinite(mechanism.variance(np.ones(2)))) and mechanism.variance(np.ones(1))[0] > 0


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_protocols_refuse_a_bad_epsilon(name, epsilon):
    with pytest.raises(ConfigError) as exc:
        PROTOCOLS[name](epsilon, 0.1)
    _one_line(exc, "epsilon", repr(epsilon))


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"tau_confidence": 0}, "tau_confidence"),
        ({"tau_confidence": float("nan")}, "tau_confidence"),
        ({"tau_confidence": True}, "tau_confidence"),
        ({"tau_confidence": 1.5}, "tau_confidence"),
        ({"scale": 0.5}, "scale"),
        ({"scale": float("inf")}, "scale"),
        ({"scale": float("nan")}, "scale"),
        ({"scale": True}, "scale"),
    ],
)
def test_protocols_refuse_bad_confidence_and_scale(kwargs, word):
    with pytest.raises(ConfigError) as exc:
        PROTOCOLS["dist-rdp-se"](**{"epsilon": 1.0, "tau_confidence": 0.1, **kwargs})
    _one_line(exc, word)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_protocols_refuse_a_batch_whose_modulus_overflows(name):
    protocol = PROTOCOLS[name](EPSILON_MAX, 0.1)
    with pytest.raises(ConfigError) as exc:
        protocol.batch_params(10**12)  # g = 10^12: n g = 10^24
    _one_line(exc, "epsilon", "2^62", str(10**12))
    assert protocol.batch_params(100).m <= MAX_MODULUS
    if name in ("dist-rdp-se", "dist-cdp-se"):  # their scale multiplies g
        with pytest.raises(ConfigError) as exc:
            PROTOCOLS[name](EPSILON_MAX, 0.1, 1e12).batch_params(100)
        _one_line(exc, "epsilon", "scale", "2^62")


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@pytest.mark.parametrize("epsilon", [EPSILON_MIN, EPSILON_MAX])
def test_protocols_compute_exactly_at_the_ends_of_the_range(name, epsilon):
    bp = PROTOCOLS[name](epsilon, 1e-6).batch_params(10_000)
    assert 0 < bp.m <= MAX_MODULUS and bp.m == bp.n * bp.g + 2 * bp.tau + 1


def test_distributed_refuses_what_is_not_a_protocol():
    with pytest.raises(ConfigError) as exc:
        Distributed(1.0)
    _one_line(exc, "protocol", "1.0")


# -- extreme epsilons through simulate: refused in one line, never an arithmetic error ----------------------

ANONYMOUS = {"users": 40, "arms": 2, "C": 2, "horizon": 4000}
EXTREME_RUNS = [
    ("anon-batched", {**ANONYMOUS, "privacy": "central"}),
    ("anon-etc", {**ANONYMOUS, "privacy": "distributed"}),
    *((name, {"horizon": 4000}) for name in sorted(PROTOCOLS)),
    ("dp-se", {"horizon": 4000}),
    ("dp-mase", {}),
]


@pytest.mark.parametrize("epsilon", [1e300, 1e-300, True])
@pytest.mark.parametrize("name, params", EXTREME_RUNS, ids=[n for n, _ in EXTREME_RUNS])
def test_extreme_epsilons_are_refused_in_one_line(name, params, epsilon):
    with pytest.raises(ConfigError) as exc:
        anonbandits.simulate(name, seed=0, epsilon=epsilon, **params)
    _one_line(exc, "epsilon", repr(epsilon))


@pytest.mark.parametrize("name", ["dist-cdp-se", "ldp-se"])
def test_the_smallest_epsilon_runs_with_its_label(name):
    result = anonbandits.simulate(name, seed=0, epsilon=EPSILON_MIN, horizon=2000)
    assert result.metrics["privacy_epsilon"] >= EPSILON_MIN * (1 - 1e-9)


def test_epsilon_without_effect_is_refused():
    with pytest.raises(ConfigError) as exc:
        anonbandits.simulate("se", seed=0, epsilon=0.5, horizon=2000)
    _one_line(exc, "--epsilon", "--channel anonymous")
    anonbandits.simulate("se", seed=0, horizon=2000)  # the default is no epsilon at all


# -- conversions never report epsilon < 0 ------------------------------------------------------------------


def test_rdp_to_dp_reports_the_tightest_valid_epsilon_and_warns():
    with pytest.warns(accounting.TrivialGuaranteeWarning, match="delta = 0.5 makes"):
        eps = accounting.rdp_to_dp(lambda a: 1e-6 * a, 0.5)
    assert eps == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert accounting.rdp_to_dp(lambda a: 0.5 * a, 1e-6) > 0  # an ordinary one: no warning


def test_zcdp_to_dp_is_never_negative():
    with pytest.warns(accounting.TrivialGuaranteeWarning):
        assert accounting.zcdp_to_dp(1e-8, 0.9) == 0.0


@pytest.mark.parametrize(
    "name, params",
    [
        ("dist-cdp-se", {"epsilon": 0.01, "dp_delta": 0.5, "horizon": 2000}),
        (
            "anon-batched",
            {**ANONYMOUS, "privacy": "distributed", "shares": "skellam", "epsilon": 0.01, "dp_delta": 0.1},
        ),
    ],
)
def test_runs_with_a_trivial_delta_report_epsilon_zero_and_say_so(name, params):
    with pytest.warns(accounting.TrivialGuaranteeWarning):
        result = anonbandits.simulate(name, seed=0, **params)
    assert result.metrics["privacy_epsilon"] == 0.0
    assert result.metrics["privacy_delta"] > 0
    if name == "dist-cdp-se":
        assert "trivial" in result.info["privacy_note"]


@pytest.mark.parametrize("metric", ["privacy_epsilon", "privacy_epsilon_per_user", "privacy_delta"])
def test_result_refuses_a_negative_privacy_metric(metric):
    with pytest.raises(ValueError, match="never negative"):
        Result({metric: -0.105})
    assert Result({metric: 0.0}).metrics[metric] == 0.0


def test_min_group_size_is_documented_as_at_least_c():
    from anonbandits.results import metric

    assert "at least C:" in metric("min_group_size").meaning
    assert "at least C + 1" not in metric("min_group_size").meaning


# -- every released value's label against its realised noise ----------------------------------------------

DRAWS = 40_000


def _laplace_scale_ok(noise: np.ndarray, scale: float) -> bool:
    """Mean |noise| estimates a Laplace scale (its sd is scale/sqrt(n): 0.5% here); 3% fails a 10% error."""
    return abs(float(np.mean(np.abs(noise))) / scale - 1) < 0.03 and abs(float(np.mean(noise))) < 0.05 * scale


@pytest.mark.parametrize("epsilon, sensitivity", [(0.5, 1.0), (2.0, 1.0), (1.0, 3.0), (1e-3, 1.0)])
def test_central_laplace_noise_has_the_labelled_scale(epsilon, sensitivity):
    mechanism = CentralLaplace(epsilon, sensitivity)
    sums = np.random.default_rng(1).integers(0, 50, DRAWS).astype(float)
    release = mechanism.release(sums, np.full(DRAWS, 50), np.random.default_rng(2))
    label = release.accounting
    noise = release.values - sums
    assert np.allclose(noise, release.noise)
    assert label["epsilon"] == epsilon and label["scale"] == sensitivity / epsilon
    assert _laplace_scale_ok(noise, sensitivity / label["epsilon"])
    assert not _laplace_scale_ok(noise, 1.1 * sensitivity / label["epsilon"])  # the check can fail
    assert not _laplace_scale_ok(noise, sensitivity / label["epsilon"] / 1.1)


def _labelled_variance(protocol: Protocol, n: int) -> float:
    """The variance of a release's noise in reward units that the protocol's epsilon implies (from its label,
    not from the mechanism's own formula): a two-sided geometric ``Lap_Z(g/eps')`` in total (per user for the
    local model), or ``(g/eps)^2`` for the Skellam and discrete Gaussian totals."""
    bp = protocol.batch_params(n)
    if protocol.name in ("dist-rdp-se", "dist-cdp-se"):
        return (bp.g / protocol.epsilon) ** 2 / bp.g**2
    beta = math.exp(-protocol.epsilon * protocol.share / bp.g)
    one = 2 * beta / (1 - beta) ** 2
    return (n if protocol.name == "ldp-se" else 1) * one / bp.g**2


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_distributed_noise_has_the_labelled_variance(name, epsilon):
    n, draws = 16, 20_000
    protocol = PROTOCOLS[name](epsilon, 1e-9)  # tau so wide that no release wraps: noise = values - sums
    mechanism = Distributed(protocol)
    sums = np.random.default_rng(3).binomial(n, 0.5, draws).astype(float)
    release = mechanism.release_rewards(sums, np.full(draws, n), np.random.default_rng(4))
    noise = release.values - sums
    claimed = _labelled_variance(protocol, n)
    assert abs(float(noise.var()) / claimed - 1) < 0.06, (float(noise.var()), claimed)
    assert abs(float(noise.var()) / (1.21 * claimed) - 1) > 0.06  # a 10% scale error is caught
    assert abs(float(noise.mean())) < 4 * math.sqrt(claimed / draws)
    assert np.allclose(mechanism.variance(np.array([n])), claimed, rtol=0.02), "the learners' variance"


@pytest.mark.parametrize("name", ["dp_se", "anytime_lazy_ucb", "ftnl"])
def test_single_learner_releases_have_the_labelled_laplace_scale(name):
    """The release ledger of paper 001's algorithms: each noisy sum's scale is the label's 1/epsilon (rewards in
    [0, 1]), and the noise drawn has that scale (pooled over seeds)."""
    import anonbandits.dp as dp

    epsilon, noise, scales = 0.5, [], []
    for seed in range(1000):
        ledger = getattr(dp, name)(
            means=[0.9, 0.8, 0.7], epsilon=epsilon, horizon=20_000, rng=np.random.default_rng(seed)
        ).info["ledger"]
        noise += list(ledger.noise_value)
        scales += list(ledger.noise_scale)
        if len(noise) >= 3000:
            break
    assert len(noise) >= 3000
    assert np.allclose(scales, 1 / epsilon)
    assert _laplace_scale_ok(np.asarray(noise), 1 / epsilon)
    assert not _laplace_scale_ok(np.asarray(noise), 1.1 / epsilon)
