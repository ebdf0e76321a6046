"""The bandit layer's cap on exposure (``max_exposure``, docs/platform.md): each decomposed batch puts no user in a
released group in more than S blocks beyond its demand, and with a privacy mechanism every user's epsilon is
computed from her own releases (``epsilon_by_user``)."""

import numpy as np
import pytest

import anondecomp
from anonbandits import simulate
from anonbandits.channels import ChannelOptions
from anonbandits.channels.anonymous import decompose_demand
from anonbandits.core.learners import EpochElimination
from anonbandits.errors import AnonBanditsError, ConfigError
from anonbandits.privacy.mechanisms import CentralLaplace, epsilon_by_user, guarantee
from anondecomp.exposure import exposures, user_demand

DELTA = 1e-6
SMALL = {"users": 60, "arms": 3, "C": 3, "cluster": 10, "horizon": 50_000, "best_effort": True}


def _surplus(res: anondecomp.Decomposition) -> np.ndarray:
    return exposures(res) - user_demand(res.graph, res.C)


def test_a_capped_batch_decomposition_meets_the_cap_and_verifies():
    learners = EpochElimination(8, 4, confidence=0.1)  # exploring: every user may play every arm
    demand = learners.demand()
    demand[:4, 1:] = 0  # users 0-3 want arm 0 only, users 4-7 arm 1 only: greedy seats all 8 on each
    demand[4:, [0, 2, 3]] = 0
    plain = decompose_demand(learners, demand, 2, "greedy", np.random.default_rng(0), 1)
    capped = decompose_demand(learners, demand, 2, "greedy", np.random.default_rng(0), 1, max_exposure=0)
    assert _surplus(plain).max() > 0  # greedy seats every user of the arm's support: exposure to spare
    assert _surplus(capped).max() <= 0
    assert capped.total_assignments <= plain.total_assignments  # the shortest candidate that meets the cap
    assert anondecomp.verify(capped.graph, 2, capped).valid


def test_an_unreachable_cap_stops_the_batch_in_one_line():
    learners = EpochElimination(12, 3, confidence=0.1)
    demand = learners.demand()
    demand[::2, 1] = 0  # six users that want no sample of arm 1 cannot all hide on two arms of at most C = 2
    with pytest.raises(AnonBanditsError, match=r"^batch 1: max_exposure 0: no decomposition found") as err:
        decompose_demand(learners, demand, 2, "greedy", np.random.default_rng(0), 1, max_exposure=0)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value", [-1, 1.5, True, "2"])
def test_channel_options_refuse_a_cap_that_is_no_count(value):
    with pytest.raises(ConfigError, match="max_exposure"):
        ChannelOptions(C=3, max_exposure=value)


def test_a_cap_with_absent_users_is_refused():
    with pytest.raises(ConfigError, match="max_exposure must be None with an absence above 0"):
        ChannelOptions(C=3, absence=0.1, max_exposure=2)


def test_anon_etc_refuses_the_cap_it_cannot_apply():
    with pytest.raises(ConfigError, match="algorithm 'anon-etc' has no parameter 'max_exposure'"):
        simulate("anon-etc", seed=0, max_exposure=1)


def test_the_cap_lowers_every_users_epsilon_and_the_largest_is_the_reported_one():
    runs = {
        cap: simulate(
            "anon-batched", seed=1, privacy="central", epsilon=1.0, decomposer="greedy", max_exposure=cap, **SMALL
        )
        for cap in (-1, 0)
    }
    for run in runs.values():
        eps = run.info["epsilon_by_user"]
        assert eps.shape == (SMALL["users"],) and (eps > 0).all()
        assert eps.max() <= run.metrics["privacy_epsilon_per_user"] + 1e-9
    loose, tight = runs[-1].info["epsilon_by_user"], runs[0].info["epsilon_by_user"]
    assert tight.max() < 0.5 * loose.max()  # greedy's spare seats were most of every user's releases


def test_no_cap_and_no_mechanism_leave_the_run_as_it_was():
    plain = simulate("anon-batched", seed=2, **SMALL)
    again = simulate("anon-batched", seed=2, max_exposure=-1, **SMALL)
    assert plain.metrics == again.metrics and "epsilon_by_user" not in plain.info


def test_epsilon_by_user_is_basic_composition_where_it_is_the_smaller_bound():
    exposure = {(1, 10): np.array([0, 1, 4]), (2, 10): np.array([3, 0, 0])}
    eps = epsilon_by_user(CentralLaplace(0.5), exposure, DELTA)
    assert eps.tolist() == [3.0, 0.5, 2.0]  # sum over releases of c * eps
    assert guarantee(CentralLaplace(0.5), exposure, DELTA)[1] == eps.max()


def test_epsilon_by_user_converts_many_small_releases_by_rdp():
    exposure = {(1, 3): np.array([2000, 10])}  # user 0: rho = 2000 * 0.1^2 / 2 = 10
    eps = epsilon_by_user(CentralLaplace(0.1), exposure, DELTA)
    alpha = np.linspace(1.001, 20, 200_000)
    by_hand = np.min(10 * alpha + np.log(1 / (alpha * DELTA)) / (alpha - 1) + np.log(1 - 1 / alpha))
    assert by_hand <= eps[0] <= by_hand + 0.02 < 200  # far below basic composition's 2000 * 0.1
    assert eps[1] == pytest.approx(1.0)  # ten releases: basic composition is the smaller
