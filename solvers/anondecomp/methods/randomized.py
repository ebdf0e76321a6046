"""Randomized decomposition (paper 000, Section 4 simulations; spec 4.6).

Every assignment sends each user to a uniformly random arm of its support; a pair is informative when its
arm drew at least C+1 users. Assignments are drawn until every pair has its demand [spec DECISION], or
fail after a cap with an error naming uncovered pairs. The cap is ``cap_factor`` times the larger of K * D
(the spec's suggestion) and D / p, where p is a lower bound on any pair's chance of being informative in one
assignment: user i picks arm j with probability 1/|A_i|, and each other user of B_j picks it with
probability at least q_j = min 1/|A_k|, so at least C of them do with probability >= P(Bin(|B_j|-1, q_j) >= C).
A baseline: it wastes the rounds in which an arm draws C or fewer users.
"""

from __future__ import annotations

import math
import time

import numpy as np

from anondecomp.errors import InfeasibleError
from anondecomp.graph import DemandGraph
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import prepare

BATCH = 256
CHUNK = 1 << 22  # entries (assignments x users) drawn at once, bounds the memory of a draw
PER_ARM_MAX_K = 8
MAX_EXPECTED = 10_000_000


def informative_probability_bound(graph: DemandGraph, required: np.ndarray, C: int) -> float:
    """Lower bound on the chance that a wanted pair is informative in one uniformly random assignment."""
    from scipy import stats  # deferred: importing scipy.stats costs half a second of command start-up

    size = graph.support.sum(axis=1)
    wanted = required > 0
    arms = np.flatnonzero(wanted.any(axis=0))
    if len(arms) == 0:
        return 1.0
    inv = np.where(graph.support, 1.0 / size[:, None], np.inf)
    q = inv[:, arms].min(axis=0)
    crowd = stats.binom.sf(C - 1, graph.arm_degrees[arms] - 1, q)
    own = np.where(wanted[:, arms], 1.0 / size[:, None], np.inf).min(axis=0)
    return float((own * crowd).min())


def expected_assignments(graph: DemandGraph, required: np.ndarray, C: int) -> float:
    """About how many assignments the randomized decomposition draws for ``required``: D / p, with D the
    largest demand of a pair and p :func:`informative_probability_bound` (each assignment is distinct, of every
    user). The decomposition refuses above :data:`MAX_EXPECTED`; a caller may bound it tighter before drawing.

    Examples
    --------
    >>> g = DemandGraph.from_batched(3, np.ones((6, 2), bool))
    >>> expected_assignments(g, np.full((6, 2), 3), C=1) > 3
    True
    """
    D = max(int(np.max(required, initial=0)), 1)
    return D / max(informative_probability_bound(graph, required, C), 1e-300)


def randomized_decomposition(graph: DemandGraph, C: int, *, rng: np.random.Generator | None = None,
                             seed: int | None = 0, best_effort: bool = False,
                             cap_factor: int = 20) -> Decomposition:
    """Draw uniformly random assignments until all demand is met (``rng``, else ``seed``, fixes the draws).

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(3, np.ones((6, 2), bool))
    >>> d = randomized_decomposition(g, C=1, seed=1)
    >>> d.total_assignments >= g.lower_bound
    True
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    rng = rng if rng is not None else np.random.default_rng(seed)
    N, K = graph.shape
    size = graph.support.sum(axis=1)
    width = int(size.max())
    # flat table of the users' support arms: user i's choice c is choices[i * width + c]
    choices = np.argsort(~graph.support, axis=1, kind="stable")[:, :width].ravel()
    offsets = np.arange(N, dtype=np.int64) * width
    D = max(int(prep.required.max()), 1)
    p = informative_probability_bound(graph, prep.required, prep.C)
    expected = expected_assignments(graph, prep.required, prep.C)
    if expected > MAX_EXPECTED:
        raise InfeasibleError(f"randomized decomposition would need about {expected:.3g} assignments "
                              "(arms rarely draw C+1 users at random); use method='polytope' or 'block'")
    cap = cap_factor * max(K * D, math.ceil(D / p))
    # The draws come in blocks of BATCH assignments (rows of rng.random((BATCH, N))), the last block cut at the
    # first assignment that completes the demand, and the generator ends after the last block. One call drawing
    # many blocks gives the same numbers as block-by-block calls (the generator fills an array in order), so
    # neither the result nor the generator's state after it depends on how many blocks a call draws.
    limit = -(-cap // BATCH) * BATCH       # rows drawn before the cap's error
    most = max(BATCH, (CHUNK // max(N, 1)) // BATCH * BATCH)
    need = prep.required.astype(np.int64)
    drawn: list[np.ndarray] = []
    total = 0
    rate = None
    while (need > 0).any():
        if total >= limit:
            left = np.argwhere(need > 0)
            pairs = ", ".join(f"({graph.users[i]!r}, {graph.arms[j]!r})" for i, j in left[:5])
            raise InfeasibleError(f"randomized decomposition hit its cap of {cap} assignments with "
                                  f"{len(left)} pair(s) still short, e.g. {pairs}",
                                  uncovered=[(graph.users[i], graph.arms[j]) for i, j in left])
        # rows to draw: the lower bound at first, then what the slowest pair needs at the rate seen so far
        if rate is None:
            want = int(need.sum(axis=1).max())
        else:
            want = int(np.max(np.where(need > 0, need / np.maximum(rate, 1e-12), 0.0)))
        rows = min(most, limit - total, max(BATCH, -(-(want + want // 10) // BATCH) * BATCH))
        state = rng.bit_generator.state
        batch = _draw(rng, rows, size, choices, offsets, K)
        per_block = _coverage(batch, prep.C, K, BATCH)        # (rows / BATCH, N, K)
        got = per_block.sum(axis=0)
        if (got >= need).all():
            stop = _completing_row(batch, per_block, need, prep.C, K)
            blocks = -(-stop // BATCH) * BATCH
            if blocks < rows:      # leave the generator where drawing whole blocks up to this one leaves it
                rng.bit_generator.state = state
                rng.random((blocks, N))
            drawn.append(batch[:stop])
            break
        need -= got
        rate = got / rows if rate is None else (rate * total + got) / (total + rows)
        drawn.append(batch)
        total += rows
    a = np.concatenate(drawn) if drawn else np.empty((0, N), dtype=arm_dtype(K))
    m = np.ones(len(a), dtype=np.int64)
    if a.size <= 10_000_000:
        a, m = _merge_identical(a) if a.dtype == np.int8 else compress(a, m)
    return Decomposition(graph, prep.C, "randomized", a, m, uncovered=prep.uncovered,
                         wall_time=time.perf_counter() - start)


def _draw(rng: np.random.Generator, rows: int, size: np.ndarray, choices: np.ndarray, offsets: np.ndarray,
          K: int) -> np.ndarray:
    """``rows`` uniformly random assignments: user i takes choice floor(u |A_i|) of its support, u ~ U[0, 1)."""
    pick = (rng.random((rows, len(size))) * size).astype(np.int64)
    pick += offsets
    return choices[pick].astype(arm_dtype(K))


def _coverage(batch: np.ndarray, C: int, K: int, block: int) -> np.ndarray:
    """Informative samples per (user, arm) in each run of ``block`` rows of ``batch``: (rows / block, N, K)."""
    n, N = batch.shape
    nb = n // block
    if K <= PER_ARM_MAX_K:     # a few vectorised passes over the batch per arm beat a bincount of all entries
        out = np.empty((nb, N, K), dtype=np.int64)
        for j in range(K):
            on = batch == j
            on &= (np.count_nonzero(on, axis=1) >= C + 1)[:, None]
            out[:, :, j] = on.reshape(nb, block, N).sum(axis=1, dtype=np.int64)
        return out
    flat = batch.astype(np.int64)
    flat += np.arange(n, dtype=np.int64)[:, None] * K
    informative = np.bincount(flat.ravel(), minlength=n * K)[flat] >= C + 1
    keys = (np.arange(n, dtype=np.int64) // block)[:, None] * (N * K) + np.arange(N, dtype=np.int64) * K + batch
    counts = np.bincount(np.where(informative, keys, nb * N * K).ravel(), minlength=nb * N * K + 1)
    return counts[:-1].reshape(nb, N, K)


def _completing_row(batch: np.ndarray, per_block: np.ndarray, need: np.ndarray, C: int, K: int) -> int:
    """Fewest leading rows of ``batch`` that give every pair its ``need`` (``per_block``: its block coverage)."""
    block = len(batch) // len(per_block)
    done = np.cumsum(per_block, axis=0)
    b = int(np.argmax((done >= need).all(axis=(1, 2))))
    before = done[b - 1] if b else np.zeros_like(need)
    rows = np.cumsum(_coverage(batch[b * block:(b + 1) * block], C, K, 1), axis=0) + before
    return b * block + int(np.argmax((rows >= need).all(axis=(1, 2)))) + 1


def _merge_identical(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``compress`` of int8 assignments of multiplicity 1, by sorting rows as byte strings.

    Same result as :func:`~anondecomp.result.compress` (distinct rows in lexicographic order, each with its
    count), much faster than its sort of structured rows. Flipping the sign bit makes the bytes' order the
    order of the arm indices and leaves no zero byte (byte strings ignore trailing zeros when compared).
    """
    if len(a) <= 1:
        return a, np.ones(len(a), dtype=np.int64)
    rows = np.ascontiguousarray(a.view(np.uint8) ^ 0x80).view(f"S{a.shape[1]}").ravel()
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return a[order[starts]], np.diff(np.append(starts, len(a))).astype(np.int64)
