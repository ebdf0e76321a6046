"""Best-effort decompositions can be checked: every coverable pair is covered, and only uncoverable pairs
(on arms wanted by at most C users) are left out (``verify(..., best_effort=True)``, ``verify --best-effort``)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from anonbandits.cli.main import main
from anondecomp import DemandGraph, MethodNotApplicableError, decompose, verify
from anondecomp.compact import verify_compact
from anondecomp.io import write_decomposition
from anondecomp.result import Decomposition
from anondecomp.verify import coverage
from tests.solvers.strategies import batched_graphs

METHODS = ("greedy", "block", "polytope", "randomized", "auto")

# arm a is wanted by 4 users, arm z by u3 alone: with C = 2, (u3, z) can never be covered; D = 4
THIN = DemandGraph.from_batched(
    4, np.array([[1, 0], [1, 0], [1, 0], [1, 1]], bool), ["u0", "u1", "u2", "u3"], ["a", "z"]
)


def _decomposition(rows: list[list[int]], mults: list[int]) -> Decomposition:
    return Decomposition._unchecked(THIN, 2, "by hand", np.array(rows), np.array(mults, dtype=np.int64))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=batched_graphs(feasible=False))
def test_best_effort_covers_every_coverable_pair(case):
    """Every method: each pair whose arm has at least C+1 users with demand gets ceil(w_ij) informative samples
    (counted directly, not through verify), and the pairs left out are exactly the others."""
    graph, C = case
    wanted = (graph.required > 0).sum(axis=0)
    coverable = (wanted >= C + 1)[None, :] & (graph.required > 0)
    for method in METHODS:
        try:
            res = decompose(graph, C, method, best_effort=True)
        except MethodNotApplicableError:  # polytope's own condition on the coverable arms, named by the error
            assert method == "polytope"
            continue
        got = coverage(res.assignments, res.multiplicities, C, graph.n_arms)
        short = np.argwhere(coverable & (got < graph.required))
        assert not len(short), f"{method} left coverable pairs short: {short.tolist()}"
        assert {tuple(p) for p in res.uncovered} == {tuple(p) for p in np.argwhere(~coverable & (graph.required > 0))}
        report = verify(graph, C, res, best_effort=True)
        assert report.valid, report.summary()
        assert report.n_uncoverable == len(res.uncovered)
        assert set(report.uncoverable) == {(graph.users[i], graph.arms[j]) for i, j in res.uncovered}


def test_verify_best_effort_accepts_exactly_what_covers_the_coverable_pairs():
    everyone_on_a = _decomposition([[0, 0, 0, 0]], [4])
    plain = verify(THIN, 2, everyone_on_a)
    assert not plain.valid and plain.deficits == [("u3", "z", 2, 0)]
    report = verify(THIN, 2, everyone_on_a, best_effort=True)
    assert report.valid and report.uncoverable == [("u3", "z")] and report.n_uncoverable == 1
    assert "1 pair(s) not coverable" in report.summary() and "(u3, z)" in report.summary()


@pytest.mark.parametrize(
    "rows, mults, short",
    [
        ([[0, 0, 0, 0]], [3], [("u0", "a", 4, 3), ("u1", "a", 4, 3), ("u2", "a", 4, 3)]),  # one round too few
        ([[0, 0, 0, 1], [0, 0, 0, 0]], [3, 1], [("u3", "a", 2, 1)]),  # u3 sent to its uncoverable arm instead
        ([[0, 0, 0, 1]], [4], [("u3", "a", 2, 0)]),  # the others are served (a holds C+1 = 3), u3 is not
    ],
)
def test_verify_best_effort_refuses_a_coverable_pair_short(tmp_path, rows, mults, short):
    res = _decomposition(rows, mults)
    report = verify(THIN, 2, res, best_effort=True)
    assert not report.valid and report.deficits == short
    write_decomposition(res, tmp_path / "d.parquet")
    compact = verify_compact(THIN, 2, tmp_path / "d.parquet", best_effort=True)
    assert not compact.valid and compact.deficits == short and compact.uncoverable == [("u3", "z")]


def test_the_command_line_checks_a_best_effort_output(tmp_path, capsys):
    """decompose --best-effort's outputs (JSON and Parquet) fail plain verify with a hint, pass --best-effort;
    a schedule short on a coverable pair fails --best-effort with one stderr line."""
    graph = tmp_path / "g.json"
    graph.write_text('{"C": 2, "demand": 4, "active_sets": {"u0": ["a"], "u1": ["a"], "u2": ["a"], "u3": ["a", "z"]}}')
    for name in ("d.json", "d.parquet", "parts/"):
        assert main(["decompose", str(graph), "--best-effort", "-o", f"{tmp_path}/{name}"]) == 0
        capsys.readouterr()
        assert main(["verify", str(graph), str(tmp_path / name)]) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "--best-effort checks every other pair" in err
        assert main(["verify", str(graph), str(tmp_path / name), "--best-effort"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("valid (best effort)") and "1 pair(s) not coverable" in out and "(u3, z)" in out
    write_decomposition(_decomposition([[0, 0, 0, 1], [0, 0, 0, 0]], [3, 1]), tmp_path / "short.parquet")
    assert main(["verify", str(graph), str(tmp_path / "short.parquet"), "--best-effort"]) == 1
    captured = capsys.readouterr()
    assert "user 'u3', arm 'a': 1 informative samples, needs 2" in captured.out
    assert captured.err.strip() == (
        "anonbandits verify: invalid decomposition: 1 pair(s) short of their demand, 0 placement(s) off a user's arms"
    )
