"""Fixed-point encoding with randomized rounding (spec distributed-dp.md, Sec. 2.1, line 20).

A reward ``x`` in [0, 1] becomes the integer ``floor(x g) + Bernoulli(x g - floor(x g))`` in {0, ..., g}: it
is unbiased (``E[xhat] = x g``) and off by less than one unit of ``1/g``.
"""

from __future__ import annotations

import numpy as np

from anonbandits.errors import ConfigError


def randomized_round(x: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """Encode each entry of ``x`` (in [0, 1]) with precision ``g``; returns ``int64`` values in {0..g}.

    ``floor(x g) + Bernoulli(frac)`` is drawn as ``floor(x g) + [U < frac]`` with one uniform per entry.
    Rewards outside [0, 1] must be clipped first (spec Sec. 6, item 12); they raise :class:`ConfigError`.
    """
    if int(g) != g or g < 1:
        raise ConfigError(f"precision g must be a positive integer, got {g!r}")
    x = np.asarray(x, dtype=float)
    if x.size and not (np.all(x >= 0.0) and np.all(x <= 1.0)):
        raise ConfigError("randomized rounding needs values in [0, 1]; clip rewards first")
    scaled = x * int(g)
    low = np.floor(scaled)
    up = rng.random(x.shape) < (scaled - low)
    return low.astype(np.int64) + up
