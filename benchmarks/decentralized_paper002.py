"""Reproduction of paper 002's experiments (Féraud, Alami, Laroche, "Decentralized Exploration in
Multi-Armed Bandits", ICML 2019, Sec. 5).

Three problems, K = 10 arms with means (0.7, 0.5, 0.3, 0.1 x 7), eps = 0.25, delta = 0.05, eta = 0.9,
Bernoulli rewards (A8), N in {32, ..., 1024} players (A10):

* Problem 1: uniform players (Fig. 1a sample complexity, Fig. 1b messages);
* Problem 2: half of the players generate 80% of the events (Fig. 2a);
* Problem 3: uniform players, every suboptimal mean decreasing by 1e-5 per global step (Fig. 2b).

Six algorithms: Decentralized SER3 / UGapEc, 1-PRIVACY-SER3 / UGapEc, 0-PRIVACY-SER3 / UGapEc, run through
the simulator's registry (``decentralized-elimination``, ``no-sharing``, ``full-sharing``). Every claim of
Sec. 5 is checked on the measured means and reported as found. Messages follow the paper's convention
(A11): votes for DE, (N-1) per step for 0-PRIVACY. The vote threshold is ceil(log delta/log eta) = 29 (A1;
the paper states 28).

Usage: python benchmarks/decentralized_paper002.py [--quick] [--workers 2]
  --quick: N in {32, 64, 128, 256}, 5 seeds (default: N up to 1024, 20 seeds as in the paper).
Writes (build/benchmarks/ instead with --quick) docs/results/decentralized_paper002.csv (one row per run),
decentralized_paper002_summary.csv,
decentralized_paper002_claims.csv and decentralized_paper002.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits.experiments import Task, run_tasks, write_table
from anonbandits.registry import get

MEANS = "0.7,0.5,0.3,0.1,0.1,0.1,0.1,0.1,0.1,0.1"
PROBLEMS = {"P1": {"activity": "uniform"}, "P2": {"activity": "skewed"}, "P3": {"activity": "uniform", "drift": 1e-5}}
ALGORITHMS = {  # label: (registered name, subroutine)
    "DSER3": ("decentralized-elimination", "ser3"),
    "DUGAPEC": ("decentralized-elimination", "ugapec"),
    "1-PRIVACY-SER3": ("no-sharing", "ser3"),
    "1-PRIVACY-UGAPEC": ("no-sharing", "ugapec"),
    "0-PRIVACY-SER3": ("full-sharing", "ser3"),
    "0-PRIVACY-UGAPEC": ("full-sharing", "ugapec"),
}
MAX_STEPS = 30_000_000


def tasks(grid: list[int], seeds: int) -> tuple[list[Task], list[dict]]:
    out, tags = [], []
    for problem, env in PROBLEMS.items():
        for label, (name, sub) in ALGORITHMS.items():
            for n in grid:
                given = {"users": n, "means": MEANS, "subroutine": sub, "max_rounds": MAX_STEPS, **env}
                params = get(name).resolve(given)
                for seed in range(seeds):
                    out.append(Task(name, params, seed))
                    tags.append({"problem": problem, "label": label})
    return out, tags


def _yes(flag) -> bool:
    """A 0/1 metric as written to a table (or a bool, as tables of earlier releases held)."""
    return str(flag) in ("1", "True")


def summarise(rows: list[dict]) -> dict[tuple[str, str, int], dict]:
    groups: dict[tuple[str, str, int], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["problem"], r["label"], int(r["users"])), []).append(r)
    out = {}
    for key, g in sorted(groups.items()):
        s = np.array([float(r["samples"]) for r in g])
        half = half_width(s, normal=True)
        out[key] = {
            "problem": key[0],
            "algorithm": key[1],
            "agents": key[2],
            "runs": s.size,
            "samples_mean": s.mean(),
            "samples_ci95": half,
            "messages_mean": np.mean([float(r["messages"]) for r in g]),
            "correct_rate": np.mean([_yes(r["approx_optimal"]) for r in g]),  # paper 002: eps-optimal
            "truncated": int(sum(_yes(r["truncated"]) for r in g)),
            "wall_time_mean": np.mean([float(r["wall_time"]) for r in g]),
        }
    return out


def _slope(xs, ys) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def claims(summary: dict, grid: list[int]) -> list[dict]:
    """The results stated in the paper's text (Sec. 5), checked on the means."""

    def m(problem: str, label: str, n: int, key: str = "samples_mean") -> float:
        return summary[(problem, label, n)][key]

    def curve(problem: str, label: str) -> np.ndarray:
        return np.array([m(problem, label, n) for n in grid])

    out = []

    def claim(name: str, ok: bool, found: str) -> None:
        out.append({"claim": name, "reproduced": "yes" if ok else "no", "found": found})

    for sub in ("SER3", "UGAPEC"):
        c = np.concatenate([curve(p, f"0-PRIVACY-{sub}") for p in ("P1", "P2")])
        claim(
            f"0-PRIVACY-{sub} needs about 800 samples, independent of N (P1, P2)",
            bool(500 <= c.mean() <= 1200 and c.max() / c.min() < 1.3),
            f"mean {c.mean():.0f}, range {c.min():.0f}-{c.max():.0f} over N and problems (same seeds: the "
            "shared learner's run does not involve the players)",
        )
    for sub in ("SER3", "UGAPEC"):
        s1, s2 = _slope(grid, curve("P1", f"1-PRIVACY-{sub}")), _slope(grid, curve("P2", f"1-PRIVACY-{sub}"))
        claim(
            f"1-PRIVACY-{sub} grows superlinearly in N (P1, P2)",
            s1 > 1 and s2 > 1,
            f"log-log slope {s1:.2f} (P1), {s2:.2f} (P2)",
        )
        worse = curve("P2", f"1-PRIVACY-{sub}") > curve("P1", f"1-PRIVACY-{sub}")
        claim(
            f"1-PRIVACY-{sub} is worse in P2 than in P1",
            bool(worse.all()),
            f"P2/P1 ratio {np.round(curve('P2', f'1-PRIVACY-{sub}') / curve('P1', f'1-PRIVACY-{sub}'), 2)}",
        )
    for sub in ("SER3", "UGAPEC"):
        big = [i for i, n in enumerate(grid) if n >= 64]
        ratio = curve("P2", f"D{sub}") / curve("P1", f"D{sub}")
        claim(
            f"D{sub} does better in P2 than in P1 (N >= 64)",
            bool(np.all(ratio[big] < 1)),
            f"P2/P1 ratio {np.round(ratio, 2)}",
        )
        p2 = curve("P2", f"D{sub}")
        if 32 in grid and 64 in grid:
            i32, i64 = grid.index(32), grid.index(64)
            claim(
                f"D{sub} in P2 decreases from N = 32 to N = 64 (16 frequent players < M)",
                bool(p2[i64] < p2[i32]),
                f"{p2[i32]:.0f} at N = 32, {p2[i64]:.0f} at N = 64",
            )
        tail = [n for n in grid if n >= 128]
        slope = _slope(tail, [m("P2", f"D{sub}", n) for n in tail])
        claim(
            f"D{sub} in P2 grows linearly in N beyond 64",
            0.8 <= slope <= 1.2,
            f"log-log slope {slope:.2f} over N = {tail[0]}..{tail[-1]}",
        )
    for problem in ("P1", "P2"):
        gap = curve(problem, "1-PRIVACY-SER3") / curve(problem, "1-PRIVACY-UGAPEC")
        claim(
            f"1-PRIVACY-UGAPEC outperforms 1-PRIVACY-SER3 ({problem}), gap growing with N",
            bool(np.all(gap > 1) and gap[-1] > gap[0]),
            f"SER3/UGAPEC ratio {np.round(gap, 2)}",
        )
        d = curve(problem, "DUGAPEC") / curve(problem, "DSER3")
        claim(
            f"DSER3 clearly outperforms DUGAPEC ({problem})",
            bool(np.all(d > 1.2)),
            f"DUGAPEC/DSER3 ratio {np.round(d, 2)}",
        )
    r1 = curve("P3", "1-PRIVACY-UGAPEC") / curve("P3", "1-PRIVACY-SER3")
    claim("P3: 1-PRIVACY-SER3 beats 1-PRIVACY-UGAPEC", bool(np.all(r1 > 1)), f"UGAPEC/SER3 ratio {np.round(r1, 2)}")
    rd = curve("P3", "DUGAPEC") / curve("P3", "DSER3")
    claim("P3: DSER3 beats DUGAPEC", bool(np.all(rd > 1)), f"DUGAPEC/DSER3 ratio {np.round(rd, 2)}")
    collapse = [curve("P3", lab) / curve("P1", lab) for lab in ("DUGAPEC", "1-PRIVACY-UGAPEC", "0-PRIVACY-UGAPEC")]
    ser3 = [curve("P3", lab) / curve("P1", lab) for lab in ("DSER3", "1-PRIVACY-SER3", "0-PRIVACY-SER3")]
    claim(
        "P3: UGAPEC-based methods collapse (P3/P1 much larger than for SER3)",
        bool(min(c.mean() for c in collapse) > 2 * max(c.mean() for c in ser3)),
        f"P3/P1 ratio UGAPEC {[round(float(c.mean()), 2) for c in collapse]}, "
        f"SER3 {[round(float(c.mean()), 2) for c in ser3]}",
    )
    msgs0 = np.array(
        [
            m(p, lab, n, "messages_mean")
            for p in PROBLEMS
            for lab in ("1-PRIVACY-SER3", "1-PRIVACY-UGAPEC")
            for n in grid
        ]
    )
    claim("1-PRIVACY sends no message", bool(np.all(msgs0 == 0)), f"{msgs0.max():.0f} messages at most")
    de = np.array([m("P1", "DSER3", n, "messages_mean") for n in grid])
    full = np.array([m("P1", "0-PRIVACY-SER3", n, "messages_mean") for n in grid])
    orders = np.log10(full / de)
    claim(
        "DSER3 needs 3 to 4 orders of magnitude fewer messages than 0-PRIVACY-SER3 (P1, largest N)",
        bool(3 <= orders[-1] <= 4.5),
        f"log10 ratio {np.round(orders, 2)} for N = {grid}",
    )
    claim(
        "DE messages <= M (K - 1) = 261 and independent of N (P1, P2)",
        bool(
            all(
                m(p, lab, n, "messages_mean") <= 261 + 28
                for p in ("P1", "P2")
                for lab in ("DSER3", "DUGAPEC")
                for n in grid
            )
        ),
        f"DSER3 P1 mean messages {np.round(de, 1)}",
    )
    rates = [v["correct_rate"] for v in summary.values() if v["algorithm"].startswith("D")]
    claim(
        "DE finds an eps-optimal arm (failure rate <= delta = 0.05)",
        bool(min(rates) >= 0.95),
        f"lowest correct rate over DE configurations {min(rates):.3f}",
    )
    return out


def plot(summary: dict, grid: list[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("P1", "samples", "Fig. 1a: Problem 1, sample complexity"),
        ("P1", "messages", "Fig. 1b: Problem 1, messages"),
        ("P2", "samples", "Fig. 2a: Problem 2 (80% of events from 50% of players)"),
        ("P3", "samples", "Fig. 2b: Problem 3 (decreasing suboptimal means)"),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for ax, (problem, metric, title) in zip(axes.ravel(), panels, strict=True):
        for label in ALGORITHMS:
            if metric == "messages" and label.startswith("1-PRIVACY"):
                continue
            ys = np.array([summary[(problem, label, n)][f"{metric}_mean"] for n in grid])
            line = ax.plot(grid, ys, marker="o", label=label)[0]
            if metric == "samples":
                ci = np.array([summary[(problem, label, n)]["samples_ci95"] for n in grid])
                ax.fill_between(grid, np.maximum(ys - ci, 1), ys + ci, color=line.get_color(), alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("number of players N")
        ax.set_ylabel("samples until stop" if metric == "samples" else "messages (paper's convention)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 256 and 5 seeds")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    out_dir = results_dir(args.quick)
    grid = [32, 64, 128, 256] if args.quick else [32, 64, 128, 256, 512, 1024]
    seeds = 5 if args.quick else 20
    todo, tags = tasks(grid, seeds)
    start = time.perf_counter()
    results = run_tasks(todo, workers=args.workers, progress=True)
    rows = [{**tag, **r.row} for tag, r in zip(tags, results, strict=True)]
    print(f"{len(rows)} runs in {time.perf_counter() - start:.0f} s")
    summary = summarise(rows)
    write_table(rows, out_dir / "decentralized_paper002.csv")
    write_table(list(summary.values()), out_dir / "decentralized_paper002_summary.csv")
    plot(summary, grid, out_dir / "decentralized_paper002.png")
    print(f"\n{'problem':7s} {'algorithm':18s} " + " ".join(f"N={n:<9d}" for n in grid))
    for problem in PROBLEMS:
        for label in ALGORITHMS:
            cells = " ".join(f"{summary[(problem, label, n)]['samples_mean']:<11.4g}" for n in grid)
            print(f"{problem:7s} {label:18s} {cells}")
    print(
        "\nmessages (P1): "
        + "; ".join(
            f"{label} " + "/".join(f"{summary[('P1', label, n)]['messages_mean']:.3g}" for n in grid)
            for label in ALGORITHMS
        )
    )
    found = claims(summary, grid)
    write_table(found, out_dir / "decentralized_paper002_claims.csv")
    print("\nclaims of the paper (Sec. 5):")
    for c in found:
        print(f"  [{c['reproduced']:>3s}] {c['claim']}: {c['found']}")
    print(f"\nwrote {out_dir}/decentralized_paper002*.csv and decentralized_paper002.png")


if __name__ == "__main__":
    main()
