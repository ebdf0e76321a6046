"""Parquet key-value metadata is read as JSON with the same rule as JSON files: an object naming a key twice is
refused, naming the metadata key and the repeated key (issue 31, item 1), never read as text or last-wins."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import anondecomp
from anonbandits.cli.main import main
from anondecomp import InvalidInputError

USERS = [f"u{i}" for i in range(8)]


def _write(path, columns: dict, metadata: dict[str, str]) -> None:
    table = pa.table(columns).replace_schema_metadata(metadata)
    pq.write_table(table, path)


def _batched(path, metadata: dict[str, str]) -> None:
    _write(path, {"user": [u for u in USERS for _ in "ab"], "arm": ["a", "b"] * 8}, metadata)


def test_duplicate_key_in_a_graph_metadata_value_is_refused(tmp_path):
    path = tmp_path / "g.parquet"
    _batched(path, {"demand": "4", "C": "1", "source": '{"tool": "x", "tool": "y"}'})
    with pytest.raises(
        InvalidInputError,
        match=r"g\.parquet: metadata 'source': JSON object has the key 'tool' "
        r"twice",
    ):
        anondecomp.read_graph(path)


def test_duplicate_key_nested_in_a_metadata_value_is_refused(tmp_path):
    path = tmp_path / "g.parquet"
    _batched(path, {"demand": "4", "extra": '{"a": {"b": 1, "b": 2}}'})
    with pytest.raises(InvalidInputError, match="metadata 'extra': JSON object has the key 'b' twice"):
        anondecomp.read_graph(path)


def test_metadata_values_that_are_not_json_stay_text(tmp_path):
    path = tmp_path / "g.parquet"
    _batched(path, {"demand": "4", "C": "1", "note": "written by hand {"})
    graph, C = anondecomp.read_graph(path)
    assert (graph.n_users, C) == (8, 1)


def test_duplicate_key_in_a_decomposition_metadata_is_refused(tmp_path, capsys):
    graph = anondecomp.DemandGraph.from_batched(4, np.ones((8, 2), bool), users=USERS, arms=["a", "b"])
    good = tmp_path / "d.parquet"
    anondecomp.write_decomposition(anondecomp.decompose(graph, 1), good)
    table = pq.read_table(good)
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    meta["header"] = '{"C": 1, "C": 2}'
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.replace_schema_metadata(meta), bad)
    graph_file = tmp_path / "g.parquet"
    _batched(graph_file, {"demand": "4", "C": "1"})
    assert main(["verify", str(graph_file), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "key 'C' twice" in err, err
