"""The regret cost of differential privacy on top of C-anonymity (issue 14; docs/anonymous-bandits.md,
"Anonymity is not privacy").

Both algorithms of *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022), Algorithm 1 (``anon-batched``,
the ``auto`` decomposer, the paper's BaSE) and Algorithm 2 (``anon-etc``, exploration constant 1 so that it
commits within the horizon), with every released group sum made epsilon-DP per reward by the central Laplace
mechanism or by paper 004's distributed protocol (SecAgg, Polya shares: also pure epsilon-DP). The grid, fixed
before any result was seen:

* instance: N = 300 users, K = 5 arms, balanced clusters (U = 60), Bernoulli rewards, gap 0.1, T = 10^6;
* regret against epsilon in {0.003, 0.01, 0.03, 0.1, 0.3, 1} at C = 3;
* regret against C in {1, 2, 3, 5, 7} at epsilon = 0.03;
* 20 seeds; a seed fixes the instance and the reward stream of every variant (the noise has its own
  stream), so each private run is paired with the non-private run of its seed: the cost is the paired
  difference, with a 95% t confidence interval.

Usage: python benchmarks/anonymous_privacy.py [--quick] [--workers 1]
A full run writes docs/results/anonymous_privacy{.csv,_summary.csv,.png}; ``--quick`` (3 seeds, T = 10^5,
fewer points) writes to build/benchmarks/ instead.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits.experiments import run_tasks, tasks_from_grid, write_table

ALGORITHMS = {"anon-batched": {}, "anon-etc": {"explore_scale": 1.0}}
MECHANISMS = ("central", "distributed")


def grid(seeds: int, horizon: int, epsilons: list[float], cs: list[int], fixed_c: int, fixed_eps: float) -> dict:
    """Every run: for each algorithm, the epsilon sweep at ``fixed_c`` and the C sweep at ``fixed_eps``,
    each with its non-private baseline."""
    runs = []
    others = [c for c in cs if c != fixed_c]  # C = fixed_c at fixed_eps is already in the epsilon sweep
    for name, extra in ALGORITHMS.items():
        for C, eps in [(fixed_c, epsilons), (others, [fixed_eps])]:
            runs.append({"algorithm": name, "C": C, **extra})
            runs.append({"algorithm": name, "C": C, "privacy": list(MECHANISMS), "epsilon": eps, **extra})
    return {"seeds": seeds, "defaults": {"users": 300, "arms": 5, "gap": 0.1, "horizon": horizon}, "runs": runs}


def ci(values: np.ndarray) -> tuple[float, float]:
    """95% t interval of the mean."""
    half = half_width(values)
    return float(values.mean() - half), float(values.mean() + half)


def _or_nan(value) -> float:
    return math.nan if value is None else value


def summarise(rows: list[dict]) -> list[dict]:
    """One line per (algorithm, C, privacy, epsilon): regret and its paired cost over the same seeds' runs
    without privacy, and the run's accounting."""
    base = {(r["algorithm"], r["C"], r["seed"]): r["regret"] for r in rows if r["privacy"] == "none"}
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        cells[(r["algorithm"], r["C"], r["privacy"], r["epsilon"])].append(r)
    out = []
    for (name, C, privacy, eps), group in sorted(cells.items()):
        reg = np.array([r["regret"] for r in group])
        none = np.array([base[(name, C, r["seed"])] for r in group])
        lo, hi = ci(reg)
        line = {
            "algorithm": name,
            "C": C,
            "privacy": privacy,
            "epsilon": eps,
            "seeds": len(group),
            "regret_mean": reg.mean(),
            "regret_ci_low": lo,
            "regret_ci_high": hi,
            # empty (None: no user committed) counts as NaN here, as in the tables of earlier releases
            "optimal_fraction": float(np.mean([_or_nan(r["optimal_fraction"]) for r in group])),
        }
        if privacy != "none":
            dlo, dhi = ci(reg - none)
            line |= {
                "cost_mean": float((reg - none).mean()),
                "cost_ci_low": dlo,
                "cost_ci_high": dhi,
                "relative_cost": float((reg - none).mean() / none.mean()),
                "epsilon_per_reward": float(np.max([r["privacy_epsilon"] for r in group])),
                "epsilon_per_user_max": float(np.max([r["privacy_epsilon_per_user"] for r in group])),
                "delta": float(np.max([r["privacy_delta"] for r in group])),
            }
        out.append(line)
    return out


def plot(summary: list[dict], fixed_c: int, fixed_eps: float, path: Path) -> None:
    """Regret against epsilon (left) and against C (right), 95% CIs, one line per algorithm and mechanism."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    style = {"central": "-o", "distributed": "--s", "none": ":"}
    for name in ALGORITHMS:
        for privacy in ("none", *MECHANISMS):
            for ax, along in zip(axes, ("epsilon", "C"), strict=True):
                pts = [
                    s
                    for s in summary
                    if s["algorithm"] == name
                    and s["privacy"] == privacy
                    and (s["C"] == fixed_c if along == "epsilon" else privacy == "none" or s["epsilon"] == fixed_eps)
                ]
                if along == "epsilon" and privacy == "none":
                    if pts:
                        ax.axhline(
                            pts[0]["regret_mean"],
                            ls=":",
                            color="k" if name == "anon-batched" else "grey",
                            label=f"{name}, no privacy",
                        )
                    continue
                pts.sort(key=lambda s: s[along])
                x = [s[along] for s in pts]
                y = np.array([s["regret_mean"] for s in pts])
                err = np.array(
                    [
                        [s["regret_mean"] - s["regret_ci_low"] for s in pts],
                        [s["regret_ci_high"] - s["regret_mean"] for s in pts],
                    ]
                )
                ax.errorbar(x, y, yerr=err, fmt=style[privacy], capsize=3, label=f"{name}, {privacy}")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("epsilon per reward (event level)")
    axes[0].set_title(f"regret against epsilon, C = {fixed_c}")
    axes[1].set_xlabel("anonymity parameter C")
    axes[1].set_title(f"regret against C, epsilon = {fixed_eps} (dotted: no privacy)")
    for ax in axes:
        ax.set_ylabel("cumulative pseudo-regret (all users)")
        ax.legend(fontsize=7)
    fig.suptitle(
        "C-anonymous group sums with epsilon-DP noise: N = 300, K = 5, U = 60, mean of the seeds, 95% CIs", y=1.03
    )
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, T = 10^5, output in build/benchmarks/")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        setup = {
            "seeds": 3,
            "horizon": 100_000,
            "epsilons": [0.01, 0.03, 0.1, 1.0],
            "cs": [1, 3],
            "fixed_c": 3,
            "fixed_eps": 0.03,
        }
    else:
        setup = {
            "seeds": 20,
            "horizon": 1_000_000,
            "epsilons": [0.003, 0.01, 0.03, 0.1, 0.3, 1.0],
            "cs": [1, 2, 3, 5, 7],
            "fixed_c": 3,
            "fixed_eps": 0.03,
        }
    out = results_dir(args.quick)
    start = time.perf_counter()
    tasks = tasks_from_grid(grid(**setup))
    rows = [r.row for r in run_tasks(tasks, workers=args.workers, progress=False)]
    write_table(rows, out / "anonymous_privacy.csv")
    summary = summarise(rows)
    write_table(summary, out / "anonymous_privacy_summary.csv")
    plot(summary, setup["fixed_c"], setup["fixed_eps"], out / "anonymous_privacy.png")
    print(f"{len(rows)} runs in {time.perf_counter() - start:.0f} s -> {out}")
    for s in summary:
        if s["privacy"] != "none":
            print(
                f"{s['algorithm']:13s} C={s['C']} {s['privacy']:11s} eps={s['epsilon']:<6g} regret "
                f"{s['regret_mean']:.4g}  cost {s['relative_cost']:+.1%} [{s['cost_ci_low']:.3g}, "
                f"{s['cost_ci_high']:.3g}]  eps/user {s['epsilon_per_user_max']:.4g}"
            )


if __name__ == "__main__":
    main()
