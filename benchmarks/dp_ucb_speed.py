"""Speed of the paper-001 algorithms (issue 4): event-by-event simulation against plain per-round loops.

Target: a T = 10^7 run of any elimination-type algorithm in under 1 s, at >= 1000x the rounds per second of a
plain per-round Python loop. The per-round references below are straightforward loops (one reward draw and
one decision per round) of DP-SE and Anytime-Lazy-UCB; they run for fewer rounds and are timed per round.
Hybrid-UCB needs a decision every round: its scalar single-run loop is timed per round, its lockstep batch
per run-round (the speed-up column compares with the Anytime-Lazy-UCB per-round loop). FTNL has no
per-round loop of its own here; it is compared with the DP-SE loop (a full-information loop, drawing K rewards
a round, would be slower still).

    .venv/bin/python benchmarks/dp_ucb_speed.py [--quick]

Writes docs/results/dp_ucb_speed.csv and .png (a --quick run writes to build/benchmarks/ instead).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _output import results_dir

from anonbandits.dp import anytime_lazy_ucb, dp_se, ftnl, hybrid_ucb, hybrid_ucb_batch, se
from anonbandits.experiments import write_table
from anonbandits.reference.dp import per_round_dp_se, per_round_lazy_ucb

MEANS = np.array([0.75, 0.70, 0.70, 0.70, 0.70])  # paper 001, setting 1
EPSILON = 0.5


def best_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and shorter reference loops")
    args = parser.parse_args()
    out_dir = results_dir(args.quick)
    repeats = 2 if args.quick else 5
    ref_rounds = 50_000 if args.quick else 300_000
    horizon = 10**7
    rng = np.random.default_rng(0)
    fast = {
        "se": lambda: se(MEANS, horizon, rng),
        "dp-se": lambda: dp_se(MEANS, EPSILON, horizon, rng),
        "anytime-lazy-ucb": lambda: anytime_lazy_ucb(MEANS, EPSILON, horizon, rng),
        "ftnl": lambda: ftnl(MEANS, EPSILON, horizon, rng),
        "naive-ftnl": lambda: ftnl(MEANS, EPSILON, horizon, rng, naive=True),
    }
    reference = {"dp-se": per_round_dp_se, "anytime-lazy-ucb": per_round_lazy_ucb}
    ref_speed = {}
    for name, loop in reference.items():
        seconds = best_time(lambda loop=loop: loop(MEANS, EPSILON, ref_rounds, rng), 1)
        ref_speed[name] = ref_rounds / seconds
    rows = []
    for name, fn in fast.items():
        seconds = best_time(fn, repeats)
        ref = ref_speed.get(name, ref_speed["dp-se"])
        rows.append(
            {
                "algorithm": name,
                "mode": "event-by-event",
                "horizon": horizon,
                "runs": 1,
                "seconds": seconds,
                "rounds_per_s": horizon / seconds,
                "speedup_vs_per_round_loop": horizon / seconds / ref,
                "meets_target": bool(seconds < 1.0 and horizon / seconds / ref >= 1000),
            }
        )
    # The array form of Algorithm 1 keeps (so draws) every observation: O(T) by design, not in the target.
    seconds = best_time(lambda: anytime_lazy_ucb(MEANS, EPSILON, horizon, rng, storage="arrays"), repeats)
    rows.append(
        {
            "algorithm": "anytime-lazy-ucb",
            "mode": "array form (every reward drawn)",
            "horizon": horizon,
            "runs": 1,
            "seconds": seconds,
            "rounds_per_s": horizon / seconds,
            "speedup_vs_per_round_loop": horizon / seconds / ref_speed["anytime-lazy-ucb"],
            "meets_target": "",
        }
    )
    for name, speed in ref_speed.items():
        rows.append(
            {
                "algorithm": name,
                "mode": "plain per-round loop",
                "horizon": ref_rounds,
                "runs": 1,
                "seconds": ref_rounds / speed,
                "rounds_per_s": speed,
                "speedup_vs_per_round_loop": 1.0,
                "meets_target": "",
            }
        )
    hybrid_rounds = 10_000 if args.quick else 40_000
    hybrid_ucb(MEANS, EPSILON, 100, np.random.default_rng(1))  # load the compiled loop before timing
    seconds = best_time(lambda: hybrid_ucb(MEANS, EPSILON, 10 * hybrid_rounds, rng), 1)
    rows.append(
        {
            "algorithm": "hybrid-ucb",
            "mode": "per-round, single run",
            "horizon": 10 * hybrid_rounds,
            "runs": 1,
            "seconds": seconds,
            "rounds_per_s": 10 * hybrid_rounds / seconds,
            "speedup_vs_per_round_loop": 10 * hybrid_rounds / seconds / ref_speed["anytime-lazy-ucb"],
            "meets_target": "",
        }
    )
    for runs in (1, 105, 315):
        seconds = best_time(lambda runs=runs: hybrid_ucb_batch(MEANS, np.full(runs, EPSILON), hybrid_rounds, rng), 1)
        rows.append(
            {
                "algorithm": "hybrid-ucb",
                "mode": f"per-round, {runs} runs in lockstep",
                "horizon": hybrid_rounds,
                "runs": runs,
                "seconds": seconds,
                "rounds_per_s": runs * hybrid_rounds / seconds,
                "speedup_vs_per_round_loop": runs * hybrid_rounds / seconds / ref_speed["anytime-lazy-ucb"],
                "meets_target": "",
            }
        )
    write_table(rows, out_dir / "dp_ucb_speed.csv")
    _plot(rows, out_dir / "dp_ucb_speed.png")
    print(f"{'algorithm':28s} {'mode':34s} {'T':>9s} {'seconds':>9s} {'rounds/s':>10s} {'x loop':>9s}")
    for r in rows:
        print(
            f"{r['algorithm']:28s} {r['mode']:34s} {r['horizon']:9d} {r['seconds']:9.4f} "
            f"{r['rounds_per_s']:10.3g} {r['speedup_vs_per_round_loop']:9.3g}"
        )
    targets = [r for r in rows if r["mode"] == "event-by-event"]
    print(
        "target (T = 1e7 in < 1 s and >= 1000x the per-round loop):",
        "met by all"
        if all(r["meets_target"] for r in targets)
        else "NOT met by " + ", ".join(r["algorithm"] for r in targets if not r["meets_target"]),
    )


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['algorithm']}\n{r['mode']}" for r in rows]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    colors = [
        "tab:blue"
        if r["mode"] == "event-by-event"
        else "tab:red"
        if r["mode"].startswith("plain")
        else "tab:green"
        if r["mode"].startswith("array")
        else "tab:orange"
        for r in rows
    ]
    ax.barh(range(len(rows)), [r["rounds_per_s"] for r in rows], color=colors)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("simulated rounds per second (log scale; lockstep: run-rounds)")
    ax.set_title(
        "event-by-event (blue), ALU array form (green), per-round loops (red), Hybrid-UCB (orange)", fontsize=9
    )
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
