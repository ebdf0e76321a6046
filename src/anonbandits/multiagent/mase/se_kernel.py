"""Compiled round loop for the SE-based voting schemes of Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm
Identification with Private Communications" (ICML 2023): MASE (Algorithm 1), CORRUPTED ELIMINATION (Algorithm 3)
and the INDEPENDENT baseline (Sec. 6).

The kernel is the algorithm itself, one main-loop iteration per round: an agent is drawn from P_N (by default
restricted to the agents still in the pool, a choice of this library: the paper does not say whether finished
agents are still drawn), it pulls every arm of its local set, runs the SE test of Sec. 4.1 (local routine 4b),
votes, leaves the pool or synchronises, in the order of Algorithms 1 and 3.

Its state travels as named tuples of arrays: :class:`LoopConfig` (the instance, the activity and the
algorithm's constants), :class:`Agents` (every agent's local set, sums, clock and status) and :class:`Board`
(the global set, the votes and the logs of local and global eliminations).

One shortcut, exact in distribution: with Bernoulli rewards, after an SE test the agent's next
:func:`safe_steps` activations provably cannot eliminate anything, whatever their rewards, so they are not
drawn; each arm's sum is drawn when the stretch ends, one Binomial (:func:`binomial_sum`). An arm that leaves
the local set during a stretch needs no sum at all, since it is never read again.
"""

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from anonbandits.channels.compiled import bernoulli_reward
from anonbandits.core.compiled import se_boundary, se_eliminates

RUNNING, IDLE, GONE = 0, 1, 2
SYNC_NONE, SYNC_LAZY, SYNC_IMMEDIATE = 0, 1, 2
STOP_GLOBAL, STOP_ALL, STOP_FIRST = 0, 1, 2
_MIN_STRETCH = 4  # shorter safe stretches are not worth skipping the SE test for
_TABULATED = 64  # stretches up to this length draw their sums from tabulated Binomial CDFs


class LoopConfig(NamedTuple):
    """What stays fixed during a run: the means ``mu`` (K,), Gaussian rewards' ``sigma``, the activity ``probs``
    (N,), the SE test's confidence ``conf``, constant ``width_c`` and ``denominator`` (1: t, 2: 2t), the vote
    ``threshold`` (0: no communication, INDEPENDENT), the probability ``xi`` that a vote is dropped,
    ``retire_on_sync`` (agents that a sync leaves with at most one arm leave the pool), ``fixed`` (draw from the
    fixed P_N, finished agents' rounds being idle), the ``stop`` code and ``max_rounds``."""

    mu: np.ndarray
    sigma: float
    probs: np.ndarray
    conf: float
    width_c: float
    denominator: int
    threshold: int
    xi: float
    retire_on_sync: bool
    fixed: bool
    stop: int
    max_rounds: int


class Agents(NamedTuple):
    """Every agent's state: its local set ``held`` (N, K) and its size ``nheld``, its sums, its clock ``t`` (its
    activations), the activations whose rewards are drawn later (``pending``) and the last one of its safe
    stretch (``safe_until``), its ``status`` (RUNNING, IDLE or GONE), the round it finished (``exit_round``; -1:
    not yet) and the generation of the global set at its last sync (``synced``)."""

    held: np.ndarray
    nheld: np.ndarray
    sums: np.ndarray
    t: np.ndarray
    pending: np.ndarray
    safe_until: np.ndarray
    status: np.ndarray
    exit_round: np.ndarray
    synced: np.ndarray


class Board(NamedTuple):
    """The global set ``G`` (K,), the ``votes`` each arm received, the log of local eliminations ``elim``
    (agent, arm, round, delivered) and of global ones ``glob`` (round, arm), and work arrays: the arms dropped at
    a round and the alias table of the activity (``members``, ``q``, ``alias``)."""

    G: np.ndarray
    votes: np.ndarray
    elim: np.ndarray
    glob: np.ndarray
    dropped: np.ndarray
    members: np.ndarray
    q: np.ndarray
    alias: np.ndarray


#: Helpers called only from compiled code: no Python or C wrappers to compile (a first call compiles less);
#: numpy's error model, as no division here can be by zero.
_helper = njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")


@_helper
def _g(table, t, arms, conf, c, denominator):
    """``g(t)`` from the table of the first values when it holds ``t``."""
    return table[t] if t < table.size else se_boundary(t, arms, conf, c, denominator)


@_helper
def _grow(table, t, arms, conf, c, denominator):
    """The boundary table extended (by doubling) to hold ``t``."""
    size = max(table.size, 1024)
    while size <= t:
        size *= 2
    out = np.empty(size)
    for x in range(table.size):  # a slice copy compiles numba's shape-mismatch message: seconds of a first call
        out[x] = table[x]
    for x in range(table.size, size):
        out[x] = se_boundary(x, arms, conf, c, denominator)
    return out


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def safe_steps(spread, t, table, arms, conf, c, denominator):
    """Activations after the ``t``-th during which SE cannot eliminate anything, whatever the [0, 1] rewards.

    With ``spread = max_l S_l - min_k S_k`` over the local set after ``t`` samples, every pairwise difference
    grows by at most 1 per activation, so step j is safe when ``spread + j < g(t + j)``. ``g`` is concave
    (``sqrt(f)`` with ``f = t log(a t^2)``: ``2 f f'' <= f'^2``), so ``g(t + j) - j`` is concave in j and the
    condition holds for all j in 1..b once it holds at j = 1 and j = b. Starting from b = 1,
    ``b := ceil(g(t + b) - spread) - 1`` keeps the j = b condition (g is non-decreasing) and lengthens b.
    ``table`` holds ``g`` for the first arguments (may be empty).
    """
    b = math.ceil(_g(table, t + 1, arms, conf, c, denominator) - spread) - 1
    for _ in range(4):
        if b < 1:
            break
        nxt = math.ceil(_g(table, t + b, arms, conf, c, denominator) - spread) - 1
        if nxt <= b:
            break
        b = nxt
    return max(b, 0)


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def binomial_cdfs(mu, longest):
    """CDFs of ``Binomial(n, min(mu_a, 1 - mu_a))`` for n = 1..``longest``; row n of arm a starts at column
    ``(n - 1)(n + 2) / 2`` and has n + 1 entries, the last one exactly 1.

    The smaller of the two success probabilities keeps ``pmf(0) >= 2^-longest`` (no underflow); arms with
    mean 0 or 1 are deterministic and not tabulated.
    """
    cdf = np.ones((mu.size, (longest - 1) * (longest + 2) // 2 + longest + 1))
    for a in range(mu.size):
        p = min(mu[a], 1.0 - mu[a])
        if p <= 0.0:
            continue
        ratio = p / (1.0 - p)
        for n in range(1, longest + 1):
            start = (n - 1) * (n + 2) // 2
            pmf = acc = math.exp(n * math.log1p(-p))
            cdf[a, start] = acc
            for x in range(1, n):
                pmf *= (n - x + 1) / x * ratio
                acc += pmf
                cdf[a, start + x] = min(acc, 1.0)
    return cdf


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def binomial_sum(rng, p, cdf, a, n, longest):
    """Sum of ``n`` Bernoulli(``p``) rewards, one Binomial draw: by inversion of row n of arm a of ``cdf``
    (:func:`binomial_cdfs` up to ``longest``, about half the cost of ``rng.binomial``), by ``rng.binomial``
    beyond."""
    if p <= 0.0 or p >= 1.0:
        return n if p >= 1.0 else 0
    if n > longest:
        return rng.binomial(n, p)
    start = (n - 1) * (n + 2) // 2
    u = rng.random()
    x = int(n * min(p, 1.0 - p))  # start near the mean: a few steps either way
    if cdf[a, start + x] > u:
        while x > 0 and cdf[a, start + x - 1] > u:
            x -= 1
    else:
        while cdf[a, start + x] <= u:
            x += 1
    return x if p <= 0.5 else n - x


@_helper
def _build_alias(probs, status, members, q, alias):
    """Walker/Vose alias table of P_N restricted to the RUNNING agents; returns (table size, its mass)."""
    m = 0
    mass = 0.0
    for n in range(probs.size):
        if status[n] == RUNNING:
            members[m] = n
            mass += probs[n]
            m += 1
    # loops rather than array expressions, which took most of the kernel's compilation
    small, large = np.empty(m, np.int64), np.empty(m, np.int64)
    ns, nl = 0, 0
    for j in range(m):
        q[j] = probs[members[j]] * m / mass
        alias[j] = j
        if q[j] >= 1.0:  # both stacks in index order, as the classic loop fills them
            large[nl] = j
            nl += 1
        else:
            small[ns] = j
            ns += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        g = large[nl - 1]
        alias[s] = g
        q[g] -= 1.0 - q[s]
        if q[g] < 1.0:
            nl -= 1
            small[ns] = g
            ns += 1
    for j in range(m):
        if alias[j] == j:
            q[j] = 1.0  # leftovers are 1 up to rounding
    return m, mass


def run_kernel(rng: np.random.Generator, config: LoopConfig, gaussian: bool, sync: int) -> tuple:
    """Simulate the agents until the stopping rule fires (see :mod:`.voting`).

    ``gaussian``: unclipped Gaussian rewards (else Bernoulli); ``sync``: ``SYNC_NONE``, ``SYNC_LAZY`` or
    ``SYNC_IMMEDIATE``. A ``threshold`` of 0 means no communication (INDEPENDENT). Agents done leave the pool
    (``GONE``), except under immediate synchronisation (Algorithm 1), where they stay ``IDLE`` and keep pulling
    their last arm. ``STOP_FIRST`` ends at the first agent done (INDEPENDENT). Returns ``rounds, pulls, G, votes,
    held, status, exit_round, elim (agent, arm, time, delivered; first n_elim rows), n_elim, glob (round, arm;
    first n_glob rows), n_glob``.

    The agents' state is allocated here, by numpy (in the compiled loop every allocation is one more function
    for numba to compile).
    """
    k, n_agents = config.mu.size, config.probs.size
    agents = Agents(
        held=np.ones((n_agents, k), np.bool_),
        nheld=np.full(n_agents, k, np.int64),
        sums=np.zeros((n_agents, k)),
        t=np.zeros(n_agents, np.int64),
        pending=np.zeros(n_agents, np.int64),
        safe_until=np.zeros(n_agents, np.int64),
        status=np.full(n_agents, RUNNING, np.int8),
        exit_round=np.full(n_agents, -1, np.int64),
        synced=np.zeros(n_agents, np.int64),
    )  # generation of the global set at the agent's last sync
    board = Board(
        G=np.ones(k, np.bool_),
        votes=np.zeros(k, np.int64),
        elim=np.zeros((n_agents * k, 4), np.int64),  # (agent, arm, round, delivered)
        glob=np.zeros((k, 2), np.int64),  # (round, arm)
        dropped=np.empty(k, np.int64),
        members=np.empty(n_agents, np.int64),
        q=np.empty(n_agents),
        alias=np.empty(n_agents, np.int64),
    )
    return _loop(bool(gaussian), int(sync), config.threshold > 0)(rng, config, agents, board)


@functools.cache
def _loop(gaussian: bool, sync: int, voting: bool) -> Callable[..., tuple]:
    """The compiled loop of :func:`run_kernel` for Gaussian or Bernoulli rewards: ``gaussian`` is a closure
    constant, so numba drops the other reward model's branches before typing them (a Bernoulli run does not
    compile the normal sampler). The synchronisation ``sync`` and ``voting`` (a vote threshold, not
    INDEPENDENT) are constants too: a run compiles its algorithm's branches only. numba's cache keys each loop
    by the constants (plain values: a function in the closure would not pickle to the same key in the next
    process)."""

    @njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
    def loop(rng, cfg, agents, board):
        """One run over the rounds (see :func:`run_kernel`): ``cfg`` a :class:`LoopConfig`, ``agents`` the
        :class:`Agents` and ``board`` the :class:`Board`, updated in place."""
        mu, sigma, probs, conf, width_c = cfg.mu, cfg.sigma, cfg.probs, cfg.conf, cfg.width_c
        denominator, threshold, xi, fixed = cfg.denominator, cfg.threshold, cfg.xi, cfg.fixed
        retire_on_sync, stop, max_rounds = cfg.retire_on_sync, cfg.stop, cfg.max_rounds
        held, nheld, sums, t, pending = agents.held, agents.nheld, agents.sums, agents.t, agents.pending
        safe_until, status, exit_round, synced = agents.safe_until, agents.status, agents.exit_round, agents.synced
        G, votes, elim, glob, dropped = board.G, board.votes, board.elim, board.glob, board.dropped
        members, q, alias = board.members, board.q, board.alias
        k, n_agents = mu.size, probs.size
        retire = sync != SYNC_IMMEDIATE
        n_glob_left, generation, n_elim, n_glob = k, 0, 0, 0
        m, table_mass = _build_alias(probs, status, members, q, alias)
        live_mass = table_mass
        table = _grow(np.empty(0), np.int64(1), k, conf, width_c, denominator)  # int64: one specialisation
        cdf = binomial_cdfs(mu, 0 if gaussian else _TABULATED)
        running, rounds, pulls, exited = n_agents, 0, 0, False
        while rounds < max_rounds and running > 0:
            if (stop == STOP_GLOBAL and n_glob_left <= 1) or (stop == STOP_FIRST and exited):
                break
            u = rng.random() * m
            j = min(int(u), m - 1)
            if q[j] < 1.0 and rng.random() >= q[j]:
                j = alias[j]
            n = members[j]
            if status[n] != RUNNING:
                if status[n] == IDLE:  # Alg. 1: an agent with one arm left keeps pulling it
                    rounds += 1
                    pulls += nheld[n]
                elif fixed:  # sampling "fixed": a finished agent's round is idle but counts
                    rounds += 1
                elif live_mass < 0.5 * table_mass:  # rejected draw; keep the acceptance rate above 1/2
                    m, table_mass = _build_alias(probs, status, members, q, alias)
                    live_mass = table_mass
                continue
            rounds += 1
            t[n] += 1
            pulls += nheld[n]
            tn = t[n]
            n_dropped = 0
            if tn <= safe_until[n]:
                pending[n] += 1
            else:
                p = pending[n]
                if p > 0:
                    for a in range(k):
                        if held[n, a]:
                            sums[n, a] += binomial_sum(rng, mu[a], cdf, a, p, _TABULATED)
                    pending[n] = 0
                top = -np.inf
                for a in range(k):
                    if held[n, a]:
                        if gaussian:
                            sums[n, a] += rng.normal(mu[a], sigma)
                        else:
                            sums[n, a] += bernoulli_reward(rng.random(), mu[a])
                        if sums[n, a] > top:
                            top = sums[n, a]
                if tn >= table.size:
                    table = _grow(table, tn, k, conf, width_c, denominator)
                g = table[tn]
                for a in range(k):
                    if held[n, a]:
                        gap = top - sums[n, a]
                        if gap > 0 and se_eliminates(gap, g, 0.0):  # the leader (gap 0) stays
                            dropped[n_dropped] = a
                            n_dropped += 1
                for i in range(n_dropped):
                    a = dropped[i]
                    held[n, a] = False
                    nheld[n] -= 1
                    if voting:
                        delivered = xi == 0.0 or rng.random() >= xi
                        elim[n_elim, 0], elim[n_elim, 1], elim[n_elim, 2], elim[n_elim, 3] = n, a, rounds, delivered
                        n_elim += 1
                        if delivered:
                            votes[a] += 1
            before_sync = nheld[n]
            if sync == SYNC_LAZY and synced[n] != generation:  # Alg. 3 line 12, before this round's removals
                for a in range(k):
                    if held[n, a] and not G[a]:
                        held[n, a] = False
                        nheld[n] -= 1
                synced[n] = generation
            after_sync = nheld[n]
            if before_sync == 1 or after_sync == 0 or (retire_on_sync and after_sync <= 1):
                status[n] = GONE if retire else IDLE
                exit_round[n] = rounds
                running -= 1
                exited = True
                live_mass -= probs[n]
            elif not gaussian and tn > safe_until[n]:
                lo = np.inf
                hi = -np.inf
                for a in range(k):
                    if held[n, a]:
                        lo = min(lo, sums[n, a])
                        hi = max(hi, sums[n, a])
                b = safe_steps(hi - lo, tn, table, k, conf, width_c, denominator)
                safe_until[n] = tn + b if b >= _MIN_STRETCH else tn
            for i in range(n_dropped if voting else 0):
                a = dropped[i]
                if votes[a] >= threshold and G[a] and n_glob_left > 1:
                    G[a] = False
                    n_glob_left -= 1
                    generation += 1
                    glob[n_glob, 0], glob[n_glob, 1] = rounds, a
                    n_glob += 1
                    if sync == SYNC_IMMEDIATE:  # Alg. 1: every agent loses the arm at once
                        for other in range(n_agents):
                            if held[other, a]:
                                held[other, a] = False
                                nheld[other] -= 1
                                if status[other] == RUNNING and nheld[other] <= 1:
                                    status[other] = IDLE
                                    running -= 1
        return (rounds, pulls, G, votes, held, status, exit_round, elim, n_elim, glob, n_glob)

    return loop
