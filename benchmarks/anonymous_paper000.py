"""Paper 000, Section 4: do the randomized and LP (polytope) variants of Algorithm 1 beat explore-then-commit
(Algorithm 2) and the greedy variant, in settings where the decomposition can matter?

The paper's appendix with its simulation settings is lost, so the grid is the project's own, fixed before
any result was seen (the simulations of the paper's Section 4):

* BaSE with gamma = 1 (``log`` radius), so arms are eliminated after the first batch and later batches
  decompose graphs that are no longer all-active; ``best_effort`` on, because with gamma = 1 an optimal arm
  is sometimes eliminated and a batch graph may stop being U-batched;
* the arithmetic and the geometric BaSE grids; C in {1, 3};
* U above K(C+1): N = 300, K = 5, U = 60 (balanced clusters); U below K(C+1): N = 150, K = 10, U = 15
  (exact clusters);
* horizons 10^4, 10^5, 10^6; 10 seeds; Bernoulli rewards, best-vs-second-best gap 0.1 (other means uniform
  in [0.1, 0.8]); the instance of a seed is shared by every variant (paired comparisons).

Variants: Algorithm 1 with ``polytope``, ``randomized``, ``block`` and the paper's ``greedy`` (D copies of
every M_j), each budgeted with the paper's alpha (greedy K, the others max(1, ceil(K(C+1)/U))); the same four
at **equal alpha** (greedy given the others' alpha; the other three already share it); ``polytope`` and
``randomized`` with ``alpha = measured`` (their R/D on the all-active graph); Algorithm 2 (``etc``, the
paper's constant 10).

Reported per cell: mean regret with a 95% CI, paired 95% CIs of the claimed orderings (polytope < greedy,
randomized < greedy, polytope < etc, randomized < etc; "holds" when the CI is below zero, "reversed" when
above, "tie" otherwise), R_b / D_b of every decomposed batch and the fraction of (user, arm) pairs eliminated
before it.

Usage: python benchmarks/anonymous_paper000.py [--quick] [--workers 2]
A full run writes docs/results/anonymous_paper000{.csv,_summary.csv,_pairs.csv,_batches.csv,.png,_grid.toml};
``--quick`` (3 seeds, horizons 10^4 and 10^5) writes to build/benchmarks/ instead.
"""

from __future__ import annotations

import argparse
import math
import time
import tomllib
from collections import defaultdict
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits.experiments import run_tasks, tasks_from_grid, write_table

SETTINGS = {"above": {"users": 300, "arms": 5, "cluster": 60}, "below": {"users": 150, "arms": 10, "cluster": 15}}
GRIDS = ("arithmetic", "geometric")
CS = (1, 3)
CLAIMS = [
    ("polytope", "greedy"),
    ("randomized", "greedy"),
    ("polytope", "etc"),
    ("randomized", "etc"),
    ("polytope", "greedy, equal alpha"),
]
DECOMPOSERS = ("polytope", "randomized", "block", "greedy")


def paper_alpha(setting: str, C: int) -> int:
    s = SETTINGS[setting]
    return max(1, math.ceil(s["arms"] * (C + 1) / s["cluster"]))


def grid_text(seeds: int, horizons: list[int]) -> str:
    """The whole grid as a file ``anonbandits simulate --config`` reruns."""
    runs = []
    for setting, s in SETTINGS.items():
        inst = f"users = {s['users']}\narms = {s['arms']}\ncluster = {s['cluster']}\n"
        for C in CS:
            a = paper_alpha(setting, C)
            head = (
                f'[[runs]]\nalgorithm = "anon-batched"\n{inst}C = {C}\ngrid = {list(GRIDS)}\n'
                "gamma = 1.0\nbest_effort = true\n"
            )
            runs.append(head + f"decomposer = {list(DECOMPOSERS)}\n")
            runs.append(head + f'decomposer = "greedy"\nalpha = {a}.0\n')
            runs.append(head + 'decomposer = ["polytope", "randomized"]\nalpha = "measured"\n')
            runs.append(f'[[runs]]\nalgorithm = "anon-etc"\n{inst}C = {C}\n')
    return (
        "# paper 000 Section 4 reproduction (benchmarks/anonymous_paper000.py)\n"
        f'seeds = {seeds}\n[defaults]\ngap = 0.1\nreward = "bernoulli"\n'
        f"horizon = {horizons}\n\n" + "\n".join(runs).replace("'", '"')
    )


def setting_of(row: dict) -> str:
    return next(k for k, s in SETTINGS.items() if s["arms"] == row["arms"] and s["cluster"] == row["cluster"])


def variant_of(row: dict) -> str:
    if row["algorithm"] == "anon-etc":
        return "etc"
    if row["alpha"] == "measured":
        return f"{row['decomposer']}, measured alpha"
    if row["alpha"]:
        return f"{row['decomposer']}, equal alpha"
    return row["decomposer"]


def cells(rows: list[dict]) -> dict[tuple, dict[str, list[dict]]]:
    """(setting, C, grid, horizon) -> variant -> rows; etc (no grid) joins both grids' cells."""
    out: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        grids = GRIDS if row["algorithm"] == "anon-etc" else (row["grid"],)
        for g in grids:
            out[(setting_of(row), row["C"], g, row["horizon"])][variant_of(row)].append(row)
    return out


def ci(values: np.ndarray) -> tuple[float, float]:
    half = half_width(values, normal=True)
    return float(values.mean() - half), float(values.mean() + half)


def summarise(rows: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    summary, pairs, batches = [], [], []
    for (setting, C, grid, horizon), variants in sorted(cells(rows).items()):
        key = {"setting": setting, "C": C, "grid": grid, "horizon": horizon}
        for variant, g in variants.items():
            reg = np.array([r["regret"] for r in g])
            lo, hi = ci(reg)
            # empty (None: no user committed) is NaN here, as in the tables of earlier releases
            fractions = np.array([math.nan if r["optimal_fraction"] is None else r["optimal_fraction"] for r in g])
            summary.append(
                {
                    **key,
                    "variant": variant,
                    "seeds": len(g),
                    "regret_mean": reg.mean(),
                    "regret_ci_low": lo,
                    "regret_ci_high": hi,
                    "alpha": float(np.mean([r.get("alpha_used", math.nan) for r in g])),
                    "exploration_rounds": float(np.mean([r["exploration_rounds"] for r in g])),
                    "optimal_fraction": float(np.nanmean(fractions)) if not np.isnan(fractions).all() else math.nan,
                }
            )
            if variant == "etc":
                continue
            for b in range(1, 1 + max(int(r["exploration_batches"]) for r in g)):
                got = [r for r in g if f"R_over_D_b{b}" in r and r[f"R_over_D_b{b}"] != ""]
                batches.append(
                    {
                        **key,
                        "variant": variant,
                        "batch": b,
                        "runs": len(got),
                        "R_over_D": float(np.mean([r[f"R_over_D_b{b}"] for r in got])),
                        "R_over_D_max": float(np.max([r[f"R_over_D_b{b}"] for r in got])),
                        "eliminated_before": float(np.mean([r[f"eliminated_before_b{b}"] for r in got])),
                    }
                )
        for better, worse in CLAIMS:
            if better not in variants or worse not in variants:
                continue
            a = {r["seed"]: r["regret"] for r in variants[better]}
            b = {r["seed"]: r["regret"] for r in variants[worse]}
            seeds = sorted(set(a) & set(b))
            diff = np.array([a[s] - b[s] for s in seeds])
            lo, hi = ci(diff)
            pairs.append(
                {
                    **key,
                    "claim": f"{better} < {worse}",
                    "seeds": len(seeds),
                    "diff_mean": diff.mean(),
                    "diff_ci_low": lo,
                    "diff_ci_high": hi,
                    "relative_diff": diff.mean() / np.mean(list(b.values())),
                    "verdict": "holds" if hi < 0 else ("reversed" if lo > 0 else "tie"),
                }
            )
    return summary, pairs, batches


def plot(pairs: list[dict], path: Path) -> None:
    """One heat map per claimed ordering: relative paired difference per cell, verdict written in it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(s, C, g) for s in SETTINGS for C in CS for g in GRIDS]
    horizons = sorted({p["horizon"] for p in pairs})
    fig, axes = plt.subplots(1, len(CLAIMS), figsize=(4.2 * len(CLAIMS), 5.2), sharey=True)
    mark = {"holds": "holds", "reversed": "REVERSED", "tie": "tie"}
    for ax, (better, worse) in zip(axes, CLAIMS, strict=True):
        claim = f"{better} < {worse}"
        grid = np.full((len(rows), len(horizons)), np.nan)
        text = {}
        for p in pairs:
            if p["claim"] == claim:
                i, j = rows.index((p["setting"], p["C"], p["grid"])), horizons.index(p["horizon"])
                grid[i, j] = p["relative_diff"]
                text[i, j] = f"{p['relative_diff']:+.0%}\n{mark[p['verdict']]}"
        image = ax.imshow(np.clip(grid, -1, 1), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        for (i, j), t in text.items():
            ax.text(j, i, t, ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(horizons)), [f"{h:.0e}" for h in horizons])
        ax.set_yticks(range(len(rows)), [f"U {s}, C={C}, {g[:5]}" for s, C, g in rows])
        ax.set_xlabel("horizon T")
        ax.set_title(f"{claim}\n(blue: claim holds)", fontsize=10)
    fig.colorbar(image, ax=axes, shrink=0.8, label="paired regret difference / regret of the second")
    fig.suptitle("Paper 000, Section 4: where the claimed orderings hold (gamma = 1, 10 seeds, paired 95% CIs)")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, T up to 10^5, output in build/benchmarks/")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds, horizons = (3, [10_000, 100_000]) if args.quick else (10, [10_000, 100_000, 1_000_000])
    out = results_dir(args.quick)
    text = grid_text(seeds, horizons)
    tasks = tasks_from_grid(tomllib.loads(text))
    start = time.perf_counter()
    rows = [r.row for r in run_tasks(tasks, workers=args.workers)]
    print(f"{len(tasks)} runs in {time.perf_counter() - start:.1f} s")
    summary, pairs, batches = summarise(rows)
    (out / "anonymous_paper000_grid.toml").write_text(text)
    write_table(rows, out / "anonymous_paper000.csv")
    write_table(summary, out / "anonymous_paper000_summary.csv")
    write_table(pairs, out / "anonymous_paper000_pairs.csv")
    write_table(batches, out / "anonymous_paper000_batches.csv")
    plot(pairs, out / "anonymous_paper000.png")
    for p in pairs:
        print(
            f"U {p['setting']:5s} C={p['C']} {p['grid']:10s} T={p['horizon']:>8d} {p['claim']:32s} "
            f"{p['relative_diff']:+7.0%} [{p['diff_ci_low']:10.4g}, {p['diff_ci_high']:10.4g}] {p['verdict']}"
        )
    print(f"wrote {out}/anonymous_paper000*")


if __name__ == "__main__":
    main()
