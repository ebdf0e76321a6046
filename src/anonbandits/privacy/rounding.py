"""Randomized rounding of paper 004 (Chowdhury and Zhou, ICLR 2023; docs/distributed-dp.md): each user encodes
her reward in [0, 1] with precision ``g`` before adding her noise (:func:`randomized_round`).
"""

from __future__ import annotations

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import COUNT, FINITE_ARRAY, RNG, checks


@checks(x=FINITE_ARRAY, g=COUNT, rng=RNG)
@fill
def randomized_round(x: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """Encode each entry of ``x`` (in [0, 1]) with precision ``g``, as ``int64`` values in {0, ..., g}.

    ``floor(x g) + Bernoulli(frac)`` is drawn as ``floor(x g) + [U < frac]`` with one uniform per entry:
    unbiased (``E[xhat] = x g``) and off by less than one unit of ``1/g`` (the local randomizer R of paper 004,
    "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023, Sec. 3). Rewards outside [0, 1] must
    be clipped first.

    Parameters
    ----------
    x : array_like of float
        The values, in [0, 1].
    g : int
        The precision, a positive integer.
    {{rng}}

    Returns
    -------
    numpy.ndarray
        ``int64`` encodings, of the shape of ``x``.

    Raises
    ------
    ConfigError
        If ``x`` is not a number or an array of finite numbers (bools, text, NaN and infinities are refused) or
        a value lies outside [0, 1], ``g`` is not a positive integer (at most 2^62), or ``rng`` is not a
        generator.

    {{refs_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> randomized_round(np.array([0.0, 0.5, 1.0]), 4, np.random.default_rng(0))
    array([0, 2, 4])
    """
    require(int(g) == g and g >= 1, "precision g", "a positive integer", g)
    x = np.asarray(x, dtype=float)
    if x.size and not (np.all(x >= 0.0) and np.all(x <= 1.0)):
        raise ConfigError(f"x must have every value in [0, 1] (clip rewards first), got {_shown(x)}")
    scaled = x * int(g)
    low = np.floor(scaled)
    up = rng.random(x.shape) < (scaled - low)
    return low.astype(np.int64) + up
