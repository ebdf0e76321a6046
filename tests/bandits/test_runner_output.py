"""Output that tells the truth: what ``simulate`` and ``bench`` write says what ran.

* plots and summaries have one line per configuration (the varying parameters in the label) and one panel per
  quantity; counts are drawn as steps with their hold points; bands stay within the quantity's range;
* the table records the instance that ran (a means file's users and arms);
* a flag on the command line beats the grid file;
* progress off a terminal: a line at least every interval, with an ETA;
* every subcommand writes the format its output's extension names, or refuses it;
* ``bench`` runs every ``decompose`` method, takes ``--no-progress``, refuses to replace an output without
  ``--force``, keeps its finished rows on Ctrl-C; bare ``anonbandits`` prints its usage; the README's algorithm
  table names every registered algorithm.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import anondecomp
from anonbandits import registry
from anonbandits.cli import bench as bench_cli
from anonbandits.cli.main import build_parser, main
from anonbandits.experiments import Task, curves_figure, run_task, run_tasks, runner, tasks_from_grid
from anonbandits.experiments.plot import QUANTITIES, hold_points
from anonbandits.experiments.runner import Progress, TaskResult, duration
from anonbandits.experiments.table import configuration_labels
from anonbandits.results import Result

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def _table(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _fake(algorithm: str, seed: int, x, y, axes: tuple[str, str], label: str | None = None, **params) -> TaskResult:
    """A finished run with a given curve (the plot reads the row, the curve, its axes and its label only)."""
    return TaskResult(
        row={"algorithm": algorithm, **params, "seed": seed},
        result=Result(
            metrics={}, curve=(np.asarray(x), np.asarray(y, float)), label=label or algorithm, curve_axes=axes
        ),
    )


REGRET = ("round", "cumulative pseudo-regret")
ARMS_LEFT = ("round", "arms left in the global set")
EXPLORING = ("round", "users still exploring")
FRACTION = ("global step", "fraction of players holding one arm")


def _bands(ax) -> list[np.ndarray]:
    """The vertices of each band (fill_between's PolyCollection) of a panel."""
    return [path.vertices for coll in ax.collections for path in coll.get_paths()]


# -- one line and one summary per configuration -----------------------------------------------------------------

SWEEP = {
    "seeds": 2,
    "runs": [{"algorithm": "anon-etc", "users": 40, "arms": 2, "horizon": 3000, "C": [1, 5], "explore_scale": 1.0}],
}


def test_a_swept_parameter_gives_one_line_per_configuration():
    figure = curves_figure(run_tasks(tasks_from_grid(SWEEP), workers=1, progress=False))
    (ax,) = figure.axes
    assert [line.get_label() for line in ax.get_lines()] == ["anon-etc [C=1] (n=2)", "anon-etc [C=5] (n=2)"]
    assert len(ax.collections) == 2  # one band each, not one spanning both values of C


def test_a_swept_parameter_of_mase_gives_one_line_per_value():
    runs = [
        _fake("mase", s, [0, 100 * u, 100 * u], [10, 10, 1], ARMS_LEFT, users=u, arms=10)
        for u in (16, 32)
        for s in range(3)
    ]
    (ax,) = curves_figure(runs).axes
    assert [line.get_label() for line in ax.get_lines()] == ["mase [users=16] (n=3)", "mase [users=32] (n=3)"]


def test_labels_name_only_the_parameters_that_vary_within_a_label():
    rows = [
        {"algorithm": "anon-batched", "decomposer": d, "C": 3, "seed": s}
        for d in ("polytope", "greedy")
        for s in (0, 1)
    ]
    # the decomposer is in the curve's label already: within a label nothing varies
    assert (
        configuration_labels(rows, [f"anon-batched/{r['decomposer']}" for r in rows])
        == ["anon-batched/polytope"] * 2 + ["anon-batched/greedy"] * 2
    )
    # by algorithm (the summary), the decomposer is what varies; CSV text and Python values compare alike
    rows[1] = {k: str(v) for k, v in rows[1].items()}
    assert (
        configuration_labels(rows, ["anon-batched"] * 4)
        == ["anon-batched [decomposer=polytope]"] * 2 + ["anon-batched [decomposer=greedy]"] * 2
    )


def test_the_summary_has_one_line_per_configuration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text(
        'seeds = 2\n[[runs]]\nalgorithm = "anon-etc"\nusers = 40\narms = 2\n'
        "horizon = 3000\nexplore_scale = 1.0\nC = [1, 5]\n"
    )
    code, out, err = _run(["simulate", "--config", "g.toml", "--workers", "1", "--no-progress"])
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["anon-etc [C=1]", "anon-etc [C=5]"]
    assert all(
        re.fullmatch(r"anon-etc \[C=[15]\]: 2 runs, mean regret=\S+, observations=\S+, wall_time=\S+", line)
        for line in lines
    ), lines
    # a resumed table (text values read back) groups its kept rows with the new ones
    (tmp_path / "g.toml").write_text((tmp_path / "g.toml").read_text().replace("seeds = 2", "seeds = 3"))
    code, out, _ = _run(["simulate", "--config", "g.toml", "--workers", "1", "--no-progress", "--out", "r.csv"])
    code, out, err = _run(
        ["simulate", "--config", "g.toml", "--workers", "1", "--no-progress", "--out", "r.csv", "--resume"]
    )
    assert code == 0, err
    assert [line.split(":")[0] for line in out.splitlines()[1:]] == ["anon-etc [C=1]", "anon-etc [C=5]"]
    assert "anon-etc [C=1]: 3 runs" in out


def test_one_panel_per_quantity():
    runs = [_fake("anon-etc", s, [0, 10, 20], [0, 5, 9 + s], REGRET) for s in range(2)]
    runs += [_fake("mase", s, [0, 15, 15], [10, 10, 2], ARMS_LEFT, arms=10) for s in range(2)]
    figure = curves_figure(runs)
    assert [ax.get_ylabel() for ax in figure.axes] == ["cumulative pseudo-regret", "arms left in the global set"]
    assert [[line.get_label() for line in ax.get_lines()] for ax in figure.axes] == [["anon-etc (n=2)"], ["mase (n=2)"]]


def test_every_registered_curve_is_a_known_quantity():
    names = {spec.curve_axes[1] for spec in registry.all_algorithms().values()}
    assert names <= set(QUANTITIES), names - set(QUANTITIES)


# -- steps with their hold points --------------------------------------------------------------------------------


def _sloped(x: np.ndarray, y: np.ndarray) -> list[int]:
    """Segments of a polyline that change x and y at once (a step drawn as a slope)."""
    return [k for k in range(len(x) - 1) if x[k + 1] > x[k] and y[k + 1] != y[k]]


def test_a_count_is_drawn_as_steps_with_hold_points():
    # what anon-bai's stop curve records: every user stops at the batch end 393,216; no point in between
    runs = [_fake("anon-bai", s, [0, 393_216, 393_216, 393_216], [60, 59, 2, 2], EXPLORING, users=60) for s in range(2)]
    (ax,) = curves_figure(runs).axes
    (line,) = ax.get_lines()
    assert line.get_drawstyle() == "steps-post"
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    assert not _sloped(x, y), list(zip(x, y, strict=True))
    assert y[0] == 60 and y[x < 393_216].min() == 60  # nobody stops before round 393,216
    assert (x == 393_216).sum() >= 2 and y[-1] == 2  # the hold point, then the fall
    for vertices in _bands(ax):  # the band holds too: no edge of it slopes
        assert not [
            k
            for k in range(len(vertices) - 1)
            if vertices[k + 1, 0] != vertices[k, 0] and vertices[k + 1, 1] != vertices[k, 1]
        ]


def test_anon_bai_runs_plot_their_stop_curve_as_steps():
    spec = registry.get("anon-bai")
    runs = [run_task(Task("anon-bai", spec.resolve({"users": 60, "arms": 3, "C": 2}), seed)) for seed in (0, 1)]
    first_stop = min(float(r.curve[0][1]) for r in runs)
    (ax,) = curves_figure(runs).axes
    (line,) = ax.get_lines()
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    assert line.get_drawstyle() == "steps-post" and not _sloped(x, y)
    assert (y[x < first_stop] == 60).all() and first_stop > 0
    # the stored curve has no hold point (it falls from 60 at round 0): the plot adds them, the curve is untouched
    assert _sloped(*(np.asarray(v, float) for v in runs[0].curve)) == [0]


def test_regret_is_drawn_point_to_point():
    runs = [_fake("anon-etc", s, [0, 10, 20], [0, 5, 9 + s], REGRET) for s in range(2)]
    (line,) = curves_figure(runs).axes[0].get_lines()
    assert line.get_drawstyle() == "default" and list(line.get_xdata()) == [0, 10, 20]


def test_hold_points():
    x, y = hold_points(np.array([0, 5, 9]), np.array([3.0, 2.0, 0.0]))
    assert x.tolist() == [0, 5, 5, 9, 9] and y.tolist() == [3, 3, 2, 2, 0]


# -- bands within the quantity's range --------------------------------------------------------------------------


def test_bands_are_clipped_to_the_quantity_range():
    # arms left: 10, 10, 1 at the end: mean 7, and a 95% band reaching beyond K = 10 and below 0 before clipping
    arms = [_fake("mase", s, [0, 50, 50], [10, 10, end], ARMS_LEFT, arms=10) for s, end in enumerate((10, 10, 1))]
    regret = [_fake("se", s, [0, 10], [0, end], REGRET) for s, end in enumerate((0.0, 100.0))]
    fraction = [_fake("no-sharing", s, [0, 10, 20], [0, end, 1], FRACTION) for s, end in enumerate((0.0, 1.0, 1.0))]
    # users still exploring: no table column for the bound here, so the count's start (its largest value) is
    exploring = [_fake("anon-bai", s, [0, 8, 8], [4, 4, end], EXPLORING) for s, end in enumerate((4, 4, 0))]
    figure = curves_figure(arms + regret + fraction + exploring)
    ranges = {
        "arms left in the global set": (0, 10),
        "cumulative pseudo-regret": (0, np.inf),
        "fraction of players holding one arm": (0, 1),
        "users still exploring": (0, 4),
    }
    for ax in figure.axes:
        low, high = ranges[ax.get_ylabel()]
        (vertices,) = _bands(ax)
        assert vertices[:, 1].min() >= low and vertices[:, 1].max() <= high, (ax.get_ylabel(), vertices[:, 1])
        assert ax.get_ylim()[0] == low
    # unclipped, each of these bands would leave its range: the data above are what the clipping has to fix
    ends = np.array([10, 10, 1.0])
    half = 1.96 * ends.std(ddof=1) / np.sqrt(3)
    assert ends.mean() + half > 10 and ends.mean() - half > 0
    assert 50 - 1.96 * np.std([0, 100], ddof=1) / np.sqrt(2) < 0


# -- the table records the instance that ran ---------------------------------------------------------------------


def test_the_table_records_a_means_file_users_and_arms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "types.csv").write_text("count,a,b,c\n20,0.9,0.5,0.1\n7,0.2,0.8,0.4\n")
    base = [
        "simulate",
        "--algorithm",
        "anon-etc",
        "--means",
        "types.csv",
        "--C",
        "2",
        "--horizon",
        "3000",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        "r.csv",
    ]
    code, _, err = _run([*base, "--seeds", "1"])
    assert code == 0, err
    (row,) = _table(tmp_path / "r.csv")
    assert (row["users"], row["arms"]) == ("27", "3")  # not the flags' defaults, 300 and 5
    # --resume finds that run by the same values
    code, out, err = _run([*base, "--seeds", "2", "--resume"])
    assert code == 0, err
    assert "1 runs were already in r.csv, 1 run now" in out
    assert [(r["users"], r["arms"], r["seed"]) for r in _table(tmp_path / "r.csv")] == [
        ("27", "3", "0"),
        ("27", "3", "1"),
    ]


def test_the_table_records_the_agents_of_a_means_file_and_the_arms_of_a_list(tmp_path):
    one_type = tmp_path / "one.csv"
    one_type.write_text("count,a,b,c\n12,0.7,0.5,0.3\n")
    row = run_task(Task("central", registry.get("central").resolve({"means": str(one_type)}), 0)).row
    assert row["users"] == 12
    se = registry.get("se")
    row = run_task(Task("se", se.resolve({"channel": "anonymous", "means": "0.9,0.2", "horizon": 2000}), 0)).row
    assert (row["users"], row["arms"]) == (300, 2)
    # at the defaults the row is the parameters (the golden fingerprints hold every default run)
    assert run_task(Task("se", se.resolve({}), 0)).row["arms"] == se.defaults()["arms"]


# -- a flag beats the grid file ----------------------------------------------------------------------------------


def test_command_line_seeds_beat_the_grid_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text('seeds = 5\nseed_offset = 1\n[[runs]]\nalgorithm = "se"\nhorizon = 2000\n')
    base = ["simulate", "--config", "g.toml", "--workers", "1", "--no-progress", "--out"]
    assert _run([*base, "a.csv"])[0] == 0
    assert [r["seed"] for r in _table(tmp_path / "a.csv")] == ["1", "2", "3", "4", "5"]  # the file alone
    assert _run([*base, "b.csv", "--seeds", "2"])[0] == 0
    assert [r["seed"] for r in _table(tmp_path / "b.csv")] == ["1", "2"]
    assert _run([*base, "c.csv", "--seeds", "2", "--seed-offset", "7"])[0] == 0
    assert [r["seed"] for r in _table(tmp_path / "c.csv")] == ["7", "8"]
    (tmp_path / "g.toml").write_text('seeds = [3, 9]\n[[runs]]\nalgorithm = "se"\nhorizon = 2000\n')
    assert _run([*base, "d.csv", "--seeds", "1"])[0] == 0
    assert [r["seed"] for r in _table(tmp_path / "d.csv")] == ["0"]
    code, _, err = _run([*base, "e.csv", "--seed-offset", "4"])
    assert code == 2 and err.count("\n") == 1 and "--seed-offset 4 does not apply" in err
    assert not (tmp_path / "e.csv").exists()


# -- progress: a line at least every interval, with an ETA ---------------------------------------------------------


def test_progress_lines_come_every_interval_with_an_eta_even_while_no_run_ends():
    stream = io.StringIO()
    bar = Progress(3, stream=stream, interval=0.15)
    bar.start()
    time.sleep(0.5)  # a long first run: lines come all the same
    bar.update()
    time.sleep(0.4)
    bar.update()
    bar.update()
    time.sleep(0.3)  # every run done: nothing more
    bar.close()
    lines = stream.getvalue().splitlines()
    waiting = [line for line in lines if line.startswith("runs: 0/3 done")]
    assert len(waiting) >= 2 and all(line.endswith("ETA after the first run") for line in waiting), lines
    later = [line for line in lines if line.startswith("runs: 1/3 done")]
    assert len(later) >= 2, lines
    assert all(re.fullmatch(r"runs: \d/3 done, \d+ s elapsed, ETA .+", line) for line in lines), lines
    assert not [line for line in lines if line.startswith("runs: 3/3")]


def test_the_eta_is_the_mean_time_per_run_times_the_runs_left():
    bar = Progress(30, stream=io.StringIO(), interval=0)
    bar.done, bar.last_done = 2, bar.start_time + 60
    assert bar.status(now=bar.start_time + 70) == "runs: 2/30 done, 1 min 10 s elapsed, ETA 13 min 50 s"
    assert [duration(s) for s in (4.4, 59.6, 185, 7625, -3)] == ["4 s", "1 min 00 s", "3 min 05 s", "2 h 07 min", "0 s"]


def test_the_progress_lines_the_docs_show_are_what_progress_prints():
    """docs/experiments.md: the first run ends at 58 s, the second at 75 s, lines 10 s apart."""
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n(runs: 1/40 .*?)```", text, re.S).group(1).splitlines()
    bar = Progress(40, stream=io.StringIO(), interval=0)
    t0, printed = bar.start_time, []
    for done, last_done, now in ((1, 58, 58), (1, 58, 68), (2, 75, 78)):
        bar.done, bar.last_done = done, t0 + last_done
        printed.append(bar.status(now=t0 + now))
    assert printed == shown


def test_simulate_prints_progress_lines_between_slow_runs(monkeypatch, capsys):
    monkeypatch.setattr(runner, "PROGRESS_INTERVAL", 0.2)
    real = runner.run_task

    def slow(task):
        time.sleep(0.7)
        return real(task)

    monkeypatch.setattr(runner, "run_task", slow)
    code = main(["simulate", "--algorithm", "se", "--horizon", "2000", "--seeds", "2", "--workers", "1"])
    assert code == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("runs: ")]
    assert len(lines) >= 4, lines  # one per 0.2 s of 1.4 s, not one per run
    assert all(", ETA " in line for line in lines), lines


# -- outputs in the format their extension names -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--out", "b.parquet"], "--out b.parquet: unsupported extension '.parquet'; use one of .csv, .jsonl"),
        (["bench", "--out", "b.json"], "--out b.json: unsupported extension '.json'"),
        (
            ["decompose", "g.json", "--C", "3", "-o", "d.csv"],
            "-o d.csv: unsupported extension '.csv'; use one of .json, .parquet, .pq, or a directory OUT/",
        ),
        (["decompose", "g.json", "--C", "3", "-o", "d"], "-o d: unsupported extension '(none)'"),
        (
            ["beta", "g.json", "--C", "3", "--json", "b.csv"],
            "--json b.csv: unsupported extension '.csv'; use one of .json",
        ),
        (
            ["simulate", "--algorithm", "se", "--seeds", "1", "--out", "r.parquet"],
            "--out r.parquet: unsupported extension",
        ),
    ],
    ids=["bench-parquet", "bench-json", "decompose-csv", "decompose-bare", "beta-csv", "simulate-parquet"],
)
def test_an_output_extension_a_command_does_not_write_is_refused(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.json").write_bytes((ROOT / "examples" / "ads_60x4.json").read_bytes())
    code, out, err = _run(args)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


def test_decompose_and_beta_write_the_formats_they_accept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    example = str(ROOT / "examples" / "ads_60x4.json")
    for out in ("d.json", "d.JSON", "d.parquet", "d.pq", "parts/"):
        assert _run(["decompose", example, "--C", "3", "-o", out])[0] == 0, out
    assert (tmp_path / "d.JSON").read_text().startswith("{")
    assert (tmp_path / "d.pq").read_bytes()[:4] == b"PAR1" and any((tmp_path / "parts").iterdir())
    assert _run(["beta", example, "--C", "3", "--json", "b.json"])[0] == 0
    assert (tmp_path / "b.json").read_text().startswith("{")


# -- bench ---------------------------------------------------------------------------------------------------------


def test_bench_runs_every_decompose_method_by_default(tmp_path, monkeypatch):
    args = build_parser(["bench"]).parse_args(["bench"])
    assert args.methods.split(",") == list(anondecomp.METHODS)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(
        ["bench", "--families", "niche-groups", "--methods", "auto,slack,sessions", "--no-progress", "--out", "b.csv"]
    )
    assert code == 0, err
    assert err == ""  # --no-progress: nothing on stderr
    rows = _table(tmp_path / "b.csv")
    assert {r["method"] for r in rows} == {"auto", "slack", "sessions"}
    assert all(r["status"] == "ok" and r["verified"] == "True" for r in rows), rows


def test_bench_progress_and_default_output_in_help(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(["bench", "--help"])
    assert code == 0 and "(default bench.csv)" in " ".join(out.split())
    code, _, err = _run(["bench", "--families", "niche-groups", "--methods", "greedy"])
    assert code == 0 and err.startswith("rows: 1/3 done, ") and ", ETA " in err, err
    assert (tmp_path / "bench.csv").exists()


def test_bench_refuses_an_existing_output_unless_forced(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench.csv").write_text("old\n")
    code, _, err = _run(["bench", "--families", "niche-groups", "--methods", "greedy", "--no-progress"])
    assert code == 2 and err.count("\n") == 1 and "--out bench.csv exists; give --force" in err
    assert (tmp_path / "bench.csv").read_text() == "old\n"
    code, _, err = _run(["bench", "--families", "niche-groups", "--methods", "greedy", "--no-progress", "--force"])
    assert code == 0, err
    assert len(_table(tmp_path / "bench.csv")) == 3


@pytest.mark.parametrize("stop", [KeyboardInterrupt, "terminated"], ids=["ctrl-c", "sigterm"])
def test_bench_keeps_its_finished_rows_when_stopped(stop, tmp_path, monkeypatch):
    from anonbandits.cli.options import Terminated

    real = bench_cli.bench.run_case
    calls = []

    def stop_at_the_second_graph(case, methods, **kw):
        calls.append(case)
        if len(calls) == 2:
            kw["on_row"]({"family": case.family, "method": methods[0], "status": "ok", "label": "partial"})
            raise KeyboardInterrupt if stop is KeyboardInterrupt else Terminated
        return real(case, methods, **kw)

    monkeypatch.setattr(bench_cli.bench, "run_case", stop_at_the_second_graph)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["bench", "--families", "niche-groups", "--methods", "greedy,block", "--no-progress"])
    assert code == (130 if stop is KeyboardInterrupt else 143)
    assert err.count("\n") == 1 and "interrupted (after 3 of 6 rows; 3 finished rows are in bench.csv)" in err, err
    rows = _table(tmp_path / "bench.csv")
    assert [r["method"] for r in rows] == ["greedy", "block", "greedy"]
    assert rows[0]["lp_lower_bound"] != "" and rows[2]["label"] == "partial"


def test_bench_sigint_writes_the_finished_rows_and_exits_130(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "anonbandits.cli.main",
            "bench",
            "--families",
            "scarce",
            "--methods",
            "greedy,block",
            "--time-limit",
            "5",
            "--out",
            "b.csv",
        ],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = child.stderr.readline()
        assert first.startswith("rows: 1/"), first
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=60)
        err = child.stderr.read()
    finally:
        child.kill()
        child.stderr.close()
    assert code == 130, err
    (line,) = [line for line in err.splitlines() if not line.startswith("rows: ")]
    rows = _table(tmp_path / "b.csv")
    assert re.fullmatch(
        rf"anonbandits bench: interrupted \(after {len(rows)} of \d+ rows; {len(rows)} finished rows "
        r"are in b\.csv\)",
        line,
    ), line
    assert len(rows) >= 1 and all(r["verified"] == "True" for r in rows)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


# -- bare command, README table --------------------------------------------------------------------------------------


def test_bare_anonbandits_prints_its_usage():
    code, out, err = _run([])
    assert code == 2 and out == ""
    assert err.startswith("usage: anonbandits") and err.count("\n") > 5
    assert all(f"    {name} " in err for name in ("decompose", "verify", "simulate", "beta", "bench"))  # described
    commands = "decompose, verify, replan, stream, simulate, beta, bench"
    assert err.splitlines()[-1] == f"anonbandits: error: choose a command: {commands}"


def test_the_readme_algorithm_table_names_every_registered_algorithm():
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Algorithms", 1)[1].split("\n## ", 1)[0]
    table = section.strip().split("\n\n")[1].splitlines()  # the paragraph after the section's title
    assert table[0].startswith("| family | algorithms |") and len(table) >= 7, table[:2]
    # the algorithms column: the second cell (a pipe inside a cell is escaped, as GitHub's tables need)
    named = {word for row in table[2:] for word in re.findall(r"`([\w-]+)`", re.split(r"(?<!\\)\|", row)[2])}
    missing = set(registry.all_algorithms()) - named
    assert not missing, f"README.md's algorithm table lacks {sorted(missing)}"
