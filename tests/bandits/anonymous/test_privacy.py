"""Anonymity and differential privacy together (issue 14): the homogeneous-group attack, the exact law of the
noise on the released group sums, privacy ``none`` unchanged, and the accounting of a run."""

import math

import numpy as np
import pytest
from scipy import stats

from anonbandits import simulate
from anonbandits.anonymous import anon_batched, anon_etc
from anonbandits.channel_params import SHARES
from anonbandits.channels import AnonymousChannel, CentralLaplace, Distributed
from anonbandits.channels.anonymous import partition_groups
from anonbandits.envs import MultiUserInstance, clustered_instance
from anonbandits.privacy import DEFAULT_ORDERS, discrete_gaussian_pmf, skellam_rdp
from anonbandits.privacy.mechanisms import guarantee
from anonbandits.privacy.protocols import PROTOCOLS

C, DELTA, HORIZON = 2, 1e-6, 10**9


def _mechanism(kind, eps):
    if kind == "central":
        return CentralLaplace(eps)
    return Distributed(PROTOCOLS[SHARES[kind]](eps, 1.0 / HORIZON))


def _serve(channel, arm_rows, rounds=1):
    """The released group sums of ``rounds`` rounds of the sub-algorithm, one repetition per row: (rows,
    rounds) for the single group of C+1 users, and each release's noise variance."""
    a = np.asarray(arm_rows)
    labels, positions = partition_groups(a, channel.n_arms, channel.C)
    sums, var = channel.serve(a, labels, positions, np.ones(len(a), np.int64), rounds)
    return sums[:, :, 0], None if var is None else var[:, :, 0]


def test_homogeneous_group_sums_reveal_every_member_without_privacy():
    # arm 0 pays 0 to every user, arm 1 pays 1: each row's group is homogeneous, its hidden bit the arm
    channel = AnonymousChannel(
        MultiUserInstance(np.array([[0.0, 1.0]] * (C + 1))), C, HORIZON, np.random.default_rng(0)
    )
    bits = np.random.default_rng(1).integers(0, 2, 2000)
    sums, _ = _serve(channel, np.repeat(bits[:, None], C + 1, axis=1))
    # the attacker: a sum of 0 means every member got 0, a sum of C+1 that every member got 1
    recovered = np.where(sums[:, 0] == C + 1, 1, np.where(sums[:, 0] == 0, 0, -1))
    assert np.array_equal(recovered, bits)
    assert channel.min_group_size == C + 1  # the group was C-anonymous all along


@pytest.mark.parametrize("kind", ["central", "polya", "skellam", "gaussian"])
def test_with_privacy_the_best_test_on_one_reward_is_held_to_the_dp_bound(kind):
    eps, trials = 1.0, 40_000
    # neighbouring datasets: the target (user 0) got 0 (arm 0) or 1 (arm 1); the others got 1 either way
    mu = np.array([[0.0, 1.0]] + [[1.0, 1.0]] * C)
    mech = _mechanism(kind, eps)
    channel = AnonymousChannel(
        MultiUserInstance(mu), C, HORIZON, np.random.default_rng(2), mechanism=mech, noise_rng=np.random.default_rng(3)
    )
    bits = np.random.default_rng(4).integers(0, 2, trials)
    z = _serve(channel, np.repeat(bits[:, None], C + 1, axis=1))[0][:, 0]
    # likelihood-ratio test: every noise law here is symmetric and unimodal, so the ratio P(z | 1)/P(z | 0)
    # exceeds 1 exactly when z is above the midpoint C + 1/2 of the two sums; a tie is a coin flip
    mid = C + 0.5
    guess = np.where(z > mid, 1, np.where(z < mid, 0, np.random.default_rng(5).integers(0, 2, trials)))
    success = float(np.mean(guess == bits))
    se = math.sqrt(success * (1 - success) / trials)
    eps_reward, _, delta = guarantee(mech, channel.exposure, DELTA)
    delta = 0.0 if mech.pure else delta  # the reported delta is the per-user one for pure mechanisms
    bound = (math.exp(eps_reward) + delta) / (1 + math.exp(eps_reward))  # any test on an (eps, delta)-DP output
    assert success - 3 * se <= bound
    assert success - 3 * se > 0.5  # the test is not blind: noise of scale 1/eps leaves a real advantage
    if kind == "central":  # P(Lap(1/eps) > -1/2) exactly
        assert abs(success - (1 - 0.5 * math.exp(-eps / 2))) < 4 * se
    if kind in ("central", "polya"):
        assert eps_reward == eps and bound == pytest.approx(math.exp(1) / (1 + math.exp(1)))


def _noise_pmf(kind, mech, n):
    """Support and pmf of ``g`` times the noise of a release of ``n`` rewards (the aggregate of the members'
    shares), from the protocol's definitions."""
    bp = mech.protocol.batch_params(n)
    b = bp.g / mech.protocol.epsilon
    k = np.arange(-60 * math.ceil(b), 60 * math.ceil(b) + 1)
    if kind == "polya":  # Lap_Z(g/eps)
        beta = math.exp(-1 / b)
        return k, (1 - beta) / (1 + beta) * beta ** np.abs(k)
    if kind == "skellam":  # Sk(0, (g/eps)^2)
        return k, stats.skellam.pmf(k, b * b / 2, b * b / 2)
    support, pmf = discrete_gaussian_pmf(math.sqrt(b * b / n))  # n users' N_Z(0, (g/eps)^2/n) shares
    total = pmf
    for _ in range(n - 1):
        total = np.convolve(total, pmf)
    half = (total.size - 1) // 2
    return np.arange(-half, half + 1), total


@pytest.mark.parametrize("kind", ["central", "polya", "skellam", "gaussian"])
def test_the_noise_on_released_group_sums_has_its_exact_law(kind):
    eps, rows = 0.8, 15_000
    mech = _mechanism(kind, eps)
    channel = AnonymousChannel(
        MultiUserInstance(np.ones((C + 1, 2))),
        C,
        HORIZON,
        np.random.default_rng(6),
        mechanism=mech,
        noise_rng=np.random.default_rng(7),
    )
    sums, var = _serve(channel, np.zeros((rows, C + 1), np.int64), rounds=2 * C + 2)
    # round 0 and rounds > C + 1 hold the whole group (C + 1 rewards, all 1); rounds 1..C+1 drop one member
    size = np.where((np.arange(2 * C + 2) >= 1) & (np.arange(2 * C + 2) <= C + 1), C, C + 1)
    noise = sums - size
    for n in (C, C + 1):
        z = noise[:, size == n].ravel()
        if kind == "central":
            assert stats.kstest(z, stats.laplace(scale=1 / eps).cdf).pvalue > 1e-3
            expected_var = 2 / eps**2
        else:
            g = mech.protocol.batch_params(n).g
            ks = np.rint(z * g).astype(np.int64)
            assert np.allclose(ks, z * g)
            support, pmf = _noise_pmf(kind, mech, n)
            expected = pmf * ks.size
            keep = expected >= 5  # the central bins; the tails pooled into one
            observed = np.array([np.sum(ks == v) for v in support[keep]] + [np.sum(~np.isin(ks, support[keep]))])
            want = np.append(expected[keep], ks.size - expected[keep].sum())
            assert stats.chisquare(observed, want).pvalue > 1e-3
            expected_var = float(pmf @ support.astype(float) ** 2) / g**2
        # the variance the channel declares for each release (what the learner's radius uses)
        assert np.allclose(var[:, size == n], expected_var, rtol=2e-3)
        assert abs(z.var() / expected_var - 1) < 0.05


def _small(**kw):
    return {"users": 40, "arms": 2, "C": 2, "horizon": 60_000, "gap": 0.2} | kw


@pytest.mark.parametrize("name", ["anon-batched", "anon-etc"])
def test_privacy_none_draws_exactly_what_the_drivers_draw_without_a_mechanism(name):
    for seed in (0, 5):
        params = _small(explore_scale=1.0) if name == "anon-etc" else _small()
        out = simulate(name, seed=seed, **params)
        # the pre-privacy path: three streams (instance, rewards, decomposer), no mechanism argument
        inst_rng, reward_rng, dec_rng = np.random.default_rng(seed).spawn(3)
        inst = clustered_instance(40, 2, 0, 0.2, inst_rng)
        if name == "anon-etc":
            run = anon_etc(inst, 2, 60_000, explore_scale=1.0, rng=reward_rng)
        else:
            run = anon_batched(inst, 2, 60_000, U=20, rng=reward_rng, decomposer_rng=dec_rng)
        assert all(out.metrics[key] == run.metrics[key] for key in ("regret", "observations"))
        assert np.array_equal(out.curve[1], run.curve[1])
        # no mechanism, no guarantee: the privacy metrics are empty (the results schema's "not applicable")
        assert out.metrics["privacy_epsilon"] is out.metrics["privacy_delta"] is None


def test_the_noise_has_its_own_stream_so_the_rewards_are_unchanged():
    inst = MultiUserInstance(np.array([[0.3, 0.6]] * (C + 1)))
    rows = np.random.default_rng(8).integers(0, 2, (500, 1)).repeat(C + 1, axis=1)
    plain = _serve(AnonymousChannel(inst, C, HORIZON, np.random.default_rng(9)), rows, 2 * C + 2)[0]
    tiny = AnonymousChannel(
        inst, C, HORIZON, np.random.default_rng(9), mechanism=CentralLaplace(1e9), noise_rng=np.random.default_rng(10)
    )
    assert np.allclose(_serve(tiny, rows, 2 * C + 2)[0], plain, atol=1e-6)


def test_accounting_matches_a_hand_computation():
    inst = MultiUserInstance(np.ones((C + 1, 2)))
    # one assignment repeated m = 10 times: each user is in 5 of the 2C+2 = 6 group sums (all but the round
    # that drops her), 3 of C+1 = 3 members and 2 of C = 2, each release holding 10 of her rewards
    channel = AnonymousChannel(
        inst, C, HORIZON, np.random.default_rng(0), mechanism=CentralLaplace(0.5), noise_rng=np.random.default_rng(1)
    )
    fb = channel.elicit(np.zeros((1, C + 1), np.int64), np.array([10]))
    assert set(channel.exposure) == {(10, 30), (10, 20)}
    assert channel.exposure[(10, 30)].tolist() == [3, 3, 3] and channel.exposure[(10, 20)].tolist() == [2, 2, 2]
    # each estimate r_{s,0} - r_{s,k} carries two Lap(2) noises: variance 2 * 2 * 2^2
    assert np.allclose(fb.noise[:, 0], 16.0) and np.all(fb.noise[:, 1] == 0)
    # per user: five releases, each (10 * 0.5)-DP; basic composition 25 beats the RDP route here
    assert guarantee(channel.mechanism, channel.exposure, DELTA) == (0.5, 25.0, 0.0)

    # 400 single repetitions at eps = 0.1: 2000 releases of one reward each per user, rho = 2000 * 0.1^2 / 2 = 10
    channel = AnonymousChannel(
        inst, C, HORIZON, np.random.default_rng(0), mechanism=CentralLaplace(0.1), noise_rng=np.random.default_rng(1)
    )
    channel.elicit(np.zeros((400, C + 1), np.int64), np.ones(400, np.int64))
    assert {k: v.tolist() for k, v in channel.exposure.items()} == {(1, 3): [1200] * 3, (1, 2): [800] * 3}
    eps_reward, eps_user, delta = guarantee(channel.mechanism, channel.exposure, DELTA)
    alpha = np.linspace(1.001, 20, 200_000)  # 2000 min(0.1, alpha 0.005) = 10 alpha up to alpha = 20
    by_hand = np.min(10 * alpha + np.log(1 / (alpha * DELTA)) / (alpha - 1) + np.log(1 - 1 / alpha))
    assert eps_reward == 0.1 and delta == DELTA
    assert by_hand <= eps_user <= by_hand + 0.02 and eps_user < 10 + 2 * math.sqrt(10 * math.log(1 / DELTA))

    # Skellam shares: per user the sum of Lemma 3's curves at sensitivity c g(n), per reward the worst n
    mech = _mechanism("skellam", 1.0)
    channel = AnonymousChannel(
        inst, C, HORIZON, np.random.default_rng(0), mechanism=mech, noise_rng=np.random.default_rng(1)
    )
    channel.elicit(np.zeros((1, C + 1), np.int64), np.array([10]))
    curve, worst = np.zeros(DEFAULT_ORDERS.size), 0.0
    for (c, n), count in channel.exposure.items():
        g = mech.protocol.batch_params(n).g
        var = (g / 1.0) ** 2
        curve += count[0] * skellam_rdp(DEFAULT_ORDERS, c * g, var)
        one = skellam_rdp(DEFAULT_ORDERS, g, var)
        a = DEFAULT_ORDERS.astype(float)
        worst = max(worst, float(np.min(one + np.log(1 / (a * DELTA)) / (a - 1) + np.log(1 - 1 / a))))
    a = DEFAULT_ORDERS.astype(float)
    user = float(np.min(curve + np.log(1 / (a * DELTA)) / (a - 1) + np.log(1 - 1 / a)))
    assert guarantee(mech, channel.exposure, DELTA) == pytest.approx((worst, user, DELTA))


def test_registry_reports_the_accounting_next_to_min_group_size():
    out = simulate("anon-batched", seed=3, privacy="central", epsilon=0.5, **_small())
    keys = list(out.metrics)
    at = keys.index("min_group_size")
    assert keys[at + 1 : at + 4] == ["privacy_epsilon", "privacy_epsilon_per_user", "privacy_delta"]
    assert out.metrics["privacy_epsilon"] == 0.5
    # basic composition wins at these multiplicities: eps times the most rewards one user released, and every
    # user is grouped in 2C+1 of the 2C+2 rounds of every repetition of every assignment
    assert out.metrics["privacy_epsilon_per_user"] == 0.5 * (2 * 2 + 1) * sum(r["assignments"] for r in out.records)


def test_the_learner_widens_its_radius_by_the_noise():
    params = _small(gap=0.3)
    inst = clustered_instance(params["users"], params["arms"], 0, params["gap"], np.random.default_rng(11))
    plain = anon_batched(inst, 2, 60_000, U=20, rng=np.random.default_rng(12))
    assert sum(b["eliminated"] for b in plain.records) > 0
    # at eps = 1e-3 a pair's noise (variance 4 / eps^2 = 4e6 per estimate) dwarfs its samples: the widened
    # radius eliminates nothing rather than eliminating on noise
    noisy = anon_batched(
        inst,
        2,
        60_000,
        U=20,
        rng=np.random.default_rng(12),
        mechanism=CentralLaplace(1e-3),
        noise_rng=np.random.default_rng(13),
    )
    assert sum(b["eliminated"] for b in noisy.records) == 0
    # at eps = 1 the noise is small next to the samples: the run still finds the users' best arms
    run = anon_batched(
        inst,
        2,
        60_000,
        U=20,
        rng=np.random.default_rng(12),
        mechanism=CentralLaplace(1.0),
        noise_rng=np.random.default_rng(13),
    )
    assert run.metrics["optimal_fraction"] >= 0.9 and sum(b["eliminated"] for b in run.records) > 0


def test_anon_etc_with_privacy_commits_to_the_best_arms_at_moderate_epsilon():
    for kind in ("central", "polya"):
        out = simulate(
            "anon-etc",
            seed=2,
            privacy="central" if kind == "central" else "distributed",
            epsilon=1.0,
            **_small(explore_scale=1.0),
        )
        assert out.metrics["optimal_fraction"] >= 0.9
        assert out.metrics["privacy_epsilon"] == 1.0
