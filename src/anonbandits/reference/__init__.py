"""Plain reference loops written from the papers: one round, one pull or one user per Python iteration.

They are written for clarity, not speed, and serve twice: as the test oracles the fast simulators are
compared with (in law, over independent seeds) and as the baselines the speed benchmarks time. One module per
family:

* :mod:`anonbandits.reference.dp`: DP-SE, Anytime-Lazy-UCB and Hybrid-UCB (paper 001 and its DP-SE baseline);
* :mod:`anonbandits.reference.distributed_dp`: Dist-DP-SE (paper 004);
* :mod:`anonbandits.reference.decentralized`: Decentralized Elimination and 1-PRIVACY (paper 002);
* :mod:`anonbandits.reference.mase`: MASE, DP-MASE, CORRUPTED ELIMINATION and INDEPENDENT (paper 003);
* :mod:`anonbandits.reference.anonymous_bai`: best-arm identification for every user over the anonymous channel
  (paper 000's sub-algorithm and auditor, paper 002's subroutines);
* :mod:`anonbandits.reference.anonymous_regret`: SE and DP-SE with doubling epochs for every user over the
  anonymous channel, with the regret of every round (Sajed and Sheffet's DP-SE, paper 000's channel);
* :mod:`anonbandits.reference.anonymous_algorithms`: Algorithm 1 (per-user BaSE of Gao et al. over anonymous
  decompositions) and Algorithm 2 (anonymous explore-then-commit) of paper 000.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from anonbandits.validation import trusted

F = TypeVar("F", bound=Callable[..., Any])


def oracle(loop: F) -> F:
    """``loop`` run trusted (:func:`anonbandits.validation.trusted`): the library functions a reference loop calls
    once per round or pull (a reward draw, a threshold) are not checked again on every iteration, so that the
    loop's time is the loop's and not the checks' (its own arguments are the tests' and benchmarks')."""

    @functools.wraps(loop)
    def run(*args: Any, **kwargs: Any) -> Any:
        with trusted():
            return loop(*args, **kwargs)

    return run  # type: ignore[return-value]
