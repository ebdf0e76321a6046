"""What the single-learner private algorithms, their ledger and Algorithm 1 of paper 004 refuse, in one line naming
the argument (issue 31): horizons past MAX_HORIZON, malformed ledger entries, a batch's epsilons and the pairing of
the distributed simulation with its secure computation."""

from __future__ import annotations

import numpy as np
import pytest

from anonbandits import simulate
from anonbandits.channels.feedback import MAX_HORIZON
from anonbandits.dp import Ledger, anytime_lazy_ucb, dp_se, ftnl, hybrid_ucb, hybrid_ucb_batch, se
from anonbandits.dp.distributed import run_elimination
from anonbandits.errors import ConfigError
from anonbandits.privacy.protocols import PROTOCOLS


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.mark.parametrize("horizon", [MAX_HORIZON + 1, 2**63, 10**30])
def test_every_algorithm_refuses_a_horizon_past_max_horizon_at_once(horizon):
    for call in (
        lambda: se("0.9,0.1", horizon, rng()),
        lambda: dp_se("0.9,0.1", 1.0, horizon, rng()),
        lambda: ftnl("0.9,0.1", 1.0, horizon, rng()),
        lambda: hybrid_ucb("0.9,0.1", 1.0, horizon, rng()),
        lambda: anytime_lazy_ucb("0.9,0.1", 1.0, horizon, rng()),
        lambda: hybrid_ucb_batch(np.array([0.9, 0.1]), [1.0], horizon, rng()),
    ):
        with pytest.raises(ConfigError, match="^horizon must be"):
            call()


@pytest.mark.parametrize("name", ["dp-se", "hybrid-ucb", "dist-dp-se"])
def test_the_registry_refuses_it_with_the_other_families_message(name):
    with pytest.raises(ConfigError, match=r"horizon must be between 1 and 1e\+09 rounds"):
        simulate(name, seed=0, horizon=10**12)


def test_hybrid_ucb_batch_names_its_epsilons_and_means():
    with pytest.raises(ConfigError, match="^epsilons must be a privacy parameter or a non-empty 1-D array"):
        hybrid_ucb_batch(np.array([0.9, 0.1]), [], 100, rng())
    with pytest.raises(ConfigError, match="^epsilons must be"):
        hybrid_ucb_batch(np.array([0.9, 0.1]), [1.0, 0.0], 100, rng())
    with pytest.raises(ConfigError, match="^means must be a non-empty"):
        hybrid_ucb_batch(np.array([0.9, np.inf]), [1.0], 100, rng())
    assert hybrid_ucb_batch(np.array([0.9, 0.1]), 0.5, 100, rng()).regret.shape == (1,)  # one epsilon, one run


def test_a_refused_release_records_nothing():
    ledger = Ledger()
    first, second = ledger.block(0, 2, 1.0), ledger.block(1, 2, 1.0)
    with pytest.raises(ConfigError, match=r"^blocks must be distinct ids of the 2 recorded blocks, got \[0, 0\]"):
        ledger.release([first, first], [0], [1.0], [0.0], 1.0, 2)
    with pytest.raises(ConfigError, match="^arms, true_sums and noises must have one length"):
        ledger.release([first], [0, 1], [1.0], [0.0], 1.0, 2)
    ledger.release([second], [1], [1.0], [0.0], 1.0, 2)
    with pytest.raises(RuntimeError, match="block 1 already fed release 0"):
        ledger.release([first, second], [0], [1.0], [0.0], 1.0, 4)
    assert ledger.block_release == [-1, 0] and ledger.releases == 1  # the block before the used one is unmarked


def test_ledger_entries_are_checked():
    ledger = Ledger()
    with pytest.raises(ConfigError, match="^arm must be an integer from -1 to"):
        ledger.block(-2, 1, 1.0)
    with pytest.raises(ConfigError, match="^reward_sum must be a finite number or a 1-D array"):
        ledger.block(0, 1, [[1.0, 2.0], [3.0]])
    with pytest.raises(ConfigError, match="^block_arm must be a list"):
        Ledger(block_arm=(0,))
    with pytest.raises(ConfigError, match=r"^the block_\* columns must have one length"):
        Ledger(block_arm=[0])


def _elimination(**changes):
    kw = dict(
        reward="bernoulli",
        reward_sigma=0.1,
        horizon=1000,
        batch_base=2,
        confidence=0.1,
        crs=1.0,
        rng=rng(),
    )
    return run_elimination(PROTOCOLS["dist-dp-se"](1.0, 0.1), np.array([0.9, 0.1]), **{**kw, **changes})


def test_run_elimination_refuses_a_secure_computation_the_aggregate_simulation_would_ignore():
    with pytest.raises(ConfigError, match="^secagg must be ideal with simulation=aggregate"):
        _elimination(secagg="masked")
    assert _elimination(secagg="masked", simulation="per-user").metrics["batches"] >= 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"confidence": 0}, r"^confidence must be in \(0, 1\]"),
        ({"reward": np.array([1.0])}, "^reward must be one of bernoulli"),
        ({"checkpoints": 10**30}, "^checkpoints must be an integer from 2 to"),
        ({"horizon": 10**30}, r"^horizon must be at most 1e\+09 rounds"),
        ({"horizon": 0}, "^horizon must be at least 1, got 0$"),
        ({"record": 1}, "^record must be True or False"),
    ],
)
def test_run_elimination_names_each_refused_argument(changes, message):
    with pytest.raises(ConfigError, match=message):
        _elimination(**changes)


def test_hybrid_ucb_refuses_a_horizon_whose_tables_do_not_fit_before_building_them():
    """At 10^9 rounds the per-round tables would take about 40 GB: refused at once, in one line, unless confirmed
    (shown under a lowered limit, so that nothing large is built)."""
    import importlib
    from unittest import mock

    from anonbandits.core.limits import allowing_large

    hybrid = importlib.import_module("anonbandits.dp.hybrid_ucb")  # the module, not the function of that name

    with pytest.raises(ConfigError, match=r"horizon = 1,000,000,000 is above MAX_TABLE_ROUNDS"):
        hybrid_ucb_batch(np.array([0.5, 0.25]), [1.0], 10**9, np.random.default_rng(0))
    with mock.patch.object(hybrid, "MAX_TABLE_ROUNDS", 50):
        with pytest.raises(ConfigError, match="MAX_TABLE_ROUNDS"):
            hybrid_ucb_batch(np.array([0.5, 0.25]), [1.0], 100, np.random.default_rng(0))
        with allowing_large():
            assert hybrid_ucb_batch(np.array([0.5, 0.25]), [1.0], 100, np.random.default_rng(0)).pulls.sum() == 100
