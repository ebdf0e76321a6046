"""The experiment runner: grids, the results table, the CLI, and local vs Dask backends agreeing."""

import csv
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from contextlib import closing

import pytest

from anonbandits.cli.main import main
from anonbandits.experiments import load_grid, run_tasks, tasks_from_grid, write_table
from anonbandits.experiments.runner import Progress, iter_results

DOCUMENTED = [
    "algorithm",
    "decomposer",
    "seed",
    "users",
    "arms",
    "C",
    "horizon",
    "regret",
    "observations",
    "min_group_size",
    "wall_time",
]

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
        ("anon-batched", "polytope", 0),
        ("anon-batched", "polytope", 1),
        ("anon-batched", "greedy", 0),
        ("anon-batched", "greedy", 1),
        ("anon-etc", None, 0),
        ("anon-etc", None, 1),
    ]
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
    assert [r.label for r in results] == ["anon-batched/polytope"] * 2 + ["anon-batched/greedy"] * 2 + ["anon-etc"] * 2


def test_cli_simulate_writes_table_and_plot(tmp_path, capsys):
    out, plot = tmp_path / "r.csv", tmp_path / "r.png"
    code = main(
        [
            "simulate",
            "--algorithm",
            "anon-batched",
            "--decomposer",
            "polytope",
            "--users",
            "60",
            "--arms",
            "3",
            "--C",
            "2",
            "--cluster",
            "12",
            "--horizon",
            "20000",
            "--seeds",
            "2",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(out),
            "--plot",
            str(plot),
        ]
    )
    assert code == 0
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    assert [r["seed"] for r in rows] == ["0", "1"] and rows[0]["decomposer"] == "polytope"
    assert plot.stat().st_size > 1000
    assert "anon-batched: 2 runs" in capsys.readouterr().out
    code = main(
        [
            "simulate",
            "--config",
            str(_grid(tmp_path)),
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "g.csv"),
        ]
    )
    assert code == 0


def test_cli_reports_bad_parameters_in_one_line(capsys):
    code = main(
        [
            "simulate",
            "--algorithm",
            "anon-batched",
            "--users",
            "10",
            "--arms",
            "5",
            "--cluster",
            "3",
            "--seeds",
            "1",
            "--workers",
            "1",
            "--no-progress",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "exceeds users" in err


def test_local_processes_and_dask_give_the_same_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    tasks = tasks_from_grid(load_grid(_grid(tmp_path)))
    local = run_tasks(tasks, workers=2, progress=False)
    serial = run_tasks(tasks, workers=1, progress=False)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        remote = run_tasks(tasks, scheduler=cluster.scheduler_address, progress=False)
        # stopping early (what Ctrl-C does) cancels the queued futures and returns at once
        started = time.monotonic()
        with closing(iter_results(tasks, scheduler=cluster.scheduler_address)) as results:
            i, first = next(results)
        assert first.row == remote[i].row | {"wall_time": first.row["wall_time"]}
        assert time.monotonic() - started < 10
    assert _comparable(local) == _comparable(remote) == _comparable(serial)
    for a, b in zip(local, remote, strict=True):
        assert a.label == b.label
        assert (a.curve[0] == b.curve[0]).all() and (a.curve[1] == b.curve[1]).all()
        assert not math.isnan(a.row["regret"])


FAST_GRID = """
seeds = 15
[[runs]]
algorithm = "hybrid-ucb"
horizon = [60000, 90000]
"""


def _rows(path):
    """A table's rows without wall_time, sorted: comparable across interrupted and uninterrupted runs."""
    with open(path, newline="") as fh:
        return sorted(tuple(sorted((k, v) for k, v in row.items() if k != "wall_time")) for row in csv.DictReader(fh))


def _interrupt(tmp_path, sig):
    """Start a grid in a child process, send ``sig`` once the first run is reported, return (code, stderr, s)."""
    (tmp_path / "grid.toml").write_text(FAST_GRID)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # a terminal's Ctrl-C reaches a command whose SIGINT is not ignored; a test run started in the background
    # of a non-interactive shell inherits an ignored SIGINT, so the child gets the default back first
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "anonbandits.cli.main",
            "simulate",
            "--config",
            "grid.toml",
            "--out",
            "r.csv",
            "--workers",
            "2",
        ],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = child.stderr.readline()
        assert first.startswith("runs: 1/30 done"), first
        child.send_signal(sig)
        sent = time.monotonic()
        code = child.wait(timeout=30)
        return code, child.stderr.read(), time.monotonic() - sent
    finally:
        child.kill()
        child.stderr.close()


def test_sigint_keeps_finished_runs_and_resume_completes_the_table(tmp_path, capsys, monkeypatch):
    code, err, took = _interrupt(tmp_path, signal.SIGINT)
    assert code == 130 and took < 5, (code, took)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--resume" in lines[0] and "r.csv" in lines[0], lines
    partial = _rows(tmp_path / "r.csv")
    assert 0 < len(partial) < 30
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]

    monkeypatch.chdir(tmp_path)
    assert (
        main(["simulate", "--config", "grid.toml", "--out", "r.csv", "--workers", "2", "--resume", "--no-progress"])
        == 0
    )
    assert f"resumed: {len(partial)} runs were already in r.csv, {30 - len(partial)} run now" in capsys.readouterr().out
    tasks = tasks_from_grid(load_grid(tmp_path / "grid.toml"))
    write_table([r.row for r in run_tasks(tasks, workers=1, progress=False)], tmp_path / "full.csv")
    resumed = _rows(tmp_path / "r.csv")
    assert resumed == _rows(tmp_path / "full.csv") and len(resumed) == 30
    assert set(partial) <= set(resumed)


def test_sigterm_stops_like_ctrl_c(tmp_path):
    code, err, took = _interrupt(tmp_path, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM and took < 5, (code, took)
    assert "interrupted" in err and 0 < len(_rows(tmp_path / "r.csv")) < 30


def test_resume_skips_runs_already_in_a_jsonl_table(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    base = [
        "simulate",
        "--algorithm",
        "anon-etc",
        "--users",
        "40",
        "--arms",
        "2",
        "--C",
        "2",
        "--horizon",
        "3000",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(out),
        "--seeds",
    ]
    assert main([*base, "2"]) == 0
    first = out.read_text().splitlines()
    assert main([*base, "4", "--resume"]) == 0
    assert "2 runs were already in" in capsys.readouterr().out
    lines = out.read_text().splitlines()
    assert lines[:2] == first and [json.loads(line)["seed"] for line in lines] == [0, 1, 2, 3]
    # another parameter value is another run, not a duplicate
    assert main([*base, "1", "--gap", "0.2", "--resume"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["gap"], r["seed"]) for r in rows] == [(0.1, 0), (0.1, 1), (0.1, 2), (0.1, 3), (0.2, 0)]


def test_progress_off_a_terminal_is_plain_lines():
    stream = io.StringIO()
    bar = Progress(5, stream=stream, interval=0.0)
    for _ in range(5):
        bar.update()
    bar.close()
    assert "\r" not in stream.getvalue()
    assert stream.getvalue().splitlines()[0].startswith("runs: 1/5 done")
    assert len(stream.getvalue().splitlines()) == 4  # nothing once every run is done


def test_a_failing_run_keeps_the_finished_ones(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'seeds = 2\n[[runs]]\nalgorithm = "se"\nhorizon = 2000\n[[runs]]\nalgorithm = "se"\nmeans = "0.5,1.5"\n'
    )
    out = tmp_path / "r.csv"
    assert main(["simulate", "--config", str(grid), "--workers", "1", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "outside [0, 1]" in err and "--resume" in err
    assert len(_rows(out)) == 2
