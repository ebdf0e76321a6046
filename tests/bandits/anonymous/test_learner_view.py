"""The learner's view (issue 31, item 4): a channel exposes its clock and its audited feedback only; the
simulator's books (the means, the pseudo-regret) live in its private ledger, read by the drivers' result builders.

The test plays one user off its assignment on one of two identically seeded channels and reads everything a learner
can read on each (every public attribute, property and argument-free method result): nothing differs, while the
ledgers (the driver's books) do differ."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from anonbandits.channels import AnonymousChannel, CentralLaplace, ChannelOptions, DirectFeedback
from anonbandits.envs.instances import MultiUserInstance

MU = np.array([[0.9, 0.1, 0.5]] * 6)


def _readable(channel) -> dict:
    """Everything a learner can read on ``channel`` without playing: every public name, called when it is a
    method taking no argument (a deprecated name warns and is read too)."""
    seen = {}
    for name in dir(channel):
        if name.startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            value = getattr(channel, name)
            if callable(value) and name not in (
                "open",
                "sample_variance",
                "min_group",
                "play",
                "serve_batch",
                "elicit",
                "serve",
            ):
                try:
                    value = value()
                except TypeError:  # needs arguments: not something read
                    continue
        seen[name] = value
    return seen


def _same(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    if callable(a) and callable(b):  # the same method of two channels
        return getattr(a, "__func__", a) is getattr(b, "__func__", b)
    if hasattr(a, "__dict__") and hasattr(b, "__dict__") and type(a) is type(b):  # e.g. the auditor
        return _same(
            {k: v for k, v in vars(a).items() if not k.startswith("_")},
            {k: v for k, v in vars(b).items() if not k.startswith("_")},
        )
    return a == b


def _channels(kind: str):
    instance = MultiUserInstance(MU)
    if kind == "direct":
        return [DirectFeedback.open(instance, 1000, np.random.default_rng(0), ChannelOptions()) for _ in range(2)]
    options = ChannelOptions(C=2, mechanism=CentralLaplace(1.0))
    return [AnonymousChannel.open(instance, 1000, np.random.default_rng(0), options) for _ in range(2)]


@pytest.mark.parametrize("kind", ["direct", "anonymous"])
def test_a_user_off_its_assignment_changes_nothing_a_learner_reads(kind):
    honest, deviant = _channels(kind)
    assignment = np.zeros(6, dtype=int)
    off = assignment.copy()
    off[3] = 1  # one user plays another arm than the assignment says (its gap is 0.8 a round)
    assert honest.play(assignment, 40) == deviant.play(off, 40) == 40
    before_h, before_d = _readable(honest), _readable(deviant)
    assert before_h.keys() == before_d.keys()
    differ = [name for name in before_h if not _same(before_h[name], before_d[name])]
    assert not differ, f"a learner reads the deviation in {differ}"
    # the driver's books see it: 40 rounds of 0.8
    assert deviant._ledger.regret - honest._ledger.regret == pytest.approx(40 * 0.8)
    assert honest._ledger.regret == 0.0


def test_audited_feedback_then_still_hides_the_books():
    """After an elicitation too, what differs between the two channels is the audited sums only."""
    honest, deviant = _channels("anonymous")
    honest.play(np.zeros(6, dtype=int), 12)
    deviant.play(np.array([0, 0, 0, 1, 0, 0]), 12)
    fb_h = honest.elicit(np.zeros(6, dtype=int), np.array([2]))
    fb_d = deviant.elicit(np.zeros(6, dtype=int), np.array([2]))
    assert np.array_equal(fb_h.sums, fb_d.sums) and np.array_equal(fb_h.counts, fb_d.counts)  # same seeds
    after_h, after_d = _readable(honest), _readable(deviant)
    assert [n for n in after_h if not _same(after_h[n], after_d[n])] == []
    assert deviant._ledger.regret > honest._ledger.regret


@pytest.mark.parametrize("kind", ["direct", "anonymous"])
def test_the_books_removed_from_the_view_give_nan_with_a_deprecation_warning(kind):
    channel, _ = _channels(kind)
    channel.play(np.ones(6, dtype=int), 10)
    with pytest.warns(DeprecationWarning, match="regret is deprecated"):
        assert np.isnan(channel.regret)
    with pytest.warns(DeprecationWarning, match="regret_curve is deprecated"):
        rounds, regret = channel.regret_curve(2)
    assert rounds.tolist() == [0, 5, 10] and np.isnan(regret).all()
    assert channel._ledger.regret == pytest.approx(10 * 6 * 0.8)
    public = {n for n in dir(channel) if not n.startswith("_")}
    assert not public & {"instance", "means", "mu", "gaps", "ledger", "books", "trace"}


def test_the_ledger_refuses_a_horizon_out_of_range():
    from anonbandits.channels.feedback import ChannelLedger
    from anonbandits.errors import ConfigError

    for horizon in (0, 10**9 + 1, True, 2.5):
        with pytest.raises(ConfigError, match="horizon"):
            ChannelLedger(MultiUserInstance(MU), horizon)


def test_serve_puts_its_rounds_on_the_clock_and_in_the_books():
    """``serve`` releases group sums of the rounds it plays: they are on the clock and their pseudo-regret in the
    ledger (no feedback is free), and it refuses rounds past the horizon before drawing anything."""
    from anonbandits.channels.anonymous import partition_groups
    from anonbandits.errors import ConfigError

    channel = AnonymousChannel(MultiUserInstance(MU), 2, 30, np.random.default_rng(0))
    a = np.array([[1, 1, 1, 0, 0, 0]])  # users 0-2 on arm 1: each loses 0.8 a round
    labels, positions = partition_groups(a, 3, 2)
    channel.serve(a, labels, positions, np.array([2]), 6)
    assert channel.t == 12 and channel._ledger.regret == pytest.approx(12 * 3 * 0.8)
    with pytest.raises(ConfigError, match="rounds must be within the horizon"):
        channel.serve(a, labels, positions, np.array([4]), 6)
    assert channel.t == 12
