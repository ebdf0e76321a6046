"""Closed-form quantities of paper 003 (spec sections 2.0, 2.2, 2.4, 2.5 and 2.8).

* the voting threshold ``M* = max(1, ceil(log(delta) / log(x)))`` (spec A6),
* CORRUPTED ELIMINATION's local failure probability ``eta_xi`` (Prop. 5.1),
and, in the elimination core, the Successive Elimination boundary ``g(t)`` (Sec. 4.1, spec A4;
:func:`anonbandits.core.radii.se_boundary`) and DP-MASE's widths ``h(e)``, ``c(e)`` and epoch length
``R(e, s)``, which are DP-SE's (:func:`anonbandits.core.radii.dpse_widths`,
:func:`anonbandits.core.schedules.epoch_length`).
"""

from __future__ import annotations

import math

from anonbandits.core.votes import vote_threshold
from anonbandits.errors import ConfigError


def check_probability(name: str, value: float) -> None:
    """:class:`ConfigError` unless ``0 < value < 1``."""
    if not 0 < value < 1:
        raise ConfigError(f"{name} must lie strictly between 0 and 1, got {value}")


def voting_threshold(delta: float, local_failure: float, agents: int, name: str = "beta") -> int:
    """``M* = max(1, ceil(log(delta)/log(local_failure)))``; :class:`ConfigError` if it exceeds ``agents``.

    An arm leaves the global set once it has at least ``M*`` votes, which guarantees
    ``local_failure ** M* <= delta`` (spec A6); ``M* > N`` could never terminate (spec A7).
    """
    check_probability("delta", delta)
    check_probability(name, local_failure)
    m_star = max(1, vote_threshold(delta, local_failure))
    if m_star > agents:
        m_real = math.log(delta) / math.log(local_failure)
        raise ConfigError(f"voting threshold M = {m_star} (log(delta)/log({name}) = {m_real:.3f}) exceeds the "
                          f"{agents} agents: no arm could ever be eliminated; use more agents or a larger delta")
    return m_star


def eta_xi(eta: float, xi: float, arms: int) -> float:
    """Local failure probability ``max(0, 1 - (1-eta)/(1-xi)^(K-1))`` that keeps apparent privacy eta."""
    check_probability("eta", eta)
    if not 0 <= xi < 1:
        raise ConfigError(f"xi must lie in [0, 1), got {xi}")
    value = max(0.0, 1.0 - (1.0 - eta) / (1.0 - xi) ** (arms - 1))
    if not value > 0:
        limit = 1.0 - (1.0 - eta) ** (1.0 / (arms - 1))
        raise ConfigError(f"xi = {xi} leaves no local failure budget (eta_xi = 0): with eta = {eta} and "
                          f"K = {arms} arms xi must be below {limit:.4f}")
    return value
