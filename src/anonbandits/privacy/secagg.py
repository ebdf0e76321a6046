"""Secure aggregation as a modular sum, and two simulations that must give the identical sum.

* :func:`secure_sum`: the ideal functionality of SecAgg (spec distributed-dp.md, Sec. 2.2): the server
  learns ``(sum_i y_i) mod m`` and nothing else. Exact integer arithmetic with intermediate reductions, so
  no overflow whatever ``n`` and ``m < 2^62``.
* :func:`masked_messages`: pairwise additive masking (Bonawitz et al. 2017, without the cryptography). Each
  pair ``(i, j)`` of a masking graph shares a uniform mask ``r_ij`` in Z_m; user i adds it, user j subtracts
  it. Every message alone is uniform on Z_m, and the masks cancel in the modular sum.
  :func:`complete_pairs` is the original all-pairs graph, :func:`ring_pairs` a sparse ring graph in the
  spirit of SecAgg+ for large batches.
* :func:`split_and_mix`: the shuffle stand-in of Sec. 3.4: each user splits ``y_i`` into ``k`` uniform
  additive shares mod m and all ``n k`` shares are shuffled; their modular sum is the ideal sum (q = 0).

These simulations are demonstrations of the semantics only, with no real cryptography.
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import ConfigError

_INT64_SAFE = 2**62


def _check_modulus(m: int) -> int:
    if int(m) != m or not 2 <= m < _INT64_SAFE:
        raise ConfigError(f"modulus m must be an integer in [2, 2^62), got {m!r}")
    return int(m)


def secure_sum(messages: np.ndarray, m: int) -> int:
    """``(sum of messages) mod m`` as a Python int; any integer messages (negative ones too) are allowed."""
    m = _check_modulus(m)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    chunk = max(1, (2**63 - 1) // m - 1)  # a chunk of residues sums to less than 2^63
    total = 0
    for start in range(0, y.size, chunk):
        total = (total + int(y[start:start + chunk].sum()) % m) % m
    return total


def complete_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of ``n`` users (the masking graph of Bonawitz et al. 2017)."""
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.int64), j.astype(np.int64)


def ring_pairs(n: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, i + k mod n)`` for ``k = 1..degree``: each user masks with ``2 degree`` neighbours.

    Requires ``2 degree < n`` so that every unordered pair appears at most once.
    """
    if not 1 <= degree or 2 * degree >= n:
        raise ConfigError(f"ring masking needs 1 <= degree < n/2, got degree={degree}, n={n}")
    i = np.repeat(np.arange(n, dtype=np.int64), degree)
    k = np.tile(np.arange(1, degree + 1, dtype=np.int64), n)
    return i, (i + k) % n


def masked_messages(messages: np.ndarray, m: int, rng: np.random.Generator,
                    pairs: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """What each user sends under pairwise masking: ``(y_i + sum_{(i,j)} r_ij - sum_{(j,i)} r_ji) mod m``.

    ``pairs`` defaults to :func:`complete_pairs`. ``secure_sum`` of the result equals ``secure_sum`` of
    ``messages`` exactly.
    """
    m = _check_modulus(m)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    i, j = complete_pairs(y.size) if pairs is None else pairs
    if i.size:
        per_user = max(np.bincount(i, minlength=y.size).max(), np.bincount(j, minlength=y.size).max())
        if int(per_user + 1) * m >= 2**63:
            raise ConfigError("too many masks per user for this modulus; use ring_pairs with a smaller degree")
    masks = rng.integers(0, m, size=i.size, dtype=np.int64)
    out = y.copy()
    np.add.at(out, i, masks)
    minus = np.zeros_like(out)
    np.add.at(minus, j, masks)
    return np.mod(np.mod(out, m) - np.mod(minus, m), m)


def split_and_mix(messages: np.ndarray, m: int, shares: int, rng: np.random.Generator) -> np.ndarray:
    """Split each ``y_i`` into ``shares`` uniform additive shares mod m and shuffle all of them together.

    Returns the shuffled multiset (length ``n * shares``); the analyzer computes its ``secure_sum``.
    """
    m = _check_modulus(m)
    if int(shares) != shares or shares < 1:
        raise ConfigError(f"shares must be a positive integer, got {shares!r}")
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    parts = rng.integers(0, m, size=(y.size, int(shares)), dtype=np.int64)
    last = y
    for col in parts[:, :-1].T:
        last = np.mod(last - col, m)
    parts[:, -1] = last
    return rng.permutation(parts.ravel())
