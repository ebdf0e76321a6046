"""Secure aggregation and the analyzer of paper 004 (Chowdhury and Zhou, ICLR 2023; docs/distributed-dp.md).

* :func:`secure_sum` is SecAgg's ideal functionality (the server learns ``(sum_i y_i) mod m`` only);
  :func:`masked_messages` (pairwise masking, Bonawitz et al. 2017, on the graph of :func:`complete_pairs` or
  :func:`ring_pairs`) and :func:`split_and_mix` (the shuffle stand-in) simulate it with no real cryptography
  and must give the identical sum.
* :func:`modulus` is the smallest modulus for which :func:`analyze`, the analyzer with underflow correction, is
  exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import (
    COUNT,
    INT_ARRAY,
    MAX_DRAWS,
    MAX_PAIRED_USERS,
    NONNEGATIVE_COUNT,
    RNG,
    Rule,
    checks,
    int_at_least,
    int_between,
    is_integer,
)

#: a modulus: the int64 arithmetic of the sums and masks holds any modulus below 2^62
_MODULUS = Rule(lambda v: is_integer(v) and 2 <= v < 2**62, "an integer in [2, 2^62)")


def _check_modulus(m: int) -> int:
    """The body's own check of ``m``, for the trusted calls the decorator does not check."""
    require(int(m) == m and 2 <= m < 2**62, "modulus m", "an integer in [2, 2^62)", m)
    return int(m)


@checks(messages=INT_ARRAY, m=_MODULUS)
@fill
def secure_sum(messages: np.ndarray, m: int) -> int:
    """``(sum of messages) mod m`` as a Python int: secure aggregation's ideal functionality.

    Any integer messages (negative ones too, each of at most 2^62 in absolute value) are allowed. Exact integer
    arithmetic with intermediate reductions, so no overflow whatever the number of messages and ``m < 2^62``.

    Parameters
    ----------
    messages : array_like of int
        The users' messages.
    m : int
        The modulus, an integer in [2, 2^62).

    Returns
    -------
    int
        The sum modulo ``m``, in {0, ..., m-1}.

    Raises
    ------
    ConfigError
        If ``messages`` is not an integer or an array of integers (of at most 2^62 in absolute value; bools,
        floats and text are refused) or ``m`` is not an integer in [2, 2^62).

    {{refs_bonawitz2017_paper004}}

    Examples
    --------
    >>> secure_sum([5, -1, 7], 10)
    1
    """
    m = _check_modulus(m)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    chunk = max(1, (2**63 - 1) // m - 1)  # a chunk of residues sums to less than 2^63
    total = 0
    for start in range(0, y.size, chunk):
        total = (total + int(y[start : start + chunk].sum()) % m) % m
    return total


@checks(n=int_between(1, MAX_PAIRED_USERS))
@fill
def complete_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of ``n`` users: the masking graph of pairwise masking.

    Parameters
    ----------
    n : int
        The number of users.

    Returns
    -------
    i, j : numpy.ndarray
        ``int64`` arrays of the pairs' first and second users.

    Raises
    ------
    ConfigError
        If ``n`` is not an integer from 1 to :data:`~anonbandits.validation.MAX_PAIRED_USERS` (n (n - 1) / 2
        pairs).

    {{refs_bonawitz2017}}

    Examples
    --------
    >>> complete_pairs(3)
    (array([0, 0, 1]), array([1, 2, 2]))
    """
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.int64), j.astype(np.int64)


@checks(n=int_between(1, MAX_DRAWS), degree=int_between(1, MAX_DRAWS))
@fill
def ring_pairs(n: int, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, i + k mod n)`` for ``k = 1..degree``: each user masks with ``2 degree`` neighbours.

    Requires ``2 degree < n`` so that every unordered pair appears at most once.

    Parameters
    ----------
    n : int
        The number of users.
    degree : int
        Masks per user and direction, in [1, n/2).

    Returns
    -------
    i, j : numpy.ndarray
        ``int64`` arrays of the pairs' first and second users.

    Raises
    ------
    ConfigError
        If ``n`` or ``degree`` is not an integer from 1 to :data:`~anonbandits.validation.MAX_DRAWS`,
        ``degree`` is outside [1, n/2), or the ``n degree`` pairs are more than
        :data:`~anonbandits.validation.MAX_DRAWS`.

    {{refs_bonawitz2017}}

    Examples
    --------
    >>> ring_pairs(5, 1)
    (array([0, 1, 2, 3, 4]), array([1, 2, 3, 4, 0]))
    """
    require(1 <= degree and 2 * degree < n, "ring masking's degree", f"in [1, n/2) for n = {n}", degree)
    require(
        n * degree <= MAX_DRAWS,
        "ring masking's degree",
        f"at most MAX_DRAWS / n = {MAX_DRAWS // n} pairs per user",
        degree,
    )
    i = np.repeat(np.arange(n, dtype=np.int64), degree)
    k = np.tile(np.arange(1, degree + 1, dtype=np.int64), n)
    return i, (i + k) % n


@checks(messages=INT_ARRAY, m=_MODULUS, rng=RNG)
@fill
def masked_messages(
    messages: np.ndarray, m: int, rng: np.random.Generator, pairs: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """What each user sends under pairwise masking: ``(y_i + sum_{(i,j)} r_ij - sum_{(j,i)} r_ji) mod m``.

    A simulation of secure aggregation with no real cryptography: :func:`secure_sum` of the result equals
    :func:`secure_sum` of ``messages`` exactly.

    Parameters
    ----------
    {{messages_modulus}}
    {{rng}}
    pairs : tuple of numpy.ndarray, optional
        The masking graph as ``(i, j)``, two integer arrays of one length whose entries index the messages;
        default :func:`complete_pairs` (at most :data:`~anonbandits.validation.MAX_PAIRED_USERS` messages).

    Returns
    -------
    numpy.ndarray
        The masked ``int64`` messages, in {0, ..., m-1}.

    Raises
    ------
    ConfigError
        If ``messages`` is not an integer or an array of integers (of at most 2^62 in absolute value), ``m`` is
        not an integer in [2, 2^62), ``rng`` is not a generator, ``pairs`` is not two 1-D integer arrays of one
        length indexing the messages (or, when omitted, the messages are more than
        :data:`~anonbandits.validation.MAX_PAIRED_USERS`), or a user holds so many masks that their sum could
        overflow.

    {{refs_bonawitz2017}}

    Examples
    --------
    >>> import numpy as np
    >>> secure_sum(masked_messages(np.array([3, 1, 4]), 11, np.random.default_rng(0)), 11)
    8
    """
    m = _check_modulus(m)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    if pairs is None:
        require(
            y.size <= MAX_PAIRED_USERS,
            "messages",
            f"at most MAX_PAIRED_USERS = {MAX_PAIRED_USERS} of them "
            "with every pair masked (pass pairs=ring_pairs(...))",
            f"{y.size} messages",
        )
        i, j = complete_pairs(y.size) if y.size else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    else:
        i, j = _pairs(pairs, y.size)
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


def _pairs(pairs: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``pairs`` as two int64 arrays of one length indexing ``n`` messages, or a one-line ConfigError."""

    def indexing(v: Any) -> bool:  # a ragged list raises in np.asarray: the rule counts that as a refusal
        i, j = (np.asarray(side) for side in v) if isinstance(v, tuple | list) and len(v) == 2 else (None, None)
        return (
            i is not None
            and j is not None
            and i.ndim == j.ndim == 1
            and i.size == j.size
            and (i.size == 0 or (i.dtype.kind in "iu" and j.dtype.kind in "iu"))
            and (i.size == 0 or (min(i.min(), j.min()) >= 0 and max(i.max(), j.max()) < n))
        )

    Rule(indexing, f"two 1-D integer arrays of one length, entries in [0, {n})").check("pairs", pairs)
    return np.asarray(pairs[0], dtype=np.int64), np.asarray(pairs[1], dtype=np.int64)


@checks(messages=INT_ARRAY, m=_MODULUS, shares=int_between(1, 10**4), rng=RNG)
@fill
def split_and_mix(messages: np.ndarray, m: int, shares: int, rng: np.random.Generator) -> np.ndarray:
    """Split each ``y_i`` into ``shares`` uniform additive shares mod m and shuffle all of them together.

    The shuffle model's stand-in for secure aggregation: the shuffled multiset (length ``n * shares``) has
    the ideal sum.

    Parameters
    ----------
    {{messages_modulus}}
    shares : int
        Shares per message, a positive integer.
    {{rng}}

    Returns
    -------
    numpy.ndarray
        The ``n * shares`` shuffled ``int64`` shares.

    Raises
    ------
    ConfigError
        If ``messages`` is not an integer or an array of integers (of at most 2^62 in absolute value), ``m`` is
        not an integer in [2, 2^62), ``shares`` is not an integer from 1 to 10^4, ``rng`` is not a generator,
        or the shares would be more than :data:`~anonbandits.validation.MAX_DRAWS`.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> secure_sum(split_and_mix(np.array([3, 1, 4]), 11, 3, np.random.default_rng(0)), 11)
    8
    """
    m = _check_modulus(m)
    require(int(shares) == shares and shares >= 1, "shares", "a positive integer", shares)
    y = np.mod(np.asarray(messages, dtype=np.int64).ravel(), m)
    require(y.size * int(shares) <= MAX_DRAWS, "shares", f"at most MAX_DRAWS = {MAX_DRAWS:,} shares in all", shares)
    parts = rng.integers(0, m, size=(y.size, int(shares)), dtype=np.int64)
    last = y
    for col in parts[:, :-1].T:
        last = np.mod(last - col, m)
    parts[:, -1] = last
    return rng.permutation(parts.ravel())


@checks(n=int_at_least(1), g=int_at_least(1), tau=int_at_least(0))
@fill
def modulus(n: int, g: int, tau: int) -> int:
    """``m = n g + 2 tau + 1``: the smallest modulus for which the analyzer is exact on ``|noise| <= tau``.

    Parameters
    ----------
    {{batch_n_g_tau}}

    Returns
    -------
    int
        The modulus ``m``.

    Raises
    ------
    ConfigError
        If ``n`` or ``g`` is not a positive integer or ``tau`` is not a non-negative integer (bools and floats
        are refused).

    {{refs_paper004}}

    Examples
    --------
    >>> modulus(10, 4, 3)
    47
    """
    return int(n) * int(g) + 2 * int(tau) + 1


@checks(yhat=INT_ARRAY, n=COUNT, g=COUNT, tau=NONNEGATIVE_COUNT, m=_MODULUS)
@fill
def analyze(yhat: np.ndarray | int, n: int, g: int, tau: int, m: int) -> np.ndarray:
    """Private estimate ``z`` of ``sum_i x_i`` from secure-aggregation output(s) ``yhat`` in {0, ..., m-1}.

    With the underflow correction: ``(yhat - m)/g`` if ``yhat > n g + tau`` (the noisy sum was negative and
    wrapped), ``yhat/g`` otherwise. Whenever ``|sum_i eta_i| <= tau`` the result equals
    ``(sum xhat + sum eta)/g`` exactly (proof of Theorem 1 in paper 004); beyond that the wrap corrupts it.

    Parameters
    ----------
    yhat : int or array_like of int
        The aggregated values, in {0, ..., m-1}.
    {{batch_n_g_tau}}
    m : int
        The modulus, at least ``n g + 2 tau + 1``.

    Returns
    -------
    numpy.ndarray
        The estimates, of the shape of ``yhat``.

    Raises
    ------
    ConfigError
        If ``yhat`` is not an integer or an array of integers, ``n`` or ``g`` is not a positive integer, ``tau``
        is not a non-negative integer (each of at most 2^62), ``m`` is not an integer in [2, 2^62) or is below
        ``n g + 2 tau + 1``, or a value of ``yhat`` lies outside {0, ..., m-1}.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> analyze(np.array([5, 46]), n=10, g=4, tau=3, m=47)   # 46 is a wrapped -1
    array([ 1.25, -0.25])
    """
    if m < modulus(n, g, tau):  # no require here: it would build its message at every batch
        raise ConfigError(f"modulus m={m} is smaller than n g + 2 tau + 1 = {modulus(n, g, tau)}")
    y = np.asarray(yhat, dtype=np.int64)
    if np.any((y < 0) | (y >= m)):
        raise ConfigError(f"yhat (the SecAgg outputs) must lie in {{0, ..., m-1}} for m = {m}, got {_shown(yhat)}")
    wrapped = y > int(n) * int(g) + int(tau)
    return np.where(wrapped, (y - m) / g, y / g)
