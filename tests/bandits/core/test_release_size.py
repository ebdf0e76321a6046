"""A k-anonymous release never combines fewer than C >= 1 contributors: the vote board's functions and the
anonymous channel's auditor refuse a C that would let single agents' or users' values out under that label."""

import numpy as np
import pytest

from anonbandits.channels.anonymous import AnonymityAuditor
from anonbandits.core.votes import anonymous_threshold, board_releases, first_release
from anonbandits.errors import ConfigError

BAD_C = [0, -1, True, False, np.bool_(True), 2.5, float("nan"), "2", None]
CALLS = {
    "anonymous_threshold": lambda C: anonymous_threshold(3, C),
    "first_release": lambda C: first_release(np.zeros((2, 2), np.int64), C),
    "board_releases": lambda C: board_releases(np.array([0, 1]), np.array([0, 0]), np.array([0, 1]), C),
    "AnonymityAuditor": lambda C: AnonymityAuditor(C),
}


@pytest.mark.parametrize("C", BAD_C, ids=repr)
@pytest.mark.parametrize("name", CALLS)
def test_a_release_size_below_one_or_not_an_integer_is_refused(name, C):
    with pytest.raises(ConfigError, match=r"^C must be") as exc:
        CALLS[name](C)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("C", [1, 2, np.int64(3)], ids=repr)
def test_integer_release_sizes_are_taken(C):
    assert anonymous_threshold(3, C) == int(C) * -(-3 // int(C))
    assert board_releases(np.array([0, 1, 2]), np.zeros(3, np.int64), np.arange(3), C).group.tolist() == (
        [0, 0, 0] if C == 3 else [0, 1, 2] if C == 1 else [0, 0, -1]
    )
    assert AnonymityAuditor(C).C == int(C)
