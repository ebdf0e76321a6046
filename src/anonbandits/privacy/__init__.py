"""Privacy of the bandit layer, in one package below the families (docs/architecture.md).

Paper 004 ("Distributed Differential Privacy in Multi-Armed Bandits", Chowdhury and Zhou, ICLR 2023;
docs/distributed-dp.md) gives most of it; one module per kind of object:

* :mod:`~anonbandits.privacy.samplers`: exact noise samplers (:func:`laplace`, :func:`discrete_laplace`,
  :func:`polya`, :func:`skellam`, :func:`discrete_gaussian`, :func:`discrete_gaussian_sum`), exact in law up to
  floating-point arithmetic, with an explicit ``numpy.random.Generator`` and a numpy ``size`` (``None`` for a
  scalar), ``int64`` for discrete laws;
* :mod:`~anonbandits.privacy.tails`: tail bounds; each ``*_radius`` returns a ``v`` with ``P[|X| > v] <= p``
  (the protocols set ``tau = ceil(radius)``);
* :mod:`~anonbandits.privacy.rounding`: randomized rounding of the rewards (:func:`randomized_round`);
* :mod:`~anonbandits.privacy.aggregation`: secure aggregation, :func:`secure_sum` being SecAgg's ideal
  functionality (the server learns ``(sum_i y_i) mod m`` only), :func:`masked_messages` (pairwise masking,
  Bonawitz et al. 2017) and :func:`split_and_mix` (the shuffle stand-in) simulating it with no real cryptography
  and the identical sum, and the analyzer with underflow correction (:func:`analyze`);
* :mod:`~anonbandits.privacy.accounting`: privacy accounting; an RDP curve is ``eps(alpha)`` for orders
  ``alpha > 1``; ``rho``-zCDP is ``eps(alpha) = rho alpha``, so the paper's "(1/2) eps^2-CDP" is
  ``rho = eps^2/2``;
* :mod:`~anonbandits.privacy.protocols`: paper 004's protocols P = (R, S, A) (``PROTOCOLS``);
* :mod:`~anonbandits.privacy.mechanisms`: the mechanisms on what any channel releases (``CentralLaplace``,
  ``Distributed``, ``laplace_noise``) and a run's accounting (``guarantee``).

The names of the first five are found here too (``from anonbandits.privacy import polya``); the protocols and
the mechanisms are imported from their modules.
"""

from anonbandits.privacy.accounting import (
    DEFAULT_ORDERS,
    TrivialGuaranteeWarning,
    advanced_composition_epsilon,
    discrete_gaussian_sum_cdp,
    discrete_gaussian_sum_xi,
    dist_rdp_se_rdp,
    nonnegative_epsilon,
    pure_dp_to_rdp,
    rdp_to_dp,
    returning_users_dp,
    skellam_rdp,
    zcdp_to_dp,
)
from anonbandits.privacy.aggregation import (
    analyze,
    complete_pairs,
    masked_messages,
    modulus,
    ring_pairs,
    secure_sum,
    split_and_mix,
)
from anonbandits.privacy.rounding import randomized_round
from anonbandits.privacy.samplers import (
    Size,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_gaussian_sum,
    discrete_laplace,
    laplace,
    polya,
    skellam,
)
from anonbandits.privacy.tails import (
    discrete_laplace_radius,
    discrete_laplace_sum_radius,
    discrete_laplace_tail,
    skellam_radius,
    subgaussian_radius,
)

__all__ = [
    "DEFAULT_ORDERS",
    "Size",
    "TrivialGuaranteeWarning",
    "advanced_composition_epsilon",
    "analyze",
    "complete_pairs",
    "discrete_gaussian",
    "discrete_gaussian_pmf",
    "discrete_gaussian_sum",
    "discrete_gaussian_sum_cdp",
    "discrete_gaussian_sum_xi",
    "discrete_laplace",
    "discrete_laplace_radius",
    "discrete_laplace_sum_radius",
    "discrete_laplace_tail",
    "dist_rdp_se_rdp",
    "laplace",
    "masked_messages",
    "modulus",
    "nonnegative_epsilon",
    "polya",
    "pure_dp_to_rdp",
    "randomized_round",
    "rdp_to_dp",
    "returning_users_dp",
    "ring_pairs",
    "secure_sum",
    "skellam",
    "skellam_radius",
    "skellam_rdp",
    "split_and_mix",
    "subgaussian_radius",
    "zcdp_to_dp",
]
