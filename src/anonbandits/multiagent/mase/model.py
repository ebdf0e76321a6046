"""The setting of paper 003 (Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private
Communications", ICML 2023) and what one run reports.

* Bandit instances (App. C.1) are :class:`~anonbandits.envs.instances.MultiUserInstance` with one row of means
  shared by every agent (:func:`problem`); their rewards are drawn through the direct channel, one pull at a time
  or as exact sums of many pulls (one Binomial(n, mu) draw, or one N(n mu, n sigma^2) draw for the reward model
  ``gaussian-unclipped`` of Problem 2, means around 11; its standard deviation, unstated in App. C.1, is 0.5 by
  default, as sub-Gaussian as rewards in [0, 1]). The agent-activity distributions (App. C.4) are
  :func:`anonbandits.multiagent.shared.activity_probabilities`.
* Closed forms: the voting threshold ``M* = max(1, ceil(log(delta) / log(x)))`` (Algorithms 1-3; "at least M
  votes", as the proofs of Sec. 4-5 count them) and CORRUPTED
  ELIMINATION's local failure probability ``eta_xi`` (Prop. 5.1). The SE boundary ``g(t)`` and DP-SE's widths
  and epoch lengths are the elimination core's (:mod:`anonbandits.core.radii`, :mod:`anonbandits.core.schedules`).
* :class:`Outcome`: what a run collects (its message, elimination and noise logs) on the way to its
  :class:`~anonbandits.results.Result`, the one result type of every algorithm (``MaseResult``, the name of
  this family's result type until this release, is that ``Result`` now).
"""

from dataclasses import field
from typing import Any

import numpy as np

from anonbandits._deprecated import moved
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.core.indices import vote_ratio
from anonbandits.core.votes import Releases, board_releases, vote_threshold
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError
from anonbandits.multiagent.shared import MessageLog
from anonbandits.results import Result
from anonbandits.validation import POSITIVE_FINITE, Rule, checks

PROBLEMS = ("1", "2")
#: The reward models of the compiled SE loop (MASE, CORRUPTED ELIMINATION, INDEPENDENT): Bernoulli, and the unclipped
#: Gaussian of Problem 2 (named ``gaussian`` before the reward models were shared: ``gaussian`` is now the clipped one
#: of every family).
MODELS = ("bernoulli", "gaussian-unclipped")
#: The axes of the curve: the arms left in the global set; INDEPENDENT's, the agents still running.
ARMS_AXES = ("round", "arms left in the global set")
RUNNING_AXES = ("round", "users still running")
#: metric names of :meth:`Outcome.metrics` -> names of the results schema (:mod:`anonbandits.results`)
_METRIC_NAMES = {"correct": "best_arm_found", "threshold": "vote_threshold", "agent_accuracy": "users_best_arm_found"}
#: what :meth:`Outcome.metrics` reports that is not a number: ``Result.info``
_INFO = ("instance", "votes")

__getattr__ = moved(__name__, {}, {"MaseResult": (Result, "anonbandits.results.Result (the logs are in its info)")})


#: The one instance model, under the name this family's modules have used (a shared row: ``Instance(means, model,
#: sigma, name)``).
Instance = MultiUserInstance


@fill
@checks(
    name=Rule(lambda v: isinstance(v, str) and v in PROBLEMS, f"one of {', '.join(PROBLEMS)} (paper 003's problems)"),
    sigma=POSITIVE_FINITE,
)
def problem(name: str, sigma: float = 0.5) -> MultiUserInstance:
    """Paper 003's Problem 1 (Bernoulli) or Problem 2 (unclipped Gaussian, standard deviation ``sigma``).

    Problem 1: K = 10 Bernoulli arms, means 0.7, 0.5, 0.3 and seven times 0.1. Problem 2: K = 10 Gaussian arms,
    means 11, 10.8 and eight times 10.4 (App. C.1).

    Parameters
    ----------
    name : str
        ``"1"`` or ``"2"``.
    sigma : float, optional
        Standard deviation of Problem 2's rewards (default 0.5).

    Returns
    -------
    anonbandits.envs.instances.MultiUserInstance
        One row of means shared by every agent, named ``"problem1"`` or ``"problem2"``.

    Raises
    ------
    ConfigError
        If ``name`` is neither ``"1"`` nor ``"2"``, or ``sigma`` is not a finite positive number.

    {{refs_paper003}}

    Examples
    --------
    >>> instance = problem("1")
    >>> instance.name, instance.arms, instance.model
    ('problem1', 10, 'bernoulli')
    """
    if name == "1":
        return MultiUserInstance(np.array([0.7, 0.5, 0.3] + [0.1] * 7), "bernoulli", sigma, "problem1")
    if name == "2":
        return MultiUserInstance(np.array([11.0, 10.8] + [10.4] * 8), "gaussian-unclipped", sigma, "problem2")
    raise ConfigError(f"problem must be one of {', '.join(PROBLEMS)}, got {name!r}")


def check_probability(name: str, value: float) -> None:
    """:class:`ConfigError` unless ``0 < value < 1``."""
    if not 0 < value < 1:
        raise ConfigError(f"{name} must lie strictly between 0 and 1, got {value}")


def voting_threshold(delta: float, local_failure: float, agents: int, name: str = "beta") -> int:
    """``M* = max(1, ceil(log(delta)/log(local_failure)))``; :class:`ConfigError` if it exceeds ``agents``.

    An arm leaves the global set once it has at least ``M*`` votes, which guarantees
    ``local_failure ** M* <= delta`` (the "at least M votes" of the proofs of Sec. 4-5); ``M* > N`` could never
    terminate.
    """
    check_probability("delta", delta)
    check_probability(name, local_failure)
    m_star = max(1, vote_threshold(delta, local_failure))
    if m_star > agents:
        m_real = vote_ratio(delta, local_failure)
        raise ConfigError(
            f"voting threshold M = {m_star} (log(delta)/log({name}) = {m_real:.3f}) exceeds the "
            f"{agents} agents: no arm could ever be eliminated; use more agents or a larger delta"
        )
    return m_star


def eta_xi(eta: float, xi: float, arms: int) -> float:
    """Local failure probability ``max(0, 1 - (1-eta)/(1-xi)^(K-1))`` that keeps apparent privacy eta."""
    check_probability("eta", eta)
    if not 0 <= xi < 1:
        raise ConfigError(f"xi must lie in [0, 1), got {xi}")
    value = max(0.0, 1.0 - (1.0 - eta) / (1.0 - xi) ** (arms - 1))
    if not value > 0:
        limit = 1.0 - (1.0 - eta) ** (1.0 / (arms - 1))
        raise ConfigError(
            f"xi = {xi} leaves no local failure budget (eta_xi = 0): with eta = {eta} and "
            f"K = {arms} arms xi must be below {limit:.4f}"
        )
    return value


@filled_dataclass
class EliminationLog:
    """Every local elimination of a run, one entry per elimination in round order.

    For CORRUPTED ELIMINATION an undelivered entry is a vote dropped by the corruption mask; the other
    algorithms deliver every vote.

    Parameters
    ----------
    agent : numpy.ndarray
        The agent that eliminated the arm (int).
    arm : numpy.ndarray
        The arm eliminated locally (int).
    time : numpy.ndarray
        The round of the elimination (int).
    delivered : numpy.ndarray
        Whether the vote was actually sent (bool).

    {{refs_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> log = EliminationLog(agent=np.array([0, 1]), arm=np.array([2, 2]), time=np.array([5, 9]),
    ...                      delivered=np.array([True, False]))
    >>> int(log.delivered.sum())
    1
    """

    agent: np.ndarray
    arm: np.ndarray
    time: np.ndarray
    delivered: np.ndarray


@filled_dataclass
class NoiseAudit:
    """DP-MASE's Laplace mechanism, one row per released noisy mean (agent, epoch, arm).

    Parameters
    ----------
    agent : numpy.ndarray
        The releasing agent (int).
    epoch : numpy.ndarray
        Its epoch (int, from 1).
    arm : numpy.ndarray
        The arm whose epoch mean is released (int).
    length : numpy.ndarray
        The pulls ``R`` of that arm in the epoch (int).
    mean : numpy.ndarray
        The exact epoch mean.
    noisy : numpy.ndarray
        The released noisy mean; ``noisy - mean`` is the noise actually added.
    scale : numpy.ndarray
        The Laplace scale used, ``1/(eps_dp R)``.

    {{refs_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> audit = NoiseAudit(agent=np.array([0]), epoch=np.array([1]), arm=np.array([1]), length=np.array([100]),
    ...                    mean=np.array([0.5]), noisy=np.array([0.52]), scale=np.array([0.01]))
    >>> (audit.noisy - audit.mean).round(6).tolist()
    [0.02]
    """

    agent: np.ndarray
    epoch: np.ndarray
    arm: np.ndarray
    length: np.ndarray
    mean: np.ndarray
    noisy: np.ndarray
    scale: np.ndarray


@filled_dataclass
class Outcome:
    """What one run of a paper-003 algorithm on ``instance`` collects; :meth:`result` makes its
    :class:`~anonbandits.results.Result` (the library functions return that).

    The property ``correct`` says whether the recommended arm has the largest mean; ``metrics()`` gives the
    columns of the results table, ``curve()`` the arms left in the global set against rounds (the agents still
    running for INDEPENDENT).

    Parameters
    ----------
    algorithm : str
        The algorithm's name (``"mase"``, ``"dp-mase"``, ...).
    instance : anonbandits.envs.instances.MultiUserInstance
        The bandit instance.
    recommended : int
        The recommended arm.
    rounds : int
        The paper's sample complexity T (iterations of the main loop, one activation of one agent each).
    pulls : int
        Every arm pull (one round pulls every arm of the active agent's set), reported as ``samples``.
    messages : MessageLog
        The messages sent (:class:`~anonbandits.multiagent.shared.MessageLog`).
    votes : numpy.ndarray
        (K,) int, votes each arm received.
    threshold : int or None, optional
        The voting threshold ``M*`` (``None``: no vote board).
    stalled : bool, optional
        No agent was left running before one arm was left.
    truncated : bool, optional
        ``max_rounds`` stopped the run.
    eliminations : EliminationLog or None, optional
        Every local elimination.
    global_eliminations : list of tuple of int, optional
        ``(round, arm)`` of every global elimination.
    agent_accuracy : float or None, optional
        INDEPENDENT, MASE, DP-MASE: the fraction of finished agents whose own answer is the best arm.
    exit_rounds : numpy.ndarray or None, optional
        INDEPENDENT: the round at which each finished agent stopped.
    noise : NoiseAudit or None, optional
        DP-MASE: the Laplace mechanism's releases (with ``record``).
    releases : Releases or None, optional
        MASE, DP-MASE: the aggregates the vote board released
        (:class:`~anonbandits.core.votes.Releases`; one vote each on the direct channel).

    {{refs_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> res = Outcome("mase", problem("1"), 0, rounds=10, pulls=100, messages=MessageLog(),
    ...               votes=np.zeros(10, np.int64))
    >>> res.correct, res.metrics()["samples"], res.result().metrics["best_arm_found"]
    (True, 100, 1)
    """

    algorithm: str
    instance: MultiUserInstance
    recommended: int
    rounds: int
    pulls: int
    messages: MessageLog
    votes: np.ndarray
    threshold: int | None = None
    stalled: bool = False
    truncated: bool = False
    eliminations: EliminationLog | None = None
    global_eliminations: list[tuple[int, int]] = field(default_factory=list)
    agent_accuracy: float | None = None
    exit_rounds: np.ndarray | None = None
    noise: NoiseAudit | None = None
    releases: Releases | None = None

    @property
    def correct(self) -> bool:
        return self.instance.is_best(self.recommended)

    def metrics(self) -> dict[str, Any]:
        """Columns of the results table.

        Returns
        -------
        dict of str to Any
            ``samples`` (every arm pull), ``rounds``, ``messages``, ``recommended``, ``correct``, ``threshold``
            (-1 without a vote board), ``stalled``, ``truncated`` and ``votes`` (comma-separated); with an
            elimination log also ``local_eliminations``, ``best_eliminated_locally`` and ``dropped_votes``;
            for INDEPENDENT, MASE and DP-MASE ``agent_accuracy``; with a record of the board's releases
            ``min_group_size`` and ``released_aggregates``; last ``instance`` (its name) and ``arms``.

        Examples
        --------
        >>> import numpy as np
        >>> res = Outcome("mase", problem("1"), 3, rounds=40, pulls=400, messages=MessageLog(),
        ...               votes=np.arange(10), threshold=2)
        >>> metrics = res.metrics()
        >>> metrics["correct"], metrics["threshold"], metrics["votes"], metrics["arms"]
        (False, 2, '0,1,2,3,4,5,6,7,8,9', 10)
        """
        out = {
            "samples": self.pulls,
            "rounds": self.rounds,
            "messages": self.messages.count,
            "recommended": self.recommended,
            "correct": self.correct,
            "threshold": -1 if self.threshold is None else self.threshold,
            "stalled": self.stalled,
            "truncated": self.truncated,
            "votes": ",".join(str(int(v)) for v in self.votes),
        }
        if self.eliminations is not None:
            out["local_eliminations"] = self.eliminations.arm.size
            out["best_eliminated_locally"] = int((self.eliminations.arm == self.instance.best).sum())
            out["dropped_votes"] = int((~self.eliminations.delivered).sum())
        if self.agent_accuracy is not None:
            out["agent_accuracy"] = self.agent_accuracy
        if self.releases is not None:
            out |= self.releases.metrics()
        return out | {"instance": self.instance.name, "arms": self.instance.arms}

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        """Step curve of the arms left in the global set against rounds (agents still running for INDEPENDENT).

        Returns
        -------
        x : numpy.ndarray
            Float rounds of the steps' corners, from 0 to ``rounds`` (each elimination or exit round twice).
        y : numpy.ndarray
            Float arms left (agents still running) at each corner.

        Examples
        --------
        >>> import numpy as np
        >>> res = Outcome("mase", problem("1"), 0, rounds=10, pulls=100, messages=MessageLog(),
        ...               votes=np.zeros(10, np.int64), global_eliminations=[(3, 1), (7, 2)])
        >>> x, y = res.curve()
        >>> x.tolist(), y.tolist()
        ([0.0, 3.0, 3.0, 7.0, 7.0, 10.0], [10.0, 10.0, 9.0, 9.0, 8.0, 8.0])
        """
        if self.exit_rounds is not None:
            steps, start = np.sort(self.exit_rounds), float(self.exit_rounds.size)
        else:
            steps, start = np.array([r for r, _ in self.global_eliminations], dtype=float), float(self.instance.arms)
        x = np.concatenate([[0.0], np.repeat(steps, 2), [float(self.rounds)]])
        return x, np.repeat(start - np.arange(steps.size + 1), 2)

    def result(self) -> Result:
        """The run's :class:`~anonbandits.results.Result`.

        Returns
        -------
        anonbandits.results.Result
            The metrics of :meth:`metrics` under the schema's names (``correct`` is ``best_arm_found``,
            ``threshold`` is ``vote_threshold``, empty without a vote board, ``agent_accuracy`` is
            ``users_best_arm_found``), the :meth:`curve`, the algorithm as its label, and in ``info`` the
            ``instance`` (its name), the ``votes`` (K,), the ``messages`` (:class:`MessageLog`), the
            ``eliminations``, ``global_eliminations``, ``exit_rounds``, ``noise`` and ``releases``.

        Examples
        --------
        >>> res = Outcome("independent", problem("1"), 0, rounds=10, pulls=100, messages=MessageLog(),
        ...               votes=np.zeros(10, np.int64), exit_rounds=np.array([4.0, 9.0])).result()
        >>> res.label, res.metrics["vote_threshold"], res.curve_axes[1], res.info["instance"]
        ('independent', None, 'users still running', 'problem1')
        """
        metrics = {_METRIC_NAMES.get(k, k): v for k, v in self.metrics().items() if k not in _INFO}
        if metrics["vote_threshold"] == -1:
            metrics["vote_threshold"] = None  # no vote board: not applicable
        info = {
            "instance": self.instance.name,
            "votes": self.votes,
            "messages": self.messages,
            "eliminations": self.eliminations,
            "global_eliminations": self.global_eliminations,
            "exit_rounds": self.exit_rounds,
            "noise": self.noise,
            "releases": self.releases,
        }
        return Result(
            metrics=metrics,
            curve=self.curve(),
            label=self.algorithm,
            info=info,
            curve_axes=RUNNING_AXES if self.exit_rounds is not None else ARMS_AXES,
        )


def finished_accuracy(instance: MultiUserInstance, held: np.ndarray) -> float:
    """The fraction of the finished agents (one arm left in ``held``, their (N, K) local sets) whose arm is a
    best arm; 0 when none finished."""
    arms = np.argmax(held[held.sum(axis=1) == 1], axis=1)
    true = instance.means[0]
    return float(np.mean(true[arms] == true.max())) if arms.size else 0.0


def vote_result(
    algorithm: str,
    instance: MultiUserInstance,
    log: EliminationLog,
    global_set: np.ndarray,
    votes: np.ndarray,
    rng: np.random.Generator,
    record: bool,
    *,
    running: bool,
    capped: bool,
    board: int | None = None,
    **fields: Any,
) -> Outcome:
    """The result of a voting run (MASE, DP-MASE, CORRUPTED ELIMINATION): every delivered elimination of ``log``
    is a message (sender, round, arm index); the recommendation is the last arm of ``global_set``, or after a
    stall (no agent ``running``, the run not ``capped``) or a truncation an arm with the fewest votes, drawn
    with ``rng``. With a ``board`` (the smallest group it releases: 1 direct, C anonymous) the votes are
    grouped as the board released them (:func:`~anonbandits.core.votes.board_releases`, kept in ``releases``)
    and the fewest votes are the fewest released ones: votes still buffered are nobody's knowledge.
    ``fields``: the other :class:`Outcome` fields."""
    messages = MessageLog(record=record)
    sender, arm, time = log.agent[log.delivered], log.arm[log.delivered], log.time[log.delivered]
    messages.add(sender, time, arm)
    releases, tally = None, votes
    if board is not None:  # on the direct channel (board 1) the released tally is ``votes`` itself
        releases = board_releases(sender, arm, time, board)
        if board > 1:
            tally = np.bincount(releases.slot, releases.total, minlength=votes.size).round().astype(np.int64)
    left = np.flatnonzero(global_set)
    recommended = int(left[0]) if left.size == 1 else int(rng.choice(left[tally[left] == tally[left].min()]))
    return Outcome(
        algorithm,
        instance,
        recommended,
        messages=messages,
        votes=votes,
        eliminations=log,
        stalled=left.size > 1 and not running and not capped,
        truncated=left.size > 1 and running,
        releases=releases,
        **fields,
    )
