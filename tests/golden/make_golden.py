"""Golden fingerprints of every registered algorithm at its defaults: what a refactor of the bandit layer must keep.

Run from the project root::

    python -m tests.golden.make_golden            # regenerate tests/golden/fingerprints.json, print what changed
    python -m tests.golden.make_golden --check    # recompute and compare only (exit 1 on a difference)

Each run is ``anonbandits.experiments.runner.run_task`` of the algorithm with every parameter at its default, for
each seed of :data:`SEEDS`: the row it returns is the row ``anonbandits simulate`` writes to its table. Two
fingerprints per run, both sha256:

* ``table``: the row's cells, one ``column=value`` line each, columns in schema order (``algorithm``, the
  algorithm's parameters in the order of its spec, ``seed``, then the metrics in the order of
  ``anonbandits.results.METRICS``, batch-numbered ones by batch; a column none of these name comes last, in the
  row's order). A value is written exactly with its kind: ``int:5``, ``float:`` + ``repr`` (the shortest text that
  reads back as the same double; ``inf`` included), ``bool:True``, ``str:`` + JSON text, ``none``. The columns of
  :data:`EXCLUDED_COLUMNS` (wall time) are left out. The cells themselves are stored too (``cells``), so a
  changed fingerprint names its changed cells.
* ``records``: what the run's ``Result`` carries beyond the row: its curve (dtype, shape and the bytes of both
  arrays), curve axes, label, per-batch records and info; ``parts`` holds a fingerprint of each. Absent when the
  result carries nothing beyond the row.

``seconds`` (informative, never compared) is the run's wall time here; an algorithm each of whose runs takes
more than :data:`SLOW_SECONDS` is marked ``slow`` (the minimum over its seeds, as the first run in a process may
include compiling numba kernels) and the test runs it only with ``ANONBANDITS_GOLDEN_ALL=1`` (skipped with that
reason otherwise; it carries the ``slow`` mark as well).

A change of a fingerprint is a change of the results table: if intended, record the changed cells in
CHANGELOG.md with their reason and regenerate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import numbers
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: version of the serialisation below; bump it when it changes (every fingerprint changes with it)
SERIALISATION_VERSION = 1
#: the seeds every algorithm runs at
SEEDS = (0, 1)
#: a run longer than this (seconds, on the machine that made the file) is ``slow``
SLOW_SECONDS = 20.0
#: set to 1 to run the slow runs too
ENV_ALL = "ANONBANDITS_GOLDEN_ALL"
#: columns of the row left out of the table fingerprint, and why
EXCLUDED_COLUMNS = {
    "wall_time": "seconds the run took (runner.run_task's perf_counter): differs on every run and every machine",
}
GOLDEN = Path(__file__).with_name("fingerprints.json")
REGENERATE = "python -m tests.golden.make_golden"
WHAT_TO_DO = f"if intended, record the changed cells in CHANGELOG.md and regenerate with {REGENERATE}"


# --- running ------------------------------------------------------------------------------------------------


def algorithms() -> list[str]:
    """Every registered algorithm, in registry order."""
    from anonbandits import registry

    return list(registry.all_algorithms())


def run(name: str, seed: int) -> tuple[dict[str, Any], Any, float]:
    """``(row, result, seconds)`` of ``name`` at its defaults with ``seed``: the row the results table gets."""
    from anonbandits import registry
    from anonbandits.experiments.grid import Task
    from anonbandits.experiments.runner import run_task

    spec = registry.get(name)
    start = time.perf_counter()
    out = run_task(Task(name, spec.resolve({}), seed))
    return out.row, out.result, time.perf_counter() - start


# --- the table fingerprint ----------------------------------------------------------------------------------


def cell_text(value: Any) -> str:
    """One cell, exactly and with its kind (``int:3`` and ``float:3.0`` are different cells, as in a CSV table)."""
    if value is None:
        return "none"
    if isinstance(value, bool | np.bool_):
        return f"bool:{bool(value)}"
    if isinstance(value, numbers.Integral):
        return f"int:{int(value)}"
    if isinstance(value, float | np.floating):
        return f"float:{float(value)!r}"  # repr round-trips: the same double, never rounded
    if isinstance(value, str):
        return "str:" + json.dumps(value, ensure_ascii=False)
    raise TypeError(f"no golden serialisation for a table cell of type {type(value).__name__}: {value!r}")


def _schema_rank() -> tuple[dict[str, int], list[tuple[re.Pattern[str], int]]]:
    """Each metric's place in ``METRICS``; batch-numbered names (``R_over_D_b<k>``) as patterns."""
    from anonbandits.results import METRICS

    rank = {m.name: i for i, m in enumerate(METRICS) if "<k>" not in m.name}
    patterns = [
        (re.compile(re.escape(m.name).replace("<k>", r"([1-9][0-9]*)") + "$"), i)
        for i, m in enumerate(METRICS)
        if "<k>" in m.name
    ]
    return rank, patterns


def table_cells(name: str, row: Mapping[str, Any]) -> dict[str, str]:
    """The row's cells in schema order, without :data:`EXCLUDED_COLUMNS`, as :func:`cell_text`."""
    from anonbandits import registry

    params = [p.name for p in registry.get(name).params]
    rank, patterns = _schema_rank()

    def metric_key(column: str) -> tuple[int, int] | None:
        if column in rank:
            return rank[column], 0
        for pattern, r in patterns:
            found = pattern.match(column)
            if found:
                return r, int(found.group(1))
        return None

    head = [c for c in ("algorithm", *params, "seed") if c in row]
    rest = [c for c in row if c not in head and c not in EXCLUDED_COLUMNS]
    metrics = sorted((c for c in rest if metric_key(c) is not None), key=metric_key)
    other = [c for c in rest if metric_key(c) is None]
    return {c: cell_text(row[c]) for c in head + metrics + other if c not in EXCLUDED_COLUMNS}


def table_fingerprint(cells: Mapping[str, str]) -> str:
    text = f"anonbandits golden table v{SERIALISATION_VERSION}\n" + "".join(f"{c}={v}\n" for c, v in cells.items())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- the records fingerprint --------------------------------------------------------------------------------


def _encode(value: Any) -> Iterator[bytes]:
    """A value of a curve, record or info, exactly and with its kind: the pieces its fingerprint hashes."""
    if value is None:
        yield b"n;"
    elif isinstance(value, np.ndarray):
        yield f"a{value.dtype.str}{list(value.shape)};".encode()
        if value.dtype.hasobject:
            for item in value.ravel():
                yield from _encode(item)
        else:
            yield np.ascontiguousarray(value).tobytes()
    elif isinstance(value, bool | np.bool_):
        yield b"b1;" if value else b"b0;"
    elif isinstance(value, numbers.Integral):
        yield f"i{int(value)};".encode()
    elif isinstance(value, float | np.floating):
        kind = "f" if isinstance(value, float) else f"f{np.dtype(type(value)).str}"
        yield f"{kind}{float(value).hex()};".encode()  # a float32 becomes a double exactly
    elif isinstance(value, str):
        data = value.encode("utf-8")
        yield f"s{len(data)}:".encode() + data
    elif isinstance(value, Mapping):
        keys = list(value)
        if not all(isinstance(k, str) for k in keys):
            raise TypeError(f"no golden serialisation for a mapping with keys {keys!r}")
        yield f"m{len(keys)}:".encode()
        for k in sorted(keys):  # what a mapping holds, not the order it was filled in
            yield from _encode(k)
            yield from _encode(value[k])
    elif isinstance(value, list | tuple):
        yield f"l{len(value)}:".encode()
        for item in value:
            yield from _encode(item)
    else:
        raise TypeError(f"no golden serialisation for a result value of type {type(value).__name__}: {value!r}")


def _sha(value: Any) -> str:
    h = hashlib.sha256(f"anonbandits golden records v{SERIALISATION_VERSION}\n".encode())
    for piece in _encode(value):
        h.update(piece)
    return h.hexdigest()


def records_parts(result: Any) -> dict[str, str] | None:
    """A fingerprint of each part of the result the row does not hold; ``None`` when it holds nothing more."""
    curve = None if result.curve is None else [np.asarray(a) for a in result.curve]
    if curve is None and not result.records and not result.info:
        return None
    return {
        "label": _sha(result.label),
        "curve_axes": _sha(result.curve_axes),
        "curve": _sha(curve),
        "records": _sha(list(result.records)),
        "info": _sha(dict(result.info)),
    }


def records_fingerprint(parts: Mapping[str, str]) -> str:
    return _sha(dict(parts))


# --- one run, the whole file --------------------------------------------------------------------------------


def fingerprint(name: str, seed: int) -> dict[str, Any]:
    """The golden entry of one run: ``table``, ``cells``, ``records`` and ``parts`` (when any), ``seconds``."""
    row, result, seconds = run(name, seed)
    cells = table_cells(name, row)
    entry: dict[str, Any] = {"table": table_fingerprint(cells)}
    parts = records_parts(result)
    if parts is not None:
        entry["records"] = records_fingerprint(parts)
    entry["seconds"] = round(seconds, 3)
    entry["slow"] = seconds > SLOW_SECONDS  # compute() decides over the algorithm's seeds
    entry["cells"] = cells
    if parts is not None:
        entry["parts"] = parts
    return entry


def header() -> dict[str, Any]:
    return {
        "serialisation_version": SERIALISATION_VERSION,
        "seeds": list(SEEDS),
        "slow_seconds": SLOW_SECONDS,
        "excluded_columns": dict(EXCLUDED_COLUMNS),
        "regenerate": REGENERATE,
    }


def compute(names: list[str] | None = None, *, log=None) -> dict[str, Any]:
    golden = {**header(), "algorithms": {}}
    for name in names or algorithms():
        golden["algorithms"][name] = {}
        runs = golden["algorithms"][name]
        for seed in SEEDS:
            runs[str(seed)] = fingerprint(name, seed)
        # slow when every seed is: the first run in a process may include compiling numba kernels (cold cache)
        slow = min(entry["seconds"] for entry in runs.values()) > SLOW_SECONDS
        for seed, entry in runs.items():
            entry["slow"] = slow
            if log is not None:
                print(
                    f"  {name:28s} seed {seed}: {entry['seconds']:8.3f} s{'  (slow)' if slow else ''}",
                    file=log,
                    flush=True,
                )
    return golden


def load(path: Path = GOLDEN) -> dict[str, Any] | None:
    if not path.exists():
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write(golden: Mapping[str, Any], path: Path = GOLDEN) -> None:
    """Write ``golden`` to ``path`` atomically (a temporary file in the same folder, renamed into place)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            json.dump(golden, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def cell_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """The cells that differ, one line each: ``column: old -> new`` (``(absent)`` for a missing column)."""
    return [
        f"{c}: {old.get(c, '(absent)')} -> {new.get(c, '(absent)')}"
        for c in dict.fromkeys([*old, *new])
        if old.get(c) != new.get(c)
    ]


def entry_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two entries of one run (empty when both fingerprints agree)."""
    out = []
    if old.get("table") != new.get("table"):
        out.append(
            "table changed: "
            + ("; ".join(cell_changes(old.get("cells", {}), new.get("cells", {}))) or "(cells not stored)")
        )
    if old.get("records") != new.get("records"):
        old_parts, new_parts = old.get("parts") or {}, new.get("parts") or {}
        which = [p for p in dict.fromkeys([*old_parts, *new_parts]) if old_parts.get(p) != new_parts.get(p)]
        out.append(f"records changed: {', '.join(which) or 'present/absent'}")
    return out


def diff(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> tuple[list[str], int]:
    """Lines saying which fingerprints changed between two golden files, and how many runs changed."""
    if old is None:
        return ["no previous fingerprints"], 0
    lines = [f"{key}: {old.get(key)!r} -> {new[key]!r}" for key in header() if old.get(key) != new[key]]
    changed = 0
    olds, news = old.get("algorithms", {}), new["algorithms"]
    for name in dict.fromkeys([*olds, *news]):
        for seed in dict.fromkeys([*olds.get(name, {}), *news.get(name, {})]):
            a, b = olds.get(name, {}).get(seed), news.get(name, {}).get(seed)
            what = ["new"] if a is None else ["removed"] if b is None else entry_changes(a, b)
            if what:
                changed += 1
                lines += [f"{name} seed {seed}: {w}" for w in what]
    return lines, changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden.make_golden", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored file; write nothing")
    parser.add_argument("-o", "--output", type=Path, default=GOLDEN, help=f"where to write (default {GOLDEN})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    new = compute(log=sys.stdout)
    total = sum(e["seconds"] for runs in new["algorithms"].values() for e in runs.values())
    slow = sum(e["seconds"] for runs in new["algorithms"].values() for e in runs.values() if e["slow"])
    print(
        f"{len(new['algorithms'])} algorithms x {len(SEEDS)} seeds: runs {total:.1f} s "
        f"({slow:.1f} s slow), {time.perf_counter() - start:.1f} s in all"
    )
    old = load(GOLDEN)
    lines, changed = diff(old, new)
    for line in lines:
        print(line)
    runs = sum(len(r) for r in new["algorithms"].values())
    if args.check:
        print(f"{changed} of {runs} runs differ from {GOLDEN}")
        return 1 if old is None or lines else 0
    write(new, args.output)
    print(f"{changed} of {runs} runs changed; written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
