"""Graph families of the solver benchmark (issue 6). Every generator is deterministic in its ``seed``.

* ``abundant``: random U-batched graphs with U >= K(C+1) (Corollary 1's regime: polytope is exact);
* ``scarce``: scarce-cluster U-batched graphs, U < K(C+1): ``niche`` arms are the optimal arm of exactly U
  users and active for nobody else, while those users still consider many arms (an early batch), so their
  columns of w/D fall below C+1 and block needs several blocks;
* ``niche-groups``: adversarial for block: K groups of exactly C+1 users (U = C+1, the smallest the paper
  allows), group g active on its own arm g and m others: block needs several blocks (R ~ 1.5-1.7 D in
  our runs) while interleaving the groups often reaches D;
* ``alg1``: batched graphs recorded from real runs of Algorithm 1 (``data/alg1_graphs.json``, written by
  ``benchmarks/record_alg1_graphs.py``);
* ``alg1-synth``: graphs shaped like Algorithm 1's batches at any size: user i's active set in batch b holds
  its optimal arm and every arm whose gap is below a radius halving with b.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from anondecomp.graph import DemandGraph


@dataclass(frozen=True)
class Instance:
    """A benchmark graph with its anonymity parameter and cluster size U (every arm optimal for >= U users)."""

    family: str
    graph: DemandGraph
    C: int
    U: int
    label: str = ""


def _clusters(rng: np.random.Generator, N: int, K: int, minimum: np.ndarray) -> np.ndarray:
    """Optimal arm of every user: arm j gets ``minimum[j]`` users, the rest spread over arms with minimum 0
    marked free (``minimum < 0`` means: exactly |minimum| users, never more)."""
    fixed = minimum < 0
    sizes = np.abs(minimum).astype(np.int64)
    rest = N - sizes.sum()
    free = np.flatnonzero(~fixed)
    sizes[free] += rng.multinomial(rest, np.full(len(free), 1 / len(free)))
    return rng.permutation(np.repeat(np.arange(K), sizes))


def abundant(N: int, K: int, C: int, D: float, seed: int, p: float = 0.5) -> Instance:
    """Random U-batched graph with balanced clusters, U = N // K >= K(C+1); A_i = optimal arm + Bernoulli(p)."""
    rng = np.random.default_rng(seed)
    U = N // K
    opt = _clusters(rng, N, K, np.full(K, U))
    active = rng.random((N, K)) < p
    active[np.arange(N), opt] = True
    return Instance(
        "abundant",
        DemandGraph.from_batched(D, active),
        C,
        int(np.bincount(opt, minlength=K).min()),
        f"N={N} K={K} seed={seed}",
    )


def scarce(N: int, K: int, C: int, U: int, D: float, seed: int, p: float = 0.5, niche: int = 1) -> Instance:
    """Scarce-cluster graph: ``niche`` arms are optimal for exactly U users and active for no one else."""
    rng = np.random.default_rng(seed)
    minimum = np.concatenate([np.full(niche, -U), np.full(K - niche, U)])
    opt = _clusters(rng, N, K, minimum)
    active = rng.random((N, K)) < p
    active[:, :niche] = False
    active[np.arange(N), opt] = True
    return Instance(
        "scarce",
        DemandGraph.from_batched(D, active),
        C,
        int(np.bincount(opt, minlength=K).min()),
        f"N={N} K={K} U={U} seed={seed}",
    )


def niche_groups(K: int, C: int, m: int, D: float, seed: int) -> Instance:
    """K groups of C+1 users; group g is active on arm g and on m other arms drawn at random."""
    rng = np.random.default_rng(seed)
    active = np.zeros((K * (C + 1), K), dtype=bool)
    for g in range(K):
        arms = np.concatenate([[g], rng.choice(np.delete(np.arange(K), g), m, replace=False)])
        active[g * (C + 1) : (g + 1) * (C + 1), arms] = True
    return Instance("niche-groups", DemandGraph.from_batched(D, active), C, C + 1, f"K={K} m={m} seed={seed}")


def alg1_synth(N: int, K: int, C: int, D: float, seed: int, batch: int = 1, radius: float = 0.6) -> Instance:
    """Batch ``batch`` of a synthetic Algorithm 1 run: user i keeps arm j while gap_ij < radius / 2^batch.

    Gaps are uniform on (0, 1) for suboptimal arms; clusters are balanced (U = N // K).
    """
    rng = np.random.default_rng(seed)
    opt = _clusters(rng, N, K, np.full(K, N // K))
    gap = rng.random((N, K))
    gap[np.arange(N), opt] = 0.0
    active = gap < radius / 2**batch
    return Instance(
        "alg1-synth",
        DemandGraph.from_batched(D, active),
        C,
        int(np.bincount(opt, minlength=K).min()),
        f"N={N} K={K} batch={batch} seed={seed}",
    )


@cache
def recorded_documents() -> list[dict]:
    """The recorded graphs as stored: ``demand``, ``arms``, ``C``, ``U``, ``label`` and bitmask ``active``."""
    path = resources.files("anondecomp.bench").joinpath("data/alg1_graphs.json")
    return json.loads(path.read_text())["graphs"]


def recorded(index: int | None = None) -> list[Instance]:
    """Graphs recorded from real Algorithm 1 runs (all of them, or the one at ``index``)."""
    out = []
    docs = recorded_documents() if index is None else [recorded_documents()[index]]
    for doc in docs:
        K = doc["arms"]
        masks = np.array(doc["active"], dtype=np.int64)
        active = (masks[:, None] >> np.arange(K)[None, :]) & 1
        out.append(
            Instance(
                "alg1", DemandGraph.from_batched(doc["demand"], active.astype(bool)), doc["C"], doc["U"], doc["label"]
            )
        )
    return out
