"""Single-learner private bandits (paper 001) and the DP-SE baseline shared with paper 004.

Algorithms, each a function that runs one simulation and returns a :class:`~anonbandits.results.Result`:
:func:`se`, :func:`dp_se` (:func:`successive_elimination` underneath), :func:`anytime_lazy_ucb`,
:func:`hybrid_ucb` (and :func:`hybrid_ucb_batch` for many runs in lockstep) and :func:`ftnl` (experts
setting; ``naive=True`` for naive FTNL). ``ALGORITHMS`` registers them with the simulator under the names
of the functions' parameters. The distributed-DP elimination family lives in :mod:`anonbandits.dp.distributed`.
"""

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from anonbandits._deprecated import moved
from anonbandits.channel_params import ANONYMOUS_ONLY, EPOCH_MEANS, epoch_params
from anonbandits.channels import channel_named
from anonbandits.core.regret import RegretTrace
from anonbandits.core.schedules import SPACINGS, checkpoint_grid
from anonbandits.dp.common import _BanditRun  # the deprecated type, kept for one release
from anonbandits.dp.elimination import ORDERS, dp_se, se, successive_elimination
from anonbandits.dp.ftnl import ftnl
from anonbandits.dp.hybrid_ucb import TREE_NOISES, HybridBatch, hybrid_ucb, hybrid_ucb_batch
from anonbandits.dp.lazy_ucb import STORAGES, anytime_lazy_ucb
from anonbandits.dp.ledger import Ledger
from anonbandits.dp.runs import HORIZON as HORIZON_RULE
from anonbandits.dp.runs import HORIZON_PARAM
from anonbandits.envs.rewards import GAUSSIAN_SIGMA, REWARD_MODELS, model_means, parse_means, sum_rewards
from anonbandits.errors import ConfigError
from anonbandits.results import Result
from anonbandits.spec import ARM_MEANS, AlgorithmSpec, Param
from anonbandits.validation import (
    EPSILON_MAX,
    EPSILON_MIN,
    FINITE_ARRAY,
    MATRIX,
    RNG,
    VECTOR,
    Rule,
    checks,
    validated,
)

__all__ = [
    "ALGORITHMS",
    "HybridBatch",
    "Ledger",
    "RegretTrace",
    "anytime_lazy_ucb",
    "dp_se",
    "ftnl",
    "hybrid_ucb",
    "hybrid_ucb_batch",
    "se",
    "successive_elimination",
]

#: ``BanditRun``, what the algorithms returned before :class:`~anonbandits.results.Result`: found for one release
__getattr__ = moved(__name__, {}, {"BanditRun": (_BanditRun, "anonbandits.Result (what the algorithms return now)")})


def _run(
    algorithm: Callable[..., Result], name: str, fixed: Mapping[str, Any], params: Mapping[str, Any], seed: int
) -> Result:
    """A registry entry's run: ``algorithm`` with the resolved ``params`` (plus ``fixed`` options) on
    ``default_rng(seed)``, labelled with its epsilon; a clipped Gaussian's std and the curve's spacing become
    the algorithm's reward sampler, expected means and checkpoints."""
    params = dict(params)
    sigma, spacing = params.pop("reward_sigma"), params.pop("spacing")  # checked by the Param's rule
    if params["reward"] == "gaussian" and sigma != GAUSSIAN_SIGMA:  # the named model is cheaper per draw
        params["expected_means"] = model_means("gaussian", parse_means(params["means"]), sigma)
        params["reward"] = partial(sum_rewards, "gaussian", sigma=sigma)
    grid = checkpoint_grid(params["horizon"], spacing=spacing)
    run = algorithm(rng=np.random.default_rng(seed), checkpoints=grid, **params, **fixed)
    label = f"{name} (eps={params['epsilon']:g})" if "epsilon" in params else name
    return Result(metrics=run.metrics, curve=run.curve, label=label)


def _run_channel(algorithm: Callable[..., Result], name: str, params: Mapping[str, Any], seed: int) -> Result:
    """``se``/``dp-se``: N users together over a channel that groups them (one needing a decomposition:
    ``--channel anonymous``, :func:`~anonbandits.anonymous.entries.run_epochs`), or else the single-user engine (each
    user's run is independent on the direct channel; the flags of the anonymous channel left at their defaults)."""
    defaults = next(spec for spec in ALGORITHMS if spec.name == name).defaults()
    if channel_named(params["channel"]).requires_decomposition:
        from anonbandits.anonymous.entries import run_epochs  # the anonymous family loads only when asked for

        return run_epochs(name, defaults, params, seed)
    # se's epsilon is the anonymous channel's mechanism's: on the direct channel it has no effect, so is refused
    anonymous = [n for n in (*ANONYMOUS_ONLY, *(("epsilon",) if name == "se" else ())) if n in params]
    changed = [n for n in anonymous if params[n] != defaults[n]]
    if changed:
        flags = ", ".join(f"--{n.replace('_', '-')}" for n in changed)
        raise ConfigError(f"{name}: {flags} only with --channel anonymous")
    drop = {"channel", *anonymous, *(() if name == "dp-se" else ("epsilon",))}
    return _run(algorithm, name, {}, {k: v for k, v in params.items() if k not in drop}, seed)


def _spec(
    name: str,
    algorithm: Callable[..., Result],
    params: tuple[Param, ...],
    summary: str,
    fixed: Mapping[str, Any] | None = None,
    **options: Any,
) -> AlgorithmSpec:
    return AlgorithmSpec(name, partial(_run, algorithm, name, fixed or {}), params, summary, "dp", **options)


MEANS, CHANNEL_MEANS = ARM_MEANS, EPOCH_MEANS  # se's and dp-se's: also a means file with --channel anonymous
EPSILON = Param("epsilon", float, 0.5, "privacy parameter epsilon")
HORIZON = Param(
    "horizon", int, 2 * 2**21, "number of rounds T (paper 001: 2 x 2^21)", unit="rounds", rule=HORIZON_PARAM
)
REWARDS = (
    Param("reward", str, "bernoulli", "reward distribution", choices=REWARD_MODELS),
    Param("reward_sigma", float, GAUSSIAN_SIGMA, "std of the clipped Gaussian rewards (paper 004: 0.1)", unit="reward"),
    Param(
        "spacing",
        str,
        "even",
        "200 curve points: even, or log-even (half log-spaced from round 1, as paper 004's figures)",
        choices=SPACINGS,
    ),
)
CONFIDENCE = Param("confidence", str, "1/T", "DP-SE confidence beta: '1/T' (paper 001) or a number (paper 004: 0.1)")
ORDER = Param("order", str, "round-robin", "pull order inside an epoch (paper 004: blocks)", choices=ORDERS)
INITIAL = Param("initial", str, "random", "action of epoch 0: 'random' or an index")
EXPERTS: dict[str, Any] = {"curve_axes": ("round", "cumulative pseudo-regret (experts)")}

ALGORITHMS: tuple[AlgorithmSpec, ...] = (
    AlgorithmSpec(
        "se",
        partial(_run_channel, se, "se"),
        (CHANNEL_MEANS, HORIZON, *REWARDS, CONFIDENCE, ORDER, *epoch_params(private=False)),
        "non-private successive elimination (DP-SE's schedule without noise); --channel anonymous: "
        "N users over the anonymous channel",
        "dp",
    ),
    AlgorithmSpec(
        "dp-se",
        partial(_run_channel, dp_se, "dp-se"),
        (CHANNEL_MEANS, EPSILON, HORIZON, *REWARDS, CONFIDENCE, ORDER, *epoch_params(private=True)),
        "DP-SE, Sajed & Sheffet 2019 (baseline of papers 001 and 004); --channel anonymous: N users "
        "over the anonymous channel",
        "dp",
    ),
    _spec(
        "anytime-lazy-ucb",
        anytime_lazy_ucb,
        (
            MEANS,
            EPSILON,
            HORIZON,
            *REWARDS,
            Param("storage", str, "o1", "o1: Appendix A tuples; arrays: keep observations", choices=STORAGES),
        ),
        "Anytime-Lazy-UCB (paper 001, Algorithm 1)",
    ),
    _spec(
        "hybrid-ucb",
        hybrid_ucb,
        (
            MEANS,
            EPSILON,
            HORIZON,
            *REWARDS,
            Param("tree_noise", str, "paper", "tree node noise: paper 2r/eps or exact 2(r+1)/eps", choices=TREE_NOISES),
        ),
        "Hybrid-UCB (paper 001, Algorithm 4; per-round decisions)",
    ),
    _spec(
        "ftnl",
        ftnl,
        (
            MEANS,
            EPSILON,
            HORIZON,
            *REWARDS,
            INITIAL,
            Param(
                "noise_multiplier",
                float,
                1.0,
                "RNM noise Lap(m/eps): 1 (paper 001's Algorithm 3) or 2 "
                "(epsilon-DP also for the non-monotone sums of Report Noisy Max)",
            ),
        ),
        "Follow-the-Noisy-Leader with Report Noisy Max, experts setting (paper 001, Alg. 2-3)",
        **EXPERTS,
    ),
    _spec(
        "naive-ftnl",
        ftnl,
        (MEANS, EPSILON, HORIZON, *REWARDS, INITIAL),
        "naive FTNL, Lap(K/eps) per action, experts setting (paper 001, Sec. 5)",
        {"naive": True},
        **EXPERTS,
    ),
)

# The library functions, checking their arguments by the registry's rules (anonbandits.validation) before
# they run; the registry entries above keep the unchecked ones, whose parameters resolve has checked.
# ``checkpoints`` may be a list of rounds here, and successive_elimination's epsilon may be inf (no noise).
_ARRAYS = {"checkpoints": ""}
se = validated(se, **_ARRAYS)
dp_se = validated(dp_se, **_ARRAYS)
successive_elimination = validated(successive_elimination, epsilon="", **_ARRAYS)
anytime_lazy_ucb = validated(anytime_lazy_ucb, **_ARRAYS)
hybrid_ucb = validated(hybrid_ucb, **_ARRAYS)
# hybrid_ucb_batch's means are a (runs, arms) matrix (or one row) and its epsilons one per run: rules of their own
hybrid_ucb_batch = checks(
    means=Rule(
        lambda v: VECTOR.test(v) or MATRIX.test(v), "a non-empty (arms,) or (runs, arms) array of finite numbers"
    ),
    epsilons=Rule(
        lambda v: (
            FINITE_ARRAY.test(v)
            and np.ndim(v) <= 1
            and np.size(v) >= 1
            and all(EPSILON_MIN <= e <= EPSILON_MAX for e in np.ravel(v))
        ),
        f"a privacy parameter or a non-empty 1-D array of them, each between {EPSILON_MIN:g} and {EPSILON_MAX:g}",
    ),
    horizon=HORIZON_RULE,
    rng=RNG,
)(hybrid_ucb_batch)
ftnl = validated(ftnl, **_ARRAYS)
