"""Sizes checked before allocation: the bandit layer's documented limits on the numbers a caller gives, and the
one check that refuses a number past its limit in one line unless the caller confirms it (issue 31, item 5).

Every function whose work or memory grows with a number it is given checks that number here first
(:func:`check_size`), so a run that would need tens of gigabytes is refused before anything is allocated, naming
the parameter, its value and the limit. ``allow_large=True`` (``--allow-large`` on ``anonbandits simulate``)
confirms a large run: a library call passes it directly; the command line sets it for its runs with
:func:`allowing_large` (a context, so it reaches every check of the run in the worker process that runs it).

The limits (each far above what the reproduction runs and benchmarks use, docs/results):

* :data:`MAX_ELICITATION_ENTRIES`: (2C+2) x N, the user-rounds of one run of the feedback-elicitation
  sub-algorithm, which the anonymous channel holds at once (labels, rewards and bins of one assignment);
* :data:`MAX_INSTANCE_CELLS`: users x arms of an instance (its means, gaps and the learners' arrays), a means
  file's ``count`` column expanded included;
* :data:`MAX_REWARD_DRAWS`: the rewards one reward sum draws one by one (Gaussian and Beta rewards: a sum of
  counts x arms samples);
* the horizon: :data:`anonbandits.channels.feedback.MAX_HORIZON` (10^9 rounds; a hard bound of the registry's
  ``horizon`` rule, not lifted by ``allow_large``);
* :data:`MAX_GRID_POINTS`: the points of a grid the core builds (a hard bound too).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from anonbandits.errors import ConfigError
from anonbandits.validation import BOOL, COUNT, checks, int_at_least

__all__ = [
    "MAX_ELICITATION_ENTRIES",
    "MAX_GRID_POINTS",
    "MAX_INSTANCE_CELLS",
    "MAX_REWARD_DRAWS",
    "allowing_large",
    "check_size",
]

#: The most user-rounds, (2C+2) x N, of one run of the feedback-elicitation sub-algorithm (Esfandiari et al.,
#: NeurIPS 2022, Section 3.1): the anonymous channel holds the group labels, rewards and bins of every user in
#: every round of one assignment at once (about 40 bytes each, so about 2 GB here). The largest of docs/results
#: has about 10^6 (the speed benchmarks' N = 60,000 users at C = 2: 3.6 x 10^5).
MAX_ELICITATION_ENTRIES = 5 * 10**7

#: The most users x arms of one instance (its means and gaps, the learners' statistics: several float arrays of
#: this size, 8 bytes a cell, so about 1 GB each here); a means file's ``count`` column is expanded to users, so a
#: type of count 10^12 is refused before the file is expanded. The largest of docs/results has 3 x 10^6.
MAX_INSTANCE_CELLS = 10**8

#: The most rewards one call of :func:`anonbandits.envs.rewards.sum_rewards` draws one by one (the Gaussian and Beta
#: models: their sums have no closed form, so every reward is drawn and held, with its index, about 24 bytes each,
#: so about 2.4 GB here; Bernoulli and unclipped Gaussian sums are one draw per entry whatever the count).
MAX_REWARD_DRAWS = 10**8

#: The most points of a grid the core builds: the batches M of :func:`~anonbandits.core.schedules.static_grid` and
#: the checkpoints of :func:`~anonbandits.core.schedules.checkpoint_grid` (int64 arrays, 80 MB here). The
#: reproductions use a few hundred at most. A hard bound: ``allow_large`` does not lift it.
MAX_GRID_POINTS = 10**7

#: The most rounds of a table held per round: Hybrid-UCB's floor(log2) table and its binary mechanism's levels per
#: count (Tao et al.; about 40 bytes a round while they are built, so about 4 GB here; 10^9 rounds would take
#: 40 GB). The reproductions use at most 10^7.
MAX_TABLE_ROUNDS = 10**8

_ALLOW_LARGE: contextvars.ContextVar[bool] = contextvars.ContextVar("allow_large", default=False)


@contextlib.contextmanager
def allowing_large(allow: bool = True) -> Iterator[None]:
    """Within the block, every :func:`check_size` lets a number past its limit through when ``allow`` is true
    (the command line's ``--allow-large``, for each run).

    Parameters
    ----------
    allow : bool, optional
        Confirm large runs (default True); False leaves the limits on.

    Yields
    ------
    None

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1, the
    feedback elicitation whose size :data:`MAX_ELICITATION_ENTRIES` bounds).

    Examples
    --------
    >>> with allowing_large():
    ...     check_size("users", 10**12, MAX_INSTANCE_CELLS, "MAX_INSTANCE_CELLS", "users x arms")
    1000000000000
    """
    token = _ALLOW_LARGE.set(bool(allow))
    try:
        yield
    finally:
        _ALLOW_LARGE.reset(token)


@checks(value=int_at_least(0), limit=COUNT, allow_large=BOOL)
def check_size(name: str, value: int, limit: int, limit_name: str, what: str, *, allow_large: bool = False) -> int:
    """``value``, checked against its documented ``limit`` before anything of that size is allocated.

    Parameters
    ----------
    name : str
        The parameter (or the product of parameters) the message names.
    value : int
        Its value (the size the work would have), an integer >= 0; above 2^62 it is refused even when confirmed
        (nothing of that size can be allocated).
    limit : int
        The documented limit, an integer from 1 to 2^62.
    limit_name : str
        The limit's constant, named by the message.
    what : str
        What the limit bounds, in words.
    allow_large : bool, optional
        Confirm a value past the limit (so does an enclosing :func:`allowing_large`). Default False.

    Returns
    -------
    int
        ``value``.

    Raises
    ------
    ConfigError
        If ``value`` passes ``limit`` and nothing confirmed it: one line naming the parameter, the value and the
        limit; if ``value`` is above 2^62, confirmed or not; or if ``value`` or ``limit`` is out of its range
        above, or ``allow_large`` is not a bool.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1, the
    feedback elicitation whose size :data:`MAX_ELICITATION_ENTRIES` bounds).

    Examples
    --------
    >>> check_size("(2C+2) x users", 40, MAX_ELICITATION_ENTRIES, "MAX_ELICITATION_ENTRIES", "user-rounds")
    40
    >>> check_size("(2C+2) x users", 8 * 10**8, MAX_ELICITATION_ENTRIES, "MAX_ELICITATION_ENTRIES",
    ...            "user-rounds of one elicitation")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: (2C+2) x users = 800,000,000 is above MAX_ELICITATION_ENTRIES = 50,000,000
    (user-rounds of one elicitation); pass allow_large=True (--allow-large) to run it anyway
    """
    if value > 2**62:
        raise ConfigError(
            f"{name} = {int(value):,} is above 2^62: no value this large can be allocated, even with allow_large"
        )
    if value > limit and not (allow_large or _ALLOW_LARGE.get()):
        raise ConfigError(
            f"{name} = {int(value):,} is above {limit_name} = {limit:,} ({what}); pass allow_large=True "
            "(--allow-large) to run it anyway"
        )
    return value
