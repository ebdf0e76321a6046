"""Round removal (anondecomp.improve): shorter decompositions that the exact verifier accepts."""

from __future__ import annotations

import numpy as np
import pytest

from anondecomp import Decomposition, DemandGraph, decompose, lp_lower_bound
from anondecomp.bench.real import powerlaw_log, write_edge_table
from anondecomp.improve import drop_round, reroute, rounds_of, shorten, shorten_long, shorter, unique_samples
from anondecomp.validation import prepare
from anondecomp.verify import verify


def staircase() -> tuple[DemandGraph, np.ndarray]:
    """Four users (A, B want arms 0 and 1; C, D want arms 1 and 2), C = 1, and a decomposition of three rounds
    in which every round gives samples no other round gives (lower bound 2):

    round 0: A, B on arm 0 and C, D on arm 1 (A0 B0 C1 D1);
    round 1: A, B, C on arm 1 (A1 B1), D alone on arm 2 (closed);
    round 2: C, D on arm 2 (C2 D2), A alone on arm 0 and B alone on arm 1 (both closed).
    """
    w = np.array([[1, 1, 0], [1, 1, 0], [0, 1, 1], [0, 1, 1]], float)
    rounds = np.array([[0, 0, 1, 1], [1, 1, 1, 2], [0, 1, 2, 2]])
    return DemandGraph.from_weights(w), rounds


def test_staircase_seed_is_valid_and_every_round_is_needed():
    g, rounds = staircase()
    prep = prepare(g, 1, False)
    assert verify(g, 1, rounds, np.ones(3, np.int64)).valid
    assert unique_samples(prep, rounds).tolist() == [3, 2, 2]
    for d in range(3):  # no round can simply be deleted
        kept = np.delete(rounds, d, axis=0)
        assert not verify(g, 1, kept, np.ones(2, np.int64)).valid


@pytest.mark.parametrize("d", [0, 1, 2])
def test_drop_round_moves_the_samples_into_the_other_rounds(d):
    g, rounds = staircase()
    prep = prepare(g, 1, False)
    out = drop_round(prep, rounds, d)
    assert out is not None and out.shape == (2, 4)
    assert verify(g, 1, out, np.ones(2, np.int64)).valid


def test_drop_round_below_the_lower_bound_is_infeasible():
    g, rounds = staircase()
    prep = prepare(g, 1, False)
    two = drop_round(prep, rounds, 2)
    assert drop_round(prep, two, 0) is None and drop_round(prep, two, 1) is None


def test_shorten_meets_integer_demands_above_one():
    g, rounds = staircase()
    g2 = DemandGraph.from_weights(2 * g.weights)  # every pair asks for two samples: lower bound 4
    prep = prepare(g2, 1, False)
    assert verify(g2, 1, rounds, np.full(3, 2, np.int64)).valid
    a, m = shorten(prep, rounds, np.full(3, 2, np.int64))
    assert int(m.sum()) == 4 and verify(g2, 1, a, m).valid


def test_shorten_reaches_the_lower_bound_and_verifies():
    g, rounds = staircase()
    prep = prepare(g, 1, False)
    a, m = shorten(prep, rounds, np.ones(3, np.int64))
    assert int(m.sum()) == prep.lower_bound == 2
    assert verify(g, 1, a, m).valid


def test_shorten_expands_multiplicities_and_leaves_a_decomposition_at_the_bound():
    g, rounds = staircase()
    prep = prepare(g, 1, False)
    a, m = shorten(prep, rounds[[0, 1, 2]], np.array([1, 2, 1]))  # round 1 twice: four rounds
    assert int(m.sum()) == 2 and verify(g, 1, a, m).valid
    assert shorten(prep, a, m) is None  # nothing below the lower bound
    assert rounds_of(rounds, np.array([1, 2, 1])).shape == (4, 4)


def test_shorter_names_the_method_and_keeps_the_seed_length():
    g, rounds = staircase()
    seed = Decomposition(g, 1, "greedy", rounds, np.ones(3, np.int64))
    found = shorter(seed)
    assert found.method == "greedy+improve" and found.total_assignments == 2
    assert found.info["improved_from"] == "greedy" and found.info["seed_total"] == 3
    assert verify(g, 1, found.assignments, found.multiplicities).valid
    assert shorter(found) is found  # at the lower bound: nothing to do
    bound = lp_lower_bound(g, 1, seed=found)
    assert bound.converged and bound.value == 2.0


@pytest.mark.parametrize("seed", [0, 1])
def test_shorten_halves_one_round_per_arm_on_a_log(seed):
    g = powerlaw_log(150, 20, 5, seed)
    C = 5
    prep = prepare(g, C, False)
    greedy = decompose(g, C, method="greedy")  # every user on arm j in round j: each pair once, unit weights
    once = np.ones(len(greedy.multiplicities), np.int64)
    assert verify(g, C, greedy.assignments, once).valid and len(once) > prep.lower_bound
    found = shorten(prep, greedy.assignments, once)
    assert found is not None
    a, m = found
    assert prep.lower_bound <= int(m.sum()) < len(once)
    assert verify(g, C, a, m).valid


def test_reroute_refills_a_deleted_round_or_declines_and_never_returns_a_short_decomposition():
    C, repaired = 5, 0
    for seed in range(3):
        g = powerlaw_log(150, 20, C, seed)
        req = prepare(g, C, False).edge_required
        d = decompose(g, C, method="slack")
        rounds = rounds_of(d.assignments, d.multiplicities)
        for r in range(len(rounds)):
            found = reroute(g, req, C + 1, np.delete(rounds, r, axis=0))
            if found is not None:
                repaired += 1
                assert found.shape == (len(rounds) - 1, g.n_users)
                assert verify(g, C, found, np.ones(len(found), np.int64)).valid
    assert repaired > 0


def test_reroute_walks_an_augmenting_path_through_a_needed_sample():
    # C = 1; user 0 wants arms 0 and 1, users 1 and 2 arm 0, users 3 and 4 arm 1. User 0 lacks arm 1 (alone on
    # it in round 1). Arm 1 is open only in round 0, where user 0 gives the needed sample of arm 0 with user 1
    # alone; so user 2 (padding arm 1 there) keeps arm 0 open, user 0 takes arm 1, and its arm 0 sample moves
    # to round 1, where arm 0 is open and user 0's slot was free.
    req = np.array([[1, 1], [1, 0], [1, 0], [0, 1], [0, 1]])
    support = np.ones((5, 2), bool)
    rounds = np.array([[0, 0, 1, 1, 1], [1, 0, 0, 0, 0]])
    g = DemandGraph.from_weights(req.astype(float), support=support)
    assert not verify(g, 1, rounds, np.ones(2, np.int64)).valid
    found = reroute(g, g.edge_required, 2, rounds)
    assert found is not None and found.tolist() == [[1, 0, 0, 1, 1], [0, 0, 0, 0, 0]]
    assert verify(g, 1, found, np.ones(2, np.int64)).valid


def test_shorten_long_removes_rounds_of_a_long_schedule_and_verifies():
    g = powerlaw_log(300, 40, 5, 0)
    prep = prepare(g, 5, False)
    seed = decompose(g, 5, method="slack")
    found = shorten_long(prep, seed.assignments, seed.multiplicities)
    assert found is not None
    a, m = found
    assert prep.lower_bound <= int(m.sum()) < seed.total_assignments
    assert verify(g, 5, a, m).valid


def test_polish_shortens_and_certify_only_adds_the_bound(tmp_path, capsys, monkeypatch):
    import anondecomp
    from anonbandits.cli.main import main
    from anondecomp.improve import polish

    g, rounds = staircase()
    seed = Decomposition(g, 1, "slack", rounds, np.ones(3, np.int64))
    polished = polish(seed)  # what auto does to a log above its lower bound
    assert polished.method == "slack+improve" and polished.total_assignments == 2
    assert polished.info["lp_lower_bound"] == 2.0 and verify(g, 1, polished).valid
    path = tmp_path / "g.parquet"
    write_edge_table(g, path, C=1)
    monkeypatch.setattr(
        anondecomp,
        "decompose",
        lambda graph, C, **kw: Decomposition(graph, C, "slack", seed.assignments, seed.multiplicities),
    )  # a decomposition above the bound
    out_file = tmp_path / "d.json"
    assert main(["decompose", str(path), "--certify", "-o", str(out_file)]) == 0
    out = capsys.readouterr().out  # --certify adds the bound and changes nothing of the decomposition
    assert "method               slack\n" in out and int(out.split("R (assignments)")[1].split()[0]) == 3
    assert float(out.split("LP lower bound")[1].split()[0]) == 2.0
    assert main(["verify", str(path), str(out_file)]) == 0
