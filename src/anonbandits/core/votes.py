"""The multi-agent vote board: agents vote against the arms they eliminate locally, and an arm leaves the
shared set at its M-th vote, ``M = ceil(log(delta) / log(local failure probability))``, which makes
``local_failure^M <= delta``: paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed
Bandits", ICML 2019) and paper 003 (Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private
Communications", ICML 2023, Algorithms 1-3, spec A5-A6).
"""

import math

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core.indices import vote_ratio
from anonbandits.errors import require

VOTE_ROUNDINGS = ("ceil", "floor")


@fill
def vote_threshold(delta: float, local_failure: float, rounding: str = "ceil") -> int:
    """``M = ceil(log(delta) / log(local_failure))`` votes remove an arm, so that ``local_failure^M <= delta``.

    ``rounding="floor"`` gives paper 002's printed 28 for delta = 0.05 and eta = 0.9 (its spec, A1). The 1e-9
    keeps a ratio that is an integer up to rounding error at that integer. The callers check M against their
    own limits (M >= 2 in paper 002, M <= N in paper 003).

    Parameters
    ----------
    {{vote_failures}}
    rounding : str, optional
        ``"ceil"`` (the default) or ``"floor"``.

    Returns
    -------
    int
        M, the votes that remove an arm.

    Raises
    ------
    ConfigError
        If ``rounding`` is not one of :data:`VOTE_ROUNDINGS` (``"ceil"``, ``"floor"``).

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> vote_threshold(0.05, 0.9), vote_threshold(0.05, 0.9, "floor"), vote_threshold(0.25, 0.5)
    (29, 28, 2)
    """
    require(rounding in VOTE_ROUNDINGS, "vote_rounding", f"one of {', '.join(VOTE_ROUNDINGS)}", rounding)
    ratio = vote_ratio(delta, local_failure)
    return math.ceil(ratio - 1e-9) if rounding == "ceil" else math.floor(ratio + 1e-9)


@fill
def removal_steps(votes_before: np.ndarray, cast: np.ndarray, threshold: int, alive: np.ndarray) -> np.ndarray:
    """For each arm, the row of ``cast`` whose vote brings it to ``threshold`` votes (``len(cast)`` if none).

    Parameters
    ----------
    votes_before : numpy.ndarray
        (K,) votes each arm held before this batch.
    cast : numpy.ndarray
        (n, K) bool, row i the votes of the i-th event in time order.
    threshold : int
        M, the votes that remove an arm.
    alive : numpy.ndarray
        (K,) bool, the arms still in the shared set (others are never removed again).

    Returns
    -------
    numpy.ndarray
        (K,) int: the index of the removing event of each arm, ``len(cast)`` for the arms not removed.

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> cast = np.array([[True, True, False], [True, False, True]])
    >>> removal_steps(np.array([0, 1, 0]), cast, 2, np.ones(3, bool)).tolist()
    [1, 0, 2]
    """
    tally = votes_before + np.cumsum(cast, axis=0)
    crossing = cast & (tally >= threshold) & alive[None, :]
    return np.where(crossing.any(axis=0), crossing.argmax(axis=0), cast.shape[0])
