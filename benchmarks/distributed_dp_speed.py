"""Speed of the distributed-DP elimination family (paper 004) against a plain per-round Python loop.

The reference is Dist-DP-SE written the obvious way: one Python iteration per user, who draws her reward,
rounds it, draws her two Polya noises and sends ``(xhat + eta) mod m`` to a running modular sum; the
analyzer and the elimination run at block and batch ends. The fast implementation simulates batch by batch
(one binomial/multinomial draw per block, exact aggregate noise). Both are run on the same instance; their
mean regrets over a few seeds are printed as a sanity check (they are the same algorithm).

Writes docs/results/distributed_dp_speed.csv and .png (a --quick run writes to build/benchmarks/ instead).
``--quick`` shortens the reference loop.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anonbandits import simulate
from anonbandits.experiments import write_table
from anonbandits.reference.distributed_dp import per_round_dist_dp_se

NAMES = ("dist-dp-se", "dist-rdp-se", "dist-cdp-se", "cdp-se", "ldp-se", "shuffle-dp-se")


def hard_instance(k: int = 10, run: int = 0, width: float = 0.1) -> np.ndarray:
    """Paper 004's synthetic instance as in its code: ``np.random.seed(run)``, ``w U(0,1)^K + 0.5 - w/2``."""
    return width * np.random.RandomState(run).random_sample(k) + 0.5 - width / 2


def time_fast(name: str, params: dict, seeds: range) -> tuple[float, float]:
    """Median wall time of one run and the mean regret over ``seeds``."""
    walls, regrets = [], []
    for seed in seeds:
        start = time.perf_counter()
        out = simulate(name, seed=seed, **params)
        walls.append(time.perf_counter() - start)
        regrets.append(out.metrics["regret"])
    return float(np.median(walls)), float(np.mean(regrets))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter reference loop")
    args = parser.parse_args()
    out_dir = results_dir(args.quick)
    means = hard_instance()
    means_text = ",".join(f"{m:.17g}" for m in means)
    eps, horizon = 0.5, 10**7
    ref_horizon = 50_000 if args.quick else 300_000

    start = time.perf_counter()
    per_round_dist_dp_se(means, eps, ref_horizon, np.random.default_rng(0))
    ref_wall = time.perf_counter() - start
    ref_rate = ref_horizon / ref_wall
    print(
        f"per-round loop (dist-dp-se, K=10, bernoulli): {ref_horizon:,} rounds in {ref_wall:.2f} s "
        f"= {ref_rate:,.0f} rounds/s"
    )

    # sanity: the same algorithm, on an instance where arms get eliminated at random batches
    check = np.array([0.9, 0.6, 0.5])
    ref = [per_round_dist_dp_se(check, 1.0, 20_000, np.random.default_rng(s)) for s in range(40)]
    fast = [
        simulate(
            "dist-dp-se", seed=1000 + s, means="0.9,0.6,0.5", epsilon=1.0, horizon=20_000, tau_confidence=0.1
        ).metrics["regret"]
        for s in range(40)
    ]
    print(
        f"sanity (means 0.9,0.6,0.5, eps=1, T=20,000, 40 seeds each): mean regret per-round loop "
        f"{np.mean(ref):.0f} +- {np.std(ref) / np.sqrt(40):.0f}, fast {np.mean(fast):.0f} +- "
        f"{np.std(fast) / np.sqrt(40):.0f}"
    )

    rows = [
        dict(
            algorithm="dist-dp-se (per-round loop)",
            reward="bernoulli",
            horizon=ref_horizon,
            wall_time=ref_wall,
            rounds_per_s=ref_rate,
            speedup=1.0,
        )
    ]
    for reward in ("bernoulli", "gaussian"):
        for name in NAMES:
            params = dict(
                means=means_text, epsilon=eps, horizon=horizon, reward=reward, reward_sigma=0.1, tau_confidence=0.1
            )
            wall, _ = time_fast(name, params, range(5))
            rate = horizon / wall
            rows.append(
                dict(
                    algorithm=name,
                    reward=reward,
                    horizon=horizon,
                    wall_time=wall,
                    rounds_per_s=rate,
                    speedup=rate / ref_rate,
                )
            )
            print(
                f"{name:14s} {reward:9s} T=1e7: {wall * 1e3:8.1f} ms  {rate:.3g} rounds/s  "
                f"{rate / ref_rate:,.0f}x the per-round loop"
            )
    write_table(rows, out_dir / "distributed_dp_speed.csv")
    plot(rows, out_dir / "distributed_dp_speed.png")
    print(f"wrote {out_dir / 'distributed_dp_speed.csv'} and .png")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels = [f"{r['algorithm']}\n{r['reward']}" for r in rows]
    colors = ["grey"] + ["tab:blue" if r["reward"] == "bernoulli" else "tab:orange" for r in rows[1:]]
    ax.bar(range(len(rows)), [r["rounds_per_s"] for r in rows], color=colors)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), labels, rotation=70, fontsize=7)
    ax.set_ylabel("rounds per second")
    ax.set_title("Distributed-DP elimination, K=10 hard instance, eps=0.5, T=1e7 (grey: per-round loop)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
