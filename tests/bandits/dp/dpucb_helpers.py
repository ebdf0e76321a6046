"""Checks shared by the tests of the paper-001 algorithms (anonbandits.dp)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from anonbandits.dp import Ledger


def exact_sums(mu: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Deterministic "rewards": every reward equals its mean (dyadic means keep the sums exact in floats)."""
    return np.asarray(mu, dtype=float) * np.asarray(counts)


def check_ledger(ledger: Ledger, pulls: np.ndarray, experts: bool = False) -> None:
    """Each block fed at most one release, and each release's true sums are exactly its blocks' sums."""
    block_release = np.asarray(ledger.block_release)
    block_arm = np.asarray(ledger.block_arm)
    block_count = np.asarray(ledger.block_count)
    noise_release = np.asarray(ledger.noise_release)
    noise_arm = np.asarray(ledger.noise_arm)
    noise_sum = np.asarray(ledger.noise_true_sum)
    assert block_release.min() >= -1
    for rid in range(ledger.releases):
        fed = np.flatnonzero(block_release == rid)
        assert fed.size >= 1
        rows = np.flatnonzero(noise_release == rid)
        if experts:
            assert fed.size == 1 and block_arm[fed[0]] == -1
            np.testing.assert_array_equal(noise_sum[rows], ledger.block_sum[fed[0]])
        else:
            assert rows.size == 1 and set(block_arm[fed]) == {noise_arm[rows[0]]}
            assert noise_sum[rows[0]] == sum(float(ledger.block_sum[b]) for b in fed)
    if experts:
        assert block_count.sum() <= pulls.sum()
    else:
        for arm in range(pulls.size):
            assert block_count[block_arm == arm].sum() <= pulls[arm]


def assert_standard_laplace(z: np.ndarray) -> None:
    """``z`` looks like i.i.d. Lap(1): E|Z| = 1 (sd 1) within 4 standard errors, and a KS test."""
    z = np.asarray(z, dtype=float)
    assert z.size >= 200
    assert abs(np.abs(z).mean() - 1.0) < 4.0 / np.sqrt(z.size)
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
