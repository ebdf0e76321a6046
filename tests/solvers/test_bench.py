"""The solver benchmark: families are U-batched as labelled, every row of small suite graphs verifies, and
the ``bench`` command writes its table and plot."""

import csv

import numpy as np
import pytest

from anonbandits.cli.main import main
from anondecomp import check_u_batched
from anondecomp.bench import families as fam
from anondecomp.bench.suite import COLUMNS, cases, run_case

SMALL = [c for c in cases("quick") if c.family in ("scarce", "niche-groups", "alg1")][:12]


@pytest.mark.parametrize(
    "make",
    [
        lambda: fam.abundant(200, 4, 3, 50, seed=0),
        lambda: fam.scarce(80, 6, 3, 8, 100, seed=2),
        lambda: fam.niche_groups(6, 2, 2, 60, seed=1),
        lambda: fam.alg1_synth(300, 5, 3, 50, seed=0, batch=2),
        lambda: fam.recorded(3)[0],
    ],
)
def test_families_are_u_batched_and_deterministic(make):
    inst = make()
    assert check_u_batched(inst.graph.support, inst.U).size == 0
    assert inst.U >= inst.C + 1
    assert np.array_equal(make().graph.support, inst.graph.support)


def test_scarce_family_is_below_k_c_plus_1_and_abundant_above():
    s, a = fam.scarce(80, 6, 3, 8, 100, seed=0), fam.abundant(2000, 5, 3, 100, seed=0)
    assert s.U < s.graph.n_arms * (s.C + 1) <= a.U


@pytest.mark.parametrize("case", SMALL, ids=lambda c: f"{c.family} {c.label}")
def test_every_benchmark_row_verifies(case):
    rows = run_case(case, time_limit=20.0)
    assert [r["method"] for r in rows] == ["greedy", "block", "polytope", "randomized", "optimal"]
    bound = rows[0]["lp_lower_bound"]
    for row in rows:
        assert set(COLUMNS) <= set(row)
        if row["status"] == "ok":
            assert row["verified"] is True
            assert bound <= row["total_assignments"] + 1e-6
            assert row["lower_bound"] <= row["total_assignments"]
        else:
            assert row["method"] == "polytope" and row["status"] == "not applicable"
    opt = next(r for r in rows if r["method"] == "optimal")
    assert opt["total_assignments"] == min(r["total_assignments"] for r in rows if r["status"] == "ok")


def test_cli_bench_writes_table_and_plot(tmp_path, capsys):
    out, png = tmp_path / "b.csv", tmp_path / "b.png"
    code = main(
        [
            "bench",
            "--suite",
            "quick",
            "--families",
            "niche-groups",
            "--methods",
            "block,optimal",
            "--out",
            str(out),
            "--plot",
            str(png),
        ]
    )
    assert code == 0
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * len([c for c in cases("quick") if c.family == "niche-groups"])
    assert all(r["verified"] == "True" for r in rows)
    assert png.stat().st_size > 1000
    assert "optimal" in capsys.readouterr().out
    assert main(["bench", "--methods", "simplex"]) == 2
