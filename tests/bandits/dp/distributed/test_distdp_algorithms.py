"""The six registered algorithms of paper 004: registration and defaults, best-arm identification, each
reward in at most one released statistic, bookkeeping of pulls and regret, both simulation modes, errors
and the CLI."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy import stats

from anonbandits import registry
from anonbandits.cli.main import main
from anonbandits.dp.distributed import PROTOCOLS, run_elimination
from anonbandits.envs.rewards import model_means
from anonbandits.errors import ConfigError
from anonbandits.privacy import dist_rdp_se_rdp, rdp_to_dp, zcdp_to_dp
from anonbandits.reference.distributed_dp import per_round_dist_dp_se

NAMES = ("cdp-se", "ldp-se", "dist-dp-se", "dist-rdp-se", "dist-cdp-se", "shuffle-dp-se")
pytestmark = pytest.mark.filterwarnings("ignore:.*assumes epsilon < 1")


def two_sample_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square test that two integer samples share one law (cells pooled to counts >= 20)."""
    values = np.concatenate([a, b])
    edges = np.unique(np.quantile(values, np.linspace(0, 1, 16)))
    ca, _ = np.histogram(a, bins=edges)
    cb, _ = np.histogram(b, bins=edges)
    return float(stats.chi2_contingency(np.vstack([ca, cb])).pvalue)


def run(name: str, seed: int = 0, **params):
    spec = registry.get(name)
    return spec.run(spec.resolve(params), seed)


def test_all_six_are_registered_with_the_papers_defaults():
    for name in NAMES:
        d = registry.get(name).defaults()
        assert d["confidence"] == 0.1 and d["batch_base"] == 2 and d["crs"] == 1.0
        assert d["tau_confidence"] == 0.0 and d["simulation"] == "aggregate"
        assert {"means", "epsilon", "horizon", "reward"} <= set(d)
    assert registry.get("dist-rdp-se").defaults()["scale"] == 10.0
    assert "dp_delta" in registry.get("dist-cdp-se").defaults()


@pytest.mark.slow
def test_dist_dp_se_has_the_law_of_the_per_user_loop():
    """Dist-DP-SE (Algorithm 1 with the Sec. 4 protocol) against the plain loop written from the paper, one
    Python iteration per user (randomized rounding, Polya-difference shares, sum modulo m, analyzer): the
    regret has the same law (chi-square test on independent seeds; the regret takes a few values, one per
    pair of elimination batches)."""
    means, runs = np.array([0.9, 0.6, 0.5]), 150
    ref = np.array([per_round_dist_dp_se(means, 1.0, 4000, np.random.default_rng(s)) for s in range(runs)])
    fast = np.array(
        [
            run("dist-dp-se", 10_000 + s, means="0.9,0.6,0.5", epsilon=1.0, horizon=4000, tau_confidence=0.1).metrics[
                "regret"
            ]
            for s in range(runs)
        ]
    )
    # both arms out by the second batch pair / arm 2 later / arm 1 later (float sums differ in the last bits)
    classes = [np.histogram(r, bins=[0, 450, 650, np.inf])[0] for r in (ref, fast)]
    assert np.all(classes[0] > 0)
    assert stats.chi2_contingency(np.vstack(classes)).pvalue > 1e-3


@pytest.mark.parametrize("name", NAMES)
def test_finds_the_best_arm_on_an_easy_instance(name):
    for seed in range(3):
        out = run(name, seed, means="0.2,0.9,0.5,0.4", epsilon=1.0, horizon=400_000)
        assert out.metrics["best_arm_found"] == 1
        assert out.metrics["active_arms"] == 1
        assert out.metrics["best_pulls"] > 0.9 * 400_000
        assert out.metrics["wrap_errors"] == 0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_each_reward_is_in_at_most_one_released_statistic(name, simulation):
    proto = PROTOCOLS[name](0.8, 0.1, 2.0)
    res = run_elimination(
        proto,
        np.array([0.5, 0.45, 0.4]),
        reward="gaussian",
        reward_sigma=0.1,
        horizon=30_000,
        batch_base=2,
        confidence=0.1,
        crs=1.0,
        rng=np.random.default_rng(1),
        simulation=simulation,
        record=True,
    )
    # the served blocks tile [0, T) in order
    assert res.info["blocks"][0, 1] == 0 and res.info["blocks"][-1, 2] == 30_000
    assert np.array_equal(res.info["blocks"][1:, 1], res.info["blocks"][:-1, 2])
    served = {(int(a), int(s), int(e)) for a, s, e in res.info["blocks"]}
    covered = np.zeros(30_000, dtype=np.int64)
    for rel in res.info["releases"]:
        assert (rel.arm, rel.start, rel.stop) in served  # computed from users who pulled that arm
        assert rel.stop - rel.start == rel.params.n == 2**rel.batch
        covered[rel.start : rel.stop] += 1
    assert covered.max() == 1  # no user's reward enters two released statistics
    assert len(res.info["releases"]) > 3 and res.metrics["batches"] == len({r.batch for r in res.info["releases"]})


def test_pulls_regret_and_curve_are_consistent():
    means = np.array([0.3, 0.6, 0.55, 0.1])
    res = run_elimination(
        PROTOCOLS["dist-dp-se"](0.5, 0.1),
        means,
        reward="bernoulli",
        reward_sigma=0.5,
        horizon=123_457,
        batch_base=3,
        confidence=0.1,
        crs=1.0,
        rng=np.random.default_rng(2),
        checkpoints=50,
    )
    gaps = means.max() - means
    assert res.info["pulls"].sum() == 123_457
    assert res.metrics["regret"] == pytest.approx(gaps @ res.info["pulls"])
    assert res.curve[0][-1] == 123_457 and res.curve[1][-1] == pytest.approx(res.metrics["regret"])
    assert np.all(np.diff(res.curve[1]) >= 0)
    assert 40 <= res.curve[0].size <= 50


def test_tiny_horizons():
    for horizon in (1, 2, 5):  # the first batch needs 3 arms x 2 users
        out = run("dist-rdp-se", means="0.5,0.4,0.3", horizon=horizon)
        assert out.metrics["batches"] == 0
        assert out.curve[0][-1] == horizon


def test_gaussian_regret_uses_clipped_means():
    out = run("cdp-se", 3, means="0.02,0.5", reward="gaussian", reward_sigma=0.5, horizon=5000)
    true = model_means("gaussian", np.array([0.02, 0.5]), 0.5)
    pulls_bad = 5000 - out.metrics["best_pulls"]
    assert out.metrics["regret"] == pytest.approx((true[1] - true[0]) * pulls_bad)


def test_same_seed_same_run_and_different_seeds_differ():
    a = run("dist-dp-se", 5, means="0.52,0.5,0.48", horizon=200_000)
    b = run("dist-dp-se", 5, means="0.52,0.5,0.48", horizon=200_000)
    c = run("dist-dp-se", 6, means="0.52,0.5,0.48", horizon=200_000)
    assert a.metrics == b.metrics and np.array_equal(a.curve[1], b.curve[1])
    assert not np.array_equal(a.curve[1], c.curve[1])


@pytest.mark.parametrize("name", ["dist-dp-se", "dist-rdp-se", "ldp-se"])
def test_per_user_and_aggregate_modes_release_the_same_law(name):
    """Batch 6 (64 users per arm) of 200 runs in each mode: the released sums share one law. Gaussian
    rewards exercise both the multinomial block sums and the users' own randomized rounding."""
    proto = PROTOCOLS[name](0.5, 0.1, 2.0)
    horizon = 3 * (2**7 - 2)  # exactly six batches of three arms; the radius keeps all arms active

    def released(simulation: str, seed: int) -> list[int]:
        res = run_elimination(
            proto,
            np.array([0.6, 0.5, 0.3]),
            reward="gaussian",
            reward_sigma=0.3,
            horizon=horizon,
            batch_base=2,
            confidence=0.1,
            crs=1.0,
            rng=np.random.default_rng(seed),
            simulation=simulation,
            record=True,
        )
        return [round(r.z * r.params.g) for r in res.info["releases"] if r.batch == 6 and r.arm == 1]

    fast = np.concatenate([released("aggregate", s) for s in range(200)])
    slow = np.concatenate([released("per-user", 10_000 + s) for s in range(200)])
    assert fast.size == slow.size == 200
    assert two_sample_pvalue(fast, slow) > 1e-3


def test_rdp_and_cdp_report_their_dp_conversion():
    out = run("dist-rdp-se", epsilon=0.5, scale=10, dp_delta=1e-6, horizon=10_000)
    eps = out.metrics["privacy_epsilon"]
    assert zcdp_to_dp(0.5**2 / 2, 1e-6) <= eps <= rdp_to_dp(lambda a: dist_rdp_se_rdp(a, 0.5, 10), 1e-6)
    cdp = run("dist-cdp-se", epsilon=0.5, scale=10, dp_delta=1e-6, horizon=10_000).metrics
    assert cdp["privacy_epsilon"] == pytest.approx(zcdp_to_dp(0.5**2 / 2, 1e-6), rel=1e-9)  # xi underflows at s=10
    assert run("dist-dp-se").metrics["privacy_delta"] == 0.0


def test_local_model_pays_much_more_than_distributed():
    common = dict(means="0.6,0.5,0.45,0.4", epsilon=0.5, horizon=300_000)
    local = np.mean([run("ldp-se", s, **common).metrics["regret"] for s in range(3)])
    dist = np.mean([run("dist-dp-se", s, **common).metrics["regret"] for s in range(3)])
    assert local > 3 * dist


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("dist-dp-se", {"epsilon": 0.0}),
        ("dist-dp-se", {"batch_base": 1}),
        ("dist-dp-se", {"confidence": 1.5}),
        ("dist-dp-se", {"horizon": 0}),
        ("dist-dp-se", {"means": "0.5"}),
        ("dist-dp-se", {"secagg": "masked"}),
        ("dist-dp-se", {"secagg": "split-and-mix"}),
        ("dist-rdp-se", {"scale": 0.5}),
        ("dist-cdp-se", {"dp_delta": 1.0}),
        ("dist-cdp-se", {"delta": 1.0}),  # the deprecated name, checked as its new name
        ("shuffle-dp-se", {"secagg": "masked"}),
    ],
)
def test_bad_parameters_raise_config_error(name, params):
    with pytest.raises(ConfigError):
        run(name, **params)


def test_central_model_warns_for_large_epsilon():
    with pytest.warns(UserWarning, match="epsilon < 1"):
        registry.get("cdp-se").run(registry.get("cdp-se").resolve({"epsilon": 1.5, "horizon": 100}), 0)


def test_cli_simulate_writes_the_table(tmp_path):
    out, plot = tmp_path / "r.csv", tmp_path / "r.png"
    code = main(
        [
            "simulate",
            "--algorithm",
            "dist-dp-se",
            "--means",
            "0.9,0.8,0.7",
            "--epsilon",
            "0.5",
            "--horizon",
            "100000",
            "--seeds",
            "2",
            "--reward",
            "bernoulli",
            "--batch-base",
            "4",
            "--out",
            str(out),
            "--plot",
            str(plot),
            "--workers",
            "1",
            "--no-progress",
        ]
    )
    assert code == 0 and plot.stat().st_size > 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 2
    assert {"algorithm", "seed", "epsilon", "horizon", "regret", "wall_time", "batches"} <= set(rows[0])
    assert (
        main(
            [
                "simulate",
                "--algorithm",
                "dist-dp-se",
                "--epsilon",
                "-1",
                "--seeds",
                "1",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 2
    )
