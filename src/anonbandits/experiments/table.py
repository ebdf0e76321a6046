"""The tidy results table: one row per run, written as CSV (or JSON lines for a ``.jsonl`` path)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from anondecomp.io import atomic_open


def _columns(rows: list[Mapping[str, Any]]) -> list[str]:
    cols: dict[str, None] = {}
    for row in rows:
        cols.update(dict.fromkeys(row))
    return list(cols)


def write_table(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write ``rows`` atomically (a temporary file renamed into place, so no half-written table remains)."""
    rows = list(rows)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, newline="") as fh:
        if path.suffix == ".jsonl":
            for row in rows:
                fh.write(json.dumps(row, default=float) + "\n")
        else:
            writer = csv.DictWriter(fh, fieldnames=_columns(rows))
            writer.writeheader()
            writer.writerows(rows)
    return path

