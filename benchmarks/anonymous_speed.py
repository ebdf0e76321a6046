"""Issue 3 performance: Algorithm 1 (polytope) at N = 1,000, K = 10, C = 5, T = 10^6, and the elicitation's
throughput against a plain per-round reference loop.

1. Full runs of ``anon_batched`` (instance generation, decompositions, every reward draw of every elicitation
   round, regret bookkeeping), Bernoulli rewards, U = 100, gap 0.1, several seeds; target: under 60 s per run.
   Also with the arithmetic grid (arms are eliminated after a long first batch, so the second batch
   decomposes a heterogeneous graph); the non-quick mode adds one clipped-Gaussian run (rewards drawn one by
   one, vectorised) and one run with the randomized decomposer (every assignment distinct).
2. Elicitation throughput in user-rounds per second on one assignment (every user on its optimal arm):
   * ``reference``: a plain Python loop, one repetition, one round, one user at a time (draw the reward, add
     it to its group's sum, check every group's size at the end of the round), then the estimates;
   * ``fast, m reps``: :class:`~anonbandits.channels.AnonymousChannel` with multiplicity m (one binomial
     draw per (user, round) sums the m repetitions; the auditor checks every group);
   * ``fast, m=1 x n distinct``: n different assignments played once each (no aggregation over repetitions:
     what a randomized decomposition produces), to show the vectorisation alone.
   Target ratio (fast / reference): >= 50x. A sanity check compares the two paths' mean estimates.

Usage: python benchmarks/anonymous_speed.py [--quick]
Writes docs/results/anonymous_speed.csv and .png (build/benchmarks/ with --quick).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anonbandits.anonymous import anon_batched
from anonbandits.channels import AnonymousChannel, elicitation_rounds
from anonbandits.channels.anonymous import MAX_HORIZON
from anonbandits.envs import clustered_instance
from anonbandits.experiments import write_table
from anonbandits.reference.anonymous_bai import plain_groups

N, K, C, U, T, GAP = 1000, 10, 5, 100, 10**6, 0.1


def reference_elicitation(
    mu_user: np.ndarray, assignment: np.ndarray, C: int, reps: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Plain loop: per repetition, per round, per user. Returns (sum of estimates per user, observations)."""
    n = len(assignment)
    group_of, position, members = plain_groups([int(a) for a in assignment], C)
    totals = [0.0] * n
    observations = 0
    rounds = elicitation_rounds(C)
    for _ in range(reps):
        sums = [[0.0] * len(members) for _ in range(rounds)]
        sizes = [[0] * len(members) for _ in range(rounds)]
        for k in range(rounds):
            row, cnt = sums[k], sizes[k]
            for i in range(n):
                reward = 1.0 if rng.random() < mu_user[i] else 0.0
                g = group_of[i]
                if g >= 0 and position[i] != k:
                    row[g] += reward
                    cnt[g] += 1
            for g in range(len(members)):
                if cnt[g] < C:
                    raise RuntimeError("anonymity violated")
                observations += 1
        for i in range(n):
            g = group_of[i]
            if g >= 0:
                totals[i] += sums[0][g] - sums[position[i]][g]
    return np.array(totals), observations


def time_full_runs(seeds: int, decomposer: str, model: str, **options) -> list[dict]:
    name = "_".join(["algorithm1", decomposer, model, *(f"{k}-{v}" for k, v in options.items())])
    rows = []
    for seed in range(seeds):
        start = time.perf_counter()
        root = np.random.default_rng(seed)
        inst_rng, reward_rng, dec_rng = root.spawn(3)
        inst = clustered_instance(N, K, U, GAP, inst_rng, model=model)
        run = anon_batched(inst, C, T, U=U, decomposer=decomposer, rng=reward_rng, decomposer_rng=dec_rng, **options)
        wall = time.perf_counter() - start
        m = run.metrics
        rows.append(
            {
                "measure": name,
                "seed": seed,
                "wall_time": wall,
                "user_rounds": N * T,
                "throughput": N * T / wall,
                "regret": m["regret"],
                "observations": m["observations"],
                "exploration_rounds": m["exploration_rounds"],
                "distinct_assignments": sum(b["distinct"] for b in run.records),
            }
        )
        print(
            f"{name} seed {seed}: {wall:.2f} s (target < 60 s), regret {m['regret']:.4g}, observations "
            f"{m['observations']}, exploration rounds {m['exploration_rounds']}, distinct assignments "
            f"{rows[-1]['distinct_assignments']}"
        )
    return rows


def time_elicitation(quick: bool) -> list[dict]:
    inst = clustered_instance(N, K, U, GAP, np.random.default_rng(0))
    assignment = inst.optimal
    mu_user = inst.mu[np.arange(N), assignment]
    r = elicitation_rounds(C)
    ref_reps = 5 if quick else 20
    start = time.perf_counter()
    ref_sum, _ = reference_elicitation(mu_user, assignment, C, ref_reps, np.random.default_rng(1))
    ref_wall = time.perf_counter() - start
    ref_tp = N * r * ref_reps / ref_wall
    rows = [
        {
            "measure": "elicitation_reference",
            "seed": 1,
            "wall_time": ref_wall,
            "user_rounds": N * r * ref_reps,
            "throughput": ref_tp,
        }
    ]
    print(
        f"reference loop: {ref_reps} repetitions x {r} rounds x {N} users in {ref_wall:.2f} s = "
        f"{ref_tp:,.0f} user-rounds/s"
    )

    m = 20_000
    channel = AnonymousChannel(inst, C, MAX_HORIZON, np.random.default_rng(2))
    start = time.perf_counter()
    fb = channel.elicit(assignment, [m])
    wall = time.perf_counter() - start
    tp = N * r * m / wall
    rows.append(
        {
            "measure": f"elicitation_fast_m{m}",
            "seed": 2,
            "wall_time": wall,
            "user_rounds": N * r * m,
            "throughput": tp,
            "ratio": tp / ref_tp,
        }
    )
    print(
        f"fast path, one assignment x {m} repetitions: {wall:.3f} s = {tp:,.0f} user-rounds/s, "
        f"ratio {tp / ref_tp:,.0f}x (target >= 50x)"
    )

    n_distinct = 200 if quick else 1000
    rng = np.random.default_rng(3)
    many = np.array([rng.permutation(assignment) for _ in range(n_distinct)])
    channel = AnonymousChannel(inst, C, MAX_HORIZON, np.random.default_rng(4))
    start = time.perf_counter()
    channel.elicit(many, np.ones(n_distinct, np.int64))
    wall = time.perf_counter() - start
    tp1 = N * r * n_distinct / wall
    rows.append(
        {
            "measure": f"elicitation_fast_m1_x{n_distinct}",
            "seed": 4,
            "wall_time": wall,
            "user_rounds": N * r * n_distinct,
            "throughput": tp1,
            "ratio": tp1 / ref_tp,
        }
    )
    print(
        f"fast path, {n_distinct} distinct assignments x 1 repetition: {wall:.3f} s = {tp1:,.0f} "
        f"user-rounds/s, ratio {tp1 / ref_tp:,.1f}x"
    )

    # sanity: both paths estimate the same means (z-scores of the difference of the two averages)
    fast_mean = fb.sums[np.arange(N), assignment] / m
    ref_mean = ref_sum / ref_reps
    sd = np.sqrt((4 * C + 1) / 4 * (1 / ref_reps + 1 / m))
    print(
        f"sanity: max |fast mean - reference mean| / sd bound = {np.max(np.abs(fast_mean - ref_mean)) / sd:.2f}"
        " (sd bound from the (4C+1)/4 variance proxy; expect < ~4)"
    )
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    el = [r for r in rows if r["measure"].startswith("elicitation")]
    runs = [r for r in rows if r["measure"].startswith("algorithm1")]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    ax1.bar([r["measure"].replace("elicitation_", "") for r in el], [r["throughput"] for r in el])
    ax1.set_yscale("log")
    ax1.set_ylabel("user-rounds per second")
    ax1.set_title(f"elicitation throughput (N={N}, C={C})")
    names = list(dict.fromkeys(r["measure"] for r in runs))
    walls = [np.array([r["wall_time"] for r in runs if r["measure"] == m]) for m in names]
    mean = np.array([w.mean() for w in walls])
    spread = np.array([[mean[i] - w.min(), w.max() - mean[i]] for i, w in enumerate(walls)]).T
    short = [
        m.removeprefix("algorithm1_").replace("_bernoulli", "").replace("_", "\n") + f"\n(n={len(w)})"
        for m, w in zip(names, walls, strict=True)
    ]
    ax2.bar(short, mean, yerr=spread, capsize=3)
    ax2.set_yscale("log")
    ax2.axhline(60, color="red", linestyle="--", label="target 60 s")
    ax2.set_ylabel("seconds per run (mean, min-max)")
    ax2.set_title(f"Algorithm 1, N={N}, K={K}, C={C}, T=1e6")
    ax2.legend()
    ax1.tick_params(axis="x", labelrotation=15, labelsize="small")
    ax2.tick_params(axis="x", labelsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer seeds and repetitions")
    parser.add_argument(
        "--out",
        help="table path (default docs/results/anonymous_speed.csv; with --quick build/benchmarks/anonymous_speed.csv)",
    )
    args = parser.parse_args()
    args.out = args.out or str(results_dir(args.quick) / "anonymous_speed.csv")
    rows = time_full_runs(2 if args.quick else 5, "polytope", "bernoulli")
    # arithmetic grid: a long first batch eliminates arms, so batch 2 decomposes a heterogeneous graph
    rows += time_full_runs(1 if args.quick else 3, "polytope", "bernoulli", grid="arithmetic")
    if not args.quick:
        rows += time_full_runs(1, "polytope", "gaussian")
        rows += time_full_runs(1, "randomized", "bernoulli")
    rows += time_elicitation(args.quick)
    out = write_table(rows, args.out)
    plot(rows, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
