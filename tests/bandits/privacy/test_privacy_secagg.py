"""Secure aggregation: the ideal modular sum, and the masking and split-and-mix simulations that must give
the identical sum while each message alone looks uniform."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.errors import ConfigError
from anonbandits.privacy import complete_pairs, masked_messages, ring_pairs, secure_sum, split_and_mix


def test_secure_sum_equals_python_modular_sum_with_negative_messages():
    rng = np.random.default_rng(0)
    y = rng.integers(-(10**6), 10**6, size=5000)
    assert secure_sum(y, 229) == int(sum(int(v) for v in y)) % 229


def test_secure_sum_wraps_around_without_overflow():
    """Messages close to a huge modulus: their plain int64 sum would overflow; the result must not."""
    m = 2**61 - 1
    y = np.full(40, m - 3, dtype=np.int64)
    assert secure_sum(y, m) == (40 * (m - 3)) % m == m - 120


def test_secure_sum_of_empty_batch_is_zero():
    assert secure_sum(np.array([], dtype=np.int64), 17) == 0


@pytest.mark.parametrize("m", [1, 2**62, 3.5])
def test_bad_modulus_raises(m):
    with pytest.raises(ConfigError):
        secure_sum(np.array([1, 2]), m)


@pytest.mark.parametrize("graph", ["complete", "ring"])
def test_masked_messages_sum_to_the_ideal_sum(graph):
    rng = np.random.default_rng(1)
    n, m = 300, 33_699
    y = rng.integers(0, m, size=n)
    pairs = complete_pairs(n) if graph == "complete" else ring_pairs(n, 5)
    masked = masked_messages(y, m, rng, pairs)
    assert masked.shape == (n,)
    assert np.all((masked >= 0) & (masked < m))
    assert secure_sum(masked, m) == secure_sum(y, m)
    assert np.count_nonzero(masked != y) > n - 5  # the messages themselves are hidden


def test_a_masked_message_is_uniform_whatever_the_input():
    """User 0's masked message is uniform on Z_m even though her input is always the same value."""
    rng = np.random.default_rng(2)
    m, reps = 13, 6500
    first = np.array([masked_messages(np.array([7, 0, 3, 5]), m, rng)[0] for _ in range(reps)])
    counts = np.bincount(first, minlength=m)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_ring_pairs_are_distinct_and_validated():
    i, j = ring_pairs(20, 4)
    pairs = {tuple(sorted(p)) for p in zip(i.tolist(), j.tolist(), strict=True)}
    assert len(pairs) == i.size == 80
    with pytest.raises(ConfigError):
        ring_pairs(8, 4)


def test_complete_pairs_count():
    i, j = complete_pairs(7)
    assert i.size == 21 and np.all(i < j)


def test_masking_refuses_overflowing_masks():
    with pytest.raises(ConfigError):
        masked_messages(np.arange(4), 2**61, np.random.default_rng(0))


@pytest.mark.parametrize("shares", [1, 3, 6])
def test_split_and_mix_preserves_the_sum(shares):
    rng = np.random.default_rng(3)
    m = 4337
    y = rng.integers(-50, 5000, size=200)
    mixed = split_and_mix(y, m, shares, rng)
    assert mixed.size == 200 * shares
    assert secure_sum(mixed, m) == secure_sum(y, m)


def test_split_and_mix_shares_are_uniform():
    rng = np.random.default_rng(4)
    m = 11
    mixed = np.concatenate([split_and_mix(np.zeros(50, dtype=np.int64), m, 2, rng) for _ in range(100)])
    assert stats.chisquare(np.bincount(mixed, minlength=m)).pvalue > 1e-3
