"""Best-arm identification for every user over the anonymous channel: does a better decomposition mean fewer
rounds? (issue 22, item 6; docs/anonymous-bandits.md, "Rounds to stop against the decomposer").

The experiment tests the thesis of *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000)
directly. Every user runs an (epsilon, delta)-PAC elimination learner
(:class:`anonbandits.core.learners.BestArmElimination`, paper 002's subroutines) in lock-step batches over the
anonymous channel (:func:`anonbandits.anonymous.bai.identify`): each batch's demand graph is decomposed by one
``anondecomp`` method and costs R_b (2C+2) rounds, so the rounds to stop are exactly sum_b R_b (2C+2).

The grid, fixed before any result was seen:

* decomposers: polytope (the baseline of the ratios; where its runs are refused, optimal, else block), randomized,
  block, greedy, optimal;
* schemes: median, se, ser3, and naive as a **control** (one all-active batch, where every exact decomposer
  gives R = D: it cannot separate the decomposers, so it is not evidence);
* instances: clustered, N = 30 users, K = 3 arms, C = 2 (so K(C+1) = 9), gap 0.4 between every user's best
  and second-best arm, Bernoulli rewards, with U < K(C+1) (``clustered-below``: cluster parameter 4, so every
  arm is optimal for at least 4 users; the tables give the smallest cluster over the seeds) and U = 10 >= K(C+1)
  (``clustered-above``, balanced); and a data-derived instance read from ``--means-file`` (any file
  :func:`anonbandits.envs.means_file.read_means` accepts: a headerless CSV matrix or a user-type table with a
  ``count`` column). Without ``--means-file`` the data instance is skipped and the output says so. On the OBD
  instance, median elimination with optimal takes most of the time, about 5 minutes per seed: its later batches
  ask each user for millions of samples over up to 80 arms, and optimal's programs grow with the arms;
* epsilon (``approx``) 0.3 and delta 0.05 per user;
* 20 seeds. A seed fixes the clustered instance and four separate streams (instance, rewards, learners'
  ties, decomposer), the same for every decomposer and scheme, so runs are paired by seed: each ratio
  against the baseline (named in every cell) is the mean of the per-seed ratios, with a 95% t interval
  (benchmarks/_stats.py).

Reported per (instance, scheme, decomposer): rounds to stop, assignments, batches, the share of users whose
recommendation is not epsilon-optimal (the error rate, to compare with delta), all as means with 95% CIs.
A run refused by the channel (an arm some learner wants that fewer than C+1 users can play; a batch with more
distinct user-assignments than :data:`anonbandits.anonymous.batches.MAX_ELICITED`, which randomized reaches on
many arms) or by the decomposer (polytope off its domain: an arm's column sum of w/D below C+1), all possible on
data instances, is counted in ``refused``, its reason kept in the run table, and left out of the means; so is a
run whose next batch would pass the channel's horizon of 10^9 rounds (``censored``: some users still exploring).
A cell with no finished run, or no paired baseline run, is left empty (never NaN).

Usage: python benchmarks/anonymous_bai.py [--quick] [--means-file PATH] [--experiment identification]
A full run writes docs/results/anonymous_bai{.csv,_summary.csv,_table.md,.png}; ``--quick`` (3 seeds, the
control and se only) writes to build/benchmarks/ instead.

Experiments are registered in ``EXPERIMENTS`` (name -> function of the parsed arguments and the output
directory); the anytime-regret comparison (SE epochs over the anonymous channel against Algorithm 1's BaSE,
T = 10^4..10^6) is meant to be added there as a second entry.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _output import results_dir
from _stats import half_width

from anonbandits.anonymous.bai import error_rate, identify
from anonbandits.anonymous.batches import channel_variance
from anonbandits.channels.anonymous import MAX_HORIZON
from anonbandits.core.learners import BestArmElimination
from anonbandits.envs.instances import MultiUserInstance, clustered_instance
from anonbandits.envs.means_file import read_means
from anonbandits.errors import AnonBanditsError
from anonbandits.experiments import write_table
from anondecomp import InfeasibleError, MethodNotApplicableError

DECOMPOSERS = ("polytope", "randomized", "block", "greedy", "optimal")
#: the baseline of the ratios: polytope, or where a cell's polytope runs did not all finish (off its domain), the
#: next exact decomposer (alpha = 1 on all-active batches) whose runs did, fewest assignments first
BASELINES = ("polytope", "optimal", "block")
SCHEMES = ("median", "se", "ser3")
CONTROL = "naive"
APPROX, DELTA = 0.3, 0.05


@dataclass(frozen=True)
class Setting:
    """One instance of the grid: clustered (``cluster`` = U) or read from a means file (``means_file``)."""

    name: str
    C: int
    users: int = 0
    arms: int = 0
    cluster: int = 0
    gap: float = 0.0
    means_file: str | None = None

    def instance(self, seed: int) -> MultiUserInstance:
        """The instance of ``seed`` (a means file gives the same one for every seed)."""
        if self.means_file:
            return MultiUserInstance(mu=read_means(self.means_file)[0])
        return clustered_instance(self.users, self.arms, self.cluster, self.gap, np.random.default_rng([seed, 0]))


CLUSTERED = (
    Setting("clustered-below", C=2, users=30, arms=3, cluster=4, gap=0.4),
    Setting("clustered-above", C=2, users=30, arms=3, cluster=10, gap=0.4),
)


def run_one(
    setting: Setting,
    instance: MultiUserInstance,
    scheme: str,
    decomposer: str,
    seed: int,
    *,
    approx: float = APPROX,
    delta: float = DELTA,
    max_rounds: int = MAX_HORIZON,
) -> dict:
    """One identification run: its row of the run table."""
    N, K = instance.n_users, instance.n_arms
    U = int(instance.min_cluster)
    row = {
        "instance": setting.name,
        "users": N,
        "arms": K,
        "C": setting.C,
        "U": U,
        "K_C_plus_1": K * (setting.C + 1),
        "scheme": scheme,
        "role": "control" if scheme == CONTROL else "scheme",
        "decomposer": decomposer,
        "seed": seed,
        "approx": approx,
        "delta": delta,
    }
    learners = BestArmElimination(
        N,
        K,
        scheme,
        approx=approx,
        delta=delta,
        rng=np.random.default_rng([seed, 2]),
        sigma2=channel_variance("anonymous", setting.C),
    )
    start = time.perf_counter()
    try:
        run = identify(
            instance,
            learners,
            C=setting.C,
            decomposer=decomposer,
            rng=np.random.default_rng([seed, 1]),
            decomposer_rng=np.random.default_rng([seed, 3]),
            max_rounds=max_rounds,
        )
    except (AnonBanditsError, InfeasibleError, MethodNotApplicableError) as err:
        # the channel (an arm short of C+1 players, a batch too large to elicit) or the decomposer (polytope off
        # its domain) refused a batch
        return row | {
            "status": "refused",
            "reason": f"{type(err).__name__}: {str(err).splitlines()[0]}",
            "wall_s": time.perf_counter() - start,
        }
    m = run.metrics
    unfinished = int((run.info["stopped_at"] < 0).sum())
    if unfinished:  # the next batch would pass the channel's horizon: the learners left keep their recommendation
        return row | {
            "status": "censored",
            "reason": f"{unfinished} user(s) still exploring at {m['rounds']} rounds",
            "rounds": m["rounds"],
            "unfinished_users": unfinished,
        }
    return row | {
        "status": "ok",
        "reason": "",
        "rounds": m["rounds"],
        "unfinished_users": 0,
        "assignments": m["assignments"],
        "rounds_per_assignment": m["rounds"] / max(m["assignments"], 1),
        "batches": m["batches"],
        "samples": m["samples"],
        "surplus": m["surplus"],
        "min_group_size": m["min_group_size"],
        "error_rate": error_rate(run, instance, approx),
        "wall_s": time.perf_counter() - start,
    }


def run_grid(
    settings: Iterable[Setting],
    schemes: Sequence[str],
    decomposers: Sequence[str],
    seeds: int,
    *,
    approx: float = APPROX,
    delta: float = DELTA,
    log: Callable[[str], None] | None = None,
) -> list[dict]:
    """Every (setting, seed, scheme, decomposer) run, the instance built once per setting and seed."""
    rows = []
    for setting in settings:
        for seed in range(seeds):
            instance = setting.instance(seed)
            for scheme in schemes:
                for decomposer in decomposers:
                    rows.append(run_one(setting, instance, scheme, decomposer, seed, approx=approx, delta=delta))
        if log:
            log(f"{setting.name}: {seeds} seeds done")
    return rows


def _interval(values: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """Mean and 95% interval; empty cells (no run finished) rather than NaN when there are no values."""
    if not len(values):
        return None, None, None
    half, mean = float(half_width(values)), float(values.mean())
    return mean, mean - half, mean + half


def baselines(rows: list[dict]) -> dict[tuple[str, str], str]:
    """The baseline decomposer of each (instance, scheme): the first of ``BASELINES`` whose runs all finished,
    else the first with any finished run."""
    runs: dict[tuple, list[str]] = defaultdict(list)
    for r in rows:
        runs[(r["instance"], r["scheme"], r["decomposer"])].append(r["status"])
    out = {}
    for inst, scheme in dict.fromkeys((r["instance"], r["scheme"]) for r in rows):
        status = {d: runs.get((inst, scheme, d), []) for d in BASELINES}
        full = [d for d in BASELINES if status[d] and all(s == "ok" for s in status[d])]
        some = [d for d in BASELINES if "ok" in status[d]]
        if full or some:
            out[(inst, scheme)] = (full or some)[0]
    return out


def summarise(rows: list[dict]) -> list[dict]:
    """One line per (instance, scheme, decomposer): means with 95% CIs, and the paired ratio of rounds against
    the cell's baseline decomposer (:func:`baselines`) over the seeds where both ran."""
    chosen = baselines(rows)
    base = {
        (r["instance"], r["scheme"], r["seed"]): r["rounds"]
        for r in rows
        if chosen.get((r["instance"], r["scheme"])) == r["decomposer"] and r["status"] == "ok"
    }
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        cells[(r["instance"], r["scheme"], r["decomposer"])].append(r)
    order = {name: i for i, name in enumerate((CONTROL, *SCHEMES))}
    first_seen = {name: i for i, name in enumerate(dict.fromkeys(r["instance"] for r in rows))}
    out = []
    for (inst, scheme, dec), group in sorted(
        cells.items(), key=lambda kv: (first_seen[kv[0][0]], order.get(kv[0][1], 9), DECOMPOSERS.index(kv[0][2]))
    ):
        ok = [r for r in group if r["status"] == "ok"]
        first = group[0]
        line = {
            "instance": inst,
            "users": first["users"],
            "arms": first["arms"],
            "C": first["C"],
            "U": min(r["U"] for r in group),
            "K_C_plus_1": first["K_C_plus_1"],
            "scheme": scheme,
            "role": first["role"],
            "decomposer": dec,
            "seeds": len(group),
            "refused": sum(r["status"] == "refused" for r in group),
            "censored": sum(r["status"] == "censored" for r in group),
            "approx": first["approx"],
            "delta": first["delta"],
        }
        for key in ("rounds", "assignments", "batches", "error_rate"):
            mean, lo, hi = _interval(np.array([r[key] for r in ok], dtype=float))
            line |= {f"{key}_mean": mean, f"{key}_ci_low": lo, f"{key}_ci_high": hi}
        paired = [(r["rounds"], base[(inst, scheme, r["seed"])]) for r in ok if (inst, scheme, r["seed"]) in base]
        ratio = np.array([a / b for a, b in paired], dtype=float)
        mean, lo, hi = _interval(ratio)
        line |= {
            "ratio_baseline": chosen.get((inst, scheme), ""),
            "paired_seeds": len(ratio),
            "rounds_ratio_mean": mean,
            "rounds_ratio_ci_low": lo,
            "rounds_ratio_ci_high": hi,
            "max_error_rate": max((r["error_rate"] for r in ok), default=None),
        }
        out.append(line)
    return out


def markdown(summary: list[dict], notes: Sequence[str]) -> str:
    """The summary as the Markdown table of docs/anonymous-bandits.md."""
    lines = [
        "| instance | scheme | decomposer | rounds to stop (95% CI) | ratio to baseline (95% CI) | "
        "error rate (95% CI) | refused / censored |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        scheme = f"{s['scheme']} (control)" if s["role"] == "control" else s["scheme"]
        inst = f"{s['instance']} (N={s['users']}, K={s['arms']}, C={s['C']}, U={s['U']})"
        if s["rounds_mean"] is None:  # every run refused or censored
            lines.append(
                f"| {inst} | {scheme} | {s['decomposer']} | no finished run | - | - | "
                f"{s['refused']} / {s['censored']} of {s['seeds']} |"
            )
            continue
        stand_in = "" if s["ratio_baseline"] == BASELINES[0] else f" ({BASELINES[0]} refused)"
        ratio = (
            "- (no paired baseline run)"
            if s["rounds_ratio_mean"] is None
            else f"{s['rounds_ratio_mean']:.3f} [{s['rounds_ratio_ci_low']:.3f}, {s['rounds_ratio_ci_high']:.3f}]"
            f" vs {s['ratio_baseline']}{stand_in}"
        )
        lines.append(
            f"| {inst} | {scheme} | {s['decomposer']} | {s['rounds_mean']:,.0f} [{s['rounds_ci_low']:,.0f}, "
            f"{s['rounds_ci_high']:,.0f}] | {ratio} | {s['error_rate_mean']:.4f} "
            f"[{max(s['error_rate_ci_low'], 0.0):.4f}, {s['error_rate_ci_high']:.4f}] (delta {s['delta']}) | "
            f"{s['refused']} / {s['censored']} of {s['seeds']} |"
        )
    return "\n".join(lines + [""] + [f"{note}" for note in notes]) + "\n"


def _number(value: float | None, empty: float = float("nan")) -> float:
    """A summary cell as a float to draw (``empty`` where no run finished)."""
    return empty if value is None else float(value)


def plot(summary: list[dict], path: Path, title: str) -> None:
    """Per instance: rounds to stop (log scale) and error rate against delta, grouped by scheme, one bar per
    decomposer, 95% CIs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    instances = list(dict.fromkeys(s["instance"] for s in summary))
    fig, axes = plt.subplots(2, len(instances), figsize=(6.5 * len(instances), 8), squeeze=False)
    for col, inst in enumerate(instances):
        cells = [s for s in summary if s["instance"] == inst]
        schemes = list(dict.fromkeys(s["scheme"] for s in cells))
        width = 0.8 / len(DECOMPOSERS)
        for d, dec in enumerate(DECOMPOSERS):
            pts = {s["scheme"]: s for s in cells if s["decomposer"] == dec}
            x = np.arange(len(schemes)) + (d - (len(DECOMPOSERS) - 1) / 2) * width
            for row, key in enumerate(("rounds", "error_rate")):
                y, lo, hi = (
                    np.array([_number(pts[sc][f"{key}_{part}"]) if sc in pts else np.nan for sc in schemes])
                    for part in ("mean", "ci_low", "ci_high")
                )
                err = np.vstack([y - np.maximum(lo, 0 if key == "error_rate" else 1e-9), hi - y])
                axes[row, col].bar(x, y, width, yerr=err, capsize=2, label=dec)
        labels = [f"{sc}\n(control)" if sc == CONTROL else sc for sc in schemes]
        for row in range(2):
            axes[row, col].set_xticks(np.arange(len(schemes)), labels)
        first = cells[0]
        axes[0, col].set_yscale("log")
        axes[0, col].set_ylabel("rounds to stop, sum_b R_b (2C+2)")
        axes[0, col].set_title(
            f"{inst}: N={first['users']}, K={first['arms']}, C={first['C']}, U={first['U']} "
            f"(K(C+1)={first['K_C_plus_1']})",
            fontsize=9,
        )
        axes[1, col].axhline(first["delta"], ls="--", color="k", label=f"delta = {first['delta']}")
        axes[1, col].set_ylim(0, 1.25 * max(first["delta"], *(_number(s["error_rate_ci_high"], 0.0) for s in cells)))
        axes[1, col].set_ylabel(f"share of users not {first['approx']}-optimal")
        axes[0, col].legend(fontsize=7)
        axes[1, col].legend(fontsize=7)
    fig.suptitle(title, y=1.0)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _cell(text: str) -> object:
    """A cell of a written run table back as a number where it is one."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def refusal_notes(rows: list[dict]) -> list[str]:
    """One line per (instance, scheme, decomposer) with refused runs: how many, and the first one's reason (every
    run's reason is in the run table)."""
    first: dict[tuple[str, str, str], list] = {}
    for r in rows:
        if r["status"] == "refused":
            first.setdefault((r["instance"], r["scheme"], r["decomposer"]), [0, r["reason"]])[0] += 1
    return [
        f"Refused: {inst}, {scheme}, {dec}: {n} run(s), e.g. {reason}."
        for (inst, scheme, dec), (n, reason) in first.items()
    ]


def identification(args: argparse.Namespace, out: Path) -> list[str]:
    """Rounds to stop and error rate of every (instance, scheme, decomposer); writes the tables and the plot."""
    schemes = (CONTROL, "se") if args.quick else (CONTROL, *SCHEMES)
    seeds = args.seeds or (3 if args.quick else 20)
    settings = list(CLUSTERED)
    notes = []
    if args.means_file:
        settings.append(Setting("data", C=args.data_C, means_file=args.means_file))
        notes.append(
            f"Data-derived instance: {Path(args.means_file).name}, C = {args.data_C}. Its ratios are against "
            "polytope where it ran, else (polytope off its domain) against optimal, else block, as each "
            "cell says. A batch too large to elicit (anonymous.batches.MAX_ELICITED distinct "
            "user-assignments) is refused by the identification driver, randomized before it draws, on the "
            "decomposer's own estimate of its assignments."
        )
    else:
        notes.append(
            "Data-derived instance: skipped (no --means-file given; the OBD recipe examples/obd_means.py writes one)."
        )
    if args.replot:  # draw the figure again from the run table already written
        with open(out / "anonymous_bai.csv", newline="") as fh:
            rows = [{k: _cell(v) for k, v in r.items()} for r in csv.DictReader(fh)]
    else:
        rows = run_grid(settings, schemes, DECOMPOSERS, seeds, log=print)
        write_table(rows, out / "anonymous_bai.csv")
    summary = summarise(rows)
    write_table(summary, out / "anonymous_bai_summary.csv")
    notes += refusal_notes(rows)
    notes.append(
        f"{seeds} paired seeds; epsilon = {APPROX}, delta = {DELTA} per user; naive is a control (one "
        "all-active batch), not evidence."
    )
    (out / "anonymous_bai_table.md").write_text(markdown(summary, notes))
    plot(
        summary,
        out / "anonymous_bai.png",
        f"Best-arm identification for every user over the anonymous channel: {seeds} paired seeds, 95% CIs",
    )
    return notes


#: experiments of this script: name -> function(arguments, output directory) returning notes to print
EXPERIMENTS: dict[str, Callable[[argparse.Namespace, Path], list[str]]] = {"identification": identification}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="3 seeds, control and se only, output in build/benchmarks/"
    )
    parser.add_argument(
        "--means-file",
        default="",
        help="means file of the data-derived instance (CSV matrix or user-type table); skipped when absent",
    )
    parser.add_argument("--data-C", type=int, default=2, help="C of the data-derived instance")
    parser.add_argument("--seeds", type=int, default=0, help="override the number of seeds")
    parser.add_argument(
        "--replot", action="store_true", help="summary, table and plot from the run table already written (no runs)"
    )
    parser.add_argument(
        "--experiment", choices=sorted(EXPERIMENTS), action="append", help="run only these experiments (default: all)"
    )
    args = parser.parse_args(argv)
    out = results_dir(args.quick)
    for name in args.experiment or list(EXPERIMENTS):
        start = time.perf_counter()
        for note in EXPERIMENTS[name](args, out):
            print(note)
        print(f"{name}: {time.perf_counter() - start:.0f} s -> {out}")


if __name__ == "__main__":
    sys.exit(main())
