"""What the core refuses, in one line naming the argument: the checks that relate arguments (shapes, arm
indices, order) and the limits, which the generated hostile values of tests/bandits/test_hostile_properties.py
reach only in part."""

from __future__ import annotations

import numpy as np
import pytest

from anonbandits.core import BatchedElimination, checkpoint_grid, epoch_length, gap_survivors, static_grid
from anonbandits.core.learners import EpochElimination
from anonbandits.core.limits import MAX_GRID_POINTS, allowing_large, check_size
from anonbandits.core.regret import RegretTrace
from anonbandits.core.votes import board_releases, removal_steps, running_distinct
from anonbandits.errors import ConfigError
from anonbandits.validation import trusted


def _refused(match: str, call) -> str:
    with pytest.raises(ConfigError, match=match) as exc:
        call()
    assert "\n" not in str(exc.value)
    return str(exc.value)


def test_learners_refuse_a_batch_of_another_shape_or_a_fractional_count():
    learner = EpochElimination(2, 3, confidence=0.1)
    wanted = learner.demand()
    _refused(r"^sums and counts must have shape \(2, 3\)", lambda: learner.update(wanted[:1] * 0.5, wanted[:1], 0.25))
    _refused(
        r"^counts must be a 2-D array of non-negative integers",
        lambda: learner.update(wanted * 0.5, wanted + 0.5, 0.25),
    )
    _refused(r"^counts must equal the demand", lambda: learner.update(wanted * 0.5, wanted + 1, 0.25))
    base = BatchedElimination(2, 2, np.array([0, 10, 20]))
    _refused(r"^sums and counts must have shape \(2, 2\)", lambda: base.update(np.zeros((1, 2)), np.full((1, 2), 5)))
    _refused(
        r"^counts must be a 2-D array of non-negative integers \(or of floats of integer value\)",
        lambda: base.update(np.zeros((2, 2)), np.full((2, 2), 2.5)),
    )


def test_learners_refuse_arrays_past_the_instance_limit_before_allocating():
    _refused(
        r"n_learners x n_arms = 2,000,000,000,000 is above MAX_INSTANCE_CELLS",
        lambda: EpochElimination(10**12, 2, confidence=0.1),
    )


def test_gap_survivors_refuses_widths_of_another_shape_and_unknown_ties():
    means = np.array([[0.5, 0.3], [0.5, 0.1]])
    _refused(r"^width must be a number or of shape \(2,\)", lambda: gap_survivors(means, np.array([0.1, 0.2, 0.3])))
    _refused(r"^ties must be one of keep, eliminate", lambda: gap_survivors(means, 0.1, ties="strict"))
    _refused(r"^means must be", lambda: gap_survivors(np.array([0.5, np.nan]), 0.1))
    # inf is a radius before any sample: every arm survives
    assert gap_survivors(means, np.array([np.inf, np.inf])).all()


def test_regret_trace_refuses_arms_out_of_range_and_blocks_without_rates():
    trace = RegretTrace(np.array([0.0, 0.5]))
    _refused(r"^arms must be arm indices from 0 to 1, got array\(\[0, 2\]\)", lambda: trace.play([0, 2], 4))
    _refused(r"^arms must be an arm index", lambda: trace.play(-1, 4))  # -1 would wrap to the last arm
    _refused(
        r"^rounds and rates must have one entry per block", lambda: trace.charge(np.array([2, 3]), np.array([1.0]))
    )
    trace.play([0, 1], 4)
    assert trace.curve(np.array([[0, 2], [3, 4]])).tolist() == [[0.0, 0.5], [0.5, 1.0]]
    _refused(r"^rounds must lie in \[0, 4\]", lambda: trace.curve(np.array([5])))


def test_vote_board_refuses_streams_of_different_lengths_or_out_of_time_order():
    _refused(
        r"^agents, slots, times and values must have one entry per contribution",
        lambda: board_releases(np.array([0, 1]), np.array([0]), np.array([0, 1]), 2),
    )
    _refused(
        r"^times must be non-decreasing", lambda: board_releases(np.arange(3), np.zeros(3, int), np.array([2, 1, 3]), 2)
    )
    _refused(
        r"^votes_before, cast and alive must agree on the arms K",
        lambda: removal_steps(np.zeros(3, int), np.ones((2, 2), bool), 2, np.ones(3, bool)),
    )
    assert running_distinct(np.zeros(0, np.int64)).shape == (0,)


def test_schedules_refuse_fractions_and_sizes_past_their_limits():
    _refused(r"^checkpoints must be", lambda: checkpoint_grid(100, 2.5))
    _refused(r"^checkpoints must be", lambda: checkpoint_grid(100, MAX_GRID_POINTS + 1))
    _refused(r"^checkpoints: checkpoint rounds must lie in \[1, 100\]", lambda: checkpoint_grid(100, [0, 50]))
    _refused(r"^batches must be an integer from 1 to", lambda: static_grid("minimax", 1000, MAX_GRID_POINTS + 1))
    # the registry calls the grid's kind "grid": the message names both
    _refused(
        r"^grid must be one of minimax, geometric, arithmetic, got kind='cubic'", lambda: static_grid("cubic", 10, 2)
    )
    _refused(r"R_e is above 2\^62", lambda: epoch_length(2, 40, 0.1))
    assert epoch_length(np.array([2, 3]), 1, np.array([0.1, 0.2]), np.array([np.inf, 1.0])).shape == (2,)


def test_check_size_refuses_what_no_confirmation_can_allocate():
    with allowing_large():
        assert check_size("users x arms", 10**12, 10**8, "MAX_INSTANCE_CELLS", "cells") == 10**12
        _refused(r"^users x arms = .* is above 2\^62", lambda: check_size("users x arms", 2**63, 10**8, "M", "cells"))
    _refused(r"^allow_large must be True or False", lambda: check_size("n", 1, 10, "M", "cells", allow_large=1))


def test_trusted_calls_skip_the_checks_but_not_the_relations():
    with trusted():  # a driver's own call: its arguments were checked at the boundary
        assert gap_survivors(np.array([0.5, 0.45]), 0.1).tolist() == [True, True]
        _refused(r"^width must be", lambda: gap_survivors(np.ones((2, 2)), np.ones(3)))
