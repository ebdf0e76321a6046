"""Plain per-pull reference simulation of paper 002's Decentralized Elimination.

Paper: Féraud, Alami and Laroche, *Decentralized Exploration in Multi-Armed Bandits* (ICML 2019),
Algorithm 1 (the decentralized exploration protocol), the Arm Selection subroutines of Section 3.1 (successive
elimination, SER3, median elimination, naive elimination, UGapEc), Algorithm 2 (DECENTRALIZED ELIMINATION, Section
3.2), the 1-PRIVACY and 0-PRIVACY baselines of Section 5.1 and DSER4's resets (Section 4).

One Python loop iteration per global step: draw the active player, let her read the board, make one call of
her Arm Selection subroutine (one pull, one reward draw), post her votes. Written for clarity, not speed; it
is the baseline of ``benchmarks/decentralized_speed.py`` and the independent implementation the tests
compare the simulation (:mod:`anonbandits.multiagent.decentralized`) against, in distribution.

Same resolutions as the kernel (see ``docs/decentralized-elimination.md``): a round (phase) completed by
global eliminations is decided at the player's next call before her pull, stop when every player holds one
arm.
"""

from __future__ import annotations

import math

import numpy as np

from anonbandits.envs.rewards import draw_rewards
from anonbandits.reference import oracle


class RefSubroutine:
    """One learner's Arm Selection subroutine (paper 002, Sec. 3.1), one pull per :meth:`step`."""

    def __init__(
        self, kind: str, arms: list[int], k: int, eps: float, conf: float, rng: np.random.Generator, se_c: float = 4.0
    ) -> None:
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
        ties = [a for a in values if values[a] == best]  # (values are in the order of S)
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
            out = set(order[(len(self.S) + 1) // 2 :])
            self.phase += 1
            self.cnt = dict.fromkeys(self.cnt, 0)
            self.sums = dict.fromkeys(self.sums, 0.0)
        self.S = [a for a in self.S if a not in out]
        return out

    def _complete(self) -> bool:
        """Whether the open round (every arm pulled) or phase (every arm at its target) is complete."""
        if self.kind in ("se", "ser3"):
            return self.started and not self.queue
        target = self._target()
        return all(self.cnt[a] >= target for a in self.S)

    def _decide(self) -> set[int]:
        return self._decide_round() if self.kind in ("se", "ser3") else self._decide_phase()

    def step(self, pull) -> set[int]:
        """One call: pull one arm (``pull(arm) -> reward``); return the arms eliminated by this call."""
        if len(self.S) == 1:
            pull(self.S[0])
            return set()
        if self.kind == "ugapec":
            return self._step_ugapec(pull)
        out = self._decide() if self._complete() else set()  # a unit completed by global eliminations
        if len(self.S) == 1:
            pull(self.S[0])
            return out
        if self.kind in ("se", "ser3"):
            if not self.queue:
                self.queue = list(self.S)
                if self.kind == "ser3":
                    self.rng.shuffle(self.queue)
                self.queue.reverse()
                self.started = True
            a = self.queue.pop()
            self.sums[a] += pull(a)
        else:
            a = min(self.S, key=lambda x: (self.cnt[x], x))
            y = pull(a)
            self.cnt[a] += 1
            self.sums[a] += y
        if self._complete():
            out |= self._decide()
        return out

    def step_round(self, pull) -> set[int]:
        """One activation of ``per_activation="round"``: the rest of an SE/SER3 round, or one pull of every arm
        of a naive/median phase still short of its target (paper 003's convention)."""
        if len(self.S) == 1 or self.kind == "ugapec":
            return self.step(pull)
        if self.kind in ("se", "ser3"):
            out = self.step(pull)  # decides a pending round, starts one and makes its first pull
            while self.queue:
                out |= self.step(pull)
            return out
        if self._complete():
            return self.step(pull)  # the phase completed by global eliminations is decided first
        target = self._target()
        for a in [a for a in self.S if self.cnt[a] < target]:
            self.cnt[a] += 1
            self.sums[a] += pull(a)
        return self._decide() if self._complete() else set()

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
            u = self._argmax({i: upper[i] for i in self.S if i != j})
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


@oracle
def reference_run(
    means,
    n: int,
    *,
    conf: float,
    eps: float,
    subroutine: str,
    activity: str,
    rng: np.random.Generator,
    threshold: int | None = None,
    stop: str = "all",
    draw_only_active: bool = False,
    per_activation: str = "pull",
    se_c: float = 4.0,
    mean_at=None,
    reward: str = "bernoulli",
    phi: float = 0.0,
    max_steps: int = 10**8,
) -> dict:
    """Algorithm 2 of paper 002 (Sec. 3.2), one step at a time, with every option of the simulation.

    ``threshold``: the vote threshold M (``None``: no board, every player alone, i.e. 1-PRIVACY; one player fed
    by every step is 0-PRIVACY); ``stop``: ``all`` (every player holds one arm), ``consensus`` (the shared set
    is a singleton) or ``none`` (run ``max_steps`` steps: DSER4); ``draw_only_active``: the step's player is
    drawn among the players still exploring (rejection: same law as drawing from the restricted ``P_x``;
    ``samples`` counts the accepted draws); ``per_activation="round"``: see :meth:`RefSubroutine.step_round`;
    ``mean_at(t)``: the means at step t (default ``means``); ``reward``: the reward model; ``phi``: before
    each step, with probability ``phi``, every player restarts and the board is cleared (DSER4, Sec. 4).
    Returns samples (steps), messages, t_consensus, the players' arms, the vote counts, the votes (sender,
    step, arm), the plays of arms that are not the best at their step and the number of resets."""
    means = np.asarray(means, dtype=float)
    k = means.size
    fixed, top = means.tolist(), float(means.max())  # plain floats: a numpy call per pull would dominate
    draw = _players(activity, n, rng)
    version, seen, t, raw, resets, bad = 0, [0] * n, 0, 0, 0, 0
    gone_players: set[int] = set()
    log: list[tuple[int, int, int]] = []

    def new(arms: list[int]) -> RefSubroutine:
        return RefSubroutine(subroutine, arms, k, eps, conf, rng, se_c)

    def fresh() -> tuple:  # every player afresh, an empty board: subs, lam, votes, shared, done, t_cons
        subs = [new(list(range(k))) for _ in range(n)]
        return subs, [[False] * k for _ in range(n)], [0] * k, list(range(k)), 0, None

    def pull(arm: int) -> float:
        nonlocal bad
        if mean_at is None:
            mu, best = fixed[arm], top
        else:
            now = mean_at(raw)
            mu, best = float(now[arm]), float(now.max())
        bad += mu < best
        if reward == "bernoulli":
            return 1.0 if rng.random() < mu else 0.0
        return float(draw_rewards(reward, mu, rng))

    subs, lam, votes, shared, done, t_cons = fresh()
    board, consensus = threshold is not None, stop == "consensus"
    while t < max_steps:
        if done == n and stop == "all":
            break
        if consensus and (
            len(shared) == 1
            or len(gone_players) == n
            or (done == n and all(subs[w].S[0] in shared for w in range(n) if w not in gone_players))
        ):
            break
        raw += 1
        if phi and rng.random() < phi and raw > 1:  # DSER4: a global reset before this step
            resets += 1
            subs, lam, votes, shared, done, t_cons = fresh()
        p = draw()
        if gone_players and p in gone_players:
            continue
        t += 1
        sub = subs[p]
        was = len(sub.S) == 1
        if board and seen[p] != version:  # read the board: every elimination since her last visit
            seen[p] = version
            gone = [a for a in sub.S if a not in shared]
            if (len(shared) == 1 and sub.S != shared) or (gone and len(gone) == len(sub.S)):
                subs[p] = sub = new(shared)  # adopt the consensus (line 11) or restart on the shared set
            else:
                for a in gone:
                    sub.drop(a)
        out = sub.step_round(pull) if per_activation == "round" else sub.step(pull)
        for a in sorted(out) if board else ():  # one vote per newly eliminated arm, at most one per arm
            if not lam[p][a]:
                lam[p][a] = True
                votes[a] += 1
                log.append((p, t, a))
                if votes[a] == threshold and a in shared and len(shared) > 1:
                    shared.remove(a)
                    version += 1
        if len(shared) == 1 and t_cons is None:
            t_cons = t
        now = len(sub.S) == 1
        done += int(now) - int(was)
        if now and draw_only_active:
            gone_players.add(p)
    arms = []  # a player's arm, with the shared set as she would read it at her next activation
    for w, sub in enumerate(subs):
        left = [a for a in sub.S if a in shared] if threshold is not None and seen[w] != version else sub.S
        unread = len(sub.S) > 1 and w not in gone_players and left is not sub.S
        arms.append(
            sub.S[0]
            if len(sub.S) == 1
            else shared[0]
            if unread and len(shared) == 1
            else left[0]
            if unread and len(left) == 1
            else -1
        )
    return {
        "samples": t,
        "messages": len(log),
        "t_consensus": t_cons,
        "arms": arms,
        "votes": votes,
        "log": log,
        "threshold": threshold,
        "suboptimal": bad,
        "resets": resets,
    }


def reference_decentralized(means, n: int, *, delta: float, eta: float, **options) -> dict:
    """DECENTRALIZED ELIMINATION (Sec. 3.2), one step at a time, at confidence ``eta`` with the vote threshold
    ``M = ceil(log(delta)/log(eta))``; ``options`` as :func:`reference_run`."""
    m = math.ceil(math.log(delta) / math.log(eta) - 1e-9)
    return reference_run(means, n, conf=eta, threshold=m, **options)


def reference_no_sharing(means, n: int, *, delta: float, **options) -> dict:
    """1-PRIVACY (Sec. 5.1): every player alone at confidence delta/N; stop when all hold one arm (``options``
    as :func:`reference_run`)."""
    return reference_run(means, n, conf=delta / n, **options)


def reference_full_sharing(means, *, delta: float, **options) -> dict:
    """0-PRIVACY (Sec. 5.1): one learner at confidence delta fed by every step, whoever is active (``options``
    as :func:`reference_run`)."""
    return reference_run(means, 1, conf=delta, activity="uniform", **options)
