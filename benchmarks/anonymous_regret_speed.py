"""Issue 22 speed: ``se --channel anonymous`` (the regret driver) against a plain per-round loop from the papers.

SE with DP-SE's doubling epochs for every user over the anonymous channel, with the regret of every round, on a
clustered instance (Bernoulli rewards, gap 0.4, K = 3, C = 2, confidence beta = 0.01, horizon T = 10^6):

* ``plain``: :func:`anonbandits.reference.anonymous_regret.reference_regret`, the baseline "plain per-round loop
  from the papers, same decomposer": per-user SE epochs as plain loops (R_e and the widths written out from
  Sajed and Sheffet, ICML 2019), ``anondecomp.decompose`` on each epoch's demand graph, then every round of every
  repetition of every assignment one user at a time (reward draw, groups, the auditor's size check, released
  sums, estimates, the round's regret), then every committed round to the horizon;
* ``batched_regret``: :func:`anonbandits.anonymous.batched_regret` with
  :class:`~anonbandits.core.learners.EpochElimination` (vectorised over users; the m repetitions of an assignment
  drawn as one sum per user and round, the regret charged per block of rounds).

Both at N = 60 users with the decomposer ``auto`` and ``randomized`` (every assignment distinct: nothing is
aggregated over repetitions, the ratio of the vectorisation alone), and DP-SE (``dp-se``, epsilon = 1, the
Laplace noise of every epoch sum drawn by both) with ``auto``, the ratio of their median wall times
(target >= 100x), and ``batched_regret`` alone at larger N. Each pair has a ``floor`` row: the decomposer's own
time plus one reward draw per user, round and distinct assignment (``benchmarks/_floor.py``); ``plain / floor``
is the ceiling of any driver over that decomposer. Median of 3 wall times (1 with ``--quick``, at
smaller sizes).

Usage: python benchmarks/anonymous_regret_speed.py [--quick]
Writes docs/results/anonymous_regret_speed.csv (build/benchmarks/ with --quick).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from _floor import fastest_decompositions, floor_row
from _output import results_dir

from anonbandits.anonymous import batched_regret
from anonbandits.anonymous.batches import channel_variance
from anonbandits.core.learners import EpochElimination
from anonbandits.envs import clustered_instance
from anonbandits.experiments import write_table
from anonbandits.reference.anonymous_regret import reference_regret

K, C, GAP, BETA, T = 3, 2, 0.4, 0.01, 10**6
DP_EPSILON = 1.0  # the dp-se rows: Lap(1/epsilon) on every epoch sum
BASELINE = "plain per-round loop from the papers, same decomposer"
LARGE = (600, 6000, 60_000)
TABLE = "anonymous_regret_speed.csv"


def _instance(n: int):
    return clustered_instance(n, K, 0, GAP, np.random.default_rng(0))


def _fast(n: int, decomposer: str, epsilon: float, seed: int) -> tuple[float, dict]:
    instance = _instance(n)
    start = time.perf_counter()
    learners = EpochElimination(n, K, confidence=BETA, epsilon=epsilon, sigma2=channel_variance("anonymous", C))
    run = batched_regret(
        instance,
        learners,
        T,
        C=C,
        decomposer=decomposer,
        rng=np.random.default_rng(seed),
        decomposer_rng=np.random.default_rng(seed + 1),
        noise_rng=np.random.default_rng(seed + 2),
        sum_epsilon=epsilon,
    )
    wall = time.perf_counter() - start
    m = run.metrics
    return wall, {
        "regret": m["regret"],
        "exploration_rounds": m["exploration_rounds"],
        "batches": len(run.records),
        "assignments": sum(b["assignments"] for b in run.records),
        "samples": run.info["samples"],
        "min_group_size": m["min_group_size"],
    }


def _plain(n: int, decomposer: str, epsilon: float, seed: int) -> tuple[float, dict]:
    instance = _instance(n)
    start = time.perf_counter()
    run = reference_regret(
        instance.mu,
        T,
        C=C,
        confidence=BETA,
        decomposer=decomposer,
        epsilon=epsilon,
        reward_rng=np.random.default_rng(seed),
        decomposer_rng=np.random.default_rng(seed + 1),
        noise_rng=np.random.default_rng(seed + 2),
    )
    wall = time.perf_counter() - start
    return wall, {
        "regret": run.regret,
        "exploration_rounds": run.exploration_rounds,
        "batches": len(run.batches),
        "assignments": sum(b[0] for b in run.batches),
        "samples": run.samples,
        "min_group_size": run.min_group_size,
    }


def _timed(fn, repeat: int, n: int, decomposer: str, epsilon: float = math.inf) -> dict:
    walls, run = [], {}
    for _ in range(repeat):
        wall, run = fn(n, decomposer, epsilon, seed=1)
        walls.append(wall)
    wall = statistics.median(walls)
    return {
        "measure": "plain" if fn is _plain else "batched_regret",
        "scheme": "dp-se" if epsilon < math.inf else "se",
        "channel": "anonymous",
        "decomposer": decomposer,
        "users": n,
        "arms": K,
        "C": C,
        "gap": GAP,
        "confidence": BETA,
        "epsilon": epsilon if epsilon < math.inf else None,
        "horizon": T,
        **run,
        "user_rounds": T * n,
        "wall_time": wall,
        "wall_min": min(walls),
        "wall_max": max(walls),
        "repeats": len(walls),
        "throughput": T * n / wall,
        "ratio": None,
        "baseline": "",
    }


def compare(decomposer: str, n: int, repeat: int, epsilon: float = math.inf) -> list[dict]:
    """The plain loop and batched_regret at one size (same seeds), and their ratio."""
    fast = _timed(_fast, repeat, n, decomposer, epsilon)
    plain = _timed(_plain, repeat, n, decomposer, epsilon)
    fast["ratio"], fast["baseline"] = plain["wall_time"] / fast["wall_time"], BASELINE
    print(
        f"{fast['scheme']:5s} {decomposer:10s} N={n}: plain {plain['wall_time']:7.2f} s "
        f"({plain['exploration_rounds']} exploration rounds, regret {plain['regret']:.0f}), "
        f"batched_regret {fast['wall_time']:7.3f} s "
        f"({fast['exploration_rounds']} rounds, regret {fast['regret']:.0f}): {fast['ratio']:,.0f}x "
        "(target >= 100x)",
        flush=True,
    )
    calls = fastest_decompositions(lambda: _fast(n, decomposer, epsilon, seed=1))
    floor = {
        **fast,
        "measure": "floor",
        "wall_min": None,
        "wall_max": None,
        "repeats": None,
        "throughput": None,
        **floor_row(calls, _instance(n).mu, C, plain["wall_time"]),
    }
    print(
        f"      floor {floor['wall_time']:.3f} s (decomposer {floor['decompose_s']:.3f} s + draws "
        f"{floor['draw_s']:.3f} s), ceiling {floor['ratio']:,.0f}x",
        flush=True,
    )
    return [plain, fast, floor]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repetition at smaller sizes")
    parser.add_argument("--out", help=f"table path (default docs/results/{TABLE}, build/benchmarks/ with --quick)")
    args = parser.parse_args()
    repeat, n_plain, large = (1, 15, LARGE[:2]) if args.quick else (3, 60, LARGE)
    rows = compare("auto", n_plain, repeat) + compare("randomized", n_plain, repeat)
    rows += compare("auto", n_plain, repeat, DP_EPSILON)
    for n in large:
        rows.append(_timed(_fast, repeat, n, "auto"))
        print(
            f"se batched_regret N={n}: {rows[-1]['wall_time']:.3f} s, {rows[-1]['exploration_rounds']} "
            f"exploration rounds, {rows[-1]['throughput']:,.0f} user-rounds/s",
            flush=True,
        )
    print(f"wrote {write_table(rows, args.out or results_dir(args.quick) / TABLE)}")


if __name__ == "__main__":
    main()
