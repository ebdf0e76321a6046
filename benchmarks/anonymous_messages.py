"""Multi-agent schemes with k-anonymous messages (issue 22, item 3): samples and messages against C.

MASE and DP-MASE (*Multi-Agent Best Arm Identification with Private Communications*, ICML 2023), Decentralized
Elimination and its full-sharing baseline (*Decentralized Exploration in Multi-Armed Bandits*, ICML 2019), each
at its registry defaults (N = 64 agents, paper 003's Problem 1 or paper 002's Problem 1), on the direct channel
(every vote or reward at once) and with ``--channel anonymous`` for C in {3, 10, 30, 60} and C = 100 > N: the
board releases a vote tally, or full sharing's per-arm reward sums, only over at least C distinct agents
(:mod:`anonbandits.core.votes`). An arm then leaves the shared set at its ``C ceil(M/C)``-th vote (M = 5 for
MASE and DP-MASE, 29 for Decentralized Elimination), never when fewer agents ever vote against it. Full sharing
cannot serve C > N (no release ever, and no local learning to fall back on): it refuses, and the table leaves
that row out. 20 seeds per cell, means with 95% t intervals.

Usage: python benchmarks/anonymous_messages.py [--quick]
A full run writes docs/results/anonymous_messages{.csv,.png}; ``--quick`` (3 seeds, C in {3, 60}) writes to
build/benchmarks/ instead.
"""

from __future__ import annotations

import argparse
import csv
import math
import time

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits import simulate
from anonbandits.core.votes import anonymous_threshold

ALGORITHMS = ("mase", "dp-mase", "decentralized-elimination", "full-sharing")
CS = (3, 10, 30, 60, 100)
USERS = 64  # the registry's default of all four
MEANS = (
    "samples",
    "messages",
    "released_aggregates",
    "best_arm_found",
    "users_best_arm_found",
    "users_approx_optimal",
    "stalled",
    "suboptimal_pulls",
)


def cells(quick: bool) -> list[tuple[str, str, int]]:
    """(algorithm, channel, C) of every cell; the direct channel is C = 1."""
    cs = (3, 60) if quick else CS
    return [
        (name, channel, C)
        for name in ALGORITHMS
        for channel, C in [("direct", 1)] + [("anonymous", c) for c in cs]
        if not (name == "full-sharing" and C > USERS)
    ]


def summarise(name: str, channel: str, C: int, runs: list[dict]) -> dict:
    """One row: the means of :data:`MEANS` with their 95% half-widths, the smallest group released over the runs
    and the vote that removes an arm."""
    row: dict = {"algorithm": name, "channel": channel, "C": C, "seeds": len(runs)}
    m = runs[0]["vote_threshold"]
    row["vote_threshold"] = "" if m is None else m
    row["removal_vote"] = "" if m is None else anonymous_threshold(m, C)
    for key in MEANS:
        values = np.array([math.nan if r.get(key) is None else float(r[key]) for r in runs])
        if np.isnan(values).all():
            row[key], row[f"{key}_ci"] = "", ""
            continue
        row[key], row[f"{key}_ci"] = float(values.mean()), float(half_width(values))
    sizes = [r["min_group_size"] for r in runs if r["min_group_size"] is not None]
    row["min_group_size"] = min(sizes) if sizes else ""
    return row


def plot(rows: list[dict], path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(ALGORITHMS), figsize=(4 * len(ALGORITHMS), 6.5), sharex=True)
    for j, name in enumerate(ALGORITHMS):
        mine = [r for r in rows if r["algorithm"] == name]
        x = np.array([r["C"] for r in mine], float)
        for i, key in enumerate(("samples", "released_aggregates")):
            ax = axes[i, j]
            y = np.array([r[key] for r in mine], float)
            ax.errorbar(x, y, yerr=[r[f"{key}_ci"] for r in mine], marker="o", capsize=3)
            for xi, yi, r in zip(x, y, mine, strict=True):
                if i == 0:
                    ax.annotate(
                        f"{r['best_arm_found']:.2f}",
                        (xi, yi),
                        textcoords="offset points",
                        xytext=(0, 6),
                        fontsize=7,
                        ha="center",
                    )
            ax.axvline(USERS, color="grey", lw=0.8, ls=":")
            ax.set_xscale("log")
            if name != "full-sharing" and i == 0:
                ax.set_yscale("log")
            ax.set_title(name if i == 0 else "")
            ax.set_ylabel("samples (label: best arm found)" if i == 0 else "released aggregates")
            if i == 1:
                ax.set_xlabel("C (1 = direct channel; dotted: N = 64 agents)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, C in {3, 60}, into build/benchmarks/")
    args = parser.parse_args()
    seeds = 3 if args.quick else 20
    out = results_dir(args.quick)
    rows, start = [], time.perf_counter()
    for name, channel, C in cells(args.quick):
        runs = [simulate(name, seed=seed, channel=channel, C=C).metrics for seed in range(seeds)]
        rows.append(summarise(name, channel, C, runs))
        print(
            f"{name:26s} {channel:9s} C={C:3d}: samples {rows[-1]['samples']:11.0f} "
            f"released {rows[-1]['released_aggregates']:7.1f} best {rows[-1]['best_arm_found']:.2f}",
            flush=True,
        )
    with open(out / "anonymous_messages.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
    plot(rows, out / "anonymous_messages.png")
    print(f"wrote {out / 'anonymous_messages.csv'} and .png in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
