"""Plain dense references of round removal's rerouting (:mod:`anondecomp.improve`), for
``test_improve_sparse``: (N, K) tables and loops, every quantity recomputed when asked, written line for line
after the algorithm they check (the complexity limit's exemption for reference loops covers this file)."""

from __future__ import annotations

from collections import deque

import numpy as np


def dense_state(rounds: np.ndarray, req: np.ndarray, C1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Users per (round, arm), open arms, informative samples per (user, arm): plain loops."""
    T, N = rounds.shape
    cnt = np.zeros((T, req.shape[1]), np.int64)
    for t in range(T):
        for v in range(N):
            cnt[t, rounds[t, v]] += 1
    is_open = cnt >= C1
    cov = np.zeros(req.shape, np.int64)
    for t in range(T):
        for v in range(N):
            cov[v, rounds[t, v]] += is_open[t, rounds[t, v]]
    return cnt, is_open, cov


def unique_reference(req: np.ndarray, rounds: np.ndarray, C1: int) -> list[int]:
    """Per round, the samples no other round can replace (:func:`anondecomp.improve.unique_samples`)."""
    _, is_open, cov = dense_state(rounds, req, C1)
    return [
        sum(1 for v, a in enumerate(row) if is_open[t, a] and 0 < req[v, a] and cov[v, a] <= req[v, a])
        for t, row in enumerate(rounds)
    ]


def reroute_reference(support: np.ndarray, req: np.ndarray, C1: int, rounds: np.ndarray) -> np.ndarray | None:
    """The rerouting of :func:`anondecomp.improve.reroute` on dense (N, K) tables, every quantity recomputed
    when asked: a lost (user, arm) sample at a time (row-major), a breadth-first search over the user's arms
    through the rounds where each is open (increasing), a padder (the first user with the most room) where an
    open arm at C+1 users would lose one."""
    cur = np.array(rounds, dtype=np.int64)
    T, N = cur.shape
    cnt, is_open, cov = dense_state(cur, req, C1)
    deficit = np.maximum(req - cov, 0)

    def free(t, v):
        a = cur[t, v]
        return not is_open[t, a] or req[v, a] == 0 or cov[v, a] > req[v, a]

    def room(t, v):
        a = cur[t, v]
        if not is_open[t, a]:
            return N
        return -1 if (req[v, a] > 0 and cov[v, a] <= req[v, a]) or cnt[t, a] <= C1 else cnt[t, a] - C1

    def padder(t, a, u):
        best, who = -1, -1
        for v in range(N):
            if support[v, a] and cur[t, v] != a and v != u and room(t, v) > best:
                best, who = room(t, v), v
        return who

    def move(t, v, b):
        a = cur[t, v]
        cov[v, a] -= is_open[t, a]
        cnt[t, a] -= 1
        cnt[t, b] += 1
        cur[t, v] = b
        cov[v, b] += is_open[t, b]

    for u, j in zip(*np.nonzero(deficit), strict=True):
        for _ in range(deficit[u, j]):
            parent, queue, end = {int(j): None}, deque([int(j)]), None
            while queue and end is None:
                x = queue.popleft()
                for t in np.flatnonzero(is_open[:, x]):
                    a = int(cur[t, u])
                    if a == x or (a in parent and not free(t, u)):
                        continue
                    if is_open[t, a] and cnt[t, a] <= C1 and padder(t, a, u) < 0:
                        continue
                    if free(t, u):
                        end = (x, int(t))
                        break
                    parent[a] = (x, int(t))
                    queue.append(a)
            if end is None:
                return None
            x, t = end
            while True:
                a = int(cur[t, u])
                if is_open[t, a] and cnt[t, a] <= C1:
                    v = padder(t, a, u)
                    if v < 0:
                        return None
                    move(t, v, a)
                move(t, u, x)
                if parent[x] is None:
                    break
                x, t = parent[x]
    return cur
