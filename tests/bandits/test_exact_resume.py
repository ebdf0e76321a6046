"""Exact resume (issue 31, item 6): ``simulate --resume`` validates the table row by row before anything is
written. An incomplete last line (no final newline) alone is dropped and its run re-run; every other damage is
refused in one line naming the row (those refusals are cases of tests/hostile/cases/resume.toml, which also check
that the table is left as it was)."""

from __future__ import annotations

import csv
import json

import pytest

from anonbandits.cli.main import main
from anonbandits.errors import ConfigError
from anonbandits.experiments.table import read_resumable

BASE = ["simulate", "--algorithm", "se", "--horizon", "2000", "--workers", "1", "--no-progress", "--seeds", "4"]


def _rows(path):
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        return [{k: str(v) for k, v in row.items() if k != "wall_time"} for row in rows]
    with open(path, newline="") as fh:
        return [{k: v for k, v in row.items() if k != "wall_time"} for row in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def full_tables(tmp_path_factory):
    """The four-run tables of ``se`` (regret 199.9 every seed), CSV and JSON lines, written once."""
    root = tmp_path_factory.mktemp("full")
    for suffix in (".csv", ".jsonl"):
        assert main([*BASE, "--out", str(root / f"r{suffix}")]) == 0
    return {suffix: (root / f"r{suffix}").read_text() for suffix in (".csv", ".jsonl")}


def _cut(text: str, marker: str, keep: int) -> str:
    """``text`` cut inside its last line, ``keep`` characters after the start of ``marker`` there."""
    start = text.rstrip("\n").rfind("\n") + 1
    return text[: start + text[start:].index(marker) + keep]


@pytest.mark.parametrize(
    "suffix, marker, keep, what",
    [
        (".csv", ",199.9", 3, "cut inside its regret (199.9 -> 19)"),
        (".csv", "round-robin", 5, "cut inside its parameters"),
        (".csv", "\n", 0, "cut at the start of the line"),
        (".jsonl", "199.9", 2, "cut inside its regret"),
        (".jsonl", '"order"', 4, "cut inside its parameters"),
    ],
)
def test_an_incomplete_last_line_alone_is_dropped_and_rerun(tmp_path, capsys, full_tables, suffix, marker, keep, what):
    full = full_tables[suffix]
    # marker "\n": a whole table whose last row is missing (nothing to drop): seed 3 runs, no warning
    text = full[: full.rstrip("\n").rfind("\n") + 1] if marker == "\n" else _cut(full, marker, keep)
    out = tmp_path / f"r{suffix}"
    out.write_text(text)
    (tmp_path / f"full{suffix}").write_text(full)
    assert main([*BASE, "--out", str(out), "--resume"]) == 0, what
    captured = capsys.readouterr()
    if marker != "\n":
        assert captured.err.count("\n") == 1 and "dropped the incomplete last line" in captured.err
        assert "its run runs again" in captured.err
    assert "3 runs were already in" in captured.out
    assert _rows(out) == _rows(tmp_path / f"full{suffix}"), what  # seed 3 again, with its regret 199.9
    assert out.read_text().endswith("\n")


def test_read_resumable_names_the_dropped_line(tmp_path, full_tables):
    table = tmp_path / "r.csv"
    table.write_text(_cut(full_tables[".csv"], ",199.9", 3))
    rows, note = read_resumable(table)
    assert [row["seed"] for row in rows] == ["0", "1", "2"]
    assert note == f"dropped the incomplete last line of {table} (row 4, line 5): its run runs again"
    table.write_text(full_tables[".csv"])
    assert read_resumable(table)[1] is None and len(read_resumable(table)[0]) == 4


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda lines: lines + [lines[2]], "row 5 (line 6) records the same run as row 2"),
        (
            lambda lines: [*lines[:2], lines[2].replace("199.90000000000003", "abc"), *lines[3:]],
            "row 2 (line 3) has regret 'abc', not a finite number",
        ),
        (lambda lines: [*lines[:2], lines[2][:40], *lines[3:]], "row 2 (line 3) is incomplete"),
    ],
)
def test_a_damaged_table_is_refused_before_anything_is_written(tmp_path, full_tables, edit, words):
    out = tmp_path / "r.csv"
    out.write_text("\n".join(edit(full_tables[".csv"].splitlines())) + "\n")
    before = out.read_bytes()
    with pytest.raises(ConfigError) as exc:
        read_resumable(out)
    assert words in str(exc.value) and "\n" not in str(exc.value)
    assert main([*BASE, "--out", str(out), "--resume"]) == 2
    assert out.read_bytes() == before


def test_a_grid_table_with_several_algorithms_resumes(tmp_path, capsys):
    """Columns of one algorithm are empty in another's rows (the union of the columns): not damage."""
    grid = tmp_path / "g.toml"
    grid.write_text(
        'seeds = 2\n[[runs]]\nalgorithm = "se"\nhorizon = 2000\n[[runs]]\nalgorithm = "dp-se"\n'
        'horizon = 2000\n[[runs]]\nalgorithm = "anon-etc"\nusers = 40\narms = 2\nC = 2\nhorizon = 2000\n'
    )
    out = tmp_path / "r.csv"
    assert main(["simulate", "--config", str(grid), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    full = out.read_text()
    out.write_text(full[: full.rstrip("\n").rfind("\n") + 1])  # the last run lost, as after an interruption
    assert (
        main(["simulate", "--config", str(grid), "--out", str(out), "--workers", "1", "--no-progress", "--resume"]) == 0
    )
    assert "5 runs were already in" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == 7
