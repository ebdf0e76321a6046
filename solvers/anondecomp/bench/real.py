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
    return DemandGraph.from_weights(
        w[keep], users=[f"t{k}" for k in np.flatnonzero(keep)], arms=[f"item{j}" for j in items]
    )


def obd_graph(archive: str | Path, C: int) -> DemandGraph:
    """The pooled OBD type x item graph at anonymity ``C`` (see the module docstring)."""
    return graph_from_counts(obd_counts(archive), C)


GUMBEL_CELLS = 10**7
"""``sampler="auto"`` of :func:`powerlaw_log` draws logs of at most this many users x items by Gumbel top-k
over all items, as it always has: the committed table docs/results/real_graphs.csv and the tests use these
exact graphs (:data:`anondecomp.bench.suite.REAL_SYNTHETIC` is at most 3 x 10^6 cells). Larger logs are drawn
by rounds, in time and memory proportional to their interactions."""
SAMPLERS = ("auto", "gumbel", "rounds")
_BLOCK_DRAWS = 1 << 21  # interactions drawn per block of users by the rounds sampler (bounds its memory)


def powerlaw_log(
    n_users: int,
    n_items: int,
    C: int,
    seed: int,
    *,
    max_share: float = 0.5,
    user_tail: float = USER_TAIL,
    min_activity: int = MIN_ACTIVITY,
    item_exponent: float = ITEM_EXPONENT,
    sampler: str = "auto",
) -> DemandGraph:
    """A synthetic interaction log as a unit-weight demand graph, shaped like OBD.

    Each user interacts with ``floor(min_activity * V^(-1 / (user_tail - 1)))`` distinct items (V uniform on
    (0, 1]: a discrete Pareto law), at most ``max_share * n_items``, drawn without replacement with
    probability proportional to (item rank)^-item_exponent. Items with fewer than C+1 users are dropped (they
    can never be observed), then users left with no item. Held sparse: memory grows with the interactions,
    never with users x items.

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
    sampler : {"auto", "gumbel", "rounds"}
        How each user's items are drawn; both samplers draw from the same law (successive sampling without
        replacement), from different random streams, so the same seed gives different graphs. ``"gumbel"``:
        Gumbel top-k over all items, vectorised over blocks of users (time n_users x n_items; memory a block
        of about 2 x 10^6 keys plus the interactions); the graphs of the committed tables. ``"rounds"``: each
        user draws items with replacement in rounds, keeping the first new ones in draw order until it has its
        count (rejection sampling of the same law; time and memory about its interactions, so 10^5 users x
        10^4 items take seconds). ``"auto"``: ``"gumbel"`` up to :data:`GUMBEL_CELLS` users x items, which
        keeps every graph drawn so far, else ``"rounds"``.

    Returns
    -------
    DemandGraph
        Unit weights; users ``u<k>`` and items ``i<k>`` keep their original indices in their names.

    Examples
    --------
    >>> g = powerlaw_log(1000, 100, C=10, seed=0)
    >>> g.n_users <= 1000 and g.n_arms <= 100 and bool((g.edge_weights == 1).all())
    True
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}")
    if sampler == "auto":
        sampler = "gumbel" if n_users * n_items <= GUMBEL_CELLS else "rounds"
    rng = np.random.default_rng(seed)
    pareto = min_activity * (1.0 - rng.random(n_users)) ** (-1.0 / (float(user_tail) - 1.0))
    degree = np.minimum(np.floor(pareto), max(int(max_share * n_items), 1)).astype(np.int64)
    draw = _gumbel_topk if sampler == "gumbel" else _rounds
    users, items = draw(rng, np.minimum(degree, n_items), n_items, float(item_exponent))
    return _log_graph(users, items, n_users, n_items, C)


def _gumbel_topk(
    rng: np.random.Generator, degree: np.ndarray, n_items: int, exponent: float
) -> tuple[np.ndarray, np.ndarray]:
    """(user, item) of every interaction, row-major: each user's ``degree`` items with the largest
    ``log p_j + Gumbel`` keys, a block of users (about 2 x 10^6 keys) at a time. The random stream and the
    pairs are those of every earlier version of :func:`powerlaw_log`."""
    logp = -exponent * np.log(np.arange(1, n_items + 1))
    block = max(1, 2_000_000 // n_items)
    users, items = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    for lo in range(0, len(degree), block):
        hi = min(lo + block, len(degree))
        keys = logp[None, :] + rng.gumbel(size=(hi - lo, n_items))
        order = np.argsort(-keys, axis=1)
        rank_of = np.empty_like(order)
        np.put_along_axis(rank_of, order, np.arange(n_items)[None, :], axis=1)
        r, c = np.nonzero(rank_of < degree[lo:hi, None])
        users.append(r + lo)
        items.append(c)
    return np.concatenate(users).astype(np.int64), np.concatenate(items).astype(np.int64)


def _rounds(
    rng: np.random.Generator, degree: np.ndarray, n_items: int, exponent: float
) -> tuple[np.ndarray, np.ndarray]:
    """(user, item) of every interaction, row-major: each user's ``degree`` distinct items, drawn with
    probability proportional to rank^-exponent without replacement.

    Rejection sampling: a user draws items with replacement (inverse CDF) and keeps each new item in draw
    order until it has ``degree``: the kept sequence is exactly successive sampling without replacement, the
    law of Gumbel top-k. Drawn in rounds over blocks of users, a round drawing ``1.25 x need / unseen mass``
    items for each user still short (its unseen probability mass is known exactly), so nearly every user is
    done after one or two rounds and the work is about the interactions, not users x items."""
    p = np.arange(1, n_items + 1, dtype=np.float64) ** -exponent
    p /= p.sum()
    cdf = _InverseCDF(p)
    if not degree.sum():
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    total = np.cumsum(degree)
    # blocks of users with about _BLOCK_DRAWS interactions each (a user of more is a block of its own)
    cuts = np.searchsorted(total, np.arange(1, int(total[-1]) // _BLOCK_DRAWS + 1) * _BLOCK_DRAWS, side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [len(degree)]]))
    users, items = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        u, j = np.divmod(_draw_block(rng, degree[lo:hi], p, cdf), n_items)
        users.append(u + lo)
        items.append(j)
    return np.concatenate(users), np.concatenate(items)


class _InverseCDF:
    """Items drawn with probability ``p``: ``searchsorted(cumsum(p), U)`` exactly, with a guide table (the
    first candidate of each of 4 x n_items equal slices of [0, 1)) so that a draw costs a few steps, not a
    binary search."""

    def __init__(self, p: np.ndarray) -> None:
        self.cdf = np.cumsum(p)
        self.cdf[-1] = 1.0
        self.slices = 4 * len(p)
        self.start = np.searchsorted(self.cdf, np.arange(self.slices) / self.slices, side="right")

    def __call__(self, u: np.ndarray) -> np.ndarray:
        """The item of every uniform ``u`` in [0, 1): the first index with ``cdf > u``."""
        cdf, n = self.cdf, len(self.cdf)
        x = np.minimum(self.start[np.minimum((u * self.slices).astype(np.int64), self.slices - 1)], n - 1)
        for _ in range(2):
            x = np.minimum(x + (cdf[x] <= u), n - 1)
        wrong = np.flatnonzero((cdf[x] <= u) & (x < n - 1) | (x > 0) & (cdf[np.maximum(x - 1, 0)] > u))
        x[wrong] = np.minimum(np.searchsorted(cdf, u[wrong], side="right"), n - 1)
        return x


def _draw_block(rng: np.random.Generator, degree: np.ndarray, p: np.ndarray, cdf: _InverseCDF) -> np.ndarray:
    """Sorted keys ``user * n_items + item`` of one block's interactions (users local to the block)."""
    n_items = len(p)
    chosen = np.empty(0, dtype=np.int64)
    need = degree.astype(np.int64).copy()
    mass = np.ones(len(degree))
    while True:
        who = np.flatnonzero(need > 0)
        if not len(who):
            return chosen
        # draws enough to finish most users in this round; a user still short draws again in the next
        m = np.minimum(np.ceil(1.25 * need[who] / np.maximum(mass[who], 1e-12)).astype(np.int64) + 4, 64 * n_items + 64)
        owner = np.repeat(who, m)
        item = cdf(rng.random(len(owner)))
        key = owner * n_items + item
        order = np.argsort(key, kind="stable")
        dup = np.zeros(len(key), dtype=bool)
        dup[1:] = key[order[1:]] == key[order[:-1]]
        first = np.sort(order[~dup])  # each pair's first draw in this round, in draw order
        if len(chosen):
            at = np.minimum(np.searchsorted(chosen, key[first]), len(chosen) - 1)
            first = first[chosen[at] != key[first]]  # drop items the user already has
        # draws are grouped by user in draw order: keep each user's first ``need`` new items
        own = owner[first]
        starts = np.searchsorted(own, own, side="left")
        keep = first[np.arange(len(first)) - starts < need[own]]
        new = key[keep]
        got = np.bincount(owner[keep], minlength=len(need))
        need -= got
        mass -= np.bincount(owner[keep], weights=p[item[keep]], minlength=len(need))
        chosen = np.sort(np.concatenate([chosen, new]))  # disjoint: no pair is kept twice


def _log_graph(users: np.ndarray, items: np.ndarray, n_users: int, n_items: int, C: int) -> DemandGraph:
    """The unit-weight graph of the distinct (user, item) interactions, given row-major, after dropping the
    items with fewer than C+1 users, then the users left with no item; built as a CSR array (no users x
    items array)."""
    from scipy.sparse import csr_array

    keep_item = np.bincount(items, minlength=n_items) >= C + 1
    on = keep_item[items]
    users, items = users[on], items[on]
    del on
    per_user = np.bincount(users, minlength=n_users)
    kept_users, kept_items = np.flatnonzero(per_user > 0), np.flatnonzero(keep_item)
    cols = (np.cumsum(keep_item) - 1).astype(np.int32)[items]  # the kept items' new indices
    indptr = np.concatenate([[0], np.cumsum(per_user[kept_users])])
    w = csr_array((np.ones(len(cols)), cols, indptr), shape=(len(kept_users), len(kept_items)))
    return DemandGraph.from_weights(w, users=[f"u{k}" for k in kept_users], arms=[f"i{k}" for k in kept_items])


def write_edge_table(graph: DemandGraph, path: str | Path, C: int | None = None) -> None:
    """Write ``graph`` as a Parquet edge table (columns user, arm, weight; ``C`` in the metadata), the form
    ``anonbandits decompose`` reads (docs/formats.md)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    # one row per edge (row-major, as the graph holds them): never a users x arms array
    users, arms = pa.array(graph.users, pa.string()), pa.array(graph.arms, pa.string())
    table = pa.table(
        {
            "user": users.take(np.asarray(graph.edge_users)),
            "arm": arms.take(np.asarray(graph.edge_arms)),
            "weight": np.asarray(graph.edge_weights),
        }
    )
    if C is not None:
        table = table.replace_schema_metadata({"C": json.dumps(int(C))})
    pq.write_table(table, path)
