"""Reward models and bandit instances."""

from anonbandits.envs.rewards import REWARD_MODELS, draw_rewards, parse_means, sum_rewards

__all__ = ["REWARD_MODELS", "draw_rewards", "parse_means", "sum_rewards"]
