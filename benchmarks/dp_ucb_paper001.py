"""Reproduction of paper 001, Sec. 6 and Appendix I (Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online
Learning in a Stochastic Environment", arXiv 2102.07929): Anytime-Lazy-UCB, Hybrid-UCB and DP-SE
(beta = 1/T) on K = 5 Bernoulli arms, three mean settings, T = 2 x 2^21, epsilon in {0.1, ..., 128}, 15 runs.

    .venv/bin/python benchmarks/dp_ucb_paper001.py [--quick] [--runs N] [--horizon T]

Anytime-Lazy-UCB and DP-SE go through the experiment runner (one task per run, event-by-event simulation);
Hybrid-UCB needs a decision every round, so all its runs (every setting and epsilon) advance in one lockstep
batch. Writes into docs/results/ (build/benchmarks/ for a --quick or non-default run):

* dp_ucb_paper001_runs.csv: one row per run (final pseudo-regret);
* dp_ucb_paper001_summary.csv: mean, standard deviation and standard error per (setting, epsilon, algorithm);
* dp_ucb_paper001_setting{1,2,3}.png: mean cumulative pseudo-regret vs round, one panel per epsilon
  (paper Figs. 1-4, 6-9, 11, 12b-h), 95% bands;
* dp_ucb_paper001_final.png: final regret vs epsilon per setting (paper Figs. 5, 10, 12a);
* dp_ucb_paper001_claims.md: the paper's qualitative claims, each checked against these numbers.

With --quick (or a non-default --runs/--horizon) the names start with dp_ucb_paper001_quick instead, so the
full reproduction's files are not overwritten.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits import Result
from anonbandits.dp import hybrid_ucb_batch
from anonbandits.experiments import Task, TaskResult, run_tasks, write_table
from anonbandits.registry import get

SETTINGS = {
    1: (0.75, 0.70, 0.70, 0.70, 0.70),
    2: (0.75, 0.625, 0.5, 0.375, 0.25),
    3: (0.75, 0.15, 0.15, 0.15, 0.15),
}
EPSILONS = (0.1, 0.25, 0.5, 1.0, 8.0, 64.0, 128.0)
ALGORITHMS = ("anytime-lazy-ucb", "hybrid-ucb", "dp-se")
COLORS = {"anytime-lazy-ucb": "tab:blue", "hybrid-ucb": "tab:orange", "dp-se": "tab:green"}
HYBRID_SEED = 20_010


def _seed(setting: int, e: int, run: int) -> int:
    """One seed (hence one stream) per (setting, epsilon, run); the two event-driven algorithms share it."""
    return 10_000 * setting + 100 * e + run


def run_event_driven(horizon: int, runs: int) -> list[TaskResult]:
    tasks = []
    for setting, means in SETTINGS.items():
        for e, eps in enumerate(EPSILONS):
            for name in ("anytime-lazy-ucb", "dp-se"):
                params = get(name).resolve({"means": ",".join(map(str, means)), "epsilon": eps, "horizon": horizon})
                tasks.extend(Task(name, params, _seed(setting, e, r)) for r in range(runs))
    return run_tasks(tasks, workers=1, progress=False)


def run_hybrid(horizon: int, runs: int) -> list[TaskResult]:
    """All Hybrid-UCB runs in one lockstep batch (rows: setting-major, then epsilon, then run)."""
    keys = [(s, eps, r) for s in SETTINGS for eps in EPSILONS for r in range(runs)]
    means = np.array([SETTINGS[s] for s, _, _ in keys])
    eps = np.array([e for _, e, _ in keys])
    start = time.perf_counter()
    batch = hybrid_ucb_batch(means, eps, horizon, np.random.default_rng(HYBRID_SEED))
    per_run = (time.perf_counter() - start) / len(keys)
    out = []
    for i, (s, e, _) in enumerate(keys):
        # One generator drives the whole batch: the seed is the batch's, the row its position in it.
        row = {
            "algorithm": "hybrid-ucb",
            "means": ",".join(map(str, SETTINGS[s])),
            "epsilon": e,
            "horizon": horizon,
            "reward": "bernoulli",
            "tree_noise": "paper",
            "seed": HYBRID_SEED,
            "batch_row": i,
            "regret": float(batch.regret[i]),
            "best_arm_found": int(batch.pulls[i].argmax() == 0),
            "releases": horizon,
            "wall_time": per_run,
        }
        metrics = {k: row[k] for k in ("regret", "best_arm_found", "releases")}
        out.append(TaskResult(row=row, result=Result(metrics, (batch.checkpoints, batch.curves[i]), "hybrid-ucb")))
    return out


def summarise(results: list[TaskResult]) -> tuple[list[dict], dict]:
    setting_of = {",".join(map(str, m)): s for s, m in SETTINGS.items()}
    groups: dict[tuple, list[TaskResult]] = defaultdict(list)
    for res in results:
        groups[(setting_of[res.row["means"]], float(res.row["epsilon"]), res.row["algorithm"])].append(res)
    rows, stats = [], {}
    for (s, e, a), group in sorted(groups.items()):
        regret = np.array([g.row["regret"] for g in group])
        sem = regret.std(ddof=1) / np.sqrt(regret.size) if regret.size > 1 else 0.0
        stats[(s, e, a)] = (regret.mean(), sem)
        rows.append(
            {
                "setting": s,
                "epsilon": e,
                "algorithm": a,
                "runs": regret.size,
                "mean_regret": regret.mean(),
                "std_regret": regret.std(ddof=1) if regret.size > 1 else 0.0,
                "sem_regret": sem,
                "best_arm_found": np.mean([g.row["best_arm_found"] for g in group]),
                "mean_wall_time": np.mean([g.row["wall_time"] for g in group]),
            }
        )
    return rows, stats


def plot_settings(results: list[TaskResult], horizon: int, out_dir: Path, prefix: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setting_of = {",".join(map(str, m)): s for s, m in SETTINGS.items()}
    curves: dict[tuple, list[np.ndarray]] = defaultdict(list)
    x_of = {}
    for res in results:
        key = (setting_of[res.row["means"]], float(res.row["epsilon"]), res.row["algorithm"])
        curves[key].append(res.curve[1])
        x_of[key] = res.curve[0]
    for s in SETTINGS:
        fig, axes = plt.subplots(2, 4, figsize=(16, 7.5))
        for ax, eps in zip(axes.flat, EPSILONS, strict=False):
            for a in ALGORITHMS:
                ys = np.stack(curves[(s, eps, a)])
                mean = ys.mean(axis=0)
                half = half_width(ys, normal=True)
                x = x_of[(s, eps, a)]
                ax.plot(x, mean, color=COLORS[a], label=a)
                ax.fill_between(x, mean - half, mean + half, color=COLORS[a], alpha=0.2, linewidth=0)
            ax.set_title(f"setting {s}, eps = {eps:g}", fontsize=9)
            ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
            ax.set_xlabel("round")
            ax.set_ylabel("cumulative pseudo-regret")
            ax.grid(alpha=0.3)
        axes.flat[-1].axis("off")
        axes.flat[0].legend(fontsize=8)
        fig.suptitle(
            f"paper 001, setting {s}: means {SETTINGS[s]}, T = {horizon}, "
            f"{len(curves[(s, EPSILONS[0], ALGORITHMS[0])])} runs",
            fontsize=11,
        )
        fig.tight_layout()
        fig.savefig(out_dir / f"{prefix}_setting{s}.png", dpi=110)
        plt.close(fig)


def plot_final(stats: dict, out_dir: Path, prefix: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, s in zip(axes, SETTINGS, strict=True):
        for a in ALGORITHMS:
            m = np.array([stats[(s, e, a)][0] for e in EPSILONS])
            h = 1.96 * np.array([stats[(s, e, a)][1] for e in EPSILONS])
            ax.errorbar(EPSILONS, m, yerr=h, marker="o", color=COLORS[a], label=a, capsize=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("final pseudo-regret (log)")
        ax.set_title(f"setting {s}: {SETTINGS[s]}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / f"{prefix}_final.png", dpi=110)
    plt.close(fig)


def check_claims(stats: dict) -> list[tuple[str, bool, str]]:
    """The paper's stated findings (Sec. 6), each as a precise test on the mean final regrets.

    "Competitive" = within a factor 1.5 of the other's mean (or better); "decreases" = no increase between
    consecutive epsilons beyond two standard errors of the difference; "flat" = max/min over epsilon <= 1.5.
    """

    def m(s, e, a):
        return stats[(s, e, a)][0]

    def se(s, e, a):
        return stats[(s, e, a)][1]

    def decreasing(s, a):
        return all(
            m(s, e2, a) <= m(s, e1, a) + 2 * np.hypot(se(s, e1, a), se(s, e2, a))
            for e1, e2 in zip(EPSILONS, EPSILONS[1:], strict=False)
        )

    def fmt(s, e):
        return ", ".join(f"{a} {m(s, e, a):.0f}" for a in ALGORITHMS)

    out = []
    for s in (1, 2):
        small = [
            (
                e,
                m(s, e, "anytime-lazy-ucb") <= 1.5 * m(s, e, "dp-se"),
                m(s, e, "hybrid-ucb") > max(m(s, e, "anytime-lazy-ucb"), m(s, e, "dp-se")),
            )
            for e in (0.5, 1.0)
        ]
        detail = "; ".join(f"eps={e:g}: {fmt(s, e)}" for e, _, _ in small)
        out.append(
            (
                f"(1{'' if s == 1 else ', 4'}) setting {s}, small eps (0.5, 1): Anytime-Lazy-UCB competitive with "
                "DP-SE",
                all(c for _, c, _ in small),
                detail,
            )
        )
        out.append(
            (
                f"(1{'' if s == 1 else ', 4'}) setting {s}, small eps (0.5, 1): Hybrid-UCB worse than both",
                all(h for _, _, h in small),
                detail,
            )
        )
        large = [
            (e, m(s, e, "hybrid-ucb") <= 1.5 * min(m(s, e, "anytime-lazy-ucb"), m(s, e, "dp-se"))) for e in (8.0, 64.0)
        ]
        out.append(
            (
                f"(2{'' if s == 1 else ', 4'}) setting {s}, large eps (8, 64): Hybrid-UCB performs well "
                "(within 1.5x of the best)",
                all(c for _, c in large),
                "; ".join(f"eps={e:g}: {fmt(s, e)}" for e, _ in large),
            )
        )
        hyb = [m(s, e, "hybrid-ucb") for e in (1.0, 8.0, 64.0, 128.0)]
        out.append(
            (
                f"(2) setting {s}: Hybrid-UCB better the larger eps (1 > 8 > 64 >= 128 within noise)",
                hyb[0] > hyb[1] > hyb[2]
                and hyb[3] <= hyb[2] + 2 * np.hypot(se(s, 64.0, "hybrid-ucb"), se(s, 128.0, "hybrid-ucb")),
                ", ".join(f"{v:.0f}" for v in hyb),
            )
        )
    for s in SETTINGS:
        for a in ("anytime-lazy-ucb", "hybrid-ucb"):
            out.append(
                (
                    f"(3) setting {s}: {a} final regret decreases as eps grows",
                    decreasing(s, a),
                    ", ".join(f"{m(s, e, a):.0f}" for e in EPSILONS),
                )
            )
        dp = [m(s, e, "dp-se") for e in EPSILONS]
        out.append(
            (
                f"(3) setting {s}: DP-SE final regret roughly flat across eps (max/min <= 1.5)",
                max(dp) / min(dp) <= 1.5,
                ", ".join(f"{v:.0f}" for v in dp),
            )
        )
    worse = [
        (s, e)
        for s in SETTINGS
        for e in EPSILONS
        if m(s, e, "dp-se") > 1.25 * min(m(s, e, "anytime-lazy-ucb"), m(s, e, "hybrid-ucb"))
    ]
    out.append(
        (
            "(5) some instance where DP-SE is clearly worse (> 1.25x) than the best UCB-type algorithm",
            bool(worse),
            "cases: " + (", ".join(f"setting {s} eps={e:g}" for s, e in worse) or "none"),
        )
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 2^18 and 4 runs (about half a minute)")
    parser.add_argument("--runs", type=int, help="runs per (setting, epsilon, algorithm); default 15")
    parser.add_argument("--horizon", type=int, help="rounds; default 4,194,304 (2 x 2^21)")
    args = parser.parse_args()
    horizon = args.horizon or (2**18 if args.quick else 2 * 2**21)
    runs = args.runs or (4 if args.quick else 15)
    full = horizon == 2 * 2**21 and runs == 15
    prefix = "dp_ucb_paper001" if full else "dp_ucb_paper001_quick"
    out_dir = results_dir(not full)

    start = time.perf_counter()
    results = run_event_driven(horizon, runs)
    event_time = time.perf_counter() - start
    print(f"Anytime-Lazy-UCB and DP-SE: {len(results)} runs in {event_time:.1f} s")
    start = time.perf_counter()
    results += run_hybrid(horizon, runs)
    hybrid_time = time.perf_counter() - start
    print(f"Hybrid-UCB: {len(SETTINGS) * len(EPSILONS) * runs} runs in lockstep in {hybrid_time:.1f} s")

    write_table([r.row for r in results], out_dir / f"{prefix}_runs.csv")
    rows, stats = summarise(results)
    write_table(rows, out_dir / f"{prefix}_summary.csv")
    plot_settings(results, horizon, out_dir, prefix)
    plot_final(stats, out_dir, prefix)

    print(f"\nfinal pseudo-regret at T = {horizon} (mean +- s.e. over {runs} runs)")
    print(f"{'setting':>7s} {'eps':>6s} " + " ".join(f"{a:>22s}" for a in ALGORITHMS))
    for s in SETTINGS:
        for e in EPSILONS:
            cells = " ".join(f"{stats[(s, e, a)][0]:>12.0f} +- {stats[(s, e, a)][1]:>6.0f}" for a in ALGORITHMS)
            print(f"{s:>7d} {e:>6g} {cells}")
    claims = check_claims(stats)
    lines = [
        f"# Paper 001, Sec. 6: qualitative claims checked (T = {horizon}, {runs} runs, Bernoulli rewards)",
        "",
        "Generated by `benchmarks/dp_ucb_paper001.py`. Numbers are mean final pseudo-regrets.",
        "",
    ]
    print("\nclaims:")
    for text, ok, detail in claims:
        print(f"  [{'holds' if ok else 'FAILS'}] {text}: {detail}")
        lines.append(f"- **{'holds' if ok else 'does not hold'}**: {text}. {detail}")
    (out_dir / f"{prefix}_claims.md").write_text("\n".join(lines) + "\n")
    print(f"\ntotal {event_time + hybrid_time:.1f} s; results in {out_dir}")


if __name__ == "__main__":
    main()
