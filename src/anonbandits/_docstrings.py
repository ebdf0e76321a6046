"""Pieces of numpydoc docstrings that many objects share, written once (as scipy's ``doccer`` does).

In a docstring of an object decorated with :func:`fill`, a line holding only ``{{name}}`` is replaced by the
snippet ``name`` of :data:`SNIPPETS`, indented as that line was. Sphinx, numpydoc, ``help()`` and the doctests
all read the filled ``__doc__``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T", bound=Callable)

#: References, one per paper (title and venue), and parameter and section texts shared by many objects.
SNIPPETS: dict[str, str] = {
    "paper000": 'Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.',
    "paper001": 'Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic\n'
    'Environment", arXiv preprint 2102.07929, 2021.',
    "paper002": 'Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019.',
    "paper003": 'Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications",\n'
    "ICML 2023.",
    "paper004": 'Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023.',
    "sajed2019": 'Sajed, Sheffet, "An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping\n'
    'Rule", ICML 2019.',
    "dwork2006": 'Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis",\n'
    "TCC 2006.",
    "dwork2010": 'Dwork, Rothblum, Vadhan, "Boosting and Differential Privacy", FOCS 2010.',
    "bun2016": 'Bun, Steinke, "Concentrated Differential Privacy: Simplifications, Extensions, and Lower Bounds",\n'
    "TCC 2016.",
    "bonawitz2017": 'Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving Machine Learning",\n'
    "ACM CCS 2017.",
    "gao2019": 'Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019.',
    "canonne2020": 'Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020.',
    "agarwal2021": 'Agarwal, Kairouz, Liu, "The Skellam Mechanism for Differentially Private Federated Learning",\n'
    "NeurIPS 2021.",
    "kairouz2021": 'Kairouz, Liu, Steinke, "The Distributed Discrete Gaussian Mechanism for Federated Learning with\n'
    'Secure Aggregation", ICML 2021.',
    "size": "size : int, tuple of int or None\n    Shape of the draw (numpy's ``size``); ``None`` draws one value.",
    "rng": "rng : numpy.random.Generator\n    The source of randomness.",
    "int_draws": "Returns\n-------\nnumpy.ndarray or numpy.int64\n    ``int64`` draws of shape ``size``.",
    "scale_b": "scale : float\n    The scale ``b``, positive and finite.",
    "raises_scale": "Raises\n------\nConfigError\n    If ``scale`` is not a positive finite number.",
    "sigma_scale": "sigma : float\n    The scale ``sigma``, positive and finite.",
    "raises_sigma": "Raises\n------\nConfigError\n    If ``sigma`` is not a positive finite number.",
    "rdp_orders": "alpha : float or array_like of float\n    The Rényi orders.",
    "rdp_returns": "Returns\n-------\nnumpy.ndarray\n    ``eps(alpha)``, of the shape of ``alpha``.",
    "raises_validation": (
        "Raises\n------\nConfigError\n"
        "    Called through :mod:`anonbandits.anonymous`, if an argument breaks its rule in\n"
        "    :mod:`anonbandits.validation`."
    ),
    "bai_example": (
        "Examples\n"
        "--------\n"
        ">>> import numpy as np\n"
        ">>> from anonbandits.core.learners import BestArmElimination\n"
        ">>> from anonbandits.envs import MultiUserInstance, clustered_instance"
    ),
    "reward_curve": "reward : str or callable, optional\n"
    '    A bounded reward model of :mod:`anonbandits.envs.rewards` (default ``"bernoulli"``), or a\n'
    "    callable ``sums(mu, counts, rng)``.\n"
    "expected_means : sequence of float, optional\n"
    "    True expected rewards for the pseudo-regret (default: the model's means).\n"
    "checkpoints : int or sequence of int, optional\n"
    "    Number of evenly spaced curve points (default 200), or the rounds themselves.",
    "mechanism": "mechanism : CentralLaplace or Distributed or None, optional\n"
    "    A privacy mechanism of :mod:`anonbandits.privacy.mechanisms` on every released group sum;\n"
    "    ``None`` (the default) releases exact sums.\n"
    "noise_rng : numpy.random.Generator or None, optional\n"
    "    The source of the mechanism's noise (default ``rng``).",
    "dec_means_agents_rng": (
        "means : sequence of float, numpy.ndarray or MeansSchedule\n"
        "    Arm means (or a :class:`~.environment.MeansSchedule`, which then overrides the ``reward``, ``drift``,\n"
        "    ``switch_at`` and ``means_after`` options).\n"
        "n_agents : int\n"
        "    Number of players N (a positive integer).\n"
        "rng : numpy.random.Generator\n"
        "    The run's generator (split into independent streams for players, rewards, tie-breaks and resets)."
    ),
    "dec_returns_raises": (
        "Returns\n"
        "-------\n"
        "Result\n"
        "    The run's :class:`~anonbandits.results.Result`: its metrics, the curve and, in ``info``, the per-player\n"
        "    and per-arm data (``agent_arms``, ``agent_pulls``, ``votes``, ``elimination_steps``,\n"
        "    ``local_confidence``, the message ``log`` and the board's ``releases``).\n"
        "\n"
        "Raises\n"
        "------\n"
        "ConfigError\n"
        "    If an argument or option is out of range or unknown, or options contradict each other (the message\n"
        "    names the argument)."
    ),
    "mase_instance_probs_rng": (
        "instance : anonbandits.envs.instances.MultiUserInstance\n"
        "    One row of arm means shared by every agent, reward model ``bernoulli`` or ``gaussian-unclipped``.\n"
        "probs : numpy.ndarray\n"
        "    The activity distribution P_N over the N agents (:func:`activity_probabilities`).\n"
        "rng : numpy.random.Generator\n"
        "    The run's source of randomness."
    ),
    "mase_example": (
        "Examples\n"
        "--------\n"
        ">>> import numpy as np\n"
        ">>> from anonbandits.multiagent.shared import activity_probabilities\n"
        '>>> toy = MultiUserInstance(np.array([0.9, 0.1]), "bernoulli")'
    ),
    "dist_elimination_example": (
        "Examples\n"
        "--------\n"
        ">>> import numpy as np\n"
        ">>> from anonbandits.dp.distributed import Protocol\n"
        '>>> res = run_elimination(Protocol(1.0, 0.1), np.array([0.9, 0.1]), reward="bernoulli", reward_sigma=0.1,\n'
        "...                       horizon=2000, batch_base=2, confidence=0.1, crs=1.0, rng=np.random.default_rng(0),\n"
        "...                       checkpoints=4)"
    ),
    "dp_means": (
        'means : str, sequence of float or numpy.ndarray\n    Arm means in [0, 1] (or a ``"0.9,0.8"`` string).'
    ),
    "dp_epsilon": ("epsilon : float\n    Privacy parameter, finite and positive."),
    "dp_horizon_rng": (
        "horizon : int\n    Number of rounds T.\nrng : numpy.random.Generator\n    The run's source of randomness."
    ),
    "vote_failures": (
        "delta : float\n"
        "    The failure probability of the vote, in (0, 1).\n"
        "local_failure : float\n"
        "    The failure probability of one agent's local elimination, in (0, 1)."
    ),
    "learner_sizes": ("n_learners : int\n    N, at least 1.\nn_arms : int\n    K, at least 2."),
    "rdp_delta_orders": (
        "delta : float\n"
        "    The target delta, in (0, 1).\n"
        "orders : numpy.ndarray, optional\n"
        "    The Rényi orders, all > 1; default :data:`DEFAULT_ORDERS`."
    ),
    "returns_eps": ("Returns\n-------\nfloat\n    ``eps'``."),
    "dec_delta_eps_subroutine": (
        "delta : float, optional\n"
        "    Global failure probability in (0, 1) (default 0.05).\n"
        "eps : float, optional\n"
        "    Approximation factor in [0, 1] (default 0.25; 0, exact best-arm identification, only for se and\n"
        "    ser3).\n"
        "subroutine : str, optional\n"
        "    ``naive``, ``median``, ``se``, ``ser3`` (default) or ``ugapec``."
    ),
    "mase_delta_record": (
        "delta : float, optional\n"
        "    Global failure probability in (0, 1) (default 0.05).\n"
        "record : bool, optional\n"
        "    Keep every message and elimination (default ``True``; else only the counts)."
    ),
    "anon_example": (
        "Examples\n"
        "--------\n"
        ">>> import numpy as np\n"
        ">>> from anonbandits.anonymous import anon_batched, anon_etc\n"
        ">>> from anonbandits.envs import clustered_instance\n"
        ">>> instance = clustered_instance(8, 2, 4, 0.3, np.random.default_rng(0))"
    ),
    "messages_modulus": (
        "messages : array_like of int\n"
        "    The users' messages ``y_i``.\n"
        "m : int\n"
        "    The modulus, an integer in [2, 2^62)."
    ),
    "batch_n_g_tau": (
        "n : int\n"
        "    The number of users in the batch.\n"
        "g : int\n"
        "    The precision of randomized rounding.\n"
        "tau : int\n"
        "    The noise radius."
    ),
}
# the Parameters entries ``size`` and ``rng`` and the Returns of an integer sampler
SNIPPETS["size_rng_int_draws"] = "\n".join([SNIPPETS["size"], SNIPPETS["rng"], "", SNIPPETS["int_draws"]])


def _references(*keys: str, lead: str | None = None) -> str:
    """A References section citing the papers ``keys`` of :data:`SNIPPETS`, one paragraph each, after ``lead``."""
    return "References\n----------\n" + "\n\n".join([*([lead] if lead else []), *(SNIPPETS[key] for key in keys)])


# ``refs_<key>_<key>...``: a References section citing those papers in that order.
SNIPPETS.update(
    {
        "refs_" + combo: _references(*re.findall(r"[a-z]+\d+", combo))
        for combo in (
            "agarwal2021_paper004",
            "bonawitz2017",
            "bonawitz2017_paper004",
            "bun2016_paper004",
            "canonne2020",
            "canonne2020_paper004",
            "dwork2006",
            "dwork2006_paper004",
            "dwork2006_sajed2019",
            "dwork2010_paper004",
            "gao2019_paper000",
            "kairouz2021_paper004",
            "paper000",
            "paper000_paper002",
            "paper001",
            "paper002",
            "paper002_paper003",
            "paper002_sajed2019",
            "paper003",
            "paper003_paper002",
            "paper003_sajed2019",
            "paper004",
            "sajed2019",
            "sajed2019_paper001",
            "sajed2019_paper001_paper004",
            "sajed2019_paper004",
        )
    }
)
# References sections whose sentence says what the papers are the source of.
SNIPPETS.update(
    {
        "refs_" + name: _references(*keys, lead=lead)
        for name, (lead, keys) in {
            "metrics": (
                "The metrics are those of the algorithms of:",
                ("paper000", "paper001", "paper004", "paper003", "paper002"),
            ),
            "parameters": (
                "The parameters are those of the algorithms of:",
                ("paper000", "paper001", "paper004", "paper003", "paper002"),
            ),
            "registered": (
                "The registered algorithms are those of:",
                ("paper000", "paper001", "sajed2019", "paper004", "paper003", "paper002"),
            ),
        }.items()
    }
)
# the tail radii of the privacy accounting: the tail probability, the radius, its Raises and References
SNIPPETS["tail_radius"] = (
    "p : float\n    The tail probability, in (0, 1].\n\n"
    "Returns\n-------\nfloat\n    The radius ``v`` with ``P[|X| > v] <= p``.\n\n"
    "Raises\n------\nConfigError\n    If ``p`` is outside (0, 1].\n\n" + SNIPPETS["refs_paper004"]
)
# the Returns, Raises and References of the decentralized runs
SNIPPETS["dec_returns_raises_refs"] = SNIPPETS["dec_returns_raises"] + "\n\n" + SNIPPETS["refs_paper002"]
# the Raises and References of the Laplace samplers
SNIPPETS["raises_scale_refs_paper004"] = SNIPPETS["raises_scale"] + "\n\n" + SNIPPETS["refs_paper004"]
# the References of the experiment pipeline: the paper whose experiments it reproduces, the algorithm of its examples
SNIPPETS["refs_experiments"] = (
    "References\n----------\n"
    'Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (its\n'
    "experiments are reproduced by the grid docs/results/anonymous_paper000_grid.toml).\n\n"
    'Sajed, Sheffet, "An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping Rule",\n'
    "ICML 2019 (DP-SE, the algorithm of the example)."
)

# the Parameters shared by the drivers of batched learners (anonymous.bai.identify, anonymous.regret)
SNIPPETS["driver_learners"] = (
    "instance : MultiUserInstance\n    N users x K arms with a reward model.\n"
    "learners : BatchLearner\n"
    "    N batched learners (:class:`~anonbandits.core.learners.BatchLearner`), one per user."
)
SNIPPETS["driver_channel"] = (
    "channel : str or channel class, optional\n"
    "    A name of :data:`anonbandits.channels.CHANNELS` (``anonymous``, the default, or ``direct``) or a channel\n"
    "    (a class implementing :class:`~anonbandits.channels.FeedbackChannel`), as networkx takes a ``flow_func``.\n"
    "C : int, optional\n"
    "    Anonymity parameter of the anonymous channel: released groups hold at least C users. Default 1.\n"
    "decomposer : str, optional\n"
    "    The ``anondecomp`` method decomposing each batch on the anonymous channel. Default ``auto``.\n"
    "rng : numpy.random.Generator\n    Randomness of the rewards.\n"
    "decomposer_rng : numpy.random.Generator, optional\n    Randomness of randomized decomposers (default ``rng``)."
)
SNIPPETS["driver_mechanism"] = (
    "mechanism : CentralLaplace or Distributed or None, optional\n"
    "    A privacy mechanism of :mod:`anonbandits.privacy.mechanisms` on every released group sum (anonymous\n"
    "    channel only); its noise raises the variance proxy (:func:`~anonbandits.anonymous.batches.noisy_variance`,\n"
    "    the worst batch so far). ``None`` (the default) releases exact sums.\n"
    "noise_rng : numpy.random.Generator or None, optional\n"
    "    The source of the mechanism's noise (default ``rng``)."
)

SNIPPETS["driver_absence"] = (
    "absence : float, optional\n"
    "    The probability in [0, 1) that a user misses a block (one assignment, its 2C+2 rounds; anonymous channel\n"
    "    only): an absent user gets no reward, is in no sum and adds no regret; each batch is decomposed with groups\n"
    "    robust to it and what absent users left short is re-planned until every pair has its demand\n"
    "    (:mod:`anonbandits.channels.anonymous`). Default 0: every user is always there.\n"
    "confidence : float or None, optional\n"
    "    Q in (0, 1): a robust group keeps C+1 present users with probability at least Q (``None``, the default:\n"
    "    0.95); only with an absence.\n"
    "max_exposure : int or None, optional\n"
    "    S >= 0: each batch's decomposition exposes no user (puts it in a released group) in more than S blocks\n"
    "    beyond its demand (``anondecomp.decompose(max_surplus_exposure=S)``, re-seated; anonymous channel only);\n"
    "    with a privacy mechanism each user's epsilon is computed from its actual releases\n"
    '    (``info["epsilon_by_user"]``). ``None`` (default): the decomposer\'s own seating. Not with an absence.'
)

# the Parameters, Returns and Raises of a batch learner's update (core.learners)
SNIPPETS["learner_update"] = (
    "Parameters\n----------\n"
    "sums : numpy.ndarray\n    (N, K) sums of the samples served.\n"
    "counts : numpy.ndarray\n    (N, K) numbers of samples served, equal to :meth:`demand`.\n"
    "sigma2 : float\n    Variance proxy of one sample, positive and finite (0.25 for rewards in [0, 1]).\n\n"
    "Returns\n-------\nnumpy.ndarray\n    (N, K) bool mask of the arms this batch eliminated.\n\n"
    "Raises\n------\n"
    "ValueError\n    If ``sums`` or ``counts`` has the wrong shape or ``counts`` differs from :meth:`demand`.\n"
    "ConfigError\n    If ``sigma2`` is not a positive finite number."
)

_MARK = re.compile(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", re.M)


def fill(obj: T) -> T:
    """``obj`` with every ``{{name}}`` line of its docstring replaced by its snippet (see the module docstring).

    Parameters
    ----------
    obj : callable
        A function or class whose docstring holds ``{{name}}`` lines.

    Returns
    -------
    callable
        ``obj`` itself, its ``__doc__`` filled.

    Raises
    ------
    KeyError
        For a ``{{name}}`` that is not a snippet.

    Examples
    --------
    >>> @fill
    ... def f():
    ...     '''Draw.
    ...
    ...     {{rng}}
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    rng : numpy.random.Generator
    """
    if obj.__doc__:
        obj.__doc__ = _MARK.sub(lambda m: textwrap.indent(SNIPPETS[m.group(2)], m.group(1)), obj.__doc__)
    return obj


@dataclass_transform()
def filled_dataclass(cls: type | None = None, /, **options: Any) -> Any:
    """``@fill`` over ``@dataclass(**options)`` in one decorator: ``cls`` made a dataclass, its docstring filled.

    Parameters
    ----------
    cls : type or None
        The class, when used bare as ``@filled_dataclass``; ``None`` when called with options.
    **options : dict
        The options of :func:`dataclasses.dataclass` (``frozen=True``, ...).

    Returns
    -------
    type or callable
        The filled dataclass, or (called with options) the decorator that makes one.

    Examples
    --------
    >>> @filled_dataclass(frozen=True)
    ... class Draw:
    ...     '''A draw.
    ...
    ...     {{rng}}
    ...     '''
    ...     rng: object
    >>> print(Draw.__doc__.splitlines()[2].strip())
    rng : numpy.random.Generator
    """

    def make(klass: type) -> type:
        return fill(dataclass(**options)(klass))

    return make if cls is None else make(cls)
