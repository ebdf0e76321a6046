"""What the privacy layer refuses, in one line naming the argument (issue 31): limits past which the samplers'
integer draws would overflow, arrays of the wrong shape or range, and the protocols' and mechanisms' arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonbandits.errors import ConfigError
from anonbandits.privacy import (
    analyze,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_gaussian_sum,
    discrete_laplace,
    discrete_laplace_radius,
    dist_rdp_se_rdp,
    masked_messages,
    polya,
    pure_dp_to_rdp,
    randomized_round,
    rdp_to_dp,
    ring_pairs,
    secure_sum,
    skellam,
    split_and_mix,
)
from anonbandits.privacy.mechanisms import CentralLaplace, Distributed, NoisyRelease, laplace_noise
from anonbandits.privacy.protocols import PROTOCOLS, BatchParams, Protocol
from anonbandits.privacy.samplers import MAX_DISCRETE_GAUSSIAN_SIGMA, MAX_GEOMETRIC_SCALE, MAX_SKELLAM_VARIANCE


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _refused(match: str):
    return pytest.raises(ConfigError, match=match)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: discrete_laplace(2.0 * MAX_GEOMETRIC_SCALE, 3, rng()), "scale"),
        (lambda: polya(1e30, 0.5, 3, rng()), "r"),
        (lambda: skellam(0, 2.0 * MAX_SKELLAM_VARIANCE, 3, rng()), "var"),
        (lambda: discrete_gaussian(2.0 * MAX_DISCRETE_GAUSSIAN_SIGMA, 3, rng()), "sigma"),
        (lambda: discrete_gaussian_pmf(1e300), "sigma"),
        (lambda: discrete_gaussian_sum(1e30, 4, 3, rng()), "sigma"),
        (lambda: discrete_gaussian_sum(1000.0, 10**7, 10**6, rng()), "size"),
    ],
)
def test_samplers_refuse_parameters_whose_draws_would_overflow_or_not_end(call, name):
    with _refused(rf"^{name} "):
        call()


def test_the_limits_are_not_refused_below_them():
    assert polya(1e30, 0.0, 3, rng()).tolist() == [0, 0, 0]  # beta = 0: the mean is 0 whatever r
    assert discrete_gaussian_sum(1.0, 0, 2, rng()).tolist() == [0, 0]  # n = 0 users, as documented
    assert discrete_laplace(1e15, 2, rng()).dtype == np.int64


def test_accounting_refuses_curves_of_the_wrong_shape_and_survives_a_huge_scale():
    with _refused("^rdp must be a curve of 3 values"):
        rdp_to_dp(np.array([1.0, 1.0]), 1e-6, np.array([2.0, 3.0, 4.0]))
    with _refused("^rdp must be"):
        rdp_to_dp(lambda a: np.full(2, np.nan), 1e-6, np.array([2.0, 3.0]))
    with _refused("^epsilon and alpha must broadcast together"):
        pure_dp_to_rdp(np.array([0.1, 0.2, 0.3]), np.array([2.0, 3.0]))
    assert np.all(np.isfinite(dist_rdp_se_rdp(np.array([2.0]), 1.0, 1e300)))


def test_tail_radii_take_a_probability_of_one_as_documented():
    assert discrete_laplace_radius(2.0, 1.0) == pytest.approx(2.0 * math.log(2.0))


def test_secure_aggregation_refuses_what_int64_cannot_hold_and_names_yhat():
    for call in (lambda: secure_sum([2**63], 10), lambda: split_and_mix([2**63], 10, 2, rng())):
        with _refused("^messages must be an integer or an array of integers, each of at most 2"):
            call()
    with _refused(r"^yhat \(the SecAgg outputs\) must lie in \{0, \.\.\., m-1\} for m = 47"):
        analyze(np.array([5, 47]), 10, 4, 3, 47)
    with _refused("^m must be an integer in"):
        analyze(np.array([5]), 10, 4, 3, 10**30)


def test_masking_refuses_pairs_that_do_not_index_the_messages_and_too_many_users_to_pair():
    with _refused(r"^pairs must be two 1-D integer arrays of one length, entries in \[0, 3\)"):
        masked_messages(np.array([1, 2, 3]), 11, rng(), (np.array([0, 1]), np.array([1, 3])))
    with _refused("^messages must be at most MAX_PAIRED_USERS"):
        masked_messages(np.zeros(10_001, dtype=np.int64), 11, rng())
    with _refused("degree must be at most MAX_DRAWS / n"):
        ring_pairs(10**8, 10**6)


def test_randomized_rounding_names_x():
    with _refused(r"^x must have every value in \[0, 1\] \(clip rewards first\), got array\(\[1\.5\]\)"):
        randomized_round(np.array([1.5]), 4, rng())


def test_laplace_noise_refuses_scales_that_do_not_fill_the_size():
    with _refused(r"^scale must broadcast to size 3, got an array of shape \(2,\)"):
        laplace_noise(np.array([1.0, 2.0]), rng(), 3)
    assert laplace_noise(np.array([1.0, 2.0]), rng(), (4, 2)).shape == (4, 2)


def test_noisy_release_refuses_ragged_and_nan_arrays():
    with _refused("^values must be a number or an array of numbers"):
        NoisyRelease([[1, 2], [3]], None, {})
    with _refused("^noise must be a number or an array of numbers"):
        NoisyRelease(np.array([1.0]), np.array([np.nan]), {})


def test_central_laplace_releases_a_matrix_of_sums_in_its_shape_with_the_same_draws():
    sums = np.arange(6.0).reshape(2, 3)
    matrix = CentralLaplace(1.0).release(sums, np.ones((2, 3), dtype=np.int64), rng())
    flat = CentralLaplace(1.0).release(sums.ravel(), np.ones(6, dtype=np.int64), rng())
    assert matrix.values.shape == (2, 3) and np.array_equal(matrix.noise.ravel(), flat.noise)


def test_distributed_release_refuses_impossible_sums_and_foreign_parameters():
    mechanism = Distributed(PROTOCOLS["dist-dp-se"](1.0, 0.1))
    with _refused(r"^sums must be encoded sums in \[0, contributors g = 40\]"):
        mechanism.release(np.array([12, 41]), 10, rng())
    with _refused("^params must be None or the BatchParams of 10 users"):
        mechanism.release(np.array([12]), 10, rng(), params=mechanism.protocol.batch_params(16))
    with _refused(r"^rewards must have the shape of sums \(2,\)"):
        mechanism.release_rewards(np.array([3.0, 4.0]), np.array([10]), rng())
    with _refused(r"^sums must be integers from 0 to rewards"):
        mechanism.release_rewards(np.array([3.0, 11.0]), np.array([10, 10]), rng())
    with _refused("^protocol must be a protocol of anonbandits.privacy.protocols.PROTOCOLS, got array"):
        Distributed(np.zeros((2, 2, 2)))


def test_batch_params_check_their_own_consistency():
    with _refused(r"^m must be at least n g \+ 2 tau \+ 1 = 45, got 44"):
        BatchParams(10, 4, 2, 44)
    with _refused("^n must be an integer from 1 to"):
        BatchParams(True, 4, 2, 64)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_every_protocol_checks_the_arguments_of_its_own_methods(name):
    protocol: Protocol = PROTOCOLS[name](1.0, 0.1, 2.0)
    bp = protocol.batch_params(16)
    with _refused("^bp must be the BatchParams of a batch"):
        protocol.user_noise((16, 4, 12, 89), rng())
    with _refused("^count must be an integer from 0 to"):
        protocol.aggregate_noise(bp, -1, rng())
    with _refused("^g must be an integer from 1 to"):
        protocol.accuracy(16, 1.5)
    with _refused(r"^p must be in \(0, 1\]"):
        protocol.radius(16, 2, 1, 0.0)
    with _refused("^secagg must be one of ideal, masked, split-and-mix"):
        protocol.secure(np.zeros(16, dtype=np.int64), bp, "tls", rng())
    with _refused(r"^messages must be the batch's 16 messages, each in \[0, m"):
        protocol.secure(np.full(16, bp.m), bp, "ideal", rng())
    with _refused(r"^xhat must be the batch's 16 encodings"):
        protocol.release_users(np.full(16, bp.g + 1), bp, "ideal", rng())
    with _refused(r"^encoded must be sums in \[0, n g"):
        protocol.release_sums(np.array([bp.n * bp.g + 1]), bp, rng())
    with _refused("^batch_sizes must be a sequence of batch sizes"):
        protocol.privacy([16, 0], 1e-6)
