"""Privacy mechanisms applied to what a channel releases: aggregate sums in, noisy releases out.

A mechanism sees only the released aggregate sums and the number of contributors of each, and returns the
noisy releases with its privacy accounting, so it applies to any channel's output: the direct channel's
per-arm epoch sums (central model), or, composed with the anonymous channel, its C-anonymous group sums.

* :class:`CentralLaplace`: one ``Lap(1/eps)`` per released sum of rewards in [0, 1] (DP-SE, Sajed and Sheffet,
  ICML 2019; the baseline of papers 001 and 004);
* :class:`Distributed`: any protocol P = (R, S, A) of "Distributed Differential Privacy in Multi-Armed
  Bandits" (Chowdhury and Zhou, ICLR 2023; paper 004, Sec. 3) on encoded sums: central, local, distributed
  with SecAgg and Pólya / Skellam / discrete Gaussian shares, shuffle
  (:mod:`anonbandits.dp.distributed.protocols`, one class each). The users' total noise is drawn from its
  exact aggregate law.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np


class NoisyRelease(NamedTuple):
    """Noisy releases (one per input sum) and the mechanism's accounting for them (a named tuple: cheap to
    build once per epoch).

    ``values`` are the noisy sums; ``noise`` the noise added, where the mechanism adds it to the sums
    (``None`` for a modular protocol, whose analyzer returns estimates, not the noise); ``accounting`` names
    the guarantee of each release (e.g. ``{"epsilon": 0.5, "scale": 2.0}``) and, for distributed protocols,
    the protocol's raw release (SecAgg outputs, estimates, and what they would be without a modular wrap).
    """

    values: np.ndarray
    noise: np.ndarray | None
    accounting: Mapping[str, Any]


class CentralLaplace:
    """eps-DP release of sums of rewards in [0, 1]: ``sum + Lap(1/eps)`` per sum (sensitivity 1).

    Each reward must enter a single release (DP-SE forgets earlier epochs), so the guarantee of a run is
    eps by parallel composition.
    """

    def __init__(self, epsilon: float) -> None:
        self.epsilon = float(epsilon)
        # the same guarantee for every release, built once (read-only)
        self._accounting = MappingProxyType({"epsilon": self.epsilon, "scale": 1.0 / self.epsilon})

    def release(self, sums: np.ndarray, contributors: np.ndarray, rng: np.random.Generator) -> NoisyRelease:
        """Add one independent ``Lap(1/eps)`` to each of ``sums`` (``contributors`` does not change it)."""
        noise = rng.laplace(0.0, 1.0 / self.epsilon, np.size(sums))
        return NoisyRelease(sums + noise, noise, self._accounting)


class Distributed:
    """A protocol of paper 004 as a mechanism on blocks of ``n`` users' encoded sums.

    ``release`` takes the integer encoded sums (randomized rounding to precision ``g``, see
    :func:`anonbandits.dp.distributed.rewards.encoded_sums`) of blocks that all have ``contributors`` users,
    adds the users' aggregate noise, reduces modulo ``m`` (SecAgg) and runs the analyzer. ``values`` are the
    analyzer's estimates ``z`` of the blocks' sums.
    """

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol

    def release(self, sums: np.ndarray, contributors: int, rng: np.random.Generator, *,
                params: Any = None) -> NoisyRelease:
        """Release encoded block sums of ``contributors`` users each (one protocol run per block).

        ``params`` are the protocol's batch parameters for ``contributors`` users when the caller already
        holds them (it needed ``g`` to encode the sums); they are computed otherwise.
        """
        bp = params if params is not None else self.protocol.batch_params(int(contributors))
        rel = self.protocol.release_sums(sums, bp, rng)
        return NoisyRelease(rel.z, None, {"protocol": self.protocol.name, "params": bp, "release": rel})
