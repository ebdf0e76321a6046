"""The k-anonymous board of the multi-agent schemes (``--channel anonymous`` of mase, dp-mase,
decentralized-elimination and full-sharing): nothing is released from fewer than C agents, the board equals a
plain per-contribution loop, the schemes decide on released aggregates only, and the direct channel is
unchanged."""

import numpy as np
import pytest

from anonbandits import simulate
from anonbandits.core.votes import anonymous_threshold, board_releases, first_release
from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized import KIND_REWARD, run_decentralized_elimination, run_full_sharing
from anonbandits.multiagent.mase import DPMASEConfig, dp_mase, mase, problem

SCHEMES = ("mase", "dp-mase", "decentralized-elimination", "full-sharing")
MEANS = [0.7, 0.5, 0.3, 0.1, 0.1]


def plain_board(agents, slots, times, C):
    """The board written contribution by contribution: per slot, a buffer of contributions and the set of their
    agents; at C distinct agents the buffer is released. Returns (slot, time, size, total) per release in time
    order and each contribution's release (-1: never)."""
    buffers: dict[int, list[int]] = {}
    released, group = [], [-1] * len(agents)
    for i, (slot, time) in enumerate(zip(slots, times, strict=True)):
        buffers.setdefault(int(slot), []).append(i)
        members = buffers[int(slot)]
        if len({int(agents[j]) for j in members}) >= C:
            released.append(
                (int(slot), int(time), len({int(agents[j]) for j in members}), float(len(members)), members)
            )
            buffers[int(slot)] = []
    released.sort(key=lambda r: (r[1], r[0]))
    for j, (*_, members) in enumerate(released):
        for i in members:
            group[i] = j
    return [r[:4] for r in released], group


@pytest.mark.parametrize("C", [1, 2, 3, 5])
def test_board_releases_equal_the_plain_loop(C):
    rng = np.random.default_rng(C)
    agents, slots = rng.integers(0, 6, 200), rng.integers(0, 4, 200)  # agents repeat within a slot
    times = np.sort(rng.integers(0, 80, 200))
    rel = board_releases(agents, slots, times, C)
    expected, group = plain_board(agents, slots, times, C)
    assert (
        list(zip(rel.slot.tolist(), rel.time.tolist(), rel.size.tolist(), rel.total.tolist(), strict=True)) == expected
    )
    assert rel.group.tolist() == group and len(expected) > 5


def test_first_release_is_the_first_row_where_every_column_has_c_agents():
    rng = np.random.default_rng(0)
    who = rng.integers(0, 9, (60, 3))
    for C in (1, 4, 9):
        row = first_release(who, C)
        distinct = [[len(set(who[: r + 1, j])) for j in range(3)] for r in range(60)]
        plain = next((r for r in range(60) if min(distinct[r]) >= C), -1)
        assert row == plain and (C < 9 or row > 8)
    assert first_release(who, 10) == -1


def check_releases(rel, senders, C):
    """Every released aggregate combines at least C distinct agents, counted from the contributions' own senders
    (not from the record's sizes alone), and the record's sizes are those counts."""
    assert rel.size.size > 0 and (rel.size >= C).all()
    for j in range(rel.size.size):
        members = senders[rel.group == j]
        assert np.unique(members).size == rel.size[j] >= C


def vote_runs(C):
    """An anonymous run of each voting scheme (votes log: sender, time, arm) and its global eliminations."""
    inst, probs = problem("1"), np.full(24, 1 / 24)
    for name, res in (
        ("mase", mase(inst, probs, np.random.default_rng(3), channel="anonymous", C=C)),
        ("dp-mase", dp_mase(inst, probs, DPMASEConfig(eps=1.0, channel="anonymous", C=C), np.random.default_rng(3))),
    ):
        log = res.info["messages"]
        yield (
            name,
            res.info["releases"],
            log.sender,
            log.time,
            log.content,
            res.metrics["vote_threshold"],
            res.info["global_eliminations"],
            inst.arms,
        )
    res = run_decentralized_elimination(
        MEANS, 24, rng=np.random.default_rng(3), eta=0.8, delta=0.05, eps=0.1, channel="anonymous", C=C
    )
    log = res.info["log"]
    glob = sorted((int(s), a) for a, s in enumerate(res.info["elimination_steps"]) if s >= 0)
    yield (
        "decentralized-elimination",
        res.info["releases"],
        log.sender,
        log.time,
        log.content,
        res.metrics["vote_threshold"],
        glob,
        len(MEANS),
    )


@pytest.mark.parametrize("C", [4, 7])
def test_no_vote_tally_is_released_from_fewer_than_c_agents_and_removals_follow_released_tallies(C):
    for name, rel, sender, time, arm, m, glob, arms in vote_runs(C):
        check_releases(rel, sender, C)
        assert (rel.total == C).all(), name  # each agent votes against an arm at most once
        # a buffer left unreleased at the end holds fewer than C agents
        for slot in np.unique(arm):
            left = sender[(arm == slot) & (rel.group == -1)]
            assert np.unique(left).size < C, name
        # the plain board on the run's own votes: an arm leaves the shared set exactly when its released tally
        # first reaches M (never the last arm)
        released, _ = plain_board(sender, arm, time, C)
        tally, removed, expected = {}, set(), []
        for slot, when, _, total in released:
            tally[slot] = tally.get(slot, 0) + total
            if tally[slot] >= m and slot not in removed and len(removed) < arms - 1:
                removed.add(slot)
                expected.append((when, slot))
        assert sorted(glob) == sorted(expected) and len(glob) > 0, name
        assert anonymous_threshold(m, C) % C == 0


def test_full_sharing_releases_reward_sums_of_at_least_c_players_as_a_plain_round_loop_does():
    """A plain round-by-round replay of the run's own pulls (sender, arm, reward): rounds of the learner's set
    in index order, the buffer released when every arm has C distinct players, SE/SER3's test on the released
    sums; it must find the run's releases and eliminations exactly."""
    from anonbandits.core.radii import se_boundary

    C, n, delta, eps = 5, 12, 0.05, 0.1
    res = run_full_sharing(MEANS, n, rng=np.random.default_rng(4), delta=delta, eps=eps, channel="anonymous", C=C)
    log, rel, steps = res.info["log"], res.info["releases"], res.info["elimination_steps"]
    check_releases(rel, log.sender, C)
    sender, arm, reward = log.sender, (log.kind - KIND_REWARD).astype(int), log.content
    k, held, sums, tau, i = len(MEANS), list(range(len(MEANS))), np.zeros(len(MEANS)), 0, 0
    buffer: list[tuple[int, int, float]] = []
    releases, eliminated = [], []
    while len(held) > 1:
        round_ = [(int(sender[i + j]), int(arm[i + j]), float(reward[i + j])) for j in range(len(held))]
        assert [a for _, a, _ in round_] == held  # one pull of every arm of the set, in index order
        i += len(held)
        buffer += round_
        if min(len({s for s, a, _ in buffer if a == b}) for b in held) < C:
            continue
        tau += len(buffer) // len(held)
        for b in held:
            part = [r for s, a, r in buffer if a == b]
            releases.append((b, i, len({s for s, a, _ in buffer if a == b}), sum(part)))
            sums[b] += sum(part)
        buffer = []
        mu = {b: sums[b] / tau for b in held}
        width = se_boundary(tau, k, delta, 4.0, 2) / tau  # SER3 (the default subroutine): c = 4, 2t
        top = max(mu.values())
        outs = [{b for b in held if b != lead and top - mu[b] + eps >= width} for lead in held if mu[lead] == top]
        out = next(
            o
            for o in outs
            if sorted((i, b) for b in o)
            == sorted((int(t), int(b)) for t, b in zip(steps[list(o)], list(o), strict=True))
        )
        eliminated += [(i, b) for b in sorted(out)]
        held = [b for b in held if b not in out]
    assert i == res.metrics["samples"] == sender.size and held == [res.metrics["recommended"]]
    got = list(zip(rel.slot.tolist(), rel.time.tolist(), rel.size.tolist(), rel.total.tolist(), strict=True))
    assert got == [(b, t, s, pytest.approx(x)) for b, t, s, x in releases]
    assert sorted(eliminated) == sorted((int(t), a) for a, t in enumerate(steps) if t >= 0)


@pytest.mark.parametrize("name", SCHEMES)
def test_the_direct_channel_is_the_default_and_anonymous_c1_is_the_direct_board(name):
    base = simulate(name, seed=2, users=32)
    direct = simulate(name, seed=2, users=32, channel="direct", C=9)
    assert direct.metrics == base.metrics and base.metrics["min_group_size"] == 1
    one = simulate(name, seed=2, users=32, channel="anonymous", C=1)
    assert one.metrics == base.metrics
    anon = simulate(name, seed=2, users=32, channel="anonymous", C=6)
    assert anon.metrics["min_group_size"] >= 6 and anon.metrics["released_aggregates"] > 0


def test_more_than_the_agents_releases_nothing_and_mase_degrades_to_no_sharing():
    res = simulate("mase", seed=1, users=16, channel="anonymous", C=17)
    assert res.metrics["released_aggregates"] == 0 and res.metrics["min_group_size"] is None
    assert res.metrics["stalled"] == 1 and res.metrics["messages"] > 0  # every agent finished alone
    dec = simulate("decentralized-elimination", seed=1, users=32, channel="anonymous", C=40)
    assert dec.metrics["released_aggregates"] == 0 and dec.metrics["t_consensus"] is None
    assert dec.metrics["truncated"] == 0  # the players finished alone, like 1-privacy


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(users=8, C=9), "exceeds the 8 players"),
        (dict(subroutine="median"), "needs subroutine se or ser3"),
    ],
)
def test_full_sharing_refuses_what_its_board_cannot_serve(params, match):
    with pytest.raises(ConfigError, match=match):
        simulate("full-sharing", seed=0, channel="anonymous", **params)


def test_dser4_refuses_the_anonymous_channel_and_c_must_be_positive():
    with pytest.raises(ConfigError, match="direct for subroutine ser4"):
        simulate("decentralized-elimination", seed=0, subroutine="ser4", horizon=1000, channel="anonymous")
    with pytest.raises(ConfigError, match="C"):
        simulate("mase", seed=0, channel="anonymous", C=0)
