"""Reward models and the one bandit instance model of every family."""

from anonbandits.envs.instances import MultiUserInstance, clustered_instance
from anonbandits.envs.means_file import read_means
from anonbandits.envs.rewards import BOUNDED_MODELS, REWARD_MODELS, draw_rewards, parse_means, sum_rewards

__all__ = [
    "BOUNDED_MODELS",
    "REWARD_MODELS",
    "MultiUserInstance",
    "clustered_instance",
    "draw_rewards",
    "parse_means",
    "read_means",
    "sum_rewards",
]
