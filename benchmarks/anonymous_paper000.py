"""Paper 000, Section 4: do the randomized and polytope (LP) variants of Algorithm 1 beat explore-then-commit
(Algorithm 2) and the greedy variant?

The paper's appendix with its simulation settings is lost, so this is the project's own documented grid
(spec ``anonymous-bandits.md`` Section 7). Instances: :func:`anonbandits.envs.clustered_instance`, Bernoulli
rewards, every user's best-vs-second-best gap 0.1 (other means uniform in [0.1, 0.8]); the instance of a seed
is shared by all variants (paired comparison). Every parameter not listed is the algorithms' default
(minimax grid, B = ceil(log log T'), gamma = 4, ``log`` radius, alpha = the decomposer's guarantee, ETC
scale 10, arm offsets on).

Main grid (10 seeds, horizons 10^4, 10^5, 10^6):
* setting A: N = 300, K = 5, C = 3, U = 60  (U >= K(C+1) = 20: polytope has alpha = 1);
* setting B: N = 300, K = 10, C = 3, U = 20 (C+1 <= U < K(C+1) = 40: alpha = ceil(K(C+1)/U) = 2);
* variants: anon-batched with polytope, randomized, block, greedy; anon-etc.

Sensitivity grid (same seeds, horizons 10^5 and 10^6), to explain what drives the main result:
* ``greedy, alpha=a``: greedy with the same T' as the other variants (alpha = 1 in A, 2 in B) instead of K;
* ``arithmetic``: arithmetic BaSE grid (a long first batch, so arms are eliminated before the second batch
  and the decompositions differ): polytope and greedy with the paper's alpha, and greedy with equal alpha;
* ``etc, scale=1``: Algorithm 2 with T_exp ten times shorter than the paper's constant.

Reported: mean final regret with a 95% confidence interval (normal, over seeds) per variant, and for each
claimed ordering (polytope < greedy, polytope < etc, randomized < greedy, randomized < etc) the 95% CI of the
paired difference; "holds" when the whole CI is below zero, "reversed" when above, "tie" otherwise.

Usage: python benchmarks/anonymous_paper000.py [--quick] [--workers 2]
(--quick: 3 seeds, horizons up to 10^5, outputs suffixed ``_quick``.)
Writes docs/results/anonymous_paper000{,_summary,_pairs}.csv, anonymous_paper000.png and the main grid as
anonymous_paper000_grid.toml (rerun it with ``anonbandits simulate --config``).
"""

from __future__ import annotations

import argparse
import math
import time
import tomllib
from collections import defaultdict
from pathlib import Path

import numpy as np

from anonbandits.experiments import run_tasks, tasks_from_grid, write_table

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"A": {"arms": 5, "cluster": 60}, "B": {"arms": 10, "cluster": 20}}
PAPER_ALPHA = {"A": 1, "B": 2}  # max(1, ceil(K(C+1)/U)) for C = 3
# block coincides with polytope in this grid: draw it dashed so both stay visible
STYLE = {"block": {"linestyle": "--", "marker": "x"}}
CLAIMS = [("polytope", "greedy"), ("polytope", "etc"), ("randomized", "greedy"), ("randomized", "etc")]


def main_grid(seeds: int, horizons: list[int]) -> str:
    runs = []
    for s in SETTINGS.values():
        runs.append(f'[[runs]]\nalgorithm = "anon-batched"\narms = {s["arms"]}\ncluster = {s["cluster"]}\n'
                    'decomposer = ["polytope", "randomized", "block", "greedy"]\n')
        runs.append(f'[[runs]]\nalgorithm = "anon-etc"\narms = {s["arms"]}\ncluster = {s["cluster"]}\n')
    return (f"# paper 000 Section 4 reproduction, main grid (benchmarks/anonymous_paper000.py)\nseeds = {seeds}\n"
            "[defaults]\nusers = 300\nC = 3\ngap = 0.1\nreward = \"bernoulli\"\n"
            f"horizon = {horizons}\n\n" + "\n".join(runs))


def sensitivity_grid(seeds: int, horizons: list[int]) -> str:
    runs = []
    for key, s in SETTINGS.items():
        base = f'arms = {s["arms"]}\ncluster = {s["cluster"]}\n'
        a = PAPER_ALPHA[key]
        runs.append(f'[[runs]]\nalgorithm = "anon-batched"\n{base}decomposer = "greedy"\nalpha = {a}.0\n')
        runs.append(f'[[runs]]\nalgorithm = "anon-batched"\n{base}grid = "arithmetic"\n'
                    'decomposer = ["polytope", "greedy"]\n')
        runs.append(f'[[runs]]\nalgorithm = "anon-batched"\n{base}grid = "arithmetic"\nalpha = {a}.0\n'
                    'decomposer = "greedy"\n')
        runs.append(f'[[runs]]\nalgorithm = "anon-etc"\n{base}explore_scale = 1.0\n')
    return (f"seeds = {seeds}\n[defaults]\nusers = 300\nC = 3\ngap = 0.1\nreward = \"bernoulli\"\n"
            f"horizon = {horizons}\n\n" + "\n".join(runs))


def setting_of(row: dict) -> str:
    return next(k for k, s in SETTINGS.items() if s["arms"] == row["arms"] and s["cluster"] == row["cluster"])


def variant_of(row: dict) -> str:
    if row["algorithm"] == "anon-etc":
        return "etc" if row["explore_scale"] == 10.0 else f"etc, scale={row['explore_scale']:g}"
    name = row["decomposer"]
    if row["grid"] != "minimax":
        name += f", {row['grid']}"
    if row["alpha"]:
        name += f", alpha={row['alpha']:g}"
    return name


def ci(values: np.ndarray) -> tuple[float, float]:
    half = 1.96 * values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return float(values.mean() - half), float(values.mean() + half)


def summarise(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["study"], setting_of(row), row["horizon"], variant_of(row))].append(row)
    summary = []
    for (study, setting, horizon, variant), g in sorted(groups.items(), key=lambda kv: kv[0][:3]):
        reg = np.array([r["regret"] for r in g])
        lo, hi = ci(reg)
        n_users = g[0]["users"]
        summary.append({"study": study, "setting": setting, "users": n_users, "arms": g[0]["arms"],
                        "C": g[0]["C"], "U": g[0]["cluster"], "horizon": horizon, "variant": variant,
                        "seeds": len(g), "regret_mean": reg.mean(), "regret_ci_low": lo, "regret_ci_high": hi,
                        "regret_per_user_round": reg.mean() / (n_users * horizon),
                        "optimal_fraction": float(np.nanmean([r["optimal_fraction"] for r in g]))
                        if not all(math.isnan(r["optimal_fraction"]) for r in g) else math.nan,
                        "exploration_rounds": float(np.mean([r["exploration_rounds"] for r in g])),
                        "wall_time_mean": float(np.mean([r["wall_time"] for r in g]))})
    pairs = []
    by_key = {(s["study"], s["setting"], s["horizon"], s["variant"]): s for s in summary}
    for (study, setting, horizon, variant), g in groups.items():
        if study != "main" or variant not in ("polytope", "randomized"):
            continue
        for better, worse in CLAIMS:
            if better != variant or (study, setting, horizon, worse) not in by_key:
                continue
            a = {r["seed"]: r["regret"] for r in g}
            b = {r["seed"]: r["regret"] for r in groups[(study, setting, horizon, worse)]}
            seeds = sorted(set(a) & set(b))
            diff = np.array([a[s] - b[s] for s in seeds])
            lo, hi = ci(diff)
            pairs.append({"setting": setting, "horizon": horizon, "claim": f"{better} < {worse}",
                          "seeds": len(seeds), "diff_mean": diff.mean(), "diff_ci_low": lo, "diff_ci_high": hi,
                          "relative_diff": diff.mean() / by_key[(study, setting, horizon, worse)]["regret_mean"],
                          "verdict": "holds" if hi < 0 else ("reversed" if lo > 0 else "tie")})
    pairs.sort(key=lambda p: (p["setting"], p["horizon"], p["claim"]))
    return summary, pairs


def plot(summary: list[dict], results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    main_variants = ["polytope", "randomized", "block", "greedy", "etc"]
    fig, axes = plt.subplots(3, 2, figsize=(12, 13))
    for col, setting in enumerate(SETTINGS):
        ax = axes[0, col]
        for v in main_variants:
            pts = [s for s in summary if s["study"] == "main" and s["setting"] == setting and s["variant"] == v]
            if not pts:
                continue
            x = np.array([p["horizon"] for p in pts], float)
            y = np.array([p["regret_mean"] for p in pts])
            err = np.array([[p["regret_mean"] - p["regret_ci_low"] for p in pts],
                            [p["regret_ci_high"] - p["regret_mean"] for p in pts]])
            ax.errorbar(x, y, yerr=err, capsize=3, label=v, **STYLE.get(v, {"marker": "o"}))
        s = SETTINGS[setting]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("final regret (sum over users), mean and 95% CI")
        ax.set_title(f"setting {setting}: N=300, K={s['arms']}, C=3, U={s['cluster']}")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="small")

        ax = axes[1, col]
        t_max = max(p["horizon"] for p in summary if p["study"] == "main")
        curves = defaultdict(list)
        for r in results:
            row = r.row
            if row["study"] == "main" and setting_of(row) == setting and row["horizon"] == t_max:
                curves[variant_of(row)].append(r.curve)
        for v in main_variants:
            if v not in curves:
                continue
            x = curves[v][0][0]
            ys = np.stack([np.interp(x, cx, cy) for cx, cy in curves[v]])
            m = ys.mean(axis=0)
            half = 1.96 * ys.std(axis=0, ddof=1) / math.sqrt(len(ys)) if len(ys) > 1 else 0 * m
            (line,) = ax.plot(x, m, label=v, **{k: w for k, w in STYLE.get(v, {}).items() if k != "marker"})
            ax.fill_between(x, m - half, m + half, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_xlabel("round")
        ax.set_ylabel("cumulative pseudo-regret (mean, 95% band)")
        ax.set_title(f"setting {setting}: regret curves at T = {t_max:.0e}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")

        ax = axes[2, col]
        sens = [s for s in summary if s["setting"] == setting and s["horizon"] == t_max
                and (s["study"] == "sensitivity" or s["variant"] in ("polytope", "greedy", "etc"))]
        labels = [f"{s['variant']}" + (" *" if s["study"] == "sensitivity" else "") for s in sens]
        y = [s["regret_mean"] for s in sens]
        err = [[s["regret_mean"] - s["regret_ci_low"] for s in sens],
               [s["regret_ci_high"] - s["regret_mean"] for s in sens]]
        ax.barh(labels, y, xerr=err, capsize=3, color=["tab:orange" if "*" in lab else "tab:blue"
                                                        for lab in labels])
        ax.set_xlabel("final regret, mean and 95% CI")
        ax.set_title(f"setting {setting}, T = {t_max:.0e}: sensitivity runs (*)")
        ax.tick_params(axis="y", labelsize="small")
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, horizons 10^4 and 10^5")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--outdir", default=str(ROOT / "docs/results"))
    args = parser.parse_args()
    seeds = 3 if args.quick else 10
    horizons = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    suffix = "_quick" if args.quick else ""
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    main_text = main_grid(seeds, horizons)
    (out / f"anonymous_paper000_grid{suffix}.toml").write_text(main_text)
    tasks = [("main", t) for t in tasks_from_grid(tomllib.loads(main_text))]
    tasks += [("sensitivity", t) for t in tasks_from_grid(tomllib.loads(sensitivity_grid(seeds, horizons[-2:])))]
    start = time.perf_counter()
    results = run_tasks([t for _, t in tasks], workers=args.workers)
    print(f"{len(tasks)} runs in {time.perf_counter() - start:.1f} s")
    for (study, _), r in zip(tasks, results, strict=True):
        r.row["study"] = study
    rows = [r.row for r in results]
    write_table(rows, out / f"anonymous_paper000{suffix}.csv")
    summary, pairs = summarise(rows)
    write_table(summary, out / f"anonymous_paper000_summary{suffix}.csv")
    write_table(pairs, out / f"anonymous_paper000_pairs{suffix}.csv")
    plot(summary, results, out / f"anonymous_paper000{suffix}.png")
    print(f"\n{'study':11s} {'set':3s} {'T':>8s} {'variant':28s} {'regret mean [95% CI]':>36s} {'/(NT)':>8s}")
    for s in summary:
        print(f"{s['study']:11s} {s['setting']:3s} {s['horizon']:8d} {s['variant']:28s} "
              f"{s['regret_mean']:12.4g} [{s['regret_ci_low']:10.4g}, {s['regret_ci_high']:10.4g}] "
              f"{s['regret_per_user_round']:8.4f}")
    print("\nclaimed orderings (paired by seed; diff = first - second):")
    for p in pairs:
        print(f"  setting {p['setting']} T={p['horizon']:>8d} {p['claim']:24s} diff {p['diff_mean']:11.4g} "
              f"[{p['diff_ci_low']:11.4g}, {p['diff_ci_high']:11.4g}] ({p['relative_diff']:+.0%}) {p['verdict']}")
    print(f"wrote {out}/anonymous_paper000{suffix}.{{csv,png}}, _summary, _pairs, _grid.toml")


if __name__ == "__main__":
    main()
