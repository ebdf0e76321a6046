"""Single-learner private bandits (paper 001) and the DP-SE baseline shared with paper 004.

Algorithms, each a function that runs one simulation and returns a :class:`BanditRun`:
:func:`se`, :func:`dp_se` (:func:`successive_elimination` underneath), :func:`anytime_lazy_ucb`,
:func:`hybrid_ucb` (and :func:`hybrid_ucb_batch` for many runs in lockstep) and :func:`ftnl` (experts
setting; ``naive=True`` for naive FTNL). ``ALGORITHMS`` registers them with the simulator under the names
of the functions' parameters. The distributed-DP elimination family lives in :mod:`anonbandits.dp.distributed`.
"""

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from anonbandits.channel_flags import ANONYMOUS_ONLY, epoch_params
from anonbandits.core.schedules import SPACINGS, checkpoint_grid
from anonbandits.dp.common import BanditRun, Ledger, RegretTrace
from anonbandits.dp.elimination import ORDERS, dp_se, se, successive_elimination
from anonbandits.dp.ftnl import ftnl
from anonbandits.dp.hybrid_ucb import TREE_NOISES, HybridBatch, hybrid_ucb, hybrid_ucb_batch
from anonbandits.dp.lazy_ucb import STORAGES, anytime_lazy_ucb
from anonbandits.envs.rewards import GAUSSIAN_SIGMA, REWARD_MODELS, model_means, parse_means, sum_rewards
from anonbandits.errors import ConfigError
from anonbandits.results import Result
from anonbandits.spec import AlgorithmSpec, Param
from anonbandits.validation import validated

__all__ = ["ALGORITHMS", "BanditRun", "HybridBatch", "Ledger", "RegretTrace", "anytime_lazy_ucb", "dp_se",
           "ftnl", "hybrid_ucb", "hybrid_ucb_batch", "se", "successive_elimination"]


def _run(algorithm: Callable[..., BanditRun], name: str, fixed: Mapping[str, Any], params: Mapping[str, Any],
         seed: int) -> Result:
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
    return Result(metrics=run.metrics(), curve=(run.checkpoints, run.curve), label=label)


def _run_channel(algorithm: Callable[..., BanditRun], name: str, params: Mapping[str, Any], seed: int) -> Result:
    """``se``/``dp-se``: the single-user engine on the direct channel (the flags of the anonymous channel left at
    their defaults), or N users over the anonymous channel (:func:`~anonbandits.anonymous.specs.run_epochs`)."""
    defaults = next(spec for spec in ALGORITHMS if spec.name == name).defaults()
    if params["channel"] == "anonymous":
        from anonbandits.anonymous.specs import run_epochs  # the anonymous family loads only when asked for

        return run_epochs(name, defaults, params, seed)
    anonymous = [n for n in ANONYMOUS_ONLY if n in params]
    changed = [n for n in anonymous if params[n] != defaults[n]]
    if changed:
        flags = ", ".join(f"--{n.replace('_', '-')}" for n in changed)
        raise ConfigError(f"{name}: {flags} only with --channel anonymous")
    drop = {"channel", *anonymous, *(() if name == "dp-se" else ("epsilon",))}
    return _run(algorithm, name, {}, {k: v for k, v in params.items() if k not in drop}, seed)


def _spec(name: str, algorithm: Callable[..., BanditRun], params: tuple[Param, ...], summary: str,
          fixed: Mapping[str, Any] | None = None, **options: Any) -> AlgorithmSpec:
    return AlgorithmSpec(name, partial(_run, algorithm, name, fixed or {}), params, summary, "dp", **options)


MEANS = Param("means", str, "0.9,0.8,0.7", "comma-separated arm (action) means in [0, 1]")
#: se's and dp-se's means: also a means file with --channel anonymous
CHANNEL_MEANS = Param("means", str, "0.9,0.8,0.7", "comma-separated arm means in [0, 1]; --channel anonymous: "
                      "this default draws a clustered instance, another list gives every user these means, a "
                      ".csv/.parquet path is a means file (docs/anonymous-bandits.md)")
EPSILON = Param("epsilon", float, 0.5, "privacy parameter epsilon")
HORIZON = Param("horizon", int, 2 * 2**21, "number of rounds T (paper 001: 2 x 2^21)", unit="rounds")
REWARDS = (Param("reward", str, "bernoulli", "reward distribution", choices=REWARD_MODELS),
           Param("reward_sigma", float, GAUSSIAN_SIGMA, "std of the clipped Gaussian rewards (paper 004: 0.1)",
                 unit="reward"),
           Param("spacing", str, "even", "200 curve points: even, or log-even (half log-spaced from round 1, as "
                "paper 004's figures)", choices=SPACINGS))
CONFIDENCE = Param("confidence", str, "1/T", "DP-SE confidence beta: '1/T' (paper 001) or a number (paper 004: 0.1)")
ORDER = Param("order", str, "round-robin", "pull order inside an epoch (paper 004: blocks)", choices=ORDERS)
INITIAL = Param("initial", str, "random", "action of epoch 0: 'random' or an index")
EXPERTS = {"curve_axes": ("round", "cumulative pseudo-regret (experts)")}

ALGORITHMS: tuple[AlgorithmSpec, ...] = (
    AlgorithmSpec("se", partial(_run_channel, se, "se"),
                  (CHANNEL_MEANS, HORIZON, *REWARDS, CONFIDENCE, ORDER, *epoch_params(private=False)),
                  "non-private successive elimination (DP-SE's schedule without noise); --channel anonymous: "
                  "N users over the anonymous channel", "dp"),
    AlgorithmSpec("dp-se", partial(_run_channel, dp_se, "dp-se"),
                  (CHANNEL_MEANS, EPSILON, HORIZON, *REWARDS, CONFIDENCE, ORDER, *epoch_params(private=True)),
                  "DP-SE, Sajed & Sheffet 2019 (baseline of papers 001 and 004); --channel anonymous: N users "
                  "over the anonymous channel", "dp"),
    _spec("anytime-lazy-ucb", anytime_lazy_ucb,
          (MEANS, EPSILON, HORIZON, *REWARDS,
           Param("storage", str, "o1", "o1: Appendix A tuples; arrays: keep observations", choices=STORAGES)),
          "Anytime-Lazy-UCB (paper 001, Algorithm 1)"),
    _spec("hybrid-ucb", hybrid_ucb,
          (MEANS, EPSILON, HORIZON, *REWARDS,
           Param("tree_noise", str, "paper", "tree node noise: paper 2r/eps or exact 2(r+1)/eps",
                 choices=TREE_NOISES)),
          "Hybrid-UCB (paper 001, Algorithm 4; per-round decisions)"),
    _spec("ftnl", ftnl,
          (MEANS, EPSILON, HORIZON, *REWARDS, INITIAL,
           Param("noise_multiplier", float, 1.0, "RNM noise Lap(m/eps): 1 (paper) or 2 (A13)")),
          "Follow-the-Noisy-Leader with Report Noisy Max, experts setting (paper 001, Alg. 2-3)", **EXPERTS),
    _spec("naive-ftnl", ftnl, (MEANS, EPSILON, HORIZON, *REWARDS, INITIAL),
          "naive FTNL, Lap(K/eps) per action, experts setting (paper 001, Sec. 5)", {"naive": True}, **EXPERTS),
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
hybrid_ucb_batch = validated(hybrid_ucb_batch, means="", **_ARRAYS)  # (runs, arms) means: checked by the function
ftnl = validated(ftnl, **_ARRAYS)
