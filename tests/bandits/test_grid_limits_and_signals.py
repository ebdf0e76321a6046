"""Grids are checked before the first run, and a stopped grid ends every one of its processes.

* A grid is counted from its list lengths before anything is expanded: a grid of billions of runs is refused at
  once in one line naming the count, the limit and the flag that confirms it (``--max-runs``).
* SIGTERM or SIGINT sent to the whole process group of ``anonbandits simulate`` (what a terminal's Ctrl-C,
  ``kill -- -PGID`` and systemd do) ends the command and every worker process, keeping the finished runs, every
  time: the loop below repeats it many times with the signal landing at different moments.
"""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
import os
import re
import select
import signal
import subprocess
import sys
import time
from contextlib import closing, redirect_stderr
from pathlib import Path

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.cli import simulate
from anonbandits.cli.main import main
from anonbandits.errors import ConfigError
from anonbandits.experiments import count_runs, load_grid, run_tasks, runner, tasks_from_grid, write_table
from anonbandits.experiments.grid import MAX_RUNS, Task
from anonbandits.experiments.runner import RemoteTraceback, WorkerDied, iter_results, run_task

# 157 x 100 configurations x 10^6 seeds: 1.57e10 runs, far more than memory could hold as tasks
HUGE = {
    "seeds": 1_000_000,
    "runs": [
        {
            "algorithm": "se",
            "horizon": list(range(10_000, 10_157)),
            "reward_sigma": [0.01 * (k + 1) for k in range(100)],
        }
    ],
}
HUGE_RUNS = 157 * 100 * 1_000_000

SMALL_GRID = """
seeds = 2
[defaults]
horizon = 20000
[[runs]]
algorithm = "se"
means = ["0.9,0.8", "0.9,0.5"]
[[runs]]
algorithm = "dp-se"
epsilon = [0.5]
"""


def test_runs_are_counted_exactly_without_expanding():
    assert count_runs(HUGE) == HUGE_RUNS == 15_700_000_000
    with pytest.raises(ConfigError, match=f"expands to {HUGE_RUNS} runs .*more than max_runs={MAX_RUNS}"):
        tasks_from_grid(HUGE)
    # lists in defaults count for every entry; a scalar is one value; the seeds multiply
    grid = {
        "seeds": [3, 7, 9],
        "defaults": {"horizon": [1000, 2000]},
        "runs": [{"algorithm": "se", "means": ["0.9,0.1", "0.8,0.1", "0.7,0.1"]}, {"algorithm": "dp-se"}],
    }
    assert count_runs(grid) == 3 * (2 * 3 + 2) == len(tasks_from_grid(grid))


def test_a_lowered_limit_refuses_and_a_raised_one_confirms(tmp_path):
    grid = load_grid(_write(tmp_path / "g.toml", SMALL_GRID))
    assert count_runs(grid) == 6
    with pytest.raises(ConfigError, match=r"expands to 6 runs \(3 configurations x 2 seeds\), more than max_runs=5"):
        tasks_from_grid(grid, max_runs=5)
    assert len(tasks_from_grid(grid, max_runs=6)) == len(tasks_from_grid(grid, max_runs=None)) == 6


def test_the_seed_limit_still_holds_before_counting():
    with pytest.raises(ConfigError, match="'seeds' must be at least 1 and at most 1000000"):
        count_runs({"seeds": 10**12, "runs": [{"algorithm": "se"}]})


def test_cli_refuses_a_huge_grid_in_one_line_and_writes_nothing(tmp_path, monkeypatch):
    _write(tmp_path / "huge.json", json.dumps(HUGE))
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, err = _main(["simulate", "--config", "huge.json", "--out", "r.csv", "--workers", "2"])
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("anonbandits simulate: error: "), err
    assert (
        f"huge.json expands to {HUGE_RUNS} runs, more than --max-runs {MAX_RUNS}; "
        f"give --max-runs {HUGE_RUNS} to run it anyway"
    ) in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_cli_max_runs_confirms_an_over_limit_grid(tmp_path, monkeypatch, capsys):
    _write(tmp_path / "g.toml", SMALL_GRID)
    monkeypatch.chdir(tmp_path)
    base = ["simulate", "--config", "g.toml", "--workers", "1", "--no-progress", "--out", "r.csv"]
    code, err = _main([*base, "--max-runs", "5"])
    assert code == 2 and "g.toml expands to 6 runs, more than --max-runs 5; give --max-runs 6" in err
    assert not (tmp_path / "r.csv").exists()
    assert main([*base, "--max-runs", "6"]) == 0
    assert len(_table(tmp_path / "r.csv")) == 6


def test_a_run_that_raises_in_a_worker_raises_here_with_its_traceback():
    tasks = [*_se_tasks(1), *_se_tasks(1, means="0.5,1.5")]
    with pytest.raises(ConfigError, match=r"outside \[0, 1\]") as info:
        run_tasks(tasks, workers=2, progress=False)
    assert isinstance(info.value.__cause__, RemoteTraceback)
    assert "Traceback" in str(info.value.__cause__)
    assert not multiprocessing.active_children()


def _fails_at_seed_1(task: Task):
    if task.seed == 1:
        raise IndexError("index 7 is out of bounds for axis 0 with size 2")  # a bug of the run, not a refusal
    return run_task(task)


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the patched run_task reaches forked workers")
def test_a_run_failing_by_a_bug_in_a_worker_raises_here_with_its_traceback(monkeypatch):
    """The worker forwards the errors a run raises (runner.RUN_ERRORS), not only the project's own."""
    monkeypatch.setattr(runner, "run_task", _fails_at_seed_1)
    with pytest.raises(IndexError, match="index 7 is out of bounds") as info:
        run_tasks(_se_tasks(4), workers=2, progress=False)
    assert isinstance(info.value.__cause__, RemoteTraceback) and "Traceback" in str(info.value.__cause__)
    assert not multiprocessing.active_children()


def test_the_command_reports_a_failing_run_in_one_line_and_keeps_the_finished_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "run_task", _fails_at_seed_1)
    monkeypatch.chdir(tmp_path)
    args = ["simulate", "--algorithm", "se", "--horizon", "20000", "--seeds", "3", "--workers", "1"]
    code, err = _main([*args, "--no-progress", "--out", "r.csv"])
    assert code == 1 and err.count("\n") == 1, err
    assert "error: a run failed: IndexError: index 7 is out of bounds" in err and "--resume" in err
    assert [row["seed"] for row in _table(tmp_path / "r.csv")] == ["0"]


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the patched run_task reaches forked workers")
def test_a_worker_killed_mid_run_is_an_error_not_a_hang(monkeypatch):
    def run_or_die(task: Task):
        if task.seed == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return run_task(task)

    monkeypatch.setattr(runner, "run_task", run_or_die)
    with pytest.raises(WorkerDied, match="killed by signal 9 while it ran se with seed 3"):
        run_tasks(_se_tasks(6), workers=2, progress=False)
    assert not multiprocessing.active_children()


def test_closing_the_results_early_ends_every_worker():
    tasks = _se_tasks(40)
    with closing(iter_results(tasks, workers=2)) as results:
        i, first = next(results)
        assert first.row["seed"] == tasks[i].seed
        assert len(multiprocessing.active_children()) == 2
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_second_signal_does_not_cut_short_the_saving_of_the_finished_runs(sig, tmp_path, monkeypatch):
    """Ctrl-C pressed twice (or SIGTERM sent twice): the second one, arriving while the finished runs are being
    written, is ignored, so the table is complete and the command still says what it kept in one line."""
    tasks = _se_tasks(3)

    def collect_one_then_stop(tasks, finished, **kw):
        finished[0] = run_task(tasks[0])
        signal.raise_signal(sig)  # the first signal: main's SIGTERM handler raises, Ctrl-C raises
        raise AssertionError("the signal should have stopped the run")

    def write_after_a_second_signal(rows, path):
        signal.raise_signal(sig)
        return write_table(rows, path)

    monkeypatch.setattr(simulate, "collect", collect_one_then_stop)
    monkeypatch.setattr(simulate, "write_table", write_after_a_second_signal)
    monkeypatch.chdir(tmp_path)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    # Ctrl-C as in a command started from a terminal (a shell may have started the tests with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code, err = _main(["simulate", "--algorithm", "se", "--seeds", "3", "--out", "r.csv"])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored after the saving
        assert signal.getsignal(signal.SIGTERM) == before[signal.SIGTERM]
    finally:
        signal.signal(signal.SIGINT, before[signal.SIGINT])
    assert code == 128 + sig
    assert err.count("\n") == 1 and "interrupted (after 1 of 3 runs; 1 finished runs are in r.csv" in err, err
    assert [row["seed"] for row in _table(tmp_path / "r.csv")] == [str(tasks[0].seed)]


# -- signals to the process group of a running grid -------------------------------------------------------------

#: many quick runs: the first finishes at once, and a signal finds the workers running or between two runs
SIGNAL_GRID = """
seeds = 2000
[[runs]]
algorithm = "se"
means = "0.9,0.8,0.7,0.6"
"""
SIGNAL_RUNS = 2000
ATTEMPTS = 30
#: seconds within which the command must have ended after the signal (it takes well under one)
ENDS_WITHIN = 15

# A process that imports the command once, then forks one `anonbandits simulate` per attempt, each in its own
# session and process group (what start_new_session=True gives a fresh command), so that the attempts do not
# each pay the interpreter's start-up. It prints the child's pid, then its exit code once it has reaped it.
LAUNCHER = r"""
import json, os, signal, sys
from anonbandits import registry
from anonbandits.cli.main import main
from anonbandits.experiments.grid import Task
from anonbandits.experiments.runner import run_task

run_task(Task("se", registry.get("se").resolve({}), 0))  # the command's modules imported and compiled once
for line in sys.stdin:
    cwd, args = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a command started from a terminal
        os.chdir(cwd)
        null = os.open(os.devnull, os.O_RDWR)
        err = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(err, 2)
        sys.exit(main(args))  # ends this child as the command ends: finalizers and atexit handlers run
    sys.stdout.write(f"{pid}\n")
    sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(f"{os.waitstatus_to_exitcode(status)}\n")
    sys.stdout.flush()
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


@pytest.fixture(scope="module")
def launcher():
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(), bufsize=0
    )
    yield proc
    proc.stdin.close()
    proc.wait(timeout=60)


def _line(stream, timeout: float) -> str:
    """One line from an unbuffered pipe, or TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            raise TimeoutError(f"no line within {timeout} s (got {data!r})")
        byte = stream.read(1)
        if not byte:
            raise EOFError(f"the launcher ended (got {data!r})")
        data += byte
    return data.decode().strip()


def _wait_for_first_run(path: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() or "runs: 1/" not in path.read_text():
        assert time.monotonic() < deadline, "no run finished"
        time.sleep(0.005)


def _group_is_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
def test_a_signal_to_the_process_group_ends_every_process_and_keeps_the_finished_runs(tmp_path, launcher):
    rng = np.random.default_rng(0)
    by_seed = {t.seed: t for t in tasks_from_grid(load_grid(_write(tmp_path / "grid.toml", SIGNAL_GRID)))}
    args = ["simulate", "--config", "grid.toml", "--out", "r.csv", "--workers", "2"]
    for attempt in range(ATTEMPTS):
        sig = signal.SIGINT if attempt % 3 == 2 else signal.SIGTERM
        work = tmp_path / f"attempt{attempt}"
        work.mkdir()
        (work / "grid.toml").write_text(SIGNAL_GRID)
        launcher.stdin.write(json.dumps([str(work), args]).encode() + b"\n")
        pgid = int(_line(launcher.stdout, 60))
        try:
            _wait_for_first_run(work / "stderr.txt")
            time.sleep(rng.uniform(0, 0.05))  # land at another moment of a run each time
            os.killpg(pgid, sig)
            sent = time.monotonic()
            code = int(_line(launcher.stdout, ENDS_WITHIN))
            took = time.monotonic() - sent
        except BaseException:
            if not _group_is_gone(pgid):
                os.killpg(pgid, signal.SIGKILL)  # leave no process behind; the launcher reaps its child
            raise
        where = f"attempt {attempt} ({sig.name})"
        assert code == 128 + sig, (where, code)
        assert took < ENDS_WITHIN, (where, took)
        assert _group_is_gone(pgid), f"{where}: a process of the group is left"
        lines = [line for line in (work / "stderr.txt").read_text().splitlines() if not line.startswith("runs: ")]
        rows = _table(work / "r.csv")
        assert len(lines) == 1, (where, lines)
        assert re.fullmatch(
            rf"anonbandits simulate: interrupted \(after {len(rows)} of {SIGNAL_RUNS} runs; "
            rf"{len(rows)} finished runs are in r\.csv; run the same command with --resume .*\)",
            lines[0],
        ), (where, lines[0])
        assert len(rows) >= 1 and len({row["seed"] for row in rows}) == len(rows), where
        assert all(value != "" for row in rows for value in row.values()), f"{where}: an incomplete row"
        # every kept row is the run itself (each task seeds itself): check a few against runs in this process
        sample = [rows[k] for k in rng.choice(len(rows), size=min(2, len(rows)), replace=False)]
        write_table([run_task(by_seed[int(row["seed"])]).row for row in sample], work / "expected.csv")
        assert list(map(_no_wall_time, sample)) == list(map(_no_wall_time, _table(work / "expected.csv"))), where


def test_sigterm_to_the_group_of_a_fresh_command_keeps_the_finished_runs(tmp_path):
    """The same with a fresh ``python -m anonbandits.cli.main`` started in its own session (SIGTERM: a shell
    may have started this test with SIGINT ignored, which a fresh interpreter would inherit)."""
    (tmp_path / "grid.toml").write_text(SIGNAL_GRID)
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
        env=_env(),
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        first = child.stderr.readline()
        assert first.startswith(f"runs: 1/{SIGNAL_RUNS} done"), first
        os.killpg(child.pid, signal.SIGTERM)
        code = child.wait(timeout=ENDS_WITHIN)
    finally:
        if not _group_is_gone(child.pid):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    err = child.stderr.read()
    child.stderr.close()
    assert code == 128 + signal.SIGTERM
    assert _group_is_gone(child.pid)
    rows = _table(tmp_path / "r.csv")
    assert f"interrupted (after {len(rows)} of {SIGNAL_RUNS} runs; {len(rows)} finished runs are in r.csv" in err
    assert len(rows) >= 1


def _se_tasks(seeds: int, **params) -> list[Task]:
    spec = registry.get("se")
    return [Task(spec.name, spec.resolve(params), s) for s in range(seeds)]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _main(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(args)
    return code, err.getvalue()


def _table(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _no_wall_time(row: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in row.items() if k != "wall_time"}
