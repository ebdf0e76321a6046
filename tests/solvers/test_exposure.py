"""Exposure (anondecomp.exposure): the per-user count of released sums, re-seating, the certified bounds, the
``max_surplus_exposure`` cap of decompose and its check by verify. Every decomposition made here goes through
the exact verifier; exposures are checked against a plain loop, the bounds against an integer program over
every assignment of tiny graphs."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, milp

import anondecomp
from anondecomp import Decomposition, DemandGraph, InfeasibleError, InvalidInputError, MethodNotApplicableError
from anondecomp.bench.real import powerlaw_log
from anondecomp.exposure import R_SLACK, ExposureBounds, exposure_bounds, exposures, reseated, user_demand
from tests.solvers.strategies import random_weights, supported_graph

GRAPHS = {
    "weights": (DemandGraph.from_weights(random_weights(0, 10, 3, 1, values=(0, 1, 2, 3))), 1),
    "support": (supported_graph(1, 9, 3, 2), 2),
    "batched": (
        DemandGraph.from_batched(7, (np.random.default_rng(3).random((30, 4)) < 0.6) | (np.arange(4) == 0)),
        3,
    ),
    "full": (DemandGraph.from_batched(5, np.ones((8, 2), bool)), 1),
    "log": (powerlaw_log(40, 8, 1, 2), 1),
}
POLYTOPE = {"batched", "full", "log"}  # the graphs whose columns of w/D reach C+1 (polytope applies)


def _options(method: str) -> dict:
    return {"time_limit": 5.0} if method == "optimal" else {}


def loop_exposures(d: Decomposition) -> list[int]:
    """Each user's exposure from the definition: the blocks whose group on its arm holds C+1 users or more."""
    out = [0] * d.graph.n_users
    for row, m in zip(d.assignments.tolist(), d.multiplicities.tolist(), strict=True):
        for i, arm in enumerate(row):
            if row.count(arm) >= d.C + 1:
                out[i] += m
    return out


def surplus(d: Decomposition) -> np.ndarray:
    return exposures(d) - user_demand(d.graph, d.C)


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message.strip(), message
    return message


# -- exposures: the definition, on every method -------------------------------------------------------------------


def test_exposures_of_a_hand_made_decomposition():
    g = DemandGraph.from_weights([[2, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    # block 1 (x2): users 0, 1 on arm 0 (a pair), 2, 3 on arm 1 (a pair), 4 alone on arm 2
    # block 2 (x3): users 0, 1, 3 on arm 0, user 2 alone on arm 1, user 4 alone
    d = Decomposition(g, 1, "hand", np.array([[0, 0, 1, 1, 2], [0, 0, 1, 0, 2]]), np.array([2, 3]))
    assert exposures(d).tolist() == [5, 5, 2, 5, 0]
    assert exposures(d).dtype == np.int64
    d2 = Decomposition(g, 2, "hand", d.assignments, d.multiplicities)  # C = 2: only the triple of block 2
    assert exposures(d2).tolist() == [3, 3, 0, 3, 0]


@pytest.mark.parametrize("method", anondecomp.METHODS)
@pytest.mark.parametrize("name", ["weights", "support", "batched"])
def test_exposures_equal_the_definition_for_every_method(method, name):
    graph, C = GRAPHS[name]
    if method == "polytope" and name not in POLYTOPE:
        return
    for reseat in (False, True):
        d = anondecomp.decompose(graph, C, method, reseat=reseat, **_options(method))
        assert exposures(d).tolist() == loop_exposures(d)


def test_exposures_on_random_decompositions():
    """Random rows (any arm of each user's support), random multiplicities: exposures is the loop's count."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        C = int(rng.integers(1, 4))
        graph = supported_graph(seed, int(rng.integers(C + 1, 12)), int(rng.integers(1, 5)), C)
        sup = graph.support
        rows = np.array(
            [[rng.choice(np.flatnonzero(sup[i])) for i in range(graph.n_users)] for _ in range(rng.integers(1, 8))]
        )
        d = Decomposition(graph, C, "hand", rows, rng.integers(1, 50, len(rows)))
        assert exposures(d).tolist() == loop_exposures(d)


# -- re-seating: same R, valid, never more exposure ---------------------------------------------------------------


@pytest.mark.parametrize("method", anondecomp.METHODS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_reseating_keeps_R_and_coverage_and_never_raises_exposure(method, name):
    graph, C = GRAPHS[name]
    if method == "polytope" and name not in POLYTOPE:
        with pytest.raises(MethodNotApplicableError):
            anondecomp.decompose(graph, C, method, reseat=True)
        return
    plain = anondecomp.decompose(graph, C, method, reseat=False, **_options(method))
    seated = anondecomp.decompose(graph, C, method, reseat=True, **_options(method))
    assert anondecomp.verify(graph, C, plain).valid and anondecomp.verify(graph, C, seated).valid
    before, after = exposures(plain), exposures(seated)
    if method == "auto":  # auto keeps the least exposed candidate within R_SLACK of the shortest
        assert seated.total_assignments <= plain.total_assignments * (1 + R_SLACK)
        assert seated.total_assignments < plain.total_assignments or after.sum() <= before.sum()
    else:
        assert seated.total_assignments == plain.total_assignments
        assert after.sum() <= before.sum()
    assert "exposure" not in plain.info
    # re-seating by hand: same R, the same uncovered pairs, valid, no more exposure; both padder orders
    for order in ("ratio", "surplus"):
        again = reseated(plain, order)
        assert again.total_assignments == plain.total_assignments
        assert anondecomp.verify(graph, C, again).valid
        assert exposures(again).sum() <= before.sum()
        assert again.info["reseated"] == order
    # the figures written into info are those of the assignments returned
    x = seated.info["exposure"]
    dem = user_demand(graph, C)
    assert x["exposure_total"] == after.sum() == sum(loop_exposures(seated))
    assert x["exposure_max"] == after.max()
    assert x["exposure_mean"] == pytest.approx(after.mean())
    assert x["surplus_max"] == (after - dem).max()
    assert x["demand_max"] == dem.max() and x["demand_mean"] == pytest.approx(dem.mean())
    bounds = exposure_bounds(graph, C)
    assert (x["exposure_total_bound"], x["surplus_bound"]) == (bounds.total, bounds.surplus)
    # and the bounds hold for every decomposition made
    for d in (plain, seated):
        assert exposures(d).sum() >= bounds.total
        assert surplus(d).max() >= bounds.surplus


def test_the_default_is_reseated_and_reports_its_exposure():
    graph, C = GRAPHS["weights"]
    d = anondecomp.decompose(graph, C)
    assert "reseated" in d.info
    assert d.info["exposure"]["exposure_total"] == exposures(d).sum()
    assert anondecomp.verify(graph, C, d).valid
    text = d.summary()
    x = d.info["exposure"]
    assert f"exposure (blocks)    largest {x['exposure_max']}, mean {x['exposure_mean']:.1f}" in text
    assert f"surplus exposure     largest {x['surplus_max']} (certified minimum {x['surplus_bound']})" in text
    assert f"total exposure {x['exposure_total']} (certified minimum {x['exposure_total_bound']})" in text


@pytest.mark.parametrize("order", ["ratio", "surplus"])
def test_reseating_hides_the_users_a_group_does_not_need(order):
    """Two users want arm 0, two want arm 1, at C = 1, and every user may play any of 4 arms; the wasteful plan
    puts all four on arm 0, then all four on arm 1 (every user exposed twice). Re-seated, the two users a group
    does not need sit alone on free arms: nobody is exposed beyond its demand."""
    g = DemandGraph.from_weights(np.repeat(np.eye(4)[:2], 2, axis=0), support=np.ones((4, 4), bool))
    wasteful = Decomposition(g, 1, "hand", np.array([[0, 0, 0, 0], [1, 1, 1, 1]]), np.array([1, 1]))
    assert anondecomp.verify(g, 1, wasteful).valid and exposures(wasteful).tolist() == [2, 2, 2, 2]
    d = reseated(wasteful, order)
    assert d.total_assignments == 2 and anondecomp.verify(g, 1, d).valid
    assert exposures(d).tolist() == [1, 1, 1, 1]
    assert d.info["exposure"]["surplus_max"] == 0 and d.info["exposure"]["exposure_total"] == 4
    for row in d.assignments.tolist():  # the hidden users sit alone
        counts = np.bincount(row, minlength=4)
        assert sorted(counts.tolist()) == [0, 1, 1, 2]


def test_reseating_wasteful_random_decompositions():
    """A valid decomposition plus random extra blocks: re-seated, R is kept, it stays valid and releases no more."""
    for seed in range(12):
        rng = np.random.default_rng(seed)
        C = int(rng.integers(1, 3))
        graph = supported_graph(seed, int(rng.integers(C + 2, 12)), int(rng.integers(1, 4)), C)
        base = anondecomp.decompose(graph, C, "greedy")
        sup = graph.support
        extra = np.array([[rng.choice(np.flatnonzero(sup[i])) for i in range(graph.n_users)] for _ in range(4)])
        rows = np.concatenate([base.assignments, extra])
        mult = np.concatenate([base.multiplicities, rng.integers(1, 4, len(extra))])
        wasteful = Decomposition(graph, C, "hand", rows, mult)
        assert anondecomp.verify(graph, C, wasteful).valid
        for order in ("ratio", "surplus"):
            d = reseated(wasteful, order)
            assert d.total_assignments == wasteful.total_assignments
            assert anondecomp.verify(graph, C, d).valid
            assert exposures(d).sum() <= exposures(wasteful).sum()


def test_reseating_a_best_effort_decomposition_keeps_its_uncovered_pairs():
    # arm 2 is wanted by one user at C = 1: never coverable
    g = DemandGraph.from_weights([[2, 0, 1], [2, 1, 0], [1, 1, 0], [0, 2, 0]])
    plain = anondecomp.decompose(g, 1, "greedy", best_effort=True)
    d = reseated(plain)
    assert d.uncovered.tolist() == plain.uncovered.tolist() and len(d.uncovered) == 1
    assert d.total_assignments == plain.total_assignments
    assert anondecomp.verify(g, 1, d, best_effort=True).valid


# -- the certified bounds ------------------------------------------------------------------------------------------


def least_exposure(graph: DemandGraph, C: int) -> tuple[int, int]:
    """(least total exposure, least largest surplus exposure) over every decomposition of a tiny graph: an
    integer program over the multiplicities of every assignment (R free: a block that releases nothing costs
    nothing)."""
    N, K = graph.shape
    sup, req = graph.support, graph.required
    rows = np.array(list(itertools.product(*(np.flatnonzero(sup[i]) for i in range(N)))))
    counts = np.stack([np.bincount(r, minlength=K) for r in rows])
    exposed = (counts[np.arange(len(rows))[:, None], rows] >= C + 1).astype(float)  # (assignments, users)
    edges = np.argwhere(req > 0)
    cover = np.stack([exposed[:, i] * (rows[:, i] == j) for i, j in edges])
    need = req[edges[:, 0], edges[:, 1]]
    A = len(rows)
    total = milp(
        exposed.sum(axis=1),
        constraints=[LinearConstraint(cover, need, np.inf)],
        integrality=np.ones(A),
        bounds=Bounds(0, np.inf),
    )
    demand = user_demand(graph, C).astype(float)
    largest = milp(  # min t with exposure_i - demand_i <= t
        np.r_[np.zeros(A), 1.0],
        constraints=[
            LinearConstraint(np.c_[cover, np.zeros(len(cover))], need, np.inf),
            LinearConstraint(np.c_[exposed.T, -np.ones(N)], -np.inf, demand),
        ],
        integrality=np.r_[np.ones(A), 0],
        bounds=Bounds(np.r_[np.zeros(A), -np.inf], np.inf),
    )
    assert total.success and largest.success
    return round(total.fun), round(largest.fun)


@pytest.mark.parametrize("seed", range(16))
def test_exposure_bounds_are_below_the_optimum_of_tiny_graphs(seed):
    rng = np.random.default_rng(seed)
    C = int(rng.integers(1, 3))
    graph = supported_graph(seed, int(rng.integers(C + 1, 6)), int(rng.integers(1, 4)), C)
    bounds = exposure_bounds(graph, C)
    total, largest = least_exposure(graph, C)
    assert bounds.total <= total
    assert bounds.surplus <= largest
    assert bounds.total >= user_demand(graph, C).sum()  # every sample is a released block
    for method in ("auto", "greedy", "block", "sessions"):  # and no method beats the optimum
        d = anondecomp.decompose(graph, C, method, reseat=True)
        assert exposures(d).sum() >= total and surplus(d).max() >= largest


def test_exposure_bounds_by_hand():
    # C = 2. Arm a: users 0..2 want 3, 1, 1 -> m = 3 blocks of 3 users, 9 seats, 5 of them wanted: 4 spare seats
    # on 3 users (largest surplus >= 2; users 1 and 2 play only a: 3 - 1 = 2 each). Arm b: users 3..5 want
    # 2, 2, 1 -> 6 seats, 5 wanted: 1 spare. Total >= 10 + 5; largest >= 2.
    w = [[3, 0], [1, 0], [1, 0], [0, 2], [0, 2], [0, 1]]
    g = DemandGraph.from_weights(w)
    assert exposure_bounds(g, 2) == ExposureBounds(total=15, surplus=2)
    # every user plays one arm: arm b's three users are exposed in all 3 blocks arm a needs (total 18); the
    # largest surplus bound is attained
    assert least_exposure(g, 2) == (18, 2)
    d = anondecomp.decompose(g, 2, max_surplus_exposure=2)
    assert anondecomp.verify(g, 2, d).valid
    assert surplus(d).max() == 2 and exposures(d).sum() == 18


def test_exposure_bounds_attained_on_a_batched_graph():
    # C = 2, three users on one arm, demand 3: every block is one group of 3, no spare seat
    g = DemandGraph.from_batched(3, np.ones((3, 1), bool))
    assert exposure_bounds(g, 2) == ExposureBounds(total=9, surplus=0)
    assert least_exposure(g, 2) == (9, 0)
    d = anondecomp.decompose(g, 2, max_surplus_exposure=0)
    assert exposures(d).tolist() == [3, 3, 3] and anondecomp.verify(g, 2, d).valid


def test_exposure_bounds_attained_on_two_users():
    # C = 1: user 0 wants 2 samples of arm a, user 1 one; user 1 must pad the second block: surplus 1, total 4
    g = DemandGraph.from_weights([[2], [1]])
    bounds = exposure_bounds(g, 1)
    assert (bounds.total, bounds.surplus) == (4, 1)
    assert least_exposure(g, 1) == (4, 1)
    d = anondecomp.decompose(g, 1)
    assert exposures(d).tolist() == [2, 2] and surplus(d).tolist() == [0, 1]
    assert anondecomp.decompose(g, 1, max_surplus_exposure=1).info["max_surplus_exposure"] == 1
    with pytest.raises(InfeasibleError) as exc:
        anondecomp.decompose(g, 1, max_surplus_exposure=0)
    assert re.fullmatch(
        r"max_surplus_exposure 0 is below 1, the certified least largest surplus exposure of this graph at C = 1",
        one_line(exc),
    )


def test_exposure_bounds_hold_under_best_effort():
    # C = 1: arm z is wanted by user 1 alone (never coverable); user 1 must still pad user 0's 3 blocks of arm a
    # (its demand on z is not counted: exposure is measured against the demand a decomposition can meet)
    g = DemandGraph.from_weights([[3, 0], [1, 5]], arms=["a", "z"])
    d = anondecomp.decompose(g, 1, best_effort=True)
    assert anondecomp.verify(g, 1, d, best_effort=True).valid
    bounds = exposure_bounds(g, 1)
    assert bounds == ExposureBounds(total=6, surplus=1)
    assert exposures(d).sum() >= bounds.total and surplus(d).max() >= bounds.surplus
    assert surplus(d).tolist() == [0, 2]  # user 1 sits in all 3 blocks of arm a for its 1 sample
    capped = anondecomp.decompose(g, 1, best_effort=True, max_surplus_exposure=2)
    assert anondecomp.verify(g, 1, capped, best_effort=True).valid
    with pytest.raises(InfeasibleError, match="below 1, the certified"):
        anondecomp.decompose(g, 1, best_effort=True, max_surplus_exposure=0)


# -- max_surplus_exposure ------------------------------------------------------------------------------------------

LOG = powerlaw_log(59, 17, 2, 120)  # at C = 2 the default's largest surplus is above 1, a cap of 1 is reachable


def test_a_cap_on_the_surplus_is_met():
    default = anondecomp.decompose(LOG, 2)
    assert surplus(default).max() > 1  # the cap binds
    d = anondecomp.decompose(LOG, 2, max_surplus_exposure=1)
    assert (surplus(d) <= 1).all()
    assert d.info["max_surplus_exposure"] == 1 and d.info["exposure"]["surplus_max"] <= 1
    report = anondecomp.verify(LOG, 2, d)  # reads the cap from info
    assert report.valid and report.max_surplus_exposure == 1 and report.n_over_exposure == 0
    assert d.total_assignments >= LOG.lower_bound


@pytest.mark.parametrize("method", ["auto", "greedy", "block", "slack", "sessions"])
def test_a_cap_at_the_default_surplus_is_met_by_every_method(method):
    graph, C = GRAPHS["support"]
    S = int(surplus(anondecomp.decompose(graph, C, method, reseat=True)).max())
    d = anondecomp.decompose(graph, C, method, max_surplus_exposure=S)
    assert (surplus(d) <= S).all() and anondecomp.verify(graph, C, d).valid
    assert d.info["max_surplus_exposure"] == S


def test_a_cap_below_the_certified_bound_is_infeasible():
    graph, C = GRAPHS["weights"]
    bound = exposure_bounds(graph, C).surplus
    assert bound >= 1
    with pytest.raises(InfeasibleError) as exc:
        anondecomp.decompose(graph, C, max_surplus_exposure=bound - 1)
    assert re.fullmatch(
        rf"max_surplus_exposure {bound - 1} is below {bound}, the certified least largest surplus exposure of this "
        rf"graph at C = {C}",
        one_line(exc),
    )


def test_an_unreachable_cap_names_the_least_found_which_is_then_met():
    graph, C = GRAPHS["weights"]
    bound = exposure_bounds(graph, C).surplus
    with pytest.raises(MethodNotApplicableError) as exc:
        anondecomp.decompose(graph, C, max_surplus_exposure=bound)
    match = re.fullmatch(
        rf"no decomposition found with every user's surplus exposure <= {bound}: the least largest surplus found "
        rf"is (\d+) \(the certified minimum is {bound}\)",
        one_line(exc),
    )
    assert match, str(exc.value)
    least = int(match.group(1))
    assert least > bound
    d = anondecomp.decompose(graph, C, max_surplus_exposure=least)  # the least found is reachable
    assert surplus(d).max() == least and anondecomp.verify(graph, C, d).valid
    with pytest.raises(MethodNotApplicableError, match=f"found is {least} "):
        anondecomp.decompose(graph, C, max_surplus_exposure=least - 1)


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, np.nan, [1]])
def test_a_bad_cap_is_refused_naming_it(bad):
    graph, C = GRAPHS["full"]
    with pytest.raises(InvalidInputError, match="^max_surplus_exposure must be an integer >= 0") as exc:
        anondecomp.decompose(graph, C, max_surplus_exposure=bad)
    one_line(exc)


def test_a_cap_with_absence_is_refused():
    graph, C = GRAPHS["full"]
    with pytest.raises(InvalidInputError) as exc:
        anondecomp.decompose(graph, C, max_surplus_exposure=5, absence=0.1)
    assert one_line(exc) == "max_surplus_exposure cannot be combined with an absence above 0"
    d = anondecomp.decompose(graph, C, max_surplus_exposure=5, absence=0.0)  # no absence: allowed
    assert anondecomp.verify(graph, C, d).valid


# -- verify: users above a cap -------------------------------------------------------------------------------------


def test_verify_reports_every_user_above_a_cap():
    graph, C = GRAPHS["weights"]
    d = anondecomp.decompose(graph, C)
    s = surplus(d)
    S = int(s.max()) - 1
    above = {(graph.users[i], int(s[i])) for i in np.flatnonzero(s > S)}
    report = anondecomp.verify(graph, C, d, max_surplus_exposure=S)
    assert not report.valid
    assert report.n_over_exposure == len(above) > 0
    assert set(report.over_exposure) == above
    assert report.n_short == 0 and report.n_off_support == 0  # only the cap makes it invalid
    assert f"max surplus exposure {S}: {len(above)} user(s) above it" in report.summary()
    assert anondecomp.verify(graph, C, d, max_surplus_exposure=S + 1).valid
    # the cap read from info, an explicit one wins, arrays carry none
    capped = replace(d, info={**d.info, "max_surplus_exposure": S})
    from_info = anondecomp.verify(graph, C, capped)
    assert not from_info.valid and from_info.n_over_exposure == len(above) and from_info.max_surplus_exposure == S
    assert anondecomp.verify(graph, C, capped, max_surplus_exposure=S + 1).valid
    bare = anondecomp.verify(graph, C, d.assignments, d.multiplicities)
    assert bare.valid and bare.max_surplus_exposure is None


def test_verify_counts_exposure_exactly_beyond_int64():
    """Multiplicities of 2^62: verify counts each user's exposure in Python integers."""
    g = DemandGraph.from_weights([[1, 0], [1, 0], [0, 1], [0, 1]])
    d = Decomposition(g, 1, "hand", np.array([[0, 0, 1, 1], [0, 0, 1, 1]]), np.array([2**62, 2**62]))
    report = anondecomp.verify(g, 1, d, max_surplus_exposure=2**63 - 2)
    assert report.n_over_exposure == 4 and report.over_exposure[0] == ("u0", 2**63 - 1)
    assert anondecomp.verify(g, 1, d, max_surplus_exposure=2**63 - 1).n_over_exposure == 0


def test_exposures_beyond_int64_are_not_negative():
    g = DemandGraph.from_weights([[1, 0], [1, 0], [0, 1], [0, 1]])
    d = Decomposition(g, 1, "hand", np.array([[0, 0, 1, 1], [0, 0, 1, 1]]), np.array([2**62, 2**62]))
    assert (exposures(d) > 0).all()


@pytest.mark.parametrize("bad", [None, 3, "x", np.zeros((2, 2))])
def test_exposures_refuses_a_non_decomposition(bad):
    with pytest.raises(InvalidInputError, match="^decomposition must be an anondecomp.Decomposition") as exc:
        exposures(bad)
    one_line(exc)


@pytest.mark.parametrize("bad", [None, 0, 1.5, "1"])
def test_exposure_bounds_refuses_bad_arguments(bad):
    graph, _ = GRAPHS["full"]
    with pytest.raises(InvalidInputError, match="^C must be an integer >= 1"):
        exposure_bounds(graph, bad)
    with pytest.raises(InvalidInputError, match="^graph must be an anondecomp.DemandGraph"):
        exposure_bounds(bad, 1)
