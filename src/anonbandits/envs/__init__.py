"""Reward models and bandit instances."""

from anonbandits.envs.instances import MultiUserInstance, clustered_instance
from anonbandits.envs.rewards import REWARD_MODELS, draw_rewards, parse_means, sum_rewards

__all__ = ["REWARD_MODELS", "MultiUserInstance", "clustered_instance", "draw_rewards", "parse_means",
           "sum_rewards"]
