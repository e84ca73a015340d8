"""Tianshou on the AEC env: ``PettingZooEnv`` with masked policies, collecting whole games.

    pip install -e ".[examples]"
    python examples/tianshou_pettingzoo.py --games 2

Team 0 (``player_0`` and ``player_2``) is one masked Q-network (Tianshou's DQN policy, which reads
the legal-action mask from ``obs.mask`` and never picks a masked action); team 1 plays uniformly
among the legal actions. Tianshou's ``PettingZooEnv`` turns the env's ``action_mask`` into that
``mask``; a ``Collector`` plays whole games into a replay buffer, and the DQN takes a few gradient
steps on them: the start of a training loop.
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

from handfoot_env import handfoot_v0


def make_env() -> PettingZooEnv:
    return PettingZooEnv(handfoot_v0.env())


def make_algorithm(env: PettingZooEnv, hidden: int = 128) -> MultiAgentOffPolicyAlgorithm:
    obs_size = env.observation_space["observation"].shape[0]
    n_actions = env.action_space.n
    net = Net(state_shape=obs_size, action_shape=n_actions, hidden_sizes=[hidden])
    q_policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1)
    dqn = DQN(policy=q_policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=100)
    rand = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    # one algorithm per agent in seat order: the two team-0 seats share the DQN
    return MultiAgentOffPolicyAlgorithm(algorithms=[dqn, rand, dqn, rand], env=env)


def main(games: int = 2, seed: int = 0, updates: int = 4) -> dict:
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = make_env()
    algorithm = make_algorithm(env)
    venv = DummyVectorEnv([make_env])
    venv.seed(seed)
    buffer = VectorReplayBuffer(20_000, buffer_num=1)
    collector = Collector(algorithm, venv, buffer, exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_episode=games, reset_before_collect=True)
    data, _ = buffer.sample(0)                               # every transition collected
    legal = data.obs.mask[np.arange(len(data)), data.act]
    dqn = algorithm.get_algorithm("player_0")
    before = [p.detach().clone() for p in dqn.policy.model.parameters()]
    with policy_within_training_step(algorithm.policy), torch_train_mode(algorithm.policy):
        for _ in range(updates):
            algorithm.update(sample_size=64, buffer=buffer)
    moved = any(not torch.equal(a, b) for a, b in zip(before, dqn.policy.model.parameters()))
    venv.close()
    return {"games": int(stats.n_collected_episodes), "steps": int(stats.n_collected_steps),
            "illegal": int((~legal).sum()), "updates": updates, "weights_changed": moved}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    s = main(a.games, a.seed)
    print(f"{s['games']} whole games, {s['steps']} decisions, {s['illegal']} illegal; {s['updates']} DQN updates")
