"""The voting schemes of paper 003 whose local routine is Successive Elimination.

Paper: 003_1b4f3a9c9d577fe2.txt (Rio, Barlier, Colin, Soare, ICML 2023).

* :func:`corrupted_elimination`: CORRUPTED ELIMINATION, Algorithm 3 with its local routine (the paper's
  Algorithm 4 of App. B.2, "4b" in the spec), Sec. 5; spec section 2.5. With ``xi = 0`` it is the Féraud et al.
  (2019) baseline as paper 003 describes it (spec 2.6).
* :func:`mase`: the generic Multi-Agent Successive Elimination scheme, Algorithm 1 (Sec. 4), instantiated with
  the SE local rule of Sec. 4.1 at local failure probability beta and immediate synchronisation.
* :func:`independent`: the INDEPENDENT baseline of Sec. 6 (spec 2.7, A14).

The simulation itself is :func:`anonbandits.multiagent.mase.se_engine.run_se_agents` (a compiled round loop).
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import ConfigError
from anonbandits.multiagent.mase.formulas import eta_xi, voting_threshold
from anonbandits.multiagent.mase.instances import Instance
from anonbandits.multiagent.mase.result import MaseResult
from anonbandits.multiagent.mase.se_engine import SEOutcome, SEProtocol, run_se_agents

SAMPLINGS = ("active", "fixed")
STOP_RULES = ("all", "first")


def _check(sampling: str, width_c: float, width_denominator: int) -> None:
    if sampling not in SAMPLINGS:
        raise ConfigError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    if not width_c > 0:
        raise ConfigError(f"width_c must be positive, got {width_c}")
    if width_denominator not in (1, 2):
        raise ConfigError(f"width_denominator must be 1 (t) or 2 (2t), got {width_denominator}")


def _recommend(out: SEOutcome, rng: np.random.Generator) -> int:
    """The last arm of the global set; after a stall or truncation, the arm with the fewest votes."""
    left = np.flatnonzero(out.global_set)
    if left.size == 1:
        return int(left[0])
    fewest = left[out.votes[left] == out.votes[left].min()]
    return int(rng.choice(fewest))


def _result(name: str, instance: Instance, out: SEOutcome, recommended: int, threshold: int | None,
            **extra) -> MaseResult:
    return MaseResult(
        algorithm=name, recommended=recommended, correct=instance.is_best(recommended), rounds=out.rounds,
        pulls=out.pulls, messages=out.messages, votes=out.votes, threshold=threshold, stalled=out.stalled,
        truncated=out.truncated, global_eliminations=out.global_eliminations, arms=instance.arms,
        best=instance.best, **extra)


def corrupted_elimination(instance: Instance, probs: np.ndarray, rng: np.random.Generator, *, eta: float = 0.9,
                          xi: float = 0.05, delta: float = 0.05, sampling: str = "active",
                          retire_on_sync: bool = False, width_c: float = 1.0, width_denominator: int = 1,
                          max_rounds: int = 10**9, record: bool = True) -> MaseResult:
    """CORRUPTED ELIMINATION (paper 003, Algorithm 3 with local routine 4b).

    Every agent runs SE at local failure probability ``eta_xi = 1 - (1-eta)/(1-xi)^(K-1)`` (Prop. 5.1), with
    width ``2 sqrt(log(c K t_n^2/eta_xi)/t_n)`` on its cumulative means. Each local elimination's vote is
    delivered with probability ``1 - xi`` (the corruption mask, drawn once per (agent, arm); a dropped vote is
    never sent, spec A21) and the arm still leaves the local set. An arm leaves the global set at
    ``M* = ceil(log(delta)/log(eta_xi))`` delivered votes (spec A5, A6); agents synchronise with the global set
    at the end of every activation and leave the pool once one arm is left.
    """
    _check(sampling, width_c, width_denominator)
    local = eta_xi(eta, xi, instance.arms)
    threshold = voting_threshold(delta, local, probs.size, "eta_xi")
    proto = SEProtocol(conf=local, threshold=threshold, xi=xi, sync="lazy", retire=True,
                       retire_on_sync=retire_on_sync, sampling=sampling, stop="global", width_c=width_c,
                       width_denominator=width_denominator, max_rounds=max_rounds)
    out = run_se_agents(instance, probs, proto, rng, record)
    return _result("corrupted-elimination", instance, out, _recommend(out, rng), threshold,
                   eliminations=out.eliminations)


def mase(instance: Instance, probs: np.ndarray, rng: np.random.Generator, *, beta: float = 0.5,
         delta: float = 0.05, width_c: float = 1.0, width_denominator: int = 1, max_rounds: int = 10**9,
         record: bool = True) -> MaseResult:
    """The generic MASE scheme (paper 003, Algorithm 1) with the SE local elimination of Sec. 4.1.

    Local rule: eliminate k when ``max_l mu_l - mu_k >= 2 sqrt(log(c K t_n^2/beta)/t_n)`` (eq. (1) at
    confidence beta). Every local elimination is a vote; an arm with ``M* = ceil(log(delta)/log(beta))`` votes
    leaves the global set *and every agent's set at once* (Alg. 1's immediate synchronisation). Agents are never
    removed from the pool: an agent left with one arm keeps being activated and pulling it.
    """
    _check("active", width_c, width_denominator)
    threshold = voting_threshold(delta, beta, probs.size, "beta")
    proto = SEProtocol(conf=beta, threshold=threshold, sync="immediate", retire=False, stop="global",
                       width_c=width_c, width_denominator=width_denominator, max_rounds=max_rounds)
    out = run_se_agents(instance, probs, proto, rng, record)
    return _result("mase", instance, out, _recommend(out, rng), threshold, eliminations=out.eliminations)


def independent(instance: Instance, probs: np.ndarray, rng: np.random.Generator, *, delta: float = 0.05,
                stop: str = "all", sampling: str = "active", width_c: float = 1.0, width_denominator: int = 1,
                max_rounds: int = 10**9, record: bool = True) -> MaseResult:
    """INDEPENDENT baseline (paper 003, Sec. 6; spec 2.7 and A14): every agent runs its own SE at confidence
    ``delta`` on its own samples, with no communication at all.

    ``stop="all"`` (default): finished agents leave the pool and the run ends when every agent is done, so
    T is the sum of the agents' local complexities; ``"first"`` ends at the first agent done. The
    recommendation is the majority of the finished agents' arms; ``agent_accuracy`` is the fraction of
    finished agents that found the best arm.
    """
    _check(sampling, width_c, width_denominator)
    if stop not in STOP_RULES:
        raise ConfigError(f"stop must be one of {', '.join(STOP_RULES)}, got {stop!r}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta must lie strictly between 0 and 1, got {delta}")
    proto = SEProtocol(conf=delta, threshold=None, sync="none", retire=True, sampling=sampling, stop=stop,
                       width_c=width_c, width_denominator=width_denominator, max_rounds=max_rounds)
    out = run_se_agents(instance, probs, proto, rng, record)
    finished = np.flatnonzero(out.finished)
    arms = np.argmax(out.local_sets[finished], axis=1)
    tally = np.bincount(arms, minlength=instance.arms)
    top = np.flatnonzero(tally == tally.max())
    recommended = int(rng.choice(top))
    accuracy = float(np.mean([instance.is_best(a) for a in arms])) if arms.size else 0.0
    exits = out.exit_rounds[out.exit_rounds >= 0]
    return _result("independent", instance, out, recommended, None, agent_accuracy=accuracy,
                   exit_rounds=exits.astype(float))
