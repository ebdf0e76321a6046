"""``anonbandits stream``: one schedule per window, its graph, summary.csv, every window verified by ``verify``;
one stderr line per user mistake."""

import csv
import re

import numpy as np
import pytest

from anonbandits.cli.main import main


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_log(path, windows: int = 3, n_users: int = 30, seed: int = 0):
    """A CSV log of ``windows`` hours of 30 users (3 replaced each hour), each on 2 of 5 items."""
    rng = np.random.default_rng(seed)
    lines, active, fresh = ["user,item,timestamp,weight"], list(range(n_users)), n_users
    for w in range(windows):
        if w:
            for k in rng.choice(n_users, 3, replace=False):
                active[k], fresh = fresh, fresh + 1
        for u in active:
            for j in rng.choice(5, 2, replace=False):
                lines.append(f"u{u},i{j},{w * 3600 + rng.uniform(0, 3600):.3f},{rng.integers(1, 3)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_stream_writes_a_verified_schedule_per_window_and_the_summary(tmp_path, capsys):
    log = write_log(tmp_path / "log.csv")
    code, out, err = run(["stream", log, "--window", "1h", "--C", "2", "-o", tmp_path / "out"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["window", "start", "users", "items", "dropped", "R", "bound", "seconds", "plan"]
    assert lines[-1].startswith("3 windows (") and "summary.csv" in lines[-1]
    with open(tmp_path / "out" / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["window"] for r in rows] == ["0", "1", "2"] and rows[0]["plan"] == "cold"
    for r in rows:
        graph, schedule = tmp_path / "out" / "graphs" / r["schedule"], tmp_path / "out" / r["schedule"]
        code, out, _ = run(["verify", graph, schedule], capsys)
        assert code == 0 and out.startswith(f"valid: R = {r['R']}, lower bound = {r['bound']}")


def test_sliding_windows_and_the_cold_baseline(tmp_path, capsys):
    log = write_log(tmp_path / "log.csv", windows=2)
    argv = ["stream", log, "--window", "1h", "--step", "30min", "--C", "2", "--cold", "-o", tmp_path / "out"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    with open(tmp_path / "out" / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 and {r["plan"] for r in rows} == {"cold"}


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--window", "1y"], r"argument --window: expected a duration such as 90s"),
        (["--window", "0"], r"argument --window: expected a duration"),
        (["--window", "1h", "--step", "2h"], r"error: step \(7200 s\) must be at most the window \(3600 s\)"),
        (["--window", "1h", "--tolerance", "-1"], r"argument --tolerance: must be a finite number >= 0"),
        (["--window", "1h", "--C", "0"], r"argument --C: must be at least 1"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_2(extra, message, tmp_path, capsys):
    log = write_log(tmp_path / "log.csv", windows=1)
    argv = ["stream", log, "--C", "2", "-o", tmp_path / "out", *extra]
    code, out, err = run(argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists()


def test_a_non_empty_outdir_is_refused_and_left_alone(tmp_path, capsys):
    log = write_log(tmp_path / "log.csv", windows=1)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    code, _, err = run(["stream", log, "--window", "1h", "--C", "2", "-o", tmp_path / "out"], capsys)
    assert code == 2 and "directory is not empty" in err and len(err.strip().splitlines()) == 1
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["notes.txt"]
