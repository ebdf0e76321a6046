"""Deprecated module: what it held moved to modules named after it. The release ledger is
:class:`anonbandits.dp.ledger.Ledger`; the input checks and a run's start and finish are in
:mod:`anonbandits.dp.runs`; ``RegretTrace`` is :class:`anonbandits.core.regret.RegretTrace` and ``RewardSum``
:data:`anonbandits.channels.direct.RewardSum`. ``BanditRun``, the result type the algorithms returned before they
returned :class:`~anonbandits.results.Result`, is still found here for one release. Each name warns
(``DeprecationWarning``) when taken from this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

import numpy as np

from anonbandits._deprecated import moved
from anonbandits._docstrings import filled_dataclass
from anonbandits.channels import direct as _direct
from anonbandits.core import regret as _regret
from anonbandits.dp import ledger as _ledger
from anonbandits.dp import runs as _runs


@filled_dataclass(frozen=True)
class _BanditRun:
    """One simulated run of a single-learner algorithm of :mod:`anonbandits.dp`: deprecated, the algorithms return
    :class:`~anonbandits.results.Result` (kept for one release for code that names the type).

    Parameters
    ----------
    regret : float
        Cumulative pseudo-regret after the last round (the initialization rounds included).
    checkpoints : numpy.ndarray
        Rounds of the regret curve (int).
    curve : numpy.ndarray
        The cumulative pseudo-regret after each checkpoint.
    pulls : numpy.ndarray
        (K,) int, number of rounds each arm was played.
    best_arm : int
        The index of the truly best arm; the property ``best_arm_found`` says whether it was the most-played one.
    releases : int
        Number of privatized releases (see each algorithm for what one release is).
    ledger : Ledger or None, optional
        Blocks of rewards and the releases they fed (``None`` where the algorithm keeps none).
    extra : Mapping, optional
        Algorithm-specific numbers (epochs, surviving arms, ...), reported as metrics by ``metrics()``, the
        results-table columns of the run.

    {{refs_paper001}}

    Examples
    --------
    >>> import numpy as np
    >>> run = _BanditRun(regret=1.5, checkpoints=np.array([10]), curve=np.array([1.5]), pulls=np.array([8, 2]),
    ...                 best_arm=0, releases=2, extra={"epochs": 1})
    >>> run.best_arm_found, run.metrics()
    (True, {'regret': 1.5, 'best_arm_found': 1, 'releases': 2, 'epochs': 1})
    """

    regret: float
    checkpoints: np.ndarray
    curve: np.ndarray
    pulls: np.ndarray
    best_arm: int
    releases: int
    ledger: _ledger.Ledger | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def best_arm_found(self) -> bool:
        return int(np.argmax(self.pulls)) == self.best_arm

    def metrics(self) -> dict[str, Any]:
        """The results-table columns of this run.

        Returns
        -------
        dict of str to Any
            ``regret``, ``best_arm_found`` (0 or 1), ``releases``, then the entries of ``extra``.

        Examples
        --------
        >>> import numpy as np
        >>> run = _BanditRun(regret=2.0, checkpoints=np.array([5]), curve=np.array([2.0]), pulls=np.array([1, 4]),
        ...                 best_arm=0, releases=3)
        >>> run.metrics()
        {'regret': 2.0, 'best_arm_found': 0, 'releases': 3}
        """
        return {
            "regret": self.regret,
            "best_arm_found": int(self.best_arm_found),
            "releases": self.releases,
            **self.extra,
        }


__getattr__ = moved(
    __name__,
    {
        "Ledger": _ledger,
        "RegretTrace": _regret,
        "RewardSum": _direct,
        **dict.fromkeys(("Means", "check_epsilon", "check_setup", "finish", "instance_of", "start"), _runs),
    },
    {"BanditRun": (_BanditRun, "anonbandits.Result (what the algorithms return now)")},
)
