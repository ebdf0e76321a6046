"""Issue 22 speed: anon-bai's vectorised driver against a plain per-round loop written from the papers.

For each subroutine (naive, median, SE, SER3; paper 002's (epsilon, delta)-PAC best-arm identification), per-user
best-arm identification over the anonymous channel on a clustered instance (Bernoulli rewards, gap 0.2, K = 3,
C = 2, delta = 0.1, decomposer ``auto``):

* ``plain``: :func:`anonbandits.reference.anonymous_bai.reference_identify`, the baseline "plain per-round loop
  from the papers, same decomposer": per-user elimination learners as plain loops, ``anondecomp.decompose`` on
  each batch's demand graph, then every round of every repetition of every assignment one user at a time (reward
  draw, groups, the auditor's size check, released sums, each user's ``r_{s,0} - r_{s,k}``);
* ``identify``: :func:`anonbandits.anonymous.bai.identify` with :class:`~anonbandits.core.learners.BestArmElimination`
  (vectorised over users; the m repetitions of an assignment drawn as one sum per user and round).

Both at the same size (N = 60 users; approx per subroutine, so that the plain loop takes seconds to a minute),
the ratio of their median wall times (target >= 100x), and ``identify`` alone at larger N. Both learners use the
anonymous estimates' variance proxy (4C+1)/4 from the first batch. A last pair of rows uses the ``randomized``
decomposer, whose assignments are all distinct: nothing is aggregated over repetitions, so that ratio shows the
vectorisation alone (and the decomposer's own time, the same in both). Median of 3 wall times (1 with
``--quick``, at smaller sizes). Each pair has a ``floor`` row: the decomposer's own time plus one reward draw per
user, round and distinct assignment, nothing else (``benchmarks/_floor.py``); ``plain / floor`` is the ceiling of
any driver over that decomposer.

Usage: python benchmarks/anonymous_bai_speed.py [--quick]
Writes docs/results/anonymous_bai_speed.csv and .png (build/benchmarks/ with --quick).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _floor import fastest_decompositions, floor_row
from _output import results_dir

from anonbandits.anonymous.bai import identify
from anonbandits.core.learners import SUBROUTINES, BestArmElimination
from anonbandits.envs import clustered_instance
from anonbandits.experiments import write_table
from anonbandits.reference.anonymous_bai import reference_identify

K, C, GAP, DELTA = 3, 2, 0.2, 0.1
BASELINE = "plain per-round loop from the papers, same decomposer"
N_PLAIN = 60
# approx per subroutine: the plain loop's time at N_PLAIN (naive and median take many more samples than SE)
APPROX = {"naive": 0.2, "median": 0.7, "se": 0.1, "ser3": 0.1}
QUICK_APPROX = {"naive": 0.5, "median": 1.0, "se": 0.3, "ser3": 0.3}
LARGE = (600, 6000, 60_000)


def _instance(n: int):
    return clustered_instance(n, K, 0, GAP, np.random.default_rng(0))


#: the counts every row reports, read from identify's Result.metrics and the plain loop's run alike
COUNTS = ("rounds", "samples", "assignments", "batches")


def _fast(n: int, subroutine: str, approx: float, decomposer: str, seed: int) -> tuple[float, dict]:
    instance = _instance(n)
    start = time.perf_counter()
    learners = BestArmElimination(
        n, K, subroutine, approx=approx, delta=DELTA, sigma2=(4 * C + 1) / 4, rng=np.random.default_rng(seed)
    )
    run = identify(
        instance,
        learners,
        C=C,
        decomposer=decomposer,
        rng=np.random.default_rng(seed + 1),
        decomposer_rng=np.random.default_rng(seed + 2),
    )
    return time.perf_counter() - start, {key: run.metrics[key] for key in COUNTS}


def _plain(n: int, subroutine: str, approx: float, decomposer: str, seed: int):
    instance = _instance(n)
    start = time.perf_counter()
    run = reference_identify(
        instance.mu,
        subroutine,
        C=C,
        approx=approx,
        delta=DELTA,
        decomposer=decomposer,
        reward_rng=np.random.default_rng(seed + 1),
        learner_rng=np.random.default_rng(seed),
        decomposer_rng=np.random.default_rng(seed + 2),
    )
    return time.perf_counter() - start, {key: getattr(run, key) for key in COUNTS}


def _row(measure: str, subroutine: str, decomposer: str, n: int, approx: float, walls: list[float], run: dict) -> dict:
    """A table row from a run's :data:`COUNTS`; ``walls`` empty for the floor, whose timing columns
    :func:`_floor.floor_row` gives."""
    wall = statistics.median(walls) if walls else None
    return {
        "measure": measure,
        "subroutine": subroutine,
        "decomposer": decomposer,
        "users": n,
        "arms": K,
        "C": C,
        "approx": approx,
        "delta": DELTA,
        **run,
        "user_rounds": run["rounds"] * n,
        "wall_time": wall,
        "wall_min": min(walls, default=None),
        "wall_max": max(walls, default=None),
        "repeats": len(walls) or None,
        "throughput": run["rounds"] * n / wall if walls else None,
        "ratio": None,
        "baseline": BASELINE if measure == "identify" else "",
    }


def _timed(fn, repeat: int, *args) -> tuple[list[float], dict]:
    walls: list[float] = []
    run: dict = {}
    for _ in range(repeat):
        wall, run = fn(*args, seed=1)
        walls.append(wall)
    return walls, run


def compare(subroutine: str, approx: float, decomposer: str, n: int, repeat: int) -> list[dict]:
    """The plain loop and identify at one size (same seeds), and their ratio."""
    fast_walls, fast = _timed(_fast, repeat, n, subroutine, approx, decomposer)
    plain_walls, plain = _timed(_plain, repeat, n, subroutine, approx, decomposer)
    rows = [
        _row("plain", subroutine, decomposer, n, approx, plain_walls, plain),
        _row("identify", subroutine, decomposer, n, approx, fast_walls, fast),
    ]
    rows[1]["ratio"] = rows[0]["wall_time"] / rows[1]["wall_time"]
    calls = fastest_decompositions(lambda: _fast(n, subroutine, approx, decomposer, seed=1))
    rows.append(
        _row("floor", subroutine, decomposer, n, approx, [], fast)
        | floor_row(calls, _instance(n).mu, C, rows[0]["wall_time"])
    )
    print(
        f"{subroutine:6s} {decomposer:10s} N={n}: plain {rows[0]['wall_time']:7.2f} s ({plain['rounds']} rounds, "
        f"{plain['samples']} samples), identify {rows[1]['wall_time']:7.3f} s ({fast['rounds']} rounds, "
        f"{fast['samples']} samples): {rows[1]['ratio']:,.0f}x (target >= 100x); floor {rows[2]['wall_time']:.3f} s "
        f"(decomposer {rows[2]['decompose_s']:.3f} s + draws {rows[2]['draw_s']:.3f} s), ceiling "
        f"{rows[2]['ratio']:,.0f}x",
        flush=True,
    )
    return rows


def scale(subroutine: str, approx: float, sizes: tuple[int, ...], repeat: int) -> list[dict]:
    rows = []
    for n in sizes:
        walls, run = _timed(_fast, repeat, n, subroutine, approx, "auto")
        rows.append(_row("identify", subroutine, "auto", n, approx, walls, run))
        print(
            f"{subroutine:6s} identify N={n}: {rows[-1]['wall_time']:.3f} s, {run['rounds']} rounds, "
            f"{rows[-1]['throughput']:,.0f} user-rounds/s",
            flush=True,
        )
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for sub in SUBROUTINES:
        fast = sorted(
            (r for r in rows if r["subroutine"] == sub and r["measure"] == "identify" and r["decomposer"] == "auto"),
            key=lambda r: r["users"],
        )
        (line,) = ax1.plot([r["users"] for r in fast], [r["wall_time"] for r in fast], "o-", label=f"identify, {sub}")
        plain = [r for r in rows if r["subroutine"] == sub and r["measure"] == "plain" and r["decomposer"] == "auto"]
        ax1.plot(
            [r["users"] for r in plain],
            [r["wall_time"] for r in plain],
            "s",
            color=line.get_color(),
            markersize=9,
            markerfacecolor="none",
            label=f"plain loop, {sub}",
        )
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("users N")
    ax1.set_ylabel("seconds per run (median)")
    ax1.set_title(f"anon-bai, K={K}, C={C}, decomposer auto")
    ax1.legend(fontsize="small", ncol=2, loc="upper center")
    pairs = [r for r in rows if r["measure"] == "identify" and r["ratio"] is not None]
    ax2.bar([f"{r['subroutine']}\n{r['decomposer']}" for r in pairs], [r["ratio"] for r in pairs])
    ax2.axhline(100, color="red", linestyle="--", label="target 100x")
    ax2.set_yscale("log")
    ax2.set_ylabel("plain loop time / identify time")
    ax2.set_title(f"ratio at N={pairs[0]['users'] if pairs else N_PLAIN} ({BASELINE})", fontsize="small")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repetition at smaller sizes")
    parser.add_argument(
        "--out",
        help="table path (default docs/results/anonymous_bai_speed.csv; with --quick "
        "build/benchmarks/anonymous_bai_speed.csv)",
    )
    args = parser.parse_args()
    args.out = args.out or str(results_dir(args.quick) / "anonymous_bai_speed.csv")
    repeat = 1 if args.quick else 3
    approx = QUICK_APPROX if args.quick else APPROX
    n_plain = 30 if args.quick else N_PLAIN
    rows = []
    for sub in SUBROUTINES:
        rows += compare(sub, approx[sub], "auto", n_plain, repeat)
        rows += scale(sub, approx[sub], LARGE[:2] if args.quick else LARGE, repeat)
    rows += compare("se", QUICK_APPROX["se"], "randomized", n_plain, repeat)
    out = write_table(rows, args.out)
    plot(rows, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
