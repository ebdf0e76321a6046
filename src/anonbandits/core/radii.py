"""Every confidence radius of the bandit layer, each named after the paper equation it implements (no other
module computes one):

* BaSE (Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019) as run per user by
  Algorithm 1 of "Anonymous Bandits for Multi-User Systems" (NeurIPS 2022, paper 000, Sections 2.2 and 3.3):
  :func:`base_log_radius`, :func:`base_gao_radius`;
* DP-SE (Sajed and Sheffet, ICML 2019), the baseline of "Near-Optimal Algorithms for Private Online Learning
  in a Stochastic Environment" (Hu, Huang, Mehta; paper 001, Section 6) and of paper 004, run per agent by
  DP-MASE of paper 003: :func:`dpse_widths`, :func:`dpse_threshold`;
* the UCB indices of paper 001: Anytime-Lazy-UCB's eq. (4) (:func:`lazy_ucb_index`, :func:`lazy_ucb_widths`)
  and Hybrid-UCB's (Algorithm 4, :func:`hybrid_ucb_widths`);
* Successive Elimination's boundary of paper 003 (Rio, Barlier, Colin, Soare, ICML 2023): :func:`se_boundary`;
* UGapEc's exploration term (Gabillon, Ghavamzadeh, Lazaric, NeurIPS 2012), a subroutine of paper 002
  (Féraud, Alami, Laroche, ICML 2019): :func:`ugapec_log_term`;
* paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits", Chowdhury and Zhou, ICLR 2023):
  :func:`lemma2_radius` (Lemma 2) and :func:`lemma5_radius` (the local model, derived constant of Lemma 5).
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np


def base_log_radius(gamma: float, sigma2: float, horizon: int, n_arms: int, tau: np.ndarray) -> np.ndarray:
    """BaSE radius ``r = sqrt(gamma sigma2 log(T K) / tau)`` (paper 000 Sec. 2.2; Gao et al.'s analysis).

    ``tau`` holds each learner's fewest samples on an active arm; ``tau = 0`` gives an infinite radius. With
    this form a fixed optimal arm survives one comparison with probability at least ``1 - (TK)^(-gamma/4)``
    (sub-Gaussian tail of a difference of two means), hence BaSE's default gamma = 4.
    """
    with np.errstate(divide="ignore"):
        return np.sqrt(gamma * sigma2 * np.log(horizon * n_arms) / np.asarray(tau, dtype=float))


def base_gao_radius(gamma: float, sigma2: float, horizon: int, n_arms: int, t_m: float) -> float:
    """BaSE radius ``r = sqrt(gamma sigma2 K log(T K / t_m) / t_m)`` after grid point ``t_m`` (> 0).

    The shape used by Gao et al.'s public code, ``gamma_code * sqrt(K log(TK/t_m) / t_m)``, i.e.
    ``gamma = gamma_code^2`` for ``sigma2 = 1`` (BaSE as paper 000 uses it: Gao, Han, Ren, Zhou, "Batched
    Multi-armed Bandits Problem", NeurIPS 2019).
    """
    return float(np.sqrt(gamma * sigma2 * n_arms * np.log(horizon * n_arms / t_m) / t_m))


@overload
def dpse_widths(
    active: np.ndarray,
    epoch: np.ndarray | int,
    length: np.ndarray | int,
    beta: float,
    epsilon: float | np.ndarray = ...,
) -> tuple[np.ndarray, np.ndarray]: ...


@overload
def dpse_widths(active: int, epoch: int, length: int, beta: float, epsilon: float = ...) -> tuple[float, float]: ...


@overload
def dpse_widths(
    active: np.ndarray | int,
    epoch: np.ndarray | int,
    length: np.ndarray | int,
    beta: float,
    epsilon: float | np.ndarray = ...,
) -> tuple[np.ndarray | float, np.ndarray | float]: ...


def dpse_widths(
    active: np.ndarray | int,
    epoch: np.ndarray | int,
    length: np.ndarray | int,
    beta: float,
    epsilon: float | np.ndarray = math.inf,
) -> tuple[np.ndarray | float, np.ndarray | float]:
    """DP-SE's widths ``(h_e, c_e)`` (Sajed and Sheffet, Algorithm 1; paper 001 Sec. 6; paper 003 Alg. 4).

    ``h_e = sqrt(ln(8 s e^2/beta) / (2 R_e))`` and ``c_e = ln(4 s e^2/beta) / (eps R_e)`` with ``s`` active
    arms at the start of epoch ``e`` of ``R_e = length`` pulls per arm; ``c_e = 0`` when ``eps = inf`` (SE).
    Vectorised over every argument. The denominator ``2 R_e`` of ``h_e`` is lost in paper 003's Algorithm 4; it
    is the one that keeps ``h_e <= Delta_e / 8`` for the union bound.
    """
    # One formula for scalars and arrays; DP-SE calls it once per epoch with Python numbers, for which the
    # math module is several times faster than numpy's scalar path (``8.0 * s`` makes floats either way)
    s, e, r = active, epoch, length
    arrays = any(isinstance(x, np.ndarray) for x in (s, e, r, epsilon))
    log, sqrt = (np.log, np.sqrt) if arrays else (math.log, math.sqrt)
    h = sqrt(log(8.0 * s * e * e / beta) / (2.0 * r))
    c = log(4.0 * s * e * e / beta) / (epsilon * r)
    return h, c


def dpse_threshold(active: int, epoch: int, length: int, beta: float, epsilon: float = math.inf) -> float:
    """DP-SE's elimination width ``2 (h_e + c_e)`` (:func:`dpse_widths`): an arm whose noisy mean is further
    than this below the best one is eliminated (papers 001, 003 and 004)."""
    h, c = dpse_widths(active, epoch, length, beta, epsilon)
    return float(2.0 * (h + c))


def lazy_ucb_index(mean: np.ndarray, size: np.ndarray, epsilon: float, t: int) -> np.ndarray:
    """Anytime-Lazy-UCB's index, eq. (4) of paper 001 ("Near-Optimal Algorithms for Private Online Learning in
    a Stochastic Environment", Hu, Huang, Mehta): ``mean + sqrt(3 ln t / size) + 3 ln t / (epsilon size)`` at
    round ``t``, for arms whose current arrays hold ``size`` observations; in ``s = sqrt(ln t)`` it is
    ``mean + a s + b s^2`` with ``(a, b)`` = :func:`lazy_ucb_widths`."""
    log_t = math.log(t)
    return mean + np.sqrt(3 * log_t / size) + 3 * log_t / (epsilon * size)


def lazy_ucb_widths(size: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b) = (sqrt(3 / size), 3 / (epsilon size))``: eq. (4) as ``mean + a sqrt(ln t) + b ln t``."""
    return np.sqrt(3 / size), 3 / (epsilon * size)


#: ``6 sqrt(8)``: Hybrid-UCB's privacy width is this over epsilon.
HYBRID_PRIVACY_WIDTH = 6 * math.sqrt(8)


@overload
def hybrid_ucb_widths(
    pulls: np.ndarray, floor_log2_next: np.ndarray | int, privacy_width: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]: ...


@overload
def hybrid_ucb_widths(pulls: int, floor_log2_next: int, privacy_width: float) -> tuple[float, float]: ...


def hybrid_ucb_widths(
    pulls: np.ndarray | int, floor_log2_next: np.ndarray | int, privacy_width: np.ndarray | float
) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Hybrid-UCB's index (paper 001, Algorithm 4; logs base 2, as its proofs in Appendix E use them) after ``O =
    pulls`` pulls, ``mean + sqrt(3 log2 t / O) + 6 sqrt(8) log2(t) floor(log2(O + 1)) / (eps O)``, as ``mean + a
    sqrt(log2 t) + b log2 t``: returns ``(a, b)`` given ``floor(log2(O + 1))`` and ``privacy_width =
    HYBRID_PRIVACY_WIDTH / eps``. Numpy ufuncs only, so that :mod:`anonbandits.core.compiled` compiles it for the
    lock-step kernel."""
    return np.sqrt(3.0 / pulls), privacy_width * floor_log2_next / pulls


def ugapec_log_term(t: np.ndarray | float, arms: int, conf: float) -> np.ndarray:
    """UGapEc's ``beta_k(t)^2 T_k(t) = log(4 K t^3 / conf) / 2`` (b = 1, c = 1/2 for rewards in [0, 1]: the
    constants of Gabillon, Ghavamzadeh, Lazaric, NeurIPS 2012, whose UGapEc paper 002 runs as a subroutine): an
    arm pulled ``T_k`` times has radius ``sqrt(ugapec_log_term / T_k)``. Numpy ufuncs only (compiled as well)."""
    return 0.5 * np.log(4 * arms * t**3 / conf)


def se_boundary(t: np.ndarray | int, arms: int, conf: float, c: float = 1.0, denominator: int = 1) -> np.ndarray:
    """Successive Elimination threshold in sum space after ``t`` samples per arm (paper 003, "Multi-Agent Best
    Arm Identification with Private Communications", ICML 2023, eq. (1) of Sec. 4.1 and Alg. 4b).

    Arm k is eliminated when ``max_l S_l - S_k >= g(t)``, with ``g(t) = t * 2 * sqrt(log(c K t^2 / conf) / (denominator
    * t))`` (the constant and the denominator are lost in the width printed in Alg. 4b: ``c = 1`` and ``denominator =
    1`` match Sec. 4.1's ``alpha(t) = sqrt(log(c K t^2 / beta) / t)``, 2 reads it as ``2t``; a negative log is clipped
    to 0). Written with numpy ufuncs only, so that :data:`anonbandits.core.compiled.se_boundary` compiles this very
    function for the numba kernels.
    """
    x = t * 1.0
    return 2.0 * np.sqrt(x * np.maximum(np.log(c * arms * x * x / conf), 0.0) / denominator)


def lemma2_radius(length: int, active: int, batch: int, p: float, sigma: float, h: float) -> float:
    """``beta(b)`` of Lemma 2 of paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023;
    the exact form of its Lemma 1) for batch length ``l(b)``.

    ``beta(b) = sqrt(ln(4 s b^2/p) / (2 l)) + sigma sqrt(ln(2 s b^2/p)) / l + h ln(2 s b^2/p) / l``, where
    ``(sigma, h)`` are the protocol's noise-tail constants of Assumption 1 and ``s`` the active arms.
    """
    log4 = math.log(4 * active * batch * batch / p)
    log2 = math.log(2 * active * batch * batch / p)
    return math.sqrt(log4 / (2 * length)) + sigma * math.sqrt(log2) / length + h * log2 / length


def lemma5_radius(length: int, active: int, batch: int, p: float, epsilon: float) -> float:
    """``beta(b)`` of LDP-SE (paper 004, Theorem 6, Appendix H.2): Lemma 2's statistical term plus the local
    noise's tail.

    The total of ``l`` users' ``Lap_Z(g/eps)`` noises is bounded by Lemma 5 with its constant made explicit
    (``Lap_Z(B)``, ``B >= 1``, is ``(4.52 B^2, 2B)``-sub-exponential):
    ``(sqrt 2/eps) sqrt(L2)/l + (1/eps) max(3.01 sqrt(L2/l), 4 L2/l)`` with ``L2 = ln(2 s b^2/p)``.
    """
    log4 = math.log(4 * active * batch * batch / p)
    log2 = math.log(2 * active * batch * batch / p)
    return (
        math.sqrt(log4 / (2 * length))
        + (math.sqrt(2.0) / epsilon) * math.sqrt(log2) / length
        + (1.0 / epsilon) * max(3.01 * math.sqrt(log2 / length), 4.0 * log2 / length)
    )


# Scalar pieces of the compiled kernels' decisions (compiled by :mod:`anonbandits.core.compiled`; plain
# arithmetic, so they take numpy arrays as well).


def se_eliminates(gap: np.ndarray | float, boundary: np.ndarray | float, slack: float = 0.0) -> np.ndarray | bool:
    """Successive Elimination's test: an arm ``gap`` below the leader is eliminated when ``gap + slack >=
    boundary`` (paper 003, eq. (1) of Sec. 4.1, in sum space with ``boundary = se_boundary``; paper 002's SE
    and SER3 with the mean-space radius ``2 r(tau)`` and ``slack = epsilon``: Even-Dar, Mannor, Mansour, JMLR 2006,
    and Allesiardo, Féraud, Maillard, 2017, as paper 002 runs them). The callers keep
    their rule for the leader itself (never eliminated)."""
    return gap + slack >= boundary


def ugapec_radius(log_term: np.ndarray | float, pulls: np.ndarray | int) -> np.ndarray | float:
    """UGapEc's ``beta_k(t) = sqrt(log_term / T_k)`` for an arm pulled ``T_k = pulls`` times, with ``log_term``
    = :func:`ugapec_log_term` (Gabillon, Ghavamzadeh, Lazaric, NeurIPS 2012; a subroutine of paper 002)."""
    return np.sqrt(log_term / pulls)


def ugapec_upper(mean: np.ndarray | float, radius: np.ndarray | float) -> np.ndarray | float:
    """UGapEc's upper bound ``U_k = mean_k + beta_k``."""
    return mean + radius


def ugapec_gap_index(
    other_upper: np.ndarray | float, mean: np.ndarray | float, radius: np.ndarray | float
) -> np.ndarray | float:
    """UGapEc's gap index ``B_k = max_{l != k} U_l - L_k`` with ``L_k = mean_k - beta_k``, given the largest
    other upper bound: the arm with the smallest ``B`` is UGapEc's candidate ``J``, and the run stops once
    ``B_J < epsilon``."""
    return other_upper - (mean - radius)


def widths_index(
    mean: np.ndarray | float, width_a: np.ndarray | float, width_b: np.ndarray | float, root_log: float, log: float
) -> np.ndarray | float:
    """A UCB index written with two widths, ``mean + a sqrt(L) + b L`` given ``root_log = sqrt(L)`` and ``L``:
    Hybrid-UCB's (``L = log2 t``, widths :func:`hybrid_ucb_widths`) and Anytime-Lazy-UCB's (``L = ln t``,
    :func:`lazy_ucb_widths`) of paper 001. Summed in the compiled kernel's order, widths first."""
    return width_a * root_log + width_b * log + mean
