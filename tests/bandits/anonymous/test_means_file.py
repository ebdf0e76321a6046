"""Instances from data: --means PATH for the multi-user algorithms (a headerless users x arms CSV matrix, or a
user-type table with a count column in CSV or Parquet), and one clear line for every malformed file."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from anonbandits import simulate
from anonbandits.envs.means_file import read_means
from anonbandits.errors import ConfigError


def test_a_headerless_csv_is_a_users_by_arms_matrix(tmp_path):
    (tmp_path / "m.csv").write_text("0.9,0.1,0.5\n0.2,0.8,0.5\n")
    means, arms = read_means(tmp_path / "m.csv")
    assert means.tolist() == [[0.9, 0.1, 0.5], [0.2, 0.8, 0.5]] and arms is None


def test_a_type_table_expands_each_type_by_its_count_in_csv_and_parquet(tmp_path):
    (tmp_path / "t.csv").write_text("shoes,count,bags\n0.3,2,0.1\n0.05,3,0.2\n")
    pq.write_table(pa.table({"shoes": [0.3, 0.05], "count": [2, 3], "bags": [0.1, 0.2]}), tmp_path / "t.parquet")
    for name in ("t.csv", "t.parquet"):
        means, arms = read_means(tmp_path / name)
        assert arms == ("shoes", "bags")
        assert means.tolist() == [[0.3, 0.1]] * 2 + [[0.05, 0.2]] * 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("0.5\n0.4\n", "has 1 arm"),
        ("0.5,0.4\n0.3\n", "row 2: 1 cells, the first row has 2"),
        ("0.5,0.4\n0.3,x\n", "row 2: not a number: 'x'"),
        ("a,b\n0.1,0.2\n", "needs a 'count' column"),
        ("count,a,a\n1,0.1,0.2\n", "column 'a' appears twice"),
        ("count,a,b\n0,0.1,0.2\n", "row 2: count must be a positive integer, got '0'"),
        ("count,a,b\n1,0.1,nan\n", "row 2, arm 'b': mean nan is outside"),
        ("count,a,b\n1,0.1\n", "row 2: 2 cells for 3 columns"),
    ],
)
def test_a_malformed_file_is_one_line_naming_the_place(tmp_path, text, message):
    (tmp_path / "m.csv").write_text(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        read_means(tmp_path / "m.csv")


def test_a_means_file_sets_users_and_arms_of_the_anonymous_algorithms(tmp_path):
    """Two types of 20 users, opposite best arms: anon-bai finds every user's best arm over the anonymous
    channel (groups of at least C), whatever --users and --arms say."""
    (tmp_path / "t.csv").write_text("count,a,b,c\n20,0.9,0.3,0.2\n20,0.2,0.3,0.9\n")
    r = simulate(
        "anon-bai", seed=0, means=str(tmp_path / "t.csv"), users=7, arms=9, C=3, subroutine="se", decomposer="block"
    )
    assert r.metrics["users_approx_optimal"] == 1.0 and r.metrics["min_group_size"] >= 3
    etc = simulate("anon-etc", seed=0, means=str(tmp_path / "t.csv"), C=3, horizon=50_000, explore_scale=1.0)
    assert 0 <= etc.metrics["regret"] and etc.metrics["optimal_fraction"] is not None


def test_algorithm_1_refuses_data_without_its_cluster_assumption_in_one_line(tmp_path):
    (tmp_path / "t.csv").write_text("count,a,b\n30,0.9,0.1\n")  # arm b is optimal for nobody
    with pytest.raises(ConfigError, match="optimal for only 0 users, fewer than U = 15 .*: arm 1; .*best_effort"):
        simulate("anon-batched", seed=0, means=str(tmp_path / "t.csv"), C=2, horizon=20_000)


ROOT = Path(__file__).resolve().parents[3]
#: three types of 20, 20 and 1 users: arm c is optimal for one user only (U = floor(41 / 3) = 13)
THIN = ROOT / "tests" / "bandits" / "anonymous" / "data" / "thin_arm_types.csv"


def test_an_arm_optimal_for_one_user_is_refused_by_name_or_served_best_effort_and_reported():
    with pytest.raises(ConfigError, match=r"optimal for only 1 users, fewer than U = 13 .*: arm 2; .*best_effort"):
        simulate("anon-batched", seed=0, means=str(THIN), C=2, horizon=100_000)
    run = simulate("anon-batched", seed=0, means=str(THIN), C=2, horizon=100_000, best_effort=True)
    assert run.metrics["thin_arm_users"] == 1 and run.metrics["min_group_size"] >= 2
    assert 0 <= run.metrics["optimal_fraction"] <= 1
    assert simulate("anon-batched", seed=0, C=2, horizon=100_000).metrics["thin_arm_users"] == 0


def test_optimal_fraction_is_a_number_over_all_users_even_without_a_commitment():
    """The horizon ends anon-etc's exploration: the share scores every user's recommendation, never NaN."""
    run = simulate("anon-etc", seed=0, means=str(THIN), C=2, horizon=20_000)
    assert run.metrics["exploration_rounds"] == 20_000  # never committed
    assert run.metrics["optimal_fraction"] is not None and not math.isnan(run.metrics["optimal_fraction"])
    assert 0 <= run.metrics["optimal_fraction"] <= 1


OBD = Path(os.environ.get("ANONDECOMP_OBD_ARCHIVE", ROOT / "build" / "obd" / "obp-0.5.7.tar.gz"))


def _recipe():
    spec = importlib.util.spec_from_file_location("obd_means", ROOT / "examples" / "obd_means.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recipe_rescales_each_type_affinely_keeping_its_ranking():
    recipe = _recipe()
    shows = np.array([[100, 50, 10], [5, 0, 1]])
    clicks = np.array([[1, 2, 0], [0, 0, 1]])
    counts, means, ctr = recipe.user_type_table(
        shows, clicks, prior=10.0, value_range=(0.2, 0.6), impressions_per_user=4
    )
    assert counts.tolist() == [40, 2]
    assert np.allclose(means.min(axis=1), 0.2) and np.allclose(means.max(axis=1), 0.6)
    assert (np.argsort(means, axis=1) == np.argsort(ctr, axis=1)).all()
    overall = 4 / 166
    item0 = (1 + 10 * overall) / (105 + 10)
    assert ctr[0, 0] == pytest.approx((1 + 10 * item0) / (100 + 10))


@pytest.mark.skipif(
    not OBD.exists(), reason="the obp source archive is not here (benchmarks/real_graphs.py fetches it into build/obd/)"
)
def test_the_obd_recipe_gives_a_table_every_anonymous_algorithm_runs_on(tmp_path):
    out = tmp_path / "types.csv"
    with contextlib.redirect_stdout(io.StringIO()) as text:
        assert _recipe().main([str(OBD), "-o", str(out), "--impressions-per-user", "10"]) == 0
    assert "types 280, items 80, users (count total) 2157" in text.getvalue()
    means, arms = read_means(out)
    assert means.shape == (2157, 80) and arms[0] == "item_0"
    etc = simulate("anon-etc", seed=0, means=str(out), C=3, horizon=20_000)
    assert 0 <= etc.metrics["optimal_fraction"] <= 1  # the horizon cuts exploration: never NaN
    with pytest.raises(ConfigError, match="optimal for only 0 users, fewer than U = 26 .*best_effort"):
        simulate("anon-batched", seed=0, means=str(out), C=3, horizon=200_000)
    run = simulate("anon-batched", seed=0, means=str(out), C=3, horizon=200_000, best_effort=True)
    assert run.metrics["thin_arm_users"] > 0 and run.metrics["min_group_size"] >= 3
    assert 0 <= run.metrics["optimal_fraction"] <= 1


MULTI_AGENT = (
    "mase",
    "dp-mase",
    "corrupted-elimination",
    "feraud",
    "central",
    "independent",
    "decentralized-elimination",
    "no-sharing",
    "full-sharing",
)


@pytest.mark.parametrize("algorithm", MULTI_AGENT)
def test_a_multi_agent_run_on_a_one_type_file_is_the_run_on_its_list_with_its_count_as_users(tmp_path, algorithm):
    """The agents share one instance: a type table of identical rows is that instance, its counts summed the
    number of agents (overriding --users); a one-row headerless file is the comma list, --users kept."""
    (tmp_path / "t.csv").write_text("count,a,b,c\n40,0.8,0.5,0.3\n30,0.8,0.5,0.3\n")
    (tmp_path / "row.csv").write_text("0.8,0.5,0.3\n")
    listed = simulate(algorithm, seed=3, means="0.8,0.5,0.3", users=70)
    assert simulate(algorithm, seed=3, means=str(tmp_path / "t.csv"), users=9).metrics == listed.metrics
    assert simulate(algorithm, seed=3, means=str(tmp_path / "row.csv"), users=70).metrics == listed.metrics


@pytest.mark.parametrize("algorithm", ["mase", "no-sharing"])
def test_a_multi_agent_run_refuses_a_file_whose_rows_differ_in_one_line(tmp_path, algorithm):
    (tmp_path / "m.csv").write_text("0.8,0.5\n0.8,0.5\n0.5,0.8\n")
    with pytest.raises(ConfigError, match="user 3 has other means than user 1; these algorithms share one instance"):
        simulate(algorithm, seed=0, means=str(tmp_path / "m.csv"))


def test_shared_means_tells_a_list_from_a_path():
    from anonbandits.envs.means_file import shared_means

    assert shared_means("0.9, 0.2")[0].tolist() == [0.9, 0.2]
    with pytest.raises(ConfigError, match="need at least two arms"):
        shared_means("0.9")
    with pytest.raises(ConfigError, match="means file types.txt: use a .csv or .parquet table"):
        shared_means("types.txt")


@pytest.mark.parametrize("damage", ["empty", "text", "truncated", "corrupt footer"])
def test_a_damaged_parquet_file_is_refused_in_one_line(tmp_path, damage):
    pq.write_table(pa.table({"count": [1, 2], "a": [0.1, 0.2], "b": [0.3, 0.4]}), tmp_path / "good.parquet")
    data = (tmp_path / "good.parquet").read_bytes()
    damaged = {
        "empty": b"",
        "text": b"count,a,b\n1,0.1,0.2\n",
        "truncated": data[: len(data) // 2],
        "corrupt footer": data[:-12] + b"\xff\xff\xff\x7f" + data[-8:],
    }[damage]
    (tmp_path / "bad.parquet").write_bytes(damaged)
    with pytest.raises(ConfigError, match=r"^means file .*bad\.parquet is not a Parquet table: ") as info:
        read_means(tmp_path / "bad.parquet")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("path", [None, 3, b"t.csv", "", "types.txt", ["t.csv"]])
def test_read_means_names_its_path_argument(path):
    with pytest.raises(ConfigError, match=r"^path must be the path of a \.csv or \.parquet means file, got "):
        read_means(path)
