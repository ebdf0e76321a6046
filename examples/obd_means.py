"""Means from a log: smoothed click-through rates per user type x item of the Open Bandit Dataset sample, written
as a user-type table that ``--means`` reads (docs/anonymous-bandits.md, "Instances from data").

Data: Saito, Aihara, Matsutani, Narita, "Open Bandit Dataset and Pipeline: Towards Realistic and Reproducible
Off-Policy Evaluation", NeurIPS 2021 Datasets and Benchmarks. Its 10,000-row samples (ZOZOTOWN, 80 items, a
uniform ``random`` and a Thompson-sampling ``bts`` policy, campaign ``all``) ship inside the ``obp`` source
archive; they are pooled, and a user type is the 4-tuple ``user_feature_0..3``
(:func:`anondecomp.bench.real.obd_rows`, :func:`anondecomp.bench.real.obd_type`).

The recipe, for type i and item j with n_ij impressions and c_ij clicks:

1. Smoothing (empirical Bayes, a Beta prior of strength m pseudo-impressions, ``--prior``, default 100): the
   item's CTR p_j = (c_j + m g) / (n_j + m), shrunk towards the global CTR g; then the type's
   ctr_ij = (c_ij + m p_j) / (n_ij + m), the posterior mean under Beta(m p_j, m (1 - p_j)). An item a type never
   saw gets p_j.
2. Learnable gaps. The raw CTRs lie within about 10^-2 of each other, so each type's gap between its best and
   second-best item is about 10^-3 and no horizon a simulation can afford separates them. Each type's CTRs are
   mapped affinely onto ``--range LO HI`` (default 0.1 0.9): mean_ij = LO + (HI - LO) (ctr_ij - min_j ctr_ij) /
   (max_j ctr_ij - min_j ctr_ij). The map is increasing, so every type keeps its ranking of the items and its best
   item; only the scale of its gaps changes (a type whose CTRs are all equal gets (LO + HI) / 2 everywhere).
   Exact ties stay ties: the script reports how many types have two best items, for which an (epsilon,
   delta)-PAC scheme (``anon-bai --approx``) is the fair question.
3. Users: ``count`` = ceil(impressions of the type / ``--impressions-per-user``) (default 1: one user per
   impression, 20,000 in all).

Usage::

    python examples/obd_means.py [OBP_ARCHIVE] -o types.csv [--prior 100] [--range 0.1 0.9]
        [--impressions-per-user 1]

Without OBP_ARCHIVE the archive is build/obd/obp-0.5.7.tar.gz, downloaded there on first use by
``pip download --no-deps --no-binary :all: --ignore-requires-python obp==0.5.7`` (benchmarks/real_graphs.py).
The data is not redistributed with this project. ``-o`` ending in ``.parquet`` writes Parquet. The summary
(types, items, users, gaps before and after) goes to stdout.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from anondecomp.bench.real import obd_rows, obd_type
from anondecomp.io import atomic_open

ROOT = Path(__file__).resolve().parents[1]


def tallies(rows: Iterable[dict[str, str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(impressions, clicks) as (types, items) arrays, and the items' names ``item_<id>`` (ids sorted)."""
    cells: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        cell = cells.setdefault((obd_type(row), int(row["item_id"])), [0, 0])
        cell[0] += 1
        cell[1] += int(row["click"])
    types = sorted({t for t, _ in cells})
    items = sorted({j for _, j in cells})
    row_of, col_of = {t: i for i, t in enumerate(types)}, {j: k for k, j in enumerate(items)}
    shows, clicks = np.zeros((len(types), len(items)), np.int64), np.zeros((len(types), len(items)), np.int64)
    for (t, j), (n, c) in cells.items():
        shows[row_of[t], col_of[j]], clicks[row_of[t], col_of[j]] = n, c
    return shows, clicks, [f"item_{j}" for j in items]


def smoothed_ctr(shows: np.ndarray, clicks: np.ndarray, prior: float) -> np.ndarray:
    """Posterior-mean CTRs: each item's pooled CTR shrunk to the global one, each type's to its item's."""
    overall = clicks.sum() / shows.sum()
    item = (clicks.sum(axis=0) + prior * overall) / (shows.sum(axis=0) + prior)
    return (clicks + prior * item) / (shows + prior)


def rescale(ctr: np.ndarray, low: float, high: float) -> np.ndarray:
    """Each row mapped affinely onto [low, high] (an increasing map: rankings and best items kept)."""
    lo, hi = ctr.min(axis=1, keepdims=True), ctr.max(axis=1, keepdims=True)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.where(hi > lo, low + (high - low) * (ctr - lo) / span, (low + high) / 2)


def top_gaps(means: np.ndarray) -> np.ndarray:
    """Each row's gap between its largest and second-largest entry."""
    top2 = np.sort(means, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


def user_type_table(shows: np.ndarray, clicks: np.ndarray, *, prior: float = 100.0,
                    value_range: tuple[float, float] = (0.1, 0.9),
                    impressions_per_user: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts, rescaled means, smoothed CTRs) of the types, in decreasing order of impressions."""
    order = np.argsort(-shows.sum(axis=1), kind="stable")
    shows, clicks = shows[order], clicks[order]
    ctr = smoothed_ctr(shows, clicks, prior)
    counts = -(-shows.sum(axis=1) // impressions_per_user)
    return counts, rescale(ctr, *value_range), ctr


def write_table(path: Path, counts: np.ndarray, means: np.ndarray, items: list[str]) -> None:
    """A user-type table (``count`` then one column per item) as CSV, or Parquet for a ``.parquet`` name."""
    if path.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"count": counts, **{name: means[:, k] for k, name in enumerate(items)}}), path)
        return
    with atomic_open(path, newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["count", *items])
        out.writerows([int(c), *(f"{m:.6g}" for m in row)] for c, row in zip(counts, means, strict=True))


def summary(counts: np.ndarray, means: np.ndarray, ctr: np.ndarray) -> str:
    before, after = top_gaps(ctr), top_gaps(means)
    best = np.argmax(means, axis=1)
    users_of = np.bincount(best, weights=counts, minlength=means.shape[1])
    return "\n".join([
        f"types {means.shape[0]}, items {means.shape[1]}, users (count total) {int(counts.sum())}",
        f"smoothed CTRs in [{ctr.min():.4g}, {ctr.max():.4g}]",
        f"best-vs-second gap per type before: median {np.median(before):.3g}, min {before.min():.3g}, "
        f"max {before.max():.3g}",
        f"after rescaling: median {np.median(after):.3g}, min {after.min():.3g}, max {after.max():.3g}; "
        f"types with two best items (gap 0): {int((after == 0).sum())}",
        f"items that are some type's best: {int((users_of > 0).sum())}; users of the thinnest of them: "
        f"{int(users_of[users_of > 0].min())}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", nargs="?", help="the obp source archive (default: build/obd/, fetched once)")
    parser.add_argument("-o", "--out", required=True, type=Path, help="the table to write (.csv or .parquet)")
    parser.add_argument("--prior", type=float, default=100.0, help="Beta prior strength m (pseudo-impressions)")
    parser.add_argument("--range", nargs=2, type=float, default=(0.1, 0.9), metavar=("LO", "HI"),
                        help="each type's CTRs are mapped affinely onto [LO, HI]")
    parser.add_argument("--impressions-per-user", type=int, default=1, help="count = ceil(impressions / this)")
    args = parser.parse_args(argv)
    low, high = args.range
    if not (0 <= low < high <= 1 and args.prior > 0 and args.impressions_per_user >= 1):
        parser.error("need 0 <= LO < HI <= 1, a positive --prior and --impressions-per-user >= 1")
    if args.out.suffix.lower() not in (".csv", ".parquet"):
        parser.error(f"-o {args.out}: use a .csv or .parquet name")
    if args.archive:
        archive = Path(args.archive)
    else:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from real_graphs import obd_archive  # the benchmark's download into build/obd/

        archive = obd_archive()
    shows, clicks, items = tallies(obd_rows(archive))
    counts, means, ctr = user_type_table(shows, clicks, prior=args.prior, value_range=(low, high),
                                         impressions_per_user=args.impressions_per_user)
    write_table(args.out, counts, means, items)
    print(summary(counts, means, ctr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
