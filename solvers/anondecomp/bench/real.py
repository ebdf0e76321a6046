"""Demand graphs of real logs: the Open Bandit Dataset sample, and synthetic logs shaped like it.

**Open Bandit Dataset (OBD).** Saito, Aihara, Matsutani, Narita, *Open Bandit Dataset and Pipeline: Towards
Realistic and Reproducible Off-Policy Evaluation*, NeurIPS 2021 Datasets and Benchmarks. Its 10,000-row
samples of ZOZOTOWN's fashion logs (80 items; a uniform ``random`` and a Thompson-sampling ``bts`` policy)
ship inside the ``obp`` package's source distribution, folder ``obp/dataset/obd/``. The logs carry no user
id; a *user type* is the 4-tuple ``user_feature_0..3``. The demand graph is type x item with weight = the
number of impressions of that item to that type, the ``random`` and ``bts`` logs of campaign ``all`` pooled,
and only the items wanted by at least C+1 types kept (an item wanted by fewer can never be observed).
The data is not redistributed with this project: :func:`obd_graph` reads it from the ``obp`` archive, which
``benchmarks/real_graphs.py`` fetches with
``pip download --no-deps --no-binary :all: --ignore-requires-python obp==0.5.7``.

**Synthetic logs** (:func:`powerlaw_log`): unit demand per (user, item) interaction, user activity and item
popularity following power laws fitted to OBD (least-squares slope of log size against log rank over the top
half): impressions per user type fall as rank^-1.22 and impressions per item as rank^-0.63
(:data:`ITEM_EXPONENT`). A rank exponent s is a Pareto tail of exponent 1 + 1/s, so user activity is drawn
from a discrete Pareto law of tail exponent 1.82 (:data:`USER_TAIL`; OBD's own maximum-likelihood estimate
over its top half is 1.83) from a minimum of 5 items (:data:`MIN_ACTIVITY`), whose median, 12, is OBD's.
"""

from __future__ import annotations

import csv
import io
import tarfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from anondecomp.graph import DemandGraph

USER_TAIL = 1 + 1 / 1.22
"""Pareto tail exponent of user activity, from the rank exponent 1.22 of OBD's impressions per user type."""
MIN_ACTIVITY = 5
"""Fewest items a synthetic user interacts with (the Pareto law's scale; median activity 5 * 2^1.22 = 12)."""
ITEM_EXPONENT = 0.63
"""Rank exponent of item popularity, fitted to OBD's impressions per item."""
OBD_MEMBER = "obp-{version}/obp/dataset/obd/{policy}/all/all.csv"
OBD_POLICIES = ("random", "bts")


def obd_rows(archive: str | Path, version: str = "0.5.7", policies=OBD_POLICIES) -> Iterator[dict[str, str]]:
    """The rows (column -> text) of the OBD logs of campaign ``all`` inside the ``obp`` source archive
    (``.tar.gz``), the ``policies`` one after the other."""
    with tarfile.open(archive, "r:gz") as tar:
        for policy in policies:
            member = tar.extractfile(OBD_MEMBER.format(version=version, policy=policy))
            if member is None:
                raise FileNotFoundError(f"{archive}: no OBD log for policy {policy!r}")
            yield from csv.DictReader(io.TextIOWrapper(member, encoding="utf-8"))


def obd_type(row: dict[str, str]) -> str:
    """The user type of an OBD row: its ``user_feature_0..3`` joined by ``|``."""
    return "|".join(row[f"user_feature_{k}"] for k in range(4))


def obd_counts(archive: str | Path, version: str = "0.5.7", policies=OBD_POLICIES) -> Counter:
    """Impressions per (user type, item) in the OBD sample inside the ``obp`` source archive (``.tar.gz``).

    Returns a Counter keyed by (type, item) with the type the ``|``-joined ``user_feature_0..3``.
    """
    return Counter((obd_type(row), int(row["item_id"])) for row in obd_rows(archive, version, policies))


def graph_from_counts(counts: Counter, C: int) -> DemandGraph:
    """Type x item demand graph of ``counts`` keeping the items wanted by >= C+1 types (and the types left
    with some demand); users are named ``t0, t1, ...`` in sorted order of their feature tuple, items
    ``item<id>``."""
    types = sorted({u for u, _ in counts})
    degree = Counter(j for _, j in counts)
    items = sorted(j for j, n in degree.items() if n >= C + 1)
    col = {j: k for k, j in enumerate(items)}
    row = {u: k for k, u in enumerate(types)}
    w = np.zeros((len(types), len(items)))
    for (u, j), n in counts.items():
        if j in col:
            w[row[u], col[j]] = n
    keep = w.sum(axis=1) > 0
    return DemandGraph.from_weights(w[keep], users=[f"t{k}" for k in np.flatnonzero(keep)],
                                    arms=[f"item{j}" for j in items])


def obd_graph(archive: str | Path, C: int) -> DemandGraph:
    """The pooled OBD type x item graph at anonymity ``C`` (see the module docstring)."""
    return graph_from_counts(obd_counts(archive), C)


def powerlaw_log(n_users: int, n_items: int, C: int, seed: int, *, max_share: float = 0.5,
                 user_tail: float = USER_TAIL, min_activity: int = MIN_ACTIVITY,
                 item_exponent: float = ITEM_EXPONENT) -> DemandGraph:
    """A synthetic interaction log as a unit-weight demand graph, shaped like OBD.

    Each user interacts with ``floor(min_activity * V^(-1 / (user_tail - 1)))`` distinct items (V uniform on
    (0, 1]: a discrete Pareto law), at most ``max_share * n_items``, drawn without replacement with
    probability proportional to (item rank)^-item_exponent (Gumbel top-k, vectorised over blocks of users).
    Items with fewer than C+1 users are dropped (they can never be observed), then users left with no item.

    Parameters
    ----------
    n_users, n_items : int
        Size of the log before dropping.
    C : int
        Anonymity parameter used for dropping items.
    seed : int
        Seed of the ``numpy.random.Generator`` drawing the log.
    max_share : float
        Largest share of the items one user interacts with.
    user_tail, min_activity : float, int
        Tail exponent and minimum of the Pareto law of user activity.
    item_exponent : float
        Rank exponent of item popularity.

    Returns
    -------
    DemandGraph
        Unit weights; users ``u<k>`` and items ``i<k>`` keep their original indices in their names.

    Examples
    --------
    >>> g = powerlaw_log(1000, 100, C=10, seed=0)
    >>> g.n_users <= 1000 and g.n_arms <= 100 and bool((g.weights[g.weights > 0] == 1).all())
    True
    """
    rng = np.random.default_rng(seed)
    pareto = min_activity * (1.0 - rng.random(n_users)) ** (-1.0 / (float(user_tail) - 1.0))
    degree = np.minimum(np.floor(pareto), max(int(max_share * n_items), 1)).astype(np.int64)
    logp = -float(item_exponent) * np.log(np.arange(1, n_items + 1))
    w = np.zeros((n_users, n_items), dtype=np.float64)
    block = max(1, 2_000_000 // n_items)
    for lo in range(0, n_users, block):
        hi = min(lo + block, n_users)
        keys = logp[None, :] + rng.gumbel(size=(hi - lo, n_items))
        order = np.argsort(-keys, axis=1)
        rank_of = np.empty_like(order)
        np.put_along_axis(rank_of, order, np.arange(n_items)[None, :], axis=1)
        w[lo:hi] = rank_of < degree[lo:hi, None]
    items = np.flatnonzero((w > 0).sum(axis=0) >= C + 1)
    w = w[:, items]
    users = np.flatnonzero(w.sum(axis=1) > 0)
    return DemandGraph.from_weights(w[users], users=[f"u{k}" for k in users], arms=[f"i{k}" for k in items])


def write_edge_table(graph: DemandGraph, path: str | Path, C: int | None = None) -> None:
    """Write ``graph`` as a Parquet edge table (columns user, arm, weight; ``C`` in the metadata), the form
    ``anonbandits decompose`` reads (docs/formats.md)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    i, j = np.nonzero(graph.support)
    table = pa.table({"user": pa.array(np.asarray(graph.users, dtype=object)[i].tolist(), pa.string()),
                      "arm": pa.array(np.asarray(graph.arms, dtype=object)[j].tolist(), pa.string()),
                      "weight": graph.weights[i, j]})
    if C is not None:
        table = table.replace_schema_metadata({"C": json.dumps(int(C))})
    pq.write_table(table, path)
