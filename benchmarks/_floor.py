"""The floor of an anonymous driver: what no implementation over the same decomposer can avoid.

Any driver, vectorised or not, must call the decomposer on every batch and draw every reward the channel
releases: one Bernoulli sum per (distinct assignment, sub-algorithm round, user). The floor is those two
times and nothing else (no groups, no auditor, no estimates, no learner), so ``plain loop / floor`` is the
largest ratio any driver over that decomposer could reach against the plain loop: its ceiling. With a
decomposer whose assignments are all distinct (``randomized``) the draws cannot be aggregated over repetitions,
and the ceiling is what tells whether a ratio target is reachable at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

import anondecomp
from anonbandits.channels import elicitation_rounds

CHUNK = 2_000_000  # reward draws per block, to bound memory


@contextmanager
def recorded_decompositions() -> Iterator[list[tuple[anondecomp.Decomposition, float]]]:
    """Record every ``anondecomp.decompose`` call made inside the block: (its result, its seconds)."""
    original = anondecomp.decompose
    calls: list[tuple[anondecomp.Decomposition, float]] = []

    def timed(*args, **kwargs):
        start = time.perf_counter()
        res = original(*args, **kwargs)
        calls.append((res, time.perf_counter() - start))
        return res

    anondecomp.decompose = timed
    try:
        yield calls
    finally:
        anondecomp.decompose = original


def fastest_decompositions(run: Callable[[], object], repeat: int = 3) -> list[tuple[anondecomp.Decomposition, float]]:
    """The decompositions of ``run()`` (recorded by :func:`recorded_decompositions`) from the repeat of least
    total decomposer time: one run's millisecond timings are noisy."""
    runs = []
    for _ in range(repeat):
        with recorded_decompositions() as calls:
            run()
        runs.append(calls)
    return min(runs, key=lambda calls: sum(seconds for _, seconds in calls))


def draw_seconds(
    calls: list[tuple[anondecomp.Decomposition, float]], mu: np.ndarray, C: int, rng: np.random.Generator
) -> float:
    """Seconds to draw the rewards of every recorded decomposition: per distinct assignment, round and user one
    Bernoulli draw (one binomial of its multiplicity when it repeats), for Bernoulli means ``mu`` (N, K)."""
    rounds, users = elicitation_rounds(C), np.arange(mu.shape[0])
    start = time.perf_counter()
    for res, _ in calls:
        step = max(1, CHUNK // (rounds * mu.shape[0]))
        for lo in range(0, len(res.multiplicities), step):
            m = mu[users, res.assignments[lo : lo + step]][:, None, :]
            reps = res.multiplicities[lo : lo + step]
            shape = (len(reps), rounds, mu.shape[0])
            if np.all(reps == 1):
                drawn = rng.random(shape) < m
            else:
                drawn = rng.binomial(reps[:, None, None], m, size=shape)
            del drawn  # only the time of the draw counts
    return time.perf_counter() - start


def floor_row(calls: list[tuple[anondecomp.Decomposition, float]], mu: np.ndarray, C: int, plain_wall: float) -> dict:
    """The floor's columns: decomposer and draw seconds (best of 3 draws), their sum, and the ceiling ratio."""
    decompose = sum(seconds for _, seconds in calls)
    draws = min(draw_seconds(calls, mu, C, np.random.default_rng(seed)) for seed in range(3))
    return {
        "decompose_s": decompose,
        "draw_s": draws,
        "wall_time": decompose + draws,
        "ratio": plain_wall / (decompose + draws),
        "baseline": "ceiling: plain loop / (decomposer + one reward draw per user-round)",
    }
