"""Plain per-pull reference simulation of paper 002's Decentralized Elimination.

Paper: Féraud, Alami and Laroche, *Decentralized Exploration in Multi-Armed Bandits* (ICML 2019),
Algorithm 1 (the Arm Selection subroutines: successive elimination, SER3, median elimination, naive
elimination, UGapEc) and Algorithm 2 (DECENTRALIZED ELIMINATION), plus the 1-PRIVACY baseline of Section 5.1.

One Python loop iteration per global step: draw the active player, let her read the board, make one call of
her Arm Selection subroutine (one pull, one reward draw), post her votes. Written for clarity, not speed; it
is the baseline of ``benchmarks/decentralized_speed.py`` and the independent implementation the tests
compare the simulation (:mod:`anonbandits.multiagent.decentralized`) against, in distribution.

Same resolutions as the engine (see ``docs/decentralized-elimination.md``): a round (phase) completed by
global eliminations is decided at the player's next call before her pull, stop when every player holds one
arm.
"""

from __future__ import annotations

import math

import numpy as np


class RefSubroutine:
    """One learner's Arm Selection subroutine, one pull per :meth:`step` (spec 3.1-3.4, 3.6)."""

    def __init__(self, kind: str, arms: list[int], k: int, eps: float, conf: float, rng: np.random.Generator,
                 se_c: float = 4.0) -> None:
        self.kind, self.k, self.eps, self.conf, self.rng, self.se_c = kind, k, eps, conf, rng, se_c
        self.S = sorted(arms)
        self.cnt = dict.fromkeys(arms, 0)
        self.sums = dict.fromkeys(arms, 0.0)
        self.tau = 0  # completed rounds (se, ser3), pulls (ugapec)
        self.phase = 1
        self.queue: list[int] = []
        self.started = False

    def drop(self, arm: int) -> None:
        if arm in self.S:
            self.S.remove(arm)
            if arm in self.queue:
                self.queue.remove(arm)

    def _argmax(self, values: dict[int, float]) -> int:
        best = max(values.values())
        ties = [a for a in self.S if values[a] == best]
        return ties[int(self.rng.integers(len(ties)))]

    # -- round-robin families -------------------------------------------------------------------------
    def _target(self) -> int:
        if self.kind == "naive":
            return math.ceil(4.0 / self.eps**2 * math.log(2 * self.k / self.conf))
        eps_l = self.eps / 4 * 0.75 ** (self.phase - 1)
        delta_l = self.conf / 2.0**self.phase
        return math.ceil(4 * math.log(3 / delta_l) / eps_l**2)

    def _radius(self, r: int) -> float:
        if self.kind == "ser3":
            return math.sqrt(math.log(4 * self.k * r * r / self.conf) / (2 * r))
        return math.sqrt(math.log(self.se_c * self.k * r * r / self.conf) / r)

    def _decide_round(self) -> set[int]:
        self.tau += 1
        self.started = False
        mu = {a: self.sums[a] / self.tau for a in self.S}
        b = self._argmax(mu)
        out = {a for a in self.S if a != b and mu[b] - mu[a] + self.eps >= 2 * self._radius(self.tau)}
        self.S = [a for a in self.S if a not in out]
        return out

    def _decide_phase(self) -> set[int]:
        mu = {a: self.sums[a] / self.cnt[a] for a in self.S}
        if self.kind == "naive":
            b = self._argmax(mu)
            out = {a for a in self.S if a != b}
        else:
            keys = {a: (-mu[a], self.rng.random()) for a in self.S}
            order = sorted(self.S, key=keys.__getitem__)
            out = set(order[(len(self.S) + 1) // 2:])
            self.phase += 1
            self.cnt = dict.fromkeys(self.cnt, 0)
            self.sums = dict.fromkeys(self.sums, 0.0)
        self.S = [a for a in self.S if a not in out]
        return out

    def step(self, pull) -> set[int]:
        """One call: pull one arm (``pull(arm) -> reward``); return the arms eliminated by this call."""
        if len(self.S) == 1:
            pull(self.S[0])
            return set()
        if self.kind == "ugapec":
            return self._step_ugapec(pull)
        out: set[int] = set()
        if self.kind in ("se", "ser3"):
            if self.started and not self.queue:  # the round was completed by global eliminations
                out = self._decide_round()
                if len(self.S) == 1:
                    pull(self.S[0])
                    return out
            if not self.queue:
                self.queue = list(self.S)
                if self.kind == "ser3":
                    self.rng.shuffle(self.queue)
                self.queue.reverse()
                self.started = True
            a = self.queue.pop()
            y = pull(a)
            self.sums[a] += y
            if not self.queue:
                out |= self._decide_round()
            return out
        target = self._target()
        if all(self.cnt[a] >= target for a in self.S):  # phase completed by global eliminations
            out = self._decide_phase()
            if len(self.S) == 1:
                pull(self.S[0])
                return out
            target = self._target()
        a = min(self.S, key=lambda x: (self.cnt[x], x))
        y = pull(a)
        self.cnt[a] += 1
        self.sums[a] += y
        if all(self.cnt[x] >= target for x in self.S):
            out |= self._decide_phase()
        return out

    # -- UGapEc ----------------------------------------------------------------------------------------
    def _gap_indices(self) -> tuple[dict[int, float], dict[int, float], dict[int, float], int]:
        t = max(self.tau, 1)
        beta = {a: math.sqrt(0.5 * math.log(4 * self.k * t**3 / self.conf) / self.cnt[a]) for a in self.S}
        mu = {a: self.sums[a] / self.cnt[a] for a in self.S}
        upper = {a: mu[a] + beta[a] for a in self.S}
        # max over the other arms in O(K): the largest upper index, or the second largest for its holder
        ranked = sorted(self.S, key=upper.__getitem__, reverse=True)
        first, second = upper[ranked[0]], upper[ranked[1]] if len(ranked) > 1 else -math.inf
        b = {a: (second if a == ranked[0] else first) - (mu[a] - beta[a]) for a in self.S}
        j = self._argmax({a: -b[a] for a in self.S})
        return beta, upper, b, j

    def _step_ugapec(self, pull) -> set[int]:
        untried = [a for a in self.S if self.cnt[a] == 0]
        if untried:
            a = untried[int(self.rng.integers(len(untried)))]
        else:
            beta, upper, _, j = self._gap_indices()
            others = {i: upper[i] for i in self.S if i != j}
            top = max(others.values())
            ties = [i for i in self.S if i != j and upper[i] == top]
            u = ties[int(self.rng.integers(len(ties)))]
            a = j if beta[j] >= beta[u] else u
        y = pull(a)
        self.cnt[a] += 1
        self.sums[a] += y
        self.tau += 1
        if any(self.cnt[x] == 0 for x in self.S):
            return set()
        _, _, b, j = self._gap_indices()
        if b[j] < self.eps:
            out = {x for x in self.S if x != j}
            self.S = [j]
            return out
        return set()


def _players(activity: str, n: int, rng: np.random.Generator):
    """A draw of the active player, one call per step (Problem 1 ``uniform``, Problem 2 ``skewed``)."""
    if activity == "uniform":
        return lambda: int(rng.integers(n))
    half = n // 2
    return lambda: int(rng.integers(half)) + (0 if rng.random() < 0.8 else half)


def reference_decentralized(means, n: int, *, delta: float, eta: float, eps: float, subroutine: str,
                            activity: str, rng: np.random.Generator, max_steps: int = 10**8) -> dict:
    """DECENTRALIZED ELIMINATION, one step at a time (spec 4.4). Returns samples, messages, t_consensus,
    the players' arms, the vote counts and the votes (sender, step, arm)."""
    means = list(map(float, means))
    k = len(means)
    m = math.ceil(math.log(delta) / math.log(eta) - 1e-9)
    draw = _players(activity, n, rng)
    subs = [RefSubroutine(subroutine, list(range(k)), k, eps, eta, rng) for _ in range(n)]
    lam = [[False] * k for _ in range(n)]
    votes = [0] * k
    shared = list(range(k))
    version, seen = 0, [0] * n
    done, t, t_cons = 0, 0, None
    log: list[tuple[int, int, int]] = []

    def pull(arm: int) -> float:
        return 1.0 if rng.random() < means[arm] else 0.0

    while done < n and t < max_steps:
        t += 1
        p = draw()
        sub = subs[p]
        was = len(sub.S) == 1
        if seen[p] != version:  # read the board: apply every global elimination since her last activation
            seen[p] = version
            if len(shared) == 1:
                if sub.S != shared:
                    subs[p] = sub = RefSubroutine(subroutine, shared, k, eps, eta, rng)
            else:
                gone = [a for a in sub.S if a not in shared]
                if gone and len(gone) == len(sub.S):
                    subs[p] = sub = RefSubroutine(subroutine, shared, k, eps, eta, rng)
                else:
                    for a in gone:
                        sub.drop(a)
        crossing = []
        for a in sorted(sub.step(pull)):
            if not lam[p][a]:
                lam[p][a] = True
                votes[a] += 1
                log.append((p, t, a))
                if votes[a] == m:
                    crossing.append(a)
        for a in crossing:
            if a in shared and len(shared) > 1:
                shared.remove(a)
                version += 1
        if len(shared) == 1 and t_cons is None:
            t_cons = t
        now = len(sub.S) == 1
        done += int(now) - int(was)
    arms = [s.S[0] if len(s.S) == 1 else -1 for s in subs]
    return {"samples": t, "messages": len(log), "t_consensus": t_cons, "arms": arms, "votes": votes,
            "log": log, "threshold": m}


def reference_no_sharing(means, n: int, *, delta: float, eps: float, subroutine: str, activity: str,
                         rng: np.random.Generator, max_steps: int = 10**8) -> dict:
    """1-PRIVACY (spec 6.1): every player alone at confidence delta/N; stop when all hold one arm."""
    means = list(map(float, means))
    k = len(means)
    draw = _players(activity, n, rng)
    subs = [RefSubroutine(subroutine, list(range(k)), k, eps, delta / n, rng) for _ in range(n)]
    done, t = 0, 0

    def pull(arm: int) -> float:
        return 1.0 if rng.random() < means[arm] else 0.0

    while done < n and t < max_steps:
        t += 1
        sub = subs[draw()]
        was = len(sub.S) == 1
        sub.step(pull)
        done += int(len(sub.S) == 1) - int(was)
    return {"samples": t, "arms": [s.S[0] if len(s.S) == 1 else -1 for s in subs]}
