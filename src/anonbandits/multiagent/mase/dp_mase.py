"""DP-MASE: Multi-Agent Successive Elimination with differentially private communications.

Paper: Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications" (ICML
2023), Algorithm 2 with its local routine "DP-MASE Local Elimination" (the paper's Algorithm 4 of App. B.1,
called 4a here to tell it from CORRUPTED ELIMINATION's local routine, also numbered 4), Sec. 4 and App. B.1.
Where the printed formulas lost symbols, the epoch length, widths and thresholds are those of DP-SE (Sajed and
Sheffet, "An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping Rule", ICML 2019):
epochs from e = 1, ``Delta_e = 2^-e``, ``h(e) = sqrt(log(8 s e^2/beta)/(2R))``, and an arm leaves at
``M* = max(1, ceil(log(delta)/log(beta)))`` votes (the proofs' "at least M").

Every agent runs DP Successive Elimination (Sajed & Sheffet 2019) in epochs e = 1, 2, ...: during epoch e it
pulls each arm of its local set ``R(e, s)`` times, then releases each epoch mean plus ``Lap(1/(eps R))`` noise
and votes against every arm whose noisy mean is more than ``2(h(e) + c(e))`` below the best noisy mean. An arm
leaves the global set once it has ``M* = ceil(log(delta)/log(beta))`` votes. Agents learn global eliminations
only at their epoch ends (the lazy synchronisation of Algorithm 2, essential to its privacy proof).

Simulation, exact in distribution: nothing an agent does inside an epoch is observable, so only epoch ends are
simulated, on a Poisson clock (agent n is activated at rate ``p_n``; the merged points of the agents in the pool
are i.i.d. draws from P_N restricted to them, the ``active`` sampling, and round numbers are ranks of activation
times). An
epoch's sums are one exact draw per arm and its end comes ``Gamma(R)/p_n`` after its start; epoch ends are
processed in time order in vectorised batches, cut before the first event that a newly started epoch could
precede. At the stopping time an agent that has made a (uniform) part of an unfinished epoch is counted with
``Binomial(R - 1, elapsed fraction)`` activations.
"""

import numpy as np

from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.channels import CHANNELS
from anonbandits.channels.direct import DirectChannel
from anonbandits.core.elimination import gap_survivors
from anonbandits.core.indices import dp_mase_laplace_scale, dp_mase_threshold
from anonbandits.core.schedules import epoch_length
from anonbandits.core.votes import anonymous_threshold, removal_steps
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import require
from anonbandits.multiagent.mase import model
from anonbandits.multiagent.mase.model import EliminationLog, NoiseAudit
from anonbandits.multiagent.shared import board_size
from anonbandits.privacy.mechanisms import laplace_noise
from anonbandits.results import Result
from anonbandits.validation import BOOL, INSTANCE, MATRIX, RULES, Rule, array_of, instance_of, validated


@filled_dataclass(frozen=True)
class DPMASEConfig:
    """Parameters of DP-MASE (defaults are those of the paper's experiments, Sec. 6 and App. C).

    Parameters
    ----------
    eps : float, optional
        Differential-privacy level eps_dp, positive (default 0.1).
    beta : float, optional
        Local failure probability of each agent's DP-SE, in (0, 1) (default 0.5).
    delta : float, optional
        Global failure probability in (0, 1) (default 0.05).
    literal_order : bool, optional
        Compute the next epoch length before synchronising with the global set (the line order of Algorithm 2 as
        printed); by default (``False``) the agent synchronises first, so that one set size enters R, h and c.
    retire_on_sync : bool, optional
        Also retire agents left with at most one arm by the synchronisation (default ``False``: Algorithm 2 tests
        ``|K_n| = 1`` before the sync, so such an agent runs one more epoch).
    sampling : str, optional
        ``"active"`` (default: draw among the agents still in the pool) or ``"fixed"`` (keep drawing from P_N,
        the finished agents' rounds idle; the paper does not say which).
    max_rounds : int, optional
        Cap on the Poisson clock (about the number of rounds; default 10^9); the run is then ``truncated``.
    channel : str, optional
        ``"direct"`` (default: every vote reaches the board at once) or ``"anonymous"``: the k-anonymous board
        of :mod:`anonbandits.core.votes`, which releases an arm's votes only as a tally of at least ``C``
        agents' votes (see :func:`dp_mase`).
    C : int, optional
        The anonymity parameter of the anonymous channel, at least 1 (default 3; unused on the direct one).

    Raises
    ------
    ConfigError
        For a field its rule refuses (:mod:`anonbandits.validation`: ``eps`` a supported privacy level, ``beta``
        and ``delta`` in (0, 1), the switches bools, ``max_rounds`` and ``C`` integers of at least 1), or a
        ``sampling`` or ``channel`` that is not one of the names above.

    {{refs_paper003}}

    Examples
    --------
    >>> DPMASEConfig(eps=1.0).beta, DPMASEConfig().eps
    (0.5, 0.1)
    >>> DPMASEConfig(beta=1.5)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: beta must be in (0, 1), got 1.5
    """

    eps: float = 0.1
    beta: float = 0.5
    delta: float = 0.05
    literal_order: bool = False
    retire_on_sync: bool = False
    sampling: str = "active"
    max_rounds: int = 10**9
    channel: str = "direct"
    C: int = 3

    def __post_init__(self) -> None:
        rules = {
            "eps": RULES["epsilon"],
            "beta": RULES["beta"],
            "delta": RULES["delta"],
            "literal_order": BOOL,
            "retire_on_sync": BOOL,
            "sampling": Rule(lambda v: v in ("active", "fixed"), "one of active, fixed"),
            "max_rounds": RULES["max_rounds"],
            "channel": Rule(lambda v: isinstance(v, str) and v in CHANNELS, f"one of {', '.join(CHANNELS)}"),
            "C": RULES["C"],
        }
        for name, rule in rules.items():
            rule.check(name, getattr(self, name))


@fill
def _dp_mase_local_elimination(
    eps: float,
    epoch: np.ndarray,
    means: np.ndarray,
    held: np.ndarray,
    beta: float,
    length: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """DP-MASE Local Elimination (paper 003, Algorithm 4 of App. B.1, "4a") for a batch of epoch ends.

    Every held arm's epoch mean gets independent ``Lap(0, 1/(eps R))`` noise, computed once; arm k is eliminated
    when ``max_l noisy_l - noisy_k > 2 (h(e) + c(e))``, with ``s = |K_n(e)|`` the number of arms sampled.

    Parameters
    ----------
    eps : float
        Differential-privacy level eps_dp, positive.
    epoch : numpy.ndarray
        (B,) int, the epoch e of each epoch end.
    means : numpy.ndarray
        (B, K) epoch means of the arms (entries of arms not held are ignored).
    held : numpy.ndarray
        (B, K) bool, the arms each agent held during the epoch.
    beta : float
        Local failure probability, in (0, 1).
    length : numpy.ndarray
        (B,) int, the pulls ``R`` of each held arm in the epoch.
    rng : numpy.random.Generator
        The source of the Laplace noise.

    Returns
    -------
    eliminated : numpy.ndarray
        (B, K) bool, the arms eliminated (voted against).
    noisy : numpy.ndarray
        (B, K) the released noisy means, ``-inf`` for arms not held.

    Raises
    ------
    ConfigError
        If ``eps`` is not a privacy level of :data:`anonbandits.validation.EPSILON`, ``beta`` is outside (0, 1),
        ``epoch`` or ``length`` is not a 1-D array of integers >= 1, ``means`` is not a 2-D array of finite numbers,
        ``held`` not a 2-D bool array, their shapes disagree, or ``rng`` is not a generator (the checks of
        :mod:`anonbandits.validation`).

    {{refs_paper003_sajed2019}}

    Examples
    --------
    >>> import numpy as np
    >>> eliminated, noisy = dp_mase_local_elimination(1.0, np.array([1]), np.array([[0.9, 0.1]]),
    ...                                               np.array([[True, True]]), 0.5, np.array([200]),
    ...                                               np.random.default_rng(0))
    >>> eliminated.tolist()
    [[False, True]]
    """
    batch = np.shape(epoch) + np.shape(means)[1:]
    require(
        np.shape(means) == np.shape(held) == batch and np.shape(length) == np.shape(epoch),
        "means, held, length",
        f"(B, K), (B, K) and (B,) for epoch's B = {np.size(epoch)} epoch ends",
        (np.shape(means), np.shape(held), np.shape(length)),
    )
    scale = np.asarray(dp_mase_laplace_scale(eps, length))
    noisy = np.where(held, means + laplace_noise(1.0, rng, means.shape) * scale[:, None], -np.inf)
    eliminated = held & ~gap_survivors(noisy, dp_mase_threshold(held.sum(axis=1), epoch, length, beta, eps))
    return eliminated, noisy


class _DPMASE:
    def __init__(
        self, instance: MultiUserInstance, probs: np.ndarray, cfg: DPMASEConfig, rng: np.random.Generator, record: bool
    ) -> None:
        self.inst, self.p, self.cfg, self.rng, self.record = instance, probs, cfg, rng, record
        self.channel = DirectChannel.of(instance, rng)  # every epoch's sums of rewards
        n, k = probs.size, instance.arms
        self.threshold = model.voting_threshold(cfg.delta, cfg.beta, n, "beta")
        self.board = board_size(cfg.channel, cfg.C)
        self.removal = anonymous_threshold(self.threshold, self.board)  # the vote that releases a tally >= M
        self.Kn, self.G, self.lam = np.ones((n, k), bool), np.ones(k, bool), np.zeros(k, np.int64)
        self.epoch = np.ones(n, np.int64)
        self.length = epoch_length(k, 1, cfg.beta, cfg.eps) * np.ones(n, np.int64)
        self.start, self.end = np.zeros(n), rng.standard_gamma(self.length) / probs
        self.running, self.exit_clock, self.stop_clock = np.ones(n, bool), np.full(n, np.inf), np.inf
        self.epochs: list[tuple[np.ndarray, ...]] = []  # completed epochs: (start, end, length)
        self.done_rounds = self.done_pulls = 0
        self.votes: list[tuple[np.ndarray, ...]] = [(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))]
        self.global_elims: list[tuple[float, int]] = []
        self.audit: list[tuple[np.ndarray, ...]] = []

    def run(self) -> None:
        while self.G.sum() > 1:
            pend = np.flatnonzero(self.running)
            if pend.size == 0:
                self.stop_clock = float(self.exit_clock[np.isfinite(self.exit_clock)].max())
                return
            agents = pend[np.argsort(self.end[pend])]
            if self.end[agents[0]] > self.cfg.max_rounds:
                self.stop_clock = float(self.cfg.max_rounds)
                return
            self._batch(agents)

    def _batch(self, agents: np.ndarray) -> None:
        """Process the epoch ends of ``agents`` (sorted by time) up to the first one the batch cannot settle."""
        cfg, rng = self.cfg, self.rng
        when, held, length, epoch = self.end[agents], self.Kn[agents], self.length[agents], self.epoch[agents]
        means = self.channel.sums(self.inst.row, length[:, None] * held) / length[:, None]
        elim, noisy = _dp_mase_local_elimination(cfg.eps, epoch, means, held, cfg.beta, length, rng)

        # votes in time order; an arm leaves the global set at the vote that brings it to the threshold, until
        # one arm is left (the sort puts the arms that reach it within the batch first, in order)
        removal_at = removal_steps(self.lam, elim, self.removal, self.G)
        removed = np.argsort(removal_at, kind="stable")[: int(self.G.sum()) - 1]
        removed = removed[removal_at[removed] < agents.size]
        G_before = np.repeat(self.G[None, :], agents.size, axis=0)
        for arm in removed:
            G_before[removal_at[arm] + 1 :, arm] = False
        stop_index = removal_at[removed[-1]] if removed.size == self.G.sum() - 1 else agents.size

        # next epochs (lines 12-18): retire, or reset, synchronise and compute the next length
        after = held & ~elim
        synced = after & G_before
        size = synced.sum(axis=1)
        leave = (after.sum(axis=1) == 1) | (size <= (1 if cfg.retire_on_sync else 0))
        s_next = after.sum(axis=1) if cfg.literal_order else size
        new_length = np.where(leave, 1, epoch_length(np.maximum(s_next, 1), epoch + 1, cfg.beta, cfg.eps))
        new_end = when + np.where(leave, np.inf, rng.standard_gamma(new_length) / self.p[agents])

        # keep the prefix of events that precede every epoch end started within the batch
        ok = when < np.minimum.accumulate(np.concatenate([[np.inf], new_end[:-1]]))
        keep = min(agents.size if ok.all() else int(np.argmin(ok)), stop_index + 1)
        sl = slice(0, keep)
        a = agents[sl]
        self.epochs.append((self.start[a], when[sl], length[sl]))
        self.done_rounds += int(length[sl].sum())
        self.done_pulls += int((length[sl] * held[sl].sum(axis=1)).sum())
        er, ek = np.nonzero(elim[sl])
        self.votes.append((a[er], ek, when[sl][er]))
        np.add.at(self.lam, ek, 1)
        if self.record:
            hr, hk = np.nonzero(held[sl])
            self.audit.append((a[hr], epoch[sl][hr], hk, length[sl][hr], means[sl][hr, hk], noisy[sl][hr, hk]))
        for arm in removed[removal_at[removed] < keep]:
            self.G[arm] = False
            self.global_elims.append((float(when[removal_at[arm]]), int(arm)))
        gone = leave[sl]
        self.running[a[gone]], self.exit_clock[a[gone]] = False, when[sl][gone]
        self.Kn[a] = np.where(gone[:, None], after[sl], synced[sl])
        cont, stay = a[~gone], ~gone
        self.epoch[cont], self.length[cont] = self.epoch[cont] + 1, new_length[sl][stay]
        self.start[cont], self.end[cont] = when[sl][stay], new_end[sl][stay]
        if stop_index < keep:
            self.stop_clock = float(when[stop_index])

    def count_rounds(self) -> tuple[int, int, np.ndarray]:
        """Rounds and pulls up to the stopping clock, and every counted activation time (if recording)."""
        s, rng, pieces = self.stop_clock, self.rng, []
        run = np.flatnonzero(self.running)
        a, b, r = self.start[run], self.end[run], self.length[run]
        inside = rng.binomial(r - 1, np.clip((s - a) / (b - a), 0.0, 1.0))
        rounds = self.done_rounds + int(inside.sum())
        pulls = self.done_pulls + int((inside * self.Kn[run].sum(axis=1)).sum())
        if self.record:
            pieces.append(_uniform_times(rng, a, s, inside))
            for start, end, length in self.epochs:
                pieces += [end, _uniform_times(rng, start, end, length - 1)]
        if self.cfg.sampling == "fixed":
            gone = np.flatnonzero(np.isfinite(self.exit_clock) & (self.exit_clock < s))
            idle = rng.poisson(self.p[gone] * (s - self.exit_clock[gone]))
            rounds += int(idle.sum())
            if self.record:
                pieces.append(_uniform_times(rng, self.exit_clock[gone], s, idle))
        return rounds, pulls, np.concatenate(pieces) if pieces else np.empty(0)


def _uniform_times(
    rng: np.random.Generator, start: np.ndarray, end: np.ndarray | float, count: np.ndarray
) -> np.ndarray:
    """``count[i]`` activation times uniform on ``[start[i], end[i])`` (the order statistics of a Poisson
    process given its number of points), as one array."""
    return np.repeat(start, count) + rng.random(int(count.sum())) * np.repeat(end - start, count)


@fill
def _dp_mase(
    instance: MultiUserInstance, probs: np.ndarray, cfg: DPMASEConfig, rng: np.random.Generator, record: bool = True
) -> Result:
    """Run DP-MASE (paper 003, Algorithm 2 with Algorithm 4a) with agents activated according to ``probs``.

    Every agent runs DP successive elimination in epochs; at the end of epoch e it releases each arm's epoch
    mean plus ``Lap(1/(eps R))`` and votes against the arms more than ``2 (h(e) + c(e))`` below the best noisy
    mean; an arm with ``M* = ceil(log(delta)/log(beta))`` votes leaves the global set, and agents learn global
    eliminations only at their own epoch ends (Algorithm 2's lazy synchronisation). With
    ``cfg.channel="anonymous"`` the board releases
    an arm's votes only as tallies of at least ``cfg.C`` agents' votes (:mod:`anonbandits.core.votes`), so an arm
    leaves at its ``C ceil(M*/C)``-th vote, when the released tally first reaches M*, and never if fewer agents
    ever vote against it (the agents then run alone until each holds one arm: the run ``stalled``).

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        One row of arm means shared by every agent.
    probs : numpy.ndarray
        The activity distribution P_N over the N agents.
    cfg : DPMASEConfig
        The algorithm's parameters.
    rng : numpy.random.Generator
        The run's source of randomness.
    record : bool, optional
        Keep every vote as a message (sender, round, arm index), every local elimination and the
        :class:`NoiseAudit` of the Laplace mechanism (default ``True``); without it only the counts.

    Returns
    -------
    anonbandits.results.Result
        The metrics (the recommendation, rounds, samples, ...), the curve, and in ``info`` the votes, the
        messages, the eliminations, the noise audit and the board's releases (:meth:`.model.Outcome.result`).

    Raises
    ------
    ConfigError
        If ``instance`` is not a :class:`~anonbandits.envs.instances.MultiUserInstance`, ``probs`` not a positive
        probability vector, ``cfg`` not a :class:`DPMASEConfig`, ``rng`` not a generator, ``record`` not a bool;
        if ``cfg.eps`` is not positive, ``cfg.beta`` or ``cfg.delta`` is outside (0, 1), ``M*`` exceeds the
        number of agents, the channel is unknown or ``cfg.C`` is below 1.

    {{refs_paper003_sajed2019}}

    {{mase_example}}
    >>> res = dp_mase(toy, activity_probabilities(8), DPMASEConfig(eps=1.0), np.random.default_rng(0))
    >>> res.metrics["recommended"], res.metrics["vote_threshold"], res.info["votes"].tolist()
    (0, 5, [0, 5])
    """
    require(cfg.eps > 0, "epsilon", "positive", cfg.eps)
    eng = _DPMASE(instance, probs, cfg, rng, record)
    eng.run()
    rounds, pulls, times = eng.count_rounds()
    times.sort()  # empty without ``record``: every vote and elimination is then at round 0
    va, vk, vt = (np.concatenate(c) for c in zip(*eng.votes, strict=True))
    order = np.flatnonzero(vt <= eng.stop_clock)
    order = order[np.argsort(vt[order], kind="stable")]
    log = EliminationLog(va[order], vk[order], np.searchsorted(times, vt[order], "right"), np.ones(order.size, bool))
    audit = None
    if record and eng.audit:
        agent, epoch, arm, length, mean, noisy = (np.concatenate(x) for x in zip(*eng.audit, strict=True))
        audit = NoiseAudit(agent, epoch, arm, length, mean, noisy, np.asarray(dp_mase_laplace_scale(cfg.eps, length)))
    g_rounds = np.searchsorted(times, [c for c, _ in eng.global_elims], "right")
    return model.vote_result(
        "dp-mase",
        instance,
        log,
        eng.G,
        eng.lam,
        rng,
        record,
        running=bool(eng.running.any()),
        capped=False,
        rounds=rounds,
        pulls=pulls,
        threshold=eng.threshold,
        noise=audit,
        board=eng.board,
        agent_accuracy=model.finished_accuracy(instance, eng.Kn),
        global_eliminations=[(int(r), a) for r, (_, a) in zip(g_rounds, eng.global_elims, strict=True)],
    ).result()


# The library functions, checking their arguments by the registry's rules (anonbandits.validation.validated; the
# (rows, arms) ``means`` of the local elimination is no vector of arm means, so it has no rule); the registry entry
# and the DP-MASE loop call the unchecked bodies.
dp_mase = validated(
    _dp_mase,
    instance=INSTANCE,
    cfg=instance_of("anonbandits.multiagent.mase.dp_mase.DPMASEConfig", "a DPMASEConfig"),
    record=BOOL,
)
dp_mase_local_elimination = validated(
    _dp_mase_local_elimination,
    eps="epsilon",
    epoch=array_of("iu", "a 1-D array of epochs >= 1", low=1),
    means=MATRIX,
    held=Rule(lambda v: np.asarray(v).dtype == bool and np.ndim(v) == 2, "a 2-D bool array (the arms held)"),
    length=array_of("iu", "a 1-D array of epoch lengths >= 1", low=1),
)
