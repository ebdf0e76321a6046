"""Privacy mechanisms: exact noise samplers, randomized rounding, secure aggregation, the analyzer with
underflow correction, tail bounds and privacy accounting (spec ``distributed-dp.md``, Secs. 1-2)."""

from anonbandits.privacy.accounting import (
    DEFAULT_ORDERS,
    advanced_composition_epsilon,
    discrete_gaussian_sum_cdp,
    discrete_gaussian_sum_xi,
    dist_rdp_se_rdp,
    pure_dp_to_rdp,
    rdp_to_dp,
    returning_users_dp,
    skellam_rdp,
    zcdp_to_dp,
)
from anonbandits.privacy.analyzer import analyze, modulus
from anonbandits.privacy.encoding import randomized_round
from anonbandits.privacy.samplers import (
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_gaussian_sum,
    discrete_laplace,
    laplace,
    polya,
    skellam,
)
from anonbandits.privacy.secagg import complete_pairs, masked_messages, ring_pairs, secure_sum, split_and_mix
from anonbandits.privacy.tails import (
    discrete_laplace_radius,
    discrete_laplace_sum_radius,
    discrete_laplace_tail,
    skellam_radius,
    subgaussian_radius,
)

__all__ = [
    "DEFAULT_ORDERS", "advanced_composition_epsilon", "analyze", "complete_pairs", "discrete_gaussian",
    "discrete_gaussian_pmf", "discrete_gaussian_sum", "discrete_gaussian_sum_cdp", "discrete_gaussian_sum_xi",
    "discrete_laplace",
    "discrete_laplace_radius", "discrete_laplace_sum_radius", "discrete_laplace_tail", "dist_rdp_se_rdp",
    "laplace", "masked_messages", "modulus", "polya", "pure_dp_to_rdp", "randomized_round", "rdp_to_dp",
    "returning_users_dp", "ring_pairs", "secure_sum", "skellam", "skellam_radius", "skellam_rdp",
    "split_and_mix", "subgaussian_radius", "zcdp_to_dp",
]
