"""The experiment runner: grids, the results table, the CLI, and local vs Dask backends agreeing."""

import csv
import math

import pytest

from anonbandits.cli.main import main
from anonbandits.experiments import load_grid, run_tasks, tasks_from_grid, write_table

DOCUMENTED = ["algorithm", "decomposer", "seed", "users", "arms", "C", "horizon", "regret", "observations",
              "min_group_size", "wall_time"]

GRID_TOML = """
seeds = 2
[defaults]
users = 40
arms = 2
C = 2
horizon = 6000
[[runs]]
algorithm = "anon-batched"
decomposer = ["polytope", "greedy"]
[[runs]]
algorithm = "anon-etc"
explore_scale = [1.0]
"""


def _grid(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(GRID_TOML)
    return path


def _comparable(results):
    return [{k: v for k, v in r.row.items() if k != "wall_time"} for r in results]


def test_grid_expands_and_table_has_documented_columns(tmp_path):
    tasks = tasks_from_grid(load_grid(_grid(tmp_path)))
    assert [(t.algorithm, t.params.get("decomposer"), t.seed) for t in tasks] == [
        ("anon-batched", "polytope", 0), ("anon-batched", "polytope", 1),
        ("anon-batched", "greedy", 0), ("anon-batched", "greedy", 1),
        ("anon-etc", None, 0), ("anon-etc", None, 1)]
    results = run_tasks(tasks, workers=1, progress=False)
    out = write_table([r.row for r in results], tmp_path / "t.csv")
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    assert set(DOCUMENTED) <= set(rows[0])
    assert len(rows) == 6
    for row in rows:
        assert float(row["regret"]) > 0 and int(row["observations"]) > 0
        assert int(row["min_group_size"]) >= int(row["C"])
        assert float(row["wall_time"]) >= 0 and int(row["horizon"]) == 6000
    assert [r.label for r in results] == ["anon-batched/polytope"] * 2 + ["anon-batched/greedy"] * 2 \
        + ["anon-etc"] * 2


def test_cli_simulate_writes_table_and_plot(tmp_path, capsys):
    out, plot = tmp_path / "r.csv", tmp_path / "r.png"
    code = main(["simulate", "--algorithm", "anon-batched", "--decomposer", "polytope", "--users", "60",
                 "--arms", "3", "--C", "2", "--cluster", "12", "--horizon", "20000", "--seeds", "2",
                 "--workers", "1", "--no-progress", "--out", str(out), "--plot", str(plot)])
    assert code == 0
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    assert [r["seed"] for r in rows] == ["0", "1"] and rows[0]["decomposer"] == "polytope"
    assert plot.stat().st_size > 1000
    assert "anon-batched: 2 runs" in capsys.readouterr().out
    code = main(["simulate", "--config", str(_grid(tmp_path)), "--workers", "1", "--no-progress",
                 "--out", str(tmp_path / "g.csv")])
    assert code == 0


def test_cli_reports_bad_parameters_in_one_line(capsys):
    code = main(["simulate", "--algorithm", "anon-batched", "--users", "10", "--arms", "5", "--cluster", "3",
                 "--seeds", "1", "--workers", "1", "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "exceeds users" in err


def test_local_processes_and_dask_give_the_same_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    tasks = tasks_from_grid(load_grid(_grid(tmp_path)))
    local = run_tasks(tasks, workers=2, progress=False)
    serial = run_tasks(tasks, workers=1, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        remote = run_tasks(tasks, scheduler=cluster.scheduler_address, progress=False)
    assert _comparable(local) == _comparable(remote) == _comparable(serial)
    for a, b in zip(local, remote, strict=True):
        assert a.label == b.label
        assert (a.curve[0] == b.curve[0]).all() and (a.curve[1] == b.curve[1]).all()
        assert not math.isnan(a.row["regret"])
